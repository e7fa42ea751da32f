"""Clocks, power and the power-cap flag while each forward kernel of fprobe.sh ran (one H200, three
device calls: frungs = 07f and 07g, fpeers = PyTorch's peers and FA4, ffp8 = cuDNN's FP8, then 07g
again, in one call). A window: fprobe.sh's marks for the rungs; for the peers, from one log line
to the next (each printed as its timing ends). Busy samples: power above 200 W; capped: the
clock-event mask's 0x4 (SW power cap).

    python3 clocks.py   (in this folder) -> clocks.txt"""
import csv, datetime as dt, statistics as st
def when(s): return dt.datetime.strptime(s, '%Y/%m/%d %H:%M:%S.%f')
def smi(tag):
    rows = []
    for r in csv.reader(open('smi-%s.csv' % tag)):
        if r[0].startswith('timestamp'): continue
        rows.append((when(r[0].strip()), int(r[1].split()[0]), float(r[3].split()[0]), r[5].strip()))
    return rows
def rows(tag):
    return [r for r in csv.DictReader(l for l in open('fprobe-%s.csv' % tag) if not l.startswith('#')) if r['tflops']]
def windows(tag):
    marks = [l.split() for l in open('marks-%s.txt' % tag)]
    day, w, start, peers = marks[0][0], [], None, []
    for m in marks:
        t = when(m[0] + ' ' + m[1])
        if m[2] == 'start': start = t
        elif m[3] == 'peers': peers = [start]
        else: w.append((start, t))
    if peers:                                          # the peers' windows come first in the CSV
        prev, pw = peers[0], []
        for l in open('peers-%s.log' % tag):
            x = l.split()
            if len(x) > 2 and x[1] in ('torch-flash', 'torch-cudnn', 'fa4', 'cudnn-fp8'):
                t = when(day + ' ' + x[0])
                if x[-1] == 'ok': pw.append((prev, t))
                prev = t
        w = pw + w
    return w
print('%-12s %-5s %3s %6s %9s %9s %8s %6s %6s %7s %9s' % ('kernel', 'dtype', 'd', 'N', 'ms med', 'ms min', 'TFLOP/s', 'MHz', 'W', 'capped', 'TF/s/GHz'))
for tag in ('frungs', 'fpeers', 'ffp8'):
    s = smi(tag)
    for (a, b), r in zip(windows(tag), rows(tag)):
        busy = [x for x in s if a <= x[0] <= b and x[2] > 200]
        clk, tf = st.median(x[1] for x in busy), float(r['tflops'])
        capped = sum(int(x[3], 16) & 4 != 0 for x in busy) / len(busy)
        print('%-12s %-5s %3s %6s %9.3f %9.3f %8.1f %6d %6.1f %6.0f%% %9.1f' % (r['rung'], r['dtype'], r['d'], r['N'],
              float(r['ms_median']), float(r['ms_min']), tf, clk, st.median(x[2] for x in busy), 100 * capped, tf / clk * 1000))
