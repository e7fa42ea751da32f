/* Rung 06's kernels for float16 in the tile of D = 96 (rows padded to 104 elements): one table of
 * kernels.cuh. */
#include "../kernels.cuh"

const sk_tile sk_f16_d96 = sk_tile_of<__half, 96>();
