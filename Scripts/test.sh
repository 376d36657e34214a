#!/usr/bin/env bash
# The test command: installs what the tests need, builds, and runs every test stage.
#
#   bash Scripts/test.sh
#
# On a fresh Debian 12 machine with Swift at /opt/swift, as root, it installs the apt
# packages it needs (Scripts/packages/build.txt and test.txt; skipped when present),
# creates a Python venv at .venv with the pinned packages of
# Tests/Integration/requirements.txt, builds with `swift build`, then runs the stages below. It exits non-zero if any stage failed and prints a summary.
#
# Adding a stage is one line in the STAGES section: `stage NAME COMMAND...`.
# Environment:
#   LATCHKEY_TEST_ONLY="unit integration"  run only these stages (names as in the summary)
#   PYTEST_ARGS="-k injection -x"           extra arguments for pytest
#   LATCHKEY_SCRATCH=.build-other           SwiftPM scratch path (default .build)
#   FUZZ_SECONDS=60                         the fuzz smoke's time, split in four between the
#                                           request parser, the response parser, the
#                                           upstream exchange machine and the config loader
#                                           (Scripts/fuzz.sh)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
export PYTHONDONTWRITEBYTECODE=1

VENV=.venv
REQUIREMENTS=Tests/Integration/requirements.txt
SCRATCH=${LATCHKEY_SCRATCH:-.build}
case $SCRATCH in /*) ;; *) SCRATCH=$root/$SCRATCH ;; esac
BIN=$SCRATCH/debug/latchkey
CONTRACT=../shared/checks/core-contract.sh

results=()   # "STATUS|NAME|SECONDS"
failed=0
started_all=$(date +%s)

log() { printf '\n==> %s\n' "$*"; }

# stage NAME COMMAND...: runs COMMAND, records how it went. A stage whose name is not in
# LATCHKEY_TEST_ONLY (when set) is skipped.
stage() {
    local name=$1; shift
    if [ -n "${LATCHKEY_TEST_ONLY:-}" ] && [[ " $LATCHKEY_TEST_ONLY " != *" $name "* ]]; then
        results+=("skip|$name|0"); return 0
    fi
    log "stage: $name"
    local t0=$(date +%s) rc=0
    "$@" || rc=$?
    local dt=$(( $(date +%s) - t0 ))
    if [ $rc -eq 0 ]; then
        results+=("pass|$name|$dt")
    else
        results+=("FAIL|$name|$dt")
        failed=$((failed + 1))
        echo "stage $name failed (exit $rc)"
    fi
    return $rc
}

summary() {
    local passed=0 nfailed=0 skipped=0 r status name secs
    echo
    echo "==================== test summary ===================="
    for r in "${results[@]}"; do
        IFS='|' read -r status name secs <<<"$r"
        printf '  %-5s %-24s %5ss\n' "$status" "$name" "$secs"
        case $status in pass) passed=$((passed + 1));; FAIL) nfailed=$((nfailed + 1));; *) skipped=$((skipped + 1));; esac
    done
    echo "  total time $(( $(date +%s) - started_all ))s"
    echo "======================================================"
    echo "stages: $passed passed, $nfailed failed, $skipped skipped"
}

# ----- setup ----------------------------------------------------------------------------

# The build's packages and the tests' (Scripts/packages/build.txt and test.txt).
install_apt() { bash Scripts/install-packages.sh build test; }

setup_venv() {
    local want have=""
    want=$( (cat "$REQUIREMENTS"; python3 --version) | sha256sum | cut -d' ' -f1)
    [ -f "$VENV/.requirements.sha256" ] && have=$(cat "$VENV/.requirements.sha256")
    if [ -x "$VENV/bin/pytest" ] && [ "$want" = "$have" ]; then
        echo "venv up to date: $VENV"
        return 0
    fi
    rm -rf "$VENV"
    python3 -m venv "$VENV" &&
        "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS" &&
        echo "$want" >"$VENV/.requirements.sha256"
}

setup() { install_apt && setup_venv; }

# ----- stages -----------------------------------------------------------------------------

# Stage time limits, so that a hung test fails its stage instead of CI's whole budget.
UNIT_TIMEOUT=${UNIT_TIMEOUT:-1200}
INTEGRATION_TIMEOUT=${INTEGRATION_TIMEOUT:-1200}

build() { swift build --scratch-path "$SCRATCH"; }
unit_tests() { timeout -k 30 "$UNIT_TIMEOUT" swift test --scratch-path "$SCRATCH"; }
integration_tests() {
    LATCHKEY_BIN="$BIN" LATCHKEY_ITEST_BUILD=0 \
        timeout -k 30 "$INTEGRATION_TIMEOUT" "$VENV/bin/pytest" -q Tests/Integration ${PYTEST_ARGS:-}
}
contract() {
    if [ ! -f "$CONTRACT" ]; then
        echo "no $CONTRACT beside the repository: skipped"
        return 0
    fi
    bash "$CONTRACT" "$BIN"
}

# ----- STAGES: one line each --------------------------------------------------------------
# setup and build must pass for the rest to mean anything; the others all run.

if stage setup setup && stage build build; then
    stage unit unit_tests
    stage integration integration_tests
    stage contract contract
    stage docker bash Scripts/docker-build-steps.sh
    stage fuzz bash Scripts/fuzz.sh "${FUZZ_SECONDS:-60}" all
fi

summary
[ "$failed" -eq 0 ]
