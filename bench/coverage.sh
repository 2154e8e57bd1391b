#!/usr/bin/env bash
# Interval coverage and accuracy of the models on real kernels
# (bench/coverage/kernels.c, built with `locprof cc`): each kernel is
# recorded once with --mode trace (the exact curves: `locprof simulate`,
# cold misses excluded) and sampled by the inst backend at each rate with
# each seed; `locprof report` then gives every ratio with its interval.
# Per kernel and rate the table gives, over the seeds and the sizes
# 4K..64M (fully associative) and the caches of SA_CACHES:
#   mean and max absolute error (points) of StatStack (LRU) and StatCache
#   (random), and of the set-associative LRU ratio;
#   coverage: the share of (seed, size) whose exact ratio lies inside the
#   reported interval, per model; cliffs: the points flagged as a cliff
#   within sampling error.
#
# usage: [RATES="1e-3 1e-4"] [SEEDS="1 2 3"] [KERNELS="triangle ..."]
#        [SA_CACHES="32K:8:64 ..."] [CFLAGS="-O2"] bench/coverage.sh [build dir]
set -euo pipefail
B=$(realpath "${1:-build}")
L=$B/locprof
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/locprof-cov.XXXXXX)
trap 'rm -rf "$T"' EXIT
SA_CACHES=${SA_CACHES-"32K:8:64 256K:8:64 1M:16:64 8M:16:64"}
declare -A args=(
	[covariance]="covariance 500 100"
	[mvrow]="mvrow 1000"
	[mvcol]="mvcol 1000"
	[matmul]="matmul 150"
	[stencil]="stencil 300 10"
	[triangle]="triangle 300"
)
PATH=$B:$PATH "$L" cc ${CFLAGS:--O2} -o "$T/kernels" "$HERE/coverage/kernels.c"
sa_args=()
for c in $SA_CACHES; do sa_args+=(--cache "$c"); done
echo "| kernel | rate | samples | StatStack mean | max | cover | StatCache mean | max | cover | set-assoc mean | max | cover | cliffs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for k in ${KERNELS:-covariance mvrow mvcol matmul stencil triangle}; do
	a=${args[$k]}
	"$L" record -q --mode trace -o "$T/$k.lpt" -- "$T/kernels" $a >/dev/null
	"$L" simulate "$T/$k.lpt" --sizes 4K..64M --policy lru,random --format csv >"$T/sim.csv"
	: >"$T/simsa.csv"
	[ -z "$SA_CACHES" ] || "$L" simulate "$T/$k.lpt" "${sa_args[@]}" --format csv >"$T/simsa.csv"
	for rate in ${RATES:-1e-3 1e-4}; do
		: >"$T/rows.txt"
		for seed in ${SEEDS:-1 2 3}; do
			"$L" record -q --rate "$rate" --seed "$seed" -o "$T/p.lpp" -- "$T/kernels" $a >/dev/null
			"$L" report "$T/p.lpp" --sizes 4K..64M "${sa_args[@]}" --top 0 --format csv >"$T/model.csv"
			python3 - "$T/sim.csv" "$T/simsa.csv" "$T/model.csv" >>"$T/rows.txt" <<'PY'
import csv, json, sys
simp, sasimp, modp = sys.argv[1:]
def tables(p):
    out, cur = [], []
    for l in open(p):
        if l.startswith('#'): continue
        if not l.strip():
            if cur: out.append(cur)
            cur = []
        else: cur.append(l)
    if cur: out.append(cur)
    return [list(csv.DictReader(t)) for t in out]
sim = {}
for r in tables(simp)[0]:
    sim.setdefault(r['curve'], {})[int(r['size_bytes'])] = float(r['miss_ratio'])
mt = tables(modp)
pts = []  # (model, error in points, covered, cliff)
for r in mt[0]:
    ref = {'statstack': 'lru-nocold', 'statcache': 'random-nocold'}[r['curve']]
    x = sim[ref][int(r['size_bytes'])]
    m, lo, hi = float(r['miss_ratio']), float(r['miss_ratio_lo']), float(r['miss_ratio_hi'])
    pts.append((r['curve'], abs(m - x) * 100, lo - 1e-9 <= x <= hi + 1e-9, int(r['cliff'])))
sas = {}
for r in (tables(sasimp) or [[]])[0]:
    acc, mis, cold = int(r['accesses']), int(r['misses']), int(r['cold'])
    sas[r['spec'].rsplit(':', 1)[0]] = (mis - cold) / (acc - cold) if acc > cold else 0.0
for r in next((t for t in mt[1:] if t and 'cache' in t[0]), []):  # the named caches' table
    if r['cache'] not in sas: continue
    x, m = sas[r['cache']], float(r['lru_miss_ratio'])
    lo, hi = float(r['lru_miss_ratio_lo']), float(r['lru_miss_ratio_hi'])
    pts.append(('setassoc', abs(m - x) * 100, lo - 1e-9 <= x <= hi + 1e-9, int(r['lru_cliff'])))
print(json.dumps(pts))
PY
		done
		n=$("$L" dump "$T/p.lpp" | awk '/^line 64:/ {print $6}')
		python3 - "$T/rows.txt" "$k" "$rate" "$n" <<'PY'
import json, sys
rows = [p for l in open(sys.argv[1]) for p in json.loads(l)]
cells = []
for m in ('statstack', 'statcache', 'setassoc'):
    e = [r for r in rows if r[0] == m]
    if not e:
        cells += ['', '', '']; continue
    cells += ['%.2f' % (sum(r[1] for r in e) / len(e)), '%.2f' % max(r[1] for r in e),
              '%.0f%%' % (100.0 * sum(r[2] for r in e) / len(e))]
print('| %s | %s | %s | %s | %d |' % (sys.argv[2], sys.argv[3], sys.argv[4], ' | '.join(cells),
                                       sum(r[3] for r in rows)))
PY
	done
	rm -f "$T/$k.lpt"
done
