#!/usr/bin/env python3
"""Tables for bench/interval-calibration.sh (not run on its own).

  interval-calibration.py SIM.csv HIGH.csv MODEL.csv...
      SIM.csv: `simulate --sizes ... --policy lru,random --format csv` of
      the trace; HIGH.csv: `report --format csv` of a profile sampled at a
      high rate (the model with little sampling noise); MODEL.csv: one
      `report --format csv` per seed. Prints, per curve and size, in
      percentage points: the exact ratio (cold misses excluded), the
      model's bias (high-rate estimate - exact), the mean error of the
      seeds, their standard deviation, the mean half-width of their
      intervals, and how many seeds' intervals hold the exact value.
"""
import statistics
import sys


def curves(path):
    out, hdr = {}, None
    for line in open(path):
        if line.startswith('#'):
            continue
        if not line.strip():
            if hdr:
                break
            continue
        if hdr is None:
            hdr = line.strip().split(',')
            continue
        r = dict(zip(hdr, line.strip().split(',')))
        out[(r['curve'], int(r['size_bytes']))] = r
    return out


def main():
    sim, high = curves(sys.argv[1]), curves(sys.argv[2])
    models = [curves(p) for p in sys.argv[3:]]
    inside_all = total = 0
    for model, ref in (('statstack', 'lru-nocold'), ('statcache', 'random-nocold')):
        print(f'\n{model} against {ref} ({len(models)} seeds)\n')
        print('| size | exact % | bias | mean error | sd | mean half-width | covered |')
        print('|---:|---:|---:|---:|---:|---:|---:|')
        for (c, size) in sorted(k for k in sim if k[0] == ref):
            e = 100 * float(sim[(c, size)]['miss_ratio'])
            v = [100 * float(m[(model, size)]['miss_ratio']) for m in models]
            hw = [50 * (float(m[(model, size)]['miss_ratio_hi']) - float(m[(model, size)]['miss_ratio_lo']))
                  for m in models]
            inside = sum(1 for m in models
                         if 100 * float(m[(model, size)]['miss_ratio_lo']) - 1e-6 <= e <=
                         100 * float(m[(model, size)]['miss_ratio_hi']) + 1e-6)
            inside_all += inside
            total += len(models)
            bias = 100 * float(high[(model, size)]['miss_ratio']) - e
            print(f'| {size >> 10}K | {e:.2f} | {bias:+.2f} | {statistics.mean(v) - e:+.2f} | '
                  f'{statistics.pstdev(v):.2f} | {statistics.mean(hw):.2f} | {inside}/{len(models)} |')
    print(f'\ncoverage over seeds and sizes, both curves: {100 * inside_all / total:.0f}%')


if __name__ == '__main__':
    main()
