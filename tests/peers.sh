#!/usr/bin/env bash
# tools/peers.py on bad input (issue 35), without PyTorch or a GPU: a sweep is checked by a rung
# binary (--check-sweep) before anything else, and every refusal is one line and exit 2, never a
# traceback or a hang. The rung binary is tests/data/fake-rung (its verdicts written in the test
# lines' comments), so that this runs without a build; where build/bin/00_baseline knows
# --check-sweep, the same bad lines go through it too.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then echo "skip peers: python3 not installed"; exit 0; fi
FAKE=tests/data/fake-rung

# refused NAME ARGS...: tools/peers.py ARGS exits 2 within 20 s, with one line of output (stdout and
# stderr together) and no Python traceback; $out holds the output
refused() {
  local name=$1 rc n; shift
  out=$(timeout 20 python3 tools/peers.py "$@" 2>&1 </dev/null); rc=$?
  n=$(printf '%s' "$out" | grep -c '')
  if [ $rc -eq 2 ] && [ "$n" -eq 1 ] && ! printf '%s' "$out" | grep -q Traceback; then echo "ok $name"
  else echo "FAIL $name: exit $rc, $n lines:"; printf '%s\n' "$out" | head -n 6 | sed 's/^/    /'; fi
}

# ---- lines the rungs refuse (issue 35's list), each alone in a file; the fake's verdict says why ----
line() {  # line FILE TEXT: a sweep file of one line
  printf '%s\n' "$2" > "$tmp/$1"
}
shape() {  # shape NAME: the line of $tmp/NAME.txt without its comment
  sed 's/ *#.*//' "$tmp/$1.txt"
}
line neg.txt      '-1 1 1 16 16 64 0 #fake-bad: B: -1 is out of range'
line n0.txt       '1 1 1 0 16 64 0 #fake-bad: N: 0 is out of range'
line causal2.txt  '1 1 1 16 16 64 2 #fake-bad: causal: 2 is out of range'
line hq3hkv2.txt  '1 3 2 16 16 64 0 #fake-bad: Hq 3 is not a multiple of Hkv 2'
line page3.txt    '1 2 2 16 16 64 0 page=3 #fake-bad: page=3; expected 0 or a multiple of 16'
line dist.txt     '4 2 2 1 64 64 0 dist=zipf #fake-bad: dist=zipf; expected equal, uniform or longtail'
line unknown.txt  '1 2 2 8 8 64 0 color=red #fake-bad: unknown key color'
bad_lines="neg n0 causal2 hq3hkv2 page3 dist unknown"
for f in $bad_lines; do
  refused "fake: '$(shape "$f")' refused in one line" --list --bin "$FAKE" --sweep "$tmp/$f.txt"
  contains "fake: the refusal names the file and line ($f)" "$out" "$tmp/$f.txt:1: "
done
# the check decides: a line that peers.py alone would take, refused by the binary
line veto.txt '1 2 2 8 8 64 0 #fake-bad: refused by the check'
refused "fake: a line the check refuses is refused (the binary decides, not peers.py)" --list --bin "$FAKE" --sweep "$tmp/veto.txt"
check "fake: the check's reason, as it said it" "$out" "error: $tmp/veto.txt:1: refused by the check"
# a byte-order mark: whatever the check says, no invisible character reaches the terminal
printf '\357\273\2771 2 2 8 8 64 0 #fake-bad: B: expected an integer, got '\''\357\273\2771'\''\n' > "$tmp/lead-mark.txt"
refused "fake: a file starting with a UTF-8 byte-order mark refused in one line" --list --bin "$FAKE" --sweep "$tmp/lead-mark.txt"
check "fake: the byte-order mark in the message is escaped, not raw" "$(printf '%s' "$out" | LC_ALL=C grep -c $'\xef\xbb\xbf')" 0
contains "fake: ... shown as \\ufeff" "$out" '\ufeff1'

# ---- the file itself: missing, a directory, binary, a FIFO (refused at once, never opened), empty ----
refused "a missing --sweep file" --list --bin "$FAKE" --sweep "$tmp/none.txt"
refused "a directory as --sweep" --list --bin "$FAKE" --sweep "$tmp"
printf '\177ELF\002\001\001\000\000\000\000\000\002\000>\000\360\377\377\377\n' > "$tmp/elf.txt"   # bytes that are not UTF-8 too
refused "a binary file as --sweep" --list --bin "$FAKE" --sweep "$tmp/elf.txt"
if mkfifo "$tmp/fifo" 2>/dev/null; then
  refused "a FIFO as --sweep: refused at once (no hang)" --list --bin "$FAKE" --sweep "$tmp/fifo"
else
  echo "skip a FIFO as --sweep: mkfifo fails here"
fi
printf '# only a comment\n\n' > "$tmp/empty.txt"
refused "a sweep with no shapes" --list --bin "$FAKE" --sweep "$tmp/empty.txt"

# ---- lines the rungs take: inputs=sparse-outlier, and every committed sweep and the GPU matrix ----
line sparse.txt '2 4 4 512 512 128 0 inputs=sparse-outlier'
got=$(python3 tools/peers.py --list --bin "$FAKE" --sweep "$tmp/sparse.txt" 2>&1); rc=$?
check "fake: inputs=sparse-outlier accepted (exit 0)" "$rc" 0
check "fake: ... and run" "$got" "run  2 4 4 512 512 128 0 f16 -"
# e4m3 lines: cuDNN's FP8 attention (cudnn-fp8) runs the forward where d is a multiple of 16 and a
# causal line has N = M; the backward has no FP8 peer
printf '2 4 4 512 512 128 1 dtype=e4m3\n2 4 4 512 512 72 0 dtype=e4m3\n2 4 4 512 256 128 1 dtype=e4m3\n' > "$tmp/e4m3.txt"
got=$(python3 tools/peers.py --list --bin "$FAKE" --sweep "$tmp/e4m3.txt" 2>&1); rc=$?
check "fake: e4m3 lines read (exit 0)" "$rc" 0
check "fake: ... causal at N = M run (cudnn-fp8)" "$(printf '%s\n' "$got" | sed -n 1p)" "run  2 4 4 512 512 128 1 e4m3 -"
contains "fake: ... d = 72 not run: d a multiple of 16" "$(printf '%s\n' "$got" | sed -n 2p)" "multiples of 16 (d = 72)"
contains "fake: ... causal with N != M not run" "$(printf '%s\n' "$got" | sed -n 3p)" "top-left"
got=$(python3 tools/peers.py --list --backward --bin "$FAKE" --sweep "$tmp/e4m3.txt" 2>&1)
contains "fake: ... none run backward" "$(printf '%s\n' "$got" | sed -n 1p)" "skip 2 4 4 512 512 128 1 e4m3"
for f in sweeps/*.txt tests/gpu_cases.txt; do
  got=$(python3 tools/peers.py --list --bin "$FAKE" --sweep "$f" 2>&1); rc=$?
  check "fake: $f read whole (exit 0, a line per shape)" "$rc $(printf '%s\n' "$got" | grep -c '^\(run \|skip\) ')" \
    "0 $(grep -cv '^[[:space:]]*\(#\|$\)' "$f")"
done

# ---- the binary: missing, one from before --check-sweep, one that reads the lines otherwise ----
line good.txt '1 2 2 8 8 64 0'
refused "--bin that does not exist" --list --bin "$tmp/no-such-rung" --sweep "$tmp/good.txt"
mkdir -p "$tmp/fresh/tools" && cp tools/peers.py "$tmp/fresh/tools/"
out=$(python3 "$tmp/fresh/tools/peers.py" --list --sweep "$tmp/good.txt" 2>&1); rc=$?
check "no build: exit 2" "$rc" 2
check "no build: one line saying to run make" "$(printf '%s\n' "$out" | grep -c .) $(printf '%s' "$out" | grep -c 'run make first')" "1 1"
out=$(FAKE_RUNG_OLD=1 python3 tools/peers.py --list --bin "$FAKE" --sweep "$tmp/good.txt" 2>&1); rc=$?
check "a build from before --check-sweep: exit 2, one line saying to run make" \
  "$rc $(printf '%s\n' "$out" | grep -c .) $(printf '%s' "$out" | grep -c 'run make')" "2 1 1"
FAKE_RUNG_SHIFT=1 refused "a check that counts lines otherwise: refused" --list --bin "$FAKE" --sweep "$tmp/good.txt"
contains "... saying the two read the line differently" "$out" "read this line differently"

# ---- arguments: argparse's errors in one line; --csv checked before any work ----
refused "an unknown argument" --bogus
refused "--runs abc" --list --runs abc --bin "$FAKE" --sweep "$tmp/good.txt"
refused "--runs -1" --runs -1 --bin "$FAKE" --sweep "$tmp/good.txt" --csv "$tmp/o.csv"
refused "--warm-ms -1" --warm-ms -1 --bin "$FAKE" --sweep "$tmp/good.txt" --csv "$tmp/o.csv"
contains "... naming --warm-ms and what it allows" "$out" "argument --warm-ms: expected 0 to 60000, got -1"
refused "--warm-ms 60001" --list --warm-ms 60001 --bin "$FAKE" --sweep "$tmp/good.txt"
refused "--warm-ms abc" --list --warm-ms abc --bin "$FAKE" --sweep "$tmp/good.txt"
contains "... naming --warm-ms" "$out" "argument --warm-ms"
got=$(python3 tools/peers.py --list --warm-ms 5000 --bin "$FAKE" --sweep "$tmp/good.txt" 2>&1); rc=$?
check "--warm-ms 5000 accepted (exit 0)" "$rc $got" "0 run  1 2 2 8 8 64 0 f16 -"
refused "no --sweep" --list
refused "no --csv and no --list" --bin "$FAKE" --sweep "$tmp/good.txt"
refused "--csv in a directory that does not exist" --bin "$FAKE" --sweep "$tmp/good.txt" --csv "$tmp/no/dir/o.csv"
refused "--csv a directory" --bin "$FAKE" --sweep "$tmp/good.txt" --csv "$tmp"
out=$(python3 tools/peers.py --help 2>&1); rc=$?
check "--help exits 0" "$rc" 0
contains "--help names --bin" "$out" "--bin BIN"
contains "--help names --warm-ms" "$out" "--warm-ms MS"

# ---- PyTorch missing (shadowed by a torch package that does not import): one line, no CSV made ----
mkdir -p "$tmp/notorch/torch"
printf 'raise ModuleNotFoundError("No module named %s", name="torch")\n' "'torch'" > "$tmp/notorch/torch/__init__.py"
PYTHONPATH="$tmp/notorch" refused "without PyTorch" --bin "$FAKE" --sweep "$tmp/good.txt" --csv "$tmp/o.csv"
contains "... saying PyTorch is not installed and the peers are skipped" "$out" "PyTorch is not installed"
check "without PyTorch: no CSV written" "$([ -e "$tmp/o.csv" ] && echo made || echo none)" none

# ---- the same lines through the rungs' own check, where this build has it ----
B=build/bin/00_baseline
if [ -x "$B" ] && "$B" --check-sweep "$tmp/good.txt" 2>/dev/null | grep -qx 'ok 1'; then
  for f in $bad_lines; do
    refused "$B: '$(shape "$f")' refused in one line" --list --sweep "$tmp/$f.txt"
  done
  refused "$B: a file starting with a UTF-8 byte-order mark refused in one line" --list --sweep "$tmp/lead-mark.txt"
  check "$B: no raw byte-order mark in its refusal" "$(printf '%s' "$out" | LC_ALL=C grep -c $'\xef\xbb\xbf')" 0
  check "$B: the byte-order mark named as such" "$(printf '%s' "$out" | grep -cE 'BOM|[Bb]yte.order mark')" 1
  for f in elf empty; do refused "$B: $f.txt refused in one line" --list --sweep "$tmp/$f.txt"; done
  got=$(python3 tools/peers.py --list --sweep "$tmp/sparse.txt" 2>&1); rc=$?
  check "$B: inputs=sparse-outlier accepted by the check and peers.py" "$rc $got" "0 run  2 4 4 512 512 128 0 f16 -"
  for f in sweeps/*.txt tests/gpu_cases.txt; do
    got=$(python3 tools/peers.py --list --sweep "$f" 2>&1); rc=$?
    check "$B: $f read whole (exit 0, a line per shape)" "$rc $(printf '%s\n' "$got" | grep -c '^\(run \|skip\) ')" \
      "0 $(grep -cv '^[[:space:]]*\(#\|$\)' "$f")"
  done
else
  echo "skip the rungs' own check: $B is not built or has no --check-sweep (make builds it)"
fi
