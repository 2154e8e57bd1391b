#!/usr/bin/env bash
# Accuracy of the sampled models on real kernels the models were never tuned
# on (bench/kernels/), against the exact simulation of the same binary.
#
# For each kernel and size: build it with `locprof cc -O2 -g`, record its
# full trace (`record --mode trace`) and simulate it exactly: fully
# associative LRU and random replacement at 4K..64M (powers of two) and the
# set-associative LRU caches 32K:8:64, 256K:8:64, 1M:16:64 and the host's
# data caches (those `simulate` accepts; a refused one is named in a note
# under the table). Then record it with the inst backend at each rate and
# seed and compare `locprof report`'s curves and named caches: StatStack
# against LRU, StatCache against random, the set-associative model against
# the set-associative simulation (LRU, and random replacement against
# report's random ratio of each cache), all with cold misses excluded, 64-byte
# lines. Errors are absolute, in percentage points.
#
# Coverage is the share of sizes (and caches) whose exact value lies inside
# the reported interval [miss_ratio_lo, miss_ratio_hi]; "n/a" where report
# gives no interval.
#
# Cachegrind: each kernel built with gcc -O2 -g (no instrumentation), its
# full trace recorded by the valgrind backend and simulated as a two-level
# hierarchy 32K:8:64 then 1M:16:64, against Cachegrind's D1 and LLd miss
# ratios for the same caches (--D1=32768,8,64 --LL=1048576,16,64).
# Both ratios are per data reference: simulate's ref_misses over its
# ref_accesses (a read-modify-write one access, a miss when any line of
# the reference misses), as Cachegrind counts.
#
# usage: bench/kernel-accuracy.sh [--quick] [--holdout] [--no-cachegrind|--cachegrind-only] [KERNEL...]
#   --quick          the small size only, one seed, Cachegrind on four
#                    kernels (a few minutes on an idle 2-core machine)
#   --holdout        the hold-out kernels (histogram, seidel2d, transpose,
#                    trmm, hashprobe, bst, nbody, conv2d, radixsort,
#                    mergesort, aosfield, streams, soa16, pagelist, lz77,
#                    pagerank, rgbblur, lrucache, nw, knapsack, pqueue,
#                    strsort, hashjoin, tiledgemm, vfilter, cg, wordcount,
#                    imgdown)
#                    instead of the default set
#   --no-cachegrind  leave out the Cachegrind table
#   --cachegrind-only  the Cachegrind table alone (no sampled models)
#   KERNEL           names of bench/kernels/*.c (default: all but the
#                    hold-out kernels)
# Environment: SOURCE=trace samples the trace itself (`locprof sample`,
# which counts a reference that straddles two lines as two line accesses,
# as simulate does) instead of recording with the inst backend: the
# models' own error, without the backends'. LOCPROF_BUILD (default build/), RATES (default "1e-3
# 1e-4"), SEEDS (default "1 2 3", quick "1"), SIZES (override every
# kernel's sizes, e.g. SIZES=small), KEEP=DIR keeps the work files,
# REPORT_ONLY=DIR reports again the profiles and simulations that a run
# with KEEP=DIR kept (same kernels, sizes, rates and seeds), recording
# nothing: another build's report on the same samples (with KEEP=DIR2
# too, its reports and rows.jsonl stay in DIR2).
# Prints markdown tables on stdout; progress on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# Traces and profiles with address-space randomisation off, so that the
# exact simulation and the profiles see one layout (the heap's addresses
# decide the sets of the set-associative caches).
fixed=()
command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null && fixed=(setarch "$(uname -m)" -R)
build=${LOCPROF_BUILD:-$here/build}
L=$build/locprof
quick=0
holdout=0
cg=1
models=1
kernels=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--holdout) holdout=1 ;;
	--no-cachegrind) cg=0 ;;
	--cachegrind-only) models=0 ;;
	-h | --help) sed -n '2,/^# Prints/p' "$0"; exit 0 ;;
	-*) echo "kernel-accuracy: unknown option '$1'" >&2; exit 2 ;;
	*) kernels+=("$1") ;;
	esac
	shift
done
[ -x "$L" ] || { echo "kernel-accuracy: no $L: build first (scripts/build)" >&2; exit 2; }
# The hold-out kernels: written to check changes to the models on kernels
# they were not developed on; reported apart (--holdout) and left out of
# the default set.
holdout_kernels=(histogram seidel2d transpose trmm hashprobe bst nbody conv2d radixsort mergesort aosfield streams soa16 pagelist
	lz77 pagerank rgbblur lrucache nw knapsack pqueue strsort hashjoin tiledgemm vfilter cg wordcount imgdown)
if [ ${#kernels[@]} -eq 0 ] && [ "$holdout" = 1 ]; then
	kernels=("${holdout_kernels[@]}")
elif [ ${#kernels[@]} -eq 0 ]; then
	for f in "$here"/bench/kernels/*.c; do
		k=$(basename "$f" .c)
		[[ " ${holdout_kernels[*]} " == *" $k "* ]] || kernels+=("$k")
	done
fi
kernels_models=("${kernels[@]}")
RATES=${RATES:-1e-3 1e-4}
if [ "$quick" = 1 ]; then SEEDS=${SEEDS:-1}; else SEEDS=${SEEDS:-1 2 3}; fi
if [ -n "${REPORT_ONLY:-}" ]; then
	[ -d "$REPORT_ONLY" ] || { echo "kernel-accuracy: no directory $REPORT_ONLY" >&2; exit 2; }
	if [ -n "${KEEP:-}" ] && [ "$KEEP" != "$REPORT_ONLY" ]; then
		W=$KEEP # the reports and rows.jsonl, to compare builds row by row
		mkdir -p "$W"
	else
		W=$(mktemp -d /tmp/locprof-kacc.XXXXXX)
		trap 'rm -rf "$W"' EXIT
	fi
elif [ -n "${KEEP:-}" ]; then
	W=$KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/locprof-kacc.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi
compare=$here/bench/kernel-compare.py

# small and large size of each kernel: about 2-5 and 10-30 million
# references (instrumented, -O2)
sizes() {
	case "$1" in
	gemm) echo "96 200" ;;
	lu) echo "144 288" ;;
	jacobi2d) echo "240 520" ;;
	heat3d) echo "40 84" ;;
	mv-row | mv-col) echo "600 1400" ;;
	covariance) echo "120 240" ;;
	chain) echo "160 320" ;;
	bfs) echo "16384 65536" ;;
	fft) echo "8192 32768" ;;
	transpose) echo "500 1100" ;;
	seidel2d) echo "300 640" ;;
	trmm) echo "160 320" ;;
	histogram) echo "500000 2000000" ;;
	csrmv) echo "20000 80000" ;;
	kmeans) echo "5000 20000" ;;
	floyd) echo "96 192" ;;
	hashprobe) echo "200000 800000" ;;
	bst) echo "50000 200000" ;;
	nbody) echo "400 1000" ;;
	conv2d) echo "300 700" ;;
	radixsort) echo "200000 1000000" ;;
	mergesort) echo "100000 400000" ;;
	aosfield) echo "1500 6000" ;;
	streams) echo "40000 160000" ;;
	soa16) echo "400000 1600000" ;;
	pagelist) echo "400 1600" ;;
	lz77) echo "100000 400000" ;;
	pagerank) echo "15000 60000" ;;
	rgbblur) echo "400 900" ;;
	lrucache) echo "40000 150000" ;;
	nw) echo "700 1500" ;;
	knapsack) echo "30000 120000" ;;
	pqueue) echo "20000 80000" ;;
	strsort) echo "50000 200000" ;;
	hashjoin) echo "400000 1600000" ;;
	tiledgemm) echo "128 256" ;;
	vfilter) echo "512 1024" ;;
	cg) echo "160 320" ;;
	wordcount) echo "1000000 4000000" ;;
	imgdown) echo "1400 2800" ;;
	*) echo "kernel-accuracy: no sizes for kernel '$1'" >&2; exit 2 ;;
	esac
}
size_list() {
	local s l
	read -r s l < <(sizes "$1")
	case "${SIZES:-}" in
	small) echo "$s" ;;
	large) echo "$l" ;;
	'') if [ "$quick" = 1 ]; then echo "$s"; else echo "$s $l"; fi ;;
	*) echo "$SIZES" ;;
	esac
}

# The set-associative caches: three fixed geometries and the host's data
# caches (sysfs), as SIZE:WAYS:64; the ones simulate refuses
# are left out with a note.
sa_specs=(32K:8:64 256K:8:64 1M:16:64)
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
	[ -r "$d/type" ] && [ "$(cat "$d/type")" != Instruction ] || continue
	sa_specs+=("$(cat "$d/size"):$(cat "$d/ways_of_associativity"):64")
done
printf 'R 1000 8 1\n' >"$W/probe.txt"
ok_specs=()
for s in "${sa_specs[@]}"; do
	if "$L" simulate "$W/probe.txt" --cache "$s" >/dev/null 2>"$W/probe.err"; then
		ok_specs+=("$s")
	else
		echo "kernel-accuracy: leaving out cache $s: $(head -1 "$W/probe.err")" >&2
		echo "- cache $s left out: $(head -1 "$W/probe.err")" >>"$W/notes.md"
	fi
done
sa_sim=() sa_rep=()
for s in "${ok_specs[@]}"; do sa_sim+=(--cache "$s" --cache "$s:random") sa_rep+=(--cache "$s"); done

: >"$W/rows.jsonl"
[ "$models" = 1 ] || kernels_models=()
for k in "${kernels_models[@]}"; do
	src=$here/bench/kernels/$k.c
	[ -f "$src" ] || { echo "kernel-accuracy: no $src" >&2; exit 2; }
	[ -n "${REPORT_ONLY:-}" ] || "$L" cc -O2 -g -o "$W/$k" "$src" -lm 2>"$W/cc.err" || { cat "$W/cc.err" >&2; exit 1; }
	for p in $(size_list "$k"); do
		if [ -n "${REPORT_ONLY:-}" ]; then
			echo "kernel-accuracy: $k $p: the profiles of $REPORT_ONLY" >&2
			cp "$REPORT_ONLY/sim-$k-$p.csv" "$REPORT_ONLY/simsa-$k-$p.csv" "$W/"
		else
			echo "kernel-accuracy: $k $p: trace and simulation" >&2
			"${fixed[@]}" "$L" record -q --mode trace -o "$W/t.lpt" -- "$W/$k" "$p" >/dev/null
			"$L" simulate "$W/t.lpt" --sizes 4K..64M --policy lru,random --format csv >"$W/sim-$k-$p.csv"
			"$L" simulate "$W/t.lpt" "${sa_sim[@]}" --format csv >"$W/simsa-$k-$p.csv"
		fi
		for rate in $RATES; do
			for seed in $SEEDS; do
				pp=$W/p-$k-$p-$rate-$seed.lpp
				if [ -n "${REPORT_ONLY:-}" ]; then
					pp=$REPORT_ONLY/p-$k-$p-$rate-$seed.lpp
					[ -f "$pp" ] || { echo "kernel-accuracy: no $pp (kept with KEEP=DIR?)" >&2; exit 2; }
				elif [ "${SOURCE:-inst}" = trace ]; then
					"$L" sample "$W/t.lpt" -r "$rate" -s "$seed" -o "$pp" 2>/dev/null
				else
					"${fixed[@]}" "$L" record -q -r "$rate" -s "$seed" -o "$pp" -- "$W/$k" "$p" >/dev/null
				fi
				"$L" report "$pp" --sizes 4K..64M --format csv --top 0 >"$W/model.csv"
				"$L" report "$pp" "${sa_rep[@]}" --format json --top 0 >"$W/model.json"
				python3 "$compare" row "$k" "$p" "$rate" "$seed" "$W/sim-$k-$p.csv" "$W/simsa-$k-$p.csv" \
					"$W/model.csv" "$W/model.json" >>"$W/rows.jsonl"
				[ -n "${KEEP:-}" ] || [ -n "${REPORT_ONLY:-}" ] || rm -f "$pp"
			done
		done
		rm -f "$W/t.lpt"
	done
done

if [ "$models" = 1 ]; then
	echo "Sampled models against exact simulation (inst backend; rates $RATES; seeds $SEEDS;" \
		"set-associative caches: ${ok_specs[*]}; errors in percentage points, cold misses excluded)"
	echo
	python3 "$compare" table "$W/rows.jsonl"
	[ ! -s "$W/notes.md" ] || { echo; cat "$W/notes.md"; }
	echo
fi

[ "$cg" = 1 ] || exit 0
command -v valgrind >/dev/null || { echo "kernel-accuracy: no valgrind: Cachegrind table left out" >&2; exit 0; }
cg_kernels=("${kernels[@]}")
[ "$quick" = 0 ] || cg_kernels=("${kernels[@]:0:4}")
: >"$W/cg.jsonl"
for k in "${cg_kernels[@]}"; do
	read -r p _ < <(size_list "$k")
	echo "kernel-accuracy: $k $p: Cachegrind" >&2
	gcc -O2 -g -o "$W/$k-gcc" "$here/bench/kernels/$k.c" -lm
	"$L" record --backend valgrind -X --allocs=no -m trace -q -o "$W/t.lpt" -- "$W/$k-gcc" "$p" >/dev/null
	"$L" simulate "$W/t.lpt" --level 32K:8:64 --level 1M:16:64 --format json >"$W/hier.json"
	rm -f "$W/t.lpt"
	valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
		--cachegrind-out-file=/dev/null "$W/$k-gcc" "$p" >/dev/null 2>"$W/cg.txt"
	python3 - "$k" "$p" "$W/hier.json" "$W/cg.txt" >>"$W/cg.jsonl" <<'PY'
import json, re, sys
k, p, hier, cg = sys.argv[1:]
text = open(cg).read()
num = lambda label: int(re.search(label + r':\s*([\d,]+)', text).group(1).replace(',', ''))
h = json.load(open(hier))
levels = h.get('levels', h.get('caches', []))
# per reference, as Cachegrind counts, where simulate's JSON has it
refs = h.get('ref_accesses')
per_ref = all('ref_misses' in l for l in levels) and refs
m1 = levels[0]['ref_misses' if per_ref else 'misses']
m2 = levels[1]['ref_misses' if per_ref else 'misses']
print(json.dumps({'kernel': k, 'P': p, 'cg_refs': num('D +refs'), 'cg_d1': num('D1 +misses'),
                  'cg_ll': num('LLd misses'), 'lp_refs': refs, 'lp_acc': levels[0]['accesses'],
                  'lp_d1': m1, 'lp_ll': m2, 'per_reference': bool(per_ref)}))
PY
done
echo "Cachegrind against the valgrind backend's trace simulated by locprof (gcc -O2 builds," \
	"small sizes; D1 32K:8:64, LL 1M:16:64; ratios in %, differences in points)"
echo
python3 "$compare" cachegrind "$W/cg.jsonl"
