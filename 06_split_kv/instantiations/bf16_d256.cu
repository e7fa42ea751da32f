/* Rung 06's kernels for bfloat16 in the tile of D = 256: one table of kernels.cuh. */
#include "../kernels.cuh"

const sk_tile sk_bf16_d256 = sk_tile_of<__nv_bfloat16, 256>();
