#!/usr/bin/env bash
# Bad arguments get one clear line naming the argument, and a non-zero exit, before any GPU work.
# Prints "ok <name>" or "FAIL <name>: <why>" per case.  Usage: tests/cli.sh build/bin
set -u
bin=${1:-build/bin}
base=$bin/00_baseline

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
expect "bad dtype"            2 "--dtype: expected f16 or bf16" -- "$base" --dtype fp8
expect "bad inputs mode"      2 "--inputs: expected normal or outlier" -- "$base" --inputs zeros
expect "seqlens count"        2 "--seqlens: 2 lengths given for --b 3" -- "$base" --b 3 --seqlens 4,5
expect "seqlen beyond M"      2 "each must be in 1..M"       -- "$base" --b 1 --m 100 --seqlens 101
expect "bad seqlen dist"      2 "--seqlen-dist: expected"    -- "$base" --seqlen-dist zipf
expect "unknown variant"      2 "--variant zz: this rung has" -- "$base" --variant zz
expect "bad sweep line"       2 "expected B Hq Hkv N M d causal" -- "$base" --sweep tests/data/bad_sweep.txt
expect "kv-block not x64"     2 "--kv-block: expected a multiple of 64 from 64 to 1024, got '100'" -- "$base" --kv-block 100
expect "kv-block too big"     2 "--kv-block: expected a multiple of 64 from 64 to 1024, got '2048'" -- "$base" --kv-block 2048
expect "bad flush"            2 "--flush: expected write or write+read, got 'read'" -- "$base" --flush read
expect "page-size not x16"    2 "--page-size: expected 0 (contiguous) or a multiple of 16 from 16 to 256, got '24'" -- "$base" --page-size 24
expect "page-size too big"    2 "--page-size: expected 0 (contiguous) or a multiple of 16 from 16 to 256, got '512'" -- "$base" --page-size 512
# Good values parse (--list then answers without a GPU).
expect "kv-block 256 accepted" 0 "$("$base" --list | head -n 1)" -- "$base" --kv-block 256 --list
expect "flush write accepted"  0 "$("$base" --list | head -n 1)" -- "$base" --flush write --list
expect "page-size 64 accepted" 0 "$("$base" --list | head -n 1)" -- "$base" --page-size 64 --list
expect "profile accepted"       0 "$("$base" --list | head -n 1)" -- "$base" --profile --list

# --help prints the whole text, exit 0 (main() must hold all of it: it grows with the flags).
out=$("$base" --help 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q 'only reads K and V)$' \
   && printf '%s' "$out" | grep -qF -- '--flush write|write+read' && printf '%s' "$out" | grep -qF -- '--kv-block K' \
   && printf '%s' "$out" | grep -qF -- '--page-size P'; then
  echo "ok help lists --flush, --kv-block and --page-size, whole"
else
  echo "FAIL help: exit $rc, cut or lacking --flush/--kv-block/--page-size: $(printf '%s\n' "$out" | tail -n 1)"
fi

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
    case $name:$rc in
      06_*:0|06_*:4) echo "ok $v reads a paged KV cache";;
      06_*:*) echo "FAIL $v --page-size 16: exit $rc ($out)";;
      *:3) printf '%s' "$out" | grep -q 'unsupported: .*paged KV cache' && echo "ok $v refuses a paged KV cache with a reason" \
             || echo "FAIL $v --page-size 16: exit 3 without 'unsupported: ... paged KV cache' ($out)";;
      *) echo "FAIL $v --page-size 16: exit $rc, expected 3 (unsupported) ($out)";;
    esac
  done
done

# A shape too big for the device: needs the device to know its free memory.
if [ "$("$base" --probe)" != none ]; then
  expect "too big for device"  2 "GiB of device memory for Q, K, V, O and LSE;" -- "$base" --b 64 --h 64 --n 65536 --d 128 --no-check
fi
