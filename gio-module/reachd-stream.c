/* The parsers of reachd-stream.h: a JSON reader that keeps only what the module needs, an
 * HTTP/1.1 response head and chunked-body reader, and Server-Sent Events framing. */
#include "reachd-stream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* JSON ------------------------------------------------------------------------------------ */

typedef struct {
  const char *p;
  const char *end;
  int depth;
} Json;

static void
skip_space (Json *j)
{
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

/* The next byte after white space, or -1 at the end. */
static int
peek (Json *j)
{
  skip_space (j);
  return j->p < j->end ? (unsigned char) *j->p : -1;
}

static int
take (Json *j, char c)
{
  if (peek (j) != (unsigned char) c)
    return -1;
  j->p++;
  return 0;
}

static int
take_word (Json *j, const char *word)
{
  size_t n = strlen (word);
  skip_space (j);
  if ((size_t) (j->end - j->p) < n || memcmp (j->p, word, n) != 0)
    return -1;
  j->p += n;
  return 0;
}

/* The length of the well-formed UTF-8 sequence at p (no overlong forms, no surrogates, at most
 * U+10FFFF), or 0. */
static size_t
utf8_length (const unsigned char *p, const unsigned char *end)
{
  size_t n;
  uint32_t c;
  if (p[0] < 0x80)
    return 1;
  if (p[0] >= 0xC2 && p[0] <= 0xDF)
    n = 2, c = p[0] & 0x1F;
  else if (p[0] >= 0xE0 && p[0] <= 0xEF)
    n = 3, c = p[0] & 0x0F;
  else if (p[0] >= 0xF0 && p[0] <= 0xF4)
    n = 4, c = p[0] & 0x07;
  else
    return 0;
  if ((size_t) (end - p) < n)
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((p[i] & 0xC0) != 0x80)
        return 0;
      c = (c << 6) | (p[i] & 0x3F);
    }
  if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
    return 0;
  return n;
}

static int
hex4 (const char *p, uint32_t *value)
{
  *value = 0;
  for (int i = 0; i < 4; i++)
    {
      char c = p[i];
      int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (digit < 0)
        return -1;
      *value = (*value << 4) | (uint32_t) digit;
    }
  return 0;
}

static size_t
put_utf8 (char *out, uint32_t c)
{
  if (c < 0x80)
    {
      out[0] = (char) c;
      return 1;
    }
  if (c < 0x800)
    {
      out[0] = (char) (0xC0 | (c >> 6));
      out[1] = (char) (0x80 | (c & 0x3F));
      return 2;
    }
  if (c < 0x10000)
    {
      out[0] = (char) (0xE0 | (c >> 12));
      out[1] = (char) (0x80 | ((c >> 6) & 0x3F));
      out[2] = (char) (0x80 | (c & 0x3F));
      return 3;
    }
  out[0] = (char) (0xF0 | (c >> 18));
  out[1] = (char) (0x80 | ((c >> 12) & 0x3F));
  out[2] = (char) (0x80 | ((c >> 6) & 0x3F));
  out[3] = (char) (0x80 | (c & 0x3F));
  return 4;
}

/* A string. With `out`, decoded into a new NUL-terminated string of at most REACHD_TEXT_LIMIT
 * bytes (an escaped NUL is refused there); without, only checked. */
static int
parse_string (Json *j, char **out)
{
  if (take (j, '"') != 0)
    return -1;
  char *text = NULL;
  size_t length = 0;
  if (out != NULL && (text = malloc (REACHD_TEXT_LIMIT + 1)) == NULL)
    return -1;
  while (j->p < j->end)
    {
      unsigned char c = (unsigned char) *j->p;
      char decoded[4];
      size_t n = 0;
      if (c == '"')
        {
          j->p++;
          if (out != NULL)
            {
              text[length] = '\0';
              *out = text;
            }
          return 0;
        }
      if (c < 0x20)
        break;
      if (c == '\\')
        {
          if (j->end - j->p < 2)
            break;
          char e = j->p[1];
          j->p += 2;
          switch (e)
            {
            case '"': decoded[0] = '"', n = 1; break;
            case '\\': decoded[0] = '\\', n = 1; break;
            case '/': decoded[0] = '/', n = 1; break;
            case 'b': decoded[0] = '\b', n = 1; break;
            case 'f': decoded[0] = '\f', n = 1; break;
            case 'n': decoded[0] = '\n', n = 1; break;
            case 'r': decoded[0] = '\r', n = 1; break;
            case 't': decoded[0] = '\t', n = 1; break;
            case 'u':
              {
                uint32_t unit, low;
                if (j->end - j->p < 4 || hex4 (j->p, &unit) != 0)
                  goto fail;
                j->p += 4;
                if (unit >= 0xDC00 && unit <= 0xDFFF)
                  goto fail;
                if (unit >= 0xD800 && unit <= 0xDBFF)
                  {
                    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || hex4 (j->p + 2, &low) != 0
                        || low < 0xDC00 || low > 0xDFFF)
                      goto fail;
                    j->p += 6;
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                  }
                if (unit == 0 && out != NULL)
                  goto fail;
                n = put_utf8 (decoded, unit);
                break;
              }
            default:
              goto fail;
            }
        }
      else
        {
          n = utf8_length ((const unsigned char *) j->p, (const unsigned char *) j->end);
          if (n == 0)
            break;
          memcpy (decoded, j->p, n);
          j->p += n;
        }
      if (out != NULL)
        {
          if (length + n > REACHD_TEXT_LIMIT)
            goto fail;
          memcpy (text + length, decoded, n);
          length += n;
        }
    }
fail:
  free (text);
  return -1;
}

/* A number; with `integer`, it must be a whole number in 0...65535 written without a fraction
 * or exponent. */
static int
parse_number (Json *j, long *integer)
{
  skip_space (j);
  const char *p = j->p;
  int whole = 1;
  long value = 0;
  if (p < j->end && *p == '-')
    p++, whole = 0;
  if (p >= j->end || *p < '0' || *p > '9')
    return -1;
  if (*p == '0')
    p++;
  else
    while (p < j->end && *p >= '0' && *p <= '9')
      {
        if (value <= 65535)
          value = value * 10 + (*p - '0');
        p++;
      }
  if (p < j->end && *p == '.')
    {
      p++, whole = 0;
      if (p >= j->end || *p < '0' || *p > '9')
        return -1;
      while (p < j->end && *p >= '0' && *p <= '9')
        p++;
    }
  if (p < j->end && (*p == 'e' || *p == 'E'))
    {
      p++, whole = 0;
      if (p < j->end && (*p == '+' || *p == '-'))
        p++;
      if (p >= j->end || *p < '0' || *p > '9')
        return -1;
      while (p < j->end && *p >= '0' && *p <= '9')
        p++;
    }
  if (integer != NULL)
    {
      if (!whole || value > 65535)
        return -1;
      *integer = value;
    }
  j->p = p;
  return 0;
}

static int skip_value (Json *j);

typedef int (*ItemFunc) (Json *j, void *context);

/* The items of an object or array between `open` and `close`, each read by `item`, which must
 * consume it. */
static int
parse_items (Json *j, char open, char close, ItemFunc item, void *context)
{
  if (take (j, open) != 0 || ++j->depth > REACHD_DEPTH_LIMIT)
    return -1;
  if (peek (j) == (unsigned char) close)
    {
      j->p++;
      j->depth--;
      return 0;
    }
  for (;;)
    {
      if (item (j, context) != 0)
        return -1;
      int c = peek (j);
      if (c == (unsigned char) close)
        {
          j->p++;
          break;
        }
      if (c != ',')
        return -1;
      j->p++;
    }
  j->depth--;
  return 0;
}

static int
skip_item (Json *j, void *context)
{
  (void) context;
  return skip_value (j);
}

typedef struct {
  int (*member) (Json *j, const char *key, void *context);
  void *context;
} Members;

static int
object_item (Json *j, void *context)
{
  Members *members = context;
  char *key = NULL;
  if (parse_string (j, &key) != 0)
    return -1;
  int result = take (j, ':') == 0 ? (members->member != NULL ? members->member (j, key, members->context) : skip_value (j)) : -1;
  free (key);
  return result;
}

/* Calls `member` for each key of an object (the cursor then at its value), which must consume
 * the value; `member` NULL skips them all. */
static int
parse_object (Json *j, int (*member) (Json *j, const char *key, void *context), void *context)
{
  Members members = { member, context };
  return parse_items (j, '{', '}', object_item, &members);
}

/* Calls `element` for each element of an array (NULL skips them). */
static int
parse_array (Json *j, ItemFunc element, void *context)
{
  return parse_items (j, '[', ']', element != NULL ? element : skip_item, context);
}

static int
skip_value (Json *j)
{
  switch (peek (j))
    {
    case '{': return parse_object (j, NULL, NULL);
    case '[': return parse_array (j, NULL, NULL);
    case '"': return parse_string (j, NULL);
    case 't': return take_word (j, "true");
    case 'f': return take_word (j, "false");
    case 'n': return take_word (j, "null");
    default: return parse_number (j, NULL);
    }
}

/* A string or null into *out (replacing what was there). */
static int
parse_optional_string (Json *j, char **out)
{
  char *text = NULL;
  if (peek (j) == 'n')
    {
      if (take_word (j, "null") != 0)
        return -1;
    }
  else if (parse_string (j, &text) != 0)
    return -1;
  free (*out);
  *out = text;
  return 0;
}

static int
target_member (Json *j, const char *key, void *context)
{
  ReachdTarget *target = context;
  if (strcmp (key, "name") == 0)
    return parse_optional_string (j, &target->name);
  if (strcmp (key, "host") == 0)
    return parse_optional_string (j, &target->host);
  if (strcmp (key, "reason") == 0)
    return parse_optional_string (j, &target->reason);
  if (strcmp (key, "port") == 0)
    {
      if (peek (j) == 'n')
        {
          target->port = 0;
          return take_word (j, "null");
        }
      return parse_number (j, &target->port);
    }
  if (strcmp (key, "health") == 0)
    {
      char *health = NULL;
      if (parse_string (j, &health) != 0)
        return -1;
      target->health = strcmp (health, "healthy") == 0     ? REACHD_HEALTH_HEALTHY
                       : strcmp (health, "unhealthy") == 0 ? REACHD_HEALTH_UNHEALTHY
                                                           : REACHD_HEALTH_UNKNOWN;
      free (health);
      return 0;
    }
  return skip_value (j);
}

static void
target_clear (ReachdTarget *target)
{
  free (target->name);
  free (target->host);
  free (target->reason);
  memset (target, 0, sizeof *target);
}

static int
target_element (Json *j, void *context)
{
  ReachdStatus *status = context;
  ReachdTarget target = { 0 };
  if (parse_object (j, target_member, &target) != 0)
    {
      target_clear (&target);
      return -1;
    }
  if (status->n_targets >= REACHD_TARGET_LIMIT)
    {
      target_clear (&target);
      return 0;
    }
  status->targets[status->n_targets++] = target;
  return 0;
}

static int
interface_element (Json *j, void *context)
{
  ReachdStatus *status = context;
  status->usable_interfaces++;
  return parse_string (j, NULL);
}

static int
status_member (Json *j, const char *key, void *context)
{
  ReachdStatus *status = context;
  if (strcmp (key, "state") == 0)
    {
      char *state = NULL;
      if (parse_string (j, &state) != 0)
        return -1;
      status->state = strcmp (state, "connected") == 0      ? REACHD_STATE_CONNECTED
                      : strcmp (state, "disconnected") == 0 ? REACHD_STATE_DISCONNECTED
                                                            : REACHD_STATE_UNKNOWN;
      free (state);
      return 0;
    }
  if (strcmp (key, "reason") == 0)
    return parse_optional_string (j, &status->reason);
  if (strcmp (key, "fault") == 0)
    return parse_optional_string (j, &status->fault);
  if (strcmp (key, "usable_interfaces") == 0)
    {
      status->usable_interfaces = 0;
      return parse_array (j, interface_element, status);
    }
  if (strcmp (key, "targets") == 0)
    {
      for (size_t i = 0; i < status->n_targets; i++)
        target_clear (&status->targets[i]);
      status->n_targets = 0;
      if (status->targets == NULL)
        status->targets = calloc (REACHD_TARGET_LIMIT, sizeof *status->targets);
      if (status->targets == NULL)
        return -1;
      return parse_array (j, target_element, status);
    }
  return skip_value (j);
}

void
reachd_status_clear (ReachdStatus *status)
{
  for (size_t i = 0; i < status->n_targets; i++)
    target_clear (&status->targets[i]);
  free (status->targets);
  free (status->reason);
  free (status->fault);
  memset (status, 0, sizeof *status);
}

int
reachd_status_parse (const char *json, size_t length, ReachdStatus *status)
{
  Json j = { json, json + length, 0 };
  int has_state;
  memset (status, 0, sizeof *status);
  status->state = (ReachdState) -1;
  if (parse_object (&j, status_member, status) != 0 || peek (&j) != -1)
    {
      reachd_status_clear (status);
      return -1;
    }
  has_state = (int) status->state != -1;
  if (!has_state)
    {
      reachd_status_clear (status);
      return -1;
    }
  return 0;
}

/* HTTP and Server-Sent Events ------------------------------------------------------------- */

typedef enum {
  PHASE_HEAD,
  PHASE_BODY,
  PHASE_FAILED,
} Phase;

typedef enum {
  CHUNK_SIZE,
  CHUNK_DATA,
  CHUNK_DATA_END,
  CHUNK_DONE,
} ChunkPhase;

struct ReachdStream {
  Phase phase;
  ReachdStreamResult failure;
  int status;
  int chunked;
  char *head;
  size_t head_length;
  ChunkPhase chunk_phase;
  size_t chunk_remaining;
  char size_line[64];
  size_t size_length;
  /* The line being read, and the data of the event being read: grown as needed, up to
   * REACHD_EVENT_LIMIT (reachd's events are a few KiB). */
  char *line;
  size_t line_length;
  size_t line_capacity;
  char *data;
  size_t data_length;
  size_t data_capacity;
  int has_data;
};

/* Makes room for `needed` bytes and a NUL in *buffer; -1 when memory runs out. */
static int
reserve (char **buffer, size_t *capacity, size_t needed)
{
  size_t capacity_needed = needed + 1;
  size_t new_capacity = *capacity > 0 ? *capacity : 4096;
  char *grown;
  if (capacity_needed <= *capacity)
    return 0;
  while (new_capacity < capacity_needed)
    new_capacity *= 2;
  grown = realloc (*buffer, new_capacity);
  if (grown == NULL)
    return -1;
  *buffer = grown;
  *capacity = new_capacity;
  return 0;
}

ReachdStream *
reachd_stream_new (void)
{
  ReachdStream *stream = calloc (1, sizeof *stream);
  if (stream == NULL)
    return NULL;
  stream->head = malloc (REACHD_HEAD_LIMIT + 1);
  if (stream->head == NULL)
    {
      reachd_stream_free (stream);
      return NULL;
    }
  return stream;
}

void
reachd_stream_free (ReachdStream *stream)
{
  if (stream == NULL)
    return;
  free (stream->head);
  free (stream->line);
  free (stream->data);
  free (stream);
}

int
reachd_stream_status (const ReachdStream *stream)
{
  return stream->status;
}

static ReachdStreamResult
fail (ReachdStream *stream, ReachdStreamResult result)
{
  stream->phase = PHASE_FAILED;
  stream->failure = result;
  return result;
}

/* The value of header `name` in the head (lines after the status line), or NULL; `length`
 * receives its length without surrounding blanks. */
static const char *
header_value (const char *head, const char *name, size_t *length)
{
  size_t name_length = strlen (name);
  const char *line = strchr (head, '\n');
  while (line != NULL)
    {
      line++;
      const char *next = strchr (line, '\n');
      size_t line_length = next != NULL ? (size_t) (next - line) : strlen (line);
      if (line_length > name_length && line[name_length] == ':' && strncasecmp (line, name, name_length) == 0)
        {
          const char *value = line + name_length + 1;
          const char *end = line + line_length;
          while (value < end && (*value == ' ' || *value == '\t'))
            value++;
          while (end > value && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--;
          *length = (size_t) (end - value);
          return value;
        }
      line = next;
    }
  return NULL;
}

static ReachdStreamResult
parse_head (ReachdStream *stream)
{
  const char *head = stream->head;
  size_t length;
  const char *value;
  int status = 0;
  /* "HTTP/1.1 200 OK" */
  if (strncmp (head, "HTTP/1.", 7) != 0 || (head[7] != '0' && head[7] != '1') || head[8] != ' ')
    return fail (stream, REACHD_STREAM_BAD_HEAD);
  for (int i = 9; i < 12; i++)
    {
      if (head[i] < '0' || head[i] > '9')
        return fail (stream, REACHD_STREAM_BAD_HEAD);
      status = status * 10 + (head[i] - '0');
    }
  if (head[12] != ' ' && head[12] != '\r' && head[12] != '\n')
    return fail (stream, REACHD_STREAM_BAD_HEAD);
  stream->status = status;
  if (stream->status != 200)
    return fail (stream, REACHD_STREAM_REFUSED);
  value = header_value (head, "Content-Type", &length);
  if (value == NULL || length < 17 || strncasecmp (value, "text/event-stream", 17) != 0)
    return fail (stream, REACHD_STREAM_REFUSED);
  value = header_value (head, "Transfer-Encoding", &length);
  if (value != NULL)
    {
      if (length != 7 || strncasecmp (value, "chunked", 7) != 0)
        return fail (stream, REACHD_STREAM_BAD_HEAD);
      stream->chunked = 1;
    }
  stream->phase = PHASE_BODY;
  return REACHD_STREAM_OK;
}

/* One line of the event stream (without its end). */
static ReachdStreamResult
event_line (ReachdStream *stream, ReachdEventFunc on_event, void *user_data)
{
  const char *line = stream->line;
  size_t length = stream->line_length;
  if (length > 0 && line[length - 1] == '\r')
    length--;
  if (length == 0)
    {
      if (stream->has_data && stream->data != NULL)
        {
          stream->data[stream->data_length] = '\0';
          on_event (stream->data, stream->data_length, user_data);
        }
      stream->data_length = 0;
      stream->has_data = 0;
      return REACHD_STREAM_OK;
    }
  if (length >= 4 && memcmp (line, "data", 4) == 0 && (length == 4 || line[4] == ':'))
    {
      const char *value = line + (length > 4 ? 5 : 4);
      size_t value_length = length - (size_t) (value - line);
      if (value_length > 0 && value[0] == ' ')
        value++, value_length--;
      if (stream->data_length + value_length + 1 > REACHD_EVENT_LIMIT
          || reserve (&stream->data, &stream->data_capacity, stream->data_length + value_length + 1) != 0)
        return fail (stream, REACHD_STREAM_BAD_BODY);
      if (stream->has_data)
        stream->data[stream->data_length++] = '\n';
      memcpy (stream->data + stream->data_length, value, value_length);
      stream->data_length += value_length;
      stream->has_data = 1;
    }
  /* Comments (": heartbeat"), id, event, retry: nothing the module needs. */
  return REACHD_STREAM_OK;
}

/* Body bytes, framing removed. */
static ReachdStreamResult
feed_events (ReachdStream *stream, const char *bytes, size_t length, ReachdEventFunc on_event, void *user_data)
{
  while (length > 0)
    {
      const char *newline = memchr (bytes, '\n', length);
      size_t part = newline != NULL ? (size_t) (newline - bytes) : length;
      if (stream->line_length + part + stream->data_length > REACHD_EVENT_LIMIT
          || reserve (&stream->line, &stream->line_capacity, stream->line_length + part) != 0)
        return fail (stream, REACHD_STREAM_BAD_BODY);
      memcpy (stream->line + stream->line_length, bytes, part);
      stream->line_length += part;
      if (newline == NULL)
        return REACHD_STREAM_OK;
      ReachdStreamResult result = event_line (stream, on_event, user_data);
      stream->line_length = 0;
      if (result != REACHD_STREAM_OK)
        return result;
      bytes += part + 1;
      length -= part + 1;
    }
  return REACHD_STREAM_OK;
}

/* Body bytes as they arrive, in chunked framing. */
static ReachdStreamResult
feed_chunked (ReachdStream *stream, const char *bytes, size_t length, ReachdEventFunc on_event, void *user_data)
{
  while (length > 0)
    {
      switch (stream->chunk_phase)
        {
        case CHUNK_SIZE:
          {
            char c = *bytes++;
            length--;
            if (c != '\n')
              {
                if (stream->size_length + 1 >= sizeof stream->size_line)
                  return fail (stream, REACHD_STREAM_BAD_BODY);
                stream->size_line[stream->size_length++] = c;
                break;
              }
            size_t size = 0;
            size_t digits = 0;
            for (; digits < stream->size_length; digits++)
              {
                char h = stream->size_line[digits];
                int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (digit < 0)
                  break;
                if (size > REACHD_EVENT_LIMIT)
                  return fail (stream, REACHD_STREAM_BAD_BODY);
                size = size * 16 + (size_t) digit;
              }
            /* Digits, then nothing, a chunk extension (;...) or the CR of the CRLF. */
            if (digits == 0 || (digits < stream->size_length && stream->size_line[digits] != ';' && stream->size_line[digits] != '\r'))
              return fail (stream, REACHD_STREAM_BAD_BODY);
            stream->size_length = 0;
            stream->chunk_remaining = size;
            stream->chunk_phase = size == 0 ? CHUNK_DONE : CHUNK_DATA;
            break;
          }
        case CHUNK_DATA:
          {
            size_t part = length < stream->chunk_remaining ? length : stream->chunk_remaining;
            ReachdStreamResult result = feed_events (stream, bytes, part, on_event, user_data);
            if (result != REACHD_STREAM_OK)
              return result;
            bytes += part;
            length -= part;
            stream->chunk_remaining -= part;
            if (stream->chunk_remaining == 0)
              stream->chunk_phase = CHUNK_DATA_END;
            break;
          }
        case CHUNK_DATA_END:
          {
            char c = *bytes++;
            length--;
            if (c == '\n')
              stream->chunk_phase = CHUNK_SIZE;
            else if (c != '\r')
              return fail (stream, REACHD_STREAM_BAD_BODY);
            break;
          }
        case CHUNK_DONE:
          /* The last chunk: whatever follows (trailers) carries no event. */
          return REACHD_STREAM_OK;
        }
    }
  return REACHD_STREAM_OK;
}

ReachdStreamResult
reachd_stream_feed (ReachdStream *stream, const char *bytes, size_t length, ReachdEventFunc on_event, void *user_data)
{
  if (stream->phase == PHASE_FAILED)
    return stream->failure;
  if (stream->phase == PHASE_HEAD)
    {
      size_t scan_from = stream->head_length > 3 ? stream->head_length - 3 : 0;
      size_t room = REACHD_HEAD_LIMIT - stream->head_length;
      size_t taken = length < room ? length : room;
      memcpy (stream->head + stream->head_length, bytes, taken);
      stream->head_length += taken;
      stream->head[stream->head_length] = '\0';
      size_t end = 0;
      for (size_t i = scan_from; i < stream->head_length && end == 0; i++)
        {
          if (stream->head[i] != '\n')
            continue;
          if (i >= 1 && stream->head[i - 1] == '\n')
            end = i + 1;
          else if (i >= 2 && stream->head[i - 1] == '\r' && stream->head[i - 2] == '\n')
            end = i + 1;
        }
      if (end == 0)
        return stream->head_length == REACHD_HEAD_LIMIT ? fail (stream, REACHD_STREAM_BAD_HEAD) : REACHD_STREAM_OK;
      /* A NUL in the head is not HTTP (the body after it, in the same read, may hold anything). */
      if (memchr (stream->head, '\0', end) != NULL)
        return fail (stream, REACHD_STREAM_BAD_HEAD);
      /* What of this feed came after the head is body. */
      size_t body_offset = end - (stream->head_length - taken);
      stream->head[end] = '\0';
      ReachdStreamResult result = parse_head (stream);
      if (result != REACHD_STREAM_OK)
        return result;
      bytes += body_offset;
      length -= body_offset;
    }
  return stream->chunked ? feed_chunked (stream, bytes, length, on_event, user_data)
                         : feed_events (stream, bytes, length, on_event, user_data);
}
