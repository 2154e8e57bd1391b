#!/usr/bin/env bash
# Paired A/B timing: runs command A and command B alternately N times and
# prints the median and quartiles of the per-pair ratio B/A of CPU time
# (task-clock of the whole command, children included). On this project's
# shared 2-core VM the same binary's CPU time moves by a third between
# phases of a few seconds; two runs seconds apart are in the same phase,
# so the per-pair ratio is stable where separate medians are not
# (docs/runtime.md, "Against the targets").
# usage: bench/paired.sh N 'command A' 'command B'
#   e.g. bench/paired.sh 9 'old/matmul-lp naive' 'build/examples/matmul-lp naive'
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bench/paired.sh N 'command A' 'command B'" >&2; exit 2; }
n=$1 a=$2 b=$3
command -v perf >/dev/null || { echo "paired: needs perf (linux-perf)" >&2; exit 1; }
cpu() { perf stat -x, -e task-clock bash -c "$1" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
for _ in $(seq "$n"); do
	echo "$(cpu "$a") $(cpu "$b")"
done | awk 'NF == 2 && $1 > 0 { print $2 / $1, $1, $2 }' | sort -g | awk '
	{ q[NR] = $1; a += $2; b += $3 }
	END {
		if (!NR) { print "paired: no timings (did a command fail?)" > "/dev/stderr"; exit 1 }
		printf "B/A median %.3f  quartiles %.3f %.3f  (mean A %.1f ms, B %.1f ms, %d pairs)\n",
			q[int((NR + 1) / 2)], q[int((NR + 3) / 4)], q[int((3 * NR + 3) / 4)], a / NR, b / NR, NR
	}'
