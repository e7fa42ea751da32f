#!/usr/bin/env bash
# make profile [N]: every rung variant (make profile 5: rung 05's) through Nsight Compute on the
# ladder table's two shapes (sweeps/tour.txt), with the counters that explain its speed, into
# results/<gpu>-profile.csv; then the table of it and plots/<gpu>-roofline.png. A backward rung
# (make profile 8) runs the shapes of sweeps/profile-backward.txt instead, its FLOPs counted 2.5x
# the forward's (common/attn.h, attn_bwd_flops), into results/<gpu>-profile-backward.csv (no
# roofline: the forward's plot is of forward rows).
#
#   tools/profile.sh [N]      every forward rung, or rung N (3 or 03)
#   tools/profile.sh --make   what make profile runs: the rung from make (make profile 3, or N=3;
#                             tools/args.sh): none, one number, or refused in one line (exit 2)
#   tools/profile.sh --parse NCU_CSV ID "B Hq Hkv N M d causal" [DEVICE COMMIT]
#       the CSV rows of one ncu export (ncu --import R --csv --page raw): no GPU, no ncu needed
#       (PROFILE_FLOP_SCALE=2.5 counts a backward pass's FLOPs; lab/fa4_profile.sh uses it);
#       tests/profile.sh feeds it tests/data/ncu-raw.csv. NCU_CSV a readable file, ID a variant id
#       (letters, digits, - _ .), the shape seven whole numbers (causal 0 or 1), DEVICE and COMMIT
#       without control bytes: else one line and exit 2, and no row
#   tools/profile.sh --help   this text
#
# One process per (variant, shape): the rung runs and is checked once, then launched once more
# alone between cudaProfilerStart and cudaProfilerStop (the driver's --profile), and ncu
# --profile-from-start off --clock-control none profiles that launch's kernels and nothing else
# (not the L2 flush, not the checked launch); ncu replays each kernel, its caches flushed, once per
# pass its metrics need. Rows, one per kernel of the launch (the launches of one kernel name
# summed: 00's two cuBLAS GEMMs may be one kernel) and one named "total" per (variant, shape):
#
#   rung,B,Hq,Hkv,N,M,d,causal   the variant and the shape
#   kernel,launches              the kernel's name (ncu --print-kernel-base function), or total
#   time_ns                      gpu__time_duration.sum, summed
#   dram_read_bytes, dram_write_bytes   dram__bytes_read.sum, dram__bytes_write.sum, summed
#   flops, tflops, flop_per_byte the course's FLOP count (common/attn.h) and, over the summed time
#                                and bytes, the achieved TFLOP/s and the arithmetic intensity: the
#                                variant's place on the roofline (tools/roofline.awk). On the total
#                                row only: FLOPs are not split between kernels
#   tensor_hmma_pct, tensor_gmma_pct   sm__pipe_tensor_op_{hmma,gmma}_cycles_active.avg.pct_of_peak_
#                                sustained_active (mma.sync/WMMA; wgmma, sm_90 only)
#   occupancy_pct                sm__warps_active.avg.pct_of_peak_sustained_active (achieved)
#   registers, smem_static_bytes, smem_dynamic_bytes, grid, block   launch__registers_per_thread,
#                                launch__shared_mem_per_block_{static,dynamic}, launch__grid_size,
#                                launch__block_size: the longest launch's (empty on the total row)
#   stalls                       the three largest smsp__average_warps_issue_stalled_<reason>_per_
#                                issue_active.ratio (warps stalled for that reason per issued
#                                instruction; selected and not_selected are not stalls), reason=value;...
#   device, commit
#
# Percentages and stall ratios are means over the row's launches weighted by their duration. The
# stall reasons are those `ncu --query-metrics` lists for this GPU. A rerun of one rung (make
# profile 5) replaces that rung's rows and keeps the others, under a '# rerun:' line. Without ncu
# (Nsight Compute): one line naming the command that installs it, exit 1; without a CUDA device, or
# without permission to read the GPU's counters: one line, exit 1; nothing profiled, and
# results/<gpu>-profile.csv left as it was.
set -u
. "$(dirname "$0")/args.sh"
cd "$(dirname "$0")/.." || exit 1
BIN=build/bin
HEADER="rung,B,Hq,Hkv,N,M,d,causal,kernel,launches,time_ns,dram_read_bytes,dram_write_bytes,flops,tflops,flop_per_byte,tensor_hmma_pct,tensor_gmma_pct,occupancy_pct,registers,smem_static_bytes,smem_dynamic_bytes,grid,block,stalls,device,commit"

# ---- one ncu export -> rows ------------------------------------------------------------------
read -r -d '' PARSE <<'EOF'
function csv(line, a,   n, i, c, f, q, L) {     # one CSV line, "quoted, fields" and all, into a[1..n]
  n = 0; f = ""; q = 0; L = length(line)
  for (i = 1; i <= L; i++) {
    c = substr(line, i, 1)
    if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { f = f c; i++ } else q = 0 } else f = f c }
    else if (c == "\"") q = 1
    else if (c == ",") { a[++n] = f; f = "" }
    else f = f c
  }
  a[++n] = f
  return n
}
function num(v, u,   s) {                       # "1,234.5" in unit u -> bytes, ns or the number; "" for n/a
  gsub(/,/, "", v)
  if (v !~ /^-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/) return ""
  s = 1
  if (u ~ /^Kbyte/) s = 1e3; else if (u ~ /^Mbyte/) s = 1e6; else if (u ~ /^Gbyte/) s = 1e9; else if (u ~ /^Tbyte/) s = 1e12
  else if (u == "usecond" || u == "us") s = 1e3; else if (u == "msecond" || u == "ms") s = 1e6
  else if (u == "second" || u == "s") s = 1e9
  return v * s
}
function m(name) { return (name in COL) ? num(A[COL[name]], U[COL[name]]) : "" }
function opt(v, fmt) { return v == "" ? "" : sprintf(fmt, v) }
function wadd(k, w, v, t) { if (v != "") { SW[k, w] += v * t; WT[k, w] += t } }
function wmean(k, w) { return WT[k, w] > 0 ? SW[k, w] / WT[k, w] : "" }
function top3(k,   i, j, n, r, v, out, used) {
  out = ""
  for (j = 1; j <= 3; j++) {
    r = ""; v = 0
    for (i = 1; i <= NST; i++) if (!((k, i) in used) && wmean(k, STC[i]) != "" && wmean(k, STC[i]) > v) { v = wmean(k, STC[i]); r = i }
    if (r == "") break
    used[k, r] = 1; out = out (out == "" ? "" : ";") STN[r] "=" sprintf("%.3g", v)
  }
  return out
}
function row(k, name, total,   fl, ai) {
  fl = total ? FLOPS : ""
  printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%.0f,%.0f,%.0f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", \
    ID, S[1], S[2], S[3], S[4], S[5], S[6], S[7], name, NL[k], T[k], RD[k], WR[k], opt(fl, "%.0f"), \
    total ? sprintf("%.5g", tflops_of(FLOPS, T[k])) : "", total ? sprintf("%.5g", intensity(FLOPS, RD[k], WR[k])) : "", \
    opt(wmean(k, "hmma"), "%.4g"), opt(wmean(k, "gmma"), "%.4g"), opt(wmean(k, "occ"), "%.4g"), \
    total ? "" : REG[k], total ? "" : SMS[k], total ? "" : SMD[k], total ? "" : GR[k], total ? "" : BK[k], \
    top3(k), DEVICE, COMMIT
}
BEGIN {
  DEVICE = ENVIRON["PROFILE_DEVICE"]; COMMIT = ENVIRON["PROFILE_COMMIT"]
  split(SHAPE, S, " "); FLOPS = attn_flops(S[1], S[2], S[4], S[5], S[6], S[7]); TOT = "\001total"
  if (ENVIRON["PROFILE_FLOP_SCALE"] != "") FLOPS *= ENVIRON["PROFILE_FLOP_SCALE"]
  HM = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
  GM = "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
  OC = "sm__warps_active.avg.pct_of_peak_sustained_active"
  gsub(/,/, ";", DEVICE); gsub(/,/, ";", COMMIT)
}
{ sub(/\r$/, "") }
!H && /^"ID","/ {                                # the header: the launch's columns, then the metrics
  n = csv($0, A)
  for (i = 1; i <= n; i++) {
    COL[A[i]] = i
    if (A[i] ~ /^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$/) {
      r = A[i]; sub(/^smsp__average_warps_issue_stalled_/, "", r); sub(/_per_issue_active\.ratio$/, "", r)
      if (r != "selected" && r != "not_selected") { STC[++NST] = A[i]; STN[NST] = r }
    }
  }
  H = 1; next
}
!H || !/^"/ { next }                             # ==PROF== lines, the program's own output
{
  csv($0, A)
  if (A[COL["ID"]] == "") { for (i in A) U[i] = A[i]; next }      # the units row
  k = A[COL["Kernel Name"]]; gsub(/[",]/, " ", k)
  if (!(k in NL)) K[++NK] = k
  t = m("gpu__time_duration.sum") + 0
  for (j = 1; j <= 2; j++) {                     # the kernel's row, and the total
    x = j == 1 ? k : TOT
    NL[x]++; T[x] += t; RD[x] += m("dram__bytes_read.sum"); WR[x] += m("dram__bytes_write.sum")
    wadd(x, "hmma", m(HM), t); wadd(x, "gmma", m(GM), t); wadd(x, "occ", m(OC), t)
    for (i = 1; i <= NST; i++) wadd(x, STC[i], m(STC[i]), t)
  }
  if (!(k in LT) || t > LT[k]) {
    LT[k] = t; REG[k] = m("launch__registers_per_thread"); SMS[k] = m("launch__shared_mem_per_block_static")
    SMD[k] = m("launch__shared_mem_per_block_dynamic"); GR[k] = m("launch__grid_size"); BK[k] = m("launch__block_size")
  }
}
END {
  if (NK == 0) { print "no kernel in the export" > "/dev/stderr"; exit 1 }
  for (i = 1; i <= NK; i++) row(K[i], K[i], 0)
  row(TOT, "total", 1)
}
EOF
parse() {  # parse NCU_CSV ID "B Hq Hkv N M d causal" [DEVICE COMMIT]
  # DEVICE and COMMIT through the environment: awk -v would read a backslash in them as an escape
  PROFILE_DEVICE=${4:-} PROFILE_COMMIT=${5:-} awk -v ID="$2" -v SHAPE="$3" "$(cat tools/roofline.awk)"$'\n'"$PARSE" "$1"
}
parse_checked() {  # parse_checked NCU_CSV ID SHAPE [DEVICE COMMIT]: the arguments checked, then parse
  local usage='tools/profile.sh --parse NCU_CSV ID "B Hq Hkv N M d causal" [DEVICE COMMIT]' x i
  local -a sh
  [ $# -ge 3 ] && [ $# -le 5 ] || { echo "profile.sh --parse: $# arguments; usage: $usage" >&2; exit 2; }
  [ -f "$1" ] && [ -r "$1" ] || { echo "profile.sh --parse: NCU_CSV $(tool_shown "$1") is not a readable file" >&2; exit 2; }
  [[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] && [ ${#2} -le 40 ] ||
    { echo "profile.sh --parse: ID $(tool_shown "$2") is not a variant id (letters, digits, - _ .: e.g. 05c)" >&2; exit 2; }
  read -ra sh <<< "$3"
  x=ok; [ ${#sh[@]} -eq 7 ] || x=bad
  for ((i = 0; i < ${#sh[@]} && i < 7; i++)); do
    [[ ${sh[$i]} =~ ^[0-9]{1,9}$ ]] || x=bad
    [ $x = ok ] && [ $i -lt 6 ] && [ $((10#${sh[$i]})) -eq 0 ] && x=bad
  done
  [ $x = ok ] && [[ ${sh[6]} =~ ^[01]$ ]] || x=bad
  [ $x = ok ] || { echo "profile.sh --parse: the shape must be seven whole numbers \"B Hq Hkv N M d causal\" (causal 0 or 1, the others above 0), not $(tool_shown "$3")" >&2; exit 2; }
  for x in "${4:-}" "${5:-}"; do
    [[ $x == *[[:cntrl:]]* ]] && { echo "profile.sh --parse: DEVICE or COMMIT holds a control byte: $(tool_shown "$x")" >&2; exit 2; }
  done
  for i in "${!sh[@]}"; do sh[$i]=$((10#${sh[$i]})); done
  parse "$1" "$2" "${sh[*]}" "${4:-}" "${5:-}"
}
n=""
case ${1:-} in
  -h|--help) [ $# -eq 1 ] || tool_refuse "$2" "--help takes nothing after it"; tool_usage ;;
  --parse)   shift; parse_checked "$@"; exit ;;
  --make)    [ $# -eq 1 ] || tool_refuse "$2" "--make takes nothing after it: make passes N in the environment"
             n=$(tool_rung_of_make profile) || exit 2 ;;
  '')        [ $# -le 1 ] || tool_refuse "$2" "tools/profile.sh [N]" ;;
  -*)        tool_refuse "$1" "tools/profile.sh [N], --parse, --make, --help" ;;
  *)         [ $# -eq 1 ] || tool_refuse "$2" "tools/profile.sh [N]: one rung number"
             n=$(tool_rung profile "$1") || exit 2 ;;
esac

# ---- which rungs, which ncu, which GPU ----------------------------------------------------------
if [ -n "$n" ]; then
  dir=$(tool_rung_dir "$n")
  [ -n "$dir" ] || { echo "make profile: no rung $n: the rungs are $(tool_rungs)" >&2; exit 2; }
fi
# ncu: on PATH, beside nvcc, in the toolkit's folder (a runfile install), or where NVIDIA's packages put it
NCU=$(command -v ncu 2>/dev/null)
nvcc_bin=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
if [ -z "$NCU" ]; then
  for c in "$(dirname "$nvcc_bin")/ncu" "$(dirname "$(dirname "$nvcc_bin")")"/nsight-compute*/ncu /usr/local/cuda/bin/ncu \
           /opt/nvidia/nsight-compute/*/ncu; do [ -x "$c" ] && { NCU=$c; break; }; done
fi
if [ -z "$NCU" ]; then
  cv=$("$nvcc_bin" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1-\2/p' | head -n 1)
  if command -v apt-get >/dev/null && [ -n "$cv" ]; then
    get="$([ "$(id -u)" = 0 ] || echo "sudo ")apt-get install cuda-nsight-compute-$cv"
  else
    get="install Nsight Compute from https://developer.nvidia.com/nsight-compute (the CUDA Toolkit's installer puts it in <cuda>/bin/ncu)"
  fi
  echo "make profile: ncu (Nsight Compute) is not on PATH, beside nvcc or in /opt/nvidia/nsight-compute: nothing profiled; to install it: $get" >&2
  exit 1
fi
if [ -n "$n" ]; then
  [ -x "$BIN/$dir" ] || { echo "make profile: $BIN/$dir is not built: make profile $n builds it" >&2; exit 2; }
  bins=("$BIN/$dir")
else
  # the forward rungs: results/<gpu>-profile.csv counts forward FLOPs on forward shapes
  bins=()
  for b in "$BIN"/0[0-9]_*; do [ -x "$b" ] && [ "$("$b" --pass)" = forward ] && bins+=("$b"); done
  [ ${#bins[@]} -gt 0 ] || { echo "make profile: no rung is built in $BIN: make profile builds them" >&2; exit 2; }
fi
probe=$("$BIN/00_baseline" --probe 2>/dev/null || echo none)
[ "$probe" != none ] || { echo "make profile: no CUDA device found: nothing profiled" >&2; exit 1; }
# a backward rung: its own shapes, FLOPs and CSV
bwd=0 shapes_file=sweeps/tour.txt
if [ -n "$n" ] && [ "$("${bins[0]}" --pass)" = backward ]; then
  bwd=1 shapes_file=sweeps/profile-backward.txt
  export PROFILE_FLOP_SCALE=2.5
fi
gpu=${probe%% *}
export ATTN_COMMIT=${ATTN_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)}
export ATTN_DRIVER=${ATTN_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)}
dev=$(printf '%s' "$probe" | cut -d' ' -f3-)

# The metrics: the stall reasons and tensor pipes this GPU has (ncu --query-metrics), the rest always.
q=$("$NCU" --query-metrics 2>/dev/null)
stalls=$(printf '%s\n' "$q" | grep -o 'smsp__average_warps_issue_stalled_[a-z_]*_per_issue_active' | sort -u | sed 's/$/.ratio/')
[ -n "$stalls" ] || stalls=$(for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard \
    math_pipe_throttle membar mio_throttle misc no_instruction short_scoreboard sleeping tex_throttle wait; do
    echo "smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
tensor=""
for p in hmma gmma; do
  b=sm__pipe_tensor_op_${p}_cycles_active
  if printf '%s\n' "$q" | grep -qw "$b" || { [ -z "$q" ] && { [ $p = hmma ] || [ "${cc%%.*}" -ge 9 ] 2>/dev/null; }; }; then
    tensor="$tensor,$b.avg.pct_of_peak_sustained_active"
  fi
done
METRICS="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
METRICS="$METRICS,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic"
METRICS="$METRICS,launch__grid_size,launch__block_size$tensor,$(printf '%s\n' "$stalls" | paste -sd,)"

# ---- the jobs -------------------------------------------------------------------------------------
W=build/profile
mkdir -p "$W" results
out=$W/$gpu-profile.csv final=results/$gpu-profile.csv
[ $bwd = 1 ] && out=$W/$gpu-profile-backward.csv final=results/$gpu-profile-backward.csv
mapfile -t shapes < <(grep -v '^[[:space:]]*\(#\|$\)' "$shapes_file" | awk '{ print $1, $2, $3, $4, $5, $6, $7 }')
jobs=0
for b in "${bins[@]}"; do jobs=$((jobs + $("$b" --list | wc -l) * ${#shapes[@]})); done
{
  echo "# device: $dev"
  echo "# commit: $ATTN_COMMIT"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# ncu: $("$NCU" --version 2>/dev/null | tail -n 1) (--clock-control none; one launch per row's variant and shape, $shapes_file$([ $bwd = 1 ] && echo "; FLOPs 2.5x the forward's"))"
  echo "# metrics: $METRICS"
  echo "$HEADER"
} > "$out"
echo "make profile: $jobs runs (${#bins[@]} rung$([ ${#bins[@]} -gt 1 ] && echo s), their variants, the ${#shapes[@]} shapes of $shapes_file) under $NCU on the $dev"
t0=$(date +%s) done_=0 rc=0
clock() { local s=$(( $(date +%s) - t0 )); printf '%d:%02d' $((s / 60)) $((s % 60)); }
for b in "${bins[@]}"; do
  for v in $("$b" --list | cut -f1); do
    for sh in "${shapes[@]}"; do
      read -r B Hq Hkv N M d c <<< "$sh"
      label=prefill; [ "$N" = 1 ] && label=decode
      [ $bwd = 1 ] && label=d$d-N$N$([ "$c" = 1 ] && echo c)
      tag=$W/$v-$label; done_=$((done_ + 1))
      rm -f "$tag".*
      timeout 600 "$NCU" --profile-from-start off --clock-control none --metrics "$METRICS" -f -o "$tag" \
        "$b" --variant "$v" --b "$B" --hq "$Hq" --hkv "$Hkv" --n "$N" --m "$M" --d "$d" $([ "$c" = 1 ] && echo --causal) \
        --profile --quiet --csv "$tag.run.csv" > "$tag.log" 2>&1
      if grep -q ERR_NVGPUCTRPERM "$tag.log"; then
        echo "make profile: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM: see https://developer.nvidia.com/ERR_NVGPUCTRPERM): nothing profiled" >&2
        rm -f "$out"; exit 1
      fi
      st=$(grep -v '^#' "$tag.run.csv" 2>/dev/null | awk -F, 'NR > 1 { s = $10 } END { print s }')
      msg=""
      case $st in
        unsupported*) msg="refused (${st#unsupported: })" ;;
        FAIL*)        msg="$st"; rc=1 ;;
      esac
      if [ -z "$msg" ] && [ -f "$tag.ncu-rep" ] &&
         "$NCU" -i "$tag.ncu-rep" --csv --page raw --print-units base --print-kernel-base function > "$tag.csv" 2>> "$tag.log" &&
         parse "$tag.csv" "$v" "$sh" "$dev" "$ATTN_COMMIT" > "$tag.rows" 2>> "$tag.log"; then
        cat "$tag.rows" >> "$out"
        msg=$(awk -F, '$9 == "total" { printf "%s µs, %.3g GB moved, %s FLOP/byte, %s TFLOP/s", $11 / 1000, ($12 + $13) / 1e9, $16, $15 }' "$tag.rows")
        msg="$msg ($(($(wc -l < "$tag.rows") - 1)) kernels)"
      elif [ -z "$msg" ]; then
        msg="no profile: $(grep -m 1 -e '==ERROR==' -e 'FAIL' "$tag.log" || tail -n 1 "$tag.log")"; rc=1
      fi
      printf '[%2d/%d %s] %-4s %-7s %s\n' "$done_" "$jobs" "$(clock)" "$v" "$label" "$msg"
    done
  done
done

# ---- results/<gpu>-profile.csv: every row new, or (one rung) the other rungs' rows kept ------------
if ! grep -q ',total,' "$out"; then echo "make profile: nothing was profiled ($final left as it was; the logs are in $W/)"; exit 1; fi
if [ -n "$n" ] && [ -f "$final" ] && [ $bwd = 0 ]; then
  id=$(printf '%02d' "$((10#$n))")
  { grep -Ev "^$id[a-z]*," "$final"
    echo "# rerun: rung $id at commit $ATTN_COMMIT on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    grep -Ev '^#|^rung,' "$out"; } > "$final.tmp" && mv "$final.tmp" "$final"
else
  cp "$out" "$final"
fi
echo "wrote $final ($(grep -c ',total,' "$final") variant-shape rows, in $(clock)); the exports and logs are in $W/"
[ $bwd = 1 ] && exit $rc
tools/readme_results.sh --print "profile gpu=$gpu$([ -n "$n" ] && printf ' prefix=%02d' "$((10#$n))")" || true
tools/plots.sh | grep -i roofline
exit $rc
