#!/usr/bin/env bash
# The double trap's accuracy problem (thesis §3.3.2.2, Fig. 3.5) measured:
# pmu-target-stride walks an array with one load pc at a 32-byte stride
# (64-byte lines: reuses alternate between 0 and a whole pass). With the
# step counter's skid that ends when an (emulated) cache miss retires
# (-X skid-miss, as on hardware), skid compensation (-X sample-start=step)
# samples the right references, the double trap the next execution of the
# pc after the skid: nearly always the long reuse. Prints, per method, the
# share of samples at reuse 0 and the working-set graph (random
# replacement, cold misses included) with its mean absolute difference
# from the trace's simulated graph and from the graph of exact samples of
# the trace (locprof sample at the same rate).
# Usage: bench/dt-accuracy-pmu.sh   (PASSES=10 BYTES=65536 RATE=0.05 SKID=10 SEED=1 MISS=1)
set -eu
cd "$(dirname "$0")/.."
L=build/locprof
T=build/tests/pmu/pmu-target-stride
PASSES=${PASSES:-10} BYTES=${BYTES:-65536} RATE=${RATE:-0.05} SKID=${SKID:-10} SEED=${SEED:-1}
MISS=${MISS:-1} # 0: uniform emulated skid instead (no latency correlation)
XM=""; [ "$MISS" = 1 ] && XM="-X skid-miss"
SIZES=1K..256K
tmp=$(mktemp -d /tmp/locprof-dt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
$L record -q --backend pmu --counter step --mode trace -o "$tmp/t.lpt" -- $T $PASSES $BYTES >/dev/null
$L simulate "$tmp/t.lpt" --sizes $SIZES --policy random --format csv | awk -F, '$1 == "random" {print $2, $3}' >"$tmp/trace.c"
$L sample "$tmp/t.lpt" -o "$tmp/exact.lpp" --rate $RATE --seed $SEED >/dev/null 2>&1
for m in step double-trap; do
	$L record -q --backend pmu --counter step --rate $RATE --seed $SEED --max-skid $SKID -X emulate-skid=$SKID \
		$XM -X sample-start=$m -o "$tmp/$m.lpp" -- $T $PASSES $BYTES >/dev/null
done
printf '%-12s %8s %9s %12s %12s\n' method samples "reuse 0" "MAD trace" "MAD exact"
$L report "$tmp/exact.lpp" --sizes $SIZES --top 0 --cold --policy random --format csv |
	awk -F, '$1 == "statcache" {print $2, $3}' >"$tmp/exact.c"
for m in exact step double-trap; do
	f=$tmp/$m.lpp
	[ $m = exact ] || $L report "$f" --sizes $SIZES --top 0 --cold --policy random --format csv |
		awk -F, '$1 == "statcache" {print $2, $3}' >"$tmp/$m.c"
	z=$($L dump "$f" | awk '$1 ~ /^[0-9]+$/ && NF == 8 && $7 != "dangling" {n++; z += $7 == 0} END {printf "%d %.3f", n, z / n}')
	mt=$(paste -d' ' "$tmp/$m.c" "$tmp/trace.c" | awk '{d = $2 - $4; s += d < 0 ? -d : d; n++} END {printf "%.4f", s / n}')
	me=$(paste -d' ' "$tmp/$m.c" "$tmp/exact.c" | awk '{d = $2 - $4; s += d < 0 ? -d : d; n++} END {printf "%.4f", s / n}')
	printf '%-12s %8s %9s %12s %12s\n' $m ${z% *} ${z#* } $mt $me
done
echo "graphs (size: trace exact step double-trap):"
paste -d' ' "$tmp/trace.c" "$tmp/exact.c" "$tmp/step.c" "$tmp/double-trap.c" |
	awk '{printf "  %7d  %.4f %.4f %.4f %.4f\n", $1, $2, $4, $6, $8}'
