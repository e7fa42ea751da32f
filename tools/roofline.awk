# The roofline's arithmetic, written once: tools/profile.sh places each rung variant with it,
# tools/readme_results.sh's profile block says how far below the roof each one is, and
# tests/profile.sh checks it on worked examples. (plots/roofline.gp draws the same roof line.)
# Functions only: load it before a program (awk -f tools/roofline.awk -f PROGRAM, or prepend it).

# Visible (query, key) pairs for one head, the batch summed, as common/attn.h counts them: causal
# masks aligned bottom-right (query i sees key j iff j <= i + M - N).
function visible_pairs(B, N, M, causal,   i, e, t) {
  if (!causal) return B * N * M
  t = 0
  for (i = 0; i < N; i++) { e = i + M - N + 1; t += e < 0 ? 0 : (e > M ? M : e) }
  return B * t
}
# The course's FLOP count (common/attn.h): 4 * Hq * d per visible pair (2 for Q K^T, 2 for P V).
function attn_flops(B, Hq, N, M, d, causal) { return 4 * Hq * d * visible_pairs(B, N, M, causal) }
# Arithmetic intensity: FLOPs per byte that crossed the DRAM interface (read + written).
function intensity(flops, rd, wr) { return rd + wr > 0 ? flops / (rd + wr) : 0 }
# Achieved TFLOP/s: FLOPs over nanoseconds of kernel time.
function tflops_of(flops, ns) { return ns > 0 ? flops / ns / 1e3 : 0 }
# The roof at intensity ai (FLOP/byte): the copy bandwidth (GB/s) times ai, in TFLOP/s, capped by
# the GEMM ceiling (TFLOP/s); without a GEMM ceiling, the slope alone.
function attainable(ai, gemm, copy,   m) { m = ai * copy / 1e3; return (gemm > 0 && gemm < m) ? gemm : m }
