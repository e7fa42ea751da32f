"""One table row a kernel from lab/fwd_source.sh's pages (raw page <p>-<step>.txt and its source page
<p>-<step>-source.csv.gz): time, instructions, tensor pipe, XU pipe and issue slots (% of peak,
active), stalls per issued instruction (wait, barrier, long scoreboard), and MUFU's share of the
warp-stall samples; the columns of 07 NOTES' tables beside cuDNN.

    python3 lab/ncu_row.py DIR [DIR ...]   (each DIR holds fwd-07f.txt, fwd-cudnn.txt and their source pages)
    NCU_PEER=fa4 python3 lab/ncu_row.py DIR ...   (fwd-fa4*: lab/fwd_source.sh with FWD_PEER=fa4)"""
import csv
import gzip
import os
import re
import sys

M = ["gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
     "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.pct_of_peak_sustained_active",
     "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
     "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
     "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"]


def raw(f):
    h, _, v = list(csv.reader(open(f)))[:3]
    return [float(v[h.index(m)].replace(",", "")) for m in M]


def mufu_share(f):
    r = list(csv.reader(gzip.open(f, "rt")))
    h, rows = r[1], r[2:]
    si, ws = h.index("Source"), h.index("Warp Stall Sampling (All Samples)")
    tot = mu = 0.0
    for row in rows:
        if len(row) > max(si, ws):
            w = float(row[ws].replace(",", "") or 0)
            tot += w
            if re.match(r"\s*(@!?U?P\w+\s+)?MUFU", row[si]):
                mu += w
    return 100 * mu / max(tot, 1)


PEER = os.environ.get("NCU_PEER", "cudnn")
for d in sys.argv[1:]:
    a, b = (raw(os.path.join(d, "fwd-%s.txt" % k)) for k in ("07f", PEER))
    ma, mb = (mufu_share(os.path.join(d, "fwd-%s-source.csv.gz" % k)) for k in ("07f", PEER))
    print("| %s | %.1f / %.1f | %.0f / %.0f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.2f, %.2f, %.2f / %.2f, %.2f, %.2f | %.1f%% / %.1f%% |"
          % (os.path.basename(d.rstrip("/")), a[0], b[0], a[1] / 1e6, b[1] / 1e6, a[2], b[2], a[3], b[3], a[4], b[4],
             a[5], a[6], a[7], b[5], b[6], b[7], ma, mb))
