"""ladder.attention: a rung's forward and rung 08's backward as one torch.autograd.Function, on the
tensors of torch.nn.functional.scaled_dot_product_attention ([B, H, N, d], GQA by head count) and
on PyTorch's current stream. PyTorch is imported here, when attention() is first called, so that
`import ladder` works without it."""
import contextlib

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
    """The ladder_shape fields of q [B,Hq,N,d], k and v [B,Hkv,M,d], a tuple (_plan's key); Refused
    for what no rung takes. Each tensor attribute is read once: a read costs tenths of a microsecond."""
    qs, ks, dt = q.shape, k.shape, q.dtype
    if len(qs) != 4 or len(ks) != 4 or v.shape != ks or qs[0] != ks[0] or qs[3] != ks[3]:
        raise Refused(f"shapes q {tuple(qs)}, k {tuple(ks)}, v {tuple(v.shape)}: expected q [B,Hq,N,d], "
                      f"k and v [B,Hkv,M,d]")
    dtype = _lib.F16 if dt == torch.float16 else _lib.BF16 if dt == torch.bfloat16 else None
    if dtype is None or k.dtype != dt or v.dtype != dt:
        raise Refused(f"dtypes {q.dtype}, {k.dtype}, {v.dtype}: expected float16 or bfloat16, all three the same")
    dev = q.device
    if not (q.is_cuda and k.device == dev and v.device == dev):
        raise Refused(f"devices {q.device}, {k.device}, {v.device}: expected one CUDA device")
    if scale is not None and not (1.1754943508222875e-38 <= float(scale) <= 3.4028234663852886e38):
        raise Refused(f"scale {scale}: expected a positive number in float's normal range")
    B, Hq, N, d = qs
    # scale None: the library's 1/sqrt(d) (ladder_shape's scale 0); a given scale is passed as is
    return (B, Hq, ks[1], N, ks[2], d, dtype, int(bool(causal)), 0.0 if scale is None else float(scale))


# (rung, variant, device, shape fields) -> (ladder_shape, workspace bytes), for calls the rung took:
# ladder_workspace through ctypes reads the device's attributes and checks the shape every time. A
# refusal is not kept, so it is raised again on every call; ladder_forward and ladder_backward check
# everything again themselves anyway.
_plans = {}


def _plan(rung, fields, variant, index):
    """The call's ladder_shape and workspace bytes, asked of the rung (on the current device, index)
    the first time; Refused as ladder_workspace refuses."""
    key = (rung, None if variant is None else str(variant), index, fields)
    p = _plans.get(key)
    if p is None:
        shape = _lib.Shape(*fields)
        p = (shape, _lib.workspace(rung, shape, variant))
        if len(_plans) >= 4096:      # shapes that keep changing (a growing N): keep the dict small
            _plans.clear()
        _plans[key] = p
    return p


_HERE = contextlib.nullcontext()


def _on(torch, index):
    """torch.cuda.device(index), or nothing when it is the current device already (the usual case;
    an int, not a torch.device, since the latter's index lookup costs microseconds in Python)."""
    return _HERE if index == torch.cuda.current_device() else torch.cuda.device(index)


def _workspace(torch, rung, fields, variant, device):
    """The call's ladder_shape and workspace: the workspace from PyTorch's allocator, ordered on its
    current stream, freed when the call's kernels are done with it (the allocator's own rule):
    (shape, tensor or None, address, bytes)."""
    shape, n = _plan(rung, fields, variant, device.index)
    if n == 0:
        return shape, None, None, 0
    ws = torch.empty(n, dtype=torch.uint8, device=device)
    return shape, ws, ws.data_ptr(), n


def _make_function(torch):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, rung, variant, bwd_variant):
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            fields = _shape(torch, q, k, v, causal, scale)
            dev = q.device
            with _on(torch, dev.index):
                shape, ws, wp, wn = _workspace(torch, rung, fields, variant, dev)
                o = torch.empty_like(q)
                lse = torch.empty(q.shape[:3], dtype=torch.float32, device=dev)
                _lib.forward(rung, shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                             variant, wp, wn, torch.cuda.current_stream(dev.index).cuda_stream)
            # rung 08 recomputes P from Q, K and the forward's LSE, and reads O for D = rowsum(dO * O)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.fields, ctx.bwd_variant = fields, bwd_variant
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            do = do.contiguous()
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            dev = q.device
            with _on(torch, dev.index):
                shape, ws, wp, wn = _workspace(torch, "08", ctx.fields, ctx.bwd_variant, dev)
                _lib.backward("08", shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                              lse.data_ptr(), do.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                              ctx.bwd_variant, wp, wn, torch.cuda.current_stream(dev.index).cuda_stream)
            return dq, dk, dv, None, None, None, None, None

    return Attention


def attention(q, k, v, causal=False, scale=None, rung="07", variant=None, backward_variant=None):
    """softmax(scale * q k^T + mask) v by rung `rung` (variant: one of ladder.variants(rung)'s ids,
    None for the rung's own), q [B,Hq,N,d], k and v [B,Hkv,M,d] float16 or bfloat16 on one CUDA
    device; causal aligned bottom-right; scale None: 1/sqrt(d). Its gradient is rung 08's
    (backward_variant: one of ladder.variants("08")'s, None for 08's own). Raises ladder.Refused
    with the rung's reason for a shape it does not take, before any work on the GPU."""
    global _Function
    if _Function is None:      # torch and its device asked once: is_available() costs microseconds a call
        _Function = _make_function(_torch())
    return _Function.apply(q, k, v, causal, scale, _lib.rung_name(rung), variant, backward_variant)
