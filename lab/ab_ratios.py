"""Per shape, each run of lab/ab.sh over its first: TFLOP/s ratio (first run's time over the run's), the mean of
the medians and the fastest launch, "median/fastest". Keys are whole shapes (dtype, d, N, causal, B, Hq),
not ab.sh's own table's "B x M".

    python3 lab/ab_ratios.py ab.csv [...]"""
import sys,collections,statistics
for f in sys.argv[1:]:
    d=collections.defaultdict(lambda: collections.defaultdict(list)); order=[]
    for l in open(f):
        if l.startswith('#'): continue
        x=l.strip().split(',')
        run=x[0]; rung,B,Hq,Hkv,N,M,dd,c,dt,st=x[2:12]
        if st!='ok': continue
        k=(dt,dd,N,c,B,Hq)
        if k not in order: order.append(k)
        d[k][run].append((float(x[12]),float(x[13])))  # median, min
    runs=None
    print(f)
    for k in order:
        r=d[k]; runs=runs or list(r.keys())
        base=statistics.mean(m for m,_ in r[runs[0]]); bmin=min(mm for _,mm in r[runs[0]])
        print('%-5s d=%-3s N=%-5s c=%s'%k[:4], ' '.join('%s %.3f/%.3f'%(run.split(':')[0], base/statistics.mean(m for m,_ in r[run]), bmin/min(mm for _,mm in r[run])) for run in runs[1:]))
