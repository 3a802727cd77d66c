/* The GIO module's parsers (reachd-stream.c) on good, bad and mutated input, built with
 * AddressSanitizer and UBSan by `make check`: every GLib program on a desktop loads this code,
 * so no input may crash it, read out of bounds or leak. Prints one line per group and
 * "N passed, N failed" at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reachd-stream.h"

static int passed, failed;

#define CHECK(condition, ...)                                                                                          \
  do                                                                                                                   \
    {                                                                                                                  \
      if (condition)                                                                                                   \
        passed++;                                                                                                      \
      else                                                                                                             \
        {                                                                                                              \
          failed++;                                                                                                    \
          printf ("FAIL %s:%d: ", __FILE__, __LINE__);                                                                 \
          printf (__VA_ARGS__);                                                                                        \
          printf ("\n");                                                                                               \
        }                                                                                                              \
    }                                                                                                                  \
  while (0)

/* A document as reachd writes it (two targets, a portal, timings, a certificate). */
static const char document[] =
  "{\"state\":\"disconnected\",\"reason\":\"connection_refused\",\"reason_detail\":\"target server: the server "
  "refused the connection (in the connect phase)\",\"target\":\"server\",\"fault\":\"server\",\"since\":\"2026-11-29T"
  "05:40:01.123Z\",\"likely_connected\":false,\"sequence\":1764394801123456,\"reset\":false,\"version\":\"1.9.0\","
  "\"usable_interfaces\":[\"eth0\",\"wl\\u00e9n0\"],\"targets\":[{\"name\":\"server\",\"kind\":\"http\",\"host\":"
  "\"server.test\",\"port\":8080,\"health\":\"unhealthy\",\"reason\":\"connection_refused\",\"phase\":\"connect\","
  "\"detail\":\"refused \\\"quoted\\\" \\ud83d\\ude00\",\"http_status\":null,\"latency_seconds\":0.00123,\"timings\":{"
  "\"dns_seconds\":null,\"connect_seconds\":1.5e-3,\"tls_seconds\":null,\"first_byte_seconds\":null,\"total_seconds\":"
  "-0.0}, \"last_checked_at\":\"2026-11-29T05:40:01.000Z\",\"consecutive_failures\":3,\"consecutive_successes\":0,"
  "\"certificate\":null,\"families\":[],\"answered_families\":[],\"degraded_families\":[]},\n {\"name\":\"db\",\"kind\""
  ":\"tcp\",\"host\":\"2001:db8::5\",\"port\":5432,\"health\":\"healthy\",\"reason\":null,\"certificate\":{\"not_after\""
  ":\"2027-01-01T00:00:00.000Z\",\"subject\":\"CN=db\",\"issuer\":\"CN=ca\"}}],\"portal\":null,\"interfaces\":[],"
  "\"degraded_families\":[\"ipv6\"]}";

static void
test_document (void)
{
  ReachdStatus status;
  CHECK (reachd_status_parse (document, strlen (document), &status) == 0, "reachd's document parses");
  CHECK (status.state == REACHD_STATE_DISCONNECTED, "state");
  CHECK (status.fault != NULL && strcmp (status.fault, "server") == 0, "fault");
  CHECK (status.reason != NULL && strcmp (status.reason, "connection_refused") == 0, "reason");
  CHECK (status.usable_interfaces == 2, "usable interfaces: %zu", status.usable_interfaces);
  CHECK (status.n_targets == 2, "targets: %zu", status.n_targets);
  if (status.n_targets == 2)
    {
      CHECK (strcmp (status.targets[0].name, "server") == 0 && strcmp (status.targets[0].host, "server.test") == 0
               && status.targets[0].port == 8080 && status.targets[0].health == REACHD_HEALTH_UNHEALTHY
               && strcmp (status.targets[0].reason, "connection_refused") == 0,
             "the first target");
      CHECK (strcmp (status.targets[1].host, "2001:db8::5") == 0 && status.targets[1].port == 5432
               && status.targets[1].health == REACHD_HEALTH_HEALTHY && status.targets[1].reason == NULL,
             "the second target");
    }
  reachd_status_clear (&status);

  static const char *const valid[] = {
    "{\"state\":\"connected\",\"fault\":null,\"usable_interfaces\":[],\"targets\":[]}",
    "{\"state\":\"something new\"}",
    " \t\r\n{ \"state\" : \"unknown\" , \"targets\" : [ { } ] } \n",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\\u00e9\\uD834\\uDD1E\",\"port\":null,\"host\":null}]}",
  };
  for (size_t i = 0; i < sizeof valid / sizeof *valid; i++)
    {
      CHECK (reachd_status_parse (valid[i], strlen (valid[i]), &status) == 0, "valid: %s", valid[i]);
      reachd_status_clear (&status);
    }
  CHECK (reachd_status_parse (valid[1], strlen (valid[1]), &status) == 0 && status.state == REACHD_STATE_UNKNOWN,
         "a state word this module does not know is unknown");
  reachd_status_clear (&status);

  static const char *const invalid[] = {
    "",
    "null",
    "[]",
    "{}",
    "{\"fault\":\"link\"}",
    "{\"state\":5}",
    "{\"state\":\"connected\"} x",
    "{\"state\":\"connected\",}",
    "{\"state\":\"connected\" \"fault\":null}",
    "{\"state\":\"connected\",\"targets\":null}",
    "{\"state\":\"connected\",\"targets\":[{\"port\":70000}]}",
    "{\"state\":\"connected\",\"targets\":[{\"port\":80.5}]}",
    "{\"state\":\"connected\",\"targets\":[{\"port\":-1}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"a\\u0000b\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\\ud800\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\\udc00\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\\x41\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\xc3\x28\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\xed\xa0\x80\"}]}",
    "{\"state\":\"connected\",\"targets\":[{\"name\":\"\xe0\x80\xaf\"}]}",
    "{\"state\":\"connected\",\"x\":\"tab\there\"}",
    "{\"state\":\"connected\",\"x\":01}",
    "{\"state\":\"connected\",\"x\":1.}",
    "{\"state\":\"connected\",\"x\":1e}",
    "{\"state\":\"connected\",\"x\":tru}",
    "{\"state\":\"connected\",\"usable_interfaces\":[1]}",
    "{\"state\":\"connected\"",
    "{\"state\":\"connected",
  };
  for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++)
    {
      CHECK (reachd_status_parse (invalid[i], strlen (invalid[i]), &status) == -1, "refused: %s", invalid[i]);
      CHECK (status.targets == NULL && status.reason == NULL, "nothing kept of a refused document");
    }

  /* Every truncation of the document is refused (none is a whole object). */
  int truncations_refused = 1;
  for (size_t length = 0; length < strlen (document); length++)
    {
      char *copy = malloc (length + 1);
      memcpy (copy, document, length);
      if (reachd_status_parse (copy, length, &status) != -1)
        truncations_refused = 0;
      free (copy);
    }
  CHECK (truncations_refused, "every truncation of the document is refused");

  /* Deep nesting ends at the depth limit, not in a stack overflow. */
  size_t depth = 200000;
  char *deep = malloc (depth * 2 + 32);
  size_t n = (size_t) sprintf (deep, "{\"state\":\"connected\",\"x\":");
  memset (deep + n, '[', depth);
  memset (deep + n + depth, ']', depth);
  strcpy (deep + n + 2 * depth, "}");
  CHECK (reachd_status_parse (deep, strlen (deep), &status) == -1, "200,000 nested arrays are refused");
  free (deep);

  /* A text over the limit is refused where it is kept, and skipped where it is not. */
  char *long_name = malloc (REACHD_TEXT_LIMIT + 64);
  n = (size_t) sprintf (long_name, "{\"state\":\"connected\",\"targets\":[{\"name\":\"");
  memset (long_name + n, 'a', REACHD_TEXT_LIMIT + 1);
  strcpy (long_name + n + REACHD_TEXT_LIMIT + 1, "\"}]}");
  CHECK (reachd_status_parse (long_name, strlen (long_name), &status) == -1, "a name over the limit is refused");
  free (long_name);

  /* More targets than kept: the first REACHD_TARGET_LIMIT are. */
  size_t many = REACHD_TARGET_LIMIT + 10;
  char *crowd = malloc (many * 40 + 64);
  n = (size_t) sprintf (crowd, "{\"state\":\"connected\",\"targets\":[");
  for (size_t i = 0; i < many; i++)
    n += (size_t) sprintf (crowd + n, "%s{\"name\":\"t%zu\",\"health\":\"healthy\"}", i ? "," : "", i);
  strcpy (crowd + n, "]}");
  CHECK (reachd_status_parse (crowd, strlen (crowd), &status) == 0 && status.n_targets == REACHD_TARGET_LIMIT,
         "%zu targets keep %d", many, REACHD_TARGET_LIMIT);
  reachd_status_clear (&status);
  free (crowd);
  printf ("status documents: done\n");
}

/* Events collected from a stream. */
typedef struct {
  char events[8][4096];
  size_t count;
} Collected;

static void
collect (const char *data, size_t length, void *user_data)
{
  Collected *collected = user_data;
  if (collected->count < 8 && length < 4096)
    {
      memcpy (collected->events[collected->count], data, length);
      collected->events[collected->count][length] = '\0';
    }
  collected->count++;
}

static const char chunked_answer[] = "HTTP/1.1 200 OK\r\n"
                                     "Content-Type: text/event-stream; charset=utf-8\r\n"
                                     "Cache-Control: no-cache\r\n"
                                     "transfer-encoding: chunked\r\n"
                                     "\r\n"
                                     "20\r\n"
                                     "id: 1\ndata: {\"state\":\"unknown\"}\n\r\n"
                                     "1;ext=1\r\n"
                                     "\n\r\n"
                                     "10\r\n"
                                     ": heartbeat\n\n\n\n\n\r\n"
                                     "23\r\n"
                                     "id: 2\r\ndata: {\"a\":1,\r\ndata: \"b\"\r\n\r\n"
                                     "\r\n0\r\n\r\n";

static void
test_stream (void)
{
  /* Fed whole, and in every split into two feeds, and byte by byte: the same two events. */
  size_t length = strlen (chunked_answer);
  for (size_t split = 0; split <= length; split++)
    {
      Collected collected = { 0 };
      ReachdStream *stream = reachd_stream_new ();
      ReachdStreamResult first = reachd_stream_feed (stream, chunked_answer, split, collect, &collected);
      ReachdStreamResult second = reachd_stream_feed (stream, chunked_answer + split, length - split, collect, &collected);
      int ok = first == REACHD_STREAM_OK && second == REACHD_STREAM_OK;
      CHECK (ok && collected.count == 2 && strcmp (collected.events[0], "{\"state\":\"unknown\"}") == 0
               && strcmp (collected.events[1], "{\"a\":1,\n\"b\"") == 0,
             "chunked, split at %zu: %d %d, %zu events", split, first, second, collected.count);
      reachd_stream_free (stream);
    }
  Collected collected = { 0 };
  ReachdStream *stream = reachd_stream_new ();
  for (size_t i = 0; i < length; i++)
    reachd_stream_feed (stream, chunked_answer + i, 1, collect, &collected);
  CHECK (collected.count == 2 && reachd_stream_status (stream) == 200, "byte by byte");
  reachd_stream_free (stream);

  /* Head and body in one read, the body holding NUL bytes (a bug once: the head's NUL check saw them). */
  static const char with_nul[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: a\0b\n\ndata: c\n\n";
  memset (&collected, 0, sizeof collected);
  stream = reachd_stream_new ();
  CHECK (reachd_stream_feed (stream, with_nul, sizeof with_nul - 1, collect, &collected) == REACHD_STREAM_OK
           && collected.count == 2 && strcmp (collected.events[1], "c") == 0,
         "a body with NUL bytes read with the head");
  reachd_stream_free (stream);

  static const char plain[] = "HTTP/1.0 200 OK\nContent-Type: text/event-stream\n\ndata: x\n\ndata:y\n\n";
  memset (&collected, 0, sizeof collected);
  stream = reachd_stream_new ();
  CHECK (reachd_stream_feed (stream, plain, strlen (plain), collect, &collected) == REACHD_STREAM_OK
           && collected.count == 2 && strcmp (collected.events[1], "y") == 0,
         "plain framing, bare newlines");
  reachd_stream_free (stream);

  static const struct {
    const char *answer;
    ReachdStreamResult result;
    int status;
  } refused[] = {
    { "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", REACHD_STREAM_REFUSED, 401 },
    { "HTTP/1.1 421 Misdirected Request\r\n\r\n", REACHD_STREAM_REFUSED, 421 },
    { "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}", REACHD_STREAM_REFUSED, 200 },
    { "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: gzip\r\n\r\n", REACHD_STREAM_BAD_HEAD, 200 },
    { "SSH-2.0-OpenSSH_9.2\r\n\r\n", REACHD_STREAM_BAD_HEAD, 0 },
    { "HTTP/1.1 2\r\n\r\n", REACHD_STREAM_BAD_HEAD, 0 },
    { "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", REACHD_STREAM_BAD_HEAD, 0 },
    { "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", REACHD_STREAM_BAD_BODY, 200 },
    { "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX", REACHD_STREAM_BAD_BODY, 200 },
    { "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", REACHD_STREAM_BAD_BODY, 200 },
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
    {
      /* The embedded NUL is part of its answer: feed through the last \n. */
      const char *answer = refused[i].answer;
      size_t answer_length = strlen (answer);
      if (strstr (answer, "X: a") != NULL)
        answer_length = 27;
      stream = reachd_stream_new ();
      ReachdStreamResult result = reachd_stream_feed (stream, answer, answer_length, collect, &collected);
      CHECK (result == refused[i].result && reachd_stream_status (stream) == refused[i].status,
             "refused answer %zu: %d, status %d", i, result, reachd_stream_status (stream));
      CHECK (reachd_stream_feed (stream, "data: x\n\n", 9, collect, &collected) == refused[i].result,
             "a failed stream stays failed");
      reachd_stream_free (stream);
    }

  /* A head that never ends, and an event that never ends, stop at their limits. */
  char *filler = malloc (REACHD_EVENT_LIMIT + 2);
  memset (filler, 'x', REACHD_EVENT_LIMIT + 1);
  stream = reachd_stream_new ();
  CHECK (reachd_stream_feed (stream, filler, REACHD_HEAD_LIMIT + 1, collect, &collected) == REACHD_STREAM_BAD_HEAD,
         "a head over the limit");
  reachd_stream_free (stream);
  stream = reachd_stream_new ();
  static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ";
  reachd_stream_feed (stream, head, strlen (head), collect, &collected);
  CHECK (reachd_stream_feed (stream, filler, REACHD_EVENT_LIMIT + 1, collect, &collected) == REACHD_STREAM_BAD_BODY,
         "an event over the limit");
  reachd_stream_free (stream);
  stream = reachd_stream_new ();
  reachd_stream_feed (stream, head, strlen (head), collect, &collected);
  int many_lines_refused = 0;
  for (int i = 0; i < 4096 && !many_lines_refused; i++)
    {
      char line[1024];
      memset (line, 'y', sizeof line);
      memcpy (line, "\ndata: ", 7);
      many_lines_refused = reachd_stream_feed (stream, line, sizeof line, collect, &collected) == REACHD_STREAM_BAD_BODY;
    }
  CHECK (many_lines_refused, "an event of many data lines over the limit");
  reachd_stream_free (stream);
  free (filler);
  printf ("event streams: done\n");
}

static uint64_t seed = 0x9E3779B97F4A7C15u;

static uint64_t
next_random (void)
{
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return seed;
}

static void
count_event (const char *data, size_t length, void *user_data)
{
  ReachdStatus status;
  /* What the module does with each event: parse it, use it, clear it. */
  if (reachd_status_parse (data, length, &status) == 0)
    {
      for (size_t i = 0; i < status.n_targets; i++)
        if (status.targets[i].name != NULL && strlen (status.targets[i].name) > REACHD_TEXT_LIMIT)
          abort ();
      reachd_status_clear (&status);
    }
  (*(size_t *) user_data)++;
}

/* Random edits of a valid stream: flips, inserts, deletions, repeats, through both parsers.
 * Nothing may crash, read or write out of bounds, or leak (ASan's leak checker runs at exit). */
static void
test_mutations (void)
{
  char base[8192];
  int base_length = snprintf (base, sizeof base,
                              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "%zx\r\ndata: %s\n\n\r\n",
                              strlen (document) + 8, document);
  const int rounds = 100000;
  size_t events = 0, parsed = 0;
  char *mutated = malloc (sizeof base * 4);
  for (int round = 0; round < rounds; round++)
    {
      size_t length = (size_t) base_length;
      memcpy (mutated, base, length);
      int edits = 1 + (int) (next_random () % 8);
      for (int e = 0; e < edits; e++)
        {
          size_t at = (size_t) (next_random () % (length + 1));
          switch (next_random () % 5)
            {
            case 0:
              if (at < length)
                mutated[at] ^= (char) (1u << (next_random () % 8));
              break;
            case 1:
              if (length < sizeof base * 3)
                {
                  memmove (mutated + at + 1, mutated + at, length - at);
                  mutated[at] = "{}[]\",:\\0123456789eE.-+ntfu\r\n\x80\xc3\xff"[next_random () % 33];
                  length++;
                }
              break;
            case 2:
              {
                size_t n = (size_t) (next_random () % 16);
                if (at + n <= length)
                  {
                    memmove (mutated + at, mutated + at + n, length - at - n);
                    length -= n;
                  }
                break;
              }
            case 3:
              {
                size_t n = (size_t) (next_random () % 64);
                if (at + n <= length && length + n < sizeof base * 3)
                  {
                    memmove (mutated + at + n, mutated + at, length - at);
                    length += n;
                  }
                break;
              }
            default:
              length = at;
              break;
            }
        }
      ReachdStatus status;
      /* The JSON alone: the data part of the mutated copy. */
      const char *json = memchr (mutated, '{', length);
      if (json != NULL && reachd_status_parse (json, length - (size_t) (json - mutated), &status) == 0)
        {
          parsed++;
          reachd_status_clear (&status);
        }
      /* The whole stream, in two feeds split at random. */
      ReachdStream *stream = reachd_stream_new ();
      size_t split = (size_t) (next_random () % (length + 1));
      reachd_stream_feed (stream, mutated, split, count_event, &events);
      reachd_stream_feed (stream, mutated + split, length - split, count_event, &events);
      reachd_stream_free (stream);
    }
  free (mutated);
  CHECK (events > 0, "some mutated streams still carry events");
  printf ("mutations: %d rounds, %zu events, %zu documents still whole, no crash\n", rounds, events, parsed);
}

int
main (void)
{
  test_document ();
  test_stream ();
  test_mutations ();
  printf ("parser-test: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
