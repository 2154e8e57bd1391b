#!/usr/bin/env bash
# Working-set graphs of the same example program from the two live backends
# (docs/valgrind.md, "Agreement with the inst backend"): the program built
# with `locprof cc -O2` (examples/<name>-lp) under the inst backend, and the
# same source built by the same compiler with the same flags but without
# instrumentation (clang -O2, here) under the valgrind backend. Both at rate 1e-3, seed 1; `locprof report --format
# csv` gives the StatStack (LRU) and StatCache (random) curves at 4K..64M;
# the table shows the mean and the largest absolute difference of the miss
# ratio over the sizes, and the references each backend counted.
#
# The valgrind backend sees more: the dynamic loader, libc (printf, malloc's
# own bookkeeping when -X --allocs=no), and every stack spill or reload,
# where the inst backend sees only the loads and stores clang instrumented
# in the program itself (and the instrumentation itself may change what the
# optimiser keeps in registers).
#
# usage: bench/valgrind-vs-inst.sh [BUILD_DIR] ["NAME ARGS" ...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=("matmul naive 200" "matmul blocked 200" "listwalk" "stencil")
locprof=$build/locprof
w=$(mktemp -d /tmp/locprof-vginst.XXXXXX)
trap 'rm -rf "$w"' EXIT

echo "| program | refs inst | refs valgrind | curve | mean abs diff | max abs diff (at size) |"
echo "|---|---:|---:|---|---:|---:|"
for r in "${runs[@]}"; do
	read -ra a <<<"$r"
	name=${a[0]}
	args=("${a[@]:1}")
	[ -x "$build/examples/$name-lp" ] || { echo "no $build/examples/$name-lp (needs clang)" >&2; exit 2; }
	clang -O2 -o "$w/$name" "examples/$name.c"
	"$locprof" record -q -r 1e-3 -s 1 -o "$w/i.lpp" -- "$build/examples/$name-lp" "${args[@]}" >/dev/null
	"$locprof" record -q -b valgrind -r 1e-3 -s 1 -o "$w/v.lpp" -- "$w/$name" "${args[@]}" >/dev/null
	ri=$("$locprof" dump "$w/i.lpp" | sed -n 's/^references: \([0-9]*\).*/\1/p')
	rv=$("$locprof" dump "$w/v.lpp" | sed -n 's/^references: \([0-9]*\).*/\1/p')
	"$locprof" report "$w/i.lpp" --format csv --top 0 | grep -v '^#' >"$w/i.csv"
	"$locprof" report "$w/v.lpp" --format csv --top 0 | grep -v '^#' >"$w/v.csv"
	for curve in statstack statcache; do
		awk -F, -v c=$curve 'NR == FNR { if ($1 == c) m[$2] = $3; next }
			$1 == c && ($2 in m) { d = $3 - m[$2]; if (d < 0) d = -d; s += d; n++; if (d > mx) { mx = d; at = $2 } }
			END { printf "%.4f %.4f %s\n", s / n, mx, at }' "$w/i.csv" "$w/v.csv" >"$w/d"
		read -r mean mx at <"$w/d"
		echo "| $r | $ri | $rv | $curve | $mean | $mx ($at) |"
	done
done

# The tool's sampler against the library's (`locprof sample`) on the tool's
# own trace of the same program: same rate and seed, but the trace sampler
# keeps one clock for the whole process and counts line accesses (a
# straddling reference is two), so the samples differ and the curves agree
# statistically.
echo
echo "| program | curve | tool sampler vs locprof sample on the tool's trace: mean abs diff | max abs diff (at size) |"
echo "|---|---|---:|---:|"
for r in "${runs[@]}"; do
	read -ra a <<<"$r"
	name=${a[0]}
	args=("${a[@]:1}")
	"$locprof" record -q -b valgrind -r 1e-3 -s 1 -o "$w/v.lpp" -- "$w/$name" "${args[@]}" >/dev/null
	"$locprof" record -q -b valgrind -m trace -o "$w/v.lpt" -- "$w/$name" "${args[@]}" >/dev/null
	"$locprof" sample "$w/v.lpt" -o "$w/s.lpp" --rate 1e-3 --seed 1 2>/dev/null
	"$locprof" report "$w/v.lpp" --format csv --top 0 | grep -v '^#' >"$w/v.csv"
	"$locprof" report "$w/s.lpp" --format csv --top 0 | grep -v '^#' >"$w/s.csv"
	rm -f "$w/v.lpt"
	for curve in statstack statcache; do
		awk -F, -v c=$curve 'NR == FNR { if ($1 == c) m[$2] = $3; next }
			$1 == c && ($2 in m) { d = $3 - m[$2]; if (d < 0) d = -d; s += d; n++; if (d > mx) { mx = d; at = $2 } }
			END { printf "%.4f %.4f %s\n", s / n, mx, at }' "$w/s.csv" "$w/v.csv" >"$w/d"
		read -r mean mx at <"$w/d"
		echo "| $r | $curve | $mean | $mx ($at) |"
	done
done
