#!/usr/bin/env python3
"""Latchkey's benchmark: Latchkey against direct access, nginx and haproxy, in one run.

Run it through Benchmarks/run.sh, which installs the tools and builds the release binary.

Layout on a 2-core machine: every proxy is pinned to core 0 (one loop / one worker /
one thread each); the upstream (nginx, one worker), wrk, curl and this script run on
core 1. All traffic stays on 127.0.0.1.

Scenarios
  small   GET of a 100-byte JSON, keep-alive, 64 connections (wrk -t1 -c64): requests/s,
          p50/p99 latency, CPU time per request of the proxy process (utime+stime from
          /proc/PID/stat before and after; the stable figure on a shared machine), and the
          sleeps per request of the proxy and the upstream (voluntary context switches).
  large   GET of a 1 MiB file, 16 connections: MB/s and CPU per request.
          Both run in interleaved rounds (the target order rotates every round); the
          tables give medians.
  idle    10,000 keep-alive connections, each having made one request, held open:
          the proxy's VmRSS before and with them.
  stream  one 1 GiB response (curl -o /dev/null), VmRSS sampled every 100 ms: growth.
          Once at full speed and once with the client limited to 200 MB/s, so that the
          proxy must hold back a faster upstream.
  auth    Latchkey only: the small GET through a route injecting a static credential
          (`/static`) and through one injecting an OAuth identity's valid, long-lived token
          (`/oauth`), in each round as 5 pairs of short runs (--duration split among them,
          the routes alternating): requests/s, latency, CPU per request, and the median
          of the pairs' ratios oauth/static (the target: within 5%). With --callgrind,
          also both routes' instructions per request under valgrind's callgrind, the
          figure that holds on a shared machine where CPU time and requests/s do not,
          and a third route's, `/recipe`, injecting a session recipe's capture (the
          target: no more than the OAuth route).
  storm   Latchkey only: bursts of 1,000 requests (--storm-requests), each on its own
          connection opened beforehand, sent at once to an identity route whose token is
          valid (the baseline), has just expired, or does not exist yet (the identity's
          first use). Counts the token endpoint's requests per burst (single-flight: exactly
          1) and reports p50/p99 latency and what the token request adds to it.
          Both OAuth scenarios get their tokens from Benchmarks/token_endpoint.py (client
          credentials, on core 1); bench_oauth.py says how the identities are set up.
  stucklog Latchkey only: the small GET through two more Latchkeys with the access log on,
          one logging to a file, one to a pipe nothing reads (bench_log.py): requests/s
          and CPU per request of each, and the lines the stuck one dropped and counted.
  tls     Latchkey's TLS listener against nginx `ssl` on the same ECDSA P-256 certificate
          (bench_tls.py): new TLS connections per second (wrk, `Connection: close`, a full
          handshake per request) and small GETs on kept-alive TLS connections, each with
          the proxy's CPU µs per connection or request.
  forward small GETs through an intercepted CONNECT tunnel (bench_forward.py): mitmproxy
          (mitmdump with Benchmarks/mitm_inject.py attaching the bearer token) against
          Latchkey's forward listener, and the same GET through a reverse route of that
          Latchkey as the baseline; each client opens its tunnels first (CONNECT,
          Proxy-Authorization, TLS trusting that proxy's CA), then sends kept-alive GETs
          on them (Benchmarks/tunnel_load.c, --forward-connections of them, 32 by default):
          requests/s, p50/p99, the proxy's CPU µs per request; then each GET on a tunnel
          of its own (CONNECT, a full handshake, the GET, close; 16 connections), as a
          script running curl per call does: tunnels/s, CPU µs per tunnel. With
          --callgrind, also Latchkey's instructions per request through a kept-alive
          tunnel and through the reverse route.
  websocket WebSocket upgrades through a reverse route of Latchkey and through nginx as a
          WebSocket reverse proxy (`proxy_set_header Upgrade/Connection/Authorization`; once
          with its default buffers, once with `proxy_buffer_size 16k`), each attaching the
          token to the handshake (bench_websocket.py); upstream and load are small C programs
          (Benchmarks/ws_echo.c, Benchmarks/ws_load.c, gcc at run time) on core 1, and
          `direct` is the load talking to the upstream itself. Echo of 32-byte messages,
          sequential round trips on 1 and on --ws-connections N (32) connections: p50/p99 and
          the proxy's CPU µs per round trip, the N-connection run also with --ws-idle-connections
          idle upgraded connections open beside; 64 KiB messages, 4 connections × 4 in flight:
          MB/s and CPU per message and per MB. Before those, per proxy: --ws-idle-connections
          (1,000) upgraded connections held after one message each (VmRSS per connection), and
          1 GiB from the upstream read at full speed and at --ws-read-rate (50 MB/s): VmRSS
          growth. With --callgrind, Latchkey's instructions per round trip (32 B, 64 KiB, and
          32 B with 1,000 idle upgraded connections open).
  upload  POST bodies of 64 KiB (64 connections) and 1 MiB (16 connections), each sent with
          Content-Length and sent chunked (16 KiB chunks), by wrk through Latchkey, nginx,
          haproxy and nginx-buffered (nginx's default request buffering; the `nginx` target
          streams bodies, `proxy_request_buffering off`, as Latchkey and haproxy do) to the
          upstream's /upload, which reads the whole body before it answers with its length
          (bench_upload.py): requests/s, MB/s uploaded, p50/p99, the proxy's CPU µs per request
          and per MB. With --callgrind, Latchkey's instructions per upload of each kind and per
          1 MiB download (the `large` scenario's GET).
  routes  Latchkey only: configurations of --route-counts N routes (1, 100, 1,000, 10,000),
          each with a credential file of its own, and N lazy identities (bench_routes.py):
          `latchkey check` time, start-up time until /.latchkey/health answers, VmRSS after
          start (memory per route and per identity), small GETs to the last route
          (requests/s, CPU µs per request) and, with --callgrind, instructions per request.
"""
import argparse
import asyncio
import datetime
import os
import platform
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench_forward import ForwardScenarios
from bench_log import LogScenarios
from bench_oauth import OAuthScenarios
from bench_peers import PeerInstructionCounts
from bench_routes import RoutesScenarios
from bench_tls import TLSScenarios
from bench_upload import FRAMING_LABEL, UPLOADS, UploadScenarios
from bench_websocket import WebSocketScenarios
from bench_support import (LOAD_CORE, MIB, PROXY_CORE, cpu_seconds, free_port, http_get, idle_table, log,
                           read_response, rss_kib, sleeps, stream_table, wait_port)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SCENARIOS = ("small", "large", "idle", "stream", "auth", "storm", "stucklog", "tls", "forward", "websocket", "upload",
             "routes")

WRK_REPORT = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "LKBENCH requests=%d bytes=%d duration_us=%d p50_us=%d p99_us=%d " ..
    "connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.bytes, summary.duration,
    latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


class Bench(OAuthScenarios, LogScenarios, TLSScenarios, ForwardScenarios, WebSocketScenarios, UploadScenarios,
            RoutesScenarios, PeerInstructionCounts):
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="latchkey-bench.")
        os.chmod(self.work, 0o755)  # nginx workers read the files
        self.token = "bench-token-" + secrets.token_hex(12)
        self.token_file = self.secret_file("token", self.token)
        self.procs = []
        self.targets = {}  # name -> {"port", "pid"}
        self.upstream_pid = None
        self.results = {}  # (scenario, target) -> list of dict per round
        self.single = {}  # (scenario, target) -> dict
        self.notes = []

    # ---- processes ------------------------------------------------------------------------
    def spawn(self, name, argv, core):
        out = open(os.path.join(self.work, f"{name}.log"), "wb")
        p = subprocess.Popen(["taskset", "-c", core] + argv, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs.append((name, p))
        return p

    def stop_all(self):
        for _, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for _, p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def cleanup(self):
        self.stop_all()
        if self.args.keep_work:
            log(f"work directory kept: {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def secret_file(self, name, value):
        """A file holding a secret: 0600 in the 0700 directory `secrets` of the work dir."""
        d = os.path.join(self.work, "secrets")
        os.makedirs(d, mode=0o700, exist_ok=True)
        path = os.path.join(d, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, value.encode())
        os.close(fd)
        return path

    # ---- files the upstream serves -------------------------------------------------------
    def make_files(self):
        www = os.path.join(self.work, "www")
        os.makedirs(www)
        prefix = b'{"id":1,"name":"latchkey-bench","tags":["a","b","c"],"pad":"'
        small = prefix + b"x" * (100 - len(prefix) - 3) + b'"}\n'
        assert len(small) == 100
        with open(os.path.join(www, "small.json"), "wb") as f:
            f.write(small)
        with open(os.path.join(www, "1m.bin"), "wb") as f:
            f.write(os.urandom(MIB))
        with open(os.path.join(www, "1g.bin"), "wb") as f:
            f.truncate(1 << 30)  # sparse: no disk, served from the page cache of zeros
        for name in os.listdir(www):
            os.chmod(os.path.join(www, name), 0o644)
        os.chmod(www, 0o755)
        self.small_body = small
        return www

    # ---- servers ------------------------------------------------------------------------------
    def nginx_conf(self, name, body):
        d = os.path.join(self.work, name)
        os.makedirs(d)
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 30000;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 20000; multi_accept on; }}
http {{
    {f"access_log {d}/access.log;" if self.args.access_log else "access_log off;"}
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
{body}
}}
""")
        return ["nginx", "-p", d, "-e", f"{d}/error.log", "-c", conf]

    def start_upstream(self, www):
        port = free_port()
        argv = self.nginx_conf("upstream", f"""
    default_type application/json;{self.upload_upstream(port)}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        root {www};
        location = /auth {{
            if ($http_authorization = "Bearer {self.token}") {{ return 200 "authorized\\n"; }}
            return 401 "missing credential\\n";
        }}{self.upload_locations()}
        location / {{ }}
    }}""")
        p = self.spawn("upstream", argv, LOAD_CORE)
        if not wait_port(port, p):
            sys.exit("bench: the upstream nginx did not start: " + self.read_log("upstream"))
        self.upstream_port = port
        self.upstream_pid = p.pid
        self.targets["direct"] = {"port": port, "pid": None}

    def nginx_proxy(self, port, tls="", request_buffering=False):
        """nginx as the proxy: the credential set, kept-alive connections to the upstream;
        `tls`: `ssl` directives, which make the port speak TLS. Request bodies (the upload
        scenario's) stream to the upstream as they arrive, as through Latchkey and haproxy;
        `request_buffering`: nginx's default instead, the whole body read first (to a
        temporary file past client_body_buffer_size, 16 KiB). The upstream gets the request
        Latchkey's route sends, field for field: nginx adds the X-Forwarded-* fields
        Latchkey adds on every reverse route only when told to."""
        bodies = "proxy_request_buffering off;"
        if request_buffering:
            # Every body past the buffer is logged at `warn` ("buffered to a temporary
            # file"): a line per request, which nginx's default level, `error`, leaves out.
            bodies = "proxy_request_buffering on;\n            error_log stderr error;"
        return f"""
    upstream backend {{
        server 127.0.0.1:{self.upstream_port};
        keepalive 64;
        keepalive_requests 100000000;
    }}
    server {{
        listen 127.0.0.1:{port}{" ssl" if tls else ""} backlog=4096;{tls}
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_set_header Authorization "Bearer {self.token}";
            client_max_body_size 2m;
            {bodies}
        }}
    }}"""

    def start_nginx(self):
        port = free_port()
        argv = self.nginx_conf("nginx", self.nginx_proxy(port))
        p = self.spawn("nginx", argv, PROXY_CORE)
        if not wait_port(port, p):
            sys.exit("bench: nginx did not start: " + self.read_log("nginx"))
        self.targets["nginx"] = {"port": port, "pid": p.pid}

    def start_haproxy(self):
        if not shutil.which("haproxy"):
            self.notes.append("haproxy: not installed, skipped")
            return
        port = free_port()
        conf = self.haproxy_conf("haproxy", port)
        p = self.spawn("haproxy", ["haproxy", "-db", "-f", conf], PROXY_CORE)
        if not wait_port(port, p):
            self.notes.append("haproxy: did not start, skipped: " + self.read_log("haproxy")[-300:])
            log("bench: " + self.notes[-1])
            return
        self.targets["haproxy"] = {"port": port, "pid": p.pid}

    def haproxy_conf(self, name, port):
        """haproxy as the proxy, one thread, listening on `port`: the credential and the
        X-Forwarded-* fields set as Latchkey sets them, connections to the upstream reused;
        returns the file NAME.cfg."""
        conf = os.path.join(self.work, f"{name}.cfg")
        with open(conf, "w") as f:
            f.write(f"""
global
    nbthread 1
    maxconn {self.args.idle_connections + 200}
    ulimit-n {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}
    no strict-limits
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 300s
    timeout server 300s
    timeout http-keep-alive 300s
frontend fe
    bind 127.0.0.1:{port}
    option forwardfor
    http-request set-header X-Forwarded-Proto http
    http-request set-header X-Forwarded-Host %[req.hdr(host)]
    http-request set-header Authorization "Bearer {self.token}"
    default_backend be
backend be
    server up 127.0.0.1:{self.upstream_port}
""")
        return conf

    def latchkey_yaml(self, port, identities="", oauth_routes=""):
        """The quick-start flags' setup (one route, bearer token from a file) as a config
        file, which can also turn the access log off like nginx's and haproxy's, and lift
        the per-loop connection cap (10,000 by default) above the idle scenario's count, and
        keep as many upstream connections alive as nginx's `keepalive 64` (the default, 32,
        is below the 64 connections' requests in flight: the pool would open and close
        some under load, as nginx with `keepalive 32` would);
        with the identities and routes of the auth and storm scenarios when given."""
        return f"""server:
  loops: 1
listeners:
  - name: main
    listen: 127.0.0.1:{port}
credentials:
  bench:
    file: {self.token_file}
{identities}routes:
  - name: bench
    path: /
    upstream: http://127.0.0.1:{self.upstream_port}
    inject:
      - header: Authorization
        value: "Bearer {{token}}"
        credential: bench
{oauth_routes}limits:
  max_connections: {max(10000, self.args.idle_connections) + 1000}
  upstream_idle_connections: 64
logging:
  access_log: {"true" if self.args.access_log else "false"}
"""

    def start_latchkey(self):
        port = free_port()
        # The auth and storm scenarios add their identities and routes (bench_oauth.py).
        self.latchkey_config = self.latchkey_yaml(port, *(self.oauth_config() if self.oauth_wanted() else ()))
        conf = os.path.join(self.work, "latchkey.yaml")
        with open(conf, "w") as f:
            f.write(self.latchkey_config)
        argv = [self.args.latchkey, "serve", "--config", conf, "--loops", "1"] + self.args.latchkey_arg
        self.latchkey_argv = argv
        p = self.spawn("latchkey", argv, PROXY_CORE)
        if not wait_port(port, p):
            sys.exit("bench: latchkey did not start: " + self.read_log("latchkey")[-2000:])
        self.targets["latchkey"] = {"port": port, "pid": p.pid}

    def read_log(self, name):
        try:
            with open(os.path.join(self.work, f"{name}.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    # ---- sanity: every target answers, and every proxy injects the credential ----------------
    def verify(self):
        for name, t in list(self.targets.items()):
            status, body = http_get(t["port"], "/small.json")
            if status != 200 or body != self.small_body:
                sys.exit(f"bench: {name} answered {status} with {len(body)} bytes for /small.json")
            status, body = http_get(t["port"], "/1m.bin")
            if status != 200 or len(body) != MIB:
                sys.exit(f"bench: {name} answered {status} with {len(body)} bytes for /1m.bin")
            status, _ = http_get(t["port"], "/auth")
            want = 401 if name == "direct" else 200
            if status != want:
                sys.exit(f"bench: {name}: /auth answered {status}, expected {want} "
                         "(is the credential injected?)")
        log("bench: every target serves the files; every proxy injects the credential")
        if self.oauth_wanted():
            self.verify_oauth()

    # ---- wrk scenarios --------------------------------------------------------------------
    def wrk_script(self, name, lua=""):
        """The wrk script `name` in the run's directory: `lua`, which shapes the requests
        (GETs of the URL when empty), then the report every run prints."""
        path = os.path.join(self.work, name)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(lua + WRK_REPORT)
        return path

    def wrk(self, name, path, connections, duration, extra=(), script=None):
        """One wrk run against a target (over https when the target says so); `extra`:
        more wrk arguments, such as a header; `script`: a script from wrk_script."""
        t = self.targets[name]
        script = script or self.wrk_script("report.lua")
        url = f"{t.get('scheme', 'http')}://127.0.0.1:{t['port']}{path}"
        pids = [p for p in (t["pid"], self.upstream_pid) if p]
        before = {p: cpu_seconds(p) for p in pids}
        slept = {p: sleeps(p) for p in pids}
        out = subprocess.run(
            ["taskset", "-c", LOAD_CORE, "wrk", "-t1", f"-c{connections}", f"-d{duration}s",
             "--latency", "-s", script, *extra, url],
            capture_output=True, text=True, timeout=duration + 60)
        after = {p: cpu_seconds(p) for p in pids}
        slept = {p: sleeps(p) - slept[p] for p in pids}
        line = next((l for l in out.stdout.splitlines() if l.startswith("LKBENCH ")), None)
        if line is None:
            sys.exit(f"bench: wrk against {name} printed no report:\n{out.stdout}\n{out.stderr}")
        r = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
        secs = r["duration_us"] / 1e6
        n = max(r["requests"], 1)
        res = {
            "rps": r["requests"] / secs,
            "mbps": r["bytes"] / secs / 1e6,
            "p50_ms": r["p50_us"] / 1000,
            "p99_ms": r["p99_us"] / 1000,
            "errors": r["connect"] + r["read"] + r["write"] + r["status"] + r["timeout"],
            "proxy_cpu_us": (after[t["pid"]] - before[t["pid"]]) / n * 1e6 if t["pid"] else None,
            "proxy_cpu_util": (after[t["pid"]] - before[t["pid"]]) / secs if t["pid"] else None,
            "upstream_cpu_us": (after[self.upstream_pid] - before[self.upstream_pid]) / n * 1e6,
            "proxy_sleeps": slept[t["pid"]] / n if t["pid"] else None,
            "upstream_sleeps": slept[self.upstream_pid] / n,
        }
        with open(os.path.join(self.work, "wrk.log"), "a") as f:
            f.write(f"== {name} {path} c={connections}\n{out.stdout}\n")
        return res

    def run_rounds(self):
        a = self.args
        names = list(self.targets)
        # Each group lists the wrk runs compared with one another, in its order for a round;
        # a run is (scenario, label in the results, target, path, connections, seconds).
        groups = [lambda rnd, runs=[(scen, name, name, path, conns, a.duration) for name in names]:
                  runs[rnd % len(runs):] + runs[:rnd % len(runs)]  # the order rotates every round
                  for scen, path, conns in (("small", "/small.json", 64), ("large", "/1m.bin", 16))
                  if scen in a.scenarios]
        if "auth" in a.scenarios and "latchkey" in self.targets:
            groups.append(self.auth_round)
        if not groups:
            return
        log(f"bench: warm-up ({a.warmup}s per target and route)")
        for target, path in dict.fromkeys((target, path if scen == "auth" else "/small.json")
                                          for group in groups for scen, _, target, path, _, _ in group(0)):
            self.wrk(target, path, 64, a.warmup)
        for rnd in range(a.rounds):
            for group in groups:
                for scen, label, target, path, conns, seconds in group(rnd):
                    r = self.wrk(target, path, conns, seconds)
                    self.results.setdefault((scen, label), []).append(r)
                    cpu = f"{r['proxy_cpu_us']:.1f} µs/req" if r["proxy_cpu_us"] is not None else "-"
                    log(f"bench: round {rnd + 1}/{a.rounds} {scen:5} {label:8} "
                        f"{r['rps']:9.0f} req/s {r['mbps']:8.1f} MB/s p99 {r['p99_ms']:7.2f} ms "
                        f"cpu {cpu} errors {r['errors']}")

    # ---- idle connections ----------------------------------------------------------------------
    def idle(self, name, count, hold):
        t = self.targets[name]
        pid = t["pid"] or self.upstream_pid
        port = t["port"]
        request = f"GET /small.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        time.sleep(0.5)
        before = rss_kib(pid)
        anon_before = rss_kib(pid, "RssAnon")

        async def one(sem, conns):
            async with sem:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port), 10)
                conns.append(writer)
                writer.write(request)
                return await read_response(reader, 10) == 200

        async def main():
            conns = []
            sem = asyncio.Semaphore(128)
            tasks = [one(sem, conns) for _ in range(count)]
            outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 180)
            ok = sum(1 for o in outcomes if o is True)
            await asyncio.sleep(hold)
            # every connection still open? (a closed one reads EOF at once)
            peak = rss_kib(pid), rss_kib(pid, "RssAnon")
            for w in conns:
                w.close()
            return ok, peak, outcomes

        ok, (peak, anon_peak), outcomes = asyncio.run(main())
        errors = [o for o in outcomes if o is not True]
        sample = repr(errors[0])[:120] if errors else ""
        time.sleep(1.0)
        after_close = rss_kib(pid)
        res = {"before_kib": before, "with_kib": peak, "after_kib": after_close, "ok": ok,
               "anon_before_kib": anon_before, "anon_with_kib": anon_peak,
               "failed": len(errors), "error_sample": sample}
        log(f"bench: idle    {name:8} {ok}/{count} connections, RSS {before / 1024:.1f} -> "
            f"{peak / 1024:.1f} MiB (after closing {after_close / 1024:.1f} MiB) {sample}")
        return res

    # ---- 1 GiB stream --------------------------------------------------------------------------
    def stream(self, name, rate=None):
        t = self.targets[name]
        pid = t["pid"] or self.upstream_pid
        url = f"http://127.0.0.1:{t['port']}/1g.bin"
        time.sleep(0.5)
        before = rss_kib(pid)
        samples = []
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                try:
                    samples.append(rss_kib(pid))
                except OSError:
                    break
                stop.wait(0.1)

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        argv = ["taskset", "-c", LOAD_CORE, "curl", "-sS", "-o", "/dev/null", "--max-time", "120",
                "-w", "%{http_code} %{size_download} %{speed_download}"]
        if rate:
            argv += ["--limit-rate", rate]
        out = subprocess.run(argv + [url], capture_output=True, text=True, timeout=150)
        stop.set()
        th.join()
        parts = out.stdout.split()
        code, size, speed = (parts + ["0", "0", "0"])[:3]
        peak = max(samples + [before])
        res = {"before_kib": before, "peak_kib": peak, "growth_kib": peak - before,
               "mbps": float(speed) / 1e6, "complete": code == "200" and int(size) == 1 << 30,
               "samples": len(samples)}
        label = f"stream{'@' + rate if rate else ''}"
        log(f"bench: {label:13} {name:8} {'complete' if res['complete'] else 'INCOMPLETE ' + out.stdout}"
            f" {res['mbps']:.0f} MB/s, RSS {before / 1024:.1f} -> peak {peak / 1024:.1f} MiB")
        return res

    # ---- profile --------------------------------------------------------------------------------
    def profile(self):
        if "latchkey" not in self.targets or not shutil.which("perf"):
            return None
        pid = self.targets["latchkey"]["pid"]
        data = os.path.join(self.work, "perf.data")
        rec = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "2000", "-g", "-p", str(pid),
                                "-o", data, "--", "sleep", str(self.args.duration)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wrk("latchkey", "/small.json", 64, self.args.duration)
        rec.wait(timeout=60)
        reports = []
        for sort in ("dso", "dso,sym"):
            out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                                  "--sort", sort, "--percent-limit", "1", "-g", "none"],
                                 capture_output=True, text=True, timeout=120)
            lines = [l for l in out.stdout.splitlines() if l.strip() and not l.startswith("#")]
            reports.append("\n".join(lines[:40]))
        return reports

    # ---- report --------------------------------------------------------------------------------
    def med(self, scen, name, key):
        vals = [r[key] for r in self.results.get((scen, name), []) if r[key] is not None]
        return statistics.median(vals) if vals else None

    def paired(self, scen, key):
        """Latchkey ÷ nginx round by round: the two runs of a round are minutes apart at
        most, so the machine's slower drifts, which move every target's figures by 10% and
        more between rounds, cancel. The median ratio, the lowest, the highest and how many
        rounds put Latchkey below nginx, of how many; None without both."""
        rounds = zip(self.results.get((scen, "latchkey"), []), self.results.get((scen, "nginx"), []))
        ratios = [lk[key] / ng[key] for lk, ng in rounds if lk[key] and ng[key]]
        if not ratios:
            return None
        return statistics.median(ratios), min(ratios), max(ratios), sum(r < 1 for r in ratios), len(ratios)

    def report(self):
        names = list(self.targets)
        fmt = lambda v, f: "—" if v is None else format(v, f)
        out = []
        if ("small", names[0]) in self.results:
            out += ["### Small GETs: 100-byte JSON, keep-alive, 64 connections",
                    "",
                    "| target | requests/s | p50 ms | p99 ms | proxy CPU µs/request | proxy core busy | proxy sleeps/request "
                    "| upstream CPU µs/request | upstream sleeps/request | errors |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for n in names:
                errs = sum(r["errors"] for r in self.results[("small", n)])
                out.append(f"| {n} | {fmt(self.med('small', n, 'rps'), ',.0f')} | "
                           f"{fmt(self.med('small', n, 'p50_ms'), '.2f')} | {fmt(self.med('small', n, 'p99_ms'), '.2f')} | "
                           f"{fmt(self.med('small', n, 'proxy_cpu_us'), '.1f')} | "
                           f"{fmt(self.med('small', n, 'proxy_cpu_util'), '.0%')} | "
                           f"{fmt(self.med('small', n, 'proxy_sleeps'), '.3f')} | "
                           f"{fmt(self.med('small', n, 'upstream_cpu_us'), '.1f')} | "
                           f"{fmt(self.med('small', n, 'upstream_sleeps'), '.3f')} | {errs} |")
            out.append("")
        if ("large", names[0]) in self.results:
            out += ["### 1 MiB responses, 16 connections",
                    "",
                    "| target | MB/s | requests/s | p99 ms | proxy CPU µs/request | proxy core busy | errors |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for n in names:
                errs = sum(r["errors"] for r in self.results[("large", n)])
                out.append(f"| {n} | {fmt(self.med('large', n, 'mbps'), ',.0f')} | "
                           f"{fmt(self.med('large', n, 'rps'), ',.0f')} | {fmt(self.med('large', n, 'p99_ms'), '.2f')} | "
                           f"{fmt(self.med('large', n, 'proxy_cpu_us'), '.1f')} | "
                           f"{fmt(self.med('large', n, 'proxy_cpu_util'), '.0%')} | {errs} |")
            out.append("")
        idle = {n: self.single[("idle", n)] for n in names if ("idle", n) in self.single}
        if idle:
            c = self.args.idle_connections
            out += idle_table(f"### {c:,} idle keep-alive connections (RSS of the proxy; of the upstream for direct)",
                              "connections served and held",
                              {n: (r, r["ok"], (r["with_kib"] - r["before_kib"]) / max(r["ok"], 1))
                               for n, r in idle.items()}, c)
            out += ["", "VmRSS counts the resident pages of shared libraries too (for Latchkey, most of its "
                    "baseline: the Swift runtime and Foundation); RssAnon is heap and stacks."]
            out.append("")
        for key, title in (("stream", "1 GiB response, client at full speed"),
                           ("stream_limited", f"1 GiB response, client limited to {self.args.limit_rate}B/s")):
            rows = {n: self.single[(key, n)] for n in names if (key, n) in self.single}
            if rows:
                out += stream_table(title, rows)
        out += self.oauth_tables()
        out += self.log_tables()
        out += self.tls_tables()
        out += self.forward_tables()
        out += self.websocket_tables()
        out += self.upload_tables()
        out += self.routes_tables()
        out += self.peer_tables()
        return "\n".join(out)

    def targets_table(self):
        if "latchkey" not in self.targets:
            return "Latchkey was not measured in this run, so the targets are not evaluated.\n"
        rows = []

        def cmp(label, lk, ref, ok, how):
            if lk is None or ref is None:
                rows.append(f"| {label} | not measured | | |")
            else:
                rows.append(f"| {label} | {how(lk, ref)} | {'met' if ok(lk, ref) else '**not met**'} |")

        have_nginx = "nginx" in self.targets
        if ("small", "latchkey") in self.results and have_nginx:
            m = lambda k, s="small": (self.med(s, "latchkey", k), self.med(s, "nginx", k))

            def by_round(key, fmt, unit, below):
                """The ratio round by round (`paired`); `below`: lower is better."""
                paired = self.paired("small", key)
                if not paired:
                    return ""
                median, low, high, lower, rounds = paired
                return (f"; round by round {median:{fmt}}{unit} ({low:{fmt}}–{high:{fmt}}), "
                        + (f"lower in {lower} of {rounds}" if below else f"higher in {rounds - lower} of {rounds}"))
            cmp("small GETs: CPU/request ≤ nginx", *m("proxy_cpu_us"), lambda a, b: a <= b,
                lambda a, b: f"{a:.1f} vs {b:.1f} µs ({a / b:.2f}×{by_round('proxy_cpu_us', '.2f', '×', True)})")
            cmp("small GETs: requests/s ≥ nginx", *m("rps"), lambda a, b: a >= b,
                lambda a, b: f"{a:,.0f} vs {b:,.0f} ({a / b:.0%}{by_round('rps', '.0%', '', False)})")
            cmp("small GETs: p99 ≤ nginx", *m("p99_ms"), lambda a, b: a <= b,
                lambda a, b: f"{a:.2f} vs {b:.2f} ms ({a / b:.2f}×{by_round('p99_ms', '.2f', '×', True)})")
        if ("large", "latchkey") in self.results and have_nginx:
            lk, ng = self.med("large", "latchkey", "mbps"), self.med("large", "nginx", "mbps")
            cmp("1 MiB: throughput ≥ nginx", lk, ng, lambda a, b: a >= b,
                lambda a, b: f"{a:,.0f} vs {b:,.0f} MB/s ({a / b:.0%})")
        for key, size, label, _, framing in UPLOADS:
            if size == 64 * 1024 and (key, "latchkey") in self.results and (key, "nginx") in self.results:
                cmp(f"{label} POST, {FRAMING_LABEL[framing].split(',')[0]}: CPU/request ≤ nginx",
                    self.med(key, "latchkey", "proxy_cpu_us"), self.med(key, "nginx", "proxy_cpu_us"),
                    lambda a, b: a <= b, lambda a, b: f"{a:.1f} vs {b:.1f} µs ({a / b:.2f}×)")
        if ("idle", "latchkey") in self.single:
            r = self.single[("idle", "latchkey")]
            n = self.args.idle_connections
            rows.append(f"| {n:,} idle connections: RSS < 64 MiB | {r['with_kib'] / 1024:.1f} MiB with "
                        f"{r['ok']:,}/{n:,} held | {'met' if r['with_kib'] < 64 * 1024 and r['ok'] == n else '**not met**'} |")
            label = f"{n:,} idle connections: KiB per connection ≤ nginx"
            if set(self.args.scenarios) - {"idle", "stream"}:
                # The idle scenario runs last, on the processes that served the others: the
                # heap Latchkey kept from them holds the connections without growing.
                rows.append(f"| {label} | not evaluated: run `--scenarios idle` alone, the other scenarios "
                            f"leave Latchkey's heap with room for the connections | |")
            elif ("idle", "nginx") in self.single:
                per_connection = lambda r: (r["with_kib"] - r["before_kib"]) / max(r["ok"], 1)
                cmp(label, per_connection(r), per_connection(self.single[("idle", "nginx")]), lambda a, b: a <= b,
                    lambda a, b: f"{a:.2f} vs {b:.2f} KiB" + (f" ({a / b:.2f}×)" if b else ""))
        rows += self.routes_target_rows()
        for key in ("stream", "stream_limited"):
            if (key, "latchkey") in self.single:
                r = self.single[(key, "latchkey")]
                label = "1 GiB stream: RSS growth < 16 MiB" + (
                    f" (client at {self.args.limit_rate}B/s)" if key == "stream_limited" else "")
                met = r["growth_kib"] < 16 * 1024 and r["complete"]
                rows.append(f"| {label} | {r['growth_kib'] / 1024:.1f} MiB"
                            f"{'' if r['complete'] else ', transfer incomplete'} | {'met' if met else '**not met**'} |")
        table = ("| target | Latchkey (median) vs nginx | |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n"
                 if rows else "")
        return "\n".join(t for t in (table, self.oauth_targets_table()) if t)

    def machine(self):
        cpu = "unknown"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        tools = []
        for argv in (["nginx", "-v"], ["haproxy", "-v"], ["wrk", "-v"], ["curl", "--version"]):
            if shutil.which(argv[0]):
                p = subprocess.run(argv, capture_output=True, text=True)
                first = (p.stdout + p.stderr).strip().splitlines()
                if first:
                    tools.append(" ".join(first[0].split()[:4 if argv[0] == "haproxy" else 3]))
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
        return (f"- machine: `nproc` {os.cpu_count()}, CPU: {cpu}, {mem:.0f} GiB, kernel {platform.release()}\n"
                f"- tools: {'; '.join(tools)}\n")

    def git_rev(self):
        if os.environ.get("LATCHKEY_REV"):  # for a binary built from another tree
            return os.environ["LATCHKEY_REV"]
        try:
            rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                                   capture_output=True, text=True).stdout.strip()
            return rev + (" plus uncommitted changes in Sources/" if dirty else "")
        except OSError:
            return "unknown"

    def write_results(self, tables, load_before, load_after, profile):
        a = self.args
        cmd = os.environ.get("BENCH_COMMAND") or " ".join(["python3", "Benchmarks/bench.py"] + sys.argv[1:])
        lk = ""
        if "latchkey" in self.targets:
            shown = ["latchkey"] + self.latchkey_argv[1:]
            shown[shown.index("--config") + 1] = "latchkey.yaml"
            cfg = self.latchkey_config.replace(self.work + "/", "")
            added = (", and the identities and routes of the auth and storm scenarios, whose token endpoint "
                     "is `Benchmarks/token_endpoint.py` on core 1" if self.oauth_wanted() else "")
            lk = (f"- Latchkey: commit {self.git_rev()}, release build, started as "
                  f"`taskset -c 0 {' '.join(shown)}` with this `latchkey.yaml` (the quick-start "
                  f"setup, plus the access log setting and a connection cap above the idle count{added}):\n\n"
                  + "".join("      " + l + "\n" for l in cfg.splitlines()) + "\n")
        text = f"""# Benchmark results

Produced by `Benchmarks/run.sh` (see the header of `Benchmarks/bench.py` for what each
scenario does). Re-run it to replace the figures: the hand-written sections, "Analysis" and
those after the measurements, are carried over.

- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}
- command: `{cmd}`
{self.machine()}{lk}- layout: each proxy pinned to core 0 (Latchkey `--loops 1`, nginx `worker_processes 1`,
  haproxy `nbthread 1`); the upstream (nginx, one worker, sendfile) and wrk/curl on core 1;
  127.0.0.1 only. Each proxy sends the upstream the request Latchkey's route sends: the
  credential and X-Forwarded-For, -Proto and -Host. nginx proxies with `proxy_set_header`
  for those four, `keepalive 64`, `proxy_http_version 1.1`, `proxy_set_header Connection ""`,
  `client_max_body_size 2m`, `proxy_request_buffering off`; haproxy with
  `http-request set-header` for the credential, -Proto and -Host, `option forwardfor` and
  `http-reuse always`. Access logs:
  {"Latchkey and nginx write theirs to files; haproxy logs nothing" if a.access_log else "off for all three"}.
- {a.rounds} interleaved round{"s" if a.rounds > 1 else ""} of {a.duration} s per target and scenario (target order rotated
  each round); the tables show medians, and the targets table the small GETs' ratios
  round by round too (the median of each round's Latchkey ÷ nginx, which cancels the
  machine's drift between rounds). "proxy CPU µs/request" is the proxy process's
  utime+stime over the run divided by the requests wrk completed — the figure to compare on
  this shared, noisy machine. "proxy core busy" is that CPU time over the run's wall time.
  "sleeps/request" counts the process's voluntary context switches per request: each is a
  sleep something had to wake it from, which costs the waker's core too. A proxy below
  100% busy sleeps between batches, and the upstream and wrk on core 1 set the pace.
- load average before / after: {load_before} / {load_after}
{''.join('- ' + n + chr(10) for n in self.notes)}
## Targets

{self.targets_table()}
## Measurements

{tables}
"""
        if profile:
            text += ("## Where Latchkey spends its CPU (small GETs, `perf record -e cpu-clock -g`)\n\n"
                     "By shared object:\n\n```\n" + profile[0] + "\n```\n\nTop symbols:\n\n```\n"
                     + profile[1] + "\n```\n")
        path = a.results or os.path.join(HERE, "RESULTS.md")
        # The previous file's hand-written sections are carried over: "## Analysis" (the
        # reading of the figures and the profile; re-read it against the new ones) before the
        # measurements, and the records of runs by hand after them.
        try:
            with open(path) as f:
                kept = hand_written_sections(f.read())
        except OSError:
            kept = {}
        if "Analysis" in kept:
            text = text.replace("\n## Measurements\n", "\n" + kept.pop("Analysis") + "## Measurements\n", 1)
        text = (text.rstrip() + "\n\n" + "".join(kept.values())).rstrip() + "\n"
        with open(path, "w") as f:
            f.write(text)
        log(f"bench: wrote {os.path.relpath(path, os.getcwd())}")


# The sections write_results makes; every other "## " section of RESULTS.md is written by hand.
GENERATED_SECTIONS = ("Targets", "Measurements", "Where Latchkey spends its CPU")


def hand_written_sections(markdown):
    """RESULTS.md's hand-written "## " sections, by title in their order, each with its
    heading and ending in a blank line."""
    sections = {}
    for part in ("\n" + markdown).split("\n## ")[1:]:
        title = part.split("\n", 1)[0]
        if not title.startswith(GENERATED_SECTIONS):
            sections[title] = "## " + part.rstrip() + "\n\n"
    return sections


def main():
    ap = argparse.ArgumentParser(description="Latchkey vs direct, nginx and haproxy (run via Benchmarks/run.sh)")
    ap.add_argument("--latchkey", help="path of the latchkey binary (omit to leave Latchkey out)")
    ap.add_argument("--latchkey-arg", action="append", default=[], help="extra argument for latchkey serve")
    ap.add_argument("--targets", default="direct,latchkey,nginx,haproxy")
    ap.add_argument("--scenarios", default="small,large,idle,stream",
                    help=f"comma-separated, of {','.join(SCENARIOS)}")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--idle-connections", type=int, default=10000)
    ap.add_argument("--idle-hold", type=float, default=3.0, help="seconds to hold the idle connections")
    ap.add_argument("--limit-rate", default="200M", help="curl --limit-rate for the slow-client stream")
    ap.add_argument("--storm-requests", type=int, default=1000,
                    help="concurrent requests (one connection each) per burst of the storm scenario")
    ap.add_argument("--storm-rounds", type=int, default=11,
                    help="rounds of the storm scenario's three bursts (a burst takes about a second)")
    ap.add_argument("--access-log", action="store_true",
                    help="Latchkey and nginx write access logs (to files); haproxy logs nothing either way")
    ap.add_argument("--profile", action="store_true", help="perf-record Latchkey under small GETs")
    ap.add_argument("--callgrind", action="store_true",
                    help="with auth, forward, websocket, upload or routes: count Latchkey's instructions per request "
                         "(or round trip) on their routes under callgrind; with small: Latchkey's, nginx's and "
                         "haproxy's per small GET and per 64 KiB POST")
    ap.add_argument("--forward-connections", type=int, default=32,
                    help="concurrent tunnels (and plain connections to the reverse route) of the forward scenario")
    ap.add_argument("--ws-connections", type=int, default=32,
                    help="connections of the websocket scenario's many-connection echo run")
    ap.add_argument("--ws-idle-connections", type=int, default=1000,
                    help="upgraded connections the websocket scenario holds open for its RSS figure")
    ap.add_argument("--ws-read-rate", default="50M", help="bytes/s the websocket scenario's slow reader takes")
    ap.add_argument("--route-counts", default="1,100,1000,10000",
                    help="the routes scenario's configuration sizes (routes, and as many identities)")
    ap.add_argument("--route-start-timeout", type=float, default=900,
                    help="seconds the routes scenario waits for a Latchkey to answer its health check")
    ap.add_argument("--results", help="where to write the Markdown (default Benchmarks/RESULTS.md)")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    ap.add_argument("--keep-work", action="store_true")
    a = ap.parse_args()
    a.targets = [t for t in a.targets.split(",") if t]
    a.scenarios = [s for s in a.scenarios.split(",") if s]
    a.route_counts = sorted(int(n) for n in a.route_counts.split(",") if n)
    if min(a.rounds, a.duration, a.storm_requests, a.storm_rounds, a.forward_connections, a.ws_connections,
           a.ws_idle_connections) < 1:
        ap.error("--rounds, --duration, --storm-requests, --storm-rounds, --forward-connections, --ws-connections "
                 "and --ws-idle-connections must be positive")
    unknown = [s for s in a.scenarios if s not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario {', '.join(unknown)}: choose from {', '.join(SCENARIOS)}")
    if "latchkey" in a.targets and not a.latchkey:
        a.targets.remove("latchkey")
    if {"auth", "storm"} & set(a.scenarios) and "latchkey" not in a.targets:
        ap.error("the auth and storm scenarios measure Latchkey: give --latchkey and keep latchkey in --targets")
    if a.callgrind and not {"small", "auth", "forward", "websocket", "upload", "routes"} & set(a.scenarios):
        ap.error("--callgrind counts the small, auth, forward, websocket, upload or routes scenario's instructions: "
                 "add one to --scenarios")
    if "routes" in a.scenarios and (not a.latchkey or not a.route_counts or min(a.route_counts) < 1):
        ap.error("the routes scenario measures Latchkey: give --latchkey, and positive --route-counts")

    if os.cpu_count() < 2:
        sys.exit("bench: needs at least 2 cores (proxy on core 0, load and upstream on core 1)")
    os.sched_setaffinity(0, {int(LOAD_CORE)})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 30000) if hard != resource.RLIM_INFINITY else 30000
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    if want < a.idle_connections + 1000 and "idle" in a.scenarios:
        sys.exit(f"bench: the open-file limit ({hard}) is too low for {a.idle_connections} connections")
    # A burst holds its client connections here and twice as many in Latchkey (client and
    # upstream side), which inherits this limit.
    if want < 2 * a.storm_requests + 1000 and "storm" in a.scenarios:
        sys.exit(f"bench: the open-file limit ({hard}) is too low for bursts of {a.storm_requests} requests")
    if want < 2 * a.ws_idle_connections + 1000 and "websocket" in a.scenarios:
        sys.exit(f"bench: the open-file limit ({hard}) is too low for {a.ws_idle_connections} upgraded connections")

    b = Bench(a)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        b.start_upstream(b.make_files())
        if b.oauth_wanted():
            b.start_token_endpoint()
        # Dict order is the table order: direct first, then latchkey, nginx, haproxy.
        if "latchkey" in a.targets:
            b.start_latchkey()
        if "nginx" in a.targets:
            b.start_nginx()
        if "haproxy" in a.targets:
            b.start_haproxy()
        if "direct" not in a.targets:
            del b.targets["direct"]
        if not b.targets:
            sys.exit("bench: no target to measure")
        b.verify()
        load_before = open("/proc/loadavg").read().split()[:3]
        b.run_rounds()
        if "stucklog" in a.scenarios and "latchkey" in b.targets:
            b.start_log_targets()
            b.run_log_rounds()
        if "tls" in a.scenarios:
            b.start_tls_targets()
            b.run_tls_rounds()
        if "forward" in a.scenarios:
            b.start_forward_targets()
            b.run_forward_rounds()
        if "websocket" in a.scenarios:
            b.start_websocket_targets()
            # Memory first, while the proxies' heaps hold only what the checks left.
            b.run_websocket_memory()
            b.run_websocket_rounds()
        if "upload" in a.scenarios:
            b.start_upload_targets()
            b.run_upload_rounds()
        if "routes" in a.scenarios:
            b.run_routes()
        if a.callgrind and "small" in a.scenarios:
            b.callgrind_peers()
        if a.callgrind and "auth" in a.scenarios and "latchkey" in b.targets:
            b.callgrind_auth()
        if a.callgrind and "forward" in a.scenarios:
            b.callgrind_forward()
        if a.callgrind and "websocket" in a.scenarios:
            b.callgrind_websocket()
        if a.callgrind and "upload" in a.scenarios and "latchkey" in b.targets:
            b.callgrind_upload()
        for name in list(b.targets):
            if "stream" in a.scenarios:
                b.single[("stream", name)] = b.stream(name)
                b.single[("stream_limited", name)] = b.stream(name, a.limit_rate)
            if "idle" in a.scenarios:
                b.single[("idle", name)] = b.idle(name, a.idle_connections, a.idle_hold)
        profile = b.profile() if a.profile else None
        # Last: a burst grows Latchkey's heap, which the allocator keeps, and that shows in
        # the RSS scenarios and in malloc's share of the profile.
        if "storm" in a.scenarios:
            b.run_storms()
        load_after = open("/proc/loadavg").read().split()[:3]
        for name in ("latchkey", "nginx", "haproxy"):
            if name in b.targets:
                p = dict(b.procs)[name]
                if p.poll() is not None:
                    b.notes.append(f"{name} exited during the run (status {p.returncode})")
        tables = b.report()
        print(tables)
        if "latchkey" in b.targets:
            print(b.targets_table())
        if not a.no_write:
            b.write_results(tables, " ".join(load_before), " ".join(load_after), profile)
    finally:
        b.cleanup()


if __name__ == "__main__":
    main()
