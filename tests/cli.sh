#!/usr/bin/env bash
# Bad arguments get one clear line naming the argument, and a non-zero exit, before any GPU work.
# Prints "ok <name>" or "FAIL <name>: <why>" per case.  Usage: tests/cli.sh build/bin
set -u
bin=${1:-build/bin}
base=$bin/00_baseline
b06=$bin/06_split_kv
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

expect() {  # expect <name> <exit code> <text the message must contain> -- <command...>
  local name=$1 want_rc=$2 want_text=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want_rc" ]; then
    echo "FAIL $name: exit $rc, expected $want_rc ($out)"
  elif ! printf '%s' "$out" | grep -qF -- "$want_text"; then
    echo "FAIL $name: message '$out' lacks '$want_text'"
  elif [ "$(printf '%s\n' "$out" | wc -l)" -gt 2 ]; then
    echo "FAIL $name: more than one line of complaint: $out"
  else
    echo "ok $name"
  fi
}

expect "size zero"            2 "--n: 0 is out of range"     -- "$base" --n 0
expect "negative size"        2 "--b: -3 is out of range"    -- "$base" --b -3
expect "not a number"         2 "--m: expected an integer"   -- "$base" --m 12x
expect "Hq not multiple"      2 "Hq must be a multiple of Hkv" -- "$base" --hq 6 --hkv 4
expect "unknown flag"         2 "unknown argument '--bogus'" -- "$base" --bogus
expect "missing value"        2 "--csv: expected a value"    -- "$base" --csv
expect "head dim too big"     2 "--d: 4096 is out of range"  -- "$base" --d 4096
expect "bad dtype"            2 "--dtype: expected f16, bf16 or e4m3" -- "$base" --dtype fp8
expect "bad inputs mode"      2 "--inputs: expected normal, outlier, sparse-outlier, nonfinite-q" -- "$base" --inputs zeros
expect "fp8 flag without e4m3" 2 "--fp8-scale: it sets how --dtype e4m3 quantizes" -- "$base" --fp8-scale tensor
expect "bad fp8-hadamard"     2 "--fp8-hadamard: expected on or off, got 'no'" -- "$base" --dtype e4m3 --fp8-hadamard no
expect "seqlens count"        2 "--seqlens: 2 lengths given for --b 3" -- "$base" --b 3 --seqlens 4,5
expect "seqlen beyond M"      2 "each must be in 1..M"       -- "$base" --b 1 --m 100 --seqlens 101
expect "bad seqlen dist"      2 "--seqlen-dist: expected"    -- "$base" --seqlen-dist zipf
expect "unknown variant"      2 "--variant: expected one of 00 (--list says what each is), got 'zz'" -- "$base" --variant zz
expect "bad sweep line"       2 "expected B Hq Hkv N M d causal" -- "$base" --sweep tests/data/bad_sweep.txt
expect "kv-block not x64"     2 "--kv-block: expected a multiple of 64 from 64 to 1024, got '100'" -- "$b06" --kv-block 100
expect "kv-block too big"     2 "--kv-block: expected a multiple of 64 from 64 to 1024, got '2048'" -- "$b06" --kv-block 2048
expect "kv-block not rung 06" 2 "--kv-block: this rung has no KV blocks to size" -- "$base" --kv-block 128
expect "bad flush"            2 "--flush: expected write or write+read, got 'read'" -- "$base" --flush read
expect "page-size not x16"    2 "--page-size: expected 0 (contiguous) or a multiple of 16 from 16 to 256, got '24'" -- "$base" --page-size 24
expect "warm-ms negative"     2 "--warm-ms: -5 is out of range; allowed 0..60000" -- "$base" --warm-ms -5
expect "warm-ms too big"      2 "--warm-ms: 60001 is out of range; allowed 0..60000" -- "$b06" --warm-ms 60001
expect "warm-ms not a number" 2 "--warm-ms: expected an integer, got '5s'" -- "$base" --warm-ms 5s
expect "page-size too big"    2 "--page-size: expected 0 (contiguous) or a multiple of 16 from 16 to 256, got '512'" -- "$base" --page-size 512
# Good values parse (--list then answers without a GPU).
expect "kv-block 256 accepted" 0 "$("$b06" --probe)" -- "$b06" --kv-block 256 --probe
expect "flush write accepted"  0 "$("$base" --list | head -n 1)" -- "$base" --flush write --list
expect "page-size 64 accepted" 0 "$("$base" --list | head -n 1)" -- "$base" --page-size 64 --list
expect "warm-ms 5000 accepted"  0 "$("$base" --list | head -n 1)" -- "$base" --warm-ms 5000 --list
expect "profile accepted"       0 "$("$base" --list | head -n 1)" -- "$base" --profile --list

# --help prints the whole text, exit 0 (main() must hold all of it: it grows with the flags), with
# the default shape and the .npy rules; rung 06's names its planners and --kv-block.
for b in "$base" "$b06"; do
  out=$("$b" --help 2>&1); rc=$?
  if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q 'only reads K and V)$' \
     && printf '%s' "$out" | grep -qF -- '--flush write|write+read' && printf '%s' "$out" | grep -qF -- '--page-size P' \
     && printf '%s' "$out" | grep -qF -- '--warm-ms MS' \
     && printf '%s' "$out" | grep -q -- 'default --b [0-9]* --hq [0-9]* --hkv [0-9]* --n [0-9]* --m [0-9]* --d [0-9]*' \
     && printf '%s' "$out" | grep -qF -- 'float16 or float32, C order' \
     && { [ "$b" = "$base" ] || printf '%s' "$out" | grep -qF -- '--planner NAME (the split planner): fa, greedy, balanced, auto'; } \
     && { [ "$b" = "$base" ] || printf '%s' "$out" | grep -qF -- '--kv-block K'; }; then
    echo "ok $(basename "$b") --help: whole, with the defaults, the .npy rules and its own flags"
  else
    echo "FAIL $(basename "$b") --help: exit $rc, cut or lacking defaults/.npy rules/own flags: $(printf '%s\n' "$out" | tail -n 1)"
  fi
done

# ---- issue 21's cases, through the binaries (tests/fuzz.c feeds the same parsers thousands more) ----
# A rung's own flag is a usage error (exit 2) before the shape is looked at; other rungs refuse it.
expect "planner unknown"      2 "--planner: expected one of fa, greedy, balanced, auto, got 'nope'" -- "$b06" --planner nope
expect "planner at a prefill shape" 2 "--planner: expected one of" -- "$b06" --planner nope --n 1024
expect "planner not rung 06"  2 "--planner: this rung has no split planner" -- "$base" --planner fa
# .npy files that lie: the crash (a huge shape over 4 KiB of data), a header without ')', trailing bytes.
mknpy() {  # mknpy DIR DICT DATA_BYTES: q.npy, k.npy and v.npy in DIR, format 1.0, as numpy pads them
  local dir=$1 dict=$2 bytes=$3 total hl f
  mkdir -p "$dir"
  total=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 )); hl=$((total - 10))
  for f in q k v; do
    { printf '\223NUMPY\001\000'; printf "\\$(printf '%03o' $((hl % 256)))\\$(printf '%03o' $((hl / 256)))"
      printf '%s%*s\n' "$dict" $((hl - ${#dict} - 1)) ''; head -c "$bytes" /dev/zero; } > "$dir/$f.npy"
  done
}
mknpy "$tmp/huge" "{'descr': '<f2', 'fortran_order': False, 'shape': (1000, 1000, 1000, 1000), }" 4096
expect "npy huge shape"       2 "$tmp/huge/q.npy: data shorter than its shape" -- "$base" --load "$tmp/huge"
mknpy "$tmp/paren" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2, }" 8
expect "npy header without )" 2 "$tmp/paren/q.npy: malformed header: the shape tuple has no closing ')'" -- "$base" --load "$tmp/paren"
mknpy "$tmp/trail" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), }" 11
expect "npy trailing bytes"   2 "$tmp/trail/q.npy: 3 bytes after the data" -- "$base" --load "$tmp/trail"
mknpy "$tmp/good" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 3, 64), }" 768
if [ "$("$base" --probe)" = none ]; then
  expect "npy good (no device: 4)" 4 "no CUDA device" -- "$base" --load "$tmp/good" --causal
else
  "$base" --load "$tmp/good" --causal --no-time --quiet >/dev/null 2>&1; rc=$?
  [ $rc -eq 0 ] && echo "ok npy good: loaded and run" || echo "FAIL npy good: exit $rc"
fi
# With --load the files give the shape: shape flags and per-request lengths are refused.
expect "load with --n"        2 "--load: the shape comes from q.npy, k.npy and v.npy; drop --n" -- "$base" --load "$tmp/good" --n 5
expect "load with --seqlens"  2 "--load: per-request KV lengths (--seqlens, --seqlen-dist) cannot be given" -- "$base" --load "$tmp/good" --seqlens 5
# Sweep files that held no shape, or were not text: one line each, exit 2.
: > "$tmp/empty.txt"; printf '# B Hq Hkv N M d causal\n\n' > "$tmp/comments.txt"
printf '1 2 3\0 4 5 6 7\n' > "$tmp/nul.txt"; printf 'garbage line\n' > "$tmp/garbage.txt"
expect "sweep empty"          2 "no shapes in it (the file is empty)" -- "$base" --sweep "$tmp/empty.txt"
expect "sweep comments only"  2 "no shapes in it (only blank lines and comments)" -- "$base" --sweep "$tmp/comments.txt"
expect "sweep a directory"    2 "--sweep $tmp: a directory" -- "$base" --sweep "$tmp"
expect "sweep NUL byte"       2 "nul.txt:1: a NUL byte at column 6" -- "$base" --sweep "$tmp/nul.txt"
expect "sweep garbage line"   2 "garbage.txt:1: sweep line 'garbage line': expected" -- "$base" --sweep "$tmp/garbage.txt"

# Each rung's default shape, and the other shape its --help suggests, is one it runs: without a GPU
# they reach the device check (exit 4); on a GPU the default runs and passes (checked, not timed).
probe=$("$base" --probe)
for b in "$bin"/0[0-9]_*; do
  name=$(basename "$b")
  if [ "$probe" = none ]; then
    want=4 out=$("$b" 2>&1); rc=$?
  else
    want=0 out=$("$b" --no-time --quiet 2>&1); rc=$?
  fi
  if [ $rc -eq $want ]; then echo "ok $name runs its default shape (exit $rc)"
  elif [ $rc -eq 3 ] && printf '%s' "$out" | grep -q 'unsupported: .*needs a Hopper GPU'; then
    echo "ok $name: its default shape needs a Hopper GPU, not this one"
  else echo "FAIL $name default shape: exit $rc, expected $want ($out)"; fi
  ex=$("$b" --help | sed -n 's/^example:[[:space:]]*//p')
  if [ -z "$ex" ]; then echo "FAIL $name --help has no 'example:' line"
  elif [ "$probe" = none ]; then
    # shellcheck disable=SC2086
    out=$("$b" $ex 2>&1); rc=$?
    [ $rc -eq 4 ] && echo "ok $name runs its example ($ex)" || echo "FAIL $name example '$ex': exit $rc ($out)"
  else
    echo "skip $name example: not run on a GPU (make stage's hint; its default above ran)"
  fi
done

# --pass: "backward" for the binary whose folder defines rung_grad_own (rung 08), "forward" for every
# other; the tour, the forward sweeps and make profile leave the backward ones out by it.
for b in "$bin"/0[0-9]_*; do
  name=$(basename "$b")
  want=forward; grep -qs 'rung_grad_own' "$name"/*.cu && want=backward
  out=$("$b" --pass 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$out" = $want ] && echo "ok $name --pass: $want" || echo "FAIL $name --pass: exit $rc, '$out', expected $want"
done

# A head dim a rung does not support: refused with "unsupported: <reason>", exit 3, even with no GPU.
for b in "$bin"/0[0-9]_*; do
  out=$("$b" --d 24 --n 64 2>&1); rc=$?
  case $rc in
    3) printf '%s' "$out" | grep -q 'unsupported: [a-z0-9]' && echo "ok $(basename "$b") refuses d=24 with a reason" \
         || echo "FAIL $(basename "$b") d=24: exit 3 without 'unsupported: <reason>' ($out)";;
    0|1|4) echo "ok $(basename "$b") accepts d=24";;
    *) echo "FAIL $(basename "$b") d=24: exit $rc ($out)";;
  esac
done

# A paged KV cache: rung 06 reads it (exit 4 with no GPU, 0 with one); every other rung refuses it
# with "unsupported: <reason>", exit 3, before any GPU work -- a rung that forgot would read the
# page pools as contiguous K and V.
for b in "$bin"/0[0-9]_*; do
  name=$(basename "$b")
  for v in $("$b" --list | cut -f1); do
    out=$("$b" --variant "$v" --b 2 --hq 8 --hkv 1 --n 1 --m 300 --d 128 --page-size 16 --no-time 2>&1); rc=$?
    case $out in *"is an FP8 step"*)          # an FP8 step is asked in its own dtype
      out=$("$b" --variant "$v" --dtype e4m3 --b 2 --hq 8 --hkv 1 --n 1 --m 300 --d 128 --page-size 16 --no-time 2>&1); rc=$?;;
    esac
    case $name:$rc in
      06_*:0|06_*:4) echo "ok $v reads a paged KV cache";;
      06_*:*) echo "FAIL $v --page-size 16: exit $rc ($out)";;
      *:3) printf '%s' "$out" | grep -q 'unsupported: .*paged KV cache' && echo "ok $v refuses a paged KV cache with a reason" \
             || echo "FAIL $v --page-size 16: exit 3 without 'unsupported: ... paged KV cache' ($out)";;
      *) echo "FAIL $v --page-size 16: exit $rc, expected 3 (unsupported) ($out)";;
    esac
  done
done

# float8 e4m3 (--dtype e4m3): only an FP8 step runs it (rung 07's 07g and 07g-*: exit 4 with no GPU, 0 with
# one); every other step of every rung refuses it with a reason, exit 3, and an FP8 step refuses
# float16 so -- a 16-bit step that forgot would compute in float16 and be checked against FP8's
# looser tolerance. Without --variant, rung 07 runs 07f for float16 and 07g-ov (the last FP8 step) for e4m3.
for b in "$bin"/0[0-9]_*; do
  name=$(basename "$b")
  for v in $("$b" --list | cut -f1); do
    out=$("$b" --variant "$v" --dtype e4m3 --b 1 --h 2 --n 77 --m 131 --d 128 --no-time 2>&1); rc=$?
    case $v:$rc in
      07g:0|07g:4|07g-*:0|07g-*:4) echo "ok $v runs --dtype e4m3";;
      07g:*|07g-*:*) echo "FAIL $v --dtype e4m3: exit $rc ($out)";;
      *:3) printf '%s' "$out" | grep -q "unsupported: $v computes in float16 or bfloat16; float8 e4m3" \
             && echo "ok $v refuses --dtype e4m3 with a reason" || echo "FAIL $v --dtype e4m3: exit 3 without the reason ($out)";;
      *) echo "FAIL $v --dtype e4m3: exit $rc, expected 3 (unsupported) ($out)";;
    esac
    case $v in 07g|07g-*)
      out=$("$b" --variant "$v" --b 1 --h 2 --n 77 --m 131 --d 128 --no-time 2>&1); rc=$?
      [ $rc -eq 3 ] && printf '%s' "$out" | grep -q "unsupported: $v is an FP8 step: it takes --dtype e4m3" \
        && echo "ok $v refuses float16 with a reason" || echo "FAIL $v float16: exit $rc, expected 3 ($out)";;
    esac
  done
done
b07=$bin/07_fa3_wgmma_tma
if [ "$("$base" --probe)" = none ] && [ -x "$b07" ]; then
  # the own variant follows the dtype: no exit 3 (refused) either way
  expect "07 own variant, float16" 4 "no CUDA device" -- "$b07" --d 128
  expect "07 own variant, e4m3"    4 "no CUDA device" -- "$b07" --d 128 --dtype e4m3
fi

# A shape too big for the device: needs the device to know its free memory.
if [ "$("$base" --probe)" != none ]; then
  expect "too big for device"  2 "GiB of device memory for Q, K, V, O and LSE;" -- "$base" --b 64 --h 64 --n 65536 --d 128 --no-check
fi

# ---- issue 35: every bad argument refused before the GPU runs, no hang, no silent accept ----
# --scale is checked as the float the kernels get; --h is the default of --hq and --hkv in any order.
expect "scale 1e-300 (was 0)"   2 "--scale: 1e-300 is outside float's normal range" -- "$base" --scale 1e-300
expect "scale 1e300 (was inf)"  2 "--scale: 1e300 is outside float's normal range" -- "$base" --scale 1e300
expect "--hq 8 --hkv 3 --h 8 (was Hkv 8)" 2 "--hq 8 --hkv 3: Hq must be a multiple of Hkv" -- "$base" --hq 8 --hkv 3 --h 8
expect "--h 8 --hkv 3"          2 "--h 8 --hkv 3: Hq must be a multiple of Hkv" -- "$base" --h 8 --hkv 3
expect "--hkv 4 --h 8 accepted" 0 "$("$base" --list | head -n 1)" -- "$base" --hkv 4 --h 8 --list
# --help wins over a bad value before it; cpu_tests takes no argument.
out=$("$base" --n 0 --help 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | head -n 1 | grep -q '^usage: ' && ! printf '%s' "$out" | grep -q 'error'; then
  echo "ok --n 0 --help prints the help, exit 0"
else echo "FAIL --n 0 --help: exit $rc, $(printf '%s\n' "$out" | head -n 1)"; fi
if [ -x "$bin/cpu_tests" ]; then
  expect "cpu_tests --bogus"    2 "cpu_tests: unknown argument '--bogus'" -- "$bin/cpu_tests" --bogus
  out=$("$bin/cpu_tests" --help 2>&1); rc=$?
  [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '^usage: cpu_tests' && ! printf '%s' "$out" | grep -q '^ok ' \
    && echo "ok cpu_tests --help: its usage, no test run" || echo "FAIL cpu_tests --help: exit $rc ($(printf '%s\n' "$out" | head -n 2))"
fi
# A message that echoes an argument: control bytes as \xNN, one line, cut near 1 KB.
out=$("$base" --variant "$(printf 'a\nb\033[31m')" 2>&1); rc=$?
if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -qF "got 'a\\x0ab\\x1b[31m'" \
   && ! printf '%s' "$out" | grep -q "$(printf '\033')"; then
  echo "ok --variant with a newline and an ESC: one line, escaped"
else echo "FAIL --variant with control bytes: exit $rc: $(printf '%s' "$out" | od -c | head -n 3)"; fi
big=$(head -c 100000 /dev/zero | tr '\0' x)
out=$("$base" --variant "$big" 2>&1); rc=$?
if [ $rc -eq 2 ] && [ ${#out} -lt 1200 ] && [ "${out%...}" != "$out" ]; then echo "ok --variant of 100000 characters: a message of ${#out}, cut with ..."
else echo "FAIL --variant of 100000 characters: exit $rc, a message of ${#out} characters"; fi
# Paths checked before the device: --save, --csv, --load, --sweep; a FIFO refused at once (timeout: a hang fails).
: > "$tmp/afile"; mkfifo "$tmp/fifo"
expect "save under a file"      2 "--save $tmp/afile/x: $tmp/afile is a regular file, not a directory" -- "$base" --save "$tmp/afile/x"
expect "save a file"            2 "--save $tmp/afile: a regular file, not a directory" -- "$base" --save "$tmp/afile"
expect "csv a directory"        2 "--csv $tmp: a directory; give a file name" -- "$base" --csv "$tmp"
expect "csv without its folder" 2 "--csv $tmp/nodir/x.csv: its folder $tmp/nodir does not exist" -- "$base" --csv "$tmp/nodir/x.csv"
expect "csv a FIFO"             2 "--csv $tmp/fifo: a FIFO, not a regular file" -- timeout 10 "$base" --csv "$tmp/fifo"
expect "sweep a FIFO (was a hang)" 2 "--sweep $tmp/fifo: a FIFO, not a regular file" -- timeout 10 "$base" --sweep "$tmp/fifo"
mkdir "$tmp/fifoload"; mkfifo "$tmp/fifoload/q.npy"
expect "load q.npy a FIFO (was a hang)" 2 "--load $tmp/fifoload: q.npy is a FIFO, not a regular file" -- timeout 10 "$base" --load "$tmp/fifoload"
expect "load not a folder"      2 "--load $tmp/afile: a regular file, not a directory" -- "$base" --load "$tmp/afile"
if [ "$("$base" --probe)" = none ]; then
  expect "save to a new folder (no device: 4)" 4 "no CUDA device" -- "$base" --save "$tmp/newsave/sub"
  [ ! -e "$tmp/newsave" ] && echo "ok save to a new folder: the check left nothing behind" || echo "FAIL save to a new folder: $tmp/newsave left behind"
fi
# A UTF-8 byte-order mark, named as such; --load's refusals name the files and their shapes, not flags.
printf '\357\273\2771 1 1 8 8 64 0\n' > "$tmp/bom.txt"
expect "sweep with a BOM"       2 "bom.txt:1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF)" -- "$base" --sweep "$tmp/bom.txt"
mknpy "$tmp/bomnpy" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 3, 64), }" 768
{ printf '\357\273\277'; cat "$tmp/bomnpy/k.npy"; } > "$tmp/bomnpy/q.npy"
expect "npy with a BOM"         2 "$tmp/bomnpy/q.npy: starts with a UTF-8 byte-order mark (bytes EF BB BF)" -- "$base" --load "$tmp/bomnpy"
mknpy "$tmp/heads" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 4, 64), }" 1024
mknpy "$tmp/heads3" "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 3, 4, 64), }" 1536
mv "$tmp/heads3/q.npy" "$tmp/heads/q.npy"
expect "load 3 heads over 2"    2 "--load $tmp/heads: q.npy has 3 heads and k.npy 2: the query heads must be a multiple" -- "$base" --load "$tmp/heads"
out=$("$base" --load "$tmp/heads" 2>&1)
printf '%s' "$out" | grep -q -- '--hq\|--hkv' && echo "FAIL load 3 heads over 2: names a flag never given: $out" || echo "ok load 3 heads over 2: names no flag"
# --check-sweep FILE: the rungs' parser on each line, no GPU: "ok N" or "bad N: reason", exit 0 or 2.
# The lines tools/peers.py accepted while the rungs refused them, and one it refused that they take.
printf '# B Hq Hkv N M d causal\n1 1 1 16 16 64 0 inputs=sparse-outlier\n-1 1 1 16 16 64 0\n1 1 1 0 16 64 0\n\n1 1 1 16 16 64 2\n1 3 2 16 16 64 0\n1 1 1 16 16 64 0 page=3\n1 2 2 1 16 64 0 dist=zipf\n' > "$tmp/peers.txt"
out=$("$base" --check-sweep "$tmp/peers.txt" 2>&1); rc=$?
got=$(printf '%s\n' "$out" | sed 's/:.*//' | tr '\n' ' ')
if [ $rc -eq 2 ] && [ "$got" = "ok 2 bad 3 bad 4 bad 6 bad 7 bad 8 bad 9 " ] && printf '%s' "$out" | grep -qxF 'bad 7: Hq 3, Hkv 2: Hq must be a multiple of Hkv (MHA, GQA or MQA)'; then
  echo "ok --check-sweep: the peers' lines, each ok or bad with its line number, exit 2"
else echo "FAIL --check-sweep on the peers' lines: exit $rc, '$got' ($out)"; fi
for f in sweeps/*.txt tests/gpu_cases.txt; do
  out=$("$base" --check-sweep "$f" 2>&1); rc=$?
  n=$(grep -cv '^[[:space:]]*\(#\|$\)' "$f")
  if [ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '^ok [0-9]*$')" -eq "$n" ]; then echo "ok --check-sweep $f: $n lines ok"
  else echo "FAIL --check-sweep $f: exit $rc, $(printf '%s\n' "$out" | grep -v '^ok ' | head -n 2)"; fi
done
expect "check-sweep empty file" 2 "--check-sweep $tmp/empty.txt: no shapes in it (the file is empty)" -- "$base" --check-sweep "$tmp/empty.txt"
expect "check-sweep a FIFO"     2 "--check-sweep $tmp/fifo: a FIFO, not a regular file" -- timeout 10 "$base" --check-sweep "$tmp/fifo"
expect "check-sweep with --sweep" 2 "--check-sweep and --sweep: give one or the other" -- "$base" --check-sweep "$tmp/peers.txt" --sweep "$tmp/peers.txt"

# A write that fails (here a file-size limit, as a full disk would) exits 2 with one line naming the
# path, and leaves the old files byte for byte: needs the device to get as far as writing (without
# one, tests/test_writes.c runs the same writers under the same limit).
if [ "$("$base" --probe)" = none ]; then
  echo "skip --save and --csv under a file-size limit: no CUDA device (tests/test_writes.c runs their writers so)"
else
  d=$tmp/limited
  mkdir -p "$d"
  if "$base" --b 1 --h 1 --n 16 --d 64 --no-time --quiet --save "$d" >/dev/null 2>&1 && cp "$d/o.npy" "$tmp/o.old" \
     && cp "$d/lse.npy" "$tmp/lse.old"; then
    # o.npy of [1, 16, 1024, 64] float16 is 2 MiB, past a 64 KiB limit
    out=$( (trap '' XFSZ; ulimit -f 64; "$base" --b 1 --h 16 --n 1024 --d 64 --no-time --quiet --save "$d") 2>&1); rc=$?
    if [ $rc -eq 2 ] && cmp -s "$d/o.npy" "$tmp/o.old" && cmp -s "$d/lse.npy" "$tmp/lse.old" && [ "$(ls -A "$d" | wc -l)" -eq 2 ] \
       && printf '%s' "$out" | grep -qF "error: --save $d: cannot write o.npy (File too large); o.npy and lse.npy are as they were"; then
      echo "ok --save under a file-size limit: exit 2, one line, the old o.npy and lse.npy byte for byte"
    else echo "FAIL --save under a file-size limit: exit $rc, files: $(ls -A "$d" | tr '\n' ' ') ($out)"; fi
  else echo "FAIL --save: a first, small save did not run"; fi
  csv=$tmp/limited.csv
  if "$base" --b 1 --h 1 --n 16 --d 64 --no-time --quiet --csv "$csv" >/dev/null 2>&1; then
    while [ "$(wc -c < "$csv")" -lt $((64 * 1024 - 60)) ]; do echo "# a line to bring the file near the limit" >> "$csv"; done
    cp "$csv" "$tmp/limited.old"
    out=$( (trap '' XFSZ; ulimit -f 64; "$base" --b 1 --h 1 --n 16 --d 64 --no-time --quiet --csv "$csv") 2>&1); rc=$?
    if [ $rc -eq 2 ] && cmp -s "$csv" "$tmp/limited.old" \
       && printf '%s' "$out" | grep -qF "error: --csv $csv: cannot append a row (File too large); the file is as it was"; then
      echo "ok --csv under a file-size limit: exit 2, one line, the file byte for byte (no partial row)"
    else echo "FAIL --csv under a file-size limit: exit $rc ($out)"; fi
  else echo "FAIL --csv: a first row was not written"; fi
fi
