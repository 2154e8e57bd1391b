#!/usr/bin/env bash
# Overhead of the valgrind backend (docs/valgrind.md), as ratios to the
# native run of the same program in the same script:
#   native       the program alone
#   none         valgrind --tool=none (valgrind's own cost: the floor)
#   sample       locprof record --backend valgrind (StatCache sampling, 1e-4)
#   trace        locprof record --backend valgrind -m trace (compressed .lpt)
#   cachegrind   valgrind --tool=cachegrind --cache-sim=yes
# Targets: sample <= 1.5x none, and cachegrind >= 5x sample.
#
# Each configuration runs REPEAT times (default 3), interleaved (the order
# rotated every round), and the median is taken, because the machine is
# shared. Wall time is what a user
# waits; CPU time (user + system of every process: valgrind, and locprof's
# collector, which compresses the trace on another core) is less sensitive
# to other load. Both are printed.
#
# usage: bench/overhead-valgrind.sh [BUILD_DIR] [PROGRAM...]
#   PROGRAM: the programs of bench/workloads/vg-programs.sh (default: the
#   long runs, then the short, start-up-dominated ones; the same programs as
#   bench/cachegrind-agreement.sh). REPEAT=N in the environment (3).
#   Trace mode costs 10-100x native, so it runs only on the short runs
#   unless TRACE=all (TRACE=none: never). BASELINE_VG_DIR=DIR adds a column:
#   sample mode with another build of the tool (a directory holding its
#   locprof-amd64-linux and vgpreload_locprof-amd64-linux.so), to measure
#   a change of the tool in the same run. NOALLOC=1 adds sample mode
#   without the malloc replacement (-X --allocs=no: no allocation events),
#   whose cost dominates allocation-heavy programs (lua, python).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
progs=("$@")
repeat=${REPEAT:-3}
trace=${TRACE:-short}
locprof=$(cd "$build" && pwd)/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }

w=$(mktemp -d /tmp/locprof-vgover.XXXXXX)
trap 'rm -rf "$w"' EXIT
# shellcheck source=bench/workloads/vg-programs.sh
source bench/workloads/vg-programs.sh
[ ${#progs[@]} -gt 0 ] || progs=("${vg_long_programs[@]}" "${vg_short_programs[@]}")
for p in "${progs[@]}"; do vg_cmd_of "$p" >/dev/null || exit 2; done
vg_make_inputs "$w"

prefix() {
	case $1 in
	native) ;;
	none) echo "valgrind --tool=none -q" ;;
	sample) echo "$locprof record --backend valgrind -q -r 1e-4 -o $w/s.lpp --" ;;
	noalloc) echo "$locprof record --backend valgrind -q -r 1e-4 -X --allocs=no -o $w/s.lpp --" ;;
	baseline) echo "env LOCPROF_VG_DIR=$BASELINE_VG_DIR $locprof record --backend valgrind -q -r 1e-4 -o $w/s.lpp --" ;;
	trace) echo "$locprof record --backend valgrind -q -m trace -o $w/t.lpt --" ;;
	cachegrind) echo "valgrind --tool=cachegrind -q --cache-sim=yes --cachegrind-out-file=/dev/null" ;;
	esac
}

# run CONFIG IN CMD... -> "wall cpu" seconds
run() {
	local c=$1 in=$2 t
	shift 2
	read -ra pre <<<"$(prefix "$c")"
	t=$( { TIMEFORMAT='%R %U %S'; time (cd "$w" && "${pre[@]}" "$@" <"$in" >/dev/null 2>"$w/err") ; } 2>&1 )
	rm -f "$w/s.lpp" "$w/t.lpt"
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

is_short() { [[ " ${vg_short_programs[*]} xz-2m gzip-2m " == *" $1 "* ]]; }

base=${BASELINE_VG_DIR:+baseline}
noalloc=
[ -n "${NOALLOC:-}" ] && noalloc=noalloc
head="| program | native s | none | sample 1e-4 | trace | cachegrind | sample/none | cachegrind/sample | cachegrind/none |"
sep="|---|---:|---:|---:|---:|---:|---:|---:|---:|"
[ -n "$noalloc" ] && head+=" no-alloc sample/none | cachegrind/no-alloc |" && sep+="---:|---:|"
[ -n "$base" ] && head+=" baseline sample/none | cachegrind/baseline |" && sep+="---:|---:|"
echo "$head"
echo "$sep"
status=0
for p in "${progs[@]}"; do
	spec=$(vg_cmd_of "$p")
	in=${spec%%|*}
	read -ra argv <<<"${spec#*|}"
	command -v "${argv[0]}" >/dev/null || { echo "$p: ${argv[0]} not installed (scripts/install-deps)" >&2; status=1; continue; }
	cs=(native none sample $noalloc $base cachegrind)
	if [ "$trace" = all ] || { [ "$trace" = short ] && is_short "$p"; }; then
		cs=(native none sample $noalloc $base trace cachegrind)
	fi
	: >"$w/times"
	# The order rotates every round (and reverses every other one): on a
	# shared machine a run right after another came out several percent
	# faster or slower whichever it was, in phases longer than a round.
	n=${#cs[@]}
	for ((r = 0; r < repeat; r++)); do
		for ((i = 0; i < n; i++)); do
			if ((r % 2)); then c=${cs[$(((n - 1 - i + r) % n))]}; else c=${cs[$(((i + r) % n))]}; fi
			echo "$c $(run "$c" "$in" "${argv[@]}")" >>"$w/times"
		done
	done
	declare -A wall cpu
	wall[trace]=; cpu[trace]=
	for c in "${cs[@]}"; do
		wall[$c]=$(awk -v c=$c '$1 == c { print $2 }' "$w/times" | median)
		cpu[$c]=$(awk -v c=$c '$1 == c { print $3 }' "$w/times" | median)
	done
	# wall ratios to native; CPU ratios in parentheses
	cell() { [ -n "${wall[$1]}" ] || { echo "-"; return; }
		awk -v a="${wall[$1]}" -v b="${wall[native]}" -v c="${cpu[$1]}" -v d="${cpu[native]}" \
		'BEGIN { printf "%.2fx (%.2fx)", a / b, c / d }'; }
	sn=$(awk -v a="${wall[sample]}" -v b="${wall[none]}" -v c="${cpu[sample]}" -v d="${cpu[none]}" \
		'BEGIN { printf "%.2f (%.2f)", a / b, c / d }')
	csr=$(awk -v a="${wall[cachegrind]}" -v b="${wall[sample]}" -v c="${cpu[cachegrind]}" -v d="${cpu[sample]}" \
		'BEGIN { printf "%.1f (%.1f)", a / b, c / d }')
	cn=$(awk -v a="${wall[cachegrind]}" -v b="${wall[none]}" -v c="${cpu[cachegrind]}" -v d="${cpu[none]}" \
		'BEGIN { printf "%.1f (%.1f)", a / b, c / d }')
	label=$p
	is_short "$p" && label="$p (start-up)"
	row="| $label | ${wall[native]} (${cpu[native]}) | $(cell none) | $(cell sample) | $(cell trace) | $(cell cachegrind) | $sn | $csr | $cn |"
	for x in $noalloc $base; do
		row+=$(awk -v a="${wall[$x]}" -v b="${wall[none]}" -v c="${cpu[$x]}" -v d="${cpu[none]}" \
			-v e="${wall[cachegrind]}" -v f="${cpu[cachegrind]}" \
			'BEGIN { printf " %.2f (%.2f) | %.1f (%.1f) |", a / b, c / d, e / a, f / c }')
	done
	echo "$row"
	awk -v a="${cpu[sample]}" -v b="${cpu[none]}" -v c="${cpu[cachegrind]}" \
		'BEGIN { exit !(a <= 1.5 * b && c >= 5 * a) }' || status=1
done
echo
echo "native: wall (CPU) seconds; ratios of wall times, of CPU times in parentheses; median of $repeat runs"
exit $status
