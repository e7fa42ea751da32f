#!/usr/bin/env python3
"""Optional peer benchmark: PyTorch scaled_dot_product_attention with the FLASH_ATTENTION and
CUDNN_ATTENTION backends, on the same sweep shapes, timed the same way as the rungs (CUDA events
around the call only, 3 warm-ups, >= 20 timed runs each after an L2 flush, median/min/max), and
written as rows of the same CSV (rung names torch-flash, torch-cudnn). Where FlashAttention-4
(flash-attn-4: flash_attn.cute) is importable too, its forward is timed the same way (rung name
fa4; Q, K, V in its [B, N, H, d] layout, made outside the timed region; its causal mask is
bottom-right, as the course's). Nothing here installs it (pip install flash-attn-4 where a package
registry can be reached); without it there are no fa4 rows.

Where the cuDNN frontend's Python API is importable (the nvidia-cudnn-frontend wheel, imported after
torch so that it binds the libcudnn torch loaded), the float8 e4m3 lines (rung 07's FP8 step) get
cuDNN's own FP8 attention, rung name cudnn-fp8: Q, K and V drawn in float16 as for the other peers,
quantized per tensor to e4m3 outside the timed region (scale 448 / amax, its inverse the descale),
the graph built once per line (sdpa_fp8: S and O scales 1, as FlashAttention-3's benchmark of it),
and only graph.execute timed. Its O is e4m3 and its causal mask top-left, so causal lines run only
where N = M; d a multiple of 16. Its O is checked as the rungs' FP8 step is, against float32 math
on the float16 inputs, at the course's e4m3 tolerance (common/harness.h: CHECK_E4M3_TOLERANCE).
Bytes count 2 an element as the rungs' e4m3 rows do (their inputs are float16, quantized in the step).

Runs only where python3 has PyTorch with CUDA (the GPU machine); nothing in the course needs it.
PyTorch aligns causal masks top-left while the course aligns them bottom-right, so causal shapes
are compared only where N = M (there the two agree).

GQA: SDPA's enable_gqa=True is used where the backend accepts it. For decode (N = 1, not causal)
a backend that refuses it gets the equivalent packed call -- the Hq/Hkv query heads of a KV head
as Hq/Hkv query rows of one head -- which is how a careful user would call it; never a copy of
K/V. What was used is recorded in the row's extra field.

A sweep file is checked by a rung binary before anything else (build/bin/00_baseline, or --bin:
BINARY --check-sweep FILE, the rungs' own parser, no GPU); a line it refuses stops here (exit 2),
so the peers and the rungs read the same lines. Of a line it accepts, the peers read these keys
(common/cli.c): dtype=f16|bf16 sets the storage type (the check against float32 math then allows
2e-3 or 1e-2, as the course does); dtype=e4m3 (rung 07's FP8 step) is read and not run, with an
"unsupported: ..." row saying why; inputs=outlier scales Q and K by 10, inputs=sparse-outlier draws
one entry in 1,000 of Q, K and V ten times larger (as common/inputs.c); model=NAME is carried to
the row's extra field (model=NAME;). SDPA has no paged KV cache and one KV length for the whole
batch, so a line with page=P (other than 0) or with seqlens= / dist= is not run: it gets an
"unsupported: ..." row saying why, never a number measured on another layout. --list prints what
each line would get, without PyTorch.

--warm-ms MS (0 to 60000; default 0: off) keeps the warm-ups going until MS ms of calls have run
(at most 1000 calls), as the rungs' --warm-ms, so each row is timed at the GPU's sustained clock
(under its power cap) whatever ran before; the row's extra field then says warm_ms=MS.

Every refusal (a bad argument, a sweep file that is missing, not a regular file or refused by the
check, a --csv that cannot be written, PyTorch not installed) is one line and exit 2, before any
GPU work.

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
import re
import stat
import subprocess
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BIN = "build/bin/00_baseline"


def visible_pairs(B, N, M, causal):
    if not causal:
        return float(B) * N * M
    total = 0.0
    for i in range(N):
        e = i + (M - N) + 1
        total += min(max(e, 0), M)
    return B * total


def shown(x, cap=1000):
    """x for a one-line message: control bytes, invisible characters (a byte-order mark, zero-width
    spaces) and bytes that are not UTF-8 escaped, cut near cap characters (as common/cli.c's)."""
    if isinstance(x, bytes):
        x = x.decode("utf-8", "surrogateescape")
    out = []
    n = 0
    for ch in x:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:                 # a byte that is not UTF-8 (surrogateescape)
            e = "\\x%02x" % (o - 0xDC00)
        elif o < 0x20 or 0x7F <= o < 0xA0 or unicodedata.category(ch) in ("Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            e = "\\x%02x" % o if o < 0x100 else "\\u%04x" % o if o < 0x10000 else "\\U%08x" % o
        else:
            e = ch
        if n + len(e) > cap:
            out.append("...")
            break
        out.append(e)
        n += len(e)
    return "".join(out)


def die(msg):
    print(shown(msg), file=sys.stderr)
    sys.exit(2)


def regular_file(flag, path):
    """A path given to flag names a regular file: os.stat first, so that a FIFO or a device is refused
    at once, never opened (opening a FIFO blocks until someone writes to it)."""
    try:
        st = os.stat(path)
    except OSError as e:
        die("error: %s %s: cannot read (%s)" % (flag, path, e.strerror or e))
    if stat.S_ISDIR(st.st_mode):
        die("error: %s %s: a directory; give a sweep file (such as sweeps/decode.txt)" % (flag, path))
    if not stat.S_ISREG(st.st_mode):
        die("error: %s %s: not a regular file (a FIFO, a device or a socket); give a sweep file" % (flag, path))
    if not os.access(path, os.R_OK):
        die("error: %s %s: cannot read (permission denied)" % (flag, path))


def check_csv(path):
    """--csv's place, before any work: not a directory, not a FIFO or a device, in a directory that
    exists and can be written."""
    where = os.path.dirname(path) or "."
    if os.path.isdir(path):
        die("error: --csv %s: a directory; give a file name (rows are appended to it)" % path)
    if os.path.lexists(path):
        try:
            st = os.stat(path)
        except OSError as e:
            die("error: --csv %s: cannot write (%s)" % (path, e.strerror or e))
        if not stat.S_ISREG(st.st_mode):
            die("error: --csv %s: not a regular file; give a file name (rows are appended to it)" % path)
        if not os.access(path, os.W_OK):
            die("error: --csv %s: cannot write (permission denied)" % path)
    elif not os.path.isdir(where):
        die("error: --csv %s: no directory %s" % (path, where))
    elif not os.access(where, os.W_OK | os.X_OK):
        die("error: --csv %s: cannot write in %s (permission denied)" % (path, where))


def check_sweep(binary, path):
    """The rungs' verdict on each line of the sweep file (BINARY --check-sweep FILE: 'ok LINE' or
    'bad LINE: REASON' per line that holds a shape; exit 0 when every line is ok, 2 otherwise).
    Returns the set of lines it accepted; a refused line, or no verdict, ends here (exit 2)."""
    shown_bin = binary if binary != os.path.join(ROOT, DEFAULT_BIN) else DEFAULT_BIN
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        if shown_bin == DEFAULT_BIN:
            die("error: %s not found: run make first (tools/peers.py asks a rung binary to check the sweep "
                "file; --bin BINARY names another)" % DEFAULT_BIN)
        die("error: --bin %s: not an executable file" % binary)
    try:
        p = subprocess.run([binary, "--check-sweep", "./" + path if path.startswith("-") else path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
    except subprocess.TimeoutExpired:
        die("error: %s --check-sweep %s: no answer in 120 s" % (shown_bin, path))
    except OSError as e:
        die("error: %s --check-sweep %s: cannot run (%s)" % (shown_bin, path, e.strerror or e))
    ok, bad, other = set(), [], []
    for line in p.stdout.decode("utf-8", "surrogateescape").split("\n"):
        m = re.match(r"(ok|bad) ([0-9]+)(?:: (.*))?$", line)
        if m and (m.group(1) == "ok") == (m.group(3) is None):
            if m.group(1) == "ok":
                ok.add(int(m.group(2)))
            else:
                bad.append((int(m.group(2)), m.group(3)))
        elif line.strip():
            other.append(line)
    if bad:
        for lineno, why in bad[:20]:
            print(shown("error: %s:%d: %s" % (path, lineno, why)), file=sys.stderr)
        if len(bad) > 20:
            print(shown("error: %s: %d more lines refused" % (path, len(bad) - 20)), file=sys.stderr)
        sys.exit(2)
    if p.returncode != 0:
        first = re.sub(r"^error: ", "", other[0]) if other else "exited %d and said nothing" % p.returncode
        hint = "; run make (a build older than --check-sweep does not know it)" if "check-sweep" in first else ""
        die("error: %s --check-sweep %s: %s%s" % (shown_bin, path, first, hint))
    return ok


def read_sweep(path, accepted):
    """The shapes of a sweep file that the rungs accepted (check_sweep): (B, Hq, Hkv, N, M, d,
    causal) and the keys the peers read. Split as common/cli.c splits a line (bytes, '#' starts a
    comment, fields apart by spaces, tabs or CRs); a line the two read differently stops here."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                die("error: --sweep %s: not a regular file" % path)
            data = f.read()
    except OSError as e:
        die("error: --sweep %s: cannot read (%s)" % (path, e.strerror or e))
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()

    def differ(lineno, why):
        die("error: %s:%d: the rungs' check and tools/peers.py read this line differently (%s)" % (path, lineno, why))

    cases = []
    for lineno, raw in enumerate(lines, 1):
        tok = [t.decode("latin-1") for t in re.split(rb"[ \t\r]+", raw.split(b"#")[0]) if t]
        if not tok and lineno not in accepted:
            continue
        if lineno not in accepted:
            differ(lineno, "the check gave it no verdict")
        if len(tok) < 7:
            differ(lineno, "fewer than seven fields")
        c = {"dtype": "f16", "page": 0, "model": "", "inputs": "normal", "varlen": ""}
        try:
            c["shape"] = tuple(int(x) for x in tok[:7])
            for kv in tok[7:]:
                k, _, v = kv.partition("=")
                if k == "dtype":
                    c["dtype"] = v
                elif k == "page":
                    c["page"] = int(v)
                elif k in ("model", "inputs"):
                    c[k] = v
                elif k in ("seqlens", "dist"):
                    c["varlen"] = k
                elif k != "expect":               # expect= is read by the test runner, not here
                    raise ValueError(kv)
        except ValueError as e:
            differ(lineno, "'%s'" % e)
        cases.append(c)
    if accepted - set(range(1, len(lines) + 1)):
        differ(min(accepted - set(range(1, len(lines) + 1))), "the file has no such line")
    if not cases:
        die("error: --sweep %s: no shapes in it; a line is B Hq Hkv N M d causal [key=value ...]" % path)
    return cases


E4M3_TOLERANCE = 0.12   # common/harness.h: CHECK_E4M3_TOLERANCE


def not_run(c, fp8=False):
    """Why the peers do not run this line (the row's status), or None; fp8: for cudnn-fp8, which
    runs the e4m3 lines alone."""
    B, Hq, Hkv, N, M, d, causal = c["shape"]
    if c["dtype"] == "e4m3" and not fp8:
        return ("unsupported: float8 e4m3: SDPA and FlashAttention-4 run float16 or bfloat16 here; "
                "cuDNN's FP8 attention (cudnn-fp8, where its frontend is installed) runs this line's "
                "forward (the float16 line of the shape has their number)")
    if fp8 and d % 16:
        return "unsupported: cuDNN's FP8 attention takes head dims that are multiples of 16 (d = %d)" % d
    if c["page"]:
        return ("unsupported: a paged KV cache (page=%d): SDPA reads K and V contiguous; not run "
                "(a contiguous line of the same shape has the peers' number)" % c["page"])
    if c["inputs"].startswith("nonfinite"):
        return ("unsupported: inputs=%s is the rungs' check that NaN and Inf propagate; the peers are "
                "timed on numbers; not run" % c["inputs"])
    if c["varlen"]:
        return "unsupported: per-request KV lengths (%s=): SDPA takes one KV length for the batch; not run" % c["varlen"]
    if causal and N != M:
        return "unsupported: PyTorch aligns causal masks top-left; compared only at N = M"
    return None


def label(c):
    """What tells a row's sweep line apart in the extra field, as the rungs write it (report_label)."""
    return ("page=%d;" % c["page"] if c["page"] else "") + ("model=%s;" % c["model"] if c["model"] else "")


class Parser(argparse.ArgumentParser):
    """argparse, with its errors in one line (its own print the usage first)."""

    def error(self, message):
        die("error: %s (tools/peers.py --help)" % message)


def import_torch():
    """torch, F, SDPBackend, sdpa_kernel; without them one line, exit 2 (the tour and make ladder
    ask python3 for torch first and leave the peers out where it is missing)."""
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ModuleNotFoundError as e:
        if e.name == "torch":
            die("peers: PyTorch is not installed (python3 cannot import torch): the peers are skipped")
        die("peers: PyTorch does not import (%s): the peers are skipped" % str(e).split("\n")[0])
    except Exception as e:                    # a broken install, or one older than torch.nn.attention
        die("peers: PyTorch does not import (%s: %s): the peers are skipped" % (type(e).__name__, str(e).split("\n")[0]))
    return torch, F, SDPBackend, sdpa_kernel


def cudnn_fp8_call(torch, cudnn, x16, causal):
    """cuDNN's FP8 attention on float16 Q, K, V ([B, H, N, d]), quantized per tensor to e4m3 here
    (scale 448 / amax, its inverse the descale): the graph built once, and (fn, o8), where fn runs
    it into o8 (e4m3, [B, Hq, N, d]). Raises what cuDNN raises where it refuses the graph."""
    B, Hq, N, d = x16[0].shape
    dev = x16[0].device
    x8, descale = [], []
    for x in x16:
        amax = x.abs().max().float().clamp_min(1e-6)
        x8.append((x.float() * (448.0 / amax)).to(torch.float8_e4m3fn))
        descale.append((amax / 448.0).reshape(1, 1, 1, 1))
    ones = torch.ones(1, 1, 1, 1, device=dev, dtype=torch.float32)
    o8 = torch.empty(B, Hq, N, d, device=dev, dtype=torch.float8_e4m3fn)
    lse = torch.empty(B, Hq, N, 1, device=dev, dtype=torch.float32)
    amax_s = torch.empty(1, 1, 1, 1, device=dev, dtype=torch.float32)
    amax_o = torch.empty(1, 1, 1, 1, device=dev, dtype=torch.float32)
    handle = cudnn.create_handle()
    if hasattr(cudnn, "set_stream"):      # on PyTorch's stream, where the timing events are
        cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FP8_E4M3, intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    ins = [g.tensor_like(t) for t in x8 + descale + [ones, ones, ones]]
    o_t, lse_t, amax_s_t, amax_o_t = g.sdpa_fp8(*ins, generate_stats=True, attn_scale=1.0 / math.sqrt(d),
                                                use_causal_mask=bool(causal), name="cudnn_fp8")
    o_t.set_output(True).set_dim(list(o8.shape)).set_stride(list(o8.stride())).set_data_type(cudnn.data_type.FP8_E4M3)
    lse_t.set_output(True).set_dim(list(lse.shape)).set_stride(list(lse.stride())).set_data_type(cudnn.data_type.FLOAT)
    for t in (amax_s_t, amax_o_t):
        t.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(cudnn.data_type.FLOAT)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    ws = torch.empty(max(1, g.get_workspace_size()), device=dev, dtype=torch.uint8)
    pack = dict(zip(ins, x8 + descale + [ones, ones, ones]))
    pack.update({o_t: o8, lse_t: lse, amax_s_t: amax_s, amax_o_t: amax_o})

    def fn():
        g.execute(pack, ws, handle=handle)
    return fn, o8


def run_cudnn_fp8(torch, cudnn, dev, case, row, time_call, flush):
    """cuDNN's FP8 attention (the frontend's sdpa_fp8) on one e4m3 line: its row, or an
    "unsupported: ..." row with the first line of cuDNN's refusal."""
    B, Hq, Hkv, N, M, d, causal = case["shape"]
    gen = torch.Generator(device=dev).manual_seed(1234)
    x16 = [torch.randn(B, h, n, d, device=dev, dtype=torch.float16, generator=gen)
           for h, n in ((Hq, N), (Hkv, M), (Hkv, M))]
    if case["inputs"] == "outlier":
        x16[0].mul_(10.0)
        x16[1].mul_(10.0)
    elif case["inputs"] == "sparse-outlier":
        for x in x16:
            x[torch.rand(x.shape, device=dev, generator=gen) < 1e-3] *= 10.0
    # the float32 reference of the first 128 query rows of (b, h) = (0, 0), from the float16 inputs
    q, k, v = x16
    rows = min(N, 128)
    sc = (q[0, 0, :rows].float() @ k[0, 0].float().T) / math.sqrt(d)
    if causal:
        i = torch.arange(rows, device=dev)[:, None]
        j = torch.arange(M, device=dev)[None, :]
        sc = sc.masked_fill(j > i, float("-inf"))          # N = M here: top-left is bottom-right
    ref = torch.softmax(sc, dim=-1) @ v[0, 0].float()
    del sc
    try:
        fn, o8 = cudnn_fp8_call(torch, cudnn, x16, causal)
        fn()
        torch.cuda.synchronize()
    except Exception as e:
        row("cudnn-fp8", case, "unsupported: cuDNN: " + (str(e).split("\n")[0][:150] or type(e).__name__))
        return
    rel = ((o8[0, 0, :rows].float() - ref).norm() / ref.norm()).item()
    med, mn, mx, n = time_call(fn)
    status = "ok" if rel <= E4M3_TOLERANCE else "FAIL: rel-L2 %.3g vs float32 math" % rel
    row("cudnn-fp8", case, status, (med, mn, mx), rel, "call=sdpa_fp8;scales=per-tensor;runs=%d;flush=%s" % (n, flush))


def main():
    ap = Parser(allow_abbrev=False)
    ap.add_argument("--sweep", required=True, help="the sweep file (sweeps/*.txt: B Hq Hkv N M d causal [key=value ...] a line)")
    ap.add_argument("--csv", help="append the rows to this CSV (the rungs' columns)")
    ap.add_argument("--bin", default=os.path.join(ROOT, DEFAULT_BIN),
                    help="the rung binary that checks the sweep file (--check-sweep; default %s)" % DEFAULT_BIN)
    ap.add_argument("--runs", type=int, default=0, help="timed runs per call (default 0: >= 20, more for short calls)")
    ap.add_argument("--warm-ms", type=int, default=0, metavar="MS",
                    help="warm up until MS ms of calls have run, at most 1000 calls (default 0: 3 warm-ups), "
                         "so each row is timed at the sustained clock (the power cap), as the rungs' --warm-ms")
    ap.add_argument("--flush", choices=["write", "write+read"], default="write+read",
                    help="the L2 flush before every timed call, as the rungs' --flush")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward pass (dQ, dK, dV through autograd; the forward untimed), as rung 08 is timed")
    ap.add_argument("--list", action="store_true",
                    help="print what each line of the sweep would get (run, or why not); no PyTorch needed")
    args = ap.parse_args()
    if args.runs < 0:
        ap.error("argument --runs: expected 0 or more, got %d" % args.runs)
    if not 0 <= args.warm_ms <= 60000:
        ap.error("argument --warm-ms: expected 0 to 60000, got %d" % args.warm_ms)
    if not args.list and not args.csv:
        ap.error("--csv FILE is needed to run (or --list)")
    regular_file("--sweep", args.sweep)
    if not args.list:
        check_csv(args.csv)
    cases = read_sweep(args.sweep, check_sweep(args.bin, args.sweep))
    if args.list:
        for c in cases:
            why = not_run(c)
            if c["dtype"] == "e4m3" and not args.backward:
                why = not_run(c, fp8=True)    # cudnn-fp8's line: run where its frontend is installed
            print("%s %s %s %s%s" % ("run " if why is None else "skip", " ".join(str(x) for x in c["shape"]),
                                     c["dtype"], label(c) or "-", "" if why is None else "  " + why))
        return 0

    torch, F, SDPBackend, sdpa_kernel = import_torch()
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
    cudnn = None
    if not args.backward and any(c["dtype"] == "e4m3" for c in cases):
        try:
            import cudnn                      # after torch: it binds the libcudnn torch loaded
        except Exception:                     # not installed: no cudnn-fp8 rows
            cudnn = None
    # Each row is one write at the end of the CSV; a write that fails is cut back off, so the file
    # keeps whole rows only (the ones before), and the run stops with one line naming the file.
    try:
        out = os.open(args.csv, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as e:
        die("error: --csv %s: cannot open (%s)" % (args.csv, e.strerror or e))

    def put(text):
        data = text.encode()
        size = os.fstat(out).st_size
        try:
            while data:
                data = data[os.write(out, data):]
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(out, size)
            die("error: --csv %s: cannot write (%s); the rows before are kept" % (args.csv, e.strerror or e))

    if os.fstat(out).st_size == 0:
        put("rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,"
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
        if t and args.warm_ms:                # --warm-ms: how this row was warmed up
            extra = (extra + ";" if extra else "") + "warm_ms=%d" % args.warm_ms
        if label(case):                       # the sweep line's page= and model=, as the rungs' rows end
            extra = (extra + ";" if extra else "") + label(case)
        fields += ["%.3e" % rel if rel is not None else "", "", "", 0, name, commit, extra]
        put(",".join(str(x) for x in fields) + "\n")
        print("%-12s B=%-4d Hq=%-3d Hkv=%-3d N=%-6d M=%-6d d=%-4d c=%d %-4s %s %s" %
              (rung, B, Hq, Hkv, N, M, d, c, case["dtype"], ("%.4f ms" % t[0]) if t else "", status), flush=True)

    def time_call(fn):
        """Median, min and max ms of fn and the number of timed runs: 3 warm-ups (with --warm-ms,
        more until MS ms of calls have run, at most 1000), then >= 20 runs (up to 200 for short
        calls), each after an L2 flush, CUDA events around the call alone."""
        times = []
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        t0 = None
        w = spent = 0
        while w < 3 or (spent < args.warm_ms and w < 1000):
            do_flush(w & 0xff)
            e0.record(); fn(); e1.record(); e1.synchronize()
            t0 = e0.elapsed_time(e1)
            spent += t0
            w += 1
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
            if case["dtype"] == "e4m3" and cudnn is not None:
                why8 = not_run(case, fp8=True)
                if why8 is not None:
                    row("cudnn-fp8", case, why8)
                else:
                    run_cudnn_fp8(torch, cudnn, dev, case, row, time_call, "write+read" if clean else "write")
            continue
        dt = torch.bfloat16 if case["dtype"] == "bf16" else torch.float16
        tol = 1e-2 if case["dtype"] == "bf16" else 2e-3      # the rungs' tolerances (README: how a run is checked)
        gen = torch.Generator(device=dev).manual_seed(1234)
        q = torch.randn(B, Hq, N, d, device=dev, dtype=dt, generator=gen)
        k = torch.randn(B, Hkv, M, d, device=dev, dtype=dt, generator=gen)
        v = torch.randn(B, Hkv, M, d, device=dev, dtype=dt, generator=gen)
        if case["inputs"] == "outlier":                      # as common/inputs.c: scores in the hundreds
            q.mul_(10.0)
            k.mul_(10.0)
        elif case["inputs"] == "sparse-outlier":             # as common/inputs.c: one entry in 1,000 from N(0, 10^2)
            for x in (q, k, v):
                x[torch.rand(x.shape, device=dev, generator=gen) < 1e-3] *= 10.0
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
    os.close(out)
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(errors="backslashreplace")
    try:
        rc = main()
        sys.stdout.flush()
    except BrokenPipeError:                   # --list into head: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        rc = 2
    except Exception as e:                    # a GPU error mid-run: one line; the rows before stay
        die("error: peers stopped: %s: %s" % (type(e).__name__, (str(e).split("\n") or [""])[0]))
    sys.exit(rc)
