#!/usr/bin/env bash
# Latchkey's demo: its main job, with no outside account.
#
# Builds latchkey, starts a small sample API on loopback that insists on a bearer token,
# starts latchkey in front of it with that token (read from a private file), and shows a
# curl without credentials succeeding through latchkey while the API itself says 401.
# Then it keeps running so that you can try it; Ctrl-C stops everything.
#
# Usage: bash Scripts/demo.sh [--once]
#   --once (or DEMO_ONCE=1)   exit after the demonstration instead of waiting for Ctrl-C
# Environment:
#   LATCHKEY_BIN=PATH         use this latchkey binary instead of building one
#   DEMO_BUILD=release        build in release mode (default: debug, the faster build)
#   DEMO_PORT=N               the proxy's port (default: 8080, or the next free one)
set -euo pipefail

once=${DEMO_ONCE:-0}
for arg in "$@"; do
    case "$arg" in
        --once) once=1 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "demo: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ -t 1 ]; then bold=$'\e[1m'; dim=$'\e[2m'; green=$'\e[32m'; red=$'\e[31m'; off=$'\e[0m'
else bold=; dim=; green=; red=; off=; fi
say()  { printf '%s==>%s %s\n' "$bold" "$off" "$*"; }
show() { printf '\n%s$ %s%s\n' "$bold" "$*" "$off"; }
fail() { printf '%sdemo: %s%s\n' "$red" "$*" "$off" >&2; exit 1; }

# --- what the demo needs -----------------------------------------------------------------
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

missing=()
for pkg in libcurl4-openssl-dev libssl-dev curl pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} (apt)"
    sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- latchkey ------------------------------------------------------------------------------
if [ -n "${LATCHKEY_BIN:-}" ]; then
    bin=$LATCHKEY_BIN
    [ -x "$bin" ] || fail "LATCHKEY_BIN=$bin is not an executable"
else
    command -v swift >/dev/null 2>&1 || fail "swift not found (expected on PATH or at /opt/swift/usr/bin)"
    mode=${DEMO_BUILD:-debug}
    say "building latchkey ($mode; the first build takes a minute or two)"
    buildlog=$(mktemp)
    if ! swift build -c "$mode" --product latchkey >"$buildlog" 2>&1; then
        tail -n 40 "$buildlog" >&2; rm -f "$buildlog"; fail "the build failed"
    fi
    rm -f "$buildlog"
    bin="$(swift build -c "$mode" --show-bin-path)/latchkey"
fi

# --- a private scratch directory, and cleanup of everything the demo starts --------------
work=$(mktemp -d "${TMPDIR:-/tmp}/latchkey-demo.XXXXXX")
chmod 700 "$work"
pids=()
cleanup() {
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; say "stopping"; exit 0' INT TERM

# The token lives in a file only its owner can read: never on a command line, where every
# user of the machine could see it in `ps`.
token_file="$work/token"
(umask 077; printf 'demo-token-%s' "$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')" >"$token_file")

# --- the sample API --------------------------------------------------------------------------
python3 Scripts/sample-api.py --token-file "$token_file" --port-file "$work/api.port" --quiet &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/api.port" ] && break; sleep 0.1; done
[ -s "$work/api.port" ] || fail "the sample API did not start"
api_port=$(cat "$work/api.port")
api="http://127.0.0.1:$api_port"

# --- latchkey in front of it ---------------------------------------------------------------
port_free() {
    python3 - "$1" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
PY
}
if [ -n "${DEMO_PORT:-}" ]; then
    port=$DEMO_PORT
else
    port=
    for p in 8080 $(seq 8081 8099); do
        if port_free "$p"; then port=$p; break; fi
    done
    [ -n "$port" ] || port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fi
proxy="http://127.0.0.1:$port"

say "sample API on $api (it answers 401 without 'Authorization: Bearer <token>')"
say "starting latchkey on $proxy"
printf '%s  %s serve --listen 127.0.0.1:%s --upstream %s --bearer-token-file %s%s\n' \
    "$dim" "$bin" "$port" "$api" "$token_file" "$off"
log="$work/latchkey.log"
"$bin" serve --listen "127.0.0.1:$port" --upstream "$api" --bearer-token-file "$token_file" >"$log" 2>&1 &
lk=$!
pids=("$lk" "${pids[@]}")
up=0
for _ in $(seq 150); do
    kill -0 "$lk" 2>/dev/null || break
    if curl -s -o /dev/null --max-time 1 "$proxy/.latchkey/health"; then up=1; break; fi
    sleep 0.1
done
if [ $up = 0 ]; then
    cat "$log" >&2
    fail "latchkey did not start (its log is above)"
fi

# --- the demonstration -----------------------------------------------------------------------
ok=1
show "curl $proxy/me"
echo "${dim}# no credential from the client: latchkey attaches the bearer token${off}"
body=$(curl -sS --max-time 10 -w '\n%{http_code}' "$proxy/me") || body=$'\n000'
code=${body##*$'\n'}; body=${body%$'\n'*}; body=${body%$'\n'}
printf '%s\n%s(HTTP %s)%s\n' "$body" "$dim" "$code" "$off"
if [ "$code" = 200 ] && grep -q '"authorization_received": "Bearer demo-token-' <<<"$body"; then
    echo "${green}✓ the API answered 200 and saw the injected credential (masked above)${off}"
else
    ok=0; echo "${red}✗ expected 200 with the injected credential${off}"
fi

show "curl $api/me"
echo "${dim}# the API itself, without latchkey in front${off}"
body=$(curl -sS --max-time 10 -w '\n%{http_code}' "$api/me") || body=$'\n000'
code=${body##*$'\n'}; body=${body%$'\n'*}; body=${body%$'\n'}
printf '%s\n%s(HTTP %s)%s\n' "$body" "$dim" "$code" "$off"
if [ "$code" = 401 ]; then
    echo "${green}✓ without latchkey the same request is refused${off}"
else
    ok=0; echo "${red}✗ expected 401 from the API directly${off}"
fi

echo
echo "${dim}latchkey's log of these requests:${off}"
sed 's/^/  /' "$log"
if grep -qF "$(cat "$token_file")" "$log"; then
    ok=0; echo "${red}✗ the token appears in latchkey's log${off}"
fi

if [ $ok = 0 ]; then fail "the demonstration did not go as expected"; fi
if [ "$once" = 1 ]; then
    echo; say "demo complete"
    exit 0
fi

echo
say "latchkey is running. Try, from another terminal:"
echo
echo "    curl $proxy/items"
echo "    curl $proxy/me"
echo
say "its log follows; Ctrl-C stops latchkey and the sample API"
tail -n 0 -f "$log" --pid "$lk" &
pids+=($!)
wait "$lk" || true
fail "latchkey exited unexpectedly"
