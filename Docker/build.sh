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

# The packages come from the lists in Scripts/packages/ (build.txt for the build stage,
# runtime.txt for the runtime stage), which the demo and the test command use too.
install_packages=$(dirname "${BASH_SOURCE[0]}")/../Scripts/install-packages.sh
USER_NAME=latchkey
USER_ID=10001

step=${1:-}
case "$step" in
    deps)
        bash "$install_packages" build
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
            bash "$install_packages" --dry-run runtime
            command -v useradd >/dev/null
            echo "build.sh: would run: useradd --system --uid $USER_ID --user-group --home-dir /var/lib/$USER_NAME --create-home --shell /usr/sbin/nologin $USER_NAME"
        else
            bash "$install_packages" runtime
            useradd --system --uid "$USER_ID" --user-group --home-dir "/var/lib/$USER_NAME" \
                --create-home --shell /usr/sbin/nologin "$USER_NAME"
            chmod 700 "/var/lib/$USER_NAME"
            mkdir -p /etc/latchkey
        fi
        ;;
    list-build-deps) bash "$install_packages" --print build ;;
    list-runtime-deps) bash "$install_packages" --print runtime ;;
    *)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
