#!/usr/bin/env bash
# The models sweep without a GPU: the models block (tools/readme_results.sh; NOTES.md has it) made of a
# synthetic results CSV (tests/data/models-synthetic.csv: in the layout of lab/gpu_run.sh models,
# every number made up), checked row by row against the numbers it must pick; the block left as it
# is where there is no CSV; plots/<gpu>-models.png drawn from the CSV (where gnuplot is) and not
# without it; and what the PyTorch peers do with each line of sweeps/models.txt (tools/peers.py
# --list, where python3 is; no PyTorch needed). Prints "ok <name>", "FAIL <name>: <why>" or
# "skip <name>: <why>" per check.
. "$(dirname "$0")/lib.sh"   # set -u, cd to the root, $tmp, check/has/contains

mkdir -p "$tmp/res" "$tmp/empty" "$tmp/png" "$tmp/png2"
cp tests/data/models-synthetic.csv "$tmp/res/x-models.csv"
block=$(RESULTS_DIR="$tmp/res" tools/readme_results.sh --print "models gpu=x" 2>&1); rc=$?
check "block: made from the CSV (exit 0)" "$rc" 0
contains "block: names the CSV and its device" "$(printf '%s\n' "$block" | head -n 1)" \
  "$tmp/res/x-models.csv (SYNTHETIC GPU (test data)): every rung variant and the peers over sweeps/models.txt"

# ---- prefill: a column per rung that ran a row (01 and 06 ran none), the best variant of each ------
pre=$(printf '%s\n' "$block" | sed -n '/^\*\*Prefill\*\*/,/^\*\*Decode\*\*/p')
contains "prefill: both commits (a rerun of rung 00), and the shape every row shares" "$pre" \
  "$tmp/res/x-models.csv, rows from the runs at commits synth02, synth01; tflops of each row; in every row B = 4, Hq = 32, N = 4096, M = 4096, causal, dtype = bf16:"
has "prefill: columns 00 04 05 07 and the peers; none for 01 and 06, which ran no row" "$pre" \
  "| model | Hkv | d | 00 | 04 | 05 | 07 | torch-flash | torch-cudnn |"
# 00: the rerun's 56.0, not the first row's 50.0; 05: 05c's 300 over 05a's 50.0; 07: 07c's 520 over 07a's 450
has "prefill: Llama-3.1-8B and Mistral-7B in one row; the rerun's 00, the best variant of 05 and 07" "$pre" \
  "| Llama-3.1-8B, Mistral-7B | 8 | 128 | 56.0 | 20.0 | 300 (05c) | 520 (07c) | 300 | 550 |"
has "prefill: Phi-3-mini's skipped, refused and peer-refused cells" "$pre" \
  "| Phi-3-mini | 32 | 96 | 45.0 | skipped | 250 (05c) | refused | 280 | refused |"
contains "prefill: why 01 has no column" "$pre" \
  "01: float16 only: this rung converts float16 to float32 on load and has no bfloat16 path"
contains "prefill: why 04 has no number for Phi-3-mini (too slow)" "$pre" \
  "04: skipped: too slow (one run took 12.0 s at B=4 N=4096 M=4096 d=96 causal=1)"

# ---- decode, B = 16, M = 4096: rung 06 on its paged float16 rows, lines of their own ------------
d16=$(printf '%s\n' "$block" | sed -n '/^\*\*Decode\*\*, B = 16, M = 4096/,/^\*\*Decode\*\*, B = 1,/p')
has "decode 16 x 4096: columns; the paged float16 rows lines of their own" "$d16" \
  "| model | Hkv | d | dtype | page | 00 | 04 | 05 | 06 | 07 | torch-flash | torch-cudnn |"
has "decode 16 x 4096: Llama-3.1-8B's contiguous row" "$d16" \
  "| Llama-3.1-8B, Mistral-7B | 8 | 128 | bf16 | – | 1000 | 60.0 | 350 (05c) | refused | 340 (07c) | 1700 | 2000 |"
has "decode 16 x 4096: Llama-3.1-8B's paged row (06c over 06a)" "$d16" \
  "| Llama-3.1-8B, Mistral-7B | 8 | 128 | f16 | 64 | refused | refused | refused | 2600 (06c) | refused | refused | refused |"
has "decode 16 x 4096: Phi-3-mini's row (d = 96: no 06, no 07)" "$d16" \
  "| Phi-3-mini | 32 | 96 | bf16 | – | 900 | 55.0 | 300 (05c) | refused | refused | 1600 | 1900 |"
contains "decode 16 x 4096: the rungs that read K and V contiguous, on the paged rows, together" "$d16" \
  "00, 01, 04, 05, 07: this rung reads K and V contiguous"
contains "decode 16 x 4096: the peers skip the paged rows" "$d16" \
  "torch-flash, torch-cudnn: a paged KV cache (page=64): SDPA reads K and V contiguous; not run"

# ---- decode, B = 1, M = 32768: a model without rows of the shape has no row; a FAIL is named -----
d1=$(printf '%s\n' "$block" | sed -n '/^\*\*Decode\*\*, B = 1, M = 32768/,$p')
has "decode 1 x 32768: 07c's number where 07a failed (Llama-3.1-8B's contiguous row)" "$d1" \
  "| bf16 | – | 200 | 8.0 | 18.0 (05c) | refused | 150 (07c) | 400 | 900 |"
check "decode 1 x 32768: no row for Phi-3-mini (no row of this shape)" "$(printf '%s\n' "$d1" | grep -c 'Phi-3-mini')" 0
contains "decode 1 x 32768: the failed variant named under the table" "$d1" \
  "07a on Llama-3.1-8B, Mistral-7B: FAIL: rel-L2 error 5.0e-02 > 1e-02"
# decode=: other shapes; one the CSV does not have is said so
other=$(RESULTS_DIR="$tmp/res" tools/readme_results.sh --print "models gpu=x decode=64x4096,2x2" 2>&1)
has "decode=64x4096: the shape asked for (only rung 00 ran it)" "$other" "| 1500 |"
contains "decode=64x4096: Llama-3.1-8B's row, the only one" "$other" "in every row model = Llama-3.1-8B, Mistral-7B, B = 64,"
contains "decode=2x2: a shape without rows is said so" "$other" "no rows with N=1,B=2,M=2 in $tmp/res/x-models.csv"

# ---- no CSV, or no model= in it: no block, and NOTES.md's is left as it is --------------------
if RESULTS_DIR="$tmp/empty" tools/readme_results.sh --print "models gpu=x" > "$tmp/none.txt" 2>&1; then
  echo "FAIL block: made without a CSV: $(head -n 2 "$tmp/none.txt")"
else
  contains "block: none without a CSV, and why" "$(cat "$tmp/none.txt")" "no models block: no $tmp/empty/x-models.csv"
fi
grep -v 'model=' tests/data/models-synthetic.csv > "$tmp/empty/y-models.csv"
if RESULTS_DIR="$tmp/empty" tools/readme_results.sh --print "models gpu=y" > "$tmp/none.txt" 2>&1; then
  echo "FAIL block: made from a CSV without model= labels"
else
  echo "ok block: none from a CSV without model= labels"
fi
rm -f "$tmp/empty/y-models.csv"
out=$(RESULTS_DIR="$tmp/empty" tools/readme_results.sh --check 2>&1); rc=$?
line=$(printf '%s\n' "$out" | grep '^NOTES.md:')
check "NOTES.md: its blocks kept as they are without results (--check exit 0)" "$rc" 0
contains "NOTES.md: the models block among them" "$line" "models (no $tmp/empty/h100-models.csv)"
# with a models CSV committed, NOTES.md's block is the one made from it; until then it holds no
# number (nothing invented)
if ls results/*-models.csv >/dev/null 2>&1; then
  made=$(tools/readme_results.sh --print "models" 2>&1)
  text=$(sed -n '/^<!-- results:models/,/^<!-- \/results -->/p' NOTES.md | sed '1d;$d')
  if [ -n "$made" ] && [ "$made" = "$text" ]; then echo "ok NOTES.md: the models block is the one made from $(ls results/*-models.csv | head -n 1)"
  else echo "FAIL NOTES.md: the models block differs from tools/readme_results.sh --print models (run it, or make plots)"; fi
else
  text=$(sed -n '/^<!-- results:models/,/^<!-- \/results -->/p' NOTES.md | sed '1d;$d')
  if [ -n "$text" ] && ! printf '%s' "$text" | grep -q '[0-9]'; then echo "ok NOTES.md: the models block holds no number yet"
  else echo "FAIL NOTES.md: the models block without a models CSV: '$text'"; fi
fi

# ---- the plot ---------------------------------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
  if RESULTS_DIR="$tmp/res" PLOTS_OUT="$tmp/png" ATTN_NO_INSTALL=1 tools/plots.sh > "$tmp/plots.log" 2>&1 &&
     [ "$(wc -c < "$tmp/png/x-models.png" 2>/dev/null || echo 0)" -gt 10000 ]; then
    echo "ok plot: x-models.png drawn from the models CSV"
  else
    echo "FAIL plot: $(grep -v '^wrote' "$tmp/plots.log" | head -n 5)"
  fi
  cp results/*.csv "$tmp/empty/" 2>/dev/null; rm -f "$tmp/empty/"*-models.csv
  RESULTS_DIR="$tmp/empty" PLOTS_OUT="$tmp/png2" ATTN_NO_INSTALL=1 tools/plots.sh > "$tmp/plots2.log" 2>&1
  if ls "$tmp/png2/"*models.png >/dev/null 2>&1; then echo "FAIL plot: a models PNG drawn without a models CSV"
  else echo "ok plot: none without a models CSV"; fi
else
  echo "skip plot: gnuplot not installed"
fi

# ---- the peers on sweeps/models.txt: bfloat16 lines run as bfloat16, paged lines not run ------------
if command -v python3 >/dev/null 2>&1; then
  list=$(python3 tools/peers.py --list --sweep sweeps/models.txt 2>&1); rc=$?
  check "peers --list: reads sweeps/models.txt (exit 0)" "$rc" 0
  check "peers: 25 lines run, each bfloat16 and labelled" \
    "$(printf '%s\n' "$list" | grep '^run ' | grep -c ' bf16 model=[A-Za-z0-9.+-]*;$')" 25
  check "peers: the 20 paged lines not run, each saying why" \
    "$(printf '%s\n' "$list" | grep '^skip ' | grep -c ' bf16 page=64;model=.*; *unsupported: a paged KV cache (page=64): SDPA reads K and V contiguous; not run')" 20
  check "peers: every line accounted for" "$(printf '%s\n' "$list" | grep -c .)" "$(grep -cv '^[[:space:]]*\(#\|$\)' sweeps/models.txt)"
  printf '1 2 2 8 8 64 0 color=red\n' > "$tmp/bad.txt"
  python3 tools/peers.py --list --sweep "$tmp/bad.txt" > "$tmp/bad.log" 2>&1; rc=$?
  check "peers: an unknown key is refused as the rungs refuse it (exit 2)" "$rc" 2
else
  echo "skip peers: python3 not installed"
fi
