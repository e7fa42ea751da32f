#!/usr/bin/env bash
# A newcomer's first commands (issue 21): make without gnuplot succeeds and names the command that
# draws the plots; make stage N reaches the device check for every rung (its default shape is one it
# runs) and refuses a word with one clean line; tools/readme_results.sh --help prints help and
# rewrites nothing. Prints "ok NAME" or "FAIL NAME: why" per check.  Usage: tests/tools.sh
. "$(dirname "$0")/lib.sh"
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
has "make stage abc says what it expected, in one line" "$out" \
  "make stage: expected a rung number, got 'abc'; the rungs are $(ls -d 0[0-9]_* | tr '\n' ' ')"
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

# ---- tools/readme_results.sh --help: help, and no README touched ----
before=$(find . -name '*.md' -not -path './build/*' -exec cksum {} + | sort)
out=$(tools/readme_results.sh --help 2>&1); rc=$?
check "readme_results.sh --help exits 0" "$rc" 0
contains "readme_results.sh --help prints its usage" "$out" "tools/readme_results.sh --check"
check "readme_results.sh --help rewrites no README" "$(find . -name '*.md' -not -path './build/*' -exec cksum {} + | sort)" "$before"
tools/readme_results.sh --bogus >/dev/null 2>&1
check "readme_results.sh --bogus is refused (exit 2)" "$?" 2

# ---- the prefill sweep's float8 e4m3 lines (rung 07's FP8 step): the peers read them and run none,
#      and a README table that names no dtype leaves e4m3 rows out ----
n8=$(grep -c 'dtype=e4m3' sweeps/prefill.txt)
if command -v python3 >/dev/null; then
  list=$(python3 tools/peers.py --list --sweep sweeps/prefill.txt 2>&1); rc=$?
  check "peers --list reads sweeps/prefill.txt with its e4m3 lines (exit 0)" "$rc" 0
  check "peers: every e4m3 line skipped, saying why" \
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
