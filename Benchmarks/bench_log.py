"""The `stucklog` scenario: does a log output nobody reads slow Latchkey down?

Two more Latchkeys with the main one's route and the access log on: one logs to a file,
the other to a pipe that nothing ever reads (a stuck log shipper, `latchkey serve | less`
left paused). Small GETs, 64 connections, in alternating runs. The target: the stuck one
serves at least 90% of the logging one's requests/s, and counts what it could not write in
`latchkey_log_lines_dropped_total`. Before the log writer had a thread of its own, the
stuck one served about 55 requests/s."""

import os
import re
import statistics
import subprocess

from bench_support import PROXY_CORE, free_port, http_get, log, wait_port


class LogScenarios:
    LOG_TARGETS = ("log-file", "log-stuck")

    def start_log_targets(self):
        """Starts both, on the proxy's core; their stderr goes to a file or to a pipe."""
        self.log_targets = {}
        for name in self.LOG_TARGETS:
            port = free_port()
            conf = os.path.join(self.work, f"{name}.yaml")
            with open(conf, "w") as f:
                f.write(self.latchkey_yaml(port).replace("access_log: false", "access_log: true"))
            stderr = open(os.path.join(self.work, f"{name}.log"), "wb") if name == "log-file" else subprocess.PIPE
            p = subprocess.Popen(["taskset", "-c", PROXY_CORE, self.args.latchkey, "serve", "--config", conf, "--loops", "1"],
                                 stdout=subprocess.DEVNULL, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
            self.procs.append((name, p))
            if not wait_port(port, p):
                raise SystemExit(f"bench: {name} did not start")
            self.log_targets[name] = {"port": port, "pid": p.pid}

    def run_log_rounds(self):
        a = self.args
        self.targets.update(self.log_targets)
        try:
            for name in self.LOG_TARGETS:
                self.wrk(name, "/small.json", 64, a.warmup)
            for rnd in range(a.rounds):
                order = self.LOG_TARGETS if rnd % 2 == 0 else tuple(reversed(self.LOG_TARGETS))
                for name in order:
                    r = self.wrk(name, "/small.json", 64, a.duration)
                    self.results.setdefault(("stucklog", name), []).append(r)
                    log(f"bench: round {rnd + 1}/{a.rounds} stucklog {name:9} {r['rps']:9.0f} req/s "
                        f"cpu {r['proxy_cpu_us']:.1f} µs/req errors {r['errors']}")
            status, body = http_get(self.log_targets["log-stuck"]["port"], "/.latchkey/metrics")
            found = re.search(rb"^latchkey_log_lines_dropped_total (\d+)", body, re.M) if status == 200 else None
            self.log_dropped = int(found.group(1)) if found else None
        finally:
            for name in self.LOG_TARGETS:
                self.targets.pop(name, None)

    def log_tables(self):
        if ("stucklog", "log-stuck") not in self.results:
            return []
        med = lambda name, key: statistics.median(r[key] for r in self.results[("stucklog", name)])
        ratio = med("log-stuck", "rps") / med("log-file", "rps")
        out = ["### Access log to a file vs to a pipe nobody reads: small GETs, 64 connections",
               "",
               "| Latchkey logging to | requests/s | proxy CPU µs/request | errors |",
               "| --- | ---: | ---: | ---: |"]
        for name, label in (("log-file", "a file"), ("log-stuck", "a pipe nobody reads")):
            errors = sum(r["errors"] for r in self.results[("stucklog", name)])
            out.append(f"| {label} | {med(name, 'rps'):,.0f} | {med(name, 'proxy_cpu_us'):.1f} | {errors} |")
        dropped = "not read" if self.log_dropped is None else f"{self.log_dropped:,}"
        out += ["", f"Stuck ÷ file: {ratio:.2f} of the requests/s (target ≥ 0.90: "
                f"{'met' if ratio >= 0.9 else '**not met**'}); lines the stuck one dropped and counted in "
                f"`latchkey_log_lines_dropped_total`: {dropped}.", ""]
        return out
