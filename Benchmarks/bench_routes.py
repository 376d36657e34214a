"""The `routes` scenario: does Latchkey's cost grow with the size of its configuration?

For each N of --route-counts (1, 100, 1,000, 10,000 by default), a config with N routes
(`/r0` … `/rN-1`, each injecting a static credential of its own, read from a file) and N
identities (client credentials, `acquire: lazy`: set up at start, no token requested), one
listener, one loop. Measured, Latchkey pinned to core 0:
  check    `latchkey check --config`: wall clock and CPU time (user + system), medians of
           CHECK_RUNS runs.
  start    from the process's start until /.latchkey/health answers 200: wall clock, and the
           CPU time the process used by then (the steadier figure on a shared machine, where
           the wall clock waits for the core), medians of CHECK_RUNS starts; VmRSS then. The same config without its
           identities gives memory per route (against the smallest N) and per identity (the
           difference).
  request  small GETs to the last route, /rN-1/small.json (wrk, 64 connections, --duration),
           upstream nginx on core 1: requests/s and the proxy's CPU µs per request.
  callgrind  with --callgrind: instructions per request on that route (a second Latchkey
           under valgrind: CALLGRIND_REQUESTS sequential keep-alive GETs after a warm-up),
           counted on the event loop's thread (the one that routed them), and in the whole
           process: the difference is the background threads' work meanwhile, such as the
           once-a-second look at the secret files (at most 1,000 a second) and the token
           store's directory.
A start that takes longer than --route-start-timeout seconds is recorded as such and that
N's other measurements are skipped.
"""
import glob
import os
import resource
import statistics
import subprocess
import time

from bench_support import PROXY_CORE, callgrind_control, cpu_seconds, free_port, http_get, log, request_many, rss_kib

CHECK_RUNS = 3
CALLGRIND_REQUESTS = 2000


class RoutesScenarios:
    """Mixed into `Bench` (bench.py), whose processes, files, results and options it uses:
    spawn, secret_file, upstream_port, targets, wrk, callgrind_binary, callgrind_total, args."""

    def routes_config(self, count, port, identities):
        """N routes, each with its own credential file; `identities`: N lazy client-credentials
        identities too, which no route injects (the token URL is never called). Entries in
        YAML's flow style, the identities' common keys merged from an anchor: in block style,
        10,000 of each would pass the 4 MiB a config file may have."""
        lines = [f"server:\n  loops: 1\nlisteners:\n  - name: main\n    listen: 127.0.0.1:{port}\n",
                 f"store:\n  path: {os.path.join(self.work, 'routes-store')}\n",
                 f"x-identity: &identity {{ grant: client_credentials, token_url: \"http://127.0.0.1:{self.upstream_port}/token\", "
                 "acquire: lazy }\n",
                 "logging:\n  access_log: false\n",
                 # As many upstream connections kept as the small scenario's (64 clients).
                 "limits:\n  upstream_idle_connections: 64\ncredentials:\n"]
        for i in range(count):
            path = os.path.join(self.work, "secrets", f"route-{i}")
            if not os.path.exists(path):
                self.secret_file(f"route-{i}", self.token)
            lines.append(f"  c{i}: {{ file: {path} }}\n")
        if identities:
            lines.append("identities:\n")
            for i in range(count):
                lines.append(f"  id{i}: {{ <<: *identity, client_id: client-{i}, client_secret: {{ value: secret-{i} }} }}\n")
        lines.append("routes:\n")
        for i in range(count):
            lines.append(f"  - {{ name: r{i}, path: /r{i}, upstream: \"http://127.0.0.1:{self.upstream_port}\", "
                         f"inject: [{{ header: Authorization, value: \"Bearer {{token}}\", credential: c{i} }}] }}\n")
        conf = os.path.join(self.work, f"routes-{count}{'-identities' if identities else ''}.yaml")
        with open(conf, "w") as f:
            f.write("".join(lines))
        return conf

    def time_check(self, conf):
        """Median wall-clock and CPU seconds of `latchkey check --config`."""
        times, cpu = [], []
        for _ in range(CHECK_RUNS):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            done = subprocess.run(["taskset", "-c", PROXY_CORE, self.args.latchkey, "check", "--config", conf],
                                  capture_output=True, text=True)
            times.append(time.monotonic() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode != 0:
                raise SystemExit(f"bench: latchkey check refused {conf}: {done.stdout}{done.stderr}")
        return statistics.median(times), statistics.median(cpu)

    def start_routes_latchkey(self, name, conf, port, launcher=None):
        """Starts Latchkey on `conf`, by `launcher` (the argv before `serve`: valgrind and the
        binary) or as it is; returns the process and the seconds until /.latchkey/health
        answered and the CPU seconds it had used then, or None past --route-start-timeout."""
        started = time.monotonic()
        p = self.spawn(name, [*(launcher or [self.args.latchkey]), "serve", "--config", conf, "--loops", "1"], PROXY_CORE)
        deadline = started + self.args.route_start_timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                raise SystemExit(f"bench: {name} exited: " + self.read_log(name)[-2000:])
            try:
                if http_get(port, "/.latchkey/health", timeout=1.0)[0] == 200:
                    return p, (time.monotonic() - started, cpu_seconds(p.pid))
            except OSError:
                pass
            time.sleep(0.01)
        return p, None

    def stop(self, p):
        p.terminate()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        self.procs = [(n, q) for n, q in self.procs if q is not p]

    def run_routes(self):
        a = self.args
        self.routes_rows = {}
        for count in a.route_counts:
            row = self.routes_rows[count] = {}
            for identities in (False, True):
                port = free_port()
                conf = self.routes_config(count, port, identities)
                key = "identities" if identities else "routes"
                row[f"check_{key}"], row[f"check_cpu_{key}"] = self.time_check(conf)
                # Started as often as checked, the median kept: one start moves by a third
                # on this shared machine. The last one serves the rest.
                starts = []
                for attempt in range(CHECK_RUNS):
                    p, started = self.start_routes_latchkey(f"latchkey-routes-{count}", conf, port)
                    if started is None or attempt == CHECK_RUNS - 1:
                        break
                    starts.append(started)
                    self.stop(p)
                if started is None:
                    log(f"bench: routes N={count} {key}: no answer within {a.route_start_timeout} s")
                    self.stop(p)
                    continue
                starts.append(started)
                started = (statistics.median(w for w, _ in starts), statistics.median(c for _, c in starts))
                row[f"start_{key}"], row[f"start_cpu_{key}"] = started
                row[f"rss_{key}"], row[f"anon_{key}"] = rss_kib(p.pid), rss_kib(p.pid, "RssAnon")
                log(f"bench: routes N={count} {key}: check {row[f'check_{key}']:.2f} s (CPU {row[f'check_cpu_{key}']:.2f}), "
                    f"start {started[0]:.2f} s (CPU {started[1]:.2f}), RSS {row[f'rss_{key}'] / 1024:.1f} MiB")
                if identities:
                    self.targets["latchkey-routes"] = {"port": port, "pid": p.pid}
                    path = f"/r{count - 1}/small.json"
                    status, body = http_get(port, path)
                    if status != 200 or body != self.small_body:
                        raise SystemExit(f"bench: routes N={count}: {path} answered {status}")
                    self.wrk("latchkey-routes", path, 64, a.warmup)
                    runs = [self.wrk("latchkey-routes", path, 64, a.duration) for _ in range(a.rounds)]
                    del self.targets["latchkey-routes"]
                    row["rps"] = statistics.median(r["rps"] for r in runs)
                    row["cpu_us"] = statistics.median(r["proxy_cpu_us"] for r in runs)
                    log(f"bench: routes N={count}: {row['rps']:,.0f} req/s, {row['cpu_us']:.1f} µs/request")
                self.stop(p)
                if identities and a.callgrind:
                    row["instructions"], row["process_instructions"] = self.callgrind_routes(count, conf, port) or (None, None)

    def callgrind_routes(self, count, conf, port):
        """Instructions per GET to the last route, under callgrind; None if it did not start."""
        binary = self.callgrind_binary("the routes scenario's instruction counts")
        if not binary:
            return None
        out = os.path.join(self.work, f"callgrind-routes-{count}.out")
        p, started = self.start_routes_latchkey(f"latchkey-routes-callgrind-{count}", conf, port,
                                                launcher=["valgrind", "--tool=callgrind", "--separate-threads=yes",
                                                          f"--callgrind-out-file={out}", binary])
        try:
            if started is None:
                return None
            path = f"/r{count - 1}/small.json"
            request_many(port, path, 200)
            callgrind_control(p.pid, "--zero")
            request_many(port, path, CALLGRIND_REQUESTS)
            callgrind_control(p.pid, "--dump")
            threads = self.thread_totals(out)
            loop = sum(total for total, routed in threads if routed) / CALLGRIND_REQUESTS
            process = sum(total for total, _ in threads) / CALLGRIND_REQUESTS
            log(f"bench: routes N={count}: {loop:,.0f} instructions/request on the loop, {process:,.0f} in the process")
            return loop, process
        finally:
            self.stop(p)

    @staticmethod
    def thread_totals(out):
        """Each thread's instruction total in callgrind's only dump (`OUT.1-TT`, one file per
        thread with --separate-threads), and whether the thread routed requests (the event
        loop: its profile names RouteTable; at 10,000 routes and identities a background
        thread can execute about as much)."""
        threads = []
        for path in glob.glob(out + ".1-*"):
            with open(path) as f:
                text = f.read()
            total = next(int(line.split()[1]) for line in text.splitlines() if line.startswith(("totals:", "summary:")))
            threads.append((total, "RouteTable" in text))
        if not any(routed for _, routed in threads):
            raise SystemExit(f"bench: no thread in callgrind's dump {out} routed a request")
        return threads

    def routes_target_rows(self):
        """The targets table's rows for the configuration's size: start-up under a second
        with the most routes and identities measured, and the cost of a request flat in the
        number of routes (instructions on the loop when counted, the repeatable figure; else
        CPU time), within 10% of the fewest routes' from the fewest to the most."""
        rows = getattr(self, "routes_rows", None)
        if not rows or len(rows) < 2:
            return []
        first, last = min(rows), max(rows)
        out = []
        start = rows[last].get("start_identities")
        if start is not None:
            out.append(f"| {last:,} routes and {last:,} identities: start-up < 1 s | {start:.2f} s "
                       f"(CPU {rows[last]['start_cpu_identities']:.2f} s) | {'met' if start < 1 else '**not met**'} |")
        for key, what, unit in (("instructions", "instructions on the loop", ",.0f"), ("cpu_us", "CPU µs", ".1f")):
            a, b = rows[first].get(key), rows[last].get(key)
            if a and b:
                out.append(f"| cost per request flat from {first:,} to {last:,} routes (within 10%) | {what}: "
                           f"{format(b, unit)} vs {format(a, unit)} ({b / a:.2f}×) | "
                           f"{'met' if b <= 1.1 * a else '**not met**'} |")
                break
        return out

    def routes_tables(self):
        rows = getattr(self, "routes_rows", None)
        if not rows:
            return []
        fmt = lambda v, f, scale=1: "—" if v is None else format(v / scale, f)
        pair = lambda r, key: f"{fmt(r.get(key), '.2f')} ({fmt(r.get(key.replace('_', '_cpu_', 1)), '.2f')})"
        out = ["### Configuration size: N routes (each its own credential file) and N lazy identities, one listener, one loop",
               "",
               f"Seconds as wall clock (CPU time in parentheses), medians of {CHECK_RUNS} runs; `+ id.`: the same routes and N identities.",
               "",
               "| N | check s | check s + id. | start s | start s + id. | RSS MiB | RSS MiB + id. | requests/s | "
               "proxy CPU µs/request | instructions/request, loop (process) |",
               "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for count, r in rows.items():
            out.append(f"| {count:,} | {pair(r, 'check_routes')} | {pair(r, 'check_identities')} | "
                       f"{pair(r, 'start_routes')} | {pair(r, 'start_identities')} | "
                       f"{fmt(r.get('rss_routes'), '.1f', 1024)} | {fmt(r.get('rss_identities'), '.1f', 1024)} | "
                       f"{fmt(r.get('rps'), ',.0f')} | {fmt(r.get('cpu_us'), '.1f')} | "
                       f"{fmt(r.get('instructions'), ',.0f')} ({fmt(r.get('process_instructions'), ',.0f')}) |")
        first, last = min(rows), max(rows)
        a, b = rows[first], rows[last]
        if last > first and "rss_routes" in a and "rss_routes" in b and "rss_identities" in b:
            per_route = (b["rss_routes"] - a["rss_routes"]) / (last - first)
            per_identity = (b["rss_identities"] - b["rss_routes"]) / last
            out += ["", f"Memory (VmRSS after start): {per_route:.1f} KiB per route (N = {first:,} → {last:,}), "
                    f"{per_identity:.1f} KiB per identity (N = {last:,}, with and without them)."]
        out.append("")
        return out
