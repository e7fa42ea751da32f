/* Variant 06b: the fused merge. Against 06a, one change: a sequence split into at most
 * SK_FUSE_MAX partials is merged inside the split kernel, by the CTA that writes its last partial,
 * so there is no second launch and no wait for the whole split kernel to end. Sequences with
 * more partials go to 06a's combine kernel, as before (one CTA merging many would be slow).
 *
 * The hand-off, one release and one acquire: a barrier orders every thread's partial stores before
 * thread 0's atomic count, whose release (at GPU scope, cumulative) publishes them all; the CTA
 * that brings the count to n acquires the other CTAs' partials with the same atomic, a second
 * barrier passes that on to its threads, and they read the n partials through L2 (__ldcg: an
 * SM's L1 does not see other SMs' writes). It puts the counter back to 0 for the next launch: no
 * other CTA touches it once it has reached n. (A __threadfence in every thread before a relaxed
 * atomic is also correct, and measured slower: NOTES.md.)
 *
 * The device side, a merge policy of split_kv.cuh's kernel (kernels.cuh instantiates it); when
 * the host launches it and the variant's descriptor: split_kv.cu. */
#ifndef SK_FUSED_MERGE_CUH
#define SK_FUSED_MERGE_CUH

#include "combine_kernel.cuh"   /* merge_later, and the combine kernel for more partials */

#define SK_FUSE_MAX 4             /* 8 was slower at B = 1 (NOTES.md, "Tried, not kept") */

/* One (row, 4 columns) pair of a split sequence: merges its n <= NMAX partial LSEs l and pieces x
 * of O in the order k = 0, 1, ...: their {m, d}, then the weights combine_weight() (combine.h, the
 * code the CPU test checks against the unsplit softmax); the fixed order gives the same bits
 * whichever CTA merges. Writes the 4 elements (storage type T) at dst and, when lse_out is not
 * NULL, the row's LSE. 06c's cluster merge uses it too. */
template <int NMAX, typename T>
__device__ __forceinline__ void merge_pair(const float *l, const float4 *x, int n, T *dst, float *lse_out)
{
    md_t st = md_identity();
#pragma unroll
    for (int k = 0; k < NMAX; k++)
        if (k < n) st = md_merge(st, md_of(l[k]));
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int k = 0; k < NMAX; k++)
        if (k < n) {
            const float w = combine_weight(l[k], st);
            acc.x += w * x[k].x; acc.y += w * x[k].y; acc.z += w * x[k].z; acc.w += w * x[k].w;
        }
    store4(dst, acc);
    if (lse_out) *lse_out = md_lse(st);
}

template <typename T, int D, int RG>
struct merge_fused : merge_later<T, D, RG> {   /* partials are written as in 06a; then: */
    static __device__ __forceinline__ void finish(const sk_params &p, const sk_plan &plan, const sk_out &s)
    {
        if (s.part < 0) return;
        __syncthreads();                      /* every thread's partial stores, before the release */
        if (threadIdx.x == 0) {
            const int n = plan.seq_part[s.seq + 1] - plan.seq_part[s.seq];
            const int before = atomic_add_acq_rel(plan.seq_count + s.seq);
            *s.s_flag = before == n - 1;
            if (*s.s_flag) plan.seq_count[s.seq] = 0;
        }
        __syncthreads();                      /* thread 0's acquire, passed on to every thread */
        if (*s.s_flag) merge_sequence(p, plan, s);
    }

    /* Each thread takes two (row, 4 adjacent columns) pairs at a time and loads their n partial
     * LSEs and n float4 pieces of O before it does any arithmetic, so the two pairs cost one round
     * trip to L2, not 2n (a row group of 8 rows at d = 128 is 256 pairs: one round trip for 128
     * threads). Columns past s.d (a padded head dim) are not O's: neither read nor written. */
    static __device__ __forceinline__ void merge_sequence(const sk_params &p, const sk_plan &plan, const sk_out &s)
    {
        constexpr int CG = D / 4, PAIRS = 2;
        const int p0 = plan.seq_part[s.seq], n = plan.seq_part[s.seq + 1] - p0;
        for (int base = 0; base < s.n_rows * CG; base += PAIRS * SK_THREADS) {
            float lse[PAIRS][SK_FUSE_MAX];
            float4 x[PAIRS][SK_FUSE_MAX];
#pragma unroll
            for (int i = 0; i < PAIRS; i++) {
                const int e = base + i * SK_THREADS + threadIdx.x, r = e / CG, c = (e % CG) * 4;
                const bool ok = r < s.n_rows && c < s.d;   /* once, not per partial: per partial, a
                                                             padded kernel spilled 16 bytes (sm_80) */
#pragma unroll
                for (int k = 0; k < SK_FUSE_MAX; k++)
                    if (k < n && ok) {
                        lse[i][k] = __ldcg(plan.part_lse + (size_t)(p0 + k) * RG + r);
                        x[i][k] = __ldcg(reinterpret_cast<const float4 *>(plan.part_o + ((size_t)(p0 + k) * RG + r) * D + c));
                    }
            }
#pragma unroll
            for (int i = 0; i < PAIRS; i++) {
                const int e = base + i * SK_THREADS + threadIdx.x, r = e / CG, c = (e % CG) * 4;
                if (r < s.n_rows && c < s.d)
                    merge_pair<SK_FUSE_MAX>(lse[i], x[i], n, (T *)p.o + (s.q_row0 + r) * s.d + c,
                                            c == 0 ? p.lse + s.q_row0 + r : NULL);
            }
        }
    }
};

#endif
