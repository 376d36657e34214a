#!/usr/bin/env bash
# Installs the Debian packages of the named lists that are not installed yet. The lists,
# one package per line (# comments), live in Scripts/packages/ and are the one place that
# says what Latchkey needs: the demo, the test command and the Docker build all come here.
#
# Usage: Scripts/install-packages.sh [--dry-run | --print] LIST...
#   LIST       build, runtime, demo, test (Scripts/packages/LIST.txt)
#   --dry-run  only simulate the install (apt-get -s); nothing changes
#   --print    print the lists' packages, one per line, and install nothing
# Environment:
#   CLEAN_APT_LISTS=1   remove /var/lib/apt/lists afterwards (smaller Docker layers)
# Runs apt-get as root, through sudo when not root. Exits non-zero when a list is unknown
# or the install fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=install
case "${1:-}" in
    --dry-run) mode=dry-run; shift ;;
    --print) mode=print; shift ;;
    -h|--help|"") sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit ;;
esac

packages=()
for list in "$@"; do
    file="$here/packages/$list.txt"
    [ -f "$file" ] || { echo "install-packages: no package list '$list' (Scripts/packages/$list.txt)" >&2; exit 2; }
    while read -r package _; do
        [ -n "$package" ] && [[ $package != \#* ]] && packages+=("$package")
    done <"$file"
done

if [ "$mode" = print ]; then
    printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# One entry per package, in list order.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk 'NF && !seen[$0]++')
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-packages: already installed ($*)"
    exit 0
fi

sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
if [ "$mode" = dry-run ]; then
    "${sudo[@]}" apt-get install -s -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "install-packages: would install ${missing[*]} (simulated)"
    exit 0
fi
echo "install-packages: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if [ "${CLEAN_APT_LISTS:-0}" = 1 ]; then "${sudo[@]}" rm -rf /var/lib/apt/lists/*; fi
