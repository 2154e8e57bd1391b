#!/usr/bin/env bash
# Accuracy of StatCache (vs a fully associative random-replacement
# simulation) and StatStack (vs exact LRU), cold misses excluded, 64-byte
# lines, 4 KiB..64 MiB, at sampling rates 1e-2, 1e-3, 1e-4.
# Needs `locprof synth` and `locprof simulate` (other branches); prints the
# mean and max absolute error in percentage points per trace and rate.
# usage: bench/accuracy.sh [build dir]
set -euo pipefail
B=${1:-build}
L=$B/locprof
T=$(mktemp -d /tmp/locprof-acc.XXXXXX)
trap 'rm -rf "$T"' EXIT
for cmd in synth simulate; do
	"$L" help $cmd >/dev/null 2>&1 || { echo "accuracy: 'locprof $cmd' is not available in $L" >&2; exit 2; }
done
traces=(uniform:lines=100000 stream:lines=1000000 hotcold:hot=500,cold=500000 \
	stencil:n=1024 matmul:n=256 pointer-chase:lines=200000)
printf '%-28s %7s %8s | %10s %10s | %10s %10s\n' trace rate samples statcache-mean max statstack-mean max
for spec in "${traces[@]}"; do
	name=${spec%%:*}
	"$L" synth "$spec" -o "$T/$name.lpt"
	"$L" simulate "$T/$name.lpt" --sizes 4K..64M --policy lru,random --format csv >"$T/$name.sim.csv"
	for rate in 1e-2 1e-3 1e-4; do
		"$L" sample "$T/$name.lpt" -o "$T/p.lpp" --rate "$rate" 2>/dev/null
		"$L" report "$T/p.lpp" --sizes 4K..64M --format csv >"$T/model.csv"
		n=$("$L" dump "$T/p.lpp" | awk '/^line 64:/ {print $5}')
		python3 - "$T/$name.sim.csv" "$T/model.csv" "$spec" "$rate" "$n" <<'PY'
import csv, sys
def load(p):
    d = {}
    for row in csv.reader(l for l in open(p) if not l.startswith('#')):
        if row[0] == 'curve': continue
        d.setdefault(row[0], {})[int(row[1])] = float(row[2])
    return d
sim, mod = load(sys.argv[1]), load(sys.argv[2])
def err(model, ref):
    e = [abs(mod[model][s] - sim[ref][s]) * 100 for s in mod[model] if s in sim.get(ref, {})]
    return (sum(e) / len(e), max(e)) if e else (float('nan'), float('nan'))
rnd = 'random-nocold' if 'random-nocold' in sim else 'random'
a, b = err('statcache', rnd), err('statstack', 'lru-nocold')
print('%-28s %7s %8s | %10.2f %10.2f | %10.2f %10.2f' % (sys.argv[3], sys.argv[4], sys.argv[5], a[0], a[1], b[0], b[1]))
PY
	done
done
