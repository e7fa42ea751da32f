"""One FlashAttention-4 forward between cudaProfilerStart and cudaProfilerStop, for Nsight Compute
(ncu --profile-from-start off): lab/fwd_source.sh runs it beside rung 07's step with FWD_PEER=fa4
(issue 38: what FA4's forward does at d = 64 that 07f does not).

    python3 lab/fa4_fwd.py B H N d causal

Q, K and V in FA4's [B, N, H, d] layout from N(0, 1), float16, made before anything is profiled;
three warm-up calls (its kernel is compiled on the first), then one under the profiler. Its causal
mask is bottom-right, as the course's (the same as top-left here: N = M)."""
import sys

import torch
from flash_attn.cute import flash_attn_func

B, H, N, d, c = map(int, sys.argv[1:6])
g = torch.Generator(device="cuda").manual_seed(1234)
q, k, v = (torch.randn(B, N, H, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
for _ in range(3):
    flash_attn_func(q, k, v, causal=bool(c))
torch.cuda.synchronize()
torch.cuda.profiler.start()
flash_attn_func(q, k, v, causal=bool(c))
torch.cuda.synchronize()
torch.cuda.profiler.stop()
