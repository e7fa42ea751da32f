#!/usr/bin/env bash
# make train: python/train_gpt.py on this machine's GPU -> results/<gpu>-train.csv (the two runs,
# ladder.attention and PyTorch's SDPA), then tools/plots.sh draws plots/<gpu>-train.png from it.
# Without python3, a CUDA device or PyTorch: one line that says which, and exit 0. It takes no
# argument but --help (-h), which prints this text; other lengths and sizes: python3
# python/train_gpt.py --help, run by hand.
set -u
. "$(dirname "$0")/args.sh"
tool_noargs "$@"
cd "$(dirname "$0")/.." || exit 1
command -v python3 >/dev/null || { echo "make train: skipped, python3 is not installed"; exit 0; }
probe=$(build/bin/00_baseline --probe 2>/dev/null || echo none)
[ "$probe" = none ] && { echo "make train: skipped, no CUDA device found"; exit 0; }
csv=results/${probe%% *}-train.csv
old=$(stat -c %Y "$csv" 2>/dev/null || echo 0)
python3 python/train_gpt.py --csv "$csv" || exit 1
[ "$(stat -c %Y "$csv" 2>/dev/null || echo 0)" != "$old" ] && tools/plots.sh
exit 0
