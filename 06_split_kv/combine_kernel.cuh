/* Variant 06a: the merge after the split kernel. Its merge policy, merge_later, writes O and LSE
 * for a sequence covered by one segment and a partial (O normalized, and its LSE) for each segment
 * of a split one; the combine kernel, launched after the split kernel, merges the partials. 06b
 * and 06c merge the partials that they can inside the split kernel and hand the rest to this.
 * The device side (kernels.cuh instantiates it); the launches: split_kv.cu. */
#ifndef SK_COMBINE_KERNEL_CUH
#define SK_COMBINE_KERNEL_CUH

#include "split_kv.cuh"
#include "../common/reduce.cuh"
#include "combine.h"

#define SK_COMB_BATCH 8       /* partials' loads a combine thread issues before any arithmetic */
#define SK_COMB_SLICE 32      /* columns per combine CTA when a row is sliced */

/* 06a's merge policy: a sequence covered by one segment (part < 0) writes O and LSE; a split one
 * writes its partial, and the combine kernel merges the partials after the split kernel. */
template <typename T, int D, int RG>
struct merge_later {
    static __device__ __forceinline__ void put_lse(const sk_params &p, const sk_plan &plan, const sk_out &s, int r, float lse)
    {
        if (s.part < 0) p.lse[s.q_row0 + r] = lse;
        else plan.part_lse[(size_t)s.part * RG + r] = lse;
    }
    /* c < s.d: the kernel never hands over a column past d */
    static __device__ __forceinline__ void put_o(const sk_params &p, const sk_plan &plan, const sk_out &s, int r, int c, float4 acc)
    {
        if (s.part < 0) store4((T *)p.o + (s.q_row0 + r) * s.d + c, acc);
        else *reinterpret_cast<float4 *>(plan.part_o + ((size_t)s.part * RG + r) * D + c) = acc;
    }
    static __device__ __forceinline__ void finish(const sk_params &, const sk_plan &, const sk_out &) {}
};

/* The combine kernel: 06a's merge of every split sequence, after the split kernel. One CTA of 128
 * threads per (split sequence, row, COLS columns): partial lanes x float4 column groups, COLS = 32
 * (16 lanes; a B = 1 row may have 100+ partials) or the whole row when no lane gets more than one
 * partial. Its time is round trips to L2, not bytes, so each thread issues its first 8 loads of O
 * before anything else; meanwhile the block reduces the partials' LSEs to {m, d} (common/
 * reduce.cuh) and forms the weights combine_weight() (combine.h, checked on the CPU against the
 * unsplit softmax); lanes and their sums go in a fixed order (same bits every launch). At B = 1,
 * M = 32768 (86 partials): 2.4 us from the wait to the last exit, 7.7 with one CTA per row and
 * each weight formed next to its load (results/lab/h100-trace06.txt, h100-trace06-before.txt).
 * PAD (d < D): partials are D floats a row, their columns past d never written; a thread whose
 * float4 column group lies past d loads nothing (nx = 0), and no column past d is stored. */
template <typename T, int D, int RG, int COLS, bool PAD>
__global__ void __launch_bounds__(128)
combine_kernel(sk_params p, sk_plan plan)
{
    constexpr int CGS = COLS / 4, LANES = 128 / CGS;       /* float4 column groups, partial lanes */
    extern __shared__ float s_w[];                          /* the row's n weights */
    __shared__ float4 red[LANES][CGS];
    const int seq = plan.split_seqs[blockIdx.x], r = blockIdx.y, c0 = blockIdx.z * COLS, d = p.d;
    const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    if (rg * RG + r >= p.rows) return;                     /* a padding row (uniform per block) */
    const int p0 = plan.seq_part[seq], n = plan.seq_part[seq + 1] - p0;
    const int pl = threadIdx.x / CGS, cg = threadIdx.x % CGS;
    /* the partials whose O this thread reads; none past the last whole lane (a row of 96 is 24
     * float4 groups: 5 lanes of 128 threads, 8 threads left over) */
    constexpr bool WHOLE = LANES * CGS == 128;
    const bool lane_ok = WHOLE || pl < LANES;
    const int nx = (!PAD || c0 + cg * 4 < d) && lane_ok ? n : 0;
    const float *lse = plan.part_lse + (size_t)p0 * RG + r;
    const float *src = plan.part_o + ((size_t)p0 * RG + r) * D + c0 + cg * 4;
    constexpr size_t PSTRIDE = (size_t)RG * D;             /* floats from one partial to the next */
    /* Launched as a programmatic dependent of the split kernel (sm_90): the launch and the plan
     * reads above overlap its tail; the partials may be read only after this wait. */
    pdl_wait();
    float4 x[SK_COMB_BATCH];
#pragma unroll
    for (int i = 0; i < SK_COMB_BATCH; i++) {
        const int k = pl + i * LANES;
        if (k < nx) x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));   /* via L2 */
    }
    md_t st = md_identity();
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        const float v = __ldcg(lse + (size_t)k * RG);
        s_w[k] = v;
        st = md_merge(st, md_of(v));
    }
    st = block_md(st);                                     /* its barriers publish s_w too */
    for (int k = threadIdx.x; k < n; k += blockDim.x) s_w[k] = combine_weight(s_w[k], st);
    __syncthreads();

    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += LANES * SK_COMB_BATCH) {
        if (base > 0) {                                    /* more partials than one batch */
#pragma unroll
            for (int i = 0; i < SK_COMB_BATCH; i++) {
                const int k = base + pl + i * LANES;
                if (k < nx) x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));
            }
        }
#pragma unroll
        for (int i = 0; i < SK_COMB_BATCH; i++) {
            const int k = base + pl + i * LANES;
            if (k < nx) {
                const float w = s_w[k];
                acc.x += w * x[i].x; acc.y += w * x[i].y; acc.z += w * x[i].z; acc.w += w * x[i].w;
            }
        }
    }
    if (lane_ok) red[pl][cg] = acc;
    __syncthreads();
    const size_t row = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG + r;
#pragma unroll
    for (int i = 0; i < (COLS + 127) / 128; i++) {        /* a whole row of 256: two columns a thread */
        const int c = threadIdx.x + i * 128;
        if (c < COLS && (!PAD || c0 + c < d)) {
            float v = 0.0f;
#pragma unroll
            for (int l = 0; l < LANES; l++) v += reinterpret_cast<const float *>(red[l])[c];   /* column c of lane l */
            ((T *)p.o)[row * (PAD ? d : D) + c0 + c] = to_storage<T>(v);
        }
    }
    if (blockIdx.z == 0 && threadIdx.x == 0) p.lse[row] = md_lse(st);
}

#endif
