"""One forward of PyTorch's scaled_dot_product_attention on one backend (cudnn or flash) between
cudaProfilerStart and cudaProfilerStop, for Nsight Compute (ncu --profile-from-start off):
lab/fwd_source.sh runs it beside rung 07's step on the same shape (issue 38: what cuDNN does at
N = 512 that 07f does not).

    python3 lab/sdpa_one.py cudnn|flash B H N d causal [f16|bf16]

Q, K and V [B, H, N, d] from N(0, 1), as tools/peers.py draws them; three warm-up calls, then one
under the profiler."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[sys.argv[1]]
B, H, N, d, c = map(int, sys.argv[2:7])
dt = torch.bfloat16 if len(sys.argv) > 7 and sys.argv[7] == "bf16" else torch.float16
g = torch.Generator(device="cuda").manual_seed(1234)
q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
with sdpa_kernel(be):
    for _ in range(3):
        F.scaled_dot_product_attention(q, k, v, is_causal=bool(c))
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    F.scaled_dot_product_attention(q, k, v, is_causal=bool(c))
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
