#!/usr/bin/env bash
# Overhead of the inst backend: run time of each example natively and under
# `locprof record` (sample mode), at rates 1e-3 and 1e-4, with and without
# LTO; median of RUNS runs (default 5); printed as ratios to native.
# usage: bench/overhead.sh [BUILD_DIR]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${RUNS:-5}
L=$B/locprof
E=$B/examples
T=$(mktemp -d /tmp/locprof-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timeit() { # timeit CMD... -> median wall seconds
	for _ in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l
	done | median
}

printf '%-22s %8s %10s %10s %10s %10s %10s\n' example native inert-lto lto-1e-3 lto-1e-4 nolto-1e-3 nolto-1e-4
for ex in "matmul naive" "matmul interchange" "matmul blocked" "layout aos" "layout soa" \
	"listwalk list" "listwalk array" "stencil"; do
	set -- $ex
	prog=$1; shift
	native=$(timeit "$E/$prog" "$@")
	inert=$(timeit "$E/$prog-lp" "$@")
	row=$(printf '%.3f' "$native")
	row="$row $(echo "$inert / $native" | bc -l)"
	for v in lp lp-nolto; do
		for rate in 1e-3 1e-4; do
			t=$(timeit "$L" record -q -o "$T/p.lpp" --rate $rate -- "$E/$prog-$v" "$@")
			row="$row $(echo "$t / $native" | bc -l)"
		done
	done
	printf '%-22s %8.3fs %9.2fx %9.2fx %9.2fx %9.2fx %9.2fx\n' "$ex" $row
done
