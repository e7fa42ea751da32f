# The commands of the Nsight Compute run of results/lab/h100-ncu-s26.csv (on the device machine, in a tree of exp/07g-ov-exp2 at e67eba2, OUT the output folder)
m=sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,gpu__time_duration.sum
for r in barrier wait long_scoreboard short_scoreboard math_pipe_throttle mio_throttle dispatch_stall no_instruction sleeping membar lg_throttle; do m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
while read -r bin v a; do
  echo "### $v $a" >> $OUT/prof.csv
  timeout 60 ncu --profile-from-start off --clock-control none --metrics $m --csv --page raw build/bin/$bin --variant $v $a --profile 2>&1 | grep '^"' >> $OUT/prof.csv
  echo "ncu $v $a rc=$?"
done <<'L'
07_fa3_wgmma_tma 07g-ov --dtype e4m3 --b 1 --hq 16 --hkv 16 --n 16384 --m 16384 --d 128
07_fa3_wgmma_tma 07g-ov --dtype e4m3 --b 1 --hq 32 --hkv 32 --n 16384 --m 16384 --d 64
07_fa3_wgmma_tma 07g-ov --dtype e4m3 --b 4 --hq 16 --hkv 16 --n 4096 --m 4096 --d 128
07_fa3_wgmma_tma 07g-ov --dtype e4m3 --b 2 --hq 16 --hkv 16 --n 8192 --m 8192 --d 128 --causal
07_fa3_wgmma_tma 07g-ov --dtype e4m3 --fp8-exp2 4 --b 1 --hq 16 --hkv 16 --n 16384 --m 16384 --d 128
08_backward 08d --b 2 --hq 16 --hkv 16 --n 8192 --m 8192 --d 128
08_backward 08d --b 2 --hq 32 --hkv 32 --n 8192 --m 8192 --d 64
08_backward 08d --b 8 --hq 16 --hkv 16 --n 2048 --m 2048 --d 128 --causal
08_backward 08d --b 32 --hq 16 --hkv 16 --n 512 --m 512 --d 128
08_backward 08c --b 2 --hq 16 --hkv 16 --n 8192 --m 8192 --d 128
L
