#!/usr/bin/env bash
# The hot spots' intervals against exact counts, and diff's marks where
# nothing changed (docs/models.md "Hot spots: each row's interval",
# docs/commands/diff.md).
#   1. Each kernel of bench/kernels (built with `locprof cc -O2 -g`) is
#      recorded once in trace mode and its trace simulated with
#      `simulate --cache 32K:512:64 --attribute` (fully associative LRU,
#      every source line's misses, cold ones included); then recorded at
#      each rate and seed, and `report --at 32K --cold --top 10` gives
#      the top source lines with their 95% intervals. Prints, per kernel,
#      rate and seed, how many of those lines hold the exact misses, and
#      the ones that do not.
#   2. `diff` of seed 1 against each other seed of the same kernel and
#      rate (`--cache 32K:8:64 --cache 256K:8:64 --top 10`): how many
#      changes (curve points, caches, hot rows) are marked as more than
#      the sampling noise, where only the sampling changed.
# Then the totals of both.
#
# usage: bench/hot-intervals.sh [KERNEL:SIZE ...]
#   (default: jacobi2d:240 gemm:96 mv-col:600 covariance:120 fft:8192
#   bfs:16384 histogram:20000 lu:144)
# Environment: LOCPROF_BUILD (default build/), RATES (default "1e-3 1e-4"),
# SEEDS (default "1 2 3"), KEEP=DIR keeps the work files. A few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
L=${LOCPROF_BUILD:-$here/build}/locprof
RATES=${RATES:-1e-3 1e-4}
SEEDS=${SEEDS:-1 2 3}
[ -x "$L" ] || { echo "hot-intervals: no $L: build first (scripts/build)" >&2; exit 2; }
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] ||
	kernels=(jacobi2d:240 gemm:96 mv-col:600 covariance:120 fft:8192 bfs:16384 histogram:20000 lu:144)
if [ -n "${KEEP:-}" ]; then
	W=$KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/locprof-hotiv.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi
cd "$W"
: >lines.txt
: >diffs.txt
first=${SEEDS%% *}
for kn in "${kernels[@]}"; do
	k=${kn%%:*} n=${kn#*:}
	echo "hot-intervals: $k $n" >&2
	"$L" cc -O2 -g -I"$here/bench/kernels" "$here/bench/kernels/$k.c" -o "$k" -lm
	"$L" record -q --mode trace -o "t-$k.lpt" -- "./$k" "$n" >/dev/null
	"$L" simulate "t-$k.lpt" --cache 32K:512:64 --attribute --format json >"sim-$k.json"
	rm -f "t-$k.lpt"
	for rate in $RATES; do
		for seed in $SEEDS; do
			p=p-$k-$rate-$seed.lpp
			"$L" record -q -r "$rate" -s "$seed" -o "$p" -- "./$k" "$n" >/dev/null
			"$L" report "$p" --at 32K --cold --top 10 --format json >r.json
			python3 - "$k $rate $seed" "sim-$k.json" r.json >>lines.txt <<'PY'
import json, sys
label, simf, rf = sys.argv[1:]
exact = {(l["path"], l["line"]): l["misses"] for l in json.load(open(simf))["lines"]}
inside, rows, out = 0, 0, []
for l in json.load(open(rf))["hot"]["lines"]:
    e = exact.get((l["path"], l["line"]), 0.0)
    rows += 1
    if l["misses_lo"] <= e <= l["misses_hi"]:
        inside += 1
    else:
        out.append(f"{l['file']}:{l['line']} {l['misses']:.0f} [{l['misses_lo']:.0f}, {l['misses_hi']:.0f}] exact {e:.0f}")
print(label, inside, rows, "; ".join(out))
PY
			[ "$seed" = "$first" ] && continue
			"$L" diff "p-$k-$rate-$first.lpp" "$p" --cache 32K:8:64 --cache 256K:8:64 --top 10 --format csv >d.csv
			awk -F, -v label="$k $rate $first-$seed" '
				/^curve,/ { m = 1; next } /^cache,/ { m = 2; next } /^kind,/ { m = 3; next } /^$/ { m = 0 }
				m == 1 { n++; s += ($6 > 0 || $7 < 0) }
				m == 2 { n += 2; s += ($8 > 0 || $9 < 0) + ($10 > 0 || $11 < 0) }
				m == 3 { n++; s += ($8 > 0 || $9 < 0) }
				END { print label, s + 0, n }' d.csv >>diffs.txt
		done
	done
done
echo "Hot source lines at 32K (fully associative LRU, cold misses included): rows whose 95% interval holds the exact misses"
echo
echo "| kernel | rate | seed | inside / rows | outside (report, interval, exact) |"
echo "|---|---|---:|---:|---|"
awk '{ o = ""; for (i = 6; i <= NF; i++) o = o " " $i; printf "| %s | %s | %s | %d / %d |%s |\n", $1, $2, $3, $4, $5, o }' lines.txt
awk '{ i[$2] += $4; n[$2] += $5 } END { for (r in n) printf "\n%s: %d of %d rows inside (%.0f%%)", r, i[r], n[r], 100 * i[r] / n[r]; print "" }' lines.txt
echo
echo "diff of two seeds of one kernel: changes marked (their 95% interval leaves out 0) of all changes"
echo
echo "| kernel | rate | seeds | marked / changes |"
echo "|---|---|---|---:|"
awk '{ printf "| %s | %s | %s | %d / %d |\n", $1, $2, $3, $4, $5 }' diffs.txt
awk '{ s += $4; n += $5 } END { if (n) printf "\nall: %d of %d changes marked (%.1f%%)\n", s, n, 100 * s / n }' diffs.txt
