#!/usr/bin/env python3
"""The binding without a GPU (make test): the C API of common/ladder.h in every rung's library
(build/lib/libladder_NN.so) through ctypes, and the Python package python/ladder/.

  - every rung binary has its library, and it loads;
  - ladder_variants lists what the binary's --list lists, line for line; ladder_pass says what --pass does;
  - bad shapes are refused with a reason, NULL device pointers passed (a refusal reads none of them):
    d = 7 with the rung's own sentence (the one its binary prints as "unsupported: ..."), Hq % Hkv != 0,
    N = 0, an unknown variant, the wrong pass (ladder_backward on a forward rung, and back);
  - a good shape with no device: -1 and a "no CUDA device" reason (with a device: refused, NULL q);
  - the package imports without PyTorch (its import hidden), says so in one line from attention(),
    and raises ladder.Refused, a ValueError, with the rung's reason;
  - attention()'s cache of ladder_workspace answers keeps what the rung took, never a refusal.
Prints "ok ...", "FAIL ..." or "skip ..." per check (tools/run_tests.sh counts them)."""
import ctypes
import glob
import importlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
fails = 0


def check(cond, what, detail=""):
    global fails
    print(("ok " if cond else "FAIL ") + what + ("" if cond or not detail else f": {detail}"))
    fails += 0 if cond else 1


def binary(path, *args):
    r = subprocess.run([path, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


import ladder                                    # noqa: E402  (the package, torch not needed)
from ladder import _lib                          # noqa: E402

bins = sorted(b for b in glob.glob(os.path.join(ROOT, "build", "bin", "0[0-9]_*")) if os.access(b, os.X_OK))
check(len(bins) > 0, "rung binaries found in build/bin (run make)")
WHY = 1024


def c_call(lib, fn, shape, nargs, variant=None):
    """fn(shape, NULL x nargs, variant, NULL workspace, 0, NULL stream, why): (rc, why)."""
    why = ctypes.create_string_buffer(WHY)
    rc = getattr(lib, fn)(ctypes.byref(shape), *([None] * nargs), variant, None, 0, None, why, WHY)
    return rc, why.value.decode()


dev = ladder.probe()
have_device = not dev.startswith("no CUDA device")
for b in bins:
    rung = os.path.basename(b)
    num = rung[:2]
    path = os.path.join(ROOT, "build", "lib", f"libladder_{num}.so")
    if not os.path.exists(path):
        check(False, f"{rung}: build/lib/libladder_{num}.so exists")
        continue
    try:
        raw = ctypes.CDLL(path)
        ok = all(hasattr(raw, f) for f in ("ladder_forward", "ladder_backward", "ladder_workspace",
                                           "ladder_variants", "ladder_pass", "ladder_probe"))
        hidden = not hasattr(raw, "rung_variants") and not hasattr(raw, "shape_validate")
        check(ok and hidden, f"{rung}: libladder_{num}.so loads with ctypes, exports the C API and hides the rest")
        lib = _lib.load(num)
    except OSError as e:
        check(False, f"{rung}: libladder_{num}.so loads with ctypes", str(e))
        continue
    rc, out, err = binary(b, "--list")
    listed = [tuple(line.split("\t")) for line in out.splitlines()]
    check(rc == 0 and ladder.variants(num) == listed, f"{rung}: ladder_variants lists what --list does",
          f"{ladder.variants(num)} vs {listed}")
    rc, out, err = binary(b, "--pass")
    kind = ladder.passes(num)
    check(out.strip() == kind, f"{rung}: ladder_pass says {kind}, as --pass does", out.strip())
    fn, nargs = ("ladder_backward", 9) if kind == "backward" else ("ladder_forward", 5)
    other, onargs = ("ladder_forward", 5) if kind == "backward" else ("ladder_backward", 9)
    own = listed[-1][0] if listed else ""
    for variant, _, _ in listed:
        # d = 7: the rung refuses it with the sentence its binary prints (no device needed there either)
        rc_b, out_b, _ = binary(b, "--variant", variant, "--b", "1", "--hq", "2", "--hkv", "1", "--n", "64",
                                "--m", "64", "--d", "7")
        rc, why = c_call(lib, fn, ladder.Shape(1, 2, 1, 64, 64, 7, 0, 0, 0.0), nargs, variant.encode())
        if rc_b == 3 and out_b.startswith("unsupported: "):
            want = f"{variant}: " + out_b[len("unsupported: "):].strip()
            check(rc == 1 and why == want, f"{variant}: d = 7 refused with the rung's own reason", f"rc {rc}, '{why}'")
        else:
            # the rung runs d = 7 (rung 00): on to the device, which is missing (-1) or meets the NULL q (1)
            check(rc == (1 if have_device else -1), f"{variant}: d = 7 taken, as by the binary; then "
                  f"{'the NULL q refused' if have_device else 'no CUDA device'}", f"rc {rc}, '{why}'")
    bad = {"Hq % Hkv != 0": (ladder.Shape(1, 3, 2, 64, 64, 64, 0, 0, 0.0), "multiple of Hkv"),
           "N = 0": (ladder.Shape(1, 2, 1, 0, 64, 64, 0, 0, 0.0), "every size must be >= 1"),
           "dtype 9": (ladder.Shape(1, 2, 1, 64, 64, 64, 9, 0, 0.0), "dtype 9"),
           "scale -1": (ladder.Shape(1, 2, 1, 64, 64, 64, 0, 0, -1.0), "expected a normal float > 0"),
           "scale NaN": (ladder.Shape(1, 2, 1, 64, 64, 64, 0, 0, float("nan")), "expected a normal float > 0"),
           "scale 1e-40 (subnormal)": (ladder.Shape(1, 2, 1, 64, 64, 64, 0, 0, 1e-40), "expected a normal float > 0")}
    for what, (s, text) in bad.items():
        rc, why = c_call(lib, fn, s, nargs)
        check(rc == 1 and text in why, f"{rung}: {what} refused before the GPU", f"rc {rc}, '{why}'")
    good = ladder.Shape(1, 8, 8, 1024, 1024, 128, 0, 0, 0.0)
    rc, why = c_call(lib, fn, good, nargs, b"nope")
    check(rc == 1 and why.startswith("variant 'nope': expected one of ") and own in why,
          f"{rung}: an unknown variant refused, the ids listed", f"rc {rc}, '{why}'")
    rc, why = c_call(lib, other, good, onargs)
    check(rc == 1 and f"is a {kind} pass: call {fn}" in why, f"{rung}: {other} refused: the rung is a {kind} pass",
          f"rc {rc}, '{why}'")
    # a shape the rung runs (as its binary says, exit 3 being a refusal): a prefill shape, or a decode step (06)
    runs = None
    for B, Hq, Hkv, N, M, d in ((1, 8, 8, 1024, 1024, 128), (1, 8, 1, 1, 1024, 128)):
        rc_b, out_b, _ = binary(b, "--b", str(B), "--hq", str(Hq), "--hkv", str(Hkv), "--n", str(N), "--m", str(M),
                                "--d", str(d))
        if rc_b != 3:
            runs = ladder.Shape(B, Hq, Hkv, N, M, d, 0, 0, 0.0)
            break
    if runs is None:
        check(False, f"{rung}: a shape it runs for the no-device check", out_b.strip())
        continue
    rc, why = c_call(lib, fn, runs, nargs)
    if have_device:
        check(rc == 1 and why == "q: a NULL device pointer", f"{rung}: a good shape with NULL pointers refused",
              f"rc {rc}, '{why}'")
    else:
        check(rc == -1 and why.startswith("no CUDA device found"), f"{rung}: a good shape says no CUDA device (-1)",
              f"rc {rc}, '{why}'")

# ---- the package: Refused and the no-device line through Python; no torch, said in one line ----
check(issubclass(ladder.Refused, ValueError), "ladder.Refused is a ValueError")
try:
    ladder.workspace("07", ladder.Shape(1, 2, 1, 64, 64, 7, 0, 0, 0.0))
    check(False, "ladder.workspace refuses d = 7 with ladder.Refused", "no exception")
except ladder.Refused as e:
    check(str(e).startswith("07") and "7" in str(e), "ladder.workspace refuses d = 7 with ladder.Refused", str(e))
except Exception as e:                            # noqa: BLE001
    check(False, "ladder.workspace refuses d = 7 with ladder.Refused", repr(e))
if not have_device:
    try:
        ladder.workspace("07", ladder.Shape(1, 8, 8, 1024, 1024, 128, 0, 0, 0.0))
        check(False, "ladder.workspace on a good shape says no CUDA device", "no exception")
    except RuntimeError as e:
        check(str(e).startswith("no CUDA device found"), "ladder.workspace on a good shape says no CUDA device", str(e))
# attention()'s cache (_plan): a refusal is asked again and raised on every call, nothing kept; a
# shape the rung takes is kept (with a device; without one, the no-device error is not kept either).
# The kept shape is rung 00's, which every device runs
plan = importlib.import_module("ladder.attention")
bad, good = (1, 2, 1, 64, 64, 7, 0, 0, 0.0), (1, 8, 8, 1024, 1024, 128, 0, 0, 0.0)
got = []
for _ in range(2):
    try:
        plan._plan("07", bad, None, 0)
        got.append("no exception")
    except ladder.Refused as e:
        got.append(str(e))
check(len(set(got)) == 1 and got[0].startswith("07") and not plan._plans,
      "attention()'s workspace cache: d = 7 refused on every call, nothing kept", f"{got}, {plan._plans}")
try:
    first = plan._plan("00", good, None, 0)
    check(plan._plan("00", good, None, 0) is first and first[1] >= 0 and len(plan._plans) == 1,
          "attention()'s workspace cache: a shape the rung takes is asked once", f"{plan._plans}")
except (RuntimeError, ladder.Refused) as e:
    check(not have_device and str(e).startswith("no CUDA device found") and not plan._plans,
          "attention()'s workspace cache: without a device nothing is kept", f"{e}, {plan._plans}")
try:
    ladder.variants("99")
    check(False, "a rung without a library: FileNotFoundError naming it", "no exception")
except FileNotFoundError as e:
    check("libladder_99.so" in str(e) and "make" in str(e), "a rung without a library: FileNotFoundError naming it",
          str(e))

# attention() without torch: torch hidden from a child interpreter (sys.modules["torch"] = None makes
# `import torch` fail, whether or not torch is installed), so this runs on every machine
child = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, sys.argv[1]); import ladder\n"
         "try:\n    ladder.attention(None, None, None)\nexcept ImportError as e:\n    print(e)\n")
r = subprocess.run([sys.executable, "-c", child, os.path.join(ROOT, "python")], capture_output=True, text=True)
line = r.stdout.strip()
check(r.returncode == 0 and "\n" not in line and "torch is not installed" in line,
      "import ladder without torch; attention() says so in one line", f"rc {r.returncode}, '{line}' {r.stderr[-300:]}")
try:
    import torch                                  # noqa: F401
    print("skip attention() on tensors: that is the GPU half (torch is installed, the check needs a CUDA device)")
except ImportError:
    print("skip attention() on tensors: torch is not installed here (the GPU half checks it)")
# LADDER_LIB: a folder without the libraries is named in the error
r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import ladder\n"
                    "try:\n    ladder.probe()\nexcept FileNotFoundError as e:\n    print(e)\n",
                    os.path.join(ROOT, "python")], capture_output=True, text=True,
                   env={**os.environ, "LADDER_LIB": "/nonexistent/lib"})
check("/nonexistent/lib/libladder_00.so" in r.stdout, "LADDER_LIB names the folder the libraries are read from",
      r.stdout.strip() + r.stderr[-300:])

# make train's script without a GPU: bad flags refused before anything; without torch (hidden, as
# above) one line and exit 0; in neither case a CSV written
import tempfile                                   # noqa: E402
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "t.csv")
    script = os.path.join(ROOT, "python", "train_gpt.py")
    r = subprocess.run([sys.executable, script, "--csv", out, "--steps", "0"], capture_output=True, text=True)
    check(r.returncode != 0 and "bad arguments: --steps" in r.stderr and not os.path.exists(out),
          "train_gpt.py refuses --steps 0 before any work", f"rc {r.returncode}, {r.stderr[-300:]}")
    r = subprocess.run([sys.executable, script, "--csv", out, "--head-dims", "64", "100"], capture_output=True,
                       text=True)
    check(r.returncode != 0 and "--head-dims 100" in r.stderr and not os.path.exists(out),
          "train_gpt.py refuses a head dim that is not a multiple of 8 dividing the width", r.stderr[-300:])
    hide = ("import sys, runpy; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    r = subprocess.run([sys.executable, "-c", hide, script, "--csv", out], capture_output=True, text=True)
    line = r.stdout.strip()
    check(r.returncode == 0 and "\n" not in line and "PyTorch is not installed" in line and not os.path.exists(out),
          "train_gpt.py without torch: one line, exit 0, no CSV", f"rc {r.returncode}, '{line}' {r.stderr[-300:]}")
sys.exit(1 if fails else 0)
