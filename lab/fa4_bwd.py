"""One FlashAttention-4 backward between cudaProfilerStart and cudaProfilerStop, for Nsight Compute
(ncu --profile-from-start off): lab/fa4_profile.sh and lab/bwd_counters.sh run it.

    python3 lab/fa4_bwd.py B Hq Hkv N M d causal

torch.autograd.grad of FA4's O in its [B, N, H, d] layout, as tools/peers.py times it, after three
warm-up calls (its kernels are compiled on the first); only the fourth is profiled."""
import sys
import torch
from flash_attn.cute import flash_attn_func

B, Hq, Hkv, N, M, d, c = map(int, sys.argv[1:8])
g = torch.Generator(device="cuda").manual_seed(0)
q = torch.randn(B, N, Hq, d, device="cuda", generator=g).half().requires_grad_()
k = torch.randn(B, M, Hkv, d, device="cuda", generator=g).half().requires_grad_()
v = torch.randn(B, M, Hkv, d, device="cuda", generator=g).half().requires_grad_()
do = torch.randn(B, N, Hq, d, device="cuda", generator=g).half()
r = flash_attn_func(q, k, v, causal=bool(c))
o = r[0] if isinstance(r, tuple) else r
for _ in range(3):
    torch.autograd.grad(o, (q, k, v), grad_outputs=do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.profiler.start()
torch.autograd.grad(o, (q, k, v), grad_outputs=do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
