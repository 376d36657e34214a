#!/usr/bin/env bash
# Runs Docker/Dockerfile's build steps on this machine, where no Docker engine runs, and
# checks what they produce. The Dockerfile's RUN steps call Docker/build.sh; this script
# reads those calls out of the Dockerfile and runs the same ones, in the same order:
#   deps               build-stage packages (installed when missing)
#   build OUT          release build with --static-swift-stdlib (scratch dir .build-docker)
#   runtime --dry-run  the runtime stage's apt install, simulated; its useradd, printed
# Then it checks the binary (runs, links no Swift library dynamically, answers the
# HEALTHCHECK command, exits 0 on SIGTERM) and the Dockerfile's shape (non-root USER,
# HEALTHCHECK, EXPOSE, ENTRYPOINT/CMD, COPY sources present and not dockerignored).
#
# Usage: bash Scripts/docker-build-steps.sh        (exit status 0 when every check passed)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

dockerfile=Docker/Dockerfile
ignorefile=Docker/Dockerfile.dockerignore
export SCRATCH_PATH=${SCRATCH_PATH:-.build-docker}
out="$SCRATCH_PATH/image/latchkey"

passed=0; failed=0
ok()  { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() {
    echo "docker-build-steps: $passed checks ok, $failed failed"
    [ "$failed" = 0 ]; exit $?
}

# The Dockerfile with line continuations joined, comments dropped.
instructions=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
instr() { grep -E "^[[:space:]]*$1[[:space:]]" <<<"$instructions" || true; }

# --- the Dockerfile's shape ----------------------------------------------------------------
froms=$(instr FROM)
check "build stage FROM swift:<6.x>-bookworm" grep -qE '^FROM swift:(\$\{SWIFT_VERSION\}|6[.0-9]*)-bookworm AS build' <<<"$froms"
check "Swift 6.x base image" bash -c 'grep -qE "^ARG SWIFT_VERSION=6" <<<"$1" || grep -qE "^FROM swift:6" <<<"$1"' _ "$instructions"
check "runtime stage FROM debian:bookworm-slim" grep -qE '^FROM debian:bookworm-slim' <<<"$(tail -n 1 <<<"$froms")"
user=$(instr USER | tail -n 1 | awk '{print $2}')
check "non-root USER ($user)" test -n "$user" -a "${user%%:*}" != root -a "${user%%:*}" != 0
health=$(instr HEALTHCHECK)
check "HEALTHCHECK with a CMD" grep -q ' CMD ' <<<"$health"
check "EXPOSE 8080" grep -qE '^EXPOSE .*\b8080\b' <<<"$instructions"
check 'ENTRYPOINT ["latchkey"]' grep -qxF 'ENTRYPOINT ["latchkey"]' <<<"$instructions"
check 'CMD serve --config /etc/latchkey/latchkey.yaml' \
    grep -qxF 'CMD ["serve", "--config", "/etc/latchkey/latchkey.yaml"]' <<<"$instructions"
check "build step uses --static-swift-stdlib" grep -q -- '--static-swift-stdlib' Docker/build.sh

# Every COPY source from the context exists and survives the (allow-list) dockerignore.
copy_ok=1
while read -r _ a b _; do
    [[ $a == --from=* ]] && continue
    src=${a%/}
    if [ ! -e "$src" ]; then echo "     COPY source missing: $src"; copy_ok=0; continue; fi
    if ! grep -qxE "!$src/?" "$ignorefile"; then echo "     COPY source not allowed by $ignorefile: $src"; copy_ok=0; fi
done < <(instr COPY)
check "COPY sources exist and pass $ignorefile" test $copy_ok = 1

# --- the RUN steps, as the Dockerfile calls them -------------------------------------------
steps=$(instr RUN | grep -oE 'build\.sh [a-z-]+( [^ &;]+)?' | awk '{print $2}')
check "Dockerfile RUNs build.sh deps, build, runtime" test "$(echo $steps)" = "deps build runtime"
for step in $steps; do
    case "$step" in
        deps)    check "step deps (build-stage packages)" bash Docker/build.sh deps ;;
        build)   echo "     building latchkey (release, static Swift stdlib, scratch $SCRATCH_PATH)"
                 buildlog=$(mktemp)
                 if bash Docker/build.sh build "$out" >"$buildlog" 2>&1; then
                     ok "step build -> $out"; rm -f "$buildlog"
                 else
                     tail -n 40 "$buildlog"; rm -f "$buildlog"; bad "step build"; finish
                 fi ;;
        runtime) check "step runtime (apt install simulated, useradd printed)" bash Docker/build.sh runtime --dry-run ;;
    esac
done

# --- the binary ----------------------------------------------------------------------------
check "latchkey --help runs" "$out" --help >/dev/null
check "latchkey serve --help runs" "$out" serve --help >/dev/null
needed=$(readelf -d "$out" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "     dynamic libraries: $(echo $needed)"
check "no Swift runtime library linked dynamically" \
    bash -c '! grep -qE "^lib(swift|Foundation|dispatch|BlocksRuntime|_Foundation)" <<<"$1"' _ "$needed"
check "ldd resolves every library" bash -c '! ldd "$1" | grep -q "not found"' _ "$out"
unexpected=$(grep -vE '^(libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+|libcurl|libssl|libcrypto|libz|libhiredis|libyaml-0|ld-linux[-a-z0-9_]*)\.so' <<<"$needed" || true)
check "every library comes with the runtime packages (${unexpected:-none unexpected})" test -z "$unexpected"

# The HEALTHCHECK command, run as written but against a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
hc=$(sed -E 's/.* CMD +//; s/ *\|\| *exit 1$//' <<<"$health" | sed "s/127\.0\.0\.1:8080/127.0.0.1:$port/")
log=$(mktemp)
"$out" serve --listen "127.0.0.1:$port" --upstream http://127.0.0.1:9 --header 'X-Demo: 1' >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
if bash -c "$hc" >/dev/null 2>&1; then ok "HEALTHCHECK command answers ($hc)"
else bad "HEALTHCHECK command answers ($hc)"; sed 's/^/     /' "$log" | tail -n 5; fi
kill -TERM "$pid" 2>/dev/null
for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null; bad "exits on SIGTERM within 15 s"
else wait "$pid"; rc=$?; check "exits 0 on SIGTERM (docker stop)" test "$rc" = 0; fi
rm -f "$log"

finish
