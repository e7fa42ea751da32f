#!/usr/bin/env bash
# Rung 07 under Nsight Compute, instruction by instruction: where the warps of one variant wait on
# one shape (issue 22's question of what holds back the short sequences). One profiled launch, the
# warp-stall samples per SASS instruction with its source line (the build has -lineinfo).
#   SOURCE_VARIANT (default 07e), SOURCE_SHAPE ("B Hq Hkv N M d causal", default N = 512, d = 128, causal)
#   -> $OUT/source07.csv.gz (ncu's source page, SASS with source lines), $OUT/source07.txt (its top
#      instructions by stall samples: lab/fa3_source_top.sh reads the CSV again here)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}; mkdir -p "$OUT"
B=build/bin/07_fa3_wgmma_tma
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
read -r b hq hkv n mm d c <<< "${SOURCE_SHAPE:-32 16 16 512 512 128 1}"
v=${SOURCE_VARIANT:-07e}
args="--b $b --hq $hq --hkv $hkv --n $n --m $mm --d $d"; [ "$c" = 1 ] && args="$args --causal"
rm -f build/source07.ncu-rep
$NCU --profile-from-start off --clock-control none --section SourceCounters --section WarpStateStats \
     --import-source yes -o build/source07 $B --variant $v $args --profile > "$OUT/source07.log" 2>&1
$NCU -i build/source07.ncu-rep --page source --csv --print-source sass 2>>"$OUT/source07.log" | gzip > "$OUT/source07.csv.gz"
$NCU -i build/source07.ncu-rep --page details --print-details all 2>>"$OUT/source07.log" | grep -iE "stall|warp cycles|issued" | head -40 > "$OUT/source07.txt"
echo "source07: $v $b $hq $hkv $n $mm $d $c: $(zcat "$OUT/source07.csv.gz" | wc -l) rows"
