/* reachd's GNetworkMonitor: GLib's network monitor extension point ("gio-network-monitor"),
 * implemented as "reachd" at priority 35, above NetworkManager's 30 and below the sandbox
 * portal's 40. Every GLib program that asks g_network_monitor_get_default() (and every Flatpak
 * app, through xdg-desktop-portal on the host) then hears reachd's verdict:
 *
 *   connected                                   G_NETWORK_CONNECTIVITY_FULL
 *   captive_portal (fault portal)               G_NETWORK_CONNECTIVITY_PORTAL
 *   disconnected, fault upstream, dns, server   G_NETWORK_CONNECTIVITY_LIMITED
 *   disconnected, fault gateway, link           G_NETWORK_CONNECTIVITY_LOCAL
 *
 * It follows reachd's event stream (GET /v1/events: the current verdict, then every change) on
 * reachd's loopback listener or unix socket, $REACHD_ENDPOINT as reachctl reads it. When reachd
 * does not answer at start, initialisation fails and GLib takes the next backend. See
 * docs/desktop.md for what each program sees and why. */
#include <errno.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "reachd-stream.h"

/* reachd's default listener (ReachdEndpoint.defaultURL). */
#define DEFAULT_ENDPOINT "http://127.0.0.1:9780"
/* The longest a program's start waits for reachd's first answer: a running reachd answers in
 * about a millisecond; one that does not answer within this is treated as not running. */
#define FIRST_ANSWER_MS 1000
/* How long the last verdict is kept while reachd is away (a restart, or its first probes after
 * one) before the module says what the kernel's routes say, as GLib's netlink backend would. */
#define HOLD_SECONDS 10
/* Reconnecting: the first retry after this, doubling up to the cap, with jitter. */
#define RETRY_FIRST_MS 100
#define RETRY_MAX_MS 5000
/* reachd sends a heartbeat every 15 s: a connection silent for three is dead (a frozen reachd). */
#define SILENCE_SECONDS 45

#define REACHD_TYPE_NETWORK_MONITOR (reachd_network_monitor_get_type ())
G_DECLARE_FINAL_TYPE (ReachdNetworkMonitor, reachd_network_monitor, REACHD, NETWORK_MONITOR, GObject)

struct _ReachdNetworkMonitor
{
  GObject parent_instance;

  /* Where the monitor was made: its signals are emitted there, as GLib's own backends do. */
  GMainContext *context;
  /* GLib's own netlink backend, for routes while reachd has no verdict and for hosts reachd does
   * not probe; NULL where there is none. */
  GNetworkMonitor *netlink;
  gulong netlink_changed;

  struct sockaddr_storage address;
  socklen_t address_length;
  gchar *endpoint;

  /* The connection to reachd: -1 when there is none. */
  int fd;
  gboolean connecting;
  GSource *io;
  ReachdStream *stream;
  gint64 last_heard;
  /* A status document came on this connection (the first one ends the wait at start). */
  gboolean answered;
  GSource *retry;
  guint retry_ms;
  GSource *hold;
  GSource *silence;
  gboolean initialised;

  /* reachd's last verdict, while it is in force (connected or disconnected, not yet held past
   * HOLD_SECONDS). */
  ReachdStatus status;
  gboolean has_verdict;

  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;
};

enum
{
  PROP_0,
  PROP_NETWORK_AVAILABLE,
  PROP_NETWORK_METERED,
  PROP_CONNECTIVITY,
};

static void reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (ReachdNetworkMonitor, reachd_network_monitor, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE, reachd_network_monitor_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR, reachd_network_monitor_iface_init))

static void connect_again (ReachdNetworkMonitor *self);

/* What GLib is told ------------------------------------------------------------------------ */

static GNetworkConnectivity
connectivity_of (const ReachdStatus *status)
{
  const char *fault = status->fault;
  if (status->state == REACHD_STATE_CONNECTED)
    return G_NETWORK_CONNECTIVITY_FULL;
  if (fault != NULL && strcmp (fault, "portal") == 0)
    return G_NETWORK_CONNECTIVITY_PORTAL;
  if (fault != NULL && (strcmp (fault, "link") == 0 || strcmp (fault, "gateway") == 0))
    return G_NETWORK_CONNECTIVITY_LOCAL;
  if (fault != NULL && (strcmp (fault, "upstream") == 0 || strcmp (fault, "dns") == 0 || strcmp (fault, "server") == 0))
    return G_NETWORK_CONNECTIVITY_LIMITED;
  if (status->reason != NULL && strcmp (status->reason, "captive_portal") == 0)
    return G_NETWORK_CONNECTIVITY_PORTAL;
  /* No fault told yet (or one this module does not know): a usable link that does not reach is
   * limited, no usable link is local. */
  return status->usable_interfaces > 0 ? G_NETWORK_CONNECTIVITY_LIMITED : G_NETWORK_CONNECTIVITY_LOCAL;
}

/* Whether two verdicts answer can_reach() alike: the same targets, where and how healthy. */
static gboolean
same_targets (const ReachdStatus *a, const ReachdStatus *b)
{
  if (a->n_targets != b->n_targets)
    return FALSE;
  for (size_t i = 0; i < a->n_targets; i++)
    {
      const ReachdTarget *x = &a->targets[i], *y = &b->targets[i];
      if (x->health != y->health || x->port != y->port || g_strcmp0 (x->host, y->host) != 0
          || g_strcmp0 (x->name, y->name) != 0 || g_strcmp0 (x->reason, y->reason) != 0)
        return FALSE;
    }
  return TRUE;
}

/* Works out what GLib is told from reachd's verdict (or, without one, from the netlink
 * backend), notifies the properties that changed, and emits network-changed when anything did,
 * or when `changed` says something else a program asks about did. */
static void
update (ReachdNetworkMonitor *self, gboolean changed)
{
  gboolean available = TRUE;
  gboolean metered = self->netlink != NULL && g_network_monitor_get_network_metered (self->netlink);
  GNetworkConnectivity connectivity = G_NETWORK_CONNECTIVITY_FULL;

  if (self->has_verdict)
    {
      connectivity = connectivity_of (&self->status);
      available = self->status.state == REACHD_STATE_CONNECTED || self->status.usable_interfaces > 0;
    }
  else if (self->netlink != NULL)
    {
      available = g_network_monitor_get_network_available (self->netlink);
      connectivity = g_network_monitor_get_connectivity (self->netlink);
    }

  if (!self->initialised)
    {
      self->available = available;
      self->metered = metered;
      self->connectivity = connectivity;
      return;
    }
  g_object_freeze_notify (G_OBJECT (self));
  if (available != self->available)
    {
      self->available = available;
      changed = TRUE;
      g_object_notify (G_OBJECT (self), "network-available");
    }
  if (metered != self->metered)
    {
      self->metered = metered;
      changed = TRUE;
      g_object_notify (G_OBJECT (self), "network-metered");
    }
  if (connectivity != self->connectivity)
    {
      self->connectivity = connectivity;
      changed = TRUE;
      g_object_notify (G_OBJECT (self), "connectivity");
    }
  g_object_thaw_notify (G_OBJECT (self));
  if (changed)
    g_signal_emit_by_name (self, "network-changed", self->available);
}

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_source_unref (*source);
  *source = NULL;
}

static GSource *
add_timeout (ReachdNetworkMonitor *self, guint milliseconds, GSourceFunc function)
{
  GSource *source = g_timeout_source_new (milliseconds);
  g_source_set_callback (source, function, self, NULL);
  g_source_attach (source, self->context);
  return source;
}

static gboolean
hold_ended (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  g_clear_pointer (&self->hold, g_source_unref);
  g_debug ("reachd: no verdict for %d s: following the kernel's routes", HOLD_SECONDS);
  self->has_verdict = FALSE;
  reachd_status_clear (&self->status);
  update (self, TRUE);
  return G_SOURCE_REMOVE;
}

/* reachd's verdict is no longer current: keep it HOLD_SECONDS, unless something replaces it. */
static void
start_hold (ReachdNetworkMonitor *self)
{
  if (self->has_verdict && self->hold == NULL)
    self->hold = add_timeout (self, HOLD_SECONDS * 1000, hold_ended);
}

/* One event's data from reachd. */
static void
on_event (const char *data, size_t length, void *user_data)
{
  ReachdNetworkMonitor *self = user_data;
  ReachdStatus status;
  gboolean changed;

  if (reachd_status_parse (data, length, &status) != 0)
    {
      g_debug ("reachd: an event that is not a status document (%zu bytes): ignored", length);
      return;
    }
  self->retry_ms = RETRY_FIRST_MS;
  self->answered = TRUE;
  if (status.state == REACHD_STATE_UNKNOWN)
    {
      /* reachd has not probed yet (it has just started): what it said before holds a while. */
      reachd_status_clear (&status);
      start_hold (self);
      return;
    }
  clear_source (&self->hold);
  changed = !self->has_verdict || !same_targets (&self->status, &status);
  reachd_status_clear (&self->status);
  self->status = status;
  self->has_verdict = TRUE;
  update (self, changed);
}

/* The connection ---------------------------------------------------------------------------- */

static void
close_connection (ReachdNetworkMonitor *self)
{
  clear_source (&self->io);
  if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
  self->connecting = FALSE;
  self->answered = FALSE;
  g_clear_pointer (&self->stream, reachd_stream_free);
}

static gboolean
retry_now (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  g_clear_pointer (&self->retry, g_source_unref);
  connect_again (self);
  return G_SOURCE_REMOVE;
}

/* The connection ended or failed: hold the verdict, and try again after a backoff. */
static void
connection_lost (ReachdNetworkMonitor *self, const char *why)
{
  guint delay;
  g_debug ("reachd at %s: %s; trying again in %u ms", self->endpoint, why, self->retry_ms);
  close_connection (self);
  start_hold (self);
  /* 80-120 % of the backoff, so that the programs of a desktop do not all knock at once. */
  delay = self->retry_ms * (guint) g_random_int_range (80, 121) / 100;
  self->retry_ms = MIN (self->retry_ms * 2, RETRY_MAX_MS);
  clear_source (&self->retry);
  self->retry = add_timeout (self, delay, retry_now);
}

static const char *
stream_problem (ReachdStreamResult result)
{
  switch (result)
    {
    case REACHD_STREAM_BAD_HEAD: return "its answer is not HTTP";
    case REACHD_STREAM_REFUSED: return "it refused the event stream";
    case REACHD_STREAM_BAD_BODY: return "its event stream is malformed";
    case REACHD_STREAM_OK: break;
    }
  return "ok";
}

/* Reads what is there (at start, only up to the first event: what follows is left for the main
 * loop, to be signalled); FALSE when the connection is over (why in `why`). */
static gboolean
read_available (ReachdNetworkMonitor *self, const char **why)
{
  char buffer[16384];
  for (;;)
    {
      ssize_t n = recv (self->fd, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return TRUE;
      if (n <= 0)
        {
          *why = n == 0 ? "it closed the connection" : g_strerror (errno);
          return FALSE;
        }
      self->last_heard = g_get_monotonic_time ();
      ReachdStreamResult result = reachd_stream_feed (self->stream, buffer, (size_t) n, on_event, self);
      if (result != REACHD_STREAM_OK)
        {
          *why = stream_problem (result);
          return FALSE;
        }
      if (!self->initialised && self->answered)
        return TRUE;
    }
}

static const char request[] = "GET /v1/events HTTP/1.1\r\n"
                              "Host: localhost\r\n"
                              "Accept: text/event-stream\r\n"
                              "User-Agent: reachd-gio-module\r\n"
                              "\r\n";

static gboolean
send_request (int fd)
{
  /* A hundred bytes into an empty socket buffer: one send takes them all. */
  return send (fd, request, sizeof request - 1, MSG_NOSIGNAL) == (ssize_t) (sizeof request - 1);
}

static gboolean on_socket (gint fd, GIOCondition condition, gpointer user_data);

static void
watch (ReachdNetworkMonitor *self, GIOCondition condition)
{
  clear_source (&self->io);
  self->io = g_unix_fd_source_new (self->fd, condition);
  g_source_set_callback (self->io, G_SOURCE_FUNC (on_socket), self, NULL);
  g_source_attach (self->io, self->context);
}

static gboolean
on_socket (gint fd, GIOCondition condition, gpointer user_data)
{
  ReachdNetworkMonitor *self = g_object_ref (user_data);
  const char *why = NULL;
  (void) condition;
  if (self->connecting)
    {
      int error = 0;
      socklen_t length = sizeof error;
      if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
        error = errno;
      if (error != 0)
        connection_lost (self, g_strerror (error));
      else if (!send_request (fd))
        connection_lost (self, "it took no request");
      else
        {
          self->connecting = FALSE;
          watch (self, G_IO_IN);
        }
    }
  else if (!read_available (self, &why))
    connection_lost (self, why);
  g_object_unref (self);
  /* watch() and connection_lost() replace or remove this source themselves. */
  return G_SOURCE_CONTINUE;
}

/* A non-blocking socket connecting to reachd, or -1 with errno. */
static int
open_socket (ReachdNetworkMonitor *self, gboolean *in_progress)
{
  int fd = socket (self->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  *in_progress = FALSE;
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *) &self->address, self->address_length) == 0)
    return fd;
  if (errno == EINPROGRESS || errno == EAGAIN)
    {
      *in_progress = TRUE;
      return fd;
    }
  int saved = errno;
  close (fd);
  errno = saved;
  return -1;
}

static void
connect_again (ReachdNetworkMonitor *self)
{
  gboolean in_progress;
  close_connection (self);
  self->fd = open_socket (self, &in_progress);
  if (self->fd < 0)
    {
      connection_lost (self, g_strerror (errno));
      return;
    }
  self->stream = reachd_stream_new ();
  self->last_heard = g_get_monotonic_time ();
  if (self->stream == NULL)
    {
      connection_lost (self, "out of memory");
      return;
    }
  if (in_progress)
    {
      self->connecting = TRUE;
      watch (self, G_IO_OUT);
    }
  else if (!send_request (self->fd))
    connection_lost (self, "it took no request");
  else
    watch (self, G_IO_IN);
}

static gboolean
check_silence (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  if (self->fd >= 0 && g_get_monotonic_time () - self->last_heard > (gint64) SILENCE_SECONDS * G_USEC_PER_SEC)
    connection_lost (self, "it has sent nothing, not even a heartbeat");
  return G_SOURCE_CONTINUE;
}

/* Start: reachd's first answer, or failure ------------------------------------------------- */

/* $REACHD_ENDPOINT (as reachctl reads it) or reachd's default: a unix socket path, or
 * http://ADDRESS:PORT with an IP address or localhost (no name lookup: it could block). */
static gboolean
parse_endpoint (ReachdNetworkMonitor *self, GError **error)
{
  const char *endpoint = g_getenv ("REACHD_ENDPOINT");
  if (endpoint == NULL || *endpoint == '\0')
    endpoint = DEFAULT_ENDPOINT;
  g_free (self->endpoint);
  self->endpoint = g_strdup (endpoint);
  memset (&self->address, 0, sizeof self->address);

  if (endpoint[0] == '/')
    {
      struct sockaddr_un *address = (struct sockaddr_un *) &self->address;
      size_t length = strlen (endpoint);
      if (length >= sizeof address->sun_path)
        goto bad;
      address->sun_family = AF_UNIX;
      memcpy (address->sun_path, endpoint, length + 1);
      self->address_length = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + length + 1);
      return TRUE;
    }
  if (!g_str_has_prefix (endpoint, "http://"))
    goto bad;
  {
    const char *authority = endpoint + strlen ("http://");
    g_autofree char *host = NULL;
    const char *port_text;
    char *end;
    gulong port;
    g_autoptr (GInetAddress) address = NULL;
    if (authority[0] == '[')
      {
        const char *close = strchr (authority, ']');
        if (close == NULL || close[1] != ':')
          goto bad;
        host = g_strndup (authority + 1, (gsize) (close - authority - 1));
        port_text = close + 2;
      }
    else
      {
        const char *colon = strrchr (authority, ':');
        if (colon == NULL)
          goto bad;
        host = g_strndup (authority, (gsize) (colon - authority));
        port_text = colon + 1;
      }
    errno = 0;
    port = strtoul (port_text, &end, 10);
    if (errno != 0 || end == port_text || port == 0 || port > 65535 || (*end != '\0' && strcmp (end, "/") != 0))
      goto bad;
    address = g_inet_address_new_from_string (g_ascii_strcasecmp (host, "localhost") == 0 ? "127.0.0.1" : host);
    if (address == NULL)
      goto bad;
    g_autoptr (GSocketAddress) socket_address = g_inet_socket_address_new (address, (guint16) port);
    gssize size = g_socket_address_get_native_size (socket_address);
    if (size <= 0 || !g_socket_address_to_native (socket_address, &self->address, sizeof self->address, NULL))
      goto bad;
    self->address_length = (socklen_t) size;
    return TRUE;
  }
bad:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "REACHD_ENDPOINT=%s is neither a unix socket path nor http://ADDRESS:PORT", endpoint);
  return FALSE;
}

/* Waits until `fd` is ready for `events` or the deadline passes; FALSE on the deadline. */
static gboolean
wait_for (int fd, short events, gint64 deadline)
{
  for (;;)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      struct pollfd poller = { .fd = fd, .events = events };
      if (left <= 0)
        return FALSE;
      int ready = poll (&poller, 1, (int) left);
      if (ready > 0)
        return TRUE;
      if (ready < 0 && errno != EINTR)
        return FALSE;
    }
}

/* Connects and reads until reachd's first event, within FIRST_ANSWER_MS: a program's start waits
 * no longer than that, and no longer than reachd takes to answer. */
static gboolean
first_answer (ReachdNetworkMonitor *self, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + FIRST_ANSWER_MS * 1000;
  gboolean in_progress;
  const char *why = NULL;

  self->fd = open_socket (self, &in_progress);
  if (self->fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "reachd is not running at %s: %s", self->endpoint,
                   g_strerror (saved));
      return FALSE;
    }
  self->stream = reachd_stream_new ();
  if (self->stream == NULL)
    why = "out of memory";
  else if (in_progress && !wait_for (self->fd, POLLOUT, deadline))
    why = "no connection within the time allowed";
  else
    {
      int failure = 0;
      socklen_t length = sizeof failure;
      if (getsockopt (self->fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 && failure != 0)
        why = g_strerror (failure);
      else if (!send_request (self->fd))
        why = "it took no request";
    }
  /* Until the first event: a verdict, or reachd's "unknown" of its first moments. */
  while (why == NULL && !self->answered)
    {
      if (!wait_for (self->fd, POLLIN, deadline))
        why = "no answer within the time allowed";
      else
        read_available (self, &why);
    }
  if (why != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "reachd at %s did not answer: %s", self->endpoint, why);
      close_connection (self);
      return FALSE;
    }
  return TRUE;
}

static GNetworkMonitor *
new_netlink_monitor (void)
{
  GIOExtensionPoint *point = g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME);
  GIOExtension *extension = point != NULL ? g_io_extension_point_get_extension_by_name (point, "netlink") : NULL;
  g_autoptr (GError) error = NULL;
  GNetworkMonitor *monitor;
  if (extension == NULL)
    return NULL;
  monitor = g_initable_new (g_io_extension_get_type (extension), NULL, &error, NULL);
  if (monitor == NULL)
    g_debug ("reachd: GLib's netlink monitor is not there (%s): reachd's view alone", error->message);
  return monitor;
}

static void
on_netlink_changed (GNetworkMonitor *netlink, gboolean available, gpointer user_data)
{
  /* Routes changed: what can_reach() answers for hosts reachd does not probe may have too, and
   * without a verdict from reachd this is all there is. */
  (void) netlink, (void) available;
  update (user_data, TRUE);
}

static gboolean
reachd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (initable);
  (void) cancellable;
  if (self->initialised)
    return TRUE;
  self->context = g_main_context_ref_thread_default ();
  self->retry_ms = RETRY_FIRST_MS;
  if (!parse_endpoint (self, error) || !first_answer (self, error))
    return FALSE;
  self->netlink = new_netlink_monitor ();
  if (self->netlink != NULL)
    self->netlink_changed = g_signal_connect (self->netlink, "network-changed", G_CALLBACK (on_netlink_changed), self);
  update (self, FALSE);
  self->initialised = TRUE;
  watch (self, G_IO_IN);
  self->silence = add_timeout (self, 15 * 1000, check_silence);
  return TRUE;
}

/* can_reach() ------------------------------------------------------------------------------- */

static gboolean
same_host (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  g_autoptr (GInetAddress) x = NULL;
  g_autoptr (GInetAddress) y = NULL;
  /* "example.com." is "example.com". */
  if (la > 1 && a[la - 1] == '.')
    la--;
  if (lb > 1 && b[lb - 1] == '.')
    lb--;
  if (la == lb && g_ascii_strncasecmp (a, b, la) == 0)
    return TRUE;
  x = g_inet_address_new_from_string (a);
  y = g_inet_address_new_from_string (b);
  return x != NULL && y != NULL && g_inet_address_equal (x, y);
}

static gboolean
is_loopback (const char *host)
{
  g_autoptr (GInetAddress) address = g_inet_address_new_from_string (host);
  return g_ascii_strcasecmp (host, "localhost") == 0 || (address != NULL && g_inet_address_get_is_loopback (address));
}

/* What reachd says about `connectable`: when its host and port are a target's, the target's
 * health; when reachd knows of no usable link, unreachable (but loopback). 1 reachable, 0 not
 * (with `error` set), -1 when reachd does not say (then the netlink monitor answers). */
static int
answer_from_verdict (ReachdNetworkMonitor *self, GSocketConnectable *connectable, GError **error)
{
  g_autofree char *host = NULL;
  guint port = 0;
  int answer = -1;
  if (!self->has_verdict)
    return -1;
  if (G_IS_NETWORK_ADDRESS (connectable))
    {
      host = g_strdup (g_network_address_get_hostname (G_NETWORK_ADDRESS (connectable)));
      port = g_network_address_get_port (G_NETWORK_ADDRESS (connectable));
    }
  else if (G_IS_INET_SOCKET_ADDRESS (connectable))
    {
      host = g_inet_address_to_string (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (connectable)));
      port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (connectable));
    }
  if (host == NULL)
    return -1;
  for (size_t i = 0; i < self->status.n_targets; i++)
    {
      const ReachdTarget *target = &self->status.targets[i];
      if (target->host == NULL || target->health == REACHD_HEALTH_UNKNOWN || !same_host (host, target->host)
          || (port != 0 && (long) port != target->port))
        continue;
      if (target->health == REACHD_HEALTH_UNHEALTHY)
        {
          const char *reason = target->reason != NULL ? target->reason : "unhealthy";
          const char *fault = self->status.fault != NULL ? self->status.fault : "";
          GIOErrorEnum code = strcmp (reason, "connection_refused") == 0 ? G_IO_ERROR_CONNECTION_REFUSED
                              : strcmp (reason, "timeout") == 0          ? G_IO_ERROR_TIMED_OUT
                              : strcmp (fault, "link") == 0 || strcmp (fault, "gateway") == 0
                                  ? G_IO_ERROR_NETWORK_UNREACHABLE
                                  : G_IO_ERROR_HOST_UNREACHABLE;
          g_set_error (error, G_IO_ERROR, code, "reachd: target %s fails: %s", target->name != NULL ? target->name : host,
                       reason);
          return 0;
        }
      answer = 1;
    }
  /* No usable link: nothing beyond this machine answers, whatever routes GLib's netlink monitor
   * still holds (the kernel drops a downed link's routes without telling it). */
  if (answer < 0 && !self->available && !is_loopback (host))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "reachd: no usable network link");
      return 0;
    }
  return answer;
}

static gboolean
reachd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                  GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  int answer = answer_from_verdict (self, connectable, error);
  if (answer >= 0)
    return answer == 1;
  if (self->netlink != NULL)
    return g_network_monitor_can_reach (self->netlink, connectable, cancellable, error);
  if (!self->available)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
      return FALSE;
    }
  return TRUE;
}

static void
netlink_reached (GObject *netlink, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  if (g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (netlink), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

static void
reachd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  GError *error = NULL;
  int answer;
  g_task_set_source_tag (task, reachd_network_monitor_can_reach_async);
  answer = answer_from_verdict (self, connectable, &error);
  if (answer < 0 && self->netlink != NULL)
    {
      g_network_monitor_can_reach_async (self->netlink, connectable, cancellable, netlink_reached, task);
      return;
    }
  if (answer < 0 && !self->available)
    g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

static gboolean
reachd_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* GObject ----------------------------------------------------------------------------------- */

static void
reachd_network_monitor_init (ReachdNetworkMonitor *self)
{
  self->fd = -1;
  self->available = TRUE;
  self->connectivity = G_NETWORK_CONNECTIVITY_FULL;
}

static void
reachd_network_monitor_get_property (GObject *object, guint property, GValue *value, GParamSpec *pspec)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);
  switch (property)
    {
    case PROP_NETWORK_AVAILABLE: g_value_set_boolean (value, self->available); break;
    case PROP_NETWORK_METERED: g_value_set_boolean (value, self->metered); break;
    case PROP_CONNECTIVITY: g_value_set_enum (value, self->connectivity); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property, pspec); break;
    }
}

static void
reachd_network_monitor_dispose (GObject *object)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);
  close_connection (self);
  clear_source (&self->retry);
  clear_source (&self->hold);
  clear_source (&self->silence);
  if (self->netlink != NULL)
    {
      g_clear_signal_handler (&self->netlink_changed, self->netlink);
      g_clear_object (&self->netlink);
    }
  G_OBJECT_CLASS (reachd_network_monitor_parent_class)->dispose (object);
}

static void
reachd_network_monitor_finalize (GObject *object)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);
  reachd_status_clear (&self->status);
  g_free (self->endpoint);
  g_clear_pointer (&self->context, g_main_context_unref);
  G_OBJECT_CLASS (reachd_network_monitor_parent_class)->finalize (object);
}

static void
reachd_network_monitor_class_init (ReachdNetworkMonitorClass *class)
{
  GObjectClass *object_class = G_OBJECT_CLASS (class);
  object_class->get_property = reachd_network_monitor_get_property;
  object_class->dispose = reachd_network_monitor_dispose;
  object_class->finalize = reachd_network_monitor_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
}

static void
reachd_network_monitor_class_finalize (ReachdNetworkMonitorClass *class)
{
  (void) class;
}

static void
reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = reachd_network_monitor_can_reach;
  iface->can_reach_async = reachd_network_monitor_can_reach_async;
  iface->can_reach_finish = reachd_network_monitor_can_reach_finish;
}

static void
reachd_network_monitor_initable_iface_init (GInitableIface *iface)
{
  iface->init = reachd_network_monitor_initable_init;
}

/* The module ------------------------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* Resident: the default monitor lives as long as the program, with sources on its main
   * context, so this code must never be unloaded under it. */
  g_type_module_use (G_TYPE_MODULE (module));
  reachd_network_monitor_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, REACHD_TYPE_NETWORK_MONITOR, "reachd", 35);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
  (void) module;
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *points[] = { G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL };
  return g_strdupv (points);
}
