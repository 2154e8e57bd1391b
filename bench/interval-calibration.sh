#!/usr/bin/env bash
# Are report's intervals as wide as the seed-to-seed spread, and where is
# the model itself off? For one kernel of bench/kernels/ (built with
# `locprof cc -O2 -g`): the exact curves of its trace (`simulate`, cold
# misses excluded), one profile sampled from that trace at HIGH (default
# 0.05: the model's value with little sampling noise, so that the model's
# bias shows apart from the noise), and profiles recorded with the inst
# backend at RATE (default 1e-3) for each seed of SEEDS (default 1..12).
# Prints per size (4K..64M) and curve (StatStack against LRU, StatCache
# against random replacement): the bias, the seeds' mean error and
# standard deviation, their intervals' mean half-width and how many hold
# the exact value (bench/interval-calibration.py).
#
# A calibrated 95% interval has a half-width of about 1.96 sd and holds
# the exact value for 19 seeds in 20 where the bias is small next to the sd.
#
# usage: [RATE=1e-3] [SEEDS="1 2 ..."] [HIGH=0.05] bench/interval-calibration.sh KERNEL SIZE [build dir]
#   e.g. bench/interval-calibration.sh bfs 16384 build
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/interval-calibration.sh KERNEL SIZE [build dir]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
k=$1 p=$2
L=$(cd "${3:-build}" && pwd)/locprof
RATE=${RATE:-1e-3}
HIGH=${HIGH:-0.05}
SEEDS=${SEEDS:-$(seq -s ' ' 1 12)}
W=$(mktemp -d /tmp/locprof-ical.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$L" cc -O2 -g -o "$W/k" "$here/bench/kernels/$k.c" -lm >/dev/null
"$L" record -q --mode trace -o "$W/t.lpt" -- "$W/k" "$p" >/dev/null
"$L" simulate "$W/t.lpt" --sizes 4K..64M --policy lru,random --format csv >"$W/sim.csv"
"$L" sample "$W/t.lpt" -o "$W/high.lpp" -r "$HIGH" 2>/dev/null
"$L" report "$W/high.lpp" --sizes 4K..64M --format csv --top 0 >"$W/high.csv"
models=()
for s in $SEEDS; do
	"$L" record -q -r "$RATE" -s "$s" -o "$W/p.lpp" -- "$W/k" "$p" >/dev/null
	"$L" report "$W/p.lpp" --sizes 4K..64M --format csv --top 0 >"$W/m$s.csv"
	models+=("$W/m$s.csv")
done
echo "$k $p: rate $RATE, seeds $SEEDS; bias from a profile sampled at $HIGH; points of miss ratio"
python3 "$here/bench/interval-calibration.py" "$W/sim.csv" "$W/high.csv" "${models[@]}"
