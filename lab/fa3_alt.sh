#!/usr/bin/env bash
# Build rung 07 with one change made by sed to a copy of its sources, for an A/B on the GPU machine
# beside build/bin/07_fa3_wgmma_tma: lab/fa3_alt.sh NAME 'sed script' [file in 07_fa3_wgmma_tma/]
#   -> build/bin-alt/07_NAME (the common objects are this tree's: run make first)
# Example: lab/fa3_alt.sh lazy4 's/#define F3_LAZY 8.0f/#define F3_LAZY 4.0f/' lazy_rescale.cuh
set -eu
cd "$(dirname "$0")/.."
name=$1 script=$2 file=${3:-fa3.cu}
src=build/alt-src/$name
rm -rf "$src"; mkdir -p "$src" build/bin-alt
ln -sfn ../../common build/alt-src/common             # the sources include ../common/
cp 07_fa3_wgmma_tma/*.cu 07_fa3_wgmma_tma/*.cuh "$src"/
sed -i "$script" "$src/$file"
if cmp -s "$src/$file" "07_fa3_wgmma_tma/$file"; then echo "fa3_alt: '$script' changed nothing in $file" >&2; exit 2; fi
objs=$(for o in build/obj/common/*.o; do                  # those whose source is still there
         n=$(basename "$o" .o); [ -f common/$n.c ] || [ -f common/$n.cu ] && echo "$o"; done)
nvcc -O3 -lineinfo --threads 2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Icommon -I. \
     -c "$src/fa3.cu" -o "$src/fa3.o"
nvcc -gencode=arch=compute_90a,code=sm_90a -o build/bin-alt/07_$name "$src/fa3.o" $objs -lcublas -Xcompiler -fopenmp -lm
echo "build/bin-alt/07_$name"
