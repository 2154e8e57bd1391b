#!/bin/bash
# Prediction across sizes on small kernels built both ways: the size read at
# run time (one binary) and fixed at compile time with -DN=... (one binary
# per size, joined by source location). Each kernel is fitted at 5 sizes
# over about 2.5x, predicted at 4x and 8x the largest, and compared with
# locprof simulate on a trace at those sizes (fully associative, the
# machine's real geometry, its TLBs). A level is good when it is within
# 10% or flagged by `predict at` itself (its check column).
#
# usage: bench/prediction-builds.sh [--machine M] [--keep DIR] [KERNEL[:STYLE]...]
#   kernels: matmul lu stencil2d stencil3d mv (tests/cli/predict-kernels);
#   styles: rt (run time), ct (compile time); default all of both.
# Environment: LOCPROF_BUILD (default build/).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
L=${LOCPROF_BUILD:-$here/build}/locprof
K=$here/tests/cli/predict-kernels
machine=itanium2
keep=
todo=()
while [ $# -gt 0 ]; do
	case "$1" in
	--machine) machine=$2; shift ;;
	--keep) keep=$2; shift ;;
	-h|--help) sed -n '2,/^# Environment/p' "$0"; exit 0 ;;
	*) todo+=("$1") ;;
	esac
	shift
done
[ ${#todo[@]} -gt 0 ] || todo=(matmul lu stencil2d stencil3d mv)
[ -x "$L" ] || { echo "no $L: build first (scripts/build)" >&2; exit 1; }
if [ -n "$keep" ]; then W=$keep; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi

# fitted sizes (5 over about 2.5x) | predicted sizes (4x and 8x the largest,
# where the simulation of the trace at 8x takes minutes, 4x alone). Sizes
# fixed at compile time must not let the compiler unroll a loop fully (16
# iterations of the matrix multiply's k loop are: its A loads leave the
# loop, a reference stream unlike the other sizes', and fit refuses it).
sizes() {
	case "$1" in
	matmul)    echo "24 30 36 48 60|240" ;;
	lu)        echo "24 30 36 48 60|240 480" ;;
	stencil2d) echo "32 40 48 64 80|320 640" ;;
	stencil3d) echo "16 20 24 32 40|160" ;;
	mv)        echo "64 80 96 128 160|640 1280" ;;
	*) echo "unknown kernel '$1'" >&2; exit 2 ;;
	esac
}

# levels of the machine: name kind blocks assoc block
mapfile -t lv < <("$L" predict at --machine "$machine" --size 1 --format json "$(ls -d "$W"/*/ 2>/dev/null | head -1)" 2>/dev/null |
	grep -o '"levels": \[[^]]*\]' | head -1 | grep -o '{[^}]*}' |
	sed -E 's/.*"name": "([^"]*)", "kind": "([^"]*)", "blocks": ([0-9]+), "assoc": ([0-9]+), "block": ([0-9]+).*/\1 \2 \3 \4 \5/' || true)

binary() { # kernel style size -> path of the binary for that size
	local k=$1 s=$2 n=$3
	if [ "$s" = rt ]; then
		[ -x "$W/bin-$k-rt" ] || "$L" cc --no-lto -O2 -g -o "$W/bin-$k-rt" "$K/$k.c"
		echo "$W/bin-$k-rt $n"
	else
		[ -x "$W/bin-$k-ct-$n" ] || "$L" cc --no-lto -O2 -g -DN="$n" -o "$W/bin-$k-ct-$n" "$K/$k.c"
		echo "$W/bin-$k-ct-$n"
	fi
}

simulate() { # trace -> "name fa sa" per level
	local t=$1 sa=() fa=() tlb=()
	for x in "${lv[@]}"; do
		read -r name kind blocks assoc block <<<"$x"
		local size=$((blocks * block)) a
		a=$([ "$assoc" = 0 ] && echo full || echo "$assoc")
		if [ "$kind" = tlb ]; then tlb+=(--cache "$size:$a:$block"); else
			sa+=(--cache "$size:$a:$block"); fa+=(--cache "$size:full:$block"); fi
	done
	paste -d' ' <("$L" simulate "$t" "${fa[@]}" "${tlb[@]}" --format csv | tail -n +2 | cut -d, -f4) \
		<("$L" simulate "$t" "${sa[@]}" "${tlb[@]}" --format csv | tail -n +2 | cut -d, -f4)
}

printf "%-10s %-2s %5s %-5s %12s %12s %8s %12s %12s %8s %s\n" kernel by P level fa_sim fa_pred fa_err% sa_sim sa_pred sa_err% check
total=0 good=0 flagged=0
for item in "${todo[@]}"; do
	k=${item%%:*}
	styles=rt\ ct
	[ "$item" = "$k" ] || styles=${item#*:}
	IFS='|' read -r fit pred < <(sizes "$k")
	for s in $styles; do
		dir=$W/$k-$s
		rm -rf "$dir"
		for n in $fit; do
			# shellcheck disable=SC2046
			"$L" predict collect -q --size "$n" -o "$dir" -- $(binary "$k" "$s" "$n") >/dev/null
		done
		"$L" predict fit -q "$dir"
		if [ ${#lv[@]} -eq 0 ]; then
			mapfile -t lv < <("$L" predict at "$dir" --size 1 --machine "$machine" --format json |
				grep -o '"levels": \[[^]]*\]' | head -1 | grep -o '{[^}]*}' |
				sed -E 's/.*"name": "([^"]*)", "kind": "([^"]*)", "blocks": ([0-9]+), "assoc": ([0-9]+), "block": ([0-9]+).*/\1 \2 \3 \4 \5/')
		fi
		for p in $pred; do
			# shellcheck disable=SC2046
			"$L" record -q --mode trace -o "$W/t.lpt" -- $(binary "$k" "$s" "$p") >/dev/null
			simulate "$W/t.lpt" >"$W/sim.txt"
			rm -f "$W/t.lpt"
			"$L" predict at "$dir" --size "$p" --machine "$machine" --format csv |
				awk -F, '$2 == "program" { print $6, $10, $11, $18 }' >"$W/pred.txt"
			while read -r name pfa psa check && read -r sfa ssa <&3; do
				read -r efa esa < <(awk -v a="$pfa" -v b="$sfa" -v c="$psa" -v d="$ssa" \
					'function e(p, s) { return s > 0 ? 100 * (p - s) / s : (p > 0.5 ? 100 : 0) }
					 BEGIN { printf "%.2f %.2f\n", e(a, b), e(c, d) }')
				printf "%-10s %-2s %5s %-5s %12.0f %12.0f %8s %12.0f %12.0f %8s %s\n" "$k" "$s" "$p" "$name" \
					"$sfa" "$pfa" "$efa" "$ssa" "$psa" "$esa" "$check"
				total=$((total + 1))
				if [ "$check" != ok ]; then flagged=$((flagged + 1)); good=$((good + 1))
				elif awk -v a="$efa" -v b="$esa" 'BEGIN { exit !(a <= 10 && a >= -10 && b <= 10 && b >= -10) }'; then
					good=$((good + 1)); fi
			done <"$W/pred.txt" 3<"$W/sim.txt"
		done
	done
done
echo "levels: $total; within 10% or flagged: $good; flagged: $flagged (machine $machine)"
