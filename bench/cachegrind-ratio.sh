#!/usr/bin/env bash
# Per-reference D1 miss ratio of the valgrind backend's exact trace against
# Cachegrind's (docs/simulator.md, "Per reference").
#
# For each kernel of tests/straddle/ and bench/kernels/ (at its small
# size, as bench/kernel-accuracy.sh runs it) built with gcc -O3 (and
# -mavx2, so that 32-byte accesses straddle too): record its full trace under valgrind
# (`locprof record --backend valgrind -X --allocs=no -m trace`), simulate
# the D1 geometry with `locprof simulate --cache`, and compare the
# per-reference ratio (ref-miss%) with Cachegrind's D1 miss rate
# (`valgrind --tool=cachegrind --cache-sim=yes --D1=SIZE,ASSOC,LINE`),
# computed from its D refs and D1 misses. The line-access ratio (miss%)
# is shown beside it. Target: within 0.1 point; exits 1 otherwise.
#
# usage: bench/cachegrind-ratio.sh [BUILD_DIR] [D1 SPEC, e.g. 32K:8:64] [KERNEL...]
#   KERNEL: a name of tests/straddle/ or bench/kernels/ (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
spec=${2:-32K:8:64}
shift $(( $# < 2 ? $# : 2 ))
locprof=$build/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }
IFS=: read -r size assoc line <<<"$spec"
case $size in *K) bytes=$(( ${size%K} * 1024 )) ;; *M) bytes=$(( ${size%M} * 1048576 )) ;; *) bytes=$size ;; esac

w=$(mktemp -d /tmp/locprof-cgratio.XXXXXX)
trap 'rm -rf "$w"' EXIT
kernels=("unaligned 4096 50" "unaligned 40000 5 61" "vecodd 20000 20" "stencil 300 10" "matmul 120"
	"gemm 96" "lu 144" "jacobi2d 240" "heat3d 40" "mv-row 600" "mv-col 600" "covariance 120"
	"chain 160" "bfs 16384" "fft 8192" "csrmv 20000" "kmeans 5000" "floyd 96")
if [ $# -gt 0 ]; then
	all=("${kernels[@]}")
	kernels=()
	for want in "$@"; do
		for k in "${all[@]}"; do [ "${k%% *}" != "$want" ] || kernels+=("$k"); done
	done
fi
status=0
echo "| kernel | D refs (cachegrind) | accesses per reference (locprof) | line accesses | miss% per line access | ref-miss% (locprof) | D1 miss rate (cachegrind) | difference (points) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for k in "${kernels[@]}"; do
	read -ra argv <<<"$k"
	src=tests/straddle/${argv[0]}.c
	[ -e "$src" ] || src=bench/kernels/${argv[0]}.c
	gcc -O3 -mavx2 -o "$w/${argv[0]}" "$src" -lm
	argv[0]=$w/${argv[0]}
	"$locprof" record --backend valgrind -X --allocs=no -m trace -q -o "$w/t.lpt" -- "${argv[@]}" >"$w/out1"
	"$locprof" simulate "$w/t.lpt" --cache "$spec:lru" --format csv >"$w/sim.csv"
	valgrind --tool=cachegrind --cache-sim=yes --D1="$bytes,$assoc,$line" \
		--cachegrind-out-file=/dev/null "${argv[@]}" >"$w/out2" 2>"$w/cg"
	cmp -s "$w/out1" "$w/out2" || { echo "$k: the two runs printed different output" >&2; status=1; }
	drefs=$(sed -n 's/.*D   refs: *\([0-9,]*\).*/\1/p' "$w/cg" | tr -d ,)
	dmiss=$(sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' "$w/cg" | tr -d ,)
	IFS=, read -r _ _ acc _ ratio _ _ _ racc _ rratio < <(sed -n 2p "$w/sim.csv")
	row=$(awk -v k="$k" -v dr="$drefs" -v dm="$dmiss" -v acc="$acc" -v r="$ratio" -v racc="$racc" -v rr="$rratio" 'BEGIN {
		cg = 100 * dm / dr; d = 100 * rr - cg
		printf "| %s | %d | %d | %d | %.3f | %.3f | %.3f | %+.3f |", k, dr, racc, acc, 100 * r, 100 * rr, cg, d
		exit (d < -0.1 || d > 0.1) }') || status=1
	echo "$row"
	rm -f "$w/t.lpt"
done
exit $status
