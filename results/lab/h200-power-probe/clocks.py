"""Clocks, power and the power-cap flag while each kernel of probe.sh ran (one H200, three device calls
on one machine: a = 08d, b = PyTorch's peers, c = the peers with FA4). A window is a run's start and
end: probe.sh's marks for 08d, the peers' log lines (each printed as its timing ends) for the peers.
Busy samples: power above 200 W. reasons: nvidia-smi's clocks-event mask, 0x4 = SW power cap.

    python3 clocks.py   (in this folder) -> clocks.txt"""
import csv, datetime as dt, statistics as st
def when(s): return dt.datetime.strptime(s, '%Y/%m/%d %H:%M:%S.%f')
def smi(tag):
    rows = []
    for r in csv.reader(open('smi-%s.csv' % tag)):
        if r[0].startswith('timestamp'): continue
        rows.append((when(r[0].strip()), int(r[1].split()[0]), float(r[3].split()[0]), int(r[4]), r[5].strip()))
    return rows
def rates(tag):
    rows = [l for l in open('probe-%s.csv' % tag) if not l.startswith('#')]
    return [(r['rung'], int(r['N']), float(r['ms_median']), float(r['ms_min']), float(r['tflops'])) for r in csv.DictReader(rows)]
def windows(tag):
    day = open('marks-%s.txt' % tag).readline().split()[0]
    w, start = [], None
    for l in open('marks-%s.txt' % tag):
        d, t, what = l.split()[:3]
        if what == 'start': start = when(d + ' ' + t)
        elif ' '.join(l.split()[3:]) != 'peers': w.append((start, when(d + ' ' + t)))
    if tag != 'a':                                     # the peers: from one log line to the next
        prev = start
        for l in open('peers-%s.log' % tag):
            x = l.split()
            if len(x) > 1 and x[1] in ('torch-flash', 'torch-cudnn', 'fa4'):
                t = when(day + ' ' + x[0]); w.append((prev, t)); prev = t
    return w
print('%-12s %6s %9s %9s %8s %6s %6s %7s %6s %9s' % ('kernel', 'N', 'ms med', 'ms min', 'TFLOP/s', 'MHz', 'W', 'temp', 'capped', 'TF/s/GHz'))
for tag in 'abc':
    s, r = smi(tag), rates(tag)
    for (a, b), (rung, n, med, mn, tf) in zip(windows(tag), r):
        busy = [x for x in s if a <= x[0] <= b and x[2] > 200]
        clk = st.median(x[1] for x in busy)
        capped = sum(int(x[4], 16) & 4 != 0 for x in busy) / len(busy)
        print('%-12s %6d %9.3f %9.3f %8.1f %6d %6.1f %3d-%-3d %5.0f%% %9.1f' % (rung, n, med, mn, tf, clk, st.median(x[2] for x in busy),
              min(x[3] for x in busy), max(x[3] for x in busy), 100 * capped, tf / clk * 1000))
