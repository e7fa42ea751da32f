#!/usr/bin/env python3
"""The binding on a GPU (make test, after the GPU matrix): ladder.attention against PyTorch's
scaled_dot_product_attention computed in float64 from the same rounded inputs.

  - forward: every step of every forward rung (ladder.variants("00") ... ("07")) on each shape
    below, O compared by its relative L2 error;
  - backward: every step of rung 08 (backward_variant=) under rung 07's forward, dQ, dK and dV
    compared the same way;
  - the pass rule is the course's: relative L2 error at most 2e-3 in float16, 1e-2 in bfloat16
    (common/check.c, check_tolerance);
  - a step that refuses a shape raises ladder.Refused with its reason: printed, not counted; a
    shape every step refuses is a FAIL (the list below is meant to be taken).

The shapes: tails in N and M, causal with N < M and N > M (rows that see no key: O and dQ 0), GQA
and MQA, bfloat16, head dims 40, 64, 96, 128 and 256, and a decode step (N = 1, rung 06's).
Causal is aligned bottom-right, as the ladder's: query i sees key j when j <= i + M - N. The
reference is SDPA in float64 with that mask as attn_mask; a row that sees no key is opened in the
mask and its output multiplied by 0, so that it adds nothing to any gradient.

Without PyTorch, or without a CUDA device, it prints one "skip" line with the reason.
Prints "ok ...", "FAIL ..." or "skip ..." per check (tools/run_tests.sh counts them)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("skip the binding on a GPU: PyTorch is not installed (pip install torch)")
    sys.exit(0)
if not torch.cuda.is_available():
    print(f"skip the binding on a GPU: torch {torch.__version__} sees no CUDA device")
    sys.exit(0)

import ladder                                    # noqa: E402
from ladder import _lib                          # noqa: E402

# B, Hq, Hkv, N, M, d, causal, dtype
SHAPES = [
    (2, 4, 4, 77, 131, 64, False, torch.float16),
    (1, 6, 2, 200, 333, 128, True, torch.bfloat16),
    (2, 4, 1, 150, 97, 64, True, torch.float16),
    (1, 4, 2, 130, 250, 96, False, torch.bfloat16),
    (1, 4, 2, 77, 131, 40, True, torch.float16),
    (1, 4, 4, 100, 200, 256, True, torch.float16),
    (4, 8, 2, 1, 1000, 128, False, torch.float16),
]
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2}
fails = 0
taken = [0] * len(SHAPES)          # per shape: the forward steps that ran it


def check(cond, what, detail=""):
    global fails
    print(("ok " if cond else "FAIL ") + what + ("" if cond or not detail else f": {detail}"))
    fails += 0 if cond else 1


def name(shape):
    B, Hq, Hkv, N, M, d, causal, dt = shape
    return f"B={B} Hq={Hq} Hkv={Hkv} N={N} M={M} d={d}{' causal' if causal else ''} {str(dt)[6:]}"


def inputs(shape, seed):
    B, Hq, Hkv, N, M, d, causal, dt = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(B, Hq, N, d, device="cuda", generator=g).to(dt)
    k = torch.randn(B, Hkv, M, d, device="cuda", generator=g).to(dt)
    v = torch.randn(B, Hkv, M, d, device="cuda", generator=g).to(dt)
    do = torch.randn(B, Hq, N, d, device="cuda", generator=g).to(dt)
    return q, k, v, do


def reference(q, k, v, causal):
    """O in float64 and the float64 leaves it was computed from (for their gradients)."""
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    G = q.shape[1] // k.shape[1]
    N, M = q.shape[2], k.shape[2]
    i = torch.arange(N, device="cuda")[:, None]
    j = torch.arange(M, device="cuda")[None, :]
    vis = (j <= i + (M - N)) if causal else torch.ones(N, M, dtype=torch.bool, device="cuda")
    sees = vis.any(-1)
    mask = vis | ~sees[:, None]
    o = F.scaled_dot_product_attention(qd, kd.repeat_interleave(G, 1), vd.repeat_interleave(G, 1), attn_mask=mask)
    return o * sees[:, None].double(), (qd, kd, vd)


def rel(x, ref):
    n = ref.norm().item()
    e = (x.double() - ref).norm().item()
    return e / n if n > 0 else e


def forward_rung(rung):
    """Every step of a forward rung on every shape."""
    for vid, *_ in _lib.variants(rung):
        ran = 0
        for si, shape in enumerate(SHAPES):
            q, k, v, _ = inputs(shape, 100 + si)
            try:
                o = ladder.attention(q, k, v, causal=shape[6], rung=rung, variant=vid)
            except ladder.Refused as e:
                print(f"   {vid} refuses {name(shape)}: {e}")
                continue
            torch.cuda.synchronize()
            ref, _ = reference(q, k, v, shape[6])
            err = rel(o, ref)
            check(torch.isfinite(o).all().item() and err <= TOL[shape[7]],
                  f"{vid} forward {name(shape)}: rel-L2 {err:.2e}", f"tolerance {TOL[shape[7]]:.0e}")
            ran += 1
            taken[si] += 1
        if ran == 0:
            print(f"   {vid} refuses every shape here")


def backward_steps():
    """Every step of rung 08 as the gradient of rung 07's forward."""
    for vid, *_ in _lib.variants("08"):
        for si, shape in enumerate(SHAPES):
            q, k, v, do = inputs(shape, 200 + si)
            q, k, v = (t.requires_grad_() for t in (q, k, v))
            try:
                o = ladder.attention(q, k, v, causal=shape[6], rung="07", backward_variant=vid)
                o.backward(do)
            except ladder.Refused as e:
                print(f"   {vid} (under 07) refuses {name(shape)}: {e}")
                continue
            torch.cuda.synchronize()
            ref, leaves = reference(q, k, v, shape[6])
            ref.backward(do.double())
            errs = [rel(x.grad, r.grad) for x, r in zip((q, k, v), leaves)]
            fin = all(torch.isfinite(x.grad).all().item() for x in (q, k, v))
            check(fin and max(errs) <= TOL[shape[7]],
                  f"{vid} gradients {name(shape)}: rel-L2 dQ {errs[0]:.2e} dK {errs[1]:.2e} dV {errs[2]:.2e}",
                  f"tolerance {TOL[shape[7]]:.0e}")


print(f"   device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
for r in ["00", "01", "02", "03", "04", "05", "06", "07"]:
    forward_rung(r)
for si, shape in enumerate(SHAPES):
    check(taken[si] > 0, f"{name(shape)}: run by {taken[si]} forward steps", "every step refused it")
backward_steps()
sys.exit(1 if fails else 0)
