"""The `upload` scenario: POST bodies through the proxy, the other direction of the `large`
scenario's 1 MiB GETs.

Bodies of 64 KiB (64 connections) and 1 MiB (16 connections), each sent with
Content-Length and sent chunked (16 KiB chunks), by wrk with a Lua script that builds the
request once (wrk -t1, keep-alive). Targets: direct (the upstream itself), Latchkey, nginx
and haproxy as in the `small` scenario (each injecting Authorization), nginx streaming the
body (`proxy_request_buffering off`, as Latchkey and haproxy do), and nginx-buffered:
nginx's default, which reads the whole body first, to a temporary file past its 16 KiB
client_body_buffer_size, and only then connects to the upstream.

The upstream's /upload reads the whole body before it answers (a `return` would answer
first and discard the body afterwards): it proxies to itself with proxy_request_buffering
on, which reads the body into memory, passes none of it on, and answers with the body's
length from /uploaded; so every answer is a few bytes and says what arrived.

Per run: requests/s, MB/s uploaded (requests/s × body size), p50/p99, the proxy's CPU µs
per request and per MB uploaded. Interleaved rounds, the target order rotated each round;
medians. With --callgrind, Latchkey's instructions per request for each upload and for
the 1 MiB download (the `large` scenario's GET), under valgrind's callgrind: a second
Latchkey with the main one's configuration, one connection, warm-up, counters zeroed,
sequential keep-alive requests from Python's http.client (the head in one send, then the
body in one, or each chunk with its framing in one), counters dumped."""

import os
import statistics
import sys

from bench_support import MIB, PROXY_CORE, callgrind_control, free_port, log, request_many, wait_port

CHUNK = 16 * 1024
# (results key, body size, its label, wrk connections, framing), in table order.
UPLOADS = tuple((f"upload-{tag}-{framing}", size, label, connections, framing)
                for size, tag, label, connections in ((64 * 1024, "64k", "64 KiB", 64), (MIB, "1m", "1 MiB", 16))
                for framing in ("length", "chunked"))
FRAMING_LABEL = {"length": "Content-Length", "chunked": f"chunked, {CHUNK // 1024} KiB chunks"}
# Requests counted per callgrind run, by body size, and downloads counted: a few seconds
# each under valgrind.
CALLGRIND_REQUESTS = {64 * 1024: 1000, MIB: 100}
CALLGRIND_DOWNLOADS = 100
CALLGRIND_ROUNDS = 2


class UploadScenarios:
    """Mixed into `Bench` (bench.py), whose processes, targets, results and options it uses:
    spawn, read_log, nginx_conf, nginx_proxy, latchkey_yaml, wrk, wrk_script, targets,
    results, work, args, notes; and callgrind_binary, start_callgrind_latchkey,
    callgrind_total (bench_oauth.py)."""

    # ---- the upstream's side -----------------------------------------------------------------
    @staticmethod
    def upload_upstream(port):
        """The upstream nginx's connections to itself, for /upload."""
        return f"""
    upstream upload_self {{
        server 127.0.0.1:{port};
        keepalive 16;
        keepalive_requests 100000000;
    }}"""

    @staticmethod
    def upload_locations():
        """/upload reads the whole body (into memory: the buffer holds 1 MiB), then answers
        with its length; `return` alone would answer before the body has arrived."""
        return """
        location = /upload {
            client_max_body_size 2m;
            client_body_buffer_size 2m;
            proxy_pass http://upload_self/uploaded;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_method GET;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Body-Length $content_length;
        }
        location = /uploaded { return 200 "$http_x_body_length\\n"; }"""

    # ---- targets -----------------------------------------------------------------------------
    def start_upload_targets(self):
        """The main targets, and nginx-buffered next to nginx; each checked with one upload
        of every kind."""
        self.upload_targets = {}
        for name, t in self.targets.items():
            self.upload_targets[name] = t
            if name == "nginx":
                port = free_port()
                p = self.spawn("nginx-buffered", self.nginx_conf("nginx-buffered",
                                                                 self.nginx_proxy(port, request_buffering=True)),
                               PROXY_CORE)
                if not wait_port(port, p):
                    sys.exit("bench: nginx-buffered did not start: " + self.read_log("nginx-buffered"))
                self.upload_targets["nginx-buffered"] = {"port": port, "pid": p.pid}
        for name, t in self.upload_targets.items():
            for _, size, _, _, framing in UPLOADS:
                request_many(t["port"], "/upload", 1, "POST", upload_body(size, framing), expect=b"%d\n" % size)
        log("bench: upload: every target forwards whole bodies, with Content-Length and chunked")

    def upload_script(self, size, framing):
        """wrk's script for one kind of upload."""
        if framing == "length":
            lua = f'wrk.method = "POST"\nwrk.body = string.rep("x", {size})\n'
        else:
            # wrk.format frames a body with Content-Length; with no request() in the script,
            # wrk.init formats the request once and wrk sends those bytes every time.
            lua = (f'local chunk = string.format("%x\\r\\n", {CHUNK}) .. string.rep("x", {CHUNK}) .. "\\r\\n"\n'
                   'wrk.format = function()\n'
                   '   return "POST " .. wrk.path .. " HTTP/1.1\\r\\nHost: " .. wrk.headers["Host"] ..\n'
                   '          "\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n" ..\n'
                   f'          string.rep(chunk, {size // CHUNK}) .. "0\\r\\n\\r\\n"\n'
                   'end\n')
        return self.wrk_script(f"upload-{size}-{framing}.lua", lua)

    # ---- rounds ------------------------------------------------------------------------------
    def run_upload_rounds(self):
        a = self.args
        names = list(self.upload_targets)
        added = [n for n in names if n not in self.targets]
        self.targets.update(self.upload_targets)
        try:
            log(f"bench: upload: warm-up ({a.warmup}s per target)")
            for name in names:
                self.wrk(name, "/upload", 64, a.warmup, script=self.upload_script(64 * 1024, "length"))
            for rnd in range(a.rounds):
                for key, size, label, connections, framing in UPLOADS:
                    script = self.upload_script(size, framing)
                    for name in names[rnd % len(names):] + names[:rnd % len(names)]:
                        r = self.wrk(name, "/upload", connections, a.duration, script=script)
                        r["upload_mbps"] = r["rps"] * size / 1e6
                        r["proxy_cpu_us_per_mb"] = r["proxy_cpu_us"] * 1e6 / size if r["proxy_cpu_us"] else None
                        self.results.setdefault((key, name), []).append(r)
                        cpu = f"{r['proxy_cpu_us']:.1f} µs/req" if r["proxy_cpu_us"] is not None else "-"
                        log(f"bench: round {rnd + 1}/{a.rounds} {key:22} {name:14} {r['rps']:8.0f} req/s "
                            f"{r['upload_mbps']:7.0f} MB/s up p99 {r['p99_ms']:7.2f} ms cpu {cpu} errors {r['errors']}")
        finally:
            for name in added:
                self.targets.pop(name)

    # ---- callgrind ---------------------------------------------------------------------------
    def callgrind_upload(self):
        """Latchkey's instructions per upload of each kind, and per 1 MiB download."""
        binary = self.callgrind_binary("upload instruction counts")
        if not binary:
            return
        port = free_port()
        conf = os.path.join(self.work, "latchkey-upload-callgrind.yaml")
        with open(conf, "w") as f:
            f.write(self.latchkey_yaml(port))
        p, out = self.start_callgrind_latchkey("latchkey-upload-callgrind", binary, conf, [port])
        runs = [(key, "/upload", CALLGRIND_REQUESTS[size], "POST", upload_body(size, framing), b"%d\n" % size)
                for key, size, _, _, framing in UPLOADS]
        runs.append(("download", "/1m.bin", CALLGRIND_DOWNLOADS, "GET", None, None))
        try:
            for rnd in range(CALLGRIND_ROUNDS):
                for key, path, count, method, body, expect in runs:
                    request_many(port, path, max(2, count // 10), method, body, expect, timeout=300)
                    callgrind_control(p.pid, "--zero")
                    request_many(port, path, count, method, body, expect, timeout=300)
                    callgrind_control(p.pid, "--dump")
                    per_request = self.callgrind_total(out) / count
                    self.results.setdefault(("callgrind-upload", key), []).append({"instructions": per_request})
                    log(f"bench: callgrind round {rnd + 1}/{CALLGRIND_ROUNDS} {key:22} "
                        f"{per_request:,.0f} instructions/request")
        finally:
            p.terminate()
            p.wait(timeout=60)

    # ---- report ------------------------------------------------------------------------------
    def upload_tables(self):
        names = [n for n in getattr(self, "upload_targets", {}) if (UPLOADS[0][0], n) in self.results]
        if not names:
            return []
        fmt = lambda v, f: "—" if v is None else format(v, f)
        ins = {key: statistics.median(r["instructions"] for r in self.results[("callgrind-upload", key)])
               for key in [u[0] for u in UPLOADS] + ["download"] if ("callgrind-upload", key) in self.results}
        out = []
        for size, label, connections in dict.fromkeys((size, label, conns) for _, size, label, conns, _ in UPLOADS):
            out += [f"### Uploads, {label} POST bodies, {connections} connections", "",
                    "| target | framing | requests/s | MB/s uploaded | p50 ms | p99 ms | proxy CPU µs/request | "
                    "proxy CPU µs/MB | proxy core busy | upstream CPU µs/request | instructions/request | errors |",
                    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for key, _, _, _, framing in (u for u in UPLOADS if u[1] == size):
                for n in names:
                    m = lambda field: self.med(key, n, field)
                    errors = sum(r["errors"] for r in self.results[(key, n)])
                    count = ins.get(key) if n == "latchkey" else None
                    out.append(f"| {n} | {FRAMING_LABEL[framing]} | {m('rps'):,.0f} | {m('upload_mbps'):,.0f} | "
                               f"{m('p50_ms'):.2f} | {m('p99_ms'):.2f} | {fmt(m('proxy_cpu_us'), ',.1f')} | "
                               f"{fmt(m('proxy_cpu_us_per_mb'), ',.0f')} | {fmt(m('proxy_cpu_util'), '.0%')} | "
                               f"{m('upstream_cpu_us'):,.1f} | {fmt(count, ',.0f')} | {errors} |")
            out.append("")
        if ins:
            counts = ", ".join(f"{n:,} for {label}" for n, label in
                               dict.fromkeys((CALLGRIND_REQUESTS[size], label) for _, size, label, _, _ in UPLOADS))
            line = (f"Instructions per request: Latchkey under callgrind, median of {CALLGRIND_ROUNDS} rounds of "
                    f"sequential keep-alive POSTs on one connection ({counts}; Python's http.client)")
            if "download" in ins:
                line += (f"; the download counterpart, the `large` scenario's GET of 1 MiB: {ins['download']:,.0f} "
                         f"instructions per request ({CALLGRIND_DOWNLOADS} GETs)")
            out += [line + ".", ""]
        return out


def upload_body(size, framing):
    """A body for request_many: bytes (sent with Content-Length) or a list of chunks."""
    return b"x" * size if framing == "length" else [b"x" * CHUNK] * (size // CHUNK)
