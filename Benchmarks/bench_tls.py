"""The `tls` scenario: Latchkey's TLS listener against nginx's `ssl`, on the same ECDSA P-256
certificate (made here with the openssl CLI), both pinned to the proxy core and proxying to
the same upstream with the credential, like the plain targets.

  new connections  wrk over https with `Connection: close`: every request is a full
                   handshake on a new connection (wrk resumes no sessions), 16 connections:
                   connections/s and the proxy's CPU µs per connection.
  kept-alive GETs  wrk over https, the small GET on 64 kept-alive connections: requests/s
                   and the proxy's CPU µs per request (to set beside the plain small GETs:
                   what the record layer costs).

Both sides offer TLS 1.2 and 1.3 with Mozilla's intermediate ciphers, groups X25519,
P-256, P-384, and a session cache; wrk negotiates TLS 1.3 with X25519."""

import os
import statistics
import subprocess

from bench_support import PROXY_CORE, free_port, log, wait_port

CIPHERS = ("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
           "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
           "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305")


class TLSScenarios:
    # (scenario key, title, path, connections, extra wrk arguments)
    TLS_RUNS = (("tls_new", "new connections", "/small.json", 16, ["-H", "Connection: close"]),
                ("tls_keepalive", "kept-alive GETs", "/small.json", 64, []))

    def tls_wanted(self):
        return "tls" in self.args.scenarios

    def make_tls_certificate(self):
        """One ECDSA P-256 key and a certificate for 127.0.0.1, for both servers."""
        d = os.path.join(self.work, "tls")
        os.makedirs(d)
        os.chmod(d, 0o755)
        key, cert = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
        for argv in (["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
                     ["req", "-x509", "-new", "-key", key, "-subj", "/CN=127.0.0.1", "-days", "7", "-sha256",
                      "-addext", "subjectAltName=IP:127.0.0.1", "-out", cert]):
            done = subprocess.run(["openssl"] + argv, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"bench: openssl {argv[0]}: {done.stderr}")
        os.chmod(key, 0o600)
        return cert, key

    def start_tls_targets(self):
        cert, key = self.make_tls_certificate()
        self.tls_targets = {}
        if "latchkey" in self.targets:
            port = free_port()
            conf = os.path.join(self.work, "latchkey-tls.yaml")
            plain = f"    listen: 127.0.0.1:{port}\n"
            with open(conf, "w") as f:
                f.write(self.latchkey_yaml(port).replace(
                    plain, plain + f"    tls:\n      cert_file: {cert}\n      key_file: {key}\n", 1))
            p = self.spawn("latchkey-tls", [self.args.latchkey, "serve", "--config", conf, "--loops", "1"], PROXY_CORE)
            if not wait_port(port, p):
                raise SystemExit("bench: latchkey-tls did not start: " + self.read_log("latchkey-tls")[-2000:])
            self.tls_targets["latchkey-tls"] = {"port": port, "pid": p.pid, "scheme": "https"}
        if "nginx" in self.targets:
            port = free_port()
            argv = self.nginx_conf("nginx-tls", self.nginx_proxy(port, f"""
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers {CIPHERS};
        ssl_prefer_server_ciphers off;
        ssl_ecdh_curve X25519:prime256v1:secp384r1;
        ssl_session_cache shared:TLS:10m;"""))
            p = self.spawn("nginx-tls", argv, PROXY_CORE)
            if not wait_port(port, p):
                raise SystemExit("bench: nginx-tls did not start: " + self.read_log("nginx-tls"))
            self.tls_targets["nginx-tls"] = {"port": port, "pid": p.pid, "scheme": "https"}
        self.verify_tls()

    def verify_tls(self):
        """Each answers the small file over TLS and injects the credential."""
        for name, t in self.tls_targets.items():
            for path, want in (("/small.json", "200"), ("/auth", "200")):
                done = subprocess.run(["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
                                       f"https://127.0.0.1:{t['port']}{path}"], capture_output=True, text=True)
                if done.stdout != want:
                    raise SystemExit(f"bench: {name}: {path} over TLS answered {done.stdout!r} {done.stderr}")

    def run_tls_rounds(self):
        a = self.args
        names = list(self.tls_targets)
        self.targets.update(self.tls_targets)
        try:
            for name in names:
                self.wrk(name, "/small.json", 64, a.warmup)
            for rnd in range(a.rounds):
                for key, title, path, conns, extra in self.TLS_RUNS:
                    for name in names[rnd % len(names):] + names[:rnd % len(names)]:
                        r = self.wrk(name, path, conns, a.duration, extra)
                        self.results.setdefault((key, name), []).append(r)
                        log(f"bench: round {rnd + 1}/{a.rounds} tls {title:15} {name:12} {r['rps']:9.0f}/s "
                            f"p99 {r['p99_ms']:7.2f} ms cpu {r['proxy_cpu_us']:.1f} µs errors {r['errors']}")
        finally:
            for name in names:
                self.targets.pop(name, None)

    def tls_tables(self):
        if not getattr(self, "tls_targets", None):
            return []
        med = lambda key, name, field: statistics.median(r[field] for r in self.results[(key, name)])
        out = []
        for key, title, _, conns, _ in self.TLS_RUNS:
            unit = "connection" if key == "tls_new" else "request"
            out += [f"### TLS, {title}: 100-byte JSON, {conns} connections"
                    + (" (`Connection: close`, a full handshake each)" if key == "tls_new" else ""),
                    "",
                    f"| target | {unit}s/s | p50 ms | p99 ms | proxy CPU µs/{unit} | proxy core busy | errors |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for name in self.tls_targets:
                errors = sum(r["errors"] for r in self.results[(key, name)])
                out.append(f"| {name} | {med(key, name, 'rps'):,.0f} | {med(key, name, 'p50_ms'):.2f} | "
                           f"{med(key, name, 'p99_ms'):.2f} | {med(key, name, 'proxy_cpu_us'):.1f} | "
                           f"{med(key, name, 'proxy_cpu_util'):.0%} | {errors} |")
            out.append("")
        return out
