#!/usr/bin/env bash
# A/B of rung 06 kernel sources in one run, on one GPU: each source is built into a binary of its
# own (linked with the rung's other objects), then every binary runs the shapes REPS times,
# interleaved, so that the ratios come from one run. Other versions of split_kv.cu come from git,
# e.g. `git show 2529ddf:06_split_kv/split_kv.cu > exp/old.cu` (the GPU machine's copy has no .git).
#
#   AB_SRCS="cur=06_split_kv/split_kv.cu old=exp/old.cu cur3=06_split_kv/split_kv.cu@SPLIT_STAGES=3
#            pf=06_split_kv/split_kv.cu+CP_ASYNC_L2_PREFETCH=256" lab/ab06.sh
#
#   AB_SRCS      name=file[+MACRO[=value]]...[@VAR=value]: a source, optionally macros to build it
#                with and one environment setting for its runs
#   AB_SWEEP     the shapes (default sweeps/decode.txt); AB_VARIANTS (06 06s); AB_BLOCK (64); REPS (3)
#   AB_CHECK=0   skip the checked runs every source makes first (tests/gpu_cases.txt and the sweep's
#                shapes up to B x M = 131072)
#   AB_FLOOR=0   leave out the read floor (00_baseline --read-floor), otherwise run once per repetition
#   AB_TRACE=1   build with -DSK_TRACE and print each binary's per-CTA trace on every shape instead
# -> $OUT/ab.csv: the rung's CSV rows, each prefixed with the source's name and the repetition.
set -u
cd "$(dirname "$0")/.."
export ATTN_COMMIT=${COMMIT:-unknown}   # the tree here may have no .git: say which commit this is
OUT=${OUT:-build/out}; mkdir -p "$OUT" build/ab
make -j"$(nproc)" build > build/ab/build.log 2>&1 || { tail -n 30 build/ab/build.log; exit 1; }
objs=$(ls build/obj/06_split_kv/*.o build/obj/common/*.o | grep -v '/split_kv.o$')
trace=; [ "${AB_TRACE:-0}" = 1 ] && trace=-DSK_TRACE
parse() {   # name=file[+MACRO[=value]]...[@VAR=value] -> name, file, def, set
  name=${1%%=*}; local rest=${1#*=}
  set=; case $rest in *@*) set=${rest#*@}; rest=${rest%%@*};; esac
  def=; case $rest in *+*) def=-D$(printf '%s' "${rest#*+}" | sed 's/+/ -D/g'); rest=${rest%%+*};; esac
  file=$rest
}
for src in $AB_SRCS; do          # the builds in parallel
  parse "$src"
  ( nvcc -O3 -lineinfo -std=c++17 -gencode=arch=compute_90,code=sm_90 $trace $def -I06_split_kv -c $file -o build/ab/$name.o \
     && nvcc -gencode=arch=compute_90,code=sm_90 -o build/ab/$name build/ab/$name.o $objs -lcublas -Xcompiler -fopenmp -lm ) &
done
wait
for src in $AB_SRCS; do [ -x build/ab/${src%%=*} ] || { echo "build ${src%%=*} failed"; exit 1; }; done
run() {   # name, env setting or "", then the rung's arguments
  local name=$1 set=$2; shift 2
  env SPLIT_BLOCK=${AB_BLOCK:-64} $set build/ab/$name "$@"
}
if [ "${AB_CHECK:-1}" = 1 ]; then   # every source checked against the reference first: the GPU
  # matrix, and the sweep's shapes up to B x M = 131072 (the larger ones take long on the CPU)
  awk '!/^#/ && NF >= 7 && $1 * $5 <= 131072' ${AB_SWEEP:-sweeps/decode.txt} > build/ab/check-sweep.txt
  for src in $AB_SRCS; do
    parse "$src"
    for v in ${AB_VARIANTS:-06 06s}; do
      for cases in tests/gpu_cases.txt build/ab/check-sweep.txt; do
        run $name "$set" --variant $v --sweep $cases --no-time --quiet --csv build/ab/c.csv > /dev/null 2>> $OUT/ab.err
      done
      echo "check $name $v: ok=$(grep -c ',ok,' build/ab/c.csv) fail=$(grep -c ',FAIL' build/ab/c.csv)" | tee -a $OUT/ab-check.txt
      rm -f build/ab/c.csv
    done
  done
fi
out=$OUT/ab.csv
for rep in $(seq ${REPS:-3}); do
  if [ -z "$trace" ] && [ "${AB_FLOOR:-1}" = 1 ]; then   # the read floor of every shape, each repetition
    build/bin/00_baseline --read-floor --sweep ${AB_SWEEP:-sweeps/decode.txt} --csv build/ab/t.csv --quiet > /dev/null 2>> $OUT/ab.err
    grep -v '^#' build/ab/t.csv | grep -v '^rung' | sed "s/^/floor,$rep,/" >> $out; rm -f build/ab/t.csv
  fi
  for src in $AB_SRCS; do
    parse "$src"
    for v in ${AB_VARIANTS:-06 06s}; do
      if [ -n "$trace" ]; then
        while read -r b hq hkv n m d c; do
          case $b in ''|\#*) continue;; esac
          echo "### $name $v B=$b M=$m" >> $OUT/trace.txt
          run $name "$set" --variant $v --b $b --hq $hq --hkv $hkv --n $n --m $m --d $d --runs 50 --no-check >> $OUT/trace.txt 2>&1
        done < ${AB_SWEEP:-sweeps/decode.txt}
        continue
      fi
      run $name "$set" --variant $v --sweep ${AB_SWEEP:-sweeps/decode.txt} --csv build/ab/t.csv --quiet --no-check > /dev/null 2>> $OUT/ab.err
      grep -v '^#' build/ab/t.csv | grep -v '^rung' | sed "s/^/$name,$rep,/" >> $out; rm -f build/ab/t.csv
    done
  done
  [ -n "$trace" ] && break
done
[ -f $out ] && awk -F, '{k=$3" "$4"x"$8" "$1; s[k]+=$13*1000; n[k]++} END{for(k in s) printf "%-30s %8.2f\n", k, s[k]/n[k]}' $out | sort -k2,2 -k1,1 -k3,3
