#!/usr/bin/env bash
# Latchkey's benchmark, in one run: direct access, Latchkey, nginx and haproxy.
# Installs what it needs (wrk, nginx, haproxy, curl; apt, only when missing), builds the
# release binary as releases are built (--static-swift-stdlib; scratch dir .build-bench),
# runs Benchmarks/bench.py and writes Benchmarks/RESULTS.md. Takes about 6 minutes with the
# defaults.
#
# Usage: bash Benchmarks/run.sh [bench.py options]
#   --rounds N (3)  --duration S (10)  --targets direct,latchkey,nginx,haproxy
#   --scenarios small,large,idle,stream (the default; any of these and auth, storm, stucklog)
#   --idle-connections N (10000)  --profile  --no-write (print only)  --results FILE
# stucklog (Latchkey only): the access log to a file vs to a pipe nobody reads, requests/s.
# tls: Latchkey's TLS listener vs nginx ssl (same ECDSA P-256 certificate): new TLS
#      connections/s and kept-alive small GETs over TLS, CPU per connection / request.
#      Their instructions per new connection: bash Benchmarks/callgrind_tls.sh (a minute).
# forward: small GETs through intercepted CONNECT tunnels: mitmproxy (Debian's, installed
#      when this scenario is asked for, with Benchmarks/mitm_inject.py attaching the token)
#      vs Latchkey's forward listener, and Latchkey's reverse route as the baseline; the load
#      is Benchmarks/tunnel_load.c (gcc, libssl): GETs on --forward-connections N (32)
#      kept-alive tunnels (requests/s, p50/p99, CPU per request), then a new tunnel per GET
#      (tunnels/s, CPU per tunnel); with --callgrind, Latchkey's instructions per request
#      through a tunnel and the reverse route. As RESULTS.md has it (4 minutes):
#        bash Benchmarks/run.sh --scenarios forward --targets latchkey --callgrind --no-write
# websocket: WebSocket upgrades through Latchkey's reverse route vs nginx as a WebSocket proxy
#      (default buffers, and proxy_buffer_size 16k), the token attached to the handshake; the
#      upstream and the load are Benchmarks/ws_echo.c and ws_load.c (gcc, libcrypto) on core 1,
#      `direct` the load against the upstream itself: 32-byte echoes on 1 and --ws-connections
#      N (32) connections (p50/p99, CPU per round trip), 64 KiB messages (MB/s, CPU per MB),
#      --ws-idle-connections N (1000) held upgraded connections (RSS per connection), 1 GiB
#      from the upstream read at full speed and at --ws-read-rate R (50M) (RSS growth); with
#      --callgrind, Latchkey's instructions per round trip. As RESULTS.md has it (11 minutes):
#        bash Benchmarks/run.sh --scenarios websocket --targets direct,latchkey,nginx --callgrind --no-write
# upload: POST bodies of 64 KiB (64 connections) and 1 MiB (16), each with Content-Length and
#      chunked (16 KiB chunks), from wrk through Latchkey, nginx (streaming the body:
#      proxy_request_buffering off), nginx-buffered (nginx's default, the body read first) and
#      haproxy to an upstream /upload that reads the whole body before it answers: requests/s,
#      MB/s uploaded, p50/p99, CPU per request and per MB; with --callgrind, Latchkey's
#      instructions per upload and per 1 MiB download. As RESULTS.md has it (15 minutes):
#        bash Benchmarks/run.sh --scenarios large,upload --callgrind --no-write
# routes (Latchkey only): configurations of --route-counts N (1,100,1000,10000) routes, each with
#      a credential file of its own, and N lazy identities: `latchkey check` time, start-up time,
#      RSS (per route, per identity), CPU per small GET to the last route; with --callgrind, its
#      instructions per request. As RESULTS.md has it:
#        bash Benchmarks/run.sh --scenarios routes --targets latchkey --callgrind --rounds 3 --duration 5 --no-write
# The OAuth engine's scenarios (Latchkey only, tokens from Benchmarks/token_endpoint.py):
#   auth   static-credential route vs OAuth identity route with a valid token, under wrk
#          in pairs of short runs (--rounds, --duration): requests/s within 5%?
#   storm  bursts of --storm-requests N (1000) concurrent requests to an identity route
#          whose token is valid, just expired, or not there yet, --storm-rounds N (11)
#          times each (about a minute): one token request per burst? added p50/p99?
#   --callgrind (with auth; installs valgrind): both auth routes' instructions per
#          request under callgrind, the figure that holds on a shared, noisy machine
# --callgrind with small: Latchkey's, nginx's and haproxy's instructions per small GET and
#      per 64 KiB POST, each under callgrind in the same run (bench_peers.py); with the
#      small-GET, p99 and 1 MiB comparison under wrk (about 8 minutes):
#        bash Benchmarks/run.sh --scenarios small,large,upload --callgrind --no-write
#   All of it, as RESULTS.md has it (about 10 minutes):
#     bash Benchmarks/run.sh --profile --scenarios small,large,idle,stream,auth,storm,stucklog --callgrind
# Environment: LATCHKEY_BIN=PATH uses that binary (no build; LATCHKEY_REV=TEXT then says
# which sources it was built from); LATCHKEY_BIN=none leaves Latchkey out (for trying the
# harness on the peers alone).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

missing=()
have() { dpkg -s "$1" >/dev/null 2>&1; }
have wrk || missing+=(wrk)
have nginx-light || have nginx || have nginx-core || missing+=(nginx-light)
have haproxy || missing+=(haproxy)
have curl || missing+=(curl)
have util-linux || missing+=(util-linux)   # taskset
case " $* " in *" --callgrind "*) have valgrind || missing+=(valgrind); have binutils || missing+=(binutils) ;; esac
case " $* " in *" --scenarios "*forward*|*" --scenarios="*forward*)
    have mitmproxy || missing+=(mitmproxy)
    for pkg in gcc libc6-dev libssl-dev; do have "$pkg" || missing+=("$pkg"); done ;;
esac
case " $* " in *" --scenarios "*websocket*|*" --scenarios="*websocket*)
    for pkg in gcc libc6-dev libssl-dev; do have "$pkg" || missing+=("$pkg"); done ;;
esac
if [ "${LATCHKEY_BIN:-}" != none ]; then
    for pkg in libcurl4-openssl-dev libssl-dev pkg-config; do have "$pkg" || missing+=("$pkg"); done
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "run.sh: installing ${missing[*]}" >&2
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    # haproxy is optional: the run goes on without it.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            $(printf '%s\n' "${missing[@]}" | grep -vx haproxy) >/dev/null
fi
# nginx's Debian packages start a system nginx on port 80; the benchmark runs its own.
command -v nginx >/dev/null || export PATH="/usr/sbin:$PATH"

lk=()
case "${LATCHKEY_BIN:-}" in
    none) ;;
    "")
        echo "run.sh: building latchkey (release, static Swift stdlib, scratch dir .build-bench)" >&2
        swift build -c release --static-swift-stdlib --product latchkey --scratch-path .build-bench >&2
        lk=(--latchkey "$(swift build -c release --static-swift-stdlib --scratch-path .build-bench --show-bin-path)/latchkey") ;;
    *) lk=(--latchkey "$LATCHKEY_BIN") ;;
esac

export BENCH_COMMAND="bash Benchmarks/run.sh${*:+ $*}"
exec python3 Benchmarks/bench.py "${lk[@]}" "$@"
