#!/usr/bin/env bash
# How much the state a run starts from moves the harness's median (its default ~20 launches at long
# shapes): each kernel timed with default runs after 10 s idle, then right after 3 s of itself.
set -u
R=${OUT:?}
tar xJf build/x80/pb.tar.xz -C build/x80
B8=build/x80/b/08_backward; B7=build/x80/b/07_fa3_wgmma_tma
for k in "8|$B8 --variant 08d --b 1 --h 16 --n 16384 --d 128" "7|$B7 --variant 07f --b 1 --h 16 --n 16384 --d 128"; do
  id=${k%%|*}; cmd=${k#*|}
  sleep 10
  $cmd --no-check --quiet --csv $R/idle-$id.csv > /dev/null 2>&1
  $cmd --no-check --quiet --runs 300 --csv $R/heat-$id.csv > /dev/null 2>&1
  $cmd --no-check --quiet --csv $R/hot-$id.csv > /dev/null 2>&1
  for f in idle heat hot; do echo "$id $f $(grep -v '^#' $R/$f-$id.csv | tail -1 | cut -d, -f1,11-14)"; done >> $R/summary.txt
done
cat $R/summary.txt
