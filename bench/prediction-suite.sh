#!/usr/bin/env bash
# Cross-size prediction (locprof predict) on kernels it was never tuned on
# (bench/kernels/), against simulation at the predicted size.
#
# For each kernel and each build style:
#   runtime  one binary (`locprof cc --no-lto -O2 -g`), the size an argument
#   compile  one binary per size (the same, with -DN=P)
# collect runs at five sizes over about 2.5x (`predict collect`), fit
# (`predict fit`), and predict at 4x and 8x the largest fitted size
# (`predict at`) on the machines itanium2, r12000 and host. The reference:
# `record --mode trace` of the same program (for compile, the binary built
# for that size) at the predicted size, simulated with each machine's
# levels, as a hierarchy (each level sees the misses of the one above),
# fully associative and with the real geometry, and its TLBs as fully
# associative caches of page-sized blocks (bench/prediction-accuracy.sh
# does the same for the examples). A level simulate refuses is "n/s", not
# simulated.
#
# Errors are (predicted - simulated) / simulated, fully associative (fa)
# and set associative (sa, predict's default model). Where predict marks a
# level (a CSV column named for a flag, validity or reason, or an
# interval), the table says so; without such columns, "n/a".
#
# usage: bench/prediction-suite.sh [--quick] [--update-docs] [--sizes LIST]
#                                  [--factors LIST] [--builds LIST]
#                                  [--machines LIST] [--sim-cache DIR]
#                                  [--no-simulate] [--no-collect] [KERNEL...]
#   --quick        smaller sizes (8x at about a million references)
#   --update-docs  rewrite the figures table of docs/prediction.md (between
#                  its begin/end markers) with this run's tables
#   --sizes LIST   the fitted sizes of every kernel, comma-separated
#   --factors LIST multiples of the largest fitted size to predict at
#                  (default 4,8)
#   --builds LIST  runtime,compile (default both)
#   --machines LIST itanium2,r12000,host (default)
#   --sim-cache DIR keep the simulated misses of each kernel, build, size
#                  and machine in DIR and reuse them in later runs (they
#                  depend on the kernels, the compiler and the simulator,
#                  not on the models): a rerun then only collects, fits
#                  and predicts
#   --no-simulate  with --sim-cache: only the cached simulations; a level
#                  without one is "n/s", not simulated
#   --no-collect   with KEEP=DIR: fit and predict the runs an earlier run
#                  of the suite collected into DIR (same kernels and sizes)
#                  instead of collecting them again
#   KERNEL         gemm lu jacobi2d heat3d mv-row mv-col csrmv fft (default
#                  all eight; any kernel of bench/kernels with --sizes)
# Environment: LOCPROF_BUILD (default build/), KEEP=DIR keeps the work files,
# DOC the page --update-docs rewrites (default docs/prediction.md).
# Prints the markdown tables on stdout; progress on stderr.
set -euo pipefail
cmdline="bench/prediction-suite.sh $*"
here=$(cd "$(dirname "$0")/.." && pwd)
build=${LOCPROF_BUILD:-$here/build}
L=$build/locprof
quick=0
update=0
sizes_opt=
factors="4 8"
builds="runtime compile"
machines="itanium2 r12000 host"
kernels=()
simcache=
nosim=0
nocollect=0
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--update-docs) update=1 ;;
	--sizes) sizes_opt=${2//,/ }; shift ;;
	--factors) factors=${2//,/ }; shift ;;
	--builds) builds=${2//,/ }; shift ;;
	--machines) machines=${2//,/ }; shift ;;
	--sim-cache) simcache=$2; mkdir -p "$simcache"; shift ;;
	--no-simulate) nosim=1 ;;
	--no-collect) nocollect=1 ;;
	-h | --help) sed -n '2,/^# Prints/p' "$0"; exit 0 ;;
	-*) echo "prediction-suite: unknown option '$1'" >&2; exit 2 ;;
	*) kernels+=("$1") ;;
	esac
	shift
done
[ -x "$L" ] || { echo "prediction-suite: no $L: build first (scripts/build)" >&2; exit 2; }
[ ${#kernels[@]} -gt 0 ] || kernels=(gemm lu jacobi2d heat3d mv-row mv-col csrmv fft)
[ "$nocollect" = 0 ] || [ -n "${KEEP:-}" ] || { echo "prediction-suite: --no-collect needs KEEP=DIR" >&2; exit 2; }
if [ -n "${KEEP:-}" ]; then
	W=$KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/locprof-psuite.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi
compare=$here/bench/prediction-compare.py
DOC=${DOC:-$here/docs/prediction.md}

# fitted sizes: five over about 2.5x, congruent modulo 8 (the kernels'
# vectorised loops handle 2 to 8 doubles an iteration: sizes of different
# residues run different remainder iterations, and the reference counts
# are then not polynomials of the size; the matrix multiply fitted at 12,
# 16, 20, 24, 30 had its references fitted as 17.7P^2 + 0.037P^4); fft's
# have only the factors 2, 3 and 5. The 3-D stencil's are congruent modulo
# 4 only (modulo 8 over 2.5x needs sizes from 24, and 8x of those cannot
# be simulated here). Full: about 1e7 to 2e8 references at 8x; quick:
# about 1e6.
fit_sizes() {
	[ -z "$sizes_opt" ] || { echo "$sizes_opt"; return; }
	case "$1:$quick" in
	gemm:0 | lu:0) echo "20 28 36 44 52" ;;
	gemm:1 | lu:1) echo "8 12 16 20 24" ;;
	jacobi2d:0) echo "40 48 64 80 96" ;;
	jacobi2d:1) echo "16 24 32 40 48" ;;
	heat3d:0) echo "10 14 18 22 26" ;;
	heat3d:1) echo "6 8 10 12 14" ;;
	mv-row:0 | mv-col:0) echo "96 128 160 200 240" ;;
	mv-row:1 | mv-col:1) echo "32 40 48 64 80" ;;
	csrmv:0) echo "2000 2500 3000 4000 5000" ;;
	csrmv:1) echo "400 500 600 800 1000" ;;
	fft:0) echo "1024 1280 1536 2048 2560" ;;
	fft:1) echo "128 160 192 256 320" ;;
	*) echo "prediction-suite: no sizes for '$1' (give --sizes)" >&2; exit 2 ;;
	esac
}

# binary of kernel $1, build style $2, size $3 (built once)
binary() {
	local k=$1 style=$2 p=$3 out
	if [ "$style" = runtime ]; then out=$W/$k-lp; else out=$W/$k-lp-$p; fi
	if [ ! -x "$out" ]; then
		local def=()
		[ "$style" = runtime ] || def=(-DN="$p")
		"$L" cc --no-lto -O2 -g "${def[@]}" -o "$out" "$here/bench/kernels/$k.c" -lm 2>"$W/cc.err" ||
			{ cat "$W/cc.err" >&2; exit 1; }
	fi
	echo "$out"
}

# simulate the trace $1 with machine $2's levels ($W/levels-$2.txt) into
# the file $3
simulate_machine() {
	local trace=$1 m=$2 out=$3 fa=() sa=() tlb=() name kind size assoc block
	local sa_ok=1
	while read -r name kind size assoc block; do
		if [ "$kind" = tlb ]; then
			tlb+=(--cache "$size:full:$block")
		else
			fa+=(--level "$size:full:$block")
			# a level simulate refuses ends the set-associative hierarchy
			# there (the levels above it are unaffected)
			if [ "$sa_ok" = 1 ] && "$L" simulate "$W/probe.txt" --cache "$size:$assoc:$block" >/dev/null 2>&1; then
				sa+=(--level "$size:$assoc:$block")
			else
				sa_ok=0
			fi
		fi
	done <"$W/levels-$m.txt"
	"$L" simulate "$trace" "${fa[@]}" --format csv >"$W/sim-fa.csv"
	: >"$W/sim-sa.csv" && : >"$W/sim-tlb.csv"
	[ ${#sa[@]} -eq 0 ] || "$L" simulate "$trace" "${sa[@]}" --format csv >"$W/sim-sa.csv"
	[ ${#tlb[@]} -eq 0 ] || "$L" simulate "$trace" "${tlb[@]}" --format csv >"$W/sim-tlb.csv"
	python3 "$compare" measured "$m" "$W/levels-$m.txt" "$W/sim-fa.csv" "$W/sim-sa.csv" "$W/sim-tlb.csv" >"$out"
}

printf 'R 1000 8 1\n' >"$W/probe.txt"
: >"$W/rows.jsonl"
for k in "${kernels[@]}"; do
	[ -f "$here/bench/kernels/$k.c" ] || { echo "prediction-suite: no bench/kernels/$k.c" >&2; exit 2; }
	fit=$(fit_sizes "$k")
	largest=$(tr ' ' '\n' <<<"$fit" | sort -n | tail -1)
	for style in $builds; do
		dir=$W/$k-$style
		if [ "$nocollect" = 1 ]; then
			echo "prediction-suite: $k ($style): the runs of $dir" >&2
			for p in $fit; do
				[ -f "$dir/size-$p.xrun" ] || { echo "prediction-suite: --no-collect: no $dir/size-$p.xrun" >&2; exit 2; }
			done
		else
			echo "prediction-suite: $k ($style): collect at $fit" >&2
			rm -rf "$dir"
			for p in $fit; do
				bin=$(binary "$k" "$style" "$p")
				"$L" predict collect -q --size "$p" -o "$dir" -- "$bin" "$p" >/dev/null
			done
		fi
		if ! "$L" predict fit -q "$dir" 2>"$W/fit.err"; then
			msg=$(head -1 "$W/fit.err")
			echo "prediction-suite: $k ($style): fit refused: $msg" >&2
			python3 -c 'import json,sys; print(json.dumps({"kernel": sys.argv[1], "build": sys.argv[2], "failed": "fit refused: " + sys.argv[3]}))' \
				"$k" "$style" "$msg" >>"$W/rows.jsonl"
			continue
		fi
		for f in $factors; do
			p=$((largest * f))
			echo "prediction-suite: $k ($style): predict and simulate at $p" >&2
			: >"$W/meas.csv"
			for m in $machines; do
				"$L" predict at "$dir" --size 1 --machine "$m" --format json >"$W/levels.json"
				python3 "$compare" levels "$W/levels.json" >"$W/levels-$m.txt"
				cached=${simcache:+$simcache/$k-$style-$p-$m.csv}
				if [ -n "$cached" ] && [ -s "$cached" ]; then
					cat "$cached" >>"$W/meas.csv"
					continue
				fi
				if [ "$nosim" = 1 ]; then
					python3 "$compare" measured "$m" "$W/levels-$m.txt" /dev/null /dev/null /dev/null >>"$W/meas.csv"
					continue
				fi
				if [ ! -f "$W/t.lpt" ]; then
					bin=$(binary "$k" "$style" "$p")
					"$L" record -q --mode trace -o "$W/t.lpt" -- "$bin" "$p" >/dev/null
					[ "$style" = runtime ] || rm -f "$bin"
				fi
				simulate_machine "$W/t.lpt" "$m" "$W/meas-m.csv"
				[ -z "$cached" ] || cp "$W/meas-m.csv" "$cached"
				cat "$W/meas-m.csv" >>"$W/meas.csv"
			done
			rm -f "$W/t.lpt"
			for m in $machines; do
				"$L" predict at "$dir" --size "$p" --machine "$m" --format csv >"$W/pred.csv"
				python3 "$compare" row "$k" "$style" "$f" "$p" "$m" "$W/pred.csv" "$W/meas.csv" >>"$W/rows.jsonl"
			done
		done
	done
done

python3 "$compare" table "$W/rows.jsonl" >"$W/table.md"
cat "$W/table.md"
if [ "$update" = 1 ]; then
	{
		echo "Measured with \`$cmdline\` on $(date -u +%Y-%m-%d) (fitted sizes:" \
			"$(for k in "${kernels[@]}"; do printf '%s %s; ' "$k" "$(fit_sizes "$k" | tr ' ' ,)"; done)" \
			"predicted at $(sed 's/ /× and /g' <<<"$factors")× the largest)."
		echo
		cat "$W/table.md"
	} >"$W/doc-table.md"
	python3 "$compare" splice "$DOC" "$W/doc-table.md"
	echo "prediction-suite: $DOC updated" >&2
fi
