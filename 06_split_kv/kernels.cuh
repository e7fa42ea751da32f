/* Rung 06's kernels as the host picks them: for each storage type and tile D (64, 96, 128, 256), a
 * table of every instantiation of the split kernel (split_kv.cuh) and the combine kernel
 * (combine_kernel.cuh), by row group (16 or 32 packed rows), K/V loader (paged.cuh: contiguous or
 * paged) and padding (d = D or d < D); in each entry the split kernel with each merge policy (combine_kernel.cuh's
 * merge_later, fused_merge.cuh, cluster_merge.cuh), the combine kernels and the split kernel's
 * shared memory. Each table is defined in a translation unit of its own,
 * instantiations/<type>_d<D>.cu, as FlashAttention-3's hopper/instantiations/ does: the eight compile
 * side by side, and the host side (split_kv.cu) instantiates nothing. */
#ifndef SK_KERNELS_CUH
#define SK_KERNELS_CUH

#include "split_kv.cuh"
#include "paged.cuh"
#include "combine_kernel.cuh"
#include "fused_merge.cuh"
#include "cluster_merge.cuh"

typedef void (*sk_split_fn)(sk_params, sk_plan, sk_pages);
typedef void (*sk_combine_fn)(sk_params, sk_plan);

enum { SK_LATER, SK_FUSED, SK_CLUSTER, SK_MERGES };   /* the split kernel's merge: 06a, 06b, 06c */

typedef struct sk_kernels {
    sk_split_fn split[SK_MERGES];         /* the split kernel with each merge policy */
    sk_combine_fn combine, combine_row;   /* 06a's combine kernel: 32-column slices; whole rows */
    size_t smem;                          /* the split kernel's dynamic shared memory */
} sk_kernels;

/* [row groups of 16, 32][contiguous, paged][d = D, d < D]; the tile of 256 has row groups of 16
 * alone (32 rows would be 256 floats of O a lane), its entries [1] are empty. pair: the two-heads
 * tile (split_kv.cuh, PAIR) over a paged cache, in the tile of 96 alone (elsewhere empty). */
typedef struct sk_tile {
    sk_kernels k[2][2][2];
    sk_kernels pair;
} sk_tile;

extern const sk_tile sk_f16_d64, sk_f16_d96, sk_f16_d128, sk_f16_d256, sk_bf16_d64, sk_bf16_d96, sk_bf16_d128,
    sk_bf16_d256;

/* What an instantiations/ file defines its table with. */
template <typename T, int D, int MT, template <typename, int, bool> class Loader, bool PAD, bool PAIR = false>
constexpr sk_kernels sk_kernels_of()
{
    constexpr int DK = PAIR ? 2 * D : D;   /* K's and V's tiles (split_kv.cuh) */
    return {{split_kv_kernel<T, D, MT, merge_later, Loader, PAD, PAIR>, split_kv_kernel<T, D, MT, merge_fused, Loader, PAD, PAIR>,
             split_kv_kernel<T, D, MT, merge_cluster, Loader, PAD, PAIR>},
            combine_kernel<T, D, 16 * MT, SK_COMB_SLICE, PAD>, combine_kernel<T, D, 16 * MT, D, PAD>,
            sk_smem<DK, MT, Loader<T, DK, PAD>::SLICE>::bytes};
}
template <typename T, int D, int MT>
constexpr void sk_rows_of(sk_kernels (&k)[2][2])
{
    k[0][0] = sk_kernels_of<T, D, MT, kv_contiguous, false>();
    k[0][1] = sk_kernels_of<T, D, MT, kv_contiguous, true>();
    k[1][0] = sk_kernels_of<T, D, MT, kv_paged, false>();
    k[1][1] = sk_kernels_of<T, D, MT, kv_paged, true>();
}
template <typename T, int D>
constexpr sk_tile sk_tile_of()
{
    sk_tile t = {};
    sk_rows_of<T, D, 1>(t.k[0]);
    if constexpr (D < 256) sk_rows_of<T, D, 2>(t.k[1]);
    if constexpr (D == 96) t.pair = sk_kernels_of<T, D, 1, kv_paged, false, true>();
    return t;
}

#endif
