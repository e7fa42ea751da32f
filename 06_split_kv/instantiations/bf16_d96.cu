/* Rung 06's kernels for bfloat16 in the tile of D = 96 (rows padded to 104 elements): one table of
 * kernels.cuh. */
#include "../kernels.cuh"

const sk_tile sk_bf16_d96 = sk_tile_of<__nv_bfloat16, 96>();
