#!/usr/bin/env bash
# Issue 37 on the GPU in one device call: build there, make test (its GPU section runs
# tests/binding_gpu.py: ladder.attention and rung 08's gradient against SDPA in float64), then
# make train (python/train_gpt.py: results/<gpu>-train.csv, plots/<gpu>-train.png). Everything
# under $OUT: gpu-tests.log, train.log, the CSV and the PNG, summary.txt.
#
#   COMMIT=<hash> OUT=<dir> lab/capi_run.sh [build] [test] [train]     (default: all three)
#
# About 3 minutes to build (16 cores), 5 for make test, 2 for make train (estimates).
set -u
. "$(dirname "$0")/steps.sh"
lab_plain_start
for step in ${*:-build test train}; do
  case $step in
    build) make -j"$(nproc)" build > "$OUT/build.log" 2>&1; say "build: exit $? $(took)" ;;
    test)  make test > "$OUT/gpu-tests.log" 2>&1; say "test: exit $?, $(tail -n 1 "$OUT/gpu-tests.log") $(took)"
           sed -n '/tests\/binding_gpu.py/,/passed/p' "$OUT/gpu-tests.log" | grep -v '^ok' | tee -a "$OUT/summary.txt" ;;
    train) make train > "$OUT/train.log" 2>&1; say "train: exit $? $(took)"; tail -n 4 "$OUT/train.log" | tee -a "$OUT/summary.txt"
           cp results/*-train.csv plots/*-train.png "$OUT/" 2>/dev/null ;;
    *) say "unknown step $step" ;;
  esac
done
