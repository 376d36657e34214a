"""Helpers shared by Latchkey's benchmark scenarios (bench.py and the bench_*.py modules):
the core layout, processes' ports and CPU time, minimal HTTP/1.1 clients, the C load
generators (built, then driven through `ready` / `go` / LKBENCH), and the memory tables."""
import asyncio
import glob
import http.client
import os
import select
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY_CORE = "0"
LOAD_CORE = "1"
MIB = 1 << 20


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads, live and exited)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def sleeps(pid):
    """Voluntary context switches of the process's live threads: each is a sleep (in
    epoll_wait, for a proxy) that something had to wake it from."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("voluntary_ctxt_switches:"))
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended between the listing and the read
    return total


def rss_kib(pid, field="VmRSS"):
    """VmRSS (all resident pages, shared-library code included) or RssAnon (heap, stacks)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def http_get(port, path, headers=None, timeout=5.0):
    """A minimal HTTP/1.1 GET returning (status, body)."""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
    for k, v in (headers or {}).items():
        req += f"{k}: {v}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall((req + "\r\n").encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    if b"transfer-encoding: chunked" in head.lower():
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        body = out
    return status, body


def request_many(port, path, count, method="GET", body=None, expect=None, timeout=60.0):
    """`count` requests one after another on one keep-alive connection; each must answer 200
    (with the body `expect`, when given). `body`: bytes, sent with Content-Length, or a list
    of chunks, sent with Transfer-Encoding: chunked (http.client frames each and sends it
    with its own send)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        for _ in range(count):
            conn.request(method, path, body=body)
            response = conn.getresponse()
            answer = response.read()
            if response.status != 200 or (expect is not None and answer != expect):
                sys.exit(f"bench: {method} {path} answered {response.status}: {answer[:200]!r}")
    finally:
        conn.close()


async def read_response(reader, timeout):
    """Reads one Content-Length-framed HTTP/1.1 response from an asyncio stream; returns
    its status."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await asyncio.wait_for(reader.readexactly(length), timeout)
    return int(head.split(b" ", 2)[1])


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def callgrind_control(pid, action):
    """callgrind_control `action` for a process under callgrind: `--zero` sets its counters
    to 0, `--dump` writes them to a new OUT.N file (OUT.N-TT per thread with
    --separate-threads), which is complete when this returns.

    callgrind_control exits 0 when it did not reach the process (vgdb did not list it, as
    on a loaded machine it may not), and the counts read next were a previous dump's: so
    its "OK." is awaited, the command tried again without it, and the dump's file too."""
    out = next(arg.split("=", 1)[1] for arg in open(f"/proc/{pid}/cmdline").read().split("\0")
               if arg.startswith("--callgrind-out-file="))
    # Dumps are numbered from 1 in each process: one that reuses another's output file
    # writes over its dumps, so a dump is a file that is new or newly written.
    before = {path: os.stat(path).st_mtime_ns for path in glob.glob(out + ".*")}
    for _ in range(CALLGRIND_CONTROL_ATTEMPTS):
        done = subprocess.run(["callgrind_control", action, str(pid)], capture_output=True, text=True)
        if done.returncode == 0 and "OK." in done.stdout:
            break
        time.sleep(1)
    else:
        sys.exit(f"bench: callgrind_control {action} did not reach PID {pid}: {(done.stdout + done.stderr).strip()}")
    if action != "--dump":
        return
    deadline = time.monotonic() + 120
    while True:
        new = [path for path in glob.glob(out + ".*") if before.get(path) != os.stat(path).st_mtime_ns]
        if new and all(dump_complete(path) for path in new):
            return
        if time.monotonic() > deadline:
            sys.exit(f"bench: callgrind's dump of PID {pid} did not appear beside {out}")
        time.sleep(0.1)


# callgrind_control's tries to reach a process under callgrind, a second apart.
CALLGRIND_CONTROL_ATTEMPTS = 10


def dump_complete(path):
    """Whether callgrind has written all of the dump at `path`: its last line is `totals:`."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - 200))
        return b"\ntotals:" in f.read()


# ---- the C helpers (tunnel_load.c, ws_load.c, ws_echo.c) ------------------------------------
def build_c(work, name, flags=(), libs=("-lcrypto",)):
    """Compiles Benchmarks/NAME.c with gcc -O2 into the run's directory; returns the binary."""
    binary = os.path.join(work, name)
    done = subprocess.run(["gcc", "-O2", *flags, "-o", binary, os.path.join(HERE, name + ".c"), *libs],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench: cannot build {name}.c (gcc and libssl-dev):\n" + done.stderr)
    return binary


# A load generator (tunnel_load, ws_load) opens its connections, prints `ready`, waits for
# `go` on stdin, runs its measured span, prints `LKBENCH key=N ...` and keeps every
# connection open until its stdin ends.
def start_load(argv):
    """The load generator `argv` on the load core, its stdin, stdout and stderr piped."""
    return subprocess.Popen(["taskset", "-c", LOAD_CORE] + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)


def read_line(p, timeout):
    """p's next line of output, stripped; "" if none comes within `timeout` seconds."""
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    return p.stdout.readline().strip() if ready else ""


def await_ready(p, timeout, what):
    """Waits for the load generator's `ready`; else ends the bench with what it said."""
    first = read_line(p, timeout)
    if first != "ready":
        try:
            p.wait(timeout=10)  # it exits after a failed setup, having said why on stderr
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        sys.exit(f"bench: {what}: {first or 'no answer'}: {p.stderr.read().strip()}")


def go(p, timeout):
    """Starts a ready load generator's measured span; returns the line it prints at its end
    ("" if none comes within `timeout` seconds)."""
    p.stdin.write("go\n")
    p.stdin.flush()
    return read_line(p, timeout)


def finish(p):
    """Closes the load generator's stdin (so its connections) and waits for it; returns its stderr."""
    p.stdin.close()
    p.wait(timeout=30)
    return p.stderr.read().strip()


def lkbench_fields(line):
    """The fields of an `LKBENCH key=N ...` line, as integers."""
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def drive_load(argv, on_ready, on_done, setup_timeout=120, run_timeout=None):
    """Runs a load generator on the load core: its connections are set up, then
    `on_ready(pid)`, then the measured span, then `on_done(pid)` while every connection is
    still open. Returns the LKBENCH fields, and its stderr as "stderr"."""
    what = os.path.basename(argv[0])
    p = start_load(argv)
    try:
        await_ready(p, setup_timeout, what)
        on_ready(p.pid)
        line = go(p, run_timeout or setup_timeout)
        if not line.startswith("LKBENCH "):
            p.kill()
            sys.exit(f"bench: {what} printed {line!r}: {p.stderr.read().strip()}")
        on_done(p.pid)
        err = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    r = lkbench_fields(line)
    r["stderr"] = err
    if err:
        log(f"bench: {what}: " + err.splitlines()[0])
    return r


# ---- memory tables ------------------------------------------------------------------------------
def idle_table(heading, served, rows, count):
    """The table of connections held idle, a row per target: `rows` maps a target to its
    figures, the connections counted as served (`served`, the second column's title) and
    the KiB it took per connection."""
    out = [heading, "",
           f"| target | {served} | RSS before MiB | RSS with them MiB | KiB per connection | RSS after closing MiB | "
           "anonymous before → with MiB |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n, (r, ok, per) in rows.items():
        out.append(f"| {n} | {ok:,}/{count:,} | {r['before_kib'] / 1024:.1f} | {r['with_kib'] / 1024:.1f} | "
                   f"{per:.1f} | {r['after_kib'] / 1024:.1f} | "
                   f"{r['anon_before_kib'] / 1024:.1f} → {r['anon_with_kib'] / 1024:.1f} |")
    return out


def stream_table(title, rows):
    """The table of a 1 GiB stream (RSS sampled every 100 ms), a row per target."""
    out = [f"### {title} (RSS sampled every 100 ms)", "",
           "| target | complete | MB/s | RSS before MiB | RSS peak MiB | growth MiB |",
           "| --- | --- | ---: | ---: | ---: | ---: |"]
    for n, r in rows.items():
        out.append(f"| {n} | {'yes' if r['complete'] else 'NO'} | {r['mbps']:,.0f} | {r['before_kib'] / 1024:.1f} | "
                   f"{r['peak_kib'] / 1024:.1f} | {r['growth_kib'] / 1024:.1f} |")
    out.append("")
    return out
