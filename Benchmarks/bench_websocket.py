"""The `websocket` scenario: WebSocket upgrades relayed by Latchkey and by nginx, each
attaching the bearer token to the handshake.

  latchkey   a reverse route (`path: /`, the token injected as `Authorization: Bearer`) of
             `latchkey serve --config latchkey-ws.yaml --loops 1`; WebSocket upgrades are
             forwarded by default.
  nginx      Debian's nginx as a WebSocket reverse proxy, one worker: `proxy_http_version 1.1;
             proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade";
             proxy_set_header Authorization "Bearer …"`, its buffers at their defaults
             (`proxy_buffer_size` one page, 4 KiB: the buffer each way of an upgraded
             connection).
  nginx-16k  the same with `proxy_buffer_size 16k` (Latchkey's read buffer size) and
             `proxy_buffers 8 16k` (which nginx then requires; unused by an upgraded stream).
  direct     the load generator talking to the upstream itself (sending the token): the
             floor of the latency figures.

The proxies are pinned to core 0; the upstream and the load generator to core 1, both
small C programs compiled here with gcc: Benchmarks/ws_echo.c, an epoll echo server that
accepts a handshake only with the bearer token (so every connection proves the
injection) and echoes each frame as it comes, and Benchmarks/ws_load.c, an epoll client
with its own RFC 6455 framing (masked frames out), which checks every echoed byte.
(Python's `websockets` is too slow for either end: RESULTS.md has the measurement.)

Runs, in interleaved rounds (target order rotated each round), medians:
  echo, 1 connection        32-byte messages, sequential round trips: p50/p99 and the
                            proxy's CPU µs per round trip.
  echo, N connections       the same on --ws-connections connections (32).
  echo, N connections, crowded  the same while --ws-idle-connections (1,000) other upgraded
                            connections are held open, idle: does a round trip cost more
                            when many streams are open?
  throughput                64 KiB messages, 4 connections, 4 messages in flight on each:
                            MB/s of payload echoed back (every byte crosses the proxy
                            twice), the proxy's CPU µs per message and per MB.
The proxy's CPU is utime+stime from /proc over the measured span (every connection opened
and warmed up before it). Then, once per proxy (not direct):
  idle                      --ws-idle-connections (1,000) upgraded connections, each after
                            its handshake and one message, held: VmRSS (and RssAnon) before
                            and with them, and per connection; then one more message on each
                            (all still open?).
  stream                    1 GiB of binary frames from the upstream on one connection,
                            once read at full speed and once at --ws-read-rate (50 MB/s):
                            VmRSS sampled every 100 ms, its peak growth (backpressure holds
                            the upstream back when the client reads slowly).
With --callgrind, Latchkey's instructions per round trip under valgrind's callgrind (one
connection, warm-up, counters zeroed, a fixed number of sequential round trips, dumped),
for 32-byte and 64 KiB messages, and for 32-byte messages with 1,000 idle upgraded
connections open beside the measured one."""

import os
import statistics
import subprocess
import sys
import threading
import time

from bench_support import (LOAD_CORE, PROXY_CORE, await_ready, build_c, callgrind_control, cpu_seconds, drive_load,
                           finish, free_port, go, idle_table, lkbench_fields, log, rss_kib, start_load, stream_table, wait_port)

SMALL = 32
LARGE = 64 * 1024
THROUGHPUT_CONNECTIONS = 4
THROUGHPUT_INFLIGHT = 4
STREAM_BYTES = 1 << 30
IDLE_HOLD = 2.0
CALLGRIND_ROUNDS = 2
# (label, message size, warm-up round trips, measured round trips, idle connections held open)
CALLGRIND_RUNS = (("32 B", SMALL, 200, 5000, 0), ("64 KiB", LARGE, 50, 1000, 0),
                  ("32 B, 1,000 idle open", SMALL, 200, 5000, 1000))
NGINX_TARGETS = {"nginx": "", "nginx-16k": "\n            proxy_buffer_size 16k;\n            proxy_buffers 8 16k;"}


class WebSocketScenarios:
    """Mixed into `Bench` (bench.py), whose processes, files, results and options it uses:
    spawn, read_log, nginx_conf, token, token_file, results, single, work, args, notes; and
    callgrind_binary, callgrind_total (bench_oauth.py)."""

    def websocket_wanted(self):
        return "websocket" in self.args.scenarios

    # ---- the C helpers ---------------------------------------------------------------------
    def build_ws_tools(self):
        self.ws_echo = build_c(self.work, "ws_echo")
        self.ws_load = build_c(self.work, "ws_load")

    def ws_load_argv(self, name, *extra):
        t = self.ws_targets[name]
        argv = [self.ws_load, "--port", str(t["port"])]
        if t["pid"] is None:  # the upstream itself wants the token
            argv += ["--bearer-file", self.token_file]
        return argv + [str(e) for e in extra]

    # ---- the targets ---------------------------------------------------------------------------
    def start_ws_upstream(self):
        port = free_port()
        p = self.spawn("ws-upstream", [self.ws_echo, "--port", str(port), "--token-file", self.token_file], LOAD_CORE)
        if not wait_port(port, p):
            sys.exit("bench: ws_echo did not start: " + self.read_log("ws-upstream"))
        self.ws_upstream_port = port
        self.ws_upstream_pid = p.pid

    def latchkey_ws_yaml(self, port):
        return f"""server:
  loops: 1
listeners:
  - name: main
    listen: 127.0.0.1:{port}
credentials:
  bench:
    file: {self.token_file}
routes:
  - name: ws
    path: /
    upstream: http://127.0.0.1:{self.ws_upstream_port}
    inject:
      - header: Authorization
        value: "Bearer {{token}}"
        credential: bench
logging:
  access_log: {"true" if self.args.access_log else "false"}
"""

    def start_latchkey_ws(self, name="latchkey-ws", binary=None, wrapper=()):
        port = free_port()
        conf = os.path.join(self.work, f"{name}.yaml")
        self.latchkey_ws_config = self.latchkey_ws_yaml(port)
        with open(conf, "w") as f:
            f.write(self.latchkey_ws_config)
        p = self.spawn(name, [*wrapper, binary or self.args.latchkey, "serve", "--config", conf, "--loops", "1"],
                       PROXY_CORE)
        if not wait_port(port, p, timeout=180 if wrapper else 15):
            sys.exit(f"bench: {name} did not start: " + self.read_log(name)[-2000:])
        return port, p

    def nginx_ws_body(self, port, extra):
        return f"""
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            proxy_pass http://127.0.0.1:{self.ws_upstream_port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_set_header Authorization "Bearer {self.token}";
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;{extra}
        }}
    }}"""

    def start_websocket_targets(self):
        self.build_ws_tools()
        self.start_ws_upstream()
        self.ws_targets = {}  # table order: direct, latchkey, nginx, nginx-16k
        if "direct" in self.args.targets:
            self.ws_targets["direct"] = {"port": self.ws_upstream_port, "pid": None}
        if "latchkey" in self.args.targets and self.args.latchkey:
            port, p = self.start_latchkey_ws()
            self.ws_targets["latchkey"] = {"port": port, "pid": p.pid}
        if "nginx" in self.args.targets:
            for name, extra in NGINX_TARGETS.items():
                port = free_port()
                p = self.spawn(f"{name}-ws", self.nginx_conf(f"{name}-ws", self.nginx_ws_body(port, extra)), PROXY_CORE)
                if not wait_port(port, p):
                    sys.exit(f"bench: {name} (WebSocket) did not start: " + self.read_log(f"{name}-ws"))
                self.ws_targets[name] = {"port": port, "pid": p.pid}
        if not self.ws_targets:
            sys.exit("bench: websocket: no target to measure")
        self.verify_websocket()

    def verify_websocket(self):
        """The upstream refuses a handshake without the token; every target upgrades without
        one from the client (the proxies attach it) and echoes small and 64 KiB messages."""
        refused = subprocess.run([self.ws_load, "--port", str(self.ws_upstream_port), "--warmup", "1"],
                                 input="", capture_output=True, text=True, timeout=30)
        if "401" not in refused.stderr:
            sys.exit(f"bench: ws_echo accepted a handshake with no token: {refused.stdout} {refused.stderr}")
        for name in self.ws_targets:
            for size in (SMALL, LARGE):
                r = drive_load(self.ws_load_argv(name, "--connections", 4, "--size", size, "--duration", 1),
                               lambda pid: None, lambda pid: None)
                if r["errors"] or not r["messages"]:
                    sys.exit(f"bench: websocket {name}: {r['errors']} errors in {r['messages']} echoes: {r['stderr']}")
        log("bench: websocket: every target upgrades with the token attached and echoes every byte")

    # ---- echo rounds -----------------------------------------------------------------------------
    def ws_runs(self):
        """(results key, title, connections, message size, messages in flight per connection,
        idle upgraded connections held open meanwhile)."""
        n, idle = self.args.ws_connections, self.args.ws_idle_connections
        return (("ws_echo1", f"{SMALL}-byte messages, 1 connection, sequential round trips", 1, SMALL, 1, 0),
                ("ws_echo", f"{SMALL}-byte messages, {n} connections, sequential round trips on each", n, SMALL, 1, 0),
                ("ws_crowded", f"{SMALL}-byte messages, {n} connections as above, with {idle:,} idle upgraded "
                               "connections open beside them", n, SMALL, 1, idle),
                ("ws_tput", f"64 KiB messages, {THROUGHPUT_CONNECTIONS} connections, {THROUGHPUT_INFLIGHT} "
                            "messages in flight on each", THROUGHPUT_CONNECTIONS, LARGE, THROUGHPUT_INFLIGHT, 0))

    def ws_hold(self, name, count):
        """ws_load holding `count` upgraded connections to the target open, each after its
        handshake and one message; `ws_release` checks that each still echoes, and closes them."""
        p = start_load(self.ws_load_argv(name, "--connections", count, "--size", SMALL, "--warmup", 1, "--messages", 1))
        await_ready(p, 300, f"ws_load holding {count} connections to {name}")
        return p

    def ws_release(self, p):
        line = go(p, 120)
        err = finish(p)
        r = lkbench_fields(line) if line.startswith("LKBENCH ") else {}
        return r.get("messages", 0), err

    def ws_run(self, name, seconds, connections, size, inflight):
        t = self.ws_targets[name]
        pids = [p for p in (t["pid"], self.ws_upstream_pid) if p]
        before, after = {}, {}

        def sample(into, load_pid):
            into.update({p: cpu_seconds(p) for p in pids})
            into["load"] = cpu_seconds(load_pid)

        r = drive_load(self.ws_load_argv(name, "--connections", connections, "--size", size, "--inflight", inflight,
                                         "--duration", seconds),
                       lambda pid: sample(before, pid), lambda pid: sample(after, pid), run_timeout=seconds + 60)
        secs = r["duration_us"] / 1e6
        n = max(r["messages"], 1)
        proxy = after[t["pid"]] - before[t["pid"]] if t["pid"] else None
        core1 = (after[self.ws_upstream_pid] - before[self.ws_upstream_pid]) + (after["load"] - before["load"])
        mb = r["bytes"] / 1e6
        return {"rate": r["messages"] / secs, "mbps": mb / secs, "p50_us": r["p50_ns"] / 1000,
                "p99_us": r["p99_ns"] / 1000, "errors": r["errors"],
                "proxy_cpu_us": proxy / n * 1e6 if proxy is not None else None,
                "proxy_cpu_us_per_mb": proxy / mb * 1e6 if proxy is not None and mb else None,
                "proxy_cpu_util": proxy / secs if proxy is not None else None,
                "core1_util": core1 / secs}

    def run_websocket_rounds(self):
        a = self.args
        names = list(self.ws_targets)
        log(f"bench: websocket: warm-up ({a.warmup}s per target)")
        for name in names:
            self.ws_run(name, a.warmup, a.ws_connections, SMALL, 1)
        for rnd in range(a.rounds):
            for key, _, connections, size, inflight, crowd in self.ws_runs():
                for name in names[rnd % len(names):] + names[:rnd % len(names)]:
                    held = self.ws_hold(name, crowd) if crowd else None
                    r = self.ws_run(name, a.duration, connections, size, inflight)
                    if held:
                        answered, err = self.ws_release(held)
                        if answered != crowd:
                            r["errors"] += crowd - answered
                            log(f"bench: {name}: {crowd - answered} of the {crowd} idle connections did not echo "
                                f"after the run: {err}")
                    self.results.setdefault((key, name), []).append(r)
                    cpu = f"{r['proxy_cpu_us']:.1f} µs/msg" if r["proxy_cpu_us"] is not None else "-"
                    log(f"bench: round {rnd + 1}/{a.rounds} {key:8} {name:9} {r['rate']:9.0f} msg/s "
                        f"{r['mbps']:8.1f} MB/s p50 {r['p50_us']:8.1f} p99 {r['p99_us']:8.1f} µs cpu {cpu} "
                        f"errors {r['errors']}")

    # ---- memory ------------------------------------------------------------------------------------
    def ws_idle(self, name):
        t = self.ws_targets[name]
        count = self.args.ws_idle_connections
        time.sleep(0.5)
        before, anon_before = rss_kib(t["pid"]), rss_kib(t["pid"], "RssAnon")
        held = {}

        def hold(_):
            time.sleep(IDLE_HOLD)
            held.update(rss=rss_kib(t["pid"]), anon=rss_kib(t["pid"], "RssAnon"))

        r = drive_load(self.ws_load_argv(name, "--connections", count, "--size", SMALL, "--warmup", 1,
                                         "--messages", 1), hold, lambda pid: None, setup_timeout=300, run_timeout=120)
        time.sleep(1.0)
        res = {"before_kib": before, "with_kib": held["rss"], "after_kib": rss_kib(t["pid"]),
               "anon_before_kib": anon_before, "anon_with_kib": held["anon"], "answered": r["messages"],
               "errors": r["errors"]}
        log(f"bench: ws idle   {name:9} {r['messages']}/{count} answered after the hold, RSS "
            f"{before / 1024:.1f} -> {held['rss'] / 1024:.1f} MiB (after closing {res['after_kib'] / 1024:.1f})")
        return res

    def ws_stream(self, name, rate=None):
        t = self.ws_targets[name]
        time.sleep(0.5)
        before = rss_kib(t["pid"])
        samples = []
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                samples.append(rss_kib(t["pid"]))
                stop.wait(0.1)

        th = threading.Thread(target=sampler, daemon=True)
        argv = self.ws_load_argv(name, "--stream", STREAM_BYTES, *(("--read-rate", rate) if rate else ()))
        r = drive_load(argv, lambda pid: th.start(), lambda pid: stop.set(), run_timeout=300)
        stop.set()
        th.join()
        peak = max(samples + [before])
        res = {"before_kib": before, "peak_kib": peak, "growth_kib": peak - before,
               "mbps": r["bytes"] / (r["duration_us"] / 1e6) / 1e6,
               "complete": r["bytes"] == STREAM_BYTES and not r["errors"], "samples": len(samples)}
        log(f"bench: ws stream{'@' + rate if rate else ''} {name:9} "
            f"{'complete' if res['complete'] else 'INCOMPLETE: ' + r['stderr']} {res['mbps']:.0f} MB/s, "
            f"RSS {before / 1024:.1f} -> peak {peak / 1024:.1f} MiB")
        return res

    def run_websocket_memory(self):
        for name, t in self.ws_targets.items():
            if t["pid"] is None:
                continue
            self.single[("ws_idle", name)] = self.ws_idle(name)
            self.single[("ws_stream", name)] = self.ws_stream(name)
            self.single[("ws_stream_limited", name)] = self.ws_stream(name, self.args.ws_read_rate)

    # ---- callgrind -----------------------------------------------------------------------------------
    def callgrind_websocket(self):
        """Latchkey's instructions per echo round trip, counted by callgrind in a second
        Latchkey with the same configuration."""
        if "latchkey" not in getattr(self, "ws_targets", {}):
            return
        binary = self.callgrind_binary("WebSocket instruction counts")
        if not binary:
            return
        out = os.path.join(self.work, "callgrind-websocket.out")
        port, p = self.start_latchkey_ws("latchkey-ws-callgrind", binary,
                                         ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"))
        self.ws_targets["latchkey-callgrind"] = {"port": port, "pid": p.pid}
        zero = lambda _: callgrind_control(p.pid, "--zero")
        dump = lambda _: callgrind_control(p.pid, "--dump")
        try:
            for rnd in range(CALLGRIND_ROUNDS):
                for label, size, warmup, count, crowd in CALLGRIND_RUNS:
                    held = self.ws_hold("latchkey-callgrind", crowd) if crowd else None
                    r = drive_load(self.ws_load_argv("latchkey-callgrind", "--size", size, "--warmup", warmup,
                                                     "--messages", count), zero, dump, setup_timeout=300,
                                   run_timeout=600)
                    if held and self.ws_release(held)[0] != crowd:
                        sys.exit(f"bench: callgrind websocket {label}: the idle connections did not all echo")
                    if r["errors"] or r["messages"] != count:
                        sys.exit(f"bench: callgrind websocket {label}: {r}")
                    per = self.callgrind_total(out) / count
                    self.results.setdefault(("callgrind-websocket", label), []).append({"instructions": per})
                    log(f"bench: callgrind round {rnd + 1}/{CALLGRIND_ROUNDS} {label:6} {per:,.0f} instructions/round trip")
        finally:
            del self.ws_targets["latchkey-callgrind"]
            p.terminate()
            p.wait(timeout=60)

    # ---- report ------------------------------------------------------------------------------------
    def websocket_tables(self):
        targets = [n for n in getattr(self, "ws_targets", {}) if any((k, n) in self.results for k, *_ in self.ws_runs())]
        out = []
        med = lambda key, name, field: statistics.median(
            r[field] for r in self.results[(key, name)]) if self.results[(key, name)][0][field] is not None else None
        fmt = lambda v, f: "—" if v is None else format(v, f)
        for key, title, *_ in self.ws_runs():
            names = [n for n in targets if (key, n) in self.results]
            if not names:
                continue
            tput = key == "ws_tput"
            out += [f"### WebSocket echo, {title}", ""]
            if tput:
                out += ["| target | MB/s echoed | messages/s | p50 ms | p99 ms | proxy CPU µs/message | "
                        "proxy CPU µs/MB | proxy core busy | core 1 busy | errors |",
                        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            else:
                out += ["| target | round trips/s | p50 µs | p99 µs | proxy CPU µs/round trip | proxy core busy | "
                        "core 1 busy | errors |",
                        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for n in names:
                errors = sum(r["errors"] for r in self.results[(key, n)])
                if tput:
                    out.append(f"| {n} | {med(key, n, 'mbps'):,.0f} | {med(key, n, 'rate'):,.0f} | "
                               f"{med(key, n, 'p50_us') / 1000:.2f} | {med(key, n, 'p99_us') / 1000:.2f} | "
                               f"{fmt(med(key, n, 'proxy_cpu_us'), '.1f')} | {fmt(med(key, n, 'proxy_cpu_us_per_mb'), ',.0f')} | "
                               f"{fmt(med(key, n, 'proxy_cpu_util'), '.0%')} | {med(key, n, 'core1_util'):.0%} | {errors} |")
                else:
                    out.append(f"| {n} | {med(key, n, 'rate'):,.0f} | {med(key, n, 'p50_us'):.1f} | "
                               f"{med(key, n, 'p99_us'):.1f} | {fmt(med(key, n, 'proxy_cpu_us'), '.2f')} | "
                               f"{fmt(med(key, n, 'proxy_cpu_util'), '.0%')} | {med(key, n, 'core1_util'):.0%} | {errors} |")
            out.append("")
        ins = {label: statistics.median(r["instructions"] for r in self.results[("callgrind-websocket", label)])
               for label, *_ in CALLGRIND_RUNS if ("callgrind-websocket", label) in self.results}
        if ins:
            out += ["### WebSocket echo, Latchkey's instructions per round trip under callgrind", "",
                    f"Median of {CALLGRIND_ROUNDS} rounds; one connection, sequential round trips after a warm-up.", "",
                    "| message | round trips counted | instructions per round trip | per payload byte (both ways) |",
                    "| --- | ---: | ---: | ---: |"]
            for label, size, _, count, _ in CALLGRIND_RUNS:
                if label in ins:
                    out.append(f"| {label} | {count:,} | {ins[label]:,.0f} | {ins[label] / (2 * size):,.2f} |")
            out.append("")
        idle = {n: self.single[("ws_idle", n)] for n in getattr(self, "ws_targets", {}) if ("ws_idle", n) in self.single}
        if idle:
            c = self.args.ws_idle_connections
            out += idle_table(f"### {c:,} idle upgraded connections (RSS of the proxy)", "answered after the hold",
                              {n: (r, r["answered"], (r["with_kib"] - r["before_kib"]) / c) for n, r in idle.items()}, c)
            out.append("")
        for key, title in (("ws_stream", "client reading at full speed"),
                           ("ws_stream_limited", f"client reading at {self.args.ws_read_rate}B/s")):
            rows = {n: self.single[(key, n)] for n in getattr(self, "ws_targets", {}) if (key, n) in self.single}
            if rows:
                out += stream_table(f"1 GiB from the upstream over one WebSocket, {title}", rows)
        return out
