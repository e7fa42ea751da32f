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
