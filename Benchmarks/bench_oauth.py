"""The OAuth engine's scenarios of Latchkey's benchmark (`auth`, `storm`): the part of
`Bench` that starts the token endpoint, adds identities and routes to Latchkey's config,
fires the 1,000-request bursts and reports them. Used by bench.py; see its docstring.

Identities (client-credentials grant against Benchmarks/token_endpoint.py, every token the
upstream's expected `Bearer` value, so that nginx's `/auth` location checks each answer):
  valid      acquired at start (eager), lifetime one day: the token is always valid.
  expiring   lifetime STORM_TOKEN_LIFETIME s, no clock skew, no proactive refresh: a burst
             sent once that lifetime is over meets a token that has just expired.
  fresh-N    lazy, one per round, untouched until its burst: the burst is the first use.
  session    a session recipe (`grant: recipe`): one step, POST /session, whose answer's
             `session_id` (the same token) is captured; made at start, lifetime one day.
Routes /static (the static credential), /oauth (valid), /recipe (session, the capture by
name: `Bearer {session_id}`), /expiring and /fresh-N all have the same shape: prefix
stripped, one `Authorization` header injected.
"""
import asyncio
import datetime
import glob
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import time

from bench_support import (LOAD_CORE, PROXY_CORE, callgrind_control, cpu_seconds, free_port, http_get, log,
                           percentile, read_response, request_many, wait_port)

HERE = os.path.dirname(os.path.abspath(__file__))
LONG_TOKEN_LIFETIME = 86400
STORM_TOKEN_LIFETIME = 2
# The callgrind instance's `valid` identity has a client of its own, so that the counts of
# the measured instance's clients stay exact.
CLIENTS = {"valid": "bench-valid", "expiring": "bench-expiring", "fresh": "bench-fresh", "callgrind": "bench-callgrind",
           "session": "bench-session", "callgrind-session": "bench-callgrind-session"}
# The routes whose instructions per request callgrind counts. `libcurl` is `static` kept on
# libcurl's full transfers (issue 16: `http2: true` keeps a route there; over plain http it
# still speaks HTTP/1.1), the others go on Latchkey's own HTTP/1.1 exchanges.
CALLGRIND_ROUTES = ("static", "libcurl", "oauth", "recipe")
# The auth scenario's round: this many pairs of runs, --duration split among them.
AUTH_PAIRS = 5
CALLGRIND_REQUESTS = 2000
CALLGRIND_ROUNDS = 2
# What a storm burst meets, in table order: the baseline first.
STORM_STATES = {"valid": "valid token (baseline)", "expired": "token just expired",
                "fresh": "no token yet (first use)"}


class OAuthScenarios:
    """Mixed into `Bench` (bench.py), whose processes, files, results and options it uses:
    spawn, read_log, secret_file, token_file, upstream_port, targets, results, med, args."""

    def oauth_wanted(self):
        return "latchkey" in self.args.targets and bool({"auth", "storm"} & set(self.args.scenarios))

    # ---- the token endpoint -----------------------------------------------------------------
    def start_token_endpoint(self):
        port = free_port()
        self.client_secret_file = self.secret_file("client_secret", secrets.token_hex(16))
        lifetimes = {client: STORM_TOKEN_LIFETIME if client == CLIENTS["expiring"] else LONG_TOKEN_LIFETIME
                     for client in CLIENTS.values()}
        argv = [sys.executable, os.path.join(HERE, "token_endpoint.py"), "--port", str(port),
                "--secret-file", self.client_secret_file, "--token-file", self.token_file]
        for client, seconds in lifetimes.items():
            argv += ["--client", f"{client}={seconds}"]
        p = self.spawn("token-endpoint", argv, LOAD_CORE)
        if not wait_port(port, p):
            sys.exit("bench: the token endpoint did not start: " + self.read_log("token-endpoint")[-2000:])
        self.token_port = port
        self.expiring_stale_at = None  # when the expiring identity's token is surely expired

    def token_requests(self):
        """Token requests answered so far, by client id."""
        status, body = http_get(self.token_port, "/counts")
        if status != 200:
            sys.exit(f"bench: the token endpoint answered {status} for /counts")
        return json.loads(body)

    def oauth_config(self, valid_client=CLIENTS["valid"], session_client=CLIENTS["session"], with_fresh=True):
        """Latchkey's `identities:` section and the routes to append to `routes:`, one line
        each (the identities share their token endpoint through a YAML merge key)."""
        fresh = ([f"fresh-{n + 1}" for n in range(self.args.storm_rounds)]
                 if with_fresh and "storm" in self.args.scenarios else [])
        identities = [("valid", valid_client, "acquire: eager"),
                      ("expiring", CLIENTS["expiring"], "clock_skew: 0s, refresh_ahead: 0s")]
        identities += [(name, CLIENTS["fresh"], "acquire: lazy") for name in fresh]
        sources = [("static", "Bearer {token}", "credential: bench"), ("oauth", "Bearer {token}", "identity: valid"),
                   ("recipe", "Bearer {session_id}", "identity: session"), ("expiring", "Bearer {token}", "identity: expiring")]
        sources += [(name, "Bearer {token}", f"identity: {name}") for name in fresh]
        upstream = f"http://127.0.0.1:{self.upstream_port}"
        # A store of the run's own: tokens of an earlier run must not make a fresh
        # identity's storm find a token.
        return (f"store: {{ path: {os.path.join(self.work, 'token-store')} }}\n"
                f"x-client-credentials: &client_credentials\n"
                f"  grant: client_credentials\n"
                f"  token_url: http://127.0.0.1:{self.token_port}/token\n"
                f"  client_secret: {{ file: {self.client_secret_file} }}\n"
                f"identities:\n"
                + "".join(f"  {name}: {{ <<: *client_credentials, client_id: {client}, {extra} }}\n"
                          for name, client, extra in identities)
                + f"  session:\n"
                  f"    grant: recipe\n"
                  f"    acquire: eager\n"
                  f"    lifetime: 1d\n"
                  f"    steps:\n"
                  f"      - name: session\n"
                  f"        request: {{ method: POST, url: 'http://127.0.0.1:{self.token_port}/session', form: {{ client: {session_client} }} }}\n"
                  f"        capture: {{ session_id: {{ json: session_id }} }}\n",
                "".join(f"  - {{ name: {name}, path: /{name}, upstream: {upstream},\n"
                        f"      inject: [{{ header: Authorization, value: \"{template}\", {source} }}] }}\n"
                        for name, template, source in sources))

    def verify_oauth(self):
        """Every identity route answers /auth (the upstream's credential check) with 200,
        which also gives the expiring identity its first token; fresh ones stay untouched."""
        port = self.targets["latchkey"]["port"]
        for route in ("static", "oauth", "recipe", "expiring"):
            status, body = http_get(port, f"/{route}/auth")
            if status != 200:
                sys.exit(f"bench: latchkey /{route}/auth answered {status}: {body[:200]!r} "
                         f"(token endpoint log: {self.read_log('token-endpoint')[-500:]!r})")
        self.expiring_stale_at = time.monotonic() + STORM_TOKEN_LIFETIME + 0.2
        counts = self.token_requests()
        if counts != {CLIENTS["valid"]: 1, CLIENTS["expiring"]: 1, CLIENTS["session"]: 1}:
            sys.exit(f"bench: expected one token request for each of the valid, expiring and session identities, got {counts}")
        log("bench: the OAuth routes inject their identity's token (one token request each)")

    # ---- auth: static credential vs OAuth identity under wrk ------------------------------------
    def auth_round(self, rnd):
        """The wrk runs of round `rnd`: AUTH_PAIRS pairs of short runs, one per route, so that
        every oauth run has its static run right beside it; which goes first alternates."""
        seconds = max(1, self.args.duration // AUTH_PAIRS)
        runs = []
        for pair in range(AUTH_PAIRS):
            routes = ("static", "oauth") if (rnd + pair) % 2 == 0 else ("oauth", "static")
            runs += [("auth", route, "latchkey", f"/{route}/small.json", 64, seconds) for route in routes]
        return runs

    def auth_ratio(self, key):
        """The oauth/static ratio of `key`, the median over the pairs of runs (seconds apart,
        so a machine shared with others has least time to change between the two)."""
        pairs = zip(self.results[("auth", "oauth")], self.results[("auth", "static")])
        return statistics.median(o[key] / s[key] for o, s in pairs)

    def callgrind_auth(self):
        """Instructions Latchkey executes per request on each auth route, counted by
        callgrind: repeatable where CPU time is not (a shared machine). A second Latchkey
        with the same routes runs under valgrind; per round and route: warm-up requests, the
        counters zeroed, CALLGRIND_REQUESTS sequential keep-alive GETs, the counters dumped."""
        binary = self.callgrind_binary("instruction counts")
        if not binary:
            return
        port = free_port()
        conf = os.path.join(self.work, "latchkey-callgrind.yaml")
        identities, routes = self.oauth_config(valid_client=CLIENTS["callgrind"], session_client=CLIENTS["callgrind-session"],
                                               with_fresh=False)
        routes += (f"  - {{ name: libcurl, path: /libcurl, upstream: {{ url: 'http://127.0.0.1:{self.upstream_port}', http2: true }},\n"
                   f"      inject: [{{ header: Authorization, value: \"Bearer {{token}}\", credential: bench }}] }}\n")
        with open(conf, "w") as f:
            f.write(self.latchkey_yaml(port, identities, routes))
        p, out = self.start_callgrind_latchkey("latchkey-callgrind", binary, conf, [port])
        log(f"bench: callgrind: {CALLGRIND_ROUNDS} rounds of {CALLGRIND_REQUESTS} requests per route")
        for rnd in range(CALLGRIND_ROUNDS):
            for route in CALLGRIND_ROUTES:
                path = f"/{route}/small.json"
                request_many(port, path, 200)
                callgrind_control(p.pid, "--zero")
                request_many(port, path, CALLGRIND_REQUESTS)
                callgrind_control(p.pid, "--dump")
                per_request = self.callgrind_total(out) / CALLGRIND_REQUESTS
                self.results.setdefault(("callgrind", route), []).append({"instructions": per_request})
                log(f"bench: callgrind round {rnd + 1}/{CALLGRIND_ROUNDS} {route:6} {per_request:,.0f} instructions/request")
        p.terminate()
        p.wait(timeout=60)

    def callgrind_binary(self, what):
        """Latchkey for valgrind (every scenario's callgrind run): valgrind 3.19 gives up on
        the DWARF 5 debug information Swift 6.3 writes, so a copy without it; the symbol
        table, which is all callgrind's totals need, stays. None, and a note that `what` is
        skipped, when valgrind, callgrind_control or strip is missing."""
        missing = [tool for tool in ("valgrind", "callgrind_control", "strip") if not shutil.which(tool)]
        if missing:
            self.notes.append(f"callgrind: {', '.join(missing)} not installed, {what} skipped")
            return None
        binary = os.path.join(self.work, "latchkey-nodebug")
        if not os.path.exists(binary):
            subprocess.run(["strip", "--strip-debug", "-o", binary, self.args.latchkey], check=True)
        return binary

    def start_callgrind_latchkey(self, name, binary, conf, ports):
        """`binary` (from callgrind_binary) serving `conf` under callgrind on the proxy's
        core, as process `name`; returns it and callgrind's output file once it listens on
        each of `ports`."""
        out = os.path.join(self.work, f"{name}.out")
        p = self.spawn(name, ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
                              "serve", "--config", conf, "--loops", "1"], PROXY_CORE)
        if not all(wait_port(port, p, timeout=180) for port in ports):
            sys.exit(f"bench: {name} (latchkey under callgrind) did not start: " + self.read_log(name)[-2000:])
        return p, out

    @staticmethod
    def callgrind_total(out):
        """The instruction total of callgrind's newest dump (`OUT.N`, N counting up)."""
        newest = max(glob.glob(out + ".*"), key=lambda path: int(path.rsplit(".", 1)[1]))
        with open(newest) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
        sys.exit(f"bench: no instruction total in {newest}")

    # ---- storm: 1,000 concurrent requests and one token request ---------------------------------
    def burst(self, path, count):
        """Opens `count` connections to Latchkey, then sends one GET on each as fast as the
        loop can write them, and times each request from its write to its last byte.
        Returns the outcomes (status and seconds, or an exception), the wall-clock time of
        the first write and the seconds until the last answer."""
        port = self.targets["latchkey"]["port"]
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()

        async def run():
            sem = asyncio.Semaphore(128)

            async def connect():
                async with sem:
                    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)

            conns = await asyncio.gather(*(connect() for _ in range(count)))
            await asyncio.sleep(0.5)  # Latchkey has accepted them all before the first request
            sent = [0.0] * count

            async def answer(i, reader):
                status = await read_response(reader, 30)
                return status, time.perf_counter() - sent[i]

            waiting = [asyncio.ensure_future(answer(i, reader)) for i, (reader, _) in enumerate(conns)]
            started_at, start = time.time(), time.perf_counter()
            for i, (_, writer) in enumerate(conns):
                sent[i] = time.perf_counter()
                writer.write(request)
            outcomes = await asyncio.gather(*waiting, return_exceptions=True)
            wall = time.perf_counter() - start
            for _, writer in conns:
                writer.close()
            return outcomes, started_at, wall

        return asyncio.run(run())

    def storm(self, state, rnd):
        """One burst against the identity route in `state` (a key of STORM_STATES)."""
        # The route, named like its identity, and the identity's client at the token endpoint.
        route, client = {"valid": ("oauth", CLIENTS["valid"]), "expired": ("expiring", CLIENTS["expiring"]),
                         "fresh": (f"fresh-{rnd + 1}", CLIENTS["fresh"])}[state]
        if state == "expired":
            time.sleep(max(0.0, self.expiring_stale_at - time.monotonic()))
        else:
            time.sleep(0.5)  # the same quiet moment before every burst
        pid = self.targets["latchkey"]["pid"]
        before, cpu_before = self.token_requests().get(client, 0), cpu_seconds(pid)
        outcomes, started_at, wall = self.burst(f"/{route}/auth", self.args.storm_requests)
        cpu = cpu_seconds(pid) - cpu_before
        token_requests = self.token_requests().get(client, 0) - before
        if state == "expired":
            self.expiring_stale_at = time.monotonic() + STORM_TOKEN_LIFETIME + 0.2
        answered = sorted(o[1] * 1000 for o in outcomes if not isinstance(o, BaseException) and o[0] == 200)
        failures = [o for o in outcomes if isinstance(o, BaseException) or o[0] != 200]
        res = {"token_requests": token_requests, "ok": len(answered), "errors": len(failures),
               "p50_ms": percentile(answered, 50) if answered else None,
               "p99_ms": percentile(answered, 99) if answered else None, "wall_ms": wall * 1000,
               "token_after_ms": None if state == "valid" else self.token_obtained_after(route, started_at),
               "proxy_cpu_ms": cpu * 1000}
        sample = f" first error: {failures[0]!r}"[:160] if failures else ""
        token_after = "" if res["token_after_ms"] is None else f" (token after {res['token_after_ms']:.0f} ms)"
        log(f"bench: burst round {rnd + 1}/{self.args.storm_rounds} storm {state:7} {res['ok']}/{len(outcomes)} ok, "
            f"{token_requests} token request(s){token_after}, p50 {res['p50_ms'] or 0:.1f} ms "
            f"p99 {res['p99_ms'] or 0:.1f} ms, all answered in {res['wall_ms']:.0f} ms, "
            f"proxy CPU {res['proxy_cpu_ms']:.0f} ms{sample}")
        return res

    def token_obtained_after(self, identity, started_at):
        """Milliseconds from the burst's first write to the identity's new token, from
        Latchkey's auth event log line (millisecond timestamps); None when it got none."""
        pattern = re.compile(rf"^(\S+) INFO \[latchkey\.auth\] auth state changed event=(?:acquired|refreshed) identity={identity}(?:\s|$)")
        for line in self.read_log("latchkey").splitlines():
            m = pattern.match(line)
            if m:
                at = datetime.datetime.fromisoformat(m.group(1)).timestamp()
                if at >= started_at - 0.001:
                    return (at - started_at) * 1000
        return None

    def run_storms(self):
        """Interleaved rounds of the three bursts (order rotated every round)."""
        states = list(STORM_STATES)
        log("bench: warm-up burst (valid token)")
        self.burst("/oauth/auth", self.args.storm_requests)  # the first burst pays for growing buffers and pools
        for rnd in range(self.args.storm_rounds):
            k = rnd % len(states)
            for state in states[k:] + states[:k]:
                self.results.setdefault(("storm", state), []).append(self.storm(state, rnd))

    # ---- report -----------------------------------------------------------------------------------
    def added_latency(self, state, key):
        """What a storm in `state` adds to `key` (p50_ms, p99_ms): the median over the rounds
        of its difference to the same round's valid-token burst (adjacent in time, so the
        machine's slower drifts cancel out); None when no round has both."""
        pairs = zip(self.results[("storm", state)], self.results[("storm", "valid")])
        deltas = [s[key] - v[key] for s, v in pairs if s[key] is not None and v[key] is not None]
        return statistics.median(deltas) if deltas else None

    def storm_spread(self, state, key):
        """The median of `key` over the rounds, with its range."""
        values = [r[key] for r in self.results[("storm", state)] if r[key] is not None]
        return f"{statistics.median(values):.1f} ({min(values):.0f}–{max(values):.0f})" if values else "—"

    def oauth_tables(self):
        out = []
        fmt = lambda v, f: "—" if v is None else format(v, f)
        if ("auth", "static") in self.results:
            out += ["### Static credential vs OAuth identity with a valid token: small GETs, 64 connections",
                    "",
                    "| route | requests/s | p50 ms | p99 ms | proxy CPU µs/request | proxy core busy | errors |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for route, label in (("static", "`/static` (credential file)"), ("oauth", "`/oauth` (identity `valid`)")):
                errs = sum(r["errors"] for r in self.results[("auth", route)])
                m = lambda k: self.med("auth", route, k)
                out.append(f"| {label} | {fmt(m('rps'), ',.0f')} | {fmt(m('p50_ms'), '.2f')} | {fmt(m('p99_ms'), '.2f')} | "
                           f"{fmt(m('proxy_cpu_us'), '.1f')} | {fmt(m('proxy_cpu_util'), '.0%')} | {errs} |")
            pairs, seconds = len(self.results[("auth", "oauth")]), max(1, self.args.duration // AUTH_PAIRS)
            out += ["", f"OAuth / static, median of the ratios of the {pairs} pairs of runs (each run {seconds} s): "
                    f"requests/s {self.auth_ratio('rps'):.1%}, proxy CPU per request {self.auth_ratio('proxy_cpu_us'):.1%}. Token requests of the identity "
                    f"`valid` after its first (the token stays valid throughout): "
                    f"{self.token_requests().get(CLIENTS['valid'], 0) - 1}.", ""]
            if ("callgrind", "static") in self.results:
                cg = {route: self.med("callgrind", route, "instructions") for route in CALLGRIND_ROUTES}
                out += [f"Instructions per request under callgrind (a second Latchkey with the same routes, "
                        f"{CALLGRIND_REQUESTS:,} sequential keep-alive requests per route, median of "
                        f"{CALLGRIND_ROUNDS} rounds): static {cg['static']:,.0f} (the same route on libcurl's "
                        f"full transfers {cg['libcurl']:,.0f}, {cg['static'] / cg['libcurl'] - 1:+.1%} on Latchkey's own "
                        f"HTTP/1.1), oauth {cg['oauth']:,.0f} "
                        f"({cg['oauth'] / cg['static'] - 1:+.1%}), recipe (the session identity's capture) "
                        f"{cg['recipe']:,.0f} ({cg['recipe'] / cg['oauth'] - 1:+.1%} against oauth).", ""]
        if ("storm", "valid") in self.results:
            n = self.args.storm_requests
            out += [f"### Refresh storm: {n:,} concurrent requests, one connection each, to an identity route",
                    "",
                    "| the identity's token | token requests per burst | new token after ms | p50 ms | p99 ms | "
                    "added p50 ms | added p99 ms | last answer ms | proxy CPU ms per burst | errors |",
                    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for state, label in STORM_STATES.items():
                rows = self.results[("storm", state)]
                m = lambda k: self.med("storm", state, k)
                added = lambda k: None if state == "valid" else self.added_latency(state, k)
                out.append(f"| {label} | {', '.join(str(r['token_requests']) for r in rows)} | "
                           f"{fmt(m('token_after_ms'), '.0f')} | {self.storm_spread(state, 'p50_ms')} | "
                           f"{self.storm_spread(state, 'p99_ms')} | {fmt(added('p50_ms'), '+.1f')} | {fmt(added('p99_ms'), '+.1f')} | "
                           f"{fmt(m('wall_ms'), ',.0f')} | {fmt(m('proxy_cpu_ms'), ',.0f')} | {sum(r['errors'] for r in rows)} |")
            out += ["", "Latency from each request's write to its last byte (the client writes the "
                    f"{n:,} requests one after another on pre-opened connections); \"added\" is the median over "
                    "the rounds of the difference to the same round's valid-token burst; \"new token after\" is the time from the first request's "
                    "write to Latchkey's log line of the new token (millisecond timestamps); \"last answer\" is "
                    f"the whole burst's wall time. Medians of {self.args.storm_rounds} rounds (order rotated each "
                    "round; p50 and p99 with their range over the rounds in brackets); the token request "
                    "counts are each round's.", ""]
        return out

    def callgrind_ratio(self):
        if ("callgrind", "static") not in self.results:
            return ""
        ratio = self.med("callgrind", "oauth", "instructions") / self.med("callgrind", "static", "instructions")
        return f"; instructions per request {ratio:.1%}"

    def oauth_targets_table(self):
        rows = []
        if ("auth", "static") in self.results:
            rps = self.auth_ratio("rps")
            rows.append(f"| OAuth identity route (valid token): requests/s within 5% of the static route | "
                        f"ratio of paired runs {rps:.1%} (median; medians {self.med('auth', 'oauth', 'rps'):,.0f} vs "
                        f"{self.med('auth', 'static', 'rps'):,.0f}); CPU per request {self.auth_ratio('proxy_cpu_us'):.1%}"
                        f"{self.callgrind_ratio()} | "
                        f"{'met' if rps >= 0.95 else '**not met**'} |")
        if ("callgrind", "recipe") in self.results:
            recipe, oauth = (self.med("callgrind", route, "instructions") for route in ("recipe", "oauth"))
            rows.append(f"| session recipe identity (valid result): instructions per request no more than the OAuth "
                        f"identity's (callgrind; within 1%, its repeatability) | {recipe:,.0f} vs {oauth:,.0f} "
                        f"({recipe / oauth - 1:+.1%}) | {'met' if recipe <= oauth * 1.01 else '**not met**'} |")
        if ("storm", "valid") in self.results:
            n = self.args.storm_requests
            for state in ("expired", "fresh"):
                runs = self.results[("storm", state)]
                counts = [r["token_requests"] for r in runs]
                met = all(c == 1 for c in counts) and all(r["errors"] == 0 for r in runs)
                added = ["—" if v is None else f"{v:+.1f} ms" for v in
                         (self.added_latency(state, "p50_ms"), self.added_latency(state, "p99_ms"))]
                rows.append(f"| refresh storm, {STORM_STATES[state]}: {n:,} concurrent requests, one token request | "
                            f"{', '.join(map(str, counts))} token request(s) per burst, "
                            f"{sum(r['errors'] for r in runs)} errors; added latency p50 {added[0]}, "
                            f"p99 {added[1]} | {'met' if met else '**not met**'} |")
        if not rows:
            return ""
        return ("| target (OAuth issue) | OAuth identity (median) vs static credential / valid token | |\n"
                "| --- | --- | --- |\n" + "\n".join(rows) + "\n")
