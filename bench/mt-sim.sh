#!/usr/bin/env bash
# The multi-threaded kernels of examples/mt/ through the multi-threaded
# functional simulator (docs/simulator.md, "Several threads"): each
# instrumented build (examples/mt-<name>-lp) is recorded with
# `locprof record --mode trace` and simulated with a private 32 KiB L1 and
# 256 KiB L2 per core (a core per thread), an 8 MiB shared LLC and MESI;
# the table gives, over all threads, references, L1 misses and their
# coherence part (false and true sharing), the L2 and LLC misses. With
# --attribute it also prints each kernel's coherence tables. The traces of
# a multi-threaded run depend on how its threads overlapped on this
# machine's cores, so the coherence counts vary from run to run.
#
# usage: bench/mt-sim.sh [BUILD_DIR] [--attribute]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
attribute=${2:-}
locprof=$build/locprof
ex=$build/examples
[ -x "$ex/mt-counters-lp" ] || { echo "no $ex/mt-counters-lp: build with clang (scripts/build)" >&2; exit 1; }
w=$(mktemp -d /tmp/locprof-mtsim.XXXXXX)
trap 'rm -rf "$w"' EXIT
sim=(--private 32K:8:64 --private 256K:8:64 --shared 8M:16:64)
runs=("mt-disjoint 4 16384 4" "mt-readonly 4 65536 50000" "mt-queue 50000 256"
	"mt-counters 4 100000" "mt-stencil 256 4")

echo "| kernel | threads | references | L1 misses | coherence | false sharing | true sharing | L2 misses | LLC misses |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in "${runs[@]}"; do
	set -- $r
	name=$1
	shift
	OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive "$locprof" record --mode trace -o "$w/$name.lpt" -- \
		"$ex/$name-lp" "$@" >/dev/null 2>"$w/$name.err"
	"$locprof" simulate "$w/$name.lpt" "${sim[@]}" --format csv >"$w/$name.csv"
	awk -F, -v name="$name $*" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$3 != "all" && $1 == "L1" { threads++ }
		$3 == "all" { m[$1] = $c["misses"]; if ($1 == "L1") { acc = $c["accesses"]; coh = $c["coherence"];
			fs = $c["false_sharing"]; ts = $c["true_sharing"] } }
		END { printf "| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", name, threads, acc, m["L1"], coh, fs, ts,
			m["L2"], m["LLC"] }' "$w/$name.csv"
	if [ "$attribute" = --attribute ]; then
		"$locprof" simulate "$w/$name.lpt" "${sim[@]}" --attribute --top 5 | sed -n '/^## /,$p' >"$w/$name.attr"
		echo
		echo "$name $*:"
		cat "$w/$name.attr"
		echo
	fi
done
