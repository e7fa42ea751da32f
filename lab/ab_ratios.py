"""Per shape, each run of lab/ab.sh over the first run of its variant (old:07f for new:07f): TFLOP/s ratio (first run's time over the run's), the mean of
the medians and the fastest launch, "median/fastest". Keys are whole shapes (dtype, d, N, causal, B, Hq),
not ab.sh's own table's "B x M".

    python3 lab/ab_ratios.py ab.csv [...]"""
import sys,collections,statistics
for f in sys.argv[1:]:
    d=collections.defaultdict(lambda: collections.defaultdict(list)); order=[]; runs=[]
    for l in open(f):
        if l.startswith('#'): continue
        x=l.strip().split(',')
        run=x[0]; rung,B,Hq,Hkv,N,M,dd,c,dt,st=x[2:12]
        if run not in runs: runs.append(run)
        if st!='ok': continue
        k=(dt,dd,N,c,B,Hq)
        if k not in order: order.append(k)
        d[k][run].append((float(x[12]),float(x[13])))  # median, min
    # each run against the first run of its variant ("old:07f" for "new:07f")
    base={r: next(b for b in runs if b.split(':')[-1]==r.split(':')[-1]) for r in runs}
    print(f)
    for k in order:
        r=d[k]; out=[]
        for run in runs:
            b=base[run]
            if run==b or run not in r or b not in r: continue
            out.append('%s %.3f/%.3f'%(run.split(':')[0], statistics.mean(m for m,_ in r[b])/statistics.mean(m for m,_ in r[run]),
                                        min(mm for _,mm in r[b])/min(mm for _,mm in r[run])))
        if out: print('%-5s d=%-3s N=%-5s c=%s'%k[:4], ' '.join(out))
