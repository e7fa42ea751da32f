"""ladder.attention: a rung's forward and rung 08's backward as one torch.autograd.Function, on the
tensors of torch.nn.functional.scaled_dot_product_attention ([B, H, N, d], GQA by head count) and
on PyTorch's current stream. PyTorch is imported here, when attention() is first called, so that
`import ladder` works without it."""
import math

from . import _lib
from ._lib import Refused

_Function = None     # the autograd.Function, made once torch is imported


def _torch():
    """torch, or one line saying what is missing."""
    try:
        import torch
    except ImportError:
        raise ImportError("ladder.attention needs PyTorch with CUDA: torch is not installed "
                          "(pip install torch); ladder.probe() and ladder.variants() work without it") from None
    if not torch.cuda.is_available():
        raise RuntimeError(f"ladder.attention needs a CUDA device: torch {torch.__version__} sees none "
                           f"({_lib.probe()})")
    return torch


def _shape(torch, q, k, v, causal, scale):
    """The ladder_shape of q [B,Hq,N,d], k and v [B,Hkv,M,d]; Refused for what no rung takes."""
    dtypes = {torch.float16: _lib.F16, torch.bfloat16: _lib.BF16}
    if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise Refused(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: expected q [B,Hq,N,d], "
                      f"k and v [B,Hkv,M,d]")
    if q.dtype not in dtypes or k.dtype != q.dtype or v.dtype != q.dtype:
        raise Refused(f"dtypes {q.dtype}, {k.dtype}, {v.dtype}: expected float16 or bfloat16, all three the same")
    if not (q.is_cuda and k.device == q.device and v.device == q.device):
        raise Refused(f"devices {q.device}, {k.device}, {v.device}: expected one CUDA device")
    if scale is not None and not (1.1754943508222875e-38 <= float(scale) <= 3.4028234663852886e38):
        raise Refused(f"scale {scale}: expected a positive number in float's normal range")
    B, Hq, N, d = q.shape
    # scale None: the library's 1/sqrt(d) (ladder_shape's scale 0); a given scale is passed as is
    return _lib.Shape(B, Hq, k.shape[1], N, k.shape[2], d, dtypes[q.dtype], int(bool(causal)),
                      0.0 if scale is None else float(scale))


def _workspace(torch, rung, shape, variant, device):
    """The call's workspace from PyTorch's allocator, ordered on its current stream, freed when the
    call's kernels are done with it (the allocator's own rule): (tensor or None, address, bytes)."""
    n = _lib.workspace(rung, shape, variant)
    if n == 0:
        return None, None, 0
    ws = torch.empty(n, dtype=torch.uint8, device=device)
    return ws, ws.data_ptr(), n


def _make_function(torch):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, rung, variant, bwd_variant):
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            shape = _shape(torch, q, k, v, causal, scale)
            with torch.cuda.device(q.device):
                ws, wp, wn = _workspace(torch, rung, shape, variant, q.device)
                o = torch.empty_like(q)
                lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
                _lib.forward(rung, shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                             variant, wp, wn, torch.cuda.current_stream().cuda_stream)
            # rung 08 recomputes P from Q, K and the forward's LSE, and reads O for D = rowsum(dO * O)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.shape, ctx.bwd_variant = shape, bwd_variant
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            do = do.contiguous()
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            with torch.cuda.device(q.device):
                ws, wp, wn = _workspace(torch, "08", ctx.shape, ctx.bwd_variant, q.device)
                _lib.backward("08", ctx.shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                              lse.data_ptr(), do.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                              ctx.bwd_variant, wp, wn, torch.cuda.current_stream().cuda_stream)
            return dq, dk, dv, None, None, None, None, None

    return Attention


def attention(q, k, v, causal=False, scale=None, rung="07", variant=None, backward_variant=None):
    """softmax(scale * q k^T + mask) v by rung `rung` (variant: one of ladder.variants(rung)'s ids,
    None for the rung's own), q [B,Hq,N,d], k and v [B,Hkv,M,d] float16 or bfloat16 on one CUDA
    device; causal aligned bottom-right; scale None: 1/sqrt(d). Its gradient is rung 08's
    (backward_variant: one of ladder.variants("08")'s, None for 08's own). Raises ladder.Refused
    with the rung's reason for a shape it does not take, before any work on the GPU."""
    global _Function
    torch = _torch()
    if _Function is None:
        _Function = _make_function(torch)
    return _Function.apply(q, k, v, causal, scale, _lib.rung_name(rung), variant, backward_variant)
