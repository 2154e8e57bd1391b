#!/usr/bin/env bash
# Accuracy of cross-input prediction (locprof predict, Marin & Mellor-Crummey)
# against full simulation (locprof simulate) of the same hierarchy.
#
# For each kernel: build it with `locprof cc --no-lto -O2 -g` (line info for
# the groups; clang 14 crashes linking -g with LTO), collect runs at five
# small sizes, fit a model, then at each prediction size (4x to 10x the
# largest fitted size) record the full trace, simulate the machine's
# hierarchy twice (its real geometry, and fully associative levels of the
# same sizes) plus its TLBs (fully associative caches of page-sized blocks),
# and compare with the model's fully-associative and set-associative
# predictions. Prints one row per kernel, size and level; errors are
# (predicted - simulated) / simulated.
#
# Sizes: five fitted sizes, multiples of 8 (vectorised loops: no odd
# remainders), predictions at 4x the largest (the simulations of 10x cost
# too much here: up to 2.6 billion references), none a power of two (see
# docs/prediction.md, "Limits"). Each kernel is fitted where its data
# already span tens of the TLBs' 16K pages at the largest sizes, so that
# page-level distances and counts are not a handful of whole pages, and
# transpose's and spmv's rows and vectors are already larger than a page
# and the TLBs' reach (docs/prediction.md, "Tiny fitted sizes"). matmul's
# sizes span 2.5x, like the paper's 20..50 (the multiples of 8 nearest to
# 80 * 2.5^(i/4), 128 replaced by 120): over a narrower range (136..200,
# B spanning 9 to 20 pages) the P^2 growth of its page-level distances
# (0.25 pages off a straight line) is lost in the +-1 page by which a walk's
# page crossings depend on where malloc put B. A larger matmul would be
# better still, but its 4x simulation costs 2N^3 references: 1 billion at
# 808.
#
# One recording at the predicted size is streamed (record -o -) into the
# three simulations at once: its trace would take gigabytes.
#
# Set associativity four ways: sa_* is `predict at`'s default, strided
# placement (for groups that walk memory with a measured stride, the sets
# the walk fills at the predicted size; docs/prediction.md, "Strided
# placement"; the binomial model for the others); bin_* the paper's
# binomial model (`--binomial`, from the stack distances alone); and,
# because the runs are collected with `--machine M`, sd_* the set-distance
# histograms of the machine's set-associative levels (exact at the fitted
# sizes; `--set-distances`) and cal_* the placement-calibrated model
# (`--calibrated`, a mixture of random and even placement fitted per group
# to the set distances; the binomial model where undetermined). TLBs are
# fully associative: all are the cut.
#
# usage: bench/prediction-accuracy.sh [--quick] [--machine M] [--keep DIR] [--reuse [--recollect]] [--no-sets] [KERNEL...]
#   kernels: matmul stencil transpose spmv (default: all)
#   --quick   smaller sizes (a few seconds per kernel; for development)
#   --no-sets collect no set distances (binomial only; sd_* = cal_* = sa_*)
#   --reuse   with --keep DIR: a kernel whose runs (DIR/K-model/size-*.xrun)
#             and simulated counts (DIR/K-measured.csv) are already there is
#             refitted and predicted with the current code, not collected
#             and simulated again
#   --recollect with --reuse: collect the runs again with the current code
#             (the simulated counts at the predicted sizes are kept)
# Environment: LOCPROF_BUILD (default build/).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${LOCPROF_BUILD:-$here/build}
L=$build/locprof
machine=itanium2
quick=0
sets=1
keep=
reuse=0
recollect=0
kernels=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--no-sets) sets=0 ;;
	--machine) machine=$2; shift ;;
	--keep) keep=$2; shift ;;
	--reuse) reuse=1 ;;
	--recollect) recollect=1 ;;
	-h|--help) sed -n '2,/^# Environment/p' "$0"; exit 0 ;;
	*) kernels+=("$1") ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(matmul stencil transpose spmv)
[ -x "$L" ] || { echo "no $L: build first (scripts/build)" >&2; exit 1; }
[ "$reuse" = 0 ] || [ -n "$keep" ] || { echo "--reuse needs --keep DIR" >&2; exit 2; }

if [ -n "$keep" ]; then
	W=$keep
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/locprof-prediction-bench.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi

# kernel: source, arguments with P for the size, fitted sizes, predicted
# sizes (quick: smaller), unit of work
spec() {
	case "$1:$quick" in
	matmul:0)    echo "matmul.c|naive P|80 104 120 160 200|808|P^3" ;;
	matmul:1)    echo "matmul.c|naive P|16 20 24 28 32|128|P^3" ;;
	stencil:0)   echo "stencil.c|P 4|248 376 504 632 760|3040|P^2" ;;
	stencil:1)   echo "stencil.c|P 2|32 40 48 56 64|256|P^2" ;;
	transpose:0) echo "transpose.c|P 2|2056 2184 2312 2440 2568|10280|P^2" ;;
	transpose:1) echo "transpose.c|P 2|32 40 48 56 64|256|P^2" ;;
	spmv:0)      echo "spmv.c|P 2|400 480 560 640 720|2880|P^2" ;;
	spmv:1)      echo "spmv.c|P 2|16 20 24 28 32|128|P^2" ;;
	*) echo "unknown kernel '$1' (matmul stencil transpose spmv)" >&2; exit 2 ;;
	esac
}

# The machine's levels as simulator specs: hierarchy (real and fully
# associative) and TLBs, from `locprof predict at --format json`.
levels_of() {
	"$L" predict at "$1" --size 1 --machine "$machine" --format json |
		grep -o '"levels": \[[^]]*\]' | head -1 |
		grep -o '{[^}]*}' |
		sed -E 's/.*"name": "([^"]*)", "kind": "([^"]*)", "blocks": ([0-9]+), "assoc": ([0-9]+), "block": ([0-9]+).*/\1 \2 \3 \4 \5/'
}

# The predicted rows of kernel $k at size $p (model $dir, simulated counts
# $meas): binomial (sa), set distances (sd; the binomial where none) and
# placement-calibrated (cal; the binomial where undetermined).
predict_row() {
	"$L" predict at "$dir" --size "$p" --machine "$machine" --format csv |
		awk -F, '$2 == "program" { print $6, $10, $11 }' >"$W/pred-st.txt"
	"$L" predict at "$dir" --size "$p" --machine "$machine" --format csv --binomial |
		awk -F, '$2 == "program" { print $11 }' >"$W/pred-bin.txt"
	"$L" predict at "$dir" --size "$p" --machine "$machine" --format csv --set-distances |
		awk -F, '$2 == "program" { print $11 }' >"$W/pred-sd.txt"
	"$L" predict at "$dir" --size "$p" --machine "$machine" --format csv --calibrated |
		awk -F, '$2 == "program" { print $11 }' >"$W/pred-cal.txt"
	paste -d' ' "$W/pred-st.txt" "$W/pred-bin.txt" "$W/pred-sd.txt" "$W/pred-cal.txt" >"$W/pred.txt"
	while read -r name pfa psa pbin psd pcal; do
		line=$(grep "^$p,$name," "$meas")
		sfa=$(echo "$line" | cut -d, -f3)
		ssa=$(echo "$line" | cut -d, -f4)
		read -r efa esa ebin esd ecal < <(awk -v a="$pfa" -v b="$sfa" -v c="$psa" -v d="$ssa" -v e="$psd" -v f="$pcal" -v g="$pbin" \
			'function err(p, s) { return s > 0 ? 100 * (p - s) / s : (p > 0.5 ? 100 : 0) }
			 BEGIN { printf "%.2f %.2f %.2f %.2f %.2f\n", err(a, b), err(c, d), err(g, d), err(e, d), err(f, d) }')
		printf "%-10s %6s %-5s %14.0f %14.0f %8s %14.0f %14.0f %8s %14.0f %8s %14.0f %8s %14.0f %8s\n" "$k" "$p" "$name" \
			"$sfa" "$pfa" "$efa" "$ssa" "$psa" "$esa" "$pbin" "$ebin" "$psd" "$esd" "$pcal" "$ecal"
		worst_fa=$(awk -v w="$worst_fa" -v e="$efa" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
		worst_sa=$(awk -v w="$worst_sa" -v e="$esa" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
		worst_bin=$(awk -v w="$worst_bin" -v e="$ebin" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
		worst_sd=$(awk -v w="$worst_sd" -v e="$esd" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
		worst_cal=$(awk -v w="$worst_cal" -v e="$ecal" 'BEGIN { e = e < 0 ? -e : e; print (e > w ? e : w) }')
	done <"$W/pred.txt"
}

printf "%-10s %6s %-5s %14s %14s %8s %14s %14s %8s %14s %8s %14s %8s %14s %8s\n" kernel P level fa_sim fa_pred fa_err% sa_sim sa_pred sa_err% bin_pred bin_err% sd_pred sd_err% cal_pred cal_err%
worst_fa=0
worst_sa=0
worst_sd=0
worst_cal=0
worst_bin=0
collect_opts=()
[ "$sets" = 0 ] || collect_opts=(--machine "$machine")
for k in "${kernels[@]}"; do
	IFS='|' read -r src args fit pred work < <(spec "$k")
	bin=$W/$k-lp
	dir=$W/$k-model
	meas=$W/$k-measured.csv
	again=0
	if [ "$reuse" = 1 ] && [ -f "$meas" ]; then
		again=1
		for p in $fit; do [ -f "$dir/size-$p.xrun" ] || again=0; done
		for p in $pred; do grep -q "^$p," "$meas" || again=0; done
	fi
	if [ "$again" = 0 ] || [ "$recollect" = 1 ]; then
		"$L" cc --no-lto -O2 -g -o "$bin" "$here/examples/$src" 2>"$W/cc.err" || { cat "$W/cc.err" >&2; exit 1; }
		rm -rf "$dir"
		for p in $fit; do
			# shellcheck disable=SC2086
			"$L" predict collect -q "${collect_opts[@]}" --size "$p" -o "$dir" -- "$bin" ${args//P/$p} >/dev/null
		done
	fi
	"$L" predict fit -q "$dir"
	mapfile -t lv < <(levels_of "$dir")
	sa=() fa=() tlb=()
	for x in "${lv[@]}"; do
		read -r name kind blocks assoc block <<<"$x"
		size=$((blocks * block))
		a=$([ "$assoc" = 0 ] && echo full || echo "$assoc")
		if [ "$kind" = tlb ]; then
			tlb+=(--cache "$size:$a:$block")
		else
			sa+=(--level "$size:$a:$block")
			fa+=(--level "$size:full:$block")
		fi
	done
	[ "$again" = 1 ] || echo "size,level,fa_misses,sa_misses" >"$meas"
	for p in $pred; do
		[ "$again" = 0 ] || { predict_row; continue; }
		# one recording, streamed (record -o -) into the three simulations
		# at once: the traces of these sizes would take gigabytes
		f1=$W/fifo-fa f2=$W/fifo-tlb
		rm -f "$f1" "$f2"
		mkfifo "$f1" "$f2"
		"$L" simulate - "${fa[@]}" --format csv <"$f1" >"$W/sim-fa.csv" &
		pfa=$!
		if [ ${#tlb[@]} -gt 0 ]; then
			"$L" simulate - "${tlb[@]}" --format csv <"$f2" >"$W/sim-tlb.csv" &
		else
			cat "$f2" >/dev/null &
		fi
		ptlb=$!
		# shellcheck disable=SC2086
		"$L" record -q --mode trace -o - -- "$bin" ${args//P/$p} 2>"$W/record.err" |
			tee "$f1" "$f2" | "$L" simulate - "${sa[@]}" --format csv >"$W/sim-sa.csv" ||
			{ cat "$W/record.err" >&2; exit 1; }
		wait "$pfa" && wait "$ptlb" || { echo "a simulation failed" >&2; exit 1; }
		rm -f "$f1" "$f2"
		simfa=$(tail -n +2 "$W/sim-fa.csv" | cut -d, -f4)
		simsa=$(tail -n +2 "$W/sim-sa.csv" | cut -d, -f4)
		simtlb=
		[ ${#tlb[@]} -eq 0 ] || simtlb=$(tail -n +2 "$W/sim-tlb.csv" | cut -d, -f4)
		mapfile -t vfa <<<"$simfa"
		mapfile -t vsa <<<"$simsa"
		mapfile -t vtlb <<<"$simtlb"
		ci=0 ti=0
		for x in "${lv[@]}"; do
			read -r name kind blocks assoc block <<<"$x"
			if [ "$kind" = tlb ]; then
				echo "$p,$name,${vtlb[$ti]},${vtlb[$ti]}" >>"$meas"
				ti=$((ti + 1))
			else
				echo "$p,$name,${vfa[$ci]},${vsa[$ci]}" >>"$meas"
				ci=$((ci + 1))
			fi
		done
		predict_row
	done
	# plots: misses per unit of work against P, with the simulated points
	"$L" predict at "$dir" --size "${pred// /,}" --machine "$machine" --work "$work" \
		--measured "$meas" --svg "$W/$k" >/dev/null
done
echo "worst |error|: fully associative $worst_fa%, set associative $worst_sa% (strided, the default), $worst_bin% (binomial), $worst_sd% (set distances), $worst_cal% (calibrated) (machine $machine)"
[ -z "$keep" ] || echo "models, measurements and plots kept in $W"
