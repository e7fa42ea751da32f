"""FlashAttention-3's FP8 accuracy experiment with cuDNN's FP8 attention beside rung 07's steps, on the
same inputs and against the same float64 answer (issue 38: results/<gpu>-fp8-accuracy.csv).

    python3 lab/fp8_accuracy.py BIN07 WORKDIR CSV

Per shape (B = 1, Hq = Hkv = 4, N = M = 1024 and 4096, d = 64, 128, 256, not causal): Q, K, V drawn in
float16 from N(0, 1) with 0.1% of the entries ten times larger (the driver's inputs=sparse-outlier; drawn
here by PyTorch's generator) and saved as q.npy, k.npy, v.npy in WORKDIR; then each method's O over every
row of every head:
  07f-f16              BIN07 --variant 07f --load WORKDIR --save ...
  fp8-block-hadamard   BIN07 --variant 07g --dtype e4m3 (block scales and the Hadamard map: its default)
  fp8-block            ... --fp8-hadamard off
  fp8-tensor           ... --fp8-scale tensor --fp8-hadamard off
  cudnn-fp8            tools/peers.py's cuDNN graph (sdpa_fp8, per-tensor scales, O in e4m3)
each against O computed in float64 from the same float16 inputs (on the GPU): rmse and rel-L2 over
every element. The rungs run with --no-time, so the driver checks them too (its own float64 reference,
a sample of rows at 4096); its verdict and rel-L2 are kept in WORKDIR/driver.csv, and a method whose
check fails there (exit 1) still gets its row here. Writes CSV with the
columns of lab/fp8_run.sh's accuracy step: method,d,N,rmse,rel_l2. Needs PyTorch and the cuDNN
frontend (../shared/peers/cudnn_fp8.sh); without the frontend the cudnn-fp8 rows are left out."""
import ast
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import peers  # noqa: E402

BIN, WORK, CSV = sys.argv[1:4]
torch, _, _, _ = peers.import_torch()
try:
    import cudnn  # noqa: E402  (after torch: it binds the libcudnn torch loaded)
except ImportError:
    cudnn = None
dev = torch.device("cuda")
METHODS = [("07f-f16", ["--variant", "07f"]),
           ("fp8-block-hadamard", ["--variant", "07g", "--dtype", "e4m3"]),
           ("fp8-block", ["--variant", "07g", "--dtype", "e4m3", "--fp8-hadamard", "off"]),
           ("fp8-tensor", ["--variant", "07g", "--dtype", "e4m3", "--fp8-scale", "tensor", "--fp8-hadamard", "off"])]


def npy_save(path, x):
    """x (a float16 tensor) as numpy's .npy, version 1.0, C order (no numpy needed)."""
    h = "{'descr': '<f2', 'fortran_order': False, 'shape': (%s), }" % ", ".join("%d" % n for n in x.shape)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode("latin1"))
        f.write(bytes(x.contiguous().cpu().view(torch.uint8).flatten().tolist()))


def npy_load(path):
    """A float16 or float32 .npy (version 1.0, C order, as the driver's --save writes it) as a tensor."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[8:10], "little")
    h = ast.literal_eval(raw[10:10 + n].decode("latin1"))
    dt = {"<f2": torch.float16, "<f4": torch.float32}[h["descr"]]
    return torch.frombuffer(bytearray(raw[10 + n:]), dtype=dt).reshape(h["shape"])


def errors(o, ref):
    e = o.double() - ref
    return math.sqrt((e * e).mean().item()), (e.norm() / ref.norm()).item()


os.makedirs(WORK, exist_ok=True)
rows = []
for n in (1024, 4096):
    for d in (64, 128, 256):
        gen = torch.Generator(device=dev).manual_seed(1000 * n + d)
        x16 = [torch.randn(1, 4, n, d, device=dev, dtype=torch.float16, generator=gen) for _ in range(3)]
        for x in x16:
            x[torch.rand(x.shape, device=dev, generator=gen) < 1e-3] *= 10.0
        for name, x in zip("qkv", x16):
            npy_save(os.path.join(WORK, name + ".npy"), x)
        q, k, v = (x.double() for x in x16)
        ref = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(d), dim=-1) @ v
        for method, flags in METHODS:
            out = os.path.join(WORK, "o-" + method)
            r = subprocess.run([BIN] + flags + ["--load", WORK, "--save", out, "--no-time", "--quiet",
                                "--csv", os.path.join(WORK, "driver.csv")], capture_output=True, text=True)
            # exit 1: the driver's check failed (FP8 without the Hadamard map may miss its LSE or O
            # tolerance: what this table shows); O is still saved
            if r.returncode not in (0, 1) or not os.path.exists(os.path.join(out, "o.npy")):
                print("%s d=%d N=%d: exit %d %s" % (method, d, n, r.returncode, (r.stdout + r.stderr)[-300:]))
                continue
            o = npy_load(os.path.join(out, "o.npy")).to(dev)
            os.remove(os.path.join(out, "o.npy"))
            rows.append((method, d, n) + errors(o, ref))
        if cudnn is not None:
            fn, o8 = peers.cudnn_fp8_call(torch, cudnn, x16, 0)
            fn()
            torch.cuda.synchronize()
            rows.append(("cudnn-fp8", d, n) + errors(o8.float(), ref))
        for r in rows:
            if r[1:3] == (d, n):
                print("%-20s d=%-3d N=%-5d rmse %.3g rel-L2 %.4g" % r)
        del ref, q, k, v
order = [m for m, _ in METHODS] + ["cudnn-fp8"]
with open(CSV + ".tmp", "w") as f:
    f.write("# %s\n" % torch.cuda.get_device_name())
    f.write("# inputs: N(0,1), 0.1%% of the entries of Q, K and V ten times larger (inputs=sparse-outlier), "
            "drawn in float16 by PyTorch's generator (lab/fp8_accuracy.py), the same inputs for every method; "
            "B = 1, Hq = Hkv = 4, M = N, not causal; rmse and rel-L2 over every element against O in float64 "
            "from the float16 inputs; cudnn-fp8: cuDNN %s (frontend %s), per-tensor scales, O in e4m3\n"
            % (cudnn.backend_version_string() if cudnn else "-", cudnn.__version__ if cudnn else "-"))
    f.write("method,d,N,rmse,rel_l2\n")
    for r in sorted(rows, key=lambda r: (order.index(r[0]), r[2], r[1])):
        f.write("%s,%d,%d,%.3g,%.4g\n" % r)
os.replace(CSV + ".tmp", CSV)
