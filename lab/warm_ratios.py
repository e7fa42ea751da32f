"""Per shape of a prefill CSV, the ratios issue 38 judges, from the rows one rerun measured alone
(those whose extra field has the given tag, e.g. warm_ms=500): 07f over torch-cudnn and over fa4
(16-bit lines), 07g over cudnn-fp8 and over 07f (e4m3 lines, 07f on the f16 line of that shape).
Several CSVs side by side, one column each, so the spread between runs shows.

    python3 lab/warm_ratios.py TAG run1.csv [run2.csv ...]"""
import csv, sys

tag, files = sys.argv[1], sys.argv[2:]
tabs = []
for f in files:
    t = {}
    for r in csv.DictReader(l for l in open(f) if not l.startswith('#')):
        if r['status'] != 'ok' or tag not in r['extra'].split(';'):
            continue
        k = (r['dtype'], int(r['d']), int(r['N']), int(r['causal']), int(r['B']), int(r['Hq']), int(r['Hkv']))
        t.setdefault(k, {})[r['rung']] = float(r['tflops'])
    tabs.append(t)
keys = sorted(set().union(*tabs), key=lambda k: (k[0] != 'f16', k[0], k[1], k[2], k[3]))
def ratio(t, k, a, b, kb=None):
    x, y = t.get(k, {}).get(a), t.get(kb or k, {}).get(b)
    return '%.3f' % (x / y) if x and y else '-'
print('| dtype | d | N | causal | ratio | ' + ' | '.join('run %d' % (i + 1) for i in range(len(files))) + ' |')
print('|---|---|---|---|---|' + '---|' * len(files))
for k in keys:
    pairs = [('07f', 'torch-cudnn', None), ('07f', 'fa4', None)] if k[0] != 'e4m3' else \
            [('07g', 'cudnn-fp8', None), ('07g', '07f', ('f16',) + k[1:])]
    for a, b, kb in pairs:
        row = [ratio(t, k, a, b, kb) for t in tabs]
        if all(x == '-' for x in row):
            continue
        print('| %s | %d | %d | %d | %s / %s | %s |' % (k[0], k[1], k[2], k[3], a, b, ' | '.join(row)))
