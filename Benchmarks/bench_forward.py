"""The `forward` scenario: small GETs through an intercepted CONNECT tunnel, the way
`HTTPS_PROXY` clients (scripts, SDKs, `latchkey exec`) reach an API through a proxy that
attaches their credential.

  mitmproxy         mitmdump from Debian's package as a regular forward proxy on
                    127.0.0.1 (its own CA in a confdir of the run, proxyauth, quiet, no
                    flow storage, connections to the server opened lazily), with
                    Benchmarks/mitm_inject.py setting `Authorization: Bearer <token>` on
                    every request and sending it to the upstream: what users pick for
                    this job today.
  latchkey-tunnel   Latchkey's forward listener (`mode: forward`, `proxy_auth`) intercepting
                    CONNECT for the route's host with a leaf of its local CA.
  latchkey-reverse  the same GET through a reverse route of the same Latchkey process
                    (a second, plain listener): the in-run baseline.

All three send the GET to bench.py's upstream (plain HTTP, nginx on core 1). The clients
`CONNECT api.test:443` with `Proxy-Authorization: Basic`, then speak TLS 1.3 with SNI
api.test, trusting only that proxy's CA, and GET the 100-byte JSON; the reverse route gets
the same GETs in plain HTTP. Two runs:

  kept-alive tunnels  --forward-connections tunnels (32), many GETs on each: requests/s,
                      p50/p99, the proxy's CPU µs per request.
  a new tunnel per GET  16 connections, each GET on a tunnel of its own (CONNECT, a full
                      handshake, the GET, close), as a script running curl once per call
                      does: tunnels/s and the proxy's CPU µs per tunnel (for the reverse
                      route, a new TCP connection per GET).

The load generator is
Benchmarks/tunnel_load.c (wrk cannot CONNECT), compiled here with gcc against libssl:
one thread per connection, every tunnel opened (CONNECT, handshake, warm-up GETs) before
the measured span, so that the proxy's CPU time over it (utime+stime from /proc, as for
wrk) is the GETs' alone. Interleaved rounds, the target order rotated each round;
medians. With --callgrind, Latchkey's instructions per request on the tunnel and on the
reverse route, under valgrind's callgrind (one connection, warm-up, counters zeroed,
CALLGRIND_REQUESTS sequential GETs, counters dumped)."""

import os
import shutil
import statistics
import subprocess
import sys

from bench_support import PROXY_CORE, build_c, callgrind_control, cpu_seconds, drive_load, free_port, log, wait_port

HERE = os.path.dirname(os.path.abspath(__file__))
FORWARD_HOST = "api.test"
PROXY_USER = "latchkey"
CALLGRIND_REQUESTS = 2000
CALLGRIND_ROUNDS = 2
CALLGRIND_ROUTES = ("tunnel", "reverse")
FRESH_CONNECTIONS = 16


class ForwardScenarios:
    """Mixed into `Bench` (bench.py), whose processes, files, results and options it uses:
    spawn, read_log, secret_file, token_file, small_body, upstream_port, upstream_pid,
    results, work, args, notes; and callgrind_binary, start_callgrind_latchkey, callgrind_total (bench_oauth.py)."""

    def forward_wanted(self):
        return "forward" in self.args.scenarios

    # ---- the load generator ---------------------------------------------------------------
    def build_tunnel_load(self):
        self.tunnel_load = build_c(self.work, "tunnel_load", flags=["-pthread"], libs=["-lssl", "-lcrypto"])

    def load_argv(self, target, connections, path="/small.json"):
        """tunnel_load's arguments for a target, every request checked for 200 and the body's size."""
        argv = [self.tunnel_load, "--port", str(target["port"]), "--connections", str(connections),
                "--path", path]
        if path == "/small.json":
            argv += ["--expect-bytes", str(len(self.small_body))]
        if target.get("ca"):
            argv += ["--connect", f"{FORWARD_HOST}:443", "--proxy-auth", f"{PROXY_USER}:{self.proxy_secret}",
                     "--cafile", target["ca"], "--sni", FORWARD_HOST]
        return argv

    # ---- the three targets ------------------------------------------------------------------
    def latchkey_forward_yaml(self, forward_port, reverse_port):
        inject = ("    inject:\n      - header: Authorization\n        value: \"Bearer {token}\"\n"
                  "        credential: bench\n")
        upstream = f"    upstream: http://127.0.0.1:{self.upstream_port}\n"
        return f"""server:
  loops: 1
listeners:
  - name: fwd
    listen: 127.0.0.1:{forward_port}
    mode: forward
    inbound:
      proxy_auth:
        file: {self.proxy_secret_file}
  - name: main
    listen: 127.0.0.1:{reverse_port}
credentials:
  bench:
    file: {self.token_file}
store: {{ path: {os.path.join(self.work, "forward-store")} }}
routes:
  - name: api
    listeners: [fwd]
    host: {FORWARD_HOST}
    path: /
{upstream}{inject}  - name: reverse
    listeners: [main]
    path: /
{upstream}{inject}logging:
  access_log: {"true" if self.args.access_log else "false"}
"""

    def start_latchkey_forward(self):
        forward_port, reverse_port = free_port(), free_port()
        conf = os.path.join(self.work, "latchkey-forward.yaml")
        self.forward_config = self.latchkey_forward_yaml(forward_port, reverse_port)
        with open(conf, "w") as f:
            f.write(self.forward_config)
        # The local CA (made now, in the store directory) that signs the intercepted leaves.
        done = subprocess.run([self.args.latchkey, "ca", "path", "--config", conf], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("bench: latchkey ca path: " + done.stderr)
        ca = done.stdout.strip()
        p = self.spawn("latchkey-forward", [self.args.latchkey, "serve", "--config", conf, "--loops", "1"], PROXY_CORE)
        if not (wait_port(forward_port, p) and wait_port(reverse_port, p)):
            sys.exit("bench: latchkey-forward did not start: " + self.read_log("latchkey-forward")[-2000:])
        self.forward_conf_path = conf
        self.forward_targets["latchkey-tunnel"] = {"port": forward_port, "pid": p.pid, "ca": ca}
        self.forward_targets["latchkey-reverse"] = {"port": reverse_port, "pid": p.pid}

    def start_mitmproxy(self):
        if not shutil.which("mitmdump"):
            self.notes.append("mitmproxy: not installed (apt-get install mitmproxy), left out of the forward scenario")
            log("bench: " + self.notes[-1])
            return
        port = free_port()
        confdir = os.path.join(self.work, "mitmproxy")
        os.makedirs(confdir)
        self.mitmproxy_argv = [
            "mitmdump", "--mode", "regular", "--listen-host", "127.0.0.1", "--listen-port", str(port),
            "--set", f"confdir={confdir}", "--quiet", "--set", "flow_detail=0",
            # api.test resolves nowhere: no connection to the server at CONNECT time, the
            # addon names the upstream with the request.
            "--set", "connection_strategy=lazy",
            "--set", f"proxyauth={PROXY_USER}:{self.proxy_secret}",
            "-s", os.path.join(HERE, "mitm_inject.py"),
            "--set", f"inject_token_file={self.token_file}",
            "--set", f"inject_upstream=http://127.0.0.1:{self.upstream_port}",
        ]
        p = self.spawn("mitmproxy", self.mitmproxy_argv, PROXY_CORE)
        if not wait_port(port, p, timeout=60):
            sys.exit("bench: mitmdump did not start: " + self.read_log("mitmproxy")[-2000:])
        version = subprocess.run(["mitmdump", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
        self.mitmproxy_version = version.replace("Mitmproxy:", "mitmproxy").strip()
        # The CA mitmproxy made in its confdir on start.
        self.forward_targets["mitmproxy"] = {"port": port, "pid": p.pid,
                                             "ca": os.path.join(confdir, "mitmproxy-ca-cert.pem")}

    def start_forward_targets(self):
        self.proxy_secret = "bench-proxy-" + os.urandom(8).hex()
        self.proxy_secret_file = self.secret_file("proxy_secret", self.proxy_secret)
        self.forward_targets = {}  # table order: mitmproxy, latchkey-tunnel, latchkey-reverse
        self.build_tunnel_load()
        self.start_mitmproxy()
        if "latchkey" in self.args.targets and self.args.latchkey:
            self.start_latchkey_forward()
        if not self.forward_targets:
            sys.exit("bench: forward: neither mitmproxy nor Latchkey to measure")
        self.verify_forward()

    def curl_through(self, target, path, extra=(), secret=None):
        """curl of https://api.test/PATH through the target's tunnel (or of its reverse port)."""
        if target.get("ca"):
            proxy = f"http://{PROXY_USER}:{secret or self.proxy_secret}@127.0.0.1:{target['port']}"
            argv = ["curl", "-sS", "--proxy", proxy, "--cacert", target["ca"], *extra, f"https://{FORWARD_HOST}{path}"]
        else:
            argv = ["curl", "-sS", *extra, f"http://127.0.0.1:{target['port']}{path}"]
        return subprocess.run(argv, capture_output=True, timeout=30)

    def verify_forward(self):
        """Each serves the small file, injects the credential and, for the tunnels, wants
        the proxy password; then the load generator runs a second on each."""
        for name, t in self.forward_targets.items():
            for path, want in (("/small.json", self.small_body), ("/auth", b"authorized\n")):
                done = self.curl_through(t, path)
                if done.returncode != 0 or done.stdout != want:
                    sys.exit(f"bench: {name}: {path} answered {done.stdout[:200]!r} "
                             f"{done.stderr.decode(errors='replace').strip()}")
            if t.get("ca"):
                done = self.curl_through(t, "/auth", ["-o", "/dev/null"], secret="wrong-secret")
                if done.returncode == 0 or b"407" not in done.stderr:
                    sys.exit(f"bench: {name}: a wrong proxy password was not refused with 407: {done.stderr!r}")
            r = drive_load(self.load_argv(t, 4) + ["--duration", "1"], lambda pid: None, lambda pid: None)
            if r["errors"] or not r["requests"]:
                sys.exit(f"bench: {name}: tunnel_load had {r['errors']} errors in {r['requests']} requests")
        log("bench: forward: every target serves the file through its tunnel (or route) and injects the credential")

    # ---- rounds ----------------------------------------------------------------------------
    def forward_runs(self):
        """(results key, title, connections, extra tunnel_load arguments), in table order."""
        return (("forward", "kept-alive tunnels", self.args.forward_connections, []),
                ("forward_new", "a new tunnel per GET", FRESH_CONNECTIONS, ["--fresh"]))

    def forward_run(self, name, seconds, connections, extra=()):
        t = self.forward_targets[name]
        pids = [t["pid"], self.upstream_pid]
        before, after = {}, {}
        r = drive_load(self.load_argv(t, connections) + ["--duration", str(seconds), *extra],
                       lambda pid: before.update({p: cpu_seconds(p) for p in pids}),
                       lambda pid: after.update({p: cpu_seconds(p) for p in pids}), run_timeout=seconds + 60)
        secs = r["duration_us"] / 1e6
        n = max(r["requests"], 1)
        return {"rps": r["requests"] / secs, "p50_ms": r["p50_us"] / 1000, "p99_ms": r["p99_us"] / 1000,
                "errors": r["errors"], "reconnects": r["reconnects"],
                "proxy_cpu_us": (after[t["pid"]] - before[t["pid"]]) / n * 1e6,
                "proxy_cpu_util": (after[t["pid"]] - before[t["pid"]]) / secs,
                "upstream_cpu_us": (after[self.upstream_pid] - before[self.upstream_pid]) / n * 1e6}

    def run_forward_rounds(self):
        a = self.args
        names = list(self.forward_targets)
        log(f"bench: forward: warm-up ({a.warmup}s per target)")
        for name in names:
            self.forward_run(name, a.warmup, a.forward_connections)
        for rnd in range(a.rounds):
            for key, title, connections, extra in self.forward_runs():
                for name in names[rnd % len(names):] + names[:rnd % len(names)]:
                    r = self.forward_run(name, a.duration, connections, extra)
                    self.results.setdefault((key, name), []).append(r)
                    log(f"bench: round {rnd + 1}/{a.rounds} {key:11} {name:16} {r['rps']:9.0f}/s "
                        f"p50 {r['p50_ms']:6.2f} p99 {r['p99_ms']:6.2f} ms cpu {r['proxy_cpu_us']:.1f} µs "
                        f"errors {r['errors']} reconnects {r['reconnects']}")

    # ---- callgrind ---------------------------------------------------------------------------
    def callgrind_forward(self):
        """Latchkey's instructions per request through the tunnel and through the reverse
        route, counted by callgrind in a second Latchkey with the same configuration (its
        store, so its local CA, is the measured one's)."""
        if "latchkey-tunnel" not in getattr(self, "forward_targets", {}):
            return
        binary = self.callgrind_binary("forward instruction counts")
        if not binary:
            return
        forward_port, reverse_port = free_port(), free_port()
        conf = os.path.join(self.work, "latchkey-forward-callgrind.yaml")
        with open(conf, "w") as f:
            f.write(self.latchkey_forward_yaml(forward_port, reverse_port))
        p, out = self.start_callgrind_latchkey("latchkey-forward-callgrind", binary, conf, [forward_port, reverse_port])
        targets = {"tunnel": {"port": forward_port, "ca": self.forward_targets["latchkey-tunnel"]["ca"]},
                   "reverse": {"port": reverse_port}}
        zero = lambda _: callgrind_control(p.pid, "--zero")
        dump = lambda _: callgrind_control(p.pid, "--dump")
        log(f"bench: callgrind: {CALLGRIND_ROUNDS} rounds of {CALLGRIND_REQUESTS} requests, tunnel and reverse")
        try:
            for rnd in range(CALLGRIND_ROUNDS):
                for route in CALLGRIND_ROUTES:
                    argv = self.load_argv(targets[route], 1) + ["--warmup-requests", "200",
                                                                "--requests", str(CALLGRIND_REQUESTS)]
                    r = drive_load(argv, zero, dump, setup_timeout=300)
                    if r["errors"] or r["requests"] != CALLGRIND_REQUESTS:
                        sys.exit(f"bench: callgrind {route}: {r}")
                    per_request = self.callgrind_total(out) / CALLGRIND_REQUESTS
                    self.results.setdefault(("callgrind-forward", route), []).append({"instructions": per_request})
                    log(f"bench: callgrind round {rnd + 1}/{CALLGRIND_ROUNDS} {route:7} "
                        f"{per_request:,.0f} instructions/request")
        finally:
            p.terminate()
            p.wait(timeout=60)

    # ---- report ------------------------------------------------------------------------------
    def forward_tables(self):
        targets = getattr(self, "forward_targets", {})
        if not any(("forward", n) in self.results for n in targets):
            return []
        med = lambda key, name, field: statistics.median(r[field] for r in self.results[(key, name)])
        ins = {route: statistics.median(r["instructions"] for r in self.results[("callgrind-forward", route)])
               for route in CALLGRIND_ROUTES if ("callgrind-forward", route) in self.results}
        route_of = {"latchkey-tunnel": "tunnel", "latchkey-reverse": "reverse"}
        out = []
        for key, title, connections, _ in self.forward_runs():
            names = [n for n in targets if (key, n) in self.results]
            if not names:
                continue
            fresh = key == "forward_new"
            unit = "tunnel" if fresh else "request"
            out += [f"### Forward proxy, {title}: 100-byte JSON, {connections} "
                    + ("connections (a CONNECT and a full TLS handshake per GET; the reverse route: a new "
                       "TCP connection per GET)" if fresh else "tunnels (the reverse route: as many kept-alive connections)"),
                    "",
                    f"| target | {unit}s/s | p50 ms | p99 ms | proxy CPU µs/{unit} | proxy core busy | "
                    f"upstream CPU µs/request |{'' if fresh else ' instructions/request |'} errors |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + ("" if fresh else " ---: |") + " ---: |"]
            notes = []
            for name in names:
                errors = sum(r["errors"] for r in self.results[(key, name)])
                reconnects = sum(r["reconnects"] for r in self.results[(key, name)])
                if reconnects:
                    notes.append(f"{name}: {reconnects} connections closed by the proxy after an answer and opened "
                                 "again (their handshakes inside the measured span)")
                count = ins.get(route_of.get(name))
                out.append(f"| {name} | {med(key, name, 'rps'):,.0f} | {med(key, name, 'p50_ms'):.2f} | "
                           f"{med(key, name, 'p99_ms'):.2f} | {med(key, name, 'proxy_cpu_us'):.1f} | "
                           f"{med(key, name, 'proxy_cpu_util'):.0%} | {med(key, name, 'upstream_cpu_us'):.1f} |"
                           + ("" if fresh else f" {f'{count:,.0f}' if count else '—'} |") + f" {errors} |")
            out += [""] + [n + "." for n in notes] + ([""] if notes else [])
            if {"latchkey-tunnel", "latchkey-reverse"} <= set(names):
                t, r = med(key, "latchkey-tunnel", "proxy_cpu_us"), med(key, "latchkey-reverse", "proxy_cpu_us")
                line = f"Latchkey, tunnel ÷ reverse: CPU per {unit} {t / r:.2f}×"
                if "mitmproxy" in names:
                    line += f"; mitmproxy ÷ Latchkey tunnel: {med(key, 'mitmproxy', 'proxy_cpu_us') / t:.1f}×"
                if not fresh and len(ins) == 2:
                    line += (f"; instructions per request under callgrind (median of {CALLGRIND_ROUNDS} rounds of "
                             f"{CALLGRIND_REQUESTS:,} sequential GETs on one connection): tunnel {ins['tunnel']:,.0f}, "
                             f"reverse {ins['reverse']:,.0f} ({ins['tunnel'] / ins['reverse']:.2f}×)")
                out += [line + ".", ""]
        return out
