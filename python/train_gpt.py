#!/usr/bin/env python3
"""make train: a small byte-level GPT trained twice from the same seed on the same batches, once
with ladder.attention (rung 07's forward, rung 08's backward) and once with PyTorch's
scaled_dot_product_attention. Both runs see the same weights at step 0 and the same bytes in the
same order; only the attention differs.

  python3 python/train_gpt.py --csv results/<gpu>-train.csv [--steps N] [--batch B] [--seq T]

The text: the Python standard library's own source, its .py files in sorted order (shipped with
Python itself, e.g. Debian's libpython3.x-stdlib), nothing downloaded. 95% trains, the last 5% is
held out. The model: 4 layers of width 512, heads of 64 in layers 1 and 3 and of 128 in layers 2
and 4 (8 and 4 heads), causal, bfloat16 autocast, AdamW. Every --log steps it prints the step, the
mean training loss since the last line and the tokens per second, and keeps them in the CSV
(attention,step,split,loss,tokens_per_s); at the end, the held-out loss of each run (split eval).
The CSV is written whole at the end, or not at all."""
import argparse
import glob
import math
import os
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def corpus(nbytes):
    """The first nbytes of the standard library's .py files, sorted by path; and where they are."""
    d = sysconfig.get_paths()["stdlib"]
    files = sorted(f for f in glob.glob(os.path.join(d, "**", "*.py"), recursive=True)
                   if "site-packages" not in f and "dist-packages" not in f)
    buf = bytearray()
    for f in files:
        with open(f, "rb") as fh:
            buf += fh.read()
        if len(buf) >= nbytes:
            break
    return bytes(buf[:nbytes]), d


def build(torch, args, attn):
    """The GPT, its weights drawn from args.seed: the same for both runs."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.proj = nn.Linear(width, width, bias=False)
            self.fc = nn.Linear(width, 4 * width, bias=False)
            self.out = nn.Linear(4 * width, width, bias=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
            y = attn(q, k, v)                             # [B, H, T, C / H]
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(256, args.width)
            self.pos = nn.Embedding(args.seq, args.width)
            self.blocks = nn.ModuleList(Block(args.width, args.width // hd) for hd in args.head_dims)
            self.ln = nn.LayerNorm(args.width)
            self.head = nn.Linear(args.width, 256, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    torch.manual_seed(args.seed)
    return GPT().cuda()


def batches(torch, data, n, args, seed):
    """n batches of [B, T + 1] bytes at offsets drawn from seed: the same for both runs."""
    g = torch.Generator().manual_seed(seed)
    span = torch.arange(args.seq + 1, device=data.device)
    for _ in range(n):
        off = torch.randint(0, len(data) - args.seq - 1, (args.batch,), generator=g).to(data.device)
        yield data[off[:, None] + span].long()


def lr_at(step, args):
    """Linear warm-up, then cosine down to a tenth."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    t = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def run(torch, name, attn, train, held, args):
    """One training run: its rows for the CSV and its held-out loss."""
    F = torch.nn.functional
    model = build(torch, args, attn)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    rows, acc, t0 = [], torch.zeros((), device="cuda"), None
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step, xy in enumerate(batches(torch, train, args.steps, args, args.seed + 1), 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(step - 1, args)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(xy[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, 256), xy[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        acc += loss.detach()
        if step % args.log == 0:
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            tps = args.log * args.batch * args.seq / (t1 - t0)
            mean = acc.item() / args.log
            rows.append((name, step, "train", mean, tps))
            print(f"{name:6s} step {step:5d}  loss {mean:.4f}  {tps / 1e3:8.1f} k tokens/s", flush=True)
            acc.zero_()
            t0 = time.perf_counter()
    model.eval()
    with torch.no_grad():
        total = 0.0
        for xy in batches(torch, held, args.eval_batches, args, args.seed + 2):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(xy[:, :-1])
            total += F.cross_entropy(logits.float().view(-1, 256), xy[:, 1:].reshape(-1)).item()
    ev = total / args.eval_batches
    rows.append((name, args.steps, "eval", ev, float("nan")))
    print(f"{name:6s} held-out loss after {args.steps} steps: {ev:.4f}", flush=True)
    return rows, ev


def commit():
    c = os.environ.get("ATTN_COMMIT")
    if c:
        return c
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", required=True, help="where the CSV goes (results/<gpu>-train.csv)")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--head-dims", type=int, nargs="+", default=[64, 128, 64, 128], help="one per layer")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--log", type=int, default=20, help="steps per printed line and CSV row")
    ap.add_argument("--eval-batches", type=int, default=32)
    ap.add_argument("--text-bytes", type=int, default=16 << 20)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    bad = [n for n, v in (("--steps", args.steps), ("--batch", args.batch), ("--seq", args.seq), ("--log", args.log),
                          ("--eval-batches", args.eval_batches), ("--warmup", args.warmup)) if v < 1]
    bad += [f"--head-dims {hd}" for hd in args.head_dims if hd < 8 or hd % 8 or args.width % hd]
    if bad or args.steps % args.log or not args.lr > 0:
        sys.exit(f"train_gpt.py: bad arguments: {', '.join(bad) or '--steps a multiple of --log, --lr > 0'}")

    try:
        import torch
    except ImportError:
        print("make train: skipped, PyTorch is not installed (pip install torch)")
        return 0
    if not torch.cuda.is_available():
        print(f"make train: skipped, torch {torch.__version__} sees no CUDA device")
        return 0
    import ladder

    text, where = corpus(args.text_bytes)
    if len(text) < 20 * args.seq:
        sys.exit(f"train_gpt.py: only {len(text)} bytes of text under {where}")
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8).cuda()
    cut = len(data) * 95 // 100
    train, held = data[:cut], data[cut:]
    print(f"make train on the {torch.cuda.get_device_name()}: {len(text) / 2**20:.1f} MiB of Python's standard "
          f"library ({where}); {args.steps} steps of {args.batch} x {args.seq} bytes; head dims {args.head_dims}")

    F = torch.nn.functional
    runs = [("ladder", lambda q, k, v: ladder.attention(q, k, v, causal=True)),
            ("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True))]
    rows, ev = [], {}
    for name, attn in runs:
        r, ev[name] = run(torch, name, attn, train, held, args)
        rows += r
    speed = {n: sum(r[4] for r in rows if r[0] == n and r[2] == "train" and r[1] > args.log) /
             max(1, sum(1 for r in rows if r[0] == n and r[2] == "train" and r[1] > args.log)) for n, _ in runs}
    gap = abs(ev["ladder"] - ev["sdpa"]) / ev["sdpa"]
    print(f"held-out loss: ladder {ev['ladder']:.4f}, sdpa {ev['sdpa']:.4f} ({100 * gap:.2f}% apart); "
          f"tokens/s after the first {args.log} steps: ladder {speed['ladder'] / 1e3:.1f} k, "
          f"sdpa {speed['sdpa'] / 1e3:.1f} k ({speed['ladder'] / speed['sdpa']:.3f}x)")

    head = [f"# device: {torch.cuda.get_device_name()}", f"# commit: {commit()}",
            f"# date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
            f"# torch: {torch.__version__}",
            f"# model: {len(args.head_dims)} layers, width {args.width}, head dims {' '.join(map(str, args.head_dims))}, "
            f"seq {args.seq}, batch {args.batch}, {args.steps} steps, lr {args.lr} (warm-up {args.warmup}, cosine), "
            f"seed {args.seed}",
            f"# text: the first {len(text)} bytes of the .py files under {where}, sorted by path; the last 5% held out",
            "attention,step,split,loss,tokens_per_s"]
    body = [f"{a},{s},{sp},{l:.6f},{'' if t != t else f'{t:.1f}'}" for a, s, sp, l, t in rows]
    tmp = args.csv + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write("\n".join(head + body) + "\n")
        os.replace(tmp, args.csv)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        sys.exit(f"train_gpt.py: could not write {args.csv} ({e}); the old file, if any, is as it was")
    print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
