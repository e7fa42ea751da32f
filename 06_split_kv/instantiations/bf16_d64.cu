/* Rung 06's kernels for bfloat16 in the tile of D = 64: one table of kernels.cuh. */
#include "../kernels.cuh"

const sk_tile sk_bf16_d64 = sk_tile_of<__nv_bfloat16, 64>();
