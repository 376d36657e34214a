"""Instructions per request of Latchkey, nginx and haproxy, each under valgrind's callgrind
in the same run: the `small` scenario's GET, and a 64 KiB POST with Content-Length (the
`upload` scenario's). CPU time on a shared machine moves with its neighbours; instruction
counts do not, so these are the repeatable side of the ratios to nginx.

Each proxy runs a second time under callgrind with its main configuration, one worker or
thread: warm-up requests on one keep-alive connection, the counters zeroed, sequential
requests from Python's http.client, the counters dumped. Callgrind counts user space only:
the system calls' own work in the kernel is not in these figures (the wrk runs' CPU time
has it), so they are the share of the cost a proxy's own code decides."""

import os
import statistics

from bench_support import callgrind_control, free_port, log, request_many, wait_port, PROXY_CORE

# (results key, label, what is counted, path, method, body, requests counted per round)
PEER_RUNS = (
    ("peer-small", "small GET (100-byte JSON)", "small GETs", "/small.json", "GET", None, 2000),
    ("peer-upload", "64 KiB POST, Content-Length", "64 KiB POSTs", "/upload", "POST", b"x" * 65536, 500),
)
PEER_ROUNDS = 2


class PeerInstructionCounts:
    """Mixed into `Bench` (bench.py): uses spawn, read_log, nginx_conf, nginx_proxy,
    haproxy_conf, latchkey_yaml, results, work, notes, and callgrind_binary,
    callgrind_total (bench_oauth.py)."""

    def callgrind_peers(self):
        """Counts each proxy's instructions per request for PEER_RUNS."""
        binary = self.callgrind_binary("the peers' instruction counts")
        if not binary:
            return
        for name, argv, port in self.peer_commands(binary):
            out = os.path.join(self.work, f"{name}-peers-callgrind.out")
            p = self.spawn(f"{name}-peers-callgrind", ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                           PROXY_CORE)
            try:
                if not wait_port(port, p, timeout=180):
                    self.notes.append(f"callgrind: {name} did not start: {self.read_log(name + '-peers-callgrind')[-300:]}")
                    continue
                self.count_peer(name, p.pid, port, out)
            finally:
                p.terminate()
                p.wait(timeout=60)

    def peer_commands(self, latchkey_binary):
        """(name, argv, port) of each proxy measured."""
        commands = []
        if self.args.latchkey:
            port = free_port()
            conf = os.path.join(self.work, "latchkey-peers-callgrind.yaml")
            with open(conf, "w") as f:
                f.write(self.latchkey_yaml(port))
            commands.append(("latchkey", [latchkey_binary, "serve", "--config", conf, "--loops", "1"], port))
        port = free_port()
        commands.append(("nginx", self.nginx_conf("nginx-callgrind", self.nginx_proxy(port)), port))
        if "haproxy" in self.targets:
            port = free_port()
            commands.append(("haproxy", ["haproxy", "-db", "-f", self.haproxy_conf("haproxy-callgrind", port)], port))
        return commands

    def count_peer(self, name, pid, port, out):
        for rnd in range(PEER_ROUNDS):
            for key, _, _, path, method, body, count in PEER_RUNS:
                expect = b"%d\n" % len(body) if body else None
                request_many(port, path, count // 10, method, body, expect)
                callgrind_control(pid, "--zero")
                request_many(port, path, count, method, body, expect)
                callgrind_control(pid, "--dump")
                per_request = self.callgrind_total(out) / count
                self.results.setdefault((key, name), []).append({"instructions": per_request})
                log(f"bench: callgrind round {rnd + 1}/{PEER_ROUNDS} {name:8} {key:12} {per_request:,.0f} instructions/request")

    def peer_tables(self):
        names = [n for n in ("latchkey", "nginx", "haproxy") if (PEER_RUNS[0][0], n) in self.results]
        if not names:
            return []
        out = ["### Instructions per request under callgrind, the proxies in the same run (user space only)", "",
               "| request | " + " | ".join(names) + (" | Latchkey ÷ nginx |" if "latchkey" in names and "nginx" in names else " |"),
               "| --- | " + " | ".join("---:" for _ in names) + (" | ---: |" if "latchkey" in names and "nginx" in names else " |")]
        for key, label, _, _, _, _, _ in PEER_RUNS:
            counts = {n: statistics.median(r["instructions"] for r in self.results[(key, n)])
                      for n in names if (key, n) in self.results}
            row = f"| {label} | " + " | ".join(f"{counts[n]:,.0f}" if n in counts else "—" for n in names)
            if "latchkey" in counts and "nginx" in counts:
                row += f" | {counts['latchkey'] / counts['nginx']:.2f}×"
            out.append(row + " |")
        out += ["", f"Median of {PEER_ROUNDS} rounds; {' and '.join(f'{r[6]:,} {r[2]}' for r in PEER_RUNS)} per round, "
                "sequential on one keep-alive connection (Python's http.client).", ""]
        return out
