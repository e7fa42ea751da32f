#!/usr/bin/env python3
"""Optional peer benchmark: PyTorch scaled_dot_product_attention with the FLASH_ATTENTION and
CUDNN_ATTENTION backends, on the same sweep shapes, timed the same way as the rungs (CUDA events
around the call only, 3 warm-ups, >= 20 timed runs each after an L2 flush, median/min/max), and
written as rows of the same CSV (rung names torch-flash, torch-cudnn). Where FlashAttention-4
(flash-attn-4: flash_attn.cute) is importable too, its forward is timed the same way (rung name
fa4; Q, K, V in its [B, N, H, d] layout, made outside the timed region; its causal mask is
bottom-right, as the course's). Nothing here installs it (pip install flash-attn-4 where a package
registry can be reached); without it there are no fa4 rows.

Runs only where python3 has PyTorch with CUDA (the GPU machine); nothing in the course needs it.
PyTorch aligns causal masks top-left while the course aligns them bottom-right, so causal shapes
are compared only where N = M (there the two agree).

GQA: SDPA's enable_gqa=True is used where the backend accepts it. For decode (N = 1, not causal)
a backend that refuses it gets the equivalent packed call -- the Hq/Hkv query heads of a KV head
as Hq/Hkv query rows of one head -- which is how a careful user would call it; never a copy of
K/V. What was used is recorded in the row's extra field.

A sweep line's keys, as the rungs read them (common/cli.c): dtype=f16|bf16 sets the storage type
(the check against float32 math then allows 2e-3 or 1e-2, as the course does); dtype=e4m3 (rung
07's FP8 step) is read and not run, with an "unsupported: ..." row saying why; inputs=outlier
scales Q and K by 10; model=NAME is carried to the row's extra field (model=NAME;). SDPA has no
paged KV cache and one KV length for the whole batch, so a line with page=P (other than 0) or
with seqlens= / dist= is not run: it gets an "unsupported: ..." row saying why, never a number
measured on another layout. --list prints what each line would get, without PyTorch.

--backward times the backward pass instead, as rung 08 is timed (common/run_grad.c): Q, K, V and dO
drawn as above (dO from N(0, 1)); the forward run once through autograd outside the timed region;
then, timed, dQ, dK, dV by torch.autograd.grad with retain_graph (the graph kept for the next run),
each run after the same L2 flush. Same backends, same rung names, same columns; TFLOP/s counts 2.5x
the forward's FLOPs and GB/s Q, K, V, O, dO read and dQ, dK, dV written once, LSE once
(common/attn.h: attn_bwd_flops, attn_bwd_bytes); the extra field says pass=backward. The check: the
G = Hq/Hkv query heads of (b, KV head) = (0, 0), all their rows, against float32 math from the
definitions (08_backward/README.md), rel-L2 of dQ, dK and dV, the largest against the forward's
tolerance.
"""
import argparse
import contextlib
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


MODEL_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+")


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def read_sweep(path):
    """The shapes of a sweep file: (B, Hq, Hkv, N, M, d, causal) and the keys the peers read. A line
    the rungs would refuse to parse stops here too (exit 2), so both read the same shapes."""
    cases = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            tok = raw.split("#")[0].split()
            if not tok:
                continue
            where = "%s:%d" % (path, lineno)
            if len(tok) < 7:
                die("error: %s: expected B Hq Hkv N M d causal [key=value ...]" % where)
            try:
                shape = tuple(int(x) for x in tok[:7])
            except ValueError:
                die("error: %s: the seven sizes must be integers" % where)
            c = {"shape": shape, "dtype": "f16", "page": 0, "model": "", "outlier": False, "varlen": ""}
            for kv in tok[7:]:
                k, eq, v = kv.partition("=")
                if not eq:
                    die("error: %s: '%s' is not key=value" % (where, kv))
                if k == "dtype" and v in ("f16", "bf16", "e4m3"):
                    c["dtype"] = v
                elif k == "page" and v.isdigit():
                    c["page"] = int(v)
                elif k == "model" and v and len(v) < 64 and set(v) <= MODEL_CHARS:
                    c["model"] = v
                elif k == "inputs" and v in ("normal", "outlier"):
                    c["outlier"] = v == "outlier"
                elif k in ("seqlens", "dist"):
                    c["varlen"] = k
                elif k == "expect":
                    pass                      # read by the test runner, not here
                else:
                    die("error: %s: %s: not a key and value the sweep files take "
                                     "(inputs, dtype, seqlens, dist, page, model, expect)" % (where, kv))
            cases.append(c)
    return cases


def not_run(c):
    """Why the peers do not run this line (the row's status), or None."""
    B, Hq, Hkv, N, M, d, causal = c["shape"]
    if c["dtype"] == "e4m3":
        return ("unsupported: float8 e4m3: the peers here run SDPA in float16 or bfloat16, and no FP8 "
                "attention is installed beside them; not run (the float16 line of the shape has their number)")
    if c["page"]:
        return ("unsupported: a paged KV cache (page=%d): SDPA reads K and V contiguous; not run "
                "(a contiguous line of the same shape has the peers' number)" % c["page"])
    if c["varlen"]:
        return "unsupported: per-request KV lengths (%s=): SDPA takes one KV length for the batch; not run" % c["varlen"]
    if causal and N != M:
        return "unsupported: PyTorch aligns causal masks top-left; compared only at N = M"
    return None


def label(c):
    """What tells a row's sweep line apart in the extra field, as the rungs write it (report_label)."""
    return ("page=%d;" % c["page"] if c["page"] else "") + ("model=%s;" % c["model"] if c["model"] else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--csv")
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--flush", choices=["write", "write+read"], default="write+read",
                    help="the L2 flush before every timed call, as the rungs' --flush")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward pass (dQ, dK, dV through autograd; the forward untimed), as rung 08 is timed")
    ap.add_argument("--list", action="store_true",
                    help="print what each line of the sweep would get (run, or why not); no PyTorch needed")
    args = ap.parse_args()
    cases = read_sweep(args.sweep)
    if args.list:
        for c in cases:
            why = not_run(c)
            print("%s %s %s %s%s" % ("run " if why is None else "skip", " ".join(str(x) for x in c["shape"]),
                                     c["dtype"], label(c) or "-", "" if why is None else "  " + why))
        return 0
    if not args.csv:
        ap.error("--csv FILE is needed to run (or --list)")

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

    backends = [("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION)]
    try:
        from flash_attn.cute import flash_attn_func as fa4_func
        backends.append(("fa4", None))
    except Exception:                         # not installed: no fa4 rows
        fa4_func = None
    new_file = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
    out = open(args.csv, "a")
    if new_file:
        out.write("rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,"
                  "rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra\n")

    def row(rung, case, status, t=None, rel=None, extra=""):
        B, Hq, Hkv, N, M, d, c = case["shape"]
        fields = [rung, B, Hq, Hkv, N, M, d, c, case["dtype"], status.replace(",", ";")]
        if t:
            med, mn, mx = t
            flops = 4.0 * Hq * d * visible_pairs(B, N, M, c)
            byts = 2.0 * (2 * B * Hq * N * d + 2 * B * Hkv * M * d) + 4.0 * B * Hq * N
            if args.backward:                 # attn_bwd_flops, attn_bwd_bytes
                flops, byts = 2.5 * flops, 2.0 * byts - 4.0 * B * Hq * N
            fields += ["%.6f" % med, "%.6f" % mn, "%.6f" % mx, "%.3f" % (flops / (med * 1e-3) * 1e-12),
                       "%.1f" % (byts / (med * 1e-3) * 1e-9)]
        else:
            fields += [""] * 5
        if args.backward:
            extra = "pass=backward;" + extra
        if label(case):                       # the sweep line's page= and model=, as the rungs' rows end
            extra = (extra + ";" if extra else "") + label(case)
        fields += ["%.3e" % rel if rel is not None else "", "", "", 0, name, commit, extra]
        out.write(",".join(str(x) for x in fields) + "\n")
        out.flush()
        print("%-12s B=%-4d Hq=%-3d Hkv=%-3d N=%-6d M=%-6d d=%-4d c=%d %-4s %s %s" %
              (rung, B, Hq, Hkv, N, M, d, c, case["dtype"], ("%.4f ms" % t[0]) if t else "", status), flush=True)

    def time_call(fn):
        """Median, min and max ms of fn and the number of timed runs: 3 warm-ups, then >= 20 runs
        (up to 200 for short calls), each after an L2 flush, CUDA events around the call alone."""
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
        return med, times[0], times[-1], n

    def rel_l2(x, ref):
        return ((x.float() - ref).norm() / ref.norm()).item()

    def grad_reference(q, k, v, do, causal):
        """dQ of the query heads of (b, KV head) = (0, 0), and that KV head's dK and dV, in float32
        from the definitions (P from the softmax, D = rowsum(dO o O), dS = P o (dP - D)), query rows
        in chunks so that no N x M matrix is held whole."""
        _, Hq, N, d = q.shape
        M, G, scale = k.shape[2], Hq // k.shape[1], 1.0 / math.sqrt(d)
        kf, vf = k[0, 0].float(), v[0, 0].float()
        dq = torch.empty(G, N, d, device=dev)
        dk = torch.zeros(M, d, device=dev)
        dv = torch.zeros(M, d, device=dev)
        step = max(1, (1 << 25) // M)
        for h in range(G):
            for r0 in range(0, N, step):
                r1 = min(N, r0 + step)
                qc, gc = q[0, h, r0:r1].float(), do[0, h, r0:r1].float()
                s = (qc @ kf.T) * scale
                if causal:
                    i = torch.arange(r0, r1, device=dev)[:, None]
                    j = torch.arange(M, device=dev)[None, :]
                    s.masked_fill_(j > i + (M - N), float("-inf"))
                p = torch.softmax(s, dim=-1).nan_to_num_(0.0)   # a row that sees no key: P = 0
                ds = p * (gc @ vf.T - (gc * (p @ vf)).sum(-1, keepdim=True))
                dq[h, r0:r1] = (ds @ kf) * scale
                dk += (ds.T @ qc) * scale
                dv += p.T @ gc
                del s, p, ds
        return dq, dk, dv

    torch.backends.cuda.matmul.allow_tf32 = False        # the references are float32 math
    for case in cases:
        B, Hq, Hkv, N, M, d, causal = case["shape"]
        why = not_run(case)
        if why is not None:
            for rung, be in backends:
                row(rung, case, why)
            continue
        dt = torch.bfloat16 if case["dtype"] == "bf16" else torch.float16
        tol = 1e-2 if case["dtype"] == "bf16" else 2e-3      # the rungs' tolerances (README: how a run is checked)
        gen = torch.Generator(device=dev).manual_seed(1234)
        q = torch.randn(B, Hq, N, d, device=dev, dtype=dt, generator=gen)
        k = torch.randn(B, Hkv, M, d, device=dev, dtype=dt, generator=gen)
        v = torch.randn(B, Hkv, M, d, device=dev, dtype=dt, generator=gen)
        if case["outlier"]:                                  # as common/inputs.c: scores in the hundreds
            q.mul_(10.0)
            k.mul_(10.0)
        G = Hq // Hkv
        if args.backward:
            do = torch.randn(B, Hq, N, d, device=dev, dtype=dt, generator=gen)
            ref = grad_reference(q, k, v, do, causal)
        else:
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
            # each form of the call: (how, fn on Q, K, V in its layout -> O in its layout, the layout:
            # [B, H, N, d] to the callee's and back)
            calls = []
            same = lambda x: x
            if be is None:                    # FlashAttention-4: [B, N, H, d], GQA native
                def fa4_call(qt, kt, vt):
                    r = fa4_func(qt, kt, vt, causal=bool(causal))
                    return r[0] if isinstance(r, tuple) else r
                calls.append(("fa4", fa4_call, lambda x: x.transpose(1, 2)))
            elif Hq == Hkv:
                calls.append(("mha", lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=bool(causal)), same))
            else:
                calls.append(("enable_gqa", lambda a, b, c: F.scaled_dot_product_attention(
                    a, b, c, is_causal=bool(causal), enable_gqa=True), same))
                if N == 1 and not causal:     # [B, Hq, 1, d] -> [B, Hkv, G, d]: G rows per KV head
                    calls.append(("packed", lambda a, b, c: F.scaled_dot_product_attention(
                        a.view(B, Hkv, G, d), b, c).view(B, Hq, 1, d), same))
            done = False
            last_err = ""
            for how, call, lay in calls:
                ctx = (lambda: sdpa_kernel(be)) if be is not None else contextlib.nullcontext
                ins = [lay(x.detach()).contiguous() for x in (q, k, v)]   # outside the timed region; leaves of their own
                try:
                    with ctx():
                        if args.backward:
                            ins = [x.requires_grad_() for x in ins]
                            o = call(*ins)                              # the forward, untimed
                            g_out = lay(do).contiguous()

                            def fn():
                                return torch.autograd.grad(o, ins, grad_outputs=g_out, retain_graph=True)
                        else:
                            def fn():
                                return call(*ins)
                        res = fn()
                        torch.cuda.synchronize()
                except Exception as e:  # the backend refuses this call: try the next form
                    last_err = str(e).split("\n")[0][:150]
                    continue
                if args.backward:
                    dq, dk, dv = (lay(x) for x in res)
                    rels = [rel_l2(dq[0, :G], ref[0]), rel_l2(dk[0, 0], ref[1]), rel_l2(dv[0, 0], ref[2])]
                    rel = max(rels)
                    what = "rel_dq=%.3e;rel_dk=%.3e;rel_dv=%.3e;" % tuple(rels)
                    del res, dq, dk, dv
                else:
                    rel = rel_l2(lay(res)[0, 0, :min(N, 128)], ref)
                    what = ""
                    del res
                with ctx():
                    med, mn, mx, n = time_call(fn)
                status = "ok" if rel <= tol else "FAIL: rel-L2 %.3g vs float32 math" % rel
                row(rung, case, status, (med, mn, mx), rel, "%scall=%s;runs=%d;flush=%s" % (what, how, n, "write+read" if clean else "write"))
                done = True
                break
            if not done:
                row(rung, case, "unsupported: " + (last_err or "backend refused"))
            fn = ins = o = g_out = None       # the graph and its saved tensors go before the next backend
        del q, k, v, ref
        if args.backward:
            del do
        torch.cuda.empty_cache()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
