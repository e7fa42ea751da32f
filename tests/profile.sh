#!/usr/bin/env bash
# make profile's arithmetic without a GPU: the rows tools/profile.sh makes of an ncu export
# (tests/data/ncu-raw.csv, written by hand in the layout of ncu --csv --page raw: a header, a units
# row, one row per kernel launch; rung 00 on the ladder table's prefill shape: two cuBLAS GEMMs of
# one name and the softmax; and two exports ncu wrote on the H100), the roofline's placement (tools/roofline.awk), the README block made of
# the rows, and plots/<gpu>-roofline.png drawn from them (where gnuplot is). Prints "ok <name>" or
# "FAIL <name>: <why>" per check.
. "$(dirname "$0")/lib.sh"   # set -u, cd to the root, $tmp, check/has/contains
unset N MAKE_RUNG_GOALS MAKE_RUNG_N_FROM   # what make hands tools/profile.sh: not for these checks

near() {  # near NAME GOT WANT: equal to 1e-6 relative
  if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-6 * (w < 0 ? -w : w) + 1e-12) }'; then
    echo "ok $1"; else echo "FAIL $1: got '$2', want $3"; fi
}
col() {  # col KERNEL COLUMN: one field of the parsed rows
  awk -F, -v K="$1" -v C="$2" '/^#/ { next } $1 == "rung" { for (i = 1; i <= NF; i++) H[$i] = i; next } $9 == K { print $(H[C]) }' "$tmp/rows.csv"
}

# ---- the parse -------------------------------------------------------------------------------
header=$(sed -n 's/^HEADER="\(.*\)"$/\1/p' tools/profile.sh)
{ echo "# device: NVIDIA H100 80GB HBM3"; echo "# commit: test"; echo "$header"
  tools/profile.sh --parse tests/data/ncu-raw.csv 00 "4 16 16 4096 4096 128 0" "NVIDIA H100 80GB HBM3" test; } > "$tmp/rows.csv"
check "parse: a row per kernel name, then the total" "$(grep -v '^#' "$tmp/rows.csv" | tail -n +2 | cut -d, -f9,10 | paste -sd' ')" \
  "sm90_xmma_gemm_f16f16_f32f32_f32_tn_n_cublas,2 safe_softmax_rows,1 total,3"
check "parse: every row has the header's columns" "$(grep -v '^#' "$tmp/rows.csv" | awk -F, '{ print NF }' | sort -u)" "$(echo "$header" | awk -F, '{ print NF }')"
G=sm90_xmma_gemm_f16f16_f32f32_f32_tn_n_cublas
# units: Mbyte and usecond columns, thousands separators, a quoted "(64, 128, 1)"
check "parse: the GEMM's two launches summed (ns, bytes read, written)" "$(col $G time_ns) $(col $G dram_read_bytes) $(col $G dram_write_bytes)" \
  "2000000 2281700000 4362076160"
check "parse: the longest launch's registers, shared memory (98.30 Kbyte), grid" \
  "$(col $G registers) $(col $G smem_dynamic_bytes) $(col $G smem_static_bytes) $(col $G grid)" "168 98300 0 4096"
check "parse: top stalls of a kernel (selected and not_selected left out)" "$(col safe_softmax_rows stalls)" "long_scoreboard=6;barrier=1.5;wait=0.5"
check "parse: a kernel row has no FLOPs" "$(col $G flops)$(col $G tflops)$(col $G flop_per_byte)" ""
check "parse: the total's time and bytes" "$(col total time_ns) $(col total dram_read_bytes) $(col total dram_write_bytes)" \
  "5000000 6576670000 6509559808"
# FLOPs of B=4 Hq=16 N=M=4096 d=128, not causal: 4 * 16 * 128 * 4 * 4096 * 4096 = 549755813888;
# over 5 ms: 109.95 TFLOP/s; over 6576670000 + 6509559808 bytes: 42.010 FLOP/byte
check "parse: the total's FLOPs, TFLOP/s and FLOP/byte" "$(col total flops) $(col total tflops) $(col total flop_per_byte)" "549755813888 109.95 42.01"
# a backward rung's rows (make profile 8, lab/fa4_profile.sh): its FLOPs 2.5x the forward's, the time the same
check "parse: PROFILE_FLOP_SCALE=2.5 (a backward pass) counts 2.5x the FLOPs" \
  "$(PROFILE_FLOP_SCALE=2.5 tools/profile.sh --parse tests/data/ncu-raw.csv 08d "4 16 16 4096 4096 128 0" dev test |
     awk -F, '$9 == "total" { print $14, $15, $11 }')" "1374389534720 274.88 5000000"
# duration-weighted over 800, 3000 and 1200 us: gmma (80, 0, 80) -> 32; occupancy (12.5, 80, 12.5) -> 53;
# hmma n/a in the last launch: (0, 0) over the first two -> 0; long_scoreboard (0.5, 6, 0.5) -> 3.8
check "parse: the total's means weighted by duration (hmma, gmma, occupancy)" \
  "$(col total tensor_hmma_pct) $(col total tensor_gmma_pct) $(col total occupancy_pct)" "0 32 53"
check "parse: the total's top stalls" "$(col total stalls)" "long_scoreboard=3.8;barrier=0.98;math_pipe_throttle=0.8"
printf 'no ncu export here\n' > "$tmp/bad.csv"
if tools/profile.sh --parse "$tmp/bad.csv" 00 "1 1 1 1 1 64 0" >/dev/null 2>&1; then echo "FAIL parse: a file without an ncu header gave rows"
else echo "ok parse: a file without an ncu header is refused"; fi

# ---- bad arguments (issue 35): one line, exit 2, no row; never a bash error (an arithmetic one:
#      "syntax error: operand expected", "value too great for base"; "unbound variable") ----
refused() {  # refused NAME ARGS...: tools/profile.sh ARGS exits 2 with one line on stderr and nothing on stdout
  local o e rc
  o=$(tools/profile.sh "${@:2}" 2>"$tmp/err"); rc=$?; e=$(cat "$tmp/err")
  check "$1" "$rc:$(printf '%s' "$o" | wc -c):$(printf '%s\n' "$e" | wc -l):$(printf '%s' "$e" | grep -c -e 'syntax error' -e 'value too great' -e 'unbound variable' -e ': line [0-9]*:')" "2:0:1:0"
}
ok_shape="1 1 1 1 1 64 0"
refused "parse: a shape that is not seven numbers (\"x y\") is refused, no row" --parse tests/data/ncu-raw.csv 05c "x y"
refused "parse: six numbers are refused" --parse tests/data/ncu-raw.csv 05c "1 1 1 1 1 64"
refused "parse: causal 2 is refused" --parse tests/data/ncu-raw.csv 05c "1 1 1 1 1 64 2"
refused "parse: a zero in the shape is refused" --parse tests/data/ncu-raw.csv 05c "1 0 1 1 1 64 0"
refused "parse: an id with a comma (a CSV field) is refused" --parse tests/data/ncu-raw.csv "05,c" "$ok_shape"
refused "parse: a missing export is refused" --parse "$tmp/none.csv" 05c "$ok_shape"
refused "parse: a folder as the export is refused" --parse "$tmp" 05c "$ok_shape"
refused "parse: a control byte in DEVICE is refused" --parse tests/data/ncu-raw.csv 05c "$ok_shape" $'H100\e[2J' c
refused "parse: too few arguments" --parse tests/data/ncu-raw.csv 05c
refused "parse: too many arguments" --parse tests/data/ncu-raw.csv 05c "$ok_shape" d c extra
refused "profile.sh abc: refused in one line, no arithmetic error" abc
refused "profile.sh --bogus: refused" --bogus
refused "profile.sh 1 2: refused" 1 2
out=$(tools/profile.sh abc 2>&1)
check "... naming what it expected" "$out" "make profile: expected a rung number, got 'abc'; the rungs are $(ls -d 0[0-9]_* | paste -sd' ')"
for h in --help -h; do
  out=$(tools/profile.sh $h 2>&1); rc=$?
  check "profile.sh $h: its usage, exit 0, no arithmetic error" \
    "$rc:$(printf '%s\n' "$out" | grep -c 'tools/profile.sh --parse NCU_CSV'):$(printf '%s' "$out" | grep -c -e 'syntax error' -e 'value too great' -e 'unbound variable' -e ': line [0-9]*:')" "0:1:0"
done
out=$(tools/profile.sh --parse tests/data/ncu-raw.csv 00 "04 16 16 4096 4096 0128 0" 'a\nb' c | awk -F, '$9 == "total" { print $2, $7, $26 }')
check "parse: leading zeros in the shape read as the number; a backslash in DEVICE kept as it is" "$out" '4 128 a\nb'
# make profile abc, 5 6, 5 N=6: refused by tools/profile.sh before anything is built (make adds its Error 2 line)
if command -v "${NVCC:-nvcc}" >/dev/null; then
  mkp() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory BUILD="$tmp/nobuild" "$@" 2>&1; }
  for g in "abc" "5 6" "5 N=6"; do
    out=$(mkp profile $g); rc=$?
    check "make profile $g: exit 2, one line of ours, nothing built, no arithmetic error" \
      "$rc:$(printf '%s\n' "$out" | grep -c '^make profile: '):$(printf '%s\n' "$out" | grep -c -e nvcc -e 'syntax error' -e 'value too great'):$([ -e "$tmp/nobuild" ] && echo built)" "2:1:0:"
  done
else
  echo "skip make profile abc: no nvcc (the Makefile needs it)"
fi
# make profile without Nsight Compute: a PATH with every command but ncu
fallback=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -z "$fallback" ]; then
  mkdir -p "$tmp/bin"
  IFS=: read -ra dirs <<< "$PATH"
  for d in "${dirs[@]}"; do [ -d "$d" ] && ln -s "$d"/* "$tmp/bin/" 2>/dev/null; done
  rm -f "$tmp/bin/ncu"
  out=$(PATH="$tmp/bin" tools/profile.sh 2>&1); rc=$?
  check "make profile without ncu: exit 1 (not 0), in one line" "$rc:$(printf '%s\n' "$out" | wc -l)" "1:1"
  if command -v apt-get >/dev/null && command -v nvcc >/dev/null; then
    contains "... naming the command that installs it" "$out" "to install it: $([ "$(id -u)" = 0 ] || echo "sudo ")apt-get install cuda-nsight-compute-"
  else
    contains "... saying where to get it" "$out" "to install it: "
  fi
else
  echo "skip make profile without ncu: ncu is here ($fallback)"
fi

# Two real exports from the H100 (make profile at commit 0747f8f; tests/data/ncu-raw-h100-*.csv): the
# rows they parse to must be the rows that run wrote to results/h100-profile.csv, kept byte for byte
# in tests/data/ncu-raw-h100.rows (so that a new make profile does not break this test).
for x in "07c 4 16 16 4096 4096 128 0 07c-prefill" "06c 8 8 1 1 16384 128 0 06c-decode"; do
  set -- $x
  got=$(tools/profile.sh --parse "tests/data/ncu-raw-h100-$9.csv" "$1" "$2 $3 $4 $5 $6 $7 $8" "NVIDIA H100 80GB HBM3" 0747f8f)
  check "parse: the H100's own ncu export ($9) gives the committed rows" "$got" \
    "$(grep "^$1,$2,$3,$4,$5,$6,$7,$8," tests/data/ncu-raw-h100.rows)"
done

# ---- the roofline's arithmetic (tools/roofline.awk), worked examples --------------------------------
ra() { awk "$(cat tools/roofline.awk)"$'\n'"BEGIN { printf \"%.15g\\n\", $1 }"; }
check "roofline: FLOPs of the prefill shape" "$(ra 'attn_flops(4, 16, 4096, 4096, 128, 0)')" 549755813888
# causal, bottom-right: N = 3, M = 5 -> rows see 3, 4, 5 keys; N = 4 > M = 2 -> 0, 0, 1, 2
check "roofline: visible pairs, causal N < M and N > M" "$(ra 'visible_pairs(1, 3, 5, 1)') $(ra 'visible_pairs(2, 4, 2, 1)')" "12 6"
near "roofline: intensity = FLOPs / (bytes read + written)" "$(ra 'intensity(549755813888, 6576670000, 6509559808)')" 42.01025215
near "roofline: TFLOP/s = FLOPs / ns / 1000" "$(ra 'tflops_of(549755813888, 5000000)')" 109.9511628
# copy ceiling 3000 GB/s, GEMM 745 TFLOP/s: the ridge at 745 / 3 = 248.3 FLOP/byte
near "roofline: below the ridge the slope (42.01 FLOP/byte x 3000 GB/s = 126.03 TFLOP/s)" "$(ra 'attainable(42.01, 745, 3000)')" 126.03
near "roofline: above the ridge the GEMM roof (500 FLOP/byte -> 745)" "$(ra 'attainable(500, 745, 3000)')" 745
near "roofline: at the ridge both (248.333 FLOP/byte -> 745)" "$(ra 'attainable(745000 / 3000, 745, 3000)')" 745
# decode, B=8 Hq=8 Hkv=1 N=1 M=16384 d=128: 536870912 FLOPs over K and V, 67108864 bytes: 8 FLOP/byte -> 24 TFLOP/s
near "roofline: decode's K and V at 3000 GB/s (8 FLOP/byte -> 24 TFLOP/s)" \
  "$(ra 'attainable(intensity(attn_flops(8, 8, 1, 16384, 128, 0), 67108864, 0), 745, 3000)')" 24

# ---- the README block and the plot, from the rows and a ceilings CSV in a results folder of their own ----
mkdir -p "$tmp/res" "$tmp/png"
cp "$tmp/rows.csv" "$tmp/res/x-profile.csv"
printf '%s\n' "# device: test" "# commit: test" \
  "rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra" \
  "ceiling-copy,,,,,,,,f16,ok,0.7,,,,3000,,,,,test,test," "ceiling-gemm,,,,,,,,f16,ok,1.5,,,745,,,,,,test,test," > "$tmp/res/x-prefill.csv"
block=$(RESULTS_DIR="$tmp/res" tools/readme_results.sh --print "profile gpu=x" 2>&1)
line=$(printf '%s\n' "$block" | grep '^| 00 | prefill |')
# 109.95 TFLOP/s of an attainable 126.03: 87%
check "README block: the variant's line (time, bytes, FLOP/byte, TFLOP/s, share of the roof)" \
  "$(printf '%s' "$line" | awk -F' [|] ' '{ print $4, $5, $6, $7, $8 }')" "5000 6577 + 6510 42.0 110 87%"
# registers and shared memory: the longest kernel's, the softmax (3 ms against the GEMMs' 2 ms)
check "README block: kernels, tensor pipe, occupancy, registers, shared memory" \
  "$(printf '%s' "$line" | awk -F' [|] ' '{ print $3 "|" $9 "|" $10 "|" $11 "|" $12 }')" \
  "sm90_xmma_gemm_f16f16_f32f3… ×2, safe_softmax_rows|32% (wgmma)|53%|32|64 B"
if command -v gnuplot >/dev/null 2>&1; then
  if RESULTS_DIR="$tmp/res" PLOTS_OUT="$tmp/png" ATTN_NO_INSTALL=1 tools/plots.sh > "$tmp/plots.log" 2>&1 && [ -s "$tmp/png/x-roofline.png" ]; then
    echo "ok roofline plot drawn from a profile CSV"
  else
    echo "FAIL roofline plot: $(grep -v '^wrote' "$tmp/plots.log" | head -n 5)"
  fi
  rm -f "$tmp/res/x-profile.csv"; mkdir -p "$tmp/png2"
  RESULTS_DIR="$tmp/res" PLOTS_OUT="$tmp/png2" ATTN_NO_INSTALL=1 tools/plots.sh > "$tmp/plots2.log" 2>&1
  if [ -e "$tmp/png2/x-roofline.png" ]; then echo "FAIL roofline plot: drawn without a profile CSV"
  else echo "ok roofline plot: none without a profile CSV"; fi
else
  echo "skip roofline plot: gnuplot not installed"
fi
