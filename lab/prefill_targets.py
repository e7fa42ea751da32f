"""Issue 38's prefill targets from a prefill CSV (results/<gpu>-prefill.csv): 07g against cudnn-fp8 and
against the fastest 16-bit step, the fastest 16-bit step against torch-cudnn and fa4.

    python3 lab/prefill_targets.py results/h200-prefill.csv"""
import csv,sys
f=sys.argv[1]
lines=[l for l in open(f) if not l.startswith('#')]
t={}
for r in csv.DictReader(lines):
    if r['status']!='ok' or not r['tflops'] or not r['N']: continue
    key=(r['dtype'],int(r['d']),int(r['N']),int(r['causal']),r['B'],r['Hq'],r['Hkv'])
    t.setdefault(key,{})[r['rung']]=float(r['tflops'])
def best16(k):
    v=t[k]; return max(((x,s) for s,x in v.items() if s.startswith('07') and s!='07g'), default=(0,''))
# 1
for d in (128,256):
    r=[(k[2],k[3],t[k]['07g']/t[k]['cudnn-fp8']) for k in t if k[0]=='e4m3' and k[1]==d and k[2]>=4096 and 'cudnn-fp8' in t[k]]
    print('07g/cudnn-fp8 d=%d'%d, ' '.join('N%d c%d %.3f'%x for x in sorted(r)))
# 2
for k in sorted(t):
    if k[0]!='e4m3' or k[1]!=128 or k[2]<4096: continue
    out=[]
    for dt in ('f16','bf16'):
        k2=(dt,)+k[1:]
        if k2 in t: out.append('%s %.3f (%s)'%(dt, t[k]['07g']/best16(k2)[0], best16(k2)[1]))
    print('07g/16-bit d=128 N%d c%d'%(k[2],k[3]), ' '.join(out))
for k in sorted(t):
    if k[0]!='e4m3' or k[1]!=256: continue
    k2=('f16',)+k[1:]
    if k2 in t: print('07g/16 d=256 N%d c%d %.3f'%(k[2],k[3],t[k]['07g']/best16(k2)[0]))
# 3
n=0; below=[]
for k in sorted(t):
    if k[0]=='e4m3' or 'torch-cudnn' not in t[k]: continue
    n+=1; r=best16(k)[0]/t[k]['torch-cudnn']
    if r<1: below.append((k[0],k[1],k[2],k[3],round(r,3)))
print('vs torch-cudnn: %d of %d at or above; below:'%(n-len(below),n), below)
# 4
print('d=64 N>=8192 vs fa4:', [(k[0],k[2],k[3],round(best16(k)[0]/t[k]['fa4'],3)) for k in sorted(t) if k[0]!='e4m3' and k[1]==64 and k[2]>=8192 and 'fa4' in t[k]])
# 5
m=[k for k in t if k[0]!='e4m3' and k[2]>=2048 and 'fa4' in t[k]]
print('vs fa4 from N=2048: level or ahead on %d of %d'%(sum(best16(k)[0]>=t[k]['fa4'] for k in m), len(m)))
