#!/usr/bin/env bash
# One call on the GPU machine: build there, then the steps asked for, logs and CSVs under $OUT.
#
#   lab/gpu_run.sh build test sanitize tune ladder
#
#   build      make build (with the machine's own nvcc and cuBLAS)
#   test       make test: CPU tests + the GPU correctness matrix (tests/gpu_cases.txt)
#   sanitize   compute-sanitizer memcheck, racecheck, synccheck: every forward rung variant (or SAN_RUNGS, and
#              of those SAN_VARIANTS), a small shape with tails (N = 77, M = 131), causal, GQA; the same
#              at N = 2000, M = 2100 (rung 07's three consumers at d = 64); a causal
#              GQA shape with N > M (rows that see no key) in bfloat16 at d = 96, with more work tiles
#              than an H100 has SMs (rung 07e's blocks take several); plus a varlen decode shape and a uniform
#              one (rung 06 merges it in clusters of 8 on sm_90), and a varlen decode batch on a paged
#              KV cache of 16-key pages, in float16 at d = 64 and in bfloat16 at d = 80 (rung 06 alone;
#              the other rungs refuse it). The backward rung (08) is lab/bwd_run.sh sanitize's
#   tune       rung 05's tuning candidates and ablations (lab/tune05.sh) -> results/lab/<gpu>-tune05.csv
#   tour       make: the tour (tools/tour.sh), every rung variant, the ceilings and the peers on the
#              ladder table's two shapes -> results/<gpu>-tour.csv, the table, the plots; its
#              progress lines -> the summary (how long it took: the 5-minute target includes the build)
#   profile    make profile (PROFILE_RUNG=5: one rung) -> results/<gpu>-profile.csv,
#              plots/<gpu>-roofline.png; the ncu exports (raw CSV) and logs -> logs/profile/
#   ladder     make ladder (SWEEPS / RUNGS from the environment) -> results/*.csv; with the decode
#              sweep, rung 06's targets on it (lab/decode_targets.sh) -> logs/targets06.txt
#   models     the open models' shapes (sweeps/models.txt): make ladder with SWEEPS=models, every rung
#              variant that accepts them and the peers in one run -> results/<gpu>-models.csv (RUNGS
#              re-measures a part; the rest kept). 7:50 on an H100 (commit 0fe8885), most of it the CPU
#              making each shape's inputs: with a build it does not fit one 10-minute device call, so
#              build in an earlier call or carry build/bin (results/h100-models.csv's run did:
#              SWEEPS=models tools/ladder.sh on the carried binaries); rungs 01-03 refuse every line
#              (float16 only), and a rung whose first launch of a shape takes over --too-slow (10 s)
#              skips the larger ones
#   ceilings   just the two ceilings
#   check06    rung 06's variants on the GPU matrix alone, with both KV block sizes and every planner (quick)
#   fa3first   05c, rung 07's variants and the peers on lab/fa3-first.txt -> results/lab/<gpu>-fa3-first.csv
#   ab06       lab/ab.sh: rung 06 of this tree against another commit's (build/ab-old), one run
#   tune06     the decode sweep for 06a/06b/06c x KV block 64/128 x planner balanced/auto, and
#              the read floor of every shape, and the peers -> results/lab/<gpu>-tune06.csv
#              (TUNE_BLOCKS, TUNE_PLANNERS, TUNE_VARIANTS override the lists; TUNE_PEERS=0 skips the peers)
#   ncu06      Nsight Compute on the same shapes: each kernel's duration and DRAM bytes -> logs/ncu06.txt
#   flush      the decode sweep for 00, 05, 06 and the peers under both L2 flushes (--flush write,
#              then the default write+read) -> results/lab/<gpu>-flush.csv: what dirty L2 lines cost
#   paged06    lab/paged06.sh: rung 06 (PAGED_VARIANTS, default 06c) over the decode sweep with
#              contiguous K and V and with --page-size 16, 64 and 256 (PAGED_SIZES), interleaved,
#              REPS times (default 2), each row checked -> results/lab/<gpu>-paged06.csv, its table
#              (each page size against contiguous) -> logs/paged06.txt
#
# Everything that comes back is bundled into $OUT/bundle.tar.gz (results/, logs); the short
# summary is printed last. Set COMMIT to the commit being measured (the tree here has no .git).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}
mkdir -p "$OUT" build/logs
export ATTN_COMMIT=${COMMIT:-unknown}
export ATTN_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
LOG=build/logs
summary=$LOG/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== $(date -u +%FT%TZ) commit $ATTN_COMMIT on $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null)"

for step in "$@"; do
  t0=$(date +%s)
  case $step in
    build)
      make -j"$(nproc)" build > $LOG/build.log 2>&1; rc=$?
      grep -E "error|warning" $LOG/build.log | head -n 20 | tee -a "$summary"
      say "build: exit $rc";;
    test)
      make test > $LOG/test.log 2>&1; rc=$?
      cp -r build/test $LOG/matrix 2>/dev/null
      grep -E "^FAIL|passed|refused" $LOG/test.log | tee -a "$summary" >/dev/null
      say "test: exit $rc: $(tail -n 1 $LOG/test.log)";;
    sanitize)
      : > $LOG/sanitize.log
      for b in build/bin/0[0-9]_*; do
        # forward shapes: the backward rung's sanitizer runs are lab/bwd_run.sh sanitize's
        [ "$("$b" --pass)" = forward ] || continue
        id=$(basename "$b" | cut -c1-2)
        if [ -n "${SAN_RUNGS:-}" ] && ! printf '%s\n' $SAN_RUNGS | grep -qx "$id"; then continue; fi
        for v in $("$b" --list | cut -f1); do
          if [ -n "${SAN_VARIANTS:-}" ] && ! printf '%s\n' $SAN_VARIANTS | grep -qx "$v"; then continue; fi
          for tool in memcheck racecheck synccheck; do
            for shape in "--b 2 --hq 4 --hkv 2 --n 77 --m 131 --d 64 --causal" \
                         "--b 1 --hq 4 --hkv 2 --n 2000 --m 2100 --d 64 --causal" \
                         "--b 4 --hq 16 --hkv 4 --n 300 --m 200 --d 96 --causal --dtype bf16" \
                         "--b 3 --hq 8 --hkv 1 --n 1 --m 300 --d 128 --seqlens 1,300,77" \
                         "--b 4 --hq 8 --hkv 1 --n 1 --m 1024 --d 128" \
                         "--page-size 16 --b 3 --hq 8 --hkv 2 --n 3 --m 300 --d 64 --causal --seqlens 1,300,77" \
                         "--page-size 16 --b 3 --hq 8 --hkv 2 --n 3 --m 300 --d 80 --causal --seqlens 1,300,77 --dtype bf16"; do
              echo "### $v $tool $shape" >> $LOG/sanitize.log
              compute-sanitizer --tool $tool --error-exitcode 9 "$b" --variant "$v" $shape --no-time \
                  >> $LOG/sanitize.log 2>&1
              rc=$?
              # exit 3: the rung refuses the shape (nothing ran); 9: the sanitizer found errors
              case $rc in 0) r=clean;; 3) r=refused;; 9) r=ERRORS;; *) r="exit $rc";; esac
              say "sanitize $v $tool [$shape]: $r"
            done
          done
        done
      done;;
    tune)
      # rung 05's tuning candidates and ablations (lab/tune05.cu), each on the shapes of its d
      # (TUNE_IDS: only those; the CSV is then results/lab/<gpu>-tune05-<TUNE_TAG>.csv)
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      lab/tune05.sh $LOG/tune05.csv 2> $LOG/tune05.err | tee -a "$summary"; rc=${PIPESTATUS[0]}
      dst=results/lab/$gpu-tune05${TUNE_TAG:+-$TUNE_TAG}.csv
      mkdir -p results/lab && [ -s $LOG/tune05.csv ] && cp $LOG/tune05.csv $dst
      say "tune: exit $rc, $(grep -c ',ok,' $LOG/tune05.csv 2>/dev/null) ok rows -> $dst";;
    ladder)
      # stop in time for the results to come back (the device call's own limit is 600 s)
      timeout --signal=INT ${LADDER_TIMEOUT:-480} make ladder > $LOG/ladder.log 2>&1; rc=$?
      say "ladder: exit $rc"
      grep -E "FAIL" $LOG/ladder.log | head -n 20 | tee -a "$summary"
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      if printf '%s\n' ${SWEEPS:-decode} | grep -qx decode && [ -f results/$gpu-decode.csv ]; then
        lab/decode_targets.sh results/$gpu-decode.csv > $LOG/targets06.txt 2>&1
        tail -n 2 $LOG/targets06.txt | tee -a "$summary"
      fi;;
    models)
      # stop in time for the results to come back; an interrupted run leaves results/<gpu>-models.csv.partial
      SWEEPS=models timeout --signal=INT ${MODELS_TIMEOUT:-540} make ladder > $LOG/models.log 2>&1; rc=$?
      grep -E '^make ladder|^== |^wrote' $LOG/models.log | tee -a "$summary" >/dev/null
      grep -E "FAIL" $LOG/models.log | head -n 20 | tee -a "$summary"
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      f=results/$gpu-models.csv; [ -f $f ] || f=$f.partial
      say "models: exit $rc, $(grep -c ',ok,' $f 2>/dev/null) ok rows, $(grep -c ',FAIL' $f 2>/dev/null) failed, $(grep -c ',unsupported' $f 2>/dev/null) refused -> $f";;
    tour)
      timeout --signal=INT ${TOUR_TIMEOUT:-540} make > $LOG/tour.log 2>&1; rc=$?
      grep -E '^\[|^tour' $LOG/tour.log | tee -a "$summary" >/dev/null
      say "tour: exit $rc";;
    profile)
      timeout --signal=INT ${PROFILE_TIMEOUT:-540} make profile ${PROFILE_RUNG:-} > $LOG/profile.log 2>&1; rc=$?
      mkdir -p $LOG/profile && cp build/profile/*.csv build/profile/*.log $LOG/profile/ 2>/dev/null
      grep -E '^\[|^make profile|^wrote' $LOG/profile.log | tee -a "$summary" >/dev/null
      say "profile: exit $rc";;
    ceilings)
      build/bin/00_baseline --ceilings | tee -a "$summary";;
    check06)
      for blk in 64 128; do
        for pl in auto fa greedy balanced; do
          for v in $(build/bin/06_split_kv --list | cut -f1); do
            f=$LOG/check06-$v-$blk-$pl
            build/bin/06_split_kv --variant $v --kv-block $blk --planner $pl --sweep tests/gpu_cases.txt --no-time --quiet \
                --csv $f.csv > $f.log 2>&1
            say "check06 $v block=$blk planner=$pl: exit $? ok=$(grep -c ',ok,' $f.csv) fail=$(grep -c ',FAIL' $f.csv)"
          done
        done
      done;;
    tune06)
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      out=$LOG/tune06.csv
      rm -f $out
      build/bin/00_baseline --read-floor --sweep sweeps/decode.txt --csv $out --quiet > /dev/null
      for blk in ${TUNE_BLOCKS:-64 128}; do
        for pl in ${TUNE_PLANNERS:-balanced auto}; do
          for v in ${TUNE_VARIANTS:-06a 06b 06c}; do
            timeout 100 build/bin/06_split_kv --variant $v --kv-block $blk --planner $pl \
                --sweep sweeps/decode.txt --csv $out --quiet > /dev/null 2>> $LOG/tune06.err
          done
        done
      done
      if [ "${TUNE_PEERS:-1}" = 1 ] && python3 -c 'import torch' 2>/dev/null; then
        timeout 150 python3 tools/peers.py --sweep sweeps/decode.txt --csv $out > /dev/null 2>> $LOG/tune06.err
      fi
      mkdir -p results/lab && cp $out results/lab/$gpu-tune06.csv
      say "tune06: $(grep -c ',ok,' $out) ok rows, $(grep -c ',FAIL' $out) failed -> results/lab/$gpu-tune06.csv";;
    ncu06)
      : > $LOG/ncu06.txt
      for shape in "--b 1 --m 1024" "--b 1 --m 32768" "--b 8 --m 16384" "--b 32 --m 4096" "--b 128 --m 1024"; do
        for v in 06a 06c; do
          echo "### $v $shape" >> $LOG/ncu06.txt
          timeout 60 ncu --clock-control none --cache-control all -k regex:'split_kv_kernel|combine_kernel' --launch-count 2 \
              --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,sm__throughput.avg.pct_of_peak_sustained_elapsed \
              build/bin/06_split_kv --variant $v --hq 8 --hkv 1 --n 1 --d 128 $shape --no-time >> $LOG/ncu06.txt 2>&1
        done
        echo "### floor $shape" >> $LOG/ncu06.txt
        timeout 60 ncu --clock-control none --cache-control all -k regex:read_floor --launch-count 4 \
            --metrics gpu__time_duration.sum,dram__bytes_read.sum \
            build/bin/06_split_kv --read-floor --hq 8 --hkv 1 --n 1 --d 128 $shape --runs 2 --warmups 0 >> $LOG/ncu06.txt 2>&1
      done
      echo "### 06 --b 128 --m 1024 warp states" >> $LOG/ncu06.txt
      timeout 90 ncu --clock-control none --cache-control all -k regex:'split_kv_kernel' --launch-count 1 \
          --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
          build/bin/06_split_kv --variant 06c --b 128 --hq 8 --hkv 1 --n 1 --m 1024 --d 128 --no-time >> $LOG/ncu06.txt 2>&1
      say "ncu06: $(grep -c 'gpu__time_duration' $LOG/ncu06.txt) kernel durations -> logs/ncu06.txt";;
    flush)
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      out=$LOG/flush.csv
      rm -f $out
      for mode in write write+read; do
        for r in 00_baseline 05_fa2_outer_q 06_split_kv; do
          timeout 120 build/bin/$r --flush $mode --sweep sweeps/decode.txt --csv $out --quiet > /dev/null 2>> $LOG/flush.err
        done
        if python3 -c 'import torch' 2>/dev/null; then
          timeout 150 python3 tools/peers.py --flush $mode --sweep sweeps/decode.txt --csv $out > /dev/null 2>> $LOG/flush.err
        fi
      done
      mkdir -p results/lab && cp $out results/lab/$gpu-flush.csv
      say "flush: $(grep -c ',ok,' $out) ok rows -> results/lab/$gpu-flush.csv";;
    fa3first)
      # 05c, rung 07's variants and the peers on lab/fa3-first.txt, in one run
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      out=$LOG/fa3-first.csv
      rm -f $out
      build/bin/00_baseline --ceilings --csv $out > /dev/null 2>> $LOG/fa3.err
      build/bin/05_fa2_outer_q --variant 05c --sweep lab/fa3-first.txt --csv $out --quiet > /dev/null 2>> $LOG/fa3.err
      for v in $(build/bin/07_fa3_wgmma_tma --list | cut -f1); do
        timeout 120 build/bin/07_fa3_wgmma_tma --variant $v --sweep lab/fa3-first.txt --csv $out --quiet > /dev/null 2>> $LOG/fa3.err
      done
      python3 -c 'import torch' 2>/dev/null && timeout 150 python3 tools/peers.py --sweep lab/fa3-first.txt --csv $out > /dev/null 2>> $LOG/fa3.err
      mkdir -p results/lab && cp $out results/lab/$gpu-fa3-first.csv
      grep -v '^#' $out | cut -d, -f1-8,10,14 | tee -a "$summary";;
    paged06)
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      OUT=$LOG lab/paged06.sh $LOG/paged06.csv > $LOG/paged06.txt 2> $LOG/paged06.err; rc=$?
      mkdir -p results/lab && cp $LOG/paged06.csv results/lab/$gpu-paged06.csv
      cat $LOG/paged06.txt | tee -a "$summary" >/dev/null
      say "paged06: exit $rc, $(grep -c ',ok,' $LOG/paged06.csv) ok rows -> results/lab/$gpu-paged06.csv";;
    ab06)
      OUT=$LOG lab/ab.sh > $LOG/ab06.log 2>&1; rc=$?
      cat $LOG/ab-check.txt $LOG/ab-table.txt 2>/dev/null | tee -a "$summary" >/dev/null
      say "ab06: exit $rc";;
    *) say "unknown step $step";;
  esac
  say "   ($step took $(( $(date +%s) - t0 )) s)"
done

tar czf "$OUT/bundle.tar.gz" results plots/*-roofline.png build/logs build/ladder 2>/dev/null
cp "$summary" "$OUT/summary.txt"
echo "================ summary"
cat "$summary"
