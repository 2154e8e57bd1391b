#!/usr/bin/env python3
"""Comparison and tables for bench/prediction-suite.sh (not run on its own).

  prediction-compare.py levels PREDICT.json
      the machine's levels, one a line: NAME KIND SIZE ASSOC BLOCK
      (ASSOC 0: fully associative), from `predict at --format json`
  prediction-compare.py measured MACHINE LEVELS.txt FA.csv SA.csv TLB.csv
      CSV lines machine,level,fa_sim,sa_sim from the simulations of the
      machine's hierarchy (fully and set associative) and TLBs; a level
      simulate refused is left empty
  prediction-compare.py row KERNEL BUILD FACTOR P MACHINE PREDICT.csv MEASURED.csv
      one JSON line per level: predicted and simulated misses, the errors,
      and the tool's validity flag or interval where predict gives one
  prediction-compare.py table ROWS.jsonl
      the markdown tables (summary, then every level)
  prediction-compare.py splice DOC TABLE.md
      replace the text between the begin and end markers of DOC by TABLE.md
"""
import csv
import json
import sys

BEGIN = '<!-- begin prediction-suite table (bench/prediction-suite.sh --update-docs) -->'
END = '<!-- end prediction-suite table -->'


def levels(path):
    for lv in json.load(open(path))['levels']:
        print(lv['name'], lv['kind'], lv['blocks'] * lv['block'], lv['assoc'], lv['block'])


def sim_rows(path):
    try:
        return [r for r in csv.DictReader(l for l in open(path) if not l.startswith('#'))]
    except OSError:
        return []


def measured(machine, levels_path, fap, sap, tlbp):
    fa, sa, tlb = sim_rows(fap), sim_rows(sap), sim_rows(tlbp)
    ci = ti = 0
    for line in open(levels_path):
        name, kind = line.split()[:2]
        if kind == 'tlb':
            v = tlb[ti]['misses'] if ti < len(tlb) else ''
            print('%s,%s,%s,%s' % (machine, name, v, v))
            ti += 1
        else:
            f = fa[ci]['misses'] if ci < len(fa) else ''
            s = sa[ci]['misses'] if ci < len(sa) else ''
            print('%s,%s,%s,%s' % (machine, name, f, s))
            ci += 1


# columns of `predict at --format csv` that carry a validity flag or an
# interval: `check` (ok, or the flags: crosses, unfit, edge, few, ...) with
# its `reason` in words; other names for tools that call them otherwise
FLAG_WORDS = ('check', 'flag', 'valid', 'reason', 'warning', 'extrapol')


def flag_of(r):
    """The tool's word on the level: its flag (a non-empty value other than
    ok/0/false/valid) or None; and its interval (lo, hi) or None."""
    flag = None
    if 'check' in r:
        flag = None if r['check'] in ('', 'ok') else r['check']
    else:
        for key, v in r.items():
            if key and any(w in key.lower() for w in FLAG_WORDS) and v not in (None, '', '0', 'ok', 'false',
                                                                               'valid', '-'):
                flag = (flag + '; ' if flag else '') + '%s=%s' % (key, v)
    lo = next((r[k] for k in r if k and k.endswith(('misses_lo', 'fa_lo', 'sa_lo'))), None)
    hi = next((r[k] for k in r if k and k.endswith(('misses_hi', 'fa_hi', 'sa_hi'))), None)
    return flag, (float(lo), float(hi)) if lo not in (None, '') and hi not in (None, '') else None


def err(pred, sim):
    if sim > 0:
        return 100 * (pred - sim) / sim
    return 100.0 if pred > 0.5 else 0.0


def row(kernel, build, factor, p, machine, predp, measp):
    meas = {}
    for line in open(measp):
        m, lv, f, s = line.strip().split(',')
        if m == machine:
            meas[lv] = (f, s)
    rows = list(csv.DictReader(open(predp)))
    has_flags = bool(rows) and any(any(w in k.lower() for w in FLAG_WORDS) for k in rows[0])
    for r in rows:
        if r['scope'] != 'program':
            continue
        f, s = meas.get(r['level'], ('', ''))
        pfa, psa = float(r['fa_misses']), float(r['sa_misses'])
        flag, interval = flag_of(r)
        out = {'kernel': kernel, 'build': build, 'factor': int(factor), 'P': int(p), 'machine': machine,
               'level': r['level'], 'fa_pred': pfa, 'sa_pred': psa,
               'fa_sim': float(f) if f else None, 'sa_sim': float(s) if s else None,
               'flag': flag, 'reason': r.get('reason') or None, 'has_flags': has_flags or interval is not None}
        out['fa_err'] = err(pfa, out['fa_sim']) if f else None
        out['sa_err'] = err(psa, out['sa_sim']) if s else None
        if interval and f:
            out['inside'] = interval[0] <= float(f) <= interval[1]
        print(json.dumps(out))


def fmt(e):
    return 'n/s' if e is None else '%+.1f' % e


def table(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    fails = [r for r in rows if r.get('failed')]
    rows = [r for r in rows if not r.get('failed')]
    tool_flags = any(r['has_flags'] for r in rows)
    print('| machine | build | levels | within 10% (fa and sa) | flagged by the tool | over 10% and not flagged '
          '| not simulated | worst \\|error\\| (kernel, level, factor) |')
    print('|---|---|---:|---:|---:|---:|---:|---|')
    for machine in dict.fromkeys(r['machine'] for r in rows):
        for build in dict.fromkeys(r['build'] for r in rows):
            g = [r for r in rows if r['machine'] == machine and r['build'] == build]
            sim = [r for r in g if r['sa_err'] is not None and r['fa_err'] is not None]
            ok = [r for r in sim if abs(r['fa_err']) <= 10 and abs(r['sa_err']) <= 10]
            flagged = [r for r in g if r['flag']]
            silent = [r for r in sim if r not in ok and not r['flag']]
            worst = max(sim, key=lambda r: max(abs(r['fa_err']), abs(r['sa_err'])), default=None)
            w = ('%s (%s %s, %d×)' % (fmt(max(worst['fa_err'], worst['sa_err'], key=abs)), worst['kernel'],
                                      worst['level'], worst['factor']) if worst else 'n/a')
            print('| %s | %s | %d | %d | %s | %d | %d | %s |' % (
                machine, build, len(g), len(ok), len(flagged) if tool_flags else 'n/a (no flags)',
                len(silent), len(g) - len(sim), w))
    sim = [r for r in rows if r['sa_err'] is not None and r['fa_err'] is not None]
    bad = [r for r in sim if max(abs(r['fa_err']), abs(r['sa_err'])) > 10]
    flagged = [r for r in rows if r['flag']]
    print()
    print('All: %d levels; %d flagged by the tool (%.1f%%); %d simulated levels over 10%% off, %d of them '
          'not flagged.' % (len(rows), len(flagged), 100.0 * len(flagged) / max(len(rows), 1), len(bad),
                            len([r for r in bad if not r['flag']])) if tool_flags else
          'All: %d levels; %d simulated levels over 10%% off (the tool gives no flags).' % (len(rows), len(bad)))
    for r in fails:
        print()
        print('- %s (%s): %s' % (r['kernel'], r['build'], r['failed']))
    if tool_flags:
        precision(rows)
    print()
    print('Per kernel (every machine and level, both factors): levels within 10%, fully and set '
          'associative, of those simulated; the worst.')
    print()
    builds = list(dict.fromkeys(r['build'] for r in rows))
    print('| kernel | %s |' % ' | '.join('%s: within 10%% | worst' % b for b in builds))
    print('|---|%s' % ('---:|---|' * len(builds)))
    for kernel in dict.fromkeys(r['kernel'] for r in rows):
        cells = []
        for b in builds:
            sim = [r for r in rows if r['kernel'] == kernel and r['build'] == b
                   and r['sa_err'] is not None and r['fa_err'] is not None]
            ok = [r for r in sim if abs(r['fa_err']) <= 10 and abs(r['sa_err']) <= 10]
            worst = max(sim, key=lambda r: max(abs(r['fa_err']), abs(r['sa_err'])), default=None)
            cells.append('%d/%d' % (len(ok), len(sim)))
            cells.append('%s (%s %s, %d×)' % (fmt(max(worst['fa_err'], worst['sa_err'], key=abs)),
                                              worst['machine'], worst['level'], worst['factor'])
                         if worst else 'n/a')
        print('| %s | %s |' % (kernel, ' | '.join(cells)))
    print()
    factors = sorted({r['factor'] for r in rows})
    print('Every level: errors (predicted - simulated) / simulated in %%, fully associative (fa) and '
          'set associative (sa), at %s the largest fitted size; n/s: not simulated.'
          % ' and '.join('%d×' % f for f in factors))
    print()
    print('| kernel | build | machine | level | %s | flag |' % ' | '.join(
        '%d× fa | %d× sa' % (f, f) for f in factors))
    print('|---|---|---|---|%s---|' % ('---:|' * 2 * len(factors)))
    keys = dict.fromkeys((r['kernel'], r['build'], r['machine'], r['level']) for r in rows)
    for k in keys:
        g = {r['factor']: r for r in rows if (r['kernel'], r['build'], r['machine'], r['level']) == k}
        cells = []
        for f in factors:
            r = g.get(f)
            cells += [fmt(r['fa_err']), fmt(r['sa_err'])] if r else ['–', '–']
        flags = '; '.join('%d×: %s' % (f, g[f]['flag']) for f in factors if f in g and g[f]['flag'])
        print('| %s | %s | %s | %s | %s | %s |' % (k[0], k[1], k[2], k[3], ' | '.join(cells),
                                                 flags or ('' if tool_flags else 'n/a')))


def precision(rows):
    """Per check: the levels it flags, and how many of them are over 10% off
    (fully or set associative): a check that flags levels within 10% is
    noise there. "alone": levels flagged by that check only."""
    sim = [r for r in rows if r['sa_err'] is not None and r['fa_err'] is not None]
    names = list(dict.fromkeys(f for r in sim if r['flag'] for f in r['flag'].split('+')))
    print()
    print('Precision of each check (of the simulated levels it flags, those over 10% off; alone: flagged '
          'by this check only).')
    print()
    print('| check | flagged | over 10% | precision | alone | alone and over 10% |')
    print('|---|---:|---:|---:|---:|---:|')
    for name in names:
        g = [r for r in sim if r['flag'] and name in r['flag'].split('+')]
        bad = [r for r in g if max(abs(r['fa_err']), abs(r['sa_err'])) > 10]
        alone = [r for r in g if r['flag'] == name]
        alone_bad = [r for r in alone if r in bad]
        print('| %s | %d | %d | %.2f | %d | %d |' % (name, len(g), len(bad), len(bad) / len(g), len(alone),
                                                    len(alone_bad)))


def splice(doc, tablep):
    text = open(doc).read()
    table = open(tablep).read().rstrip('\n')
    if BEGIN not in text or END not in text:
        sys.exit('prediction-suite: %s has no table markers' % doc)
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(doc, 'w').write(head + BEGIN + '\n' + table + '\n' + END + tail)


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'levels': levels, 'measured': measured, 'row': row, 'table': table, 'splice': splice}[cmd](*args)
