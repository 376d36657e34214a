#!/usr/bin/env bash
# The build steps of Docker/Dockerfile, kept here so that the image and the tests run the
# same commands: the Dockerfile RUNs this script, and Scripts/docker-build-steps.sh runs it
# on a machine without a Docker engine.
#
# Usage: Docker/build.sh STEP [--dry-run]
#   deps              install the build stage's system packages (when missing)
#   build [OUT]       release build with the static Swift stdlib; copy the binary to
#                     OUT (default: ./out/latchkey). SCRATCH_PATH=DIR picks the build dir.
#   runtime           install the runtime stage's packages and create the non-root user;
#                     with --dry-run, only simulate the install (apt-get -s)
#   list-build-deps | list-runtime-deps    print the package lists
set -euo pipefail

# Build stage: the Swift image has the toolchain; the proxy links libcurl (OpenSSL flavour,
# never libcurl4-gnutls-dev: that is a second libcurl), OpenSSL and hiredis (the Redis
# token store).
BUILD_DEPS=(libcurl4-openssl-dev libssl-dev libhiredis-dev pkg-config)
# Runtime stage: libcurl and its TLS stack, hiredis, the system CAs for upstream TLS, curl
# for the HEALTHCHECK, libstdc++ (the static Swift runtime still links it dynamically). The
# Swift runtime and Foundation are linked in statically.
RUNTIME_DEPS=(libcurl4 libssl3 libhiredis0.14 libstdc++6 ca-certificates curl)
USER_NAME=latchkey
USER_ID=10001

apt_install() {
    local missing=()
    for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    if [ ${#missing[@]} -eq 0 ]; then echo "build.sh: already installed: $*"; return; fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
    if [ "${CLEAN_APT_LISTS:-0}" = 1 ]; then rm -rf /var/lib/apt/lists/*; fi
}

step=${1:-}
case "$step" in
    deps)
        apt_install "${BUILD_DEPS[@]}"
        ;;
    build)
        out=${2:-out/latchkey}
        scratch=()
        [ -n "${SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$SCRATCH_PATH")
        swift build -c release --static-swift-stdlib --product latchkey "${scratch[@]}"
        bin="$(swift build -c release --static-swift-stdlib --product latchkey "${scratch[@]}" --show-bin-path)/latchkey"
        mkdir -p "$(dirname "$out")"
        # Stripped: the image needs no symbol table (profile the unstripped one in the build dir).
        strip -o "$out" "$bin"
        echo "build.sh: $out ($(du -h "$out" | cut -f1))"
        ;;
    runtime)
        if [ "${2:-}" = --dry-run ]; then
            apt-get install -s --no-install-recommends "${RUNTIME_DEPS[@]}" >/dev/null
            echo "build.sh: apt-get would install: ${RUNTIME_DEPS[*]} (simulated)"
            command -v useradd >/dev/null
            echo "build.sh: would run: useradd --system --uid $USER_ID --user-group --home-dir /var/lib/$USER_NAME --create-home --shell /usr/sbin/nologin $USER_NAME"
        else
            apt_install "${RUNTIME_DEPS[@]}"
            useradd --system --uid "$USER_ID" --user-group --home-dir "/var/lib/$USER_NAME" \
                --create-home --shell /usr/sbin/nologin "$USER_NAME"
            chmod 700 "/var/lib/$USER_NAME"
            mkdir -p /etc/latchkey
        fi
        ;;
    list-build-deps) printf '%s\n' "${BUILD_DEPS[@]}" ;;
    list-runtime-deps) printf '%s\n' "${RUNTIME_DEPS[@]}" ;;
    *)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
