#!/usr/bin/env bash
# A newcomer's first commands (issue 21): make without gnuplot succeeds and names the command that
# draws the plots; make stage N reaches the device check for every rung (its default shape is one it
# runs) and refuses a word with one clean line; make stage N builds rung N alone, and its table and
# exit codes (issue 34: one header; a fake rung's variants); tools/readme_results.sh --help prints
# help and rewrites nothing. Prints "ok NAME" or "FAIL NAME: why" per check.  Usage: tests/tools.sh
. "$(dirname "$0")/lib.sh"
# what make hands the tools (a make test N=3, or an ARGS in the caller's environment, must not reach these checks)
unset ARGS N SWEEPS RUNGS LADDER_ARGS RUNG_ARGS MAKE_RUNG_GOALS MAKE_RUNG_N_FROM
probe=$(build/bin/00_baseline --probe 2>/dev/null || echo none)

# ---- make without gnuplot: what `make` runs after the build (tools/tour.sh), with a PATH that has
#      every command but gnuplot, and ATTN_NO_INSTALL=1 (as a user who is not root) ----
if [ "$probe" = none ]; then
  mkdir -p "$tmp/bin"
  IFS=: read -ra dirs <<< "$PATH"
  for d in "${dirs[@]}"; do [ -d "$d" ] && ln -s "$d"/* "$tmp/bin/" 2>/dev/null; done
  rm -f "$tmp/bin"/gnuplot*
  out=$(PATH="$tmp/bin" ATTN_NO_INSTALL=1 tools/tour.sh 2>&1); rc=$?
  check "make without gnuplot exits 0" "$rc" 0
  contains "make without gnuplot names the command that draws the plots" "$out" "to draw them: "
  contains "... which ends in make plots" "$out" "make plots"
  check "... in two lines" "$(printf '%s\n' "$out" | wc -l)" 2
else
  echo "skip make without gnuplot: a GPU is here (make would run the tour)"
fi

# ---- make stage ----
out=$(tools/stage.sh abc 2>&1); rc=$?
check "make stage abc exits 2" "$rc" 2
rungs=$(ls -d 0[0-9]_* | paste -sd' ')
check "make stage abc says what it expected, in one line" "$out" \
  "make stage: expected a rung number, got 'abc'; the rungs are $rungs"
if [ "$probe" = none ]; then
  for d in 0[0-9]_*/; do
    [ -x "build/bin/${d%/}" ] || continue
    n=${d%%_*}
    out=$(tools/stage.sh "$n" 2>&1); rc=$?
    check "make stage $((10#$n)) reaches the device check (exit 4)" "$rc:$(printf '%s' "$out" | grep -c 'no CUDA device found')" "4:1"
  done
else
  echo "skip make stage N: a GPU is here (tests/cli.sh runs each rung's default shape)"
fi

# ---- make stage N builds rung N alone: what make -n would compile from an empty build folder ----
if command -v "${NVCC:-nvcc}" >/dev/null; then
  mkn() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n --no-print-directory BUILD="$tmp/nobuild" "$@" 2>&1; }
  out=$(mkn stage 1)
  check "make stage 1 compiles rung 01 and common/ alone (make -n, an empty build folder)" \
    "$(printf '%s\n' "$out" | grep -oE ' -c [^ ]+' | awk '{ sub(/\/[^\/]*$/, "", $2); print $2 }' | sort -u | paste -sd' ')" \
    "01_minimal common"
  check "... and links one binary, build/bin/01_minimal" \
    "$(printf '%s\n' "$out" | grep -oE " -o $tmp/nobuild/bin/[^ ]+" | sed "s|.*/||" | paste -sd' ')" "01_minimal"
  check "make stage N=1 the same" "$(mkn stage N=1 | grep -c ' -c ')" "$(printf '%s\n' "$out" | grep -c ' -c ')"
  check "make stage abc compiles nothing (stage.sh says what it expected)" "$(mkn stage abc | grep -c ' -c ')" 0
else
  echo "skip make stage N builds rung N alone: no nvcc (the Makefile needs it)"
fi

# ---- make stage's table and exit code, through a fake rung (STAGE_BIN): one header, one row per
#      variant; 0 when each ran or refused by design (exit 3), 1 on a failure or a crash, 3 when
#      none ran, 2 and 4 said once ----
fake=$(ls -d 0[0-9]_* | tail -n 1)
mkdir -p "$tmp/stage"
cat > "$tmp/stage/$fake" <<'FAKE'
#!/usr/bin/env bash
# A rung whose variants a, b, c exit as FAKE_RC says ("0 3 1": a 0, b 3, c 1; "segv" kills it);
# the table header unless --no-header, then its row.
case " $* " in
  *" --list "*) printf 'a\tone\tx\nb\ttwo\tx\nc\tthree\tx\n'; exit 0 ;;
  *" --help "*) echo "example:  --b 1"; exit 0 ;;
esac
v=$2; read -ra rcs <<< "$FAKE_RC"
case $v in a) rc=${rcs[0]} ;; b) rc=${rcs[1]} ;; *) rc=${rcs[2]} ;; esac
echo "$v called" >> "$FAKE_LOG"
[ "$rc" = early ] && { kill -SEGV $$; }                # a crash before any output
[ "$3" = --no-header ] || echo "rung     B   Hq  status"
[ "$rc" = 4 ] && { echo "no CUDA device found" >&2; exit 4; }
echo "$v        1    1  row"
[ "$rc" = segv ] && kill -SEGV $$
exit "$rc"
FAKE
chmod +x "$tmp/stage/$fake"
stage_fake() {  # stage_fake RCS: run make stage on the fake; sets out, rc, calls
  : > "$tmp/stage.log"
  out=$(FAKE_RC=$1 FAKE_LOG=$tmp/stage.log STAGE_BIN=$tmp/stage tools/stage.sh "${fake%%_*}" 2>&1); rc=$?
  calls=$(wc -l < "$tmp/stage.log")
}
stage_fake "0 3 0"
check "make stage: ran, refused by design (exit 3), ran -> exit 0, three rows, one header" \
  "$rc:$(printf '%s\n' "$out" | grep -c '^rung '):$(printf '%s\n' "$out" | grep -c ' row$')" "0:1:3"
stage_fake "3 0 0"
check "make stage: the first variant refused -> still one header, exit 0" \
  "$rc:$(printf '%s\n' "$out" | grep -c '^rung ')" "0:1"
stage_fake "early 0 0"
check "make stage: the first variant crashed before its header -> the next prints it; exit 1" \
  "$rc:$(printf '%s\n' "$out" | grep -c '^rung '):$calls" "1:1:3"
stage_fake "0 1 0"
check "make stage: a failed check -> exit 1, every variant still run" "$rc:$calls" "1:3"
has "... and the failure named on the last line" "$(printf '%s\n' "$out" | tail -n 1)" \
  "make stage ${fake%%_*}: FAILED: b (exit 1)"
stage_fake "0 0 segv"
check "make stage: a crash -> exit 1" "$rc" 1
has "... named with its signal" "$(printf '%s\n' "$out" | tail -n 1)" "make stage ${fake%%_*}: FAILED: c (exit 139, signal 11)"
stage_fake "3 3 3"
check "make stage: every variant refused -> exit 3 (nothing ran)" "$rc:$calls" "3:3"
stage_fake "4 4 4"
check "make stage: no device -> exit 4 after the first variant, said once" \
  "$rc:$calls:$(printf '%s' "$out" | grep -c 'no CUDA device found')" "4:1:1"
stage_fake "2 2 2"
check "make stage: bad arguments -> exit 2 after the first variant" "$rc:$calls" "2:1"

# ---- make stage's ARGS and rung number (issue 35): ARGS reaches the binary split as a shell splits
#      words, nothing in it expanded or run; two numbers, a second one in N, a word: refused in one
#      line, nothing built or run. A fake rung (STAGE_BIN) prints its arguments, one a line ----
mkdir -p "$tmp/argv"
printf '%s\n' '#!/usr/bin/env bash' 'case " $* " in *" --list "*) printf "a\tone\tx\n"; exit 0 ;; *" --help "*) echo "example:  --b 1"; exit 0 ;; esac' \
  'printf "<%s>\n" "$@"' > "$tmp/argv/$fake"
chmod +x "$tmp/argv/$fake"
nf=${fake%%_*}; nf=$((10#$nf))
argv_of() { printf '%s\n' "$1" | grep '^<' | paste -sd' '; }    # the fake's arguments, on one line
# a backtick, a $(...) and make's $(shell ...) that would each leave a file behind if run
ARGS_IN='--csv "my file.csv" '"'a  b'"' c\ d "" "e\"f" `touch '"$tmp"'/ran1` $(touch '"$tmp"'/ran2) $(shell touch '"$tmp"'/ran3) $HOME *'
ARGS_OUT='<--variant> <a> <--csv> <my file.csv> <a  b> <c d> <> <e"f> <`touch> <'"$tmp"'/ran1`> <$(touch> <'"$tmp"'/ran2)> <$(shell> <touch> <'"$tmp"'/ran3)> <$HOME> <*>'
out=$(MAKE_RUNG_GOALS=$nf ARGS=$ARGS_IN STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage's ARGS: quotes and backslashes as a shell has them, nothing expanded (stage.sh --make)" "$rc:$(argv_of "$out")" "0:$ARGS_OUT"
out=$(STAGE_BIN=$tmp/argv tools/stage.sh "$nf" '--csv "my file.csv"' 2>&1)
check "tools/stage.sh N ARGS splits ARGS the same way" "$(argv_of "$out")" "<--variant> <a> <--csv> <my file.csv>"
out=$(MAKE_RUNG_GOALS=$nf ARGS='--csv "my file.csv' STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage: an unmatched quote in ARGS is refused (exit 2, one line, nothing run)" "$rc:$(printf '%s\n' "$out" | wc -l):$(argv_of "$out")" "2:1:"
contains "... saying so" "$out" "make stage: ARGS has an unmatched \" quote"
for g in "$nf 6" "1; echo hi" abc; do
  out=$(MAKE_RUNG_GOALS=$g STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
  check "make stage $g: refused (exit 2, one line, nothing run)" "$rc:$(printf '%s\n' "$out" | wc -l):$(argv_of "$out")" "2:1:"
done
out=$(MAKE_RUNG_GOALS=$nf N=6 STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage $nf N=6: refused (exit 2), nothing run" "$rc:$(argv_of "$out")" "2:"
has "... in one line naming both" "$out" "make stage: the rung is given twice, as '$nf' and as N='6': give one"
out=$(N=$nf STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage N=$nf runs rung $nf" "$rc:$(argv_of "$out")" "0:<--variant> <a>"
out=$(MAKE_RUNG_GOALS=$nf N=$nf STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage $nf N=$nf (the same number twice) runs it" "$rc:$(argv_of "$out")" "0:<--variant> <a>"
out=$(N=-1 STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1); rc=$?
check "make stage N=-1: refused in one line (exit 2)" "$rc:$out" "2:make stage: expected a rung number, got '-1'; the rungs are $rungs"
out=$(MAKE_RUNG_GOALS=$'1\e[2J' STAGE_BIN=$tmp/argv tools/stage.sh --make 2>&1)
check "make stage: an escape byte in the number is shown as \\x1b, not sent to the terminal" "$out" \
  "make stage: expected a rung number, got '1\\x1b[2J'; the rungs are $rungs"
# through make itself (-o: the binary is taken as built; STAGE_BIN: the fake runs)
if command -v "${NVCC:-nvcc}" >/dev/null; then
  mks() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS STAGE_BIN="$tmp/argv" make --no-print-directory -o "build/bin/$fake" "$@" 2>&1; }
  out=$(mks stage "$nf" ARGS="$ARGS_IN"); rc=$?
  check "make stage $nf ARGS='--csv \"my file.csv\" ...': the binary gets the arguments whole" "$rc:$(argv_of "$out")" "0:$ARGS_OUT"
  check "... and no backtick, \$(...) or \$(shell ...) in ARGS was run" "$(ls "$tmp" | grep -c '^ran')" 0
  out=$(ARGS='--csv "my file.csv"' mks stage "$nf")
  check "ARGS from the environment: the same" "$(argv_of "$out")" "<--variant> <a> <--csv> <my file.csv>"
  # refused by tools/stage.sh before anything is built or run; make adds its "Error 2" line
  for g in "$nf 6" "$nf N=6" "1; echo hi" "abc" "N=-1" "N=\$(shell touch $tmp/ran4)"; do
    case $g in *" N="*) out=$(mks stage "${g%% *}" "${g#* }") ;; N=*) out=$(mks stage "$g") ;;
      "$nf 6") out=$(mks stage "$nf" 6) ;; *) out=$(mks stage "$g") ;; esac; rc=$?
    check "make stage $g: exit 2, our line first, then make's Error 2, nothing built or run" \
      "$rc:$(printf '%s\n' "$out" | sed -n 1p | cut -c1-11):$(printf '%s\n' "$out" | sed 1d | grep -vc '^make: \*\*\* \[Makefile:[0-9]*: stage\] Error 2$'):$(argv_of "$out")" "2:make stage::0:"
  done
  check "make stage N='\$(shell ...)': make ran none of it" "$(ls "$tmp" | grep -c '^ran')" 0
  out=$(mks stage "1; echo hi")
  check "make stage \"1; echo hi\": no missing separator, no echo" "$(printf '%s\n' "$out" | grep -c -e 'missing separator' -e '^hi$' -e 'No rule')" 0
  # make reads -1 as an option of its own before the Makefile is read: its usage, exit 2, nothing of ours
  out=$(mks stage -1); rc=$?
  check "make stage -1: make's own 'invalid option' (it parses -1 before the Makefile), exit 2, nothing run" \
    "$rc:$(printf '%s\n' "$out" | grep -c "invalid option"):$(argv_of "$out")" "2:1:"
  out=$(mks stage -- -1); rc=$?
  check "make stage -- -1 (after --, -1 is a goal): our one line, exit 2" "$rc:$(printf '%s\n' "$out" | sed -n 1p)" \
    "2:make stage: expected a rung number, got '-1'; the rungs are $rungs"
else
  echo "skip make stage ARGS through make: no nvcc (the Makefile needs it)"
fi

# ---- every script in tools/ (issue 35): --help and -h print its usage, its header comment, and exit
#      0; an unknown argument is refused in one line (exit 2) before its job starts (no test run, no
#      tour, no plot drawn, no device probed: the output is that line alone). tools/args.sh is
#      sourced by the others, not run; estimate.awk and roofline.awk are awk programs (awk -f) with
#      no command line of their own; peers.py is tests/cli.sh's. A run_tests.sh that ran its job on
#      --help would run this file again: the nested copy skips it (TOOLS_SH_NESTED) ----
if [ -n "${TOOLS_SH_NESTED:-}" ]; then
  echo "skip tools/*.sh --help: nested inside tools/run_tests.sh --help, which ran the tests"
else
  export TOOLS_SH_NESTED=1
  for s in tools/*.sh; do
    [ "$s" = tools/args.sh ] && continue
    want=$(awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$s")
    for h in --help -h; do
      out=$(PLOTS_OUT=$tmp/png ATTN_NO_INSTALL=1 timeout 60 "$s" $h 2>&1); rc=$?
      check "$s $h: its usage (the header comment), exit 0, nothing run" "$rc:$out" "0:$want"
    done
    for bad in --bogus $'\e[2J'; do
      out=$(PLOTS_OUT=$tmp/png ATTN_NO_INSTALL=1 timeout 60 "$s" "$bad" 2>&1); rc=$?
      check "$s $(printf '%q' "$bad"): refused in one line (exit 2), its job not started" "$rc:$(printf '%s\n' "$out" | wc -l)" "2:1"
    done
    contains "... naming it" "$(PLOTS_OUT=$tmp/png timeout 60 "$s" --bogus 2>&1)" "unknown argument '--bogus'"
    out=$(PLOTS_OUT=$tmp/png timeout 60 "$s" $'\e[2J' 2>&1)
    check "... an escape byte in it shown escaped, not sent to the terminal" "$(printf '%s' "$out" | grep -c $'\e'):$(printf '%s' "$out" | grep -cF '[2J')" "0:1"
  done
  check "... and no plot drawn by any of them" "$(ls "$tmp/png" 2>/dev/null | wc -l)" 0
  unset TOOLS_SH_NESTED
fi
for b in cpu_tests splits_sim; do
  if [ -x "build/bin/$b" ]; then
    out=$(timeout 60 "build/bin/$b" --help 2>&1); rc=$?
    check "build/bin/$b --help: its usage, exit 0" "$rc:$(printf '%s\n' "$out" | sed -n 1p)" "0:usage: $b$([ $b = splits_sim ] && echo ' [--summary]')"
    out=$(timeout 60 "build/bin/$b" --bogus 2>&1); rc=$?
    check "build/bin/$b --bogus: refused in one line (exit 2), no test run" "$rc:$out" \
      "2:$b: unknown argument '--bogus' ($([ $b = splits_sim ] && echo 'allowed: --summary, --help' || echo 'it takes none; --help shows its usage'))"
  else
    echo "skip build/bin/$b --help: not built"
  fi
done
out=$(RUNG_ARGS='"a' tools/run_tests.sh 2>&1); rc=$?
check "make test RUNG_ARGS='\"a': refused in one line (exit 2) before any test" "$rc:$(printf '%s\n' "$out" | wc -l)" "2:1"
for e in "SWEEPS=nosuch" "SWEEPS=*" "RUNGS=5x" "LADDER_ARGS=\"a" "WARM_MS=abc" "WARM_MS=-5" "WARM_MS=60001" "WARM_MS=2.5"; do
  out=$(env "$e" tools/ladder.sh 2>&1); rc=$?
  check "make ladder $e: refused in one line (exit 2), before the device check" "$rc:$(printf '%s\n' "$out" | wc -l):$(printf '%s' "$out" | grep -c 'CUDA device')" "2:1:0"
done

# ---- tools/readme_results.sh --help: help, and no README touched ----
before=$(find . -name '*.md' -not -path './build/*' -exec cksum {} + | sort)
out=$(tools/readme_results.sh --help 2>&1); rc=$?
check "readme_results.sh --help exits 0" "$rc" 0
contains "readme_results.sh --help prints its usage" "$out" "tools/readme_results.sh --check"
check "readme_results.sh --help rewrites no README" "$(find . -name '*.md' -not -path './build/*' -exec cksum {} + | sort)" "$before"
tools/readme_results.sh --bogus >/dev/null 2>&1
check "readme_results.sh --bogus is refused (exit 2)" "$?" 2

# ---- the prefill sweep's float8 e4m3 lines (rung 07's FP8 step): of the peers only cuDNN's FP8
#      attention (cudnn-fp8) runs them, forward; and a README table that names no dtype leaves e4m3
#      rows out ----
n8=$(grep -c 'dtype=e4m3' sweeps/prefill.txt)
if command -v python3 >/dev/null; then
  list=$(python3 tools/peers.py --list --sweep sweeps/prefill.txt 2>&1); rc=$?
  check "peers --list reads sweeps/prefill.txt with its e4m3 lines (exit 0)" "$rc" 0
  check "peers: every e4m3 line of the sweep run (cudnn-fp8: d a multiple of 16, causal at N = M)" \
    "$(printf '%s\n' "$list" | grep -c '^run  .* e4m3 ')" "$n8"
  list=$(python3 tools/peers.py --list --backward --sweep sweeps/prefill.txt 2>&1)
  check "peers --backward: every e4m3 line skipped, saying why" \
    "$(printf '%s\n' "$list" | grep -c '^skip .* e4m3 .*unsupported: float8 e4m3')" "$n8"
fi
printf 'rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra\n07f,1,8,8,4096,4096,256,0,f16,ok,1,1,1,700,1,,,,0,x,c,\n07g,1,8,8,4096,4096,256,0,e4m3,ok,1,1,1,1200,1,,,,0,x,c,\n07f,1,8,8,4096,4096,256,0,e4m3,unsupported: not FP8,,,,,,,,,x,c,\n' > "$tmp/fp8rows.csv"
out=$(tools/readme_results.sh --print "table csv=$tmp/fp8rows.csv ids=07f,07g col=tflops")
check "a table without dtype= has no e4m3 row" "$(printf '%s\n' "$out" | grep -c 'e4m3')" 0
out=$(tools/readme_results.sh --print "table csv=$tmp/fp8rows.csv ids=07f,07g col=tflops where=dtype=e4m3")
contains "where=dtype=e4m3 gives 07g's row" "$out" "| 1200 |"

# ---- the ladder block's ids= (a rung README's result table, issue 34): in a scratch tree made of
#      tools/readme_results.sh, sweeps/tour.txt, two made-up rungs and a made-up CSV (gpu=x);
#      a <rung>/README.md and a <rung>/NOTES.md, each with a block, rewritten by the script ----
t=$tmp/ladder; mkdir -p "$t/tools" "$t/sweeps" "$t/results" "$t/04_dd" "$t/05_qq"
cp tools/readme_results.sh "$t/tools/"; cp sweeps/tour.txt "$t/sweeps/"
desc() { printf 'static const rung %s = {\n    "%s", "%s",\n    "the idea of %s",\n};\n' "$1" "$2" "$3" "$2"; }    # as a rung's .cu has it
{ desc d 04 dd; echo 'extern "C" const rung *const rung_variants[] = {&d, NULL};'; } > "$t/04_dd/dd.cu"
{ desc qa 05a qa; desc qc 05c qc; echo 'extern "C" const rung *const rung_variants[] = {&qa, &qc, NULL};'; } > "$t/05_qq/qq.cu"
row() { echo "$1,$2,ok,1,1,1,$3,$4,,,,0,x,abc1234,"; }    # ID SHAPE TFLOPS GBPS (shape: B..dtype of tours.txt's line)
P=$(awk '!/^ *(#|$)/ && ++n == 1 { print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7 ",f16" }' sweeps/tour.txt)
D=$(awk '!/^ *(#|$)/ && ++n == 2 { print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7 ",f16" }' sweeps/tour.txt)
{ echo "# commit: abc1234"; echo "rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra"
  row 00 "$P" 10 5; row 00 "$D" 1 100; row 04 "$P" 20 5; row 04 "$D" 1 50; row 05a "$P" 40 5; row 05a "$D" 1 25
  row 05c "$P" 100 5; row 05c "$D" 1 150; row torch-flash "$P" 90 5; row torch-flash "$D" 1 200; } > "$t/results/x-tour.csv"
rows_of() { sed '1,/^|---/d'; }    # a table's rows, below its |---| line
blk() { printf '# Rung 05\n\n<!-- results:ladder gpu=x from=tour ids=%s -->\nold text\n<!-- /results -->\n' "$1"; }
out=$("$t/tools/readme_results.sh" --print "ladder gpu=x from=tour ids=05c,04,torch-flash" 2>&1); rc=$?
check "ladder ids=05c,04,torch-flash: exit 0" "$rc" 0
check "... a row per id, in the order of ids=" "$(printf '%s\n' "$out" | rows_of | cut -d'|' -f2 | tr -d ' ' | paste -sd' ')" \
  "[05c=rung05](05_qq/) [04dd](04_dd/) torch-flash"
has "... each column's × is against the first id" "$out" "| rung | idea | prefill TFLOP/s | × 05c | decode GB/s | × 05c |"
contains "... and the sentence above says so" "$out" "Each × is against 05c, the first row, in the same CSV"
has "... 04 against 05c: 20 / 100 TFLOP/s, 50 / 150 GB/s" "$out" "| [04 dd](04_dd/) | the idea of 04 | 20 | 0.2 | 50 | 0.33 |"
has "... the first id against itself, bold where it is the fastest rung" "$out" "| [05c = rung 05](05_qq/) | the idea of 05c | **100** | **1.00** | **150** | **1.00** |"
check "... no commit named (a README has no hash)" "$(printf '%s\n' "$out" | grep -c abc1234)" 0
out=$("$t/tools/readme_results.sh" --print "ladder gpu=x from=tour" 2>&1)
has "ladder without ids=: every id, × rung 00, as before" "$out" "| rung | idea | prefill TFLOP/s | × rung 00 | decode GB/s | × rung 00 |"
contains "... and its commits" "$out" "rows at commit abc1234"
check "... 00 04 05a 05c torch-flash in lesson order" "$(printf '%s\n' "$out" | rows_of | cut -d'|' -f2 | tr -d ' []' | sed 's/(.*//' | paste -sd' ')" \
  "00 04dd 05a 05c=rung05 torch-flash"
"$t/tools/readme_results.sh" --print "ladder gpu=x from=tour ids=04,0x" > "$t/unknown.txt" 2>&1
check "ids= with an id in no CSV and no rung is refused (exit 1)" "$?" 1
contains "... saying which" "$(cat "$t/unknown.txt")" "no id 0x in"
blk 04,05a,05c > "$t/05_qq/README.md"; blk 05a,05c > "$t/05_qq/NOTES.md"
"$t/tools/readme_results.sh" --check > "$t/check1.txt" 2>&1
check "--check: a stale block in a rung's NOTES.md and README.md (exit 1)" "$?:$(grep -c 'OUT OF DATE: ladder' "$t/check1.txt")" "1:2"
"$t/tools/readme_results.sh" > /dev/null 2>&1
has "the rung's NOTES.md rewritten: its block's rows" "$(cat "$t/05_qq/NOTES.md")" "| [05a](../05_qq/) | the idea of 05a | 40 | 1.00 | 25 | 1.00 |"
has "the rung's README.md: links relative to its folder" "$(cat "$t/05_qq/README.md")" "| [04 dd](../04_dd/) | the idea of 04 | 20 | 1.00 | 50 | 1.00 |"
"$t/tools/readme_results.sh" --check > /dev/null 2>&1
check "--check after the rewrite passes" "$?" 0
