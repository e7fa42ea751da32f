#!/usr/bin/env bash
# Where rung 08's shared-memory wavefronts and warp stalls go, from the source page lab/bwd_source.sh
# brings back: lab/bwd_source_top.sh FILE.csv.gz TILES [N]
# TILES: the work tiles of the profiled launch (B * Hkv * G * key blocks * query tiles; not causal,
# B = 2, H = 16, N = 8192, d = 128: 2 * 16 * 64 * 128 = 262144), so that the counts read per tile.
# Where the page holds several kernels (FA4's backward), the one that executes the most instructions.
# Prints, by opcode: the warp instructions and the shared-memory wavefronts (and their ideal) a tile;
# then every opcode's warp instructions a tile (the uniform datapath's descriptor work among them);
# then the stall reasons' shares; then the N instructions with the most stall samples. FA4's tiles
# at d = 128 not causal are 80 queries by 128 keys: B * H * (M / 128) * ceil(N / 80) of them.
set -eu
file=${1:?usage: lab/bwd_source_top.sh FILE.csv.gz TILES [N]} tiles=${2:?tiles} top=${3:-20}
zcat "$file" | python3 -c '
import csv, sys, re, collections
tiles, top = float(sys.argv[1]), int(sys.argv[2])
rows = list(csv.reader(sys.stdin))
# one block a kernel ("Kernel Name" line, header, instructions); take the kernel that executes the most
blocks, cur = [], None
for r in rows:
    if r and r[0] == "Kernel Name": cur = [r]; blocks.append(cur)
    elif cur is not None: cur.append(r)
def work(b):
    h = b[1]; i = h.index("Instructions Executed") if "Instructions Executed" in h else None
    return sum(float(r[i].replace(",", "") or 0) for r in b[2:] if i is not None and len(r) > i and r[i] not in ("", "-"))
blk = max(blocks, key=work)
print("kernel:", blk[0][1][:100])
head, body = blk[1], blk[2:]
col = {n: i for i, n in enumerate(head)}
num = lambda x: float(x.replace(",", "")) if x not in ("", "-") else 0.0
get = lambda r, n: num(r[col[n]])
ops = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
for r in body:
    op = re.sub(r"^@!?U?P\w+\s+", "", r[col["Source"]].strip()).split(" ")[0]
    a = ops[op]
    a[0] += get(r, "Instructions Executed"); a[1] += get(r, "L1 Wavefronts Shared"); a[2] += get(r, "L1 Wavefronts Shared Ideal")
tw = sum(a[1] for a in ops.values())
print("shared-memory wavefronts a tile, by opcode (%d tiles; all opcodes: %.0f a tile)" % (tiles, tw / tiles))
print("%-24s %12s %12s %12s %7s" % ("opcode", "warp inst", "wavefronts", "ideal", "share"))
for op, a in sorted(ops.items(), key=lambda kv: -kv[1][1]):
    if a[1] > 0:
        print("%-24s %12.1f %12.1f %12.1f %6.1f%%" % (op, a[0] / tiles, a[1] / tiles, a[2] / tiles, 100 * a[1] / tw))
ti = sum(a[0] for a in ops.values())
print("\nwarp instructions a tile, by opcode (all opcodes: %.0f a tile; the 30 most executed):" % (ti / tiles))
print("  " + ", ".join("%s %.1f" % (op, a[0] / tiles) for op, a in sorted(ops.items(), key=lambda kv: -kv[1][0])[:30]))
reasons = [n for n in head if n.startswith("stall_") and "(Not" not in n]
tot = collections.Counter()
for r in body:
    for n in reasons: tot[n] += get(r, n)
T = sum(tot.values())
print("\nwarp-stall samples: %d; by reason:" % T)
print("  " + ", ".join("%s %.1f%%" % (n[6:], 100 * v / T) for n, v in tot.most_common(8)))
print("\nthe %d instructions with the most samples (index on the page, samples, largest reason, SASS):" % top)
idx = sorted(range(len(body)), key=lambda i: -get(body[i], "Warp Stall Sampling (All Samples)"))[:top]
for i in sorted(idx):
    r = body[i]
    why = max(reasons, key=lambda n: get(r, n))
    print("%5d %7.0f  %-14s %s" % (i, get(r, "Warp Stall Sampling (All Samples)"), why[6:], r[col["Source"]].strip()[:64]))
' "$tiles" "$top"
