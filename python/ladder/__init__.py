"""The FlashAttention ladder from Python: any rung as an attention op.

    import ladder
    o = ladder.attention(q, k, v, causal=True)     # rung 07's forward; its gradient is rung 08's

The rungs' libraries (build/lib/libladder_NN.so, made by make; or the folder $LADDER_LIB names) are
loaded with ctypes: nothing is compiled against PyTorch, which is imported only by attention().
A shape a rung does not take raises ladder.Refused (a ValueError) with the rung's own reason."""
from ._lib import Refused, Shape, lib_dir, passes, probe, variants, workspace
from .attention import attention

__all__ = ["attention", "Refused", "Shape", "lib_dir", "passes", "probe", "variants", "workspace"]
