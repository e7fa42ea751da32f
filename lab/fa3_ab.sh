#!/usr/bin/env bash
# Rung 07 on the GPU machine, quick, on binaries built here and carried (build/bin, and the other
# tree's rung 07 as build/bin-old/07_old): every variant on the GPU matrix, each under a time limit
# (a barrier phase that never completes hangs a kernel rather than failing it), then the other
# tree's variants (OLD_VARIANTS, rows renamed <id>-old), each build/bin-alt/07_NAME's (ALT_VARIANTS,
# default 07e, rows renamed <id>-NAME: lab/fa3_alt.sh builds them), this tree's (NEW_VARIANTS) and
# the peers on a short sweep (AB_SWEEP, default lab/fa3-ab.txt), unchecked (the matrix checks), one run.
#   -> $OUT/check07.csv, $OUT/ab07.csv; the table of TFLOP/s last
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}; mkdir -p "$OUT"
new=build/bin/07_fa3_wgmma_tma old=build/bin-old/07_old
export ATTN_COMMIT=${COMMIT:-unknown}
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  for v in ${CHECK_VARIANTS:-07a 07b 07c 07d 07e 07f}; do
    timeout ${CHECK_TIMEOUT:-150} $new --variant $v --sweep tests/gpu_cases.txt --no-time --quiet \
        --csv $OUT/check07.csv > $OUT/check-$v.log 2>&1
    echo "check $v: exit $? ok=$(grep -c "^$v,.*,ok," $OUT/check07.csv) fail=$(grep -c "^$v,.*,FAIL" $OUT/check07.csv)" \
         "refused=$(grep -c "^$v,.*,unsupported" $OUT/check07.csv)"
  done
  grep ',FAIL' $OUT/check07.csv | cut -c1-160 | head -n 12
fi
sweep=${AB_SWEEP:-lab/fa3-ab.txt}
rm -f $OUT/ab07.csv build/ab07-old.csv
for v in ${OLD_VARIANTS:-07c 07d}; do
  timeout 200 $old --variant $v --sweep $sweep --no-check --quiet --csv build/ab07-old.csv > /dev/null 2>&1 || echo "old $v: exit $?"
done
[ -f build/ab07-old.csv ] && grep -v '^#' build/ab07-old.csv | sed 's/^\(07[a-z]\),/\1-old,/' >> $OUT/ab07.csv
for alt in build/bin-alt/07_*; do
  [ -x "$alt" ] || continue
  name=${alt##*/07_}; rm -f build/ab07-alt.csv
  for v in ${ALT_VARIANTS:-07e}; do
    timeout 200 $alt --variant $v --sweep $sweep --no-check --quiet --csv build/ab07-alt.csv > /dev/null 2>&1 || echo "$name $v: exit $?"
  done
  [ -f build/ab07-alt.csv ] && grep -v '^#' build/ab07-alt.csv | sed "s/^\(07[a-z]\),/\1-$name,/" >> $OUT/ab07.csv
done
for v in ${NEW_VARIANTS:-07b 07c 07d 07e 07f}; do
  timeout 200 $new --variant $v --sweep $sweep --no-check --quiet --csv $OUT/ab07.csv > /dev/null 2>&1 || echo "new $v: exit $?"
done
python3 tools/peers.py --sweep $sweep --csv $OUT/ab07.csv > $OUT/peers.log 2>&1 || echo "peers: exit $?"
awk -F, '!/^#/ && $10 == "ok" { k = $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 " " $9; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
         if (!($1 in rs)) { rs[$1] = 1; ids[++ni] = $1 } t[k, $1] = $14 }
     END { printf "%-34s", "shape (B Hq Hkv N M d causal dtype)"; for (i = 1; i <= ni; i++) printf " %11s", ids[i]; print ""
           for (j = 1; j <= nk; j++) { printf "%-34s", keys[j]; for (i = 1; i <= ni; i++) printf " %11s", ((keys[j], ids[i]) in t) ? t[keys[j], ids[i]] : "-"; print "" } }' $OUT/ab07.csv
