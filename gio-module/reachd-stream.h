/* What the GIO module reads from reachd: the HTTP answer to GET /v1/events, its Server-Sent
 * Events, and the status document each event carries (docs/status-api.md). Plain C with no
 * GLib, so that the parsers are fuzzed and run under AddressSanitizer on their own
 * (tests/parser-test.c). Every input is outside input: anything malformed is refused with an
 * error code, never trusted, and nothing grows past the limits below. */
#ifndef REACHD_STREAM_H
#define REACHD_STREAM_H

#include <stddef.h>

/* The largest response head, and the largest event, accepted: reachd's events are a few KiB
 * (ReachAPI's EventStreamParser allows 1 MiB, and so does this). */
#define REACHD_HEAD_LIMIT (16 * 1024)
#define REACHD_EVENT_LIMIT (1024 * 1024)
/* At most this many targets are kept from one document, and this long a text. */
#define REACHD_TARGET_LIMIT 256
#define REACHD_TEXT_LIMIT 1024
/* Containers nested deeper than this are refused (reachd nests four deep). */
#define REACHD_DEPTH_LIMIT 32

typedef enum {
  REACHD_STATE_UNKNOWN,
  REACHD_STATE_CONNECTED,
  REACHD_STATE_DISCONNECTED,
} ReachdState;

typedef enum {
  REACHD_HEALTH_UNKNOWN,
  REACHD_HEALTH_HEALTHY,
  REACHD_HEALTH_UNHEALTHY,
} ReachdHealth;

typedef struct {
  char *name;
  /* Where it is probed: host name or address literal (no brackets) and port; host NULL and
   * port 0 from a reachd too old to say. */
  char *host;
  long port;
  ReachdHealth health;
  /* The failure code holding it down (connection_refused, timeout, ...); NULL when healthy. */
  char *reason;
} ReachdTarget;

/* The parts of one status document the module uses. */
typedef struct {
  ReachdState state;
  char *reason;
  /* link, gateway, dns, upstream, server or portal; NULL when the document says null. */
  char *fault;
  size_t usable_interfaces;
  ReachdTarget *targets;
  size_t n_targets;
} ReachdStatus;

/* Parses one status document (the data of an event). Returns 0 and fills `status` (to be
 * cleared with reachd_status_clear), or -1 for anything that is not a well-formed JSON object
 * with a known `state`, leaving `status` empty. Unknown keys are skipped; keys of the wrong
 * type make the document invalid. */
int reachd_status_parse (const char *json, size_t length, ReachdStatus *status);
void reachd_status_clear (ReachdStatus *status);

/* Reads the HTTP answer to GET /v1/events: its head (200 and text/event-stream, or an error),
 * the body in chunked or plain framing, and the events in it. */
typedef struct ReachdStream ReachdStream;

typedef enum {
  REACHD_STREAM_OK = 0,
  /* Not an HTTP answer, or a head over REACHD_HEAD_LIMIT. */
  REACHD_STREAM_BAD_HEAD = -1,
  /* An HTTP answer other than 200 text/event-stream: reachd refused (401, 421, ...), or it is
   * not reachd. reachd_stream_status() has the status code. */
  REACHD_STREAM_REFUSED = -2,
  /* Broken chunked framing, or an event over REACHD_EVENT_LIMIT. */
  REACHD_STREAM_BAD_BODY = -3,
} ReachdStreamResult;

typedef void (*ReachdEventFunc) (const char *data, size_t length, void *user_data);

ReachdStream *reachd_stream_new (void);
void reachd_stream_free (ReachdStream *stream);
/* Takes the next bytes of the connection and calls `on_event` with the data of each event they
 * complete (a stream that failed keeps failing). */
ReachdStreamResult reachd_stream_feed (ReachdStream *stream, const char *bytes, size_t length,
                                       ReachdEventFunc on_event, void *user_data);
/* The answer's HTTP status, 0 before its head is complete. */
int reachd_stream_status (const ReachdStream *stream);

#endif
