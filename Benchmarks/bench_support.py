"""Helpers shared by Latchkey's benchmark scenarios (bench.py, bench_oauth.py): the core
layout, processes' ports and CPU time, and minimal HTTP/1.1 clients."""
import asyncio
import http.client
import os
import socket
import sys
import time

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


def get_many(port, path, count, timeout=60.0):
    """`count` GETs one after another on one keep-alive connection; each must answer 200."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        for _ in range(count):
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                sys.exit(f"bench: GET {path} answered {response.status}")
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
