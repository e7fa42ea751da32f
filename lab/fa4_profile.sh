#!/usr/bin/env bash
# Issue 36: FlashAttention-4's Hopper backward under Nsight Compute, beside rung 08's (make profile 8),
# on the lines of sweeps/profile-backward.txt, with make profile's metrics and layout: rows "fa4" appended
# to results/<gpu>-profile-backward.csv (tools/profile.sh --parse, FLOPs 2.5x the forward's).
#
#   make profile 8 && lab/fa4_profile.sh        (one device call: both on the same machine)
#
# Needs ncu, PyTorch and flash-attn-4 (flash_attn.cute, as tools/peers.py imports it). The backward is
# called as tools/peers.py times it: torch.autograd.grad of FA4's O, in its [B, N, H, d] layout, after
# three warm-up calls (its kernels are compiled on the first); only that one call is profiled
# (cudaProfilerStart/Stop through torch.cuda.profiler, ncu --profile-from-start off), every kernel it
# launches summed into the "total" row, as rung 08's pre- and post-kernels are in its rows.
set -u
cd "$(dirname "$0")/.." || exit 1
csv=$(ls results/*-profile-backward.csv 2>/dev/null | head -n 1)
[ -n "$csv" ] || { echo "lab/fa4_profile.sh: no results/<gpu>-profile-backward.csv: run make profile 8 first" >&2; exit 2; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] || { echo "lab/fa4_profile.sh: no ncu" >&2; exit 1; }
python3 -c 'from flash_attn.cute import flash_attn_func' 2>/dev/null ||
  { echo "lab/fa4_profile.sh: flash-attn-4 is not importable: nothing profiled" >&2; exit 1; }
METRICS=$(sed -n 's/^# metrics: //p' "$csv" | head -n 1)
dev=$(sed -n 's/^# device: //p' "$csv" | head -n 1)
W=build/profile; mkdir -p "$W"
rc=0
while read -r B Hq Hkv N M d c _; do
  tag=$W/fa4-d$d-N$N$([ "$c" = 1 ] && echo c)
  rm -f "$tag".*
  timeout 600 "$NCU" --profile-from-start off --clock-control none --metrics "$METRICS" -f -o "$tag" \
    python3 lab/fa4_bwd.py "$B" "$Hq" "$Hkv" "$N" "$M" "$d" "$c" > "$tag.log" 2>&1
  if [ -f "$tag.ncu-rep" ] &&
     "$NCU" -i "$tag.ncu-rep" --csv --page raw --print-units base --print-kernel-base function > "$tag.csv" 2>> "$tag.log" &&
     PROFILE_FLOP_SCALE=2.5 tools/profile.sh --parse "$tag.csv" fa4 "$B $Hq $Hkv $N $M $d $c" "$dev" fa4 > "$tag.rows" 2>> "$tag.log"; then
    cat "$tag.rows" >> "$csv"
    awk -F, '$9 == "total" { printf "fa4 d=%s N=%s: %s µs, %s TFLOP/s (%d kernels)\n", $7, $5, $11 / 1000, $15, $10 }' "$tag.rows"
  else
    echo "fa4 d=$d N=$N: no profile: $(tail -n 2 "$tag.log" | tr '\n' ' ')"; rc=1
  fi
done < <(grep -v '^[[:space:]]*\(#\|$\)' sweeps/profile-backward.txt)
exit $rc
