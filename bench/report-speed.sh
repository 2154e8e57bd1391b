#!/usr/bin/env bash
# How long `report` takes on a 20 000-sample profile with its intervals
# and four named caches (the goal: under 0.5 s). The profile is the
# `random` kernel of bench/setassoc/sa-kernels.c (2e7 reads over 512 KiB,
# built with `locprof cc -O2`) recorded with the inst backend at 1e-3:
# about 20 300 samples, every one of them a sparse walk for the
# set-associative model. Each of N rounds (default 9) runs, back to back,
#   A  report --resamples 0   (the estimates alone: the yardstick)
#   B  report -j 1            (the estimates and their intervals, one thread)
#   J  report                 (the same on the default threads: the CPUs,
#                              at most 8; its wall-clock time is what a
#                              user waits)
# and, with BEFORE=another/build/dir, also
#   C  the same report by that build's locprof (its default threads),
# all with the caches 32K:8:64 256K:8:64 1M:16:64 and 48K:12:64 and the
# 15 sizes 4K..64M, and prints the median CPU seconds (user + system, from
# perf stat's task-clock) of each, J's median wall-clock seconds, and the
# medians of the per-round ratios B/A (and B/C in CPU, J/C in wall-clock
# time): runs seconds apart see the same load on a shared machine, so the
# ratios are steadier than the times.
#
# usage: [N=9] [BEFORE=dir] [PROFILE=file.lpp] bench/report-speed.sh [build dir]
set -euo pipefail
B=${1:-build}
L=$(cd "$B" && pwd)/locprof
N=${N:-9}
command -v perf >/dev/null || { echo "report-speed: needs perf (linux-perf)" >&2; exit 1; }
T=$(mktemp -d /tmp/locprof-rs.XXXXXX)
trap 'rm -rf "$T"' EXIT
P=${PROFILE:-}
if [ -z "$P" ]; then
	"$L" cc -O2 -o "$T/k" "$(cd "$(dirname "$0")" && pwd)/setassoc/sa-kernels.c" >/dev/null
	"$L" record -r 1e-3 --seed 1 -o "$T/r.lpp" -- "$T/k" random 524288 20000000 >/dev/null 2>&1
	P=$T/r.lpp
fi
C=(--cache 32K:8:64 --cache 256K:8:64 --cache 1M:16:64 --cache 48K:12:64 --top 0)
echo "profile: $("$L" report "$P" --top 0 --sizes 4K 2>/dev/null | head -1)"
# "CPU-seconds wall-seconds" of one run
cpu() {
	perf stat -e task-clock "$@" 2>&1 >/dev/null |
		awk '/task-clock/ { c = $1 / 1000 } /seconds time elapsed/ { w = $1 } END { printf "%.4f %.4f\n", c, w }'
}
for _ in $(seq "$N"); do
	a=$(cpu "$L" report "$P" "${C[@]}" --resamples 0)
	b=$(cpu "$L" report "$P" "${C[@]}" -j 1)
	j=$(cpu "$L" report "$P" "${C[@]}")
	c="0 0"
	[ -n "${BEFORE:-}" ] && c=$(cpu "$(cd "$BEFORE" && pwd)/locprof" report "$P" "${C[@]}")
	echo "$a $b $j $c"
done >"$T/t"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { awk -v k="$1" '{ print $k }' "$T/t" | median; }
printf 'report --resamples 0 (A): median %s s CPU\n' "$(col 1)"
printf 'report -j 1, with intervals (B): median %s s CPU\n' "$(col 3)"
printf 'report with intervals on %s threads (J): median %s s CPU, %s s wall-clock\n' \
	"$(nproc | awk '{ print ($1 > 8 ? 8 : $1) }')" "$(col 5)" "$(col 6)"
printf 'B/A per round: median %s\n' "$(awk '$1 > 0 { print $3 / $1 }' "$T/t" | median)"
if [ -n "${BEFORE:-}" ]; then
	printf '%s/locprof report with intervals (C): median %s s CPU, %s s wall-clock\n' "$BEFORE" "$(col 7)" "$(col 8)"
	printf 'B/C per round (CPU): median %s\n' "$(awk '$7 > 0 { print $3 / $7 }' "$T/t" | median)"
	printf 'J/C per round (wall-clock): median %s\n' "$(awk '$8 > 0 { print $6 / $8 }' "$T/t" | median)"
fi
echo "($N rounds)"
