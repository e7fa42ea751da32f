#!/usr/bin/env python3
"""Optional peer benchmark: PyTorch scaled_dot_product_attention with the FLASH_ATTENTION and
CUDNN_ATTENTION backends, on the same sweep shapes, timed the same way as the rungs (CUDA events
around the call only, 3 warm-ups, >= 20 timed runs each after an L2 flush, median/min/max), and
written as rows of the same CSV (rung names torch-flash, torch-cudnn).

Runs only where python3 has PyTorch with CUDA (the GPU machine); nothing in the course needs it.
PyTorch aligns causal masks top-left while the course aligns them bottom-right, so causal shapes
are compared only where N = M (there the two agree).

GQA: SDPA's enable_gqa=True is used where the backend accepts it. For decode (N = 1, not causal)
a backend that refuses it gets the equivalent packed call -- the Hq/Hkv query heads of a KV head
as Hq/Hkv query rows of one head -- which is how a careful user would call it; never a copy of
K/V. What was used is recorded in the row's extra field.
"""
import argparse
import math
import os
import sys


def visible_pairs(B, N, M, causal):
    if not causal:
        return float(B) * N * M
    total = 0.0
    for i in range(N):
        e = i + (M - N) + 1
        total += min(max(e, 0), M)
    return B * total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--flush", choices=["write", "write+read"], default="write+read",
                    help="the L2 flush before every timed call, as the rungs' --flush")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("peers: no CUDA device visible to PyTorch; skipped")
        return 0
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    name = props.name.replace(",", ";")
    commit = os.environ.get("ATTN_COMMIT", "unknown")
    l2 = getattr(props, "L2_cache_size", 64 << 20) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
    # The same flush as the rungs (common/l2flush.cu): write twice the L2, then read it back so the
    # dirty lines are written back before the clock starts; --flush write skips the read.
    clean = args.flush != "write"
    flush_words = flush.view(torch.int32)

    def do_flush(x):
        flush.fill_(x)
        if clean:
            flush_words.sum()

    shapes = []
    with open(args.sweep) as f:
        for line in f:
            line = line.split("#")[0].split()
            if len(line) < 7:
                continue
            shapes.append(tuple(int(x) for x in line[:7]))

    backends = [("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION)]
    new_file = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
    out = open(args.csv, "a")
    if new_file:
        out.write("rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,"
                  "rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra\n")

    def row(rung, s, status, t=None, rel=None, extra=""):
        B, Hq, Hkv, N, M, d, c = s
        fields = [rung, B, Hq, Hkv, N, M, d, c, "f16", status.replace(",", ";")]
        if t:
            med, mn, mx = t
            flops = 4.0 * Hq * d * visible_pairs(B, N, M, c)
            byts = 2.0 * (2 * B * Hq * N * d + 2 * B * Hkv * M * d) + 4.0 * B * Hq * N
            fields += ["%.6f" % med, "%.6f" % mn, "%.6f" % mx, "%.3f" % (flops / (med * 1e-3) * 1e-12),
                       "%.1f" % (byts / (med * 1e-3) * 1e-9)]
        else:
            fields += [""] * 5
        fields += ["%.3e" % rel if rel is not None else "", "", "", 0, name, commit, extra]
        out.write(",".join(str(x) for x in fields) + "\n")
        out.flush()
        print("%-12s B=%-4d Hq=%-3d Hkv=%-3d N=%-6d M=%-6d d=%-4d c=%d  %s %s" %
              (rung, B, Hq, Hkv, N, M, d, c, ("%.4f ms" % t[0]) if t else "", status), flush=True)

    for s in shapes:
        B, Hq, Hkv, N, M, d, causal = s
        gen = torch.Generator(device=dev).manual_seed(1234)
        q = torch.randn(B, Hq, N, d, device=dev, dtype=torch.float16, generator=gen)
        k = torch.randn(B, Hkv, M, d, device=dev, dtype=torch.float16, generator=gen)
        v = torch.randn(B, Hkv, M, d, device=dev, dtype=torch.float16, generator=gen)
        # sanity reference, float32, for the first 128 query rows of (b, h) = (0, 0)
        rows = min(N, 128)
        sc = (q[0, 0, :rows].float() @ k[0, 0].float().T) / math.sqrt(d)
        if causal:
            i = torch.arange(rows, device=dev)[:, None]
            j = torch.arange(M, device=dev)[None, :]
            sc = sc.masked_fill(j > i + (M - N), float("-inf"))
        ref = torch.softmax(sc, dim=-1) @ v[0, 0].float()
        del sc

        for rung, be in backends:
            if causal and N != M:
                row(rung, s, "unsupported: PyTorch aligns causal masks top-left; compared only at N = M")
                continue
            calls = []
            if Hq == Hkv:
                calls.append(("mha", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))))
            else:
                calls.append(("enable_gqa", lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=bool(causal), enable_gqa=True)))
                if N == 1 and not causal:
                    g = Hq // Hkv
                    qp = q.view(B, Hkv, g, d)   # [B, Hq, 1, d] -> [B, Hkv, g, d]: g rows per KV head
                    calls.append(("packed", lambda: F.scaled_dot_product_attention(qp, k, v).view(B, Hq, 1, d)))
            done = False
            last_err = ""
            for how, fn in calls:
                try:
                    with sdpa_kernel(be):
                        o = fn()
                        torch.cuda.synchronize()
                except Exception as e:  # the backend refuses this call: try the next form
                    last_err = str(e).split("\n")[0][:150]
                    continue
                rel = ((o[0, 0, :rows].float() - ref).norm() / ref.norm()).item()
                with sdpa_kernel(be):
                    times = []
                    e0 = torch.cuda.Event(enable_timing=True)
                    e1 = torch.cuda.Event(enable_timing=True)
                    t0 = None
                    for w in range(3):
                        do_flush(w)
                        e0.record(); fn(); e1.record(); e1.synchronize()
                        t0 = e0.elapsed_time(e1)
                    runs = args.runs or max(20, min(200, int(200.0 / max(t0, 1e-3))))
                    for r in range(runs):
                        do_flush(r & 0xff)
                        e0.record(); fn(); e1.record(); e1.synchronize()
                        times.append(e0.elapsed_time(e1))
                times.sort()
                n = len(times)
                med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
                status = "ok" if rel <= 2e-3 else "FAIL: rel-L2 %.3g vs float32 math" % rel
                row(rung, s, status, (med, times[0], times[-1]), rel, "call=%s;runs=%d;flush=%s" % (how, n, "write+read" if clean else "write"))
                done = True
                break
            if not done:
                row(rung, s, "unsupported: " + (last_err or "backend refused"))
        del q, k, v, ref
        torch.cuda.empty_cache()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
