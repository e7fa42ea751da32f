/* Rung 06's kernels for float16 in the tile of D = 64: one table of kernels.cuh. */
#include "../kernels.cuh"

const sk_tile sk_f16_d64 = sk_tile_of<__half, 64>();
