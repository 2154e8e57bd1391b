#!/usr/bin/env python3
"""Comparison and tables for bench/kernel-accuracy.sh (not run on its own).

  kernel-compare.py row KERNEL P RATE SEED SIM.csv SIMSA.csv MODEL.csv MODEL.json
      one JSON line: the errors of one sampled profile against the exact
      curves of the trace of the same binary, in percentage points, cold
      misses excluded, and whether each exact value lies inside the
      reported interval (null when the report gives no interval)
  kernel-compare.py table ROWS.jsonl
      the markdown tables: per kernel, size and rate, then overall per rate
  kernel-compare.py cachegrind ROWS.jsonl
      the Cachegrind table
"""
import csv
import json
import statistics
import sys


def csv_blocks(path):
    """The first CSV table of a file (comment lines skipped, up to the first
    blank line), as dicts by header name."""
    lines = []
    for line in open(path):
        if line.startswith('#'):
            continue
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line)
    return list(csv.DictReader(lines))


def curves(path):
    """{curve: {size: (ratio, lo, hi, cliff)}}; lo, hi and cliff (the
    report's word that a cliff lies within sampling error) are None
    without those columns."""
    out = {}
    for row in csv_blocks(path):
        lo, hi, cliff = row.get('miss_ratio_lo'), row.get('miss_ratio_hi'), row.get('cliff')
        out.setdefault(row['curve'], {})[int(row['size_bytes'])] = (
            float(row['miss_ratio']),
            float(lo) if lo not in (None, '') else None,
            float(hi) if hi not in (None, '') else None,
            cliff.strip().lower() in ('1', 'true', 'yes', 'cliff') if cliff not in (None, '') else None)
    return out


def cache_interval(c, policy):
    """(lo, hi) of a named cache's prediction in report's JSON, when the
    report gives one: "lru_interval": {"miss_ratio_lo", "miss_ratio_hi"}."""
    iv = c.get(policy + '_interval') or {}
    return iv.get('miss_ratio_lo'), iv.get('miss_ratio_hi')


def bytes_of(text):
    """'32K' -> 32768 (the cache SPEC's size)"""
    scale = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}.get(text[-1:].upper(), 1)
    return int(float(text.rstrip('KMGkmg')) * scale)


def row(kernel, p, rate, seed, simp, simsap, modp, modjp):
    sim, mod = curves(simp), curves(modp)
    out = {'kernel': kernel, 'P': p, 'rate': rate, 'seed': seed}
    for model, ref in (('statstack', 'lru-nocold'), ('statcache', 'random-nocold')):
        err, inside, unflagged, narrow = {}, [], {}, {}
        for size, (ratio, lo, hi, cliff) in mod.get(model, {}).items():
            if size not in sim.get(ref, {}):
                continue
            exact = sim[ref][size][0]
            err[size] = abs(ratio - exact) * 100
            if cliff is False:
                unflagged[size] = err[size]
                # the report's claim: within +-2 points, no word of doubt
                if lo is not None and hi is not None and max(hi - ratio, ratio - lo) <= 0.02 + 1e-9:
                    narrow[size] = err[size]
            if lo is not None and hi is not None:
                inside.append(lo - 1e-9 <= exact <= hi + 1e-9)
        out[model] = err
        out[model + '_unflagged'] = unflagged
        out[model + '_narrow'] = narrow
        out[model + '_inside'] = inside if inside else None
    # set-associative: simulated (misses - cold) / (accesses - cold) against
    # the model's LRU ratio (cold excluded)
    exact = {}
    for r in csv_blocks(simsap):
        acc, mis, cold = int(r['accesses']), int(r['misses']), int(r['cold'])
        f = r['spec'].split(':')
        policy = f[3] if len(f) > 3 else 'lru'
        exact[(bytes_of(f[0]), int(f[1]), policy)] = (mis - cold) / (acc - cold) if acc > cold else 0.0
    j = json.load(open(modjp))
    out['samples'] = j.get('samples')
    for policy, key in (('lru', 'setassoc'), ('random', 'setassoc_random')):
        sa, inside = {}, []
        for c in j.get('caches', []):
            geometry = (int(c['size']), int(c['ways']), policy)
            if geometry not in exact:
                continue
            sa[c['cache']] = abs(c[policy] - exact[geometry]) * 100
            lo, hi = cache_interval(c, policy)
            if lo is not None and hi is not None:
                inside.append(lo - 1e-9 <= exact[geometry] <= hi + 1e-9)
        out[key] = sa
        out[key + '_inside'] = inside if inside else None
    print(json.dumps(out))


def size_name(b):
    b = int(b)
    return '%dM' % (b >> 20) if b >= 1 << 20 else '%dK' % (b >> 10)


def summary(rows, key):
    """mean over seeds of the mean error over sizes; the largest error of
    any seed and where"""
    means = [statistics.mean(r[key].values()) for r in rows if r[key]]
    if not means:
        return 'n/a', 'n/a'
    worst = max(((e, s) for r in rows for s, e in r[key].items()), key=lambda t: t[0])
    at = worst[1] if not str(worst[1]).isdigit() else size_name(worst[1])
    return '%.2f' % statistics.mean(means), '%.2f @%s' % (worst[0], at)


def coverage(rows, key):
    flags = [x for r in rows if r.get(key + '_inside') for x in r[key + '_inside']]
    return '%.0f%%' % (100 * sum(flags) / len(flags)) if flags else 'n/a'


def table(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    groups = {}
    for r in rows:
        groups.setdefault((r['kernel'], r['P'], r['rate']), []).append(r)
    for r in rows:
        r.setdefault('setassoc_random', {})
    print('| kernel | P | rate | seeds | samples | StatStack mean | max | StatCache mean | max '
          '| set-assoc mean | max | SA random mean | max | coverage SS | SC | SA | SA random |')
    print('|---|---:|---|---:|---:|---:|---|---:|---|---:|---|---:|---|---:|---:|---:|---:|')
    for (k, p, rate), g in groups.items():
        ss, sc, sa = summary(g, 'statstack'), summary(g, 'statcache'), summary(g, 'setassoc')
        sr = summary(g, 'setassoc_random')
        samples = statistics.median(r['samples'] or 0 for r in g)
        print('| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            k, p, rate, len(g), samples, ss[0], ss[1], sc[0], sc[1], sa[0], sa[1], sr[0], sr[1],
            coverage(g, 'statstack'), coverage(g, 'statcache'), coverage(g, 'setassoc'),
            coverage(g, 'setassoc_random')))
    print()
    print('Overall (every kernel, size and seed; mean of the per-profile means, largest single error):')
    print()
    print('| rate | profiles | StatStack mean | max | StatCache mean | max | set-assoc mean | max '
          '| SA random mean | max | coverage SS | SC | SA | SA random '
          '| SS max, no cliff flagged | SC max, no cliff flagged '
          '| SS max, interval within +-2 points, unflagged | SC max, same |')
    print('|---|---:|---:|---|---:|---|---:|---|---:|---|---:|---:|---:|---:|---|---|---|---|')
    for rate in sorted({r['rate'] for r in rows}, key=float, reverse=True):
        g = [r for r in rows if r['rate'] == rate]
        for r in g:  # name the kernel in the worst case
            for key in ('statstack', 'statcache', 'setassoc', 'setassoc_random'):
                r[key + '_named'] = {'%s %s' % (r['kernel'], s if not str(s).isdigit() else size_name(s)): e
                                     for s, e in r[key].items()}
        ss, sc, sa, sr = (summary([{'x': r[k + '_named']} for r in g], 'x')
                          for k in ('statstack', 'statcache', 'setassoc', 'setassoc_random'))
        unflagged = []
        for part in ('_unflagged', '_narrow'):
            for k in ('statstack', 'statcache'):
                named = [{'x': {'%s %s' % (r['kernel'], size_name(sz)): e
                                for sz, e in r.get(k + part, {}).items()}} for r in g]
                unflagged.append(summary(named, 'x')[1] if any(n['x'] for n in named) else 'n/a')
        print('| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            rate, len(g), ss[0], ss[1], sc[0], sc[1], sa[0], sa[1], sr[0], sr[1],
            coverage(g, 'statstack'), coverage(g, 'statcache'), coverage(g, 'setassoc'),
            coverage(g, 'setassoc_random'), *unflagged))


def cachegrind(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print('| kernel | P | D refs (Cachegrind) | references, a read-modify-write once (locprof) | line accesses (locprof) '
          '| D1 Cachegrind | D1 locprof | difference | LL Cachegrind | LL locprof | difference |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        # Cachegrind's ratios are per data reference (D1 misses / D refs,
        # LLd misses / D refs); locprof's per line access, or per
        # reference where simulate gives that ratio
        d1, ll = 100 * r['cg_d1'] / r['cg_refs'], 100 * r['cg_ll'] / r['cg_refs']
        den = r['lp_refs'] if r.get('per_reference') else r['lp_acc']
        o1, ol = 100 * r['lp_d1'] / den, 100 * r['lp_ll'] / den
        print('| %s | %s | %d | %s | %d | %.3f%% | %.3f%% | %+.3f | %.3f%% | %.3f%% | %+.3f |' % (
            r['kernel'], r['P'], r['cg_refs'], r['lp_refs'] or 'n/a', r['lp_acc'], d1, o1, o1 - d1,
            ll, ol, ol - ll))


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'row':
        row(*args)
    elif cmd == 'table':
        table(*args)
    elif cmd == 'cachegrind':
        cachegrind(*args)
    else:
        sys.exit('kernel-compare.py: unknown command ' + cmd)
