"""The rungs' shared libraries through ctypes: build/lib/libladder_NN.so, one per rung, whose C API
is common/ladder.h. Plain Python: nothing here needs PyTorch, so that the refusals and the device
check can be asked (and tested) on a machine without it."""
import ctypes
import os
import threading

F16, BF16, E4M3 = 0, 1, 2        # common/ladder.h's LADDER_F16, LADDER_BF16, LADDER_E4M3


class Refused(ValueError):
    """A shape, dtype, variant or argument the rung does not take; the message is its reason."""


class Shape(ctypes.Structure):
    """common/ladder.h's ladder_shape."""
    _fields_ = [(f, ctypes.c_int) for f in ("B", "Hq", "Hkv", "N", "M", "d", "dtype", "causal")] + \
               [("scale", ctypes.c_float)]


def lib_dir():
    """Where the libraries are: $LADDER_LIB, else build/lib of the repository this package sits in."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("LADDER_LIB") or os.path.join(here, "..", "..", "build", "lib")


def rung_name(rung):
    """7, "7" or "07" -> "07"."""
    s = str(rung)
    if not s.isdigit() or len(s) > 2:
        raise Refused(f"rung {rung!r}: expected a rung number such as 7 or \"07\"")
    return s.zfill(2)


_loaded = {}
_P, _I, _S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
_WHY = [ctypes.c_char_p, _S]


def load(rung):
    """The library of one rung, loaded once, its functions typed as common/ladder.h declares them."""
    name = rung_name(rung)
    if name in _loaded:
        return _loaded[name]
    path = os.path.join(lib_dir(), f"libladder_{name}.so")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{os.path.normpath(path)}: no such library (run make; or set LADDER_LIB "
                                f"to the folder that holds libladder_{name}.so)")
    lib = ctypes.CDLL(path)      # RTLD_LOCAL: each rung's symbols stay its own
    shape = ctypes.POINTER(Shape)
    lib.ladder_workspace.argtypes = [shape, ctypes.c_char_p, ctypes.POINTER(_S)] + _WHY
    lib.ladder_forward.argtypes = [shape] + [_P] * 5 + [ctypes.c_char_p, _P, _S, _P] + _WHY
    lib.ladder_backward.argtypes = [shape] + [_P] * 9 + [ctypes.c_char_p, _P, _S, _P] + _WHY
    lib.ladder_variants.argtypes = [ctypes.c_char_p, _S]
    lib.ladder_probe.argtypes = [ctypes.c_char_p, _S]
    lib.ladder_pass.restype = ctypes.c_char_p
    for f in (lib.ladder_workspace, lib.ladder_forward, lib.ladder_backward, lib.ladder_variants, lib.ladder_probe):
        f.restype = _I
    _loaded[name] = lib
    return lib


# why[] made once per thread: a new one each call costs about a microsecond, and one shared by all
# threads could give a thread another's reason
_tls = threading.local()


def call(fn, *args):
    """fn(*args, why, len): 0 -> None; 1 -> Refused(why); -1 -> RuntimeError(why) (a CUDA error, no device)."""
    why = getattr(_tls, "why", None)
    if why is None:
        why = _tls.why = ctypes.create_string_buffer(1024)
    rc = fn(*args, why, len(why))
    if rc == 0:
        return
    msg = why.value.decode(errors="replace")
    if rc == 1:
        raise Refused(msg)
    raise RuntimeError(msg)


def _text(fn):
    buf = ctypes.create_string_buffer(1 << 16)
    fn(buf, len(buf))
    return buf.value.decode(errors="replace")


def variants(rung):
    """[(id, name, summary), ...] in the binary's --list order; the rung's own is the last 16-bit one."""
    return [tuple(line.split("\t")) for line in _text(load(rung).ladder_variants).splitlines()]


def passes(rung):
    """"forward" or "backward": which of ladder_forward and ladder_backward the rung runs."""
    return load(rung).ladder_pass().decode()


def probe(rung="00"):
    """A sentence: the CUDA device the libraries would run on, or why there is none."""
    return _text(load(rung).ladder_probe)


def workspace(rung, shape, variant=None):
    """The device bytes a call needs beyond its tensors; Refused if the rung refuses the shape
    (asked with no device too: the rung answers as on an H100, then RuntimeError says there is none)."""
    n = _S(0)
    call(load(rung).ladder_workspace, ctypes.byref(shape), _vid(variant), ctypes.byref(n))
    return n.value


def _vid(variant):
    return None if variant is None else str(variant).encode()


def forward(rung, shape, q, k, v, o, lse, variant, ws, ws_bytes, stream):
    """ladder_forward on device addresses (ints); raises as call() does."""
    call(load(rung).ladder_forward, ctypes.byref(shape), q, k, v, o, lse, _vid(variant), ws, ws_bytes, stream)


def backward(rung, shape, q, k, v, o, lse, do, dq, dk, dv, variant, ws, ws_bytes, stream):
    """ladder_backward on device addresses (ints); raises as call() does."""
    call(load(rung).ladder_backward, ctypes.byref(shape), q, k, v, o, lse, do, dq, dk, dv, _vid(variant), ws,
         ws_bytes, stream)
