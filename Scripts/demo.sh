#!/usr/bin/env bash
# Latchkey's demo: its main job, on this machine, with no account anywhere.
#
# Builds latchkey and starts the bundled sample IdP and API (Scripts/sample-oauth-api.py:
# access tokens that live 5 s, refresh tokens that rotate) with latchkey in front of it
# (Configs/demo.yaml). Then, one line per step with the IdP's count of token requests:
#   1. a curl without any credential gets the API's answer through latchkey;
#   2. tokens expire and are renewed while the client sees only 200s;
#   3. the API revokes the token: a POST is refused, renewed and replayed, body intact;
#   4. latchkey restarts and goes on with the stored token: no new login;
#   5. `latchkey status` shows the identity;
#   6. `latchkey exec` runs curl against https://api.demo.test (a name that resolves
#      nowhere), which gets the API's answer with the identity's token attached inside the
#      intercepted tunnel, while curl's environment holds the proxy and no token
#      (Configs/demo-exec.yaml).
# Then it keeps running so that you can try it; Ctrl-C stops everything.
#
# Usage: bash Scripts/demo.sh [--once]
#   --once (or DEMO_ONCE=1)   exit after the demonstration instead of waiting for Ctrl-C
# Environment:
#   LATCHKEY_BIN=PATH         use this latchkey binary instead of building one
#   DEMO_BUILD=release        build in release mode (default: debug, the faster build)
#   DEMO_PORT=N, DEMO_API_PORT=N   latchkey's and the sample's ports (default 8080 and
#                             9000, or free ones when those are taken)
set -euo pipefail

once=${DEMO_ONCE:-0}
for arg in "$@"; do
    case "$arg" in
        --once) once=1 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "demo: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ -t 1 ]; then bold=$'\e[1m'; dim=$'\e[2m'; green=$'\e[32m'; red=$'\e[31m'; off=$'\e[0m'
else bold=; dim=; green=; red=; off=; fi
say()  { printf '%s==>%s %s\n' "$bold" "$off" "$*"; }
fail() { printf '%sdemo: %s%s\n' "$red" "$*" "$off" >&2; exit 1; }

# --- what the demo needs: the build's packages and its own (Scripts/packages/) -----------
bash Scripts/install-packages.sh build demo
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
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
    # A release binary is built as releases are: the Swift runtime and Foundation linked in.
    flags=(-c "$mode"); [ "$mode" = release ] && flags+=(--static-swift-stdlib)
    if ! swift build "${flags[@]}" --product latchkey >"$buildlog" 2>&1; then
        tail -n 40 "$buildlog" >&2; rm -f "$buildlog"; fail "the build failed"
    fi
    rm -f "$buildlog"
    bin="$(swift build "${flags[@]}" --show-bin-path)/latchkey"
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

port_free() {
    python3 - "$1" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
PY
}
# pick_port WANTED: WANTED when it is free, else the next free one of the nine after it.
pick_port() {
    local p
    for p in $(seq "$1" $(($1 + 9))); do
        if port_free "$p"; then echo "$p"; return; fi
    done
    fail "ports $1 to $(($1 + 9)) are all taken; set DEMO_PORT / DEMO_API_PORT"
}
api_port=${DEMO_API_PORT:-$(pick_port 9000)}
port=${DEMO_PORT:-$(pick_port 8080)}
api="http://127.0.0.1:$api_port"
proxy="http://127.0.0.1:$port"

# --- the sample IdP and API ----------------------------------------------------------------
python3 Scripts/sample-oauth-api.py --listen "127.0.0.1:$api_port" --quiet 2>"$work/api.log" &
pids+=($!)
for _ in $(seq 100); do curl -fs -o /dev/null "$api/health" && break; sleep 0.1; done
curl -fs -o /dev/null "$api/health" || { cat "$work/api.log" >&2; fail "the sample IdP and API did not start"; }

# Configs/demo.yaml on the ports chosen; the token store in the scratch directory, so that
# the demo leaves nothing behind in ~/.local/state.
config="$work/demo.yaml"
sed -e "s/127\.0\.0\.1:8080/127.0.0.1:$port/g" -e "s/127\.0\.0\.1:9000/127.0.0.1:$api_port/g" Configs/demo.yaml >"$config"
export XDG_STATE_HOME="$work/state"
log="$work/latchkey.log"

lk=
start_latchkey() {
    "$bin" serve --config "$config" >>"$log" 2>&1 &
    lk=$!
    pids=("$lk" "${pids[@]}")
    for _ in $(seq 150); do
        kill -0 "$lk" 2>/dev/null || break
        if curl -s -o /dev/null --max-time 1 "$proxy/.latchkey/health"; then return 0; fi
        sleep 0.1
    done
    cat "$log" >&2
    fail "latchkey did not start (its log is above)"
}
stop_latchkey() {
    kill -TERM "$lk"
    wait "$lk" || fail "latchkey did not exit cleanly on SIGTERM"
}

# The sample's counters, read once per step: `snapshot`, then `counter token_requests.total`,
# `counter token_requests.password`, `counter token_requests.refresh_token`, `counter api.refused`.
stats='{}'
snapshot() { stats=$(curl -fs "$api/_demo/stats" || echo '{}'); }
counter() {
    python3 -c '
import json, sys
value = json.loads(sys.argv[1])
for key in sys.argv[2].split("."):
    value = value.get(key, 0)
print(value)' "$stats" "$1"
}
idp_line() {
    local total; total=$(counter token_requests.total)
    printf '%s(IdP: %s token request%s, %s password, %s refresh_token)%s' "$dim" "$total" "$([ "$total" = 1 ] || echo s)" \
        "$(counter token_requests.password)" "$(counter token_requests.refresh_token)" "$off"
}
ok=1
step() { printf '%s✓%s %s  %s\n' "$green" "$off" "$1" "$(idp_line)"; }
miss() { ok=0; printf '%s✗ %s%s  %s\n' "$red" "$1" "$off" "$(idp_line)"; }
# status_of CURL-ARGS...: the HTTP status of one request through latchkey ("000" if none).
status_of() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" || true; }

say "sample IdP and API on $api (client demo-client, user demo; tokens live 5 s, refresh tokens rotate)"
say "latchkey on $proxy, configured by Configs/demo.yaml: $bin serve --config Configs/demo.yaml"
start_latchkey
echo

# 1. A client with no credential at all.
body=$(curl -s --max-time 10 "$proxy/api/me" || true)
snapshot
if grep -q '"user": "demo"' <<<"$body"; then
    step "1. curl $proxy/api/me with no credential: 200, the API saw user demo (latchkey logged in)"
else
    miss "1. curl $proxy/api/me: expected the API's answer for user demo, got: ${body:-nothing}"
fi

# 2. Across several token lifetimes: every request is answered 200.
renewed_before=$(counter token_requests.refresh_token)
statuses=()
for _ in $(seq 22); do
    statuses+=("$(status_of "$proxy/api/items")")
    sleep 0.5
done
snapshot
renewals=$(( $(counter token_requests.refresh_token) - renewed_before ))
others=$(printf '%s\n' "${statuses[@]}" | grep -vc '^200$' || true)
if [ "$others" = 0 ] && [ "$renewals" -ge 2 ]; then
    step "2. 22 requests over 11 s: all 200 while the token expired and was renewed $renewals times"
else
    miss "2. 22 requests over 11 s: $others not 200 (${statuses[*]}), $renewals renewals"
fi

# 3. The API stops accepting the token; a POST with a body meets the refusal.
head -c 262144 /dev/urandom >"$work/upload.bin"
sent=$(sha256sum "$work/upload.bin" | cut -d' ' -f1)
# Right after a background renewal, so that the next one cannot come between the
# revocation and the POST and spare the POST its refusal.
renewed_before=$(counter token_requests.refresh_token)
for _ in $(seq 100); do
    snapshot
    [ "$(counter token_requests.refresh_token)" != "$renewed_before" ] && break
    sleep 0.05
done
refused_before=$(counter api.refused)
curl -fs -X POST -o /dev/null "$api/_demo/revoke"
answer=$(curl -s --max-time 10 -w '\n%{http_code}' -X POST -H 'Content-Type: application/octet-stream' \
    --data-binary @"$work/upload.bin" "$proxy/api/notes" || true)
code=${answer##*$'\n'}
snapshot
refused=$(( $(counter api.refused) - refused_before ))
if [ "$code" = 200 ] && grep -q "\"sha256\": \"$sent\"" <<<"$answer" && [ "$refused" = 1 ]; then
    step "3. the API revoked the token; POST of 256 KiB: API said 401, latchkey renewed and replayed, client got 200, body intact (sha256 ${sent:0:12}…)"
else
    miss "3. POST after revocation: HTTP ${code:-none}, API refusals $refused, answer: ${answer%$'\n'*}"
fi

# 4. A restart: the token store still has the token and the refresh token.
logins_before=$(counter token_requests.password)
requests_before=$(counter token_requests.total)
stop_latchkey
start_latchkey
code=$(status_of "$proxy/api/me")
snapshot
if [ "$code" = 200 ] && [ "$(counter token_requests.password)" = "$logins_before" ]; then
    if [ "$(counter token_requests.total)" = "$requests_before" ]; then
        step "4. latchkey restarted: 200 with the access token it had stored, no new login"
    else
        step "4. latchkey restarted: 200, the stored token had expired and was renewed with the stored refresh token, no new login"
    fi
else
    miss "4. after a restart: HTTP $code, password grants $logins_before → $(counter token_requests.password)"
fi

# 5. What latchkey status says.
printf '%s✓%s 5. latchkey status --config Configs/demo.yaml:\n' "$green" "$off"
"$bin" status --config "$config" | sed 's/^/     /'

# 6. A script that calls https:// itself, wrapped by exec: the same identity, intercepted.
exec_config="$work/demo-exec.yaml"
sed -e "s/127\.0\.0\.1:9000/127.0.0.1:$api_port/g" Configs/demo-exec.yaml >"$exec_config"
# shellcheck disable=SC2016 # expanded by the command exec runs, not here
wrapped='curl -s --max-time 10 https://api.demo.test/api/me; env >"$1"'
answer=$("$bin" exec --config "$exec_config" -- sh -c "$wrapped" sh "$work/exec.env" 2>>"$log" || true)
snapshot
if grep -q '"user": "demo"' <<<"$answer" && grep -q '^HTTPS_PROXY=http://latchkey:' "$work/exec.env" \
    && ! grep -qE 'demo-(at|rt)-' "$work/exec.env"; then
    step "6. latchkey exec -- curl https://api.demo.test/api/me: 200, the API saw user demo; curl's environment has HTTPS_PROXY and Latchkey's CA, no token"
else
    miss "6. latchkey exec -- curl https://api.demo.test/api/me: expected user demo, got: ${answer:-nothing}"
fi

if grep -qE 'demo-(at|rt)-' "$log"; then
    ok=0; echo "${red}✗ a token appears in latchkey's log${off}"
fi
echo
if [ $ok = 0 ]; then
    echo "${dim}latchkey's log:${off}"; sed 's/^/  /' "$log"
    fail "the demonstration did not go as expected"
fi
if [ "$once" = 1 ]; then
    say "demo complete"
    exit 0
fi

say "latchkey is running. Try, from another terminal:"
cat <<EOF

    curl $proxy/api/me                              # no credential: latchkey attaches the token
    curl -X POST --data-binary @/etc/os-release $proxy/api/notes
    curl -X POST $api/_demo/revoke           # the API forgets its tokens; the next request
    curl $proxy/api/items                           #   is refused, renewed and replayed
    curl $api/_demo/stats                    # what the IdP and API saw
    $proxy/.latchkey/                               # in a browser: latchkey's status page
    XDG_STATE_HOME=$XDG_STATE_HOME $bin status --config $config
    XDG_STATE_HOME=$XDG_STATE_HOME $bin exec --config $exec_config -- curl -s https://api.demo.test/api/items

EOF
say "latchkey's log follows; Ctrl-C stops latchkey and the sample IdP and API"
tail -n 0 -f "$log" --pid "$lk" &
pids+=($!)
wait "$lk" || true
fail "latchkey exited unexpectedly"
