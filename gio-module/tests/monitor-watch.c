/* A GLib program that watches g_network_monitor_get_default() and prints, one JSON line each,
 * what it sees: the backend and its state at start, every network-changed, and the answer to
 * every "reach HOST PORT" line on stdin (can_reach_async). The Swift tests run it under valgrind
 * against reachd and against a stand-in that sends garbage; Tests/ReachDaemonTests/Clients/gio_monitor.py is the
 * same in Python through GObject introspection. Exits when stdin closes. */
#include <gio/gio.h>
#include <glib-unix.h>
#include <stdio.h>

static GMainLoop *loop;

static void
print_state (const char *event, GNetworkMonitor *monitor)
{
  printf ("{\"event\": \"%s\", \"type\": \"%s\", \"connectivity\": %d, \"available\": %s, \"metered\": %s}\n", event,
          G_OBJECT_TYPE_NAME (monitor), (int) g_network_monitor_get_connectivity (monitor),
          g_network_monitor_get_network_available (monitor) ? "true" : "false",
          g_network_monitor_get_network_metered (monitor) ? "true" : "false");
  fflush (stdout);
}

static void
on_changed (GNetworkMonitor *monitor, gboolean available, gpointer user_data)
{
  (void) available, (void) user_data;
  print_state ("changed", monitor);
}

static void
reached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree char *address = user_data;
  g_autoptr (GError) error = NULL;
  gboolean reachable = g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (source), result, &error);
  g_autofree char *message = error != NULL ? g_strescape (error->message, NULL) : NULL;
  g_autofree char *error_json = error != NULL ? g_strdup_printf ("{\"code\": %d, \"message\": \"%s\"}", error->code, message)
                                              : g_strdup ("null");
  printf ("{\"event\": \"reach\", \"address\": \"%s\", \"reachable\": %s, \"error\": %s}\n", address,
          reachable ? "true" : "false", error_json);
  fflush (stdout);
}

static gboolean
on_input (gint fd, GIOCondition condition, gpointer user_data)
{
  static char line[512];
  static size_t length;
  GNetworkMonitor *monitor = user_data;
  ssize_t n = read (fd, line + length, sizeof line - 1 - length);
  (void) condition;
  if (n <= 0)
    {
      g_main_loop_quit (loop);
      return G_SOURCE_REMOVE;
    }
  length += (size_t) n;
  line[length] = '\0';
  char *newline;
  while ((newline = strchr (line, '\n')) != NULL)
    {
      char host[256];
      unsigned port;
      *newline = '\0';
      if (sscanf (line, "reach %255s %u", host, &port) == 2)
        {
          g_autoptr (GSocketConnectable) address = g_network_address_new (host, (guint16) port);
          g_network_monitor_can_reach_async (monitor, address, NULL, reached, g_strdup_printf ("%s:%u", host, port));
        }
      length -= (size_t) (newline + 1 - line);
      memmove (line, newline + 1, length + 1);
    }
  if (length == sizeof line - 1)
    length = 0;
  return G_SOURCE_CONTINUE;
}

int
main (void)
{
  gint64 started = g_get_monotonic_time ();
  GNetworkMonitor *monitor = g_network_monitor_get_default ();
  printf ("{\"event\": \"init\", \"seconds\": %.6f}\n", (double) (g_get_monotonic_time () - started) / G_USEC_PER_SEC);
  print_state ("start", monitor);
  g_signal_connect (monitor, "network-changed", G_CALLBACK (on_changed), NULL);
  loop = g_main_loop_new (NULL, FALSE);
  g_unix_fd_add (0, G_IO_IN | G_IO_HUP, on_input, monitor);
  g_main_loop_run (loop);
  g_main_loop_unref (loop);
  return 0;
}
