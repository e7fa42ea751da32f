/* Variant 06c, rung 06's own: the cluster merge (sm_90). Against 06b, one change: when the plan
 * gives every sequence the same C = 2..8 one-segment CTAs, and all of its clusters fit on the GPU
 * at once, each sequence's CTAs are launched as one thread-block cluster and merge their partials
 * through distributed shared memory. No partial goes to global memory, no CTA waits on another's
 * writes through L2, and no counter decides who merges. Other plans run as 06b.
 *
 * In the kernel: each CTA leaves its normalized O (float32, after the warps' scratch) and its
 * rows' LSEs in its own shared memory; after a cluster barrier, CTA q of the C merges the q-th
 * share of the (row, 4 columns) pairs, reading the C CTAs' pieces with ld.shared::cluster, with
 * 06b's arithmetic (merge_pair); a second barrier keeps every CTA's shared memory alive until all
 * have read it. On sm_80 the host never asks for it and the instructions compile to a trap (the
 * cluster wrappers are common/cta_sync.cuh's).
 *
 * The device side, a merge policy of split_kv.cuh's kernel (kernels.cuh instantiates it); when
 * the host launches it and the variant's descriptor: split_kv.cu. */
#ifndef SK_CLUSTER_MERGE_CUH
#define SK_CLUSTER_MERGE_CUH

#include "fused_merge.cuh"   /* merge_pair */

#define SK_CLUSTER_MAX 8          /* the portable cluster size */
template <typename T, int D, int RG>
struct merge_cluster {
    static __device__ __forceinline__ void put_lse(const sk_params &, const sk_plan &, const sk_out &s, int r, float lse)
    {
        s.s_lse[r] = lse;                     /* its thread has read row r's l of every warp */
    }
    static __device__ __forceinline__ void put_o(const sk_params &, const sk_plan &, const sk_out &s, int r, int c, float4 acc)
    {
        *reinterpret_cast<float4 *>(s.s_o + r * D + c) = acc;
    }
    static __device__ __forceinline__ void finish(const sk_params &p, const sk_plan &, const sk_out &s)
    {
        constexpr int CG = D / 4;
        const int C = cluster_size();
        cluster_barrier();                    /* every CTA's s_o and s_lse are written */
        const int q = (int)cluster_rank();
        for (int e = q * SK_THREADS + threadIdx.x; e < s.n_rows * CG; e += C * SK_THREADS) {
            const int r = e / CG, c = (e % CG) * 4;
            if (c >= s.d) continue;           /* a padded head dim: the columns past d are not O's */
            float l[SK_CLUSTER_MAX];
            float4 x[SK_CLUSTER_MAX];
#pragma unroll
            for (int j = 0; j < SK_CLUSTER_MAX; j++)
                if (j < C) {
                    l[j] = ld_cluster(cluster_addr(s.s_lse + r, j));
                    x[j] = ld_cluster4(cluster_addr(s.s_o + r * D + c, j));
                }
            merge_pair<SK_CLUSTER_MAX>(l, x, C, (T *)p.o + (s.q_row0 + r) * s.d + c,
                                       c == 0 ? p.lse + s.q_row0 + r : NULL);
        }
        cluster_barrier();                    /* no CTA leaves while others read it */
    }
};

#endif
