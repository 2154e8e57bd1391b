#!/usr/bin/env bash
# Long fuzzing runs of every reader's harness (tests/fuzz), for the
# figures the test suite's short runs cannot give.
#
# Usage: bench/fuzz.sh [SECONDS] [JOBS] [HARNESS...]
#   SECONDS of CPU time per harness (default 1800), JOBS harnesses at a
#   time, one core each (default 1), all harnesses unless named. Runs at the
#   lowest priority, so other work on the machine delays it but does not
#   shorten it.
# Prints per harness the seconds, executions and crashes, then the crash
# inputs found (build-fuzz/crashes/); add each one, once fixed, to
# tests/fuzz/regressions/HARNESS/.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
jobs=${2:-1}
shift 2 2>/dev/null || shift $#
nice -n 19 scripts/fuzz --cpu-seconds "$seconds" --jobs "$jobs" "$@"
status=$?
echo "crash inputs:"
ls -l build-fuzz/crashes/ 2>/dev/null | tail -n +2 || true
exit $status
