"""What the benchmark harness's scripts share: starting and stopping processes by PID, free ports,
CPU and memory read from /proc, the target server, and missing tools reported in one line.

Every process started here gets PR_SET_PDEATHSIG=SIGTERM, so nothing outlives the script that
started it, and is stopped by its own PID.
"""
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
CLK_TCK = os.sysconf("SC_CLK_TCK")
BLACKBOX = os.environ.get("BLACKBOX_BIN", "/usr/bin/prometheus-blackbox-exporter")
BLACKBOX_CONFIG = """modules:
  http_2xx:
    prober: http
    timeout: {timeout}
    http:
      preferred_ip_protocol: ip4
"""
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


class MissingTool(SystemExit):
    """A program the benchmark needs is not installed: one line that names the package."""

    def __init__(self, program, package):
        super().__init__(f"missing tool: {program} is not installed (as root: apt-get install {package})")


def require(program, package):
    """The path of `program`, or a MissingTool naming the Debian package that has it."""
    path = program if os.path.isabs(program) else shutil.which(program)
    if not path or not os.access(path, os.X_OK):
        raise MissingTool(program, package)
    return path


def require_blackbox():
    return require(BLACKBOX, "prometheus-blackbox-exporter")


def _child_setup():
    _libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: dies with the harness
    os.setpgid(0, 0)


def spawn(argv, log_path=None):
    """Starts argv (no shell), its output to log_path."""
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL
    try:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_child_setup)
    except FileNotFoundError:
        raise SystemExit(f"cannot start {argv[0]}: no such file")


def stop(process, grace=5.0):
    """SIGTERM, then SIGKILL after `grace` seconds; by PID."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=2.0):
    """One GET on a fresh connection to 127.0.0.1:port; (status, body)."""
    client = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        client.request("GET", path, headers={"Connection": "close"})
        response = client.getresponse()
        return response.status, response.read()
    finally:
        client.close()


def wait_ready(port, path, process, seconds=15.0):
    """Waits until GET path answers 200; raises if the process exits first or it never does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{os.path.basename(process.args[0])} exited with {process.returncode} before answering {path}")
        try:
            if http_get(port, path, 1.0)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"127.0.0.1:{port}{path} did not answer within {seconds:.0f} s")


def cpu_ticks(pid):
    """utime + stime of the whole process, in clock ticks (keeps the CPU of threads that exited)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_ns(pid):
    """On-CPU nanoseconds summed over the live threads (/proc/PID/task/*/schedstat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def threads(pid):
    return set(os.listdir(f"/proc/{pid}/task"))


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def percentile(values, q):
    """Nearest-rank percentile; None for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    rank = max(1, min(len(values), int(-(-q * len(values) // 100))))
    return values[rank - 1]


class TargetServer:
    """target_server.py (beside this file), started on free ports and switched by its control port."""

    def __init__(self, directory, max_seconds=3600, blackhole_max=None, name="target"):
        port_file = os.path.join(directory, f"{name}.json")
        argv = [sys.executable, os.path.join(HERE, "target_server.py"), "--port-file", port_file, "--max-seconds", str(max_seconds)]
        if blackhole_max is not None:
            argv += ["--blackhole-max", str(blackhole_max)]
        self.process = spawn(argv, os.path.join(directory, f"{name}.log"))
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file):
            if time.monotonic() > deadline or self.process.poll() is not None:
                stop(self.process)
                raise SystemExit(f"the target server did not start; see {os.path.join(directory, name + '.log')}")
            time.sleep(0.02)
        ports = json.load(open(port_file))
        self.port, self.control_port, self.pid = ports["port"], ports["control_port"], self.process.pid

    def url(self, query=""):
        return f"http://{HOST}:{self.port}/api/v1/health{query}"

    def switch(self, mode):
        """Switches the mode; the server's CLOCK_MONOTONIC at the switch."""
        return json.loads(http_get(self.control_port, "/mode/" + mode, 5)[1])["t_switch"]

    def stats(self):
        return json.loads(http_get(self.control_port, "/stats", 5)[1])

    def stop(self):
        stop(self.process)


def start_blackbox(directory, timeout="2s", config=None):
    """prometheus-blackbox-exporter on a free port with the http_2xx module (or the modules of
    `config`, its YAML); (process, port)."""
    binary = require_blackbox()
    text = config or BLACKBOX_CONFIG.format(timeout=timeout)
    config = os.path.join(directory, "blackbox.yml")
    with open(config, "w") as f:
        f.write(text)
    port = free_port()
    process = spawn([binary, "--config.file=" + config, f"--web.listen-address={HOST}:{port}"], os.path.join(directory, "blackbox.log"))
    wait_ready(port, "/-/healthy", process)
    return process, port


def bounded(seconds):
    """Ends the script with one line after `seconds`, whatever it is doing."""
    def expire(*_):
        raise SystemExit(f"{os.path.basename(sys.argv[0])}: over its bound of {seconds:.0f} s")
    signal.signal(signal.SIGALRM, expire)
    signal.alarm(int(seconds))


def main_guard(main):
    """Runs main(); a SystemExit message or an interrupted run is one line on stderr, never a traceback."""
    try:
        return main()
    except KeyboardInterrupt:
        print(f"{os.path.basename(sys.argv[0])}: interrupted", file=sys.stderr)
        return 130
    except SystemExit as stop_:
        if isinstance(stop_.code, str):
            print(f"{os.path.basename(sys.argv[0])}: {stop_.code}", file=sys.stderr)
            return 3 if isinstance(stop_, MissingTool) else 1
        return stop_.code
