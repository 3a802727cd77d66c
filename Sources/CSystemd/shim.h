#include <sys/uio.h>
#include <systemd/sd-bus.h>
