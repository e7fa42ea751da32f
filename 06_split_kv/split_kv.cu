/* Rung 06: Flash-Decoding. Split each request's KV cache across CTAs, write partial (O, LSE),
 * merge the partials with their LSE weights; plan the split on the CPU so that no SM waits.
 *
 * Why: a decode step brings Nq = 1..16 query tokens per request. Rung 05 gives each request and
 * head one CTA with mostly empty query rows, so B * Hq CTAs (8 for B = 1) stream the whole KV
 * cache while the other SMs idle. Decode is memory-bound: the goal is the copy bandwidth.
 *
 * What changed against rung 05:
 *   - GQA packing: the g = Hq/Hkv query heads that share a KV head, times the Nq tokens, are the
 *     rows of one tile (row r = head-in-group * Nq + token, contiguous in Q and O), so each K/V
 *     element is read once per KV head instead of once per query head.
 *   - The work unit is a segment: a contiguous range of KV blocks (128 keys) of one sequence (one
 *     request, KV head and group of up to 32 rows). The planner (planner.c) assigns segments to
 *     CTAs; a CTA may walk several (the balanced planner cuts across requests).
 *   - Warps split the keys, not the rows: each 64-key tile is four 16-key slices, one per warp;
 *     every warp keeps its own O, m, l for all the rows, and the four are merged at the end of a
 *     segment through shared memory with the {m, d} merge.
 *   - A four-stage cp.async pipeline keeps about 96 KB of K/V in flight per SM (d = 128).
 *   - A sequence covered by one segment writes O and LSE directly; otherwise each segment writes a
 *     float32 partial O (normalized) and its LSE. Variant 06 on sm_90, when every sequence has the
 *     same 2..8 one-segment CTAs and all of them fit on the GPU at once, launches each sequence's
 *     CTAs as one thread-block cluster that merges through distributed shared memory (no partials
 *     in global memory). Otherwise, with at most SK_FUSE_MAX partials per sequence, the CTA that
 *     writes the last one merges them (variant 06); otherwise, and always in variant 06s, the
 *     combine kernel does, launched as a programmatic dependent on sm_90.
 *
 * Grid: one CTA per plan entry; block: 4 warps. Shared memory: Q tile RG x d (RG = 16 or 32
 * packed rows), STAGES x (K tile 64 x d + V tile 64 x d), all XOR-swizzled (common/tiles.cuh);
 * after a segment the K/V stages are reused as float32 scratch for the four warps' O. */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/mma.cuh"
#include "../common/tiles.cuh"
#include "planner.h"
#include "combine.h"
#include "../common/reduce.cuh"

#define SK_WARPS 4
#define SK_THREADS (SK_WARPS * 32)
#define SK_TILE 64            /* keys per pipeline stage: 16 per warp */
#define SK_STAGES 4           /* default pipeline depth; SPLIT_STAGES=3 for experiments */
#define SK_BLOCK_DEFAULT 128  /* keys per KV block, the planner's unit (SPLIT_BLOCK=64|128|...) */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

/* The plan as the kernel reads it (device copies of split_plan's arrays). */
typedef struct sk_plan {
    const int4 *cta_info;     /* per CTA, two int4: {first segment, end segment, -, -} and the first
                                 segment itself, so a CTA starts after one round trip, not two */
    const int4 *segs;         /* {seq, blk_begin, blk_end, part} */
    const int *seq_part;      /* n_seqs + 1 */
    const int *split_seqs;    /* the sequences that have partials (the combine kernel's grid) */
    int *seq_count;           /* fused merge: partials of each sequence written so far (reset to 0) */
    int fused;                /* 1: the last CTA of a sequence merges it; 0: the combine kernel does */
    float *part_o;            /* [n_parts][RG][d], normalized by its own l */
    float *part_lse;          /* [n_parts][RG] */
    int cluster;              /* > 0: the launch is in clusters of this many CTAs, one sequence each,
                                 merged in the cluster (see cluster_merge); sm_90 only */
} sk_plan;

typedef struct sk_params {
    const __half *q, *k, *v;
    __half *o;
    float *lse;
    const int *seqlens_k;
    int Hq, Hkv, N, M, causal, g, rows, n_rg;
    int blk;                  /* keys per KV block (the plan's unit), a multiple of SK_TILE */
    float scale_log2;
} sk_params;

/* A timeline of one launch, for the README's "where the time goes" (build with -DSK_TRACE:
 * lab/gpu_run.sh trace06). Thread 0 of each split CTA stamps the global nanosecond timer at
 * entry, when its first K/V tile has landed, when its last segment's loop ends, and at exit; each
 * combine CTA at entry, after griddepcontrol.wait, and at exit. Every launch overwrites the stamps;
 * at exit the host prints the last launch's (a timed one, after an L2 flush). Without SK_TRACE the
 * stamps compile to nothing. */
#define SK_TRACE_MAX 4096
#ifdef SK_TRACE
__device__ unsigned long long sk_trace_split[SK_TRACE_MAX][4];
__device__ unsigned long long sk_trace_comb[SK_TRACE_MAX][3];
__device__ __forceinline__ unsigned long long sk_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define SK_STAMP(arr, cta, slot) \
    do { if (threadIdx.x == 0 && (cta) < SK_TRACE_MAX) arr[cta][slot] = sk_now(); } while (0)
#else
#define SK_STAMP(arr, cta, slot) do { } while (0)
#endif

template <int D, int MT, int STAGES>
struct sk_smem {
    static constexpr int RG = 16 * MT;
    static constexpr size_t q = (size_t)RG * D * 2;
    static constexpr size_t stage = (size_t)2 * SK_TILE * D * 2;          /* K + V */
    static constexpr size_t ml = (size_t)2 * SK_WARPS * RG * 4;
    static constexpr size_t bytes = q + STAGES * stage + ml + 16;   /* + the fused merge's flag */
    static_assert((size_t)SK_WARPS * RG * (D + 8) * 4 <= STAGES * stage, "scratch fits in the stages");
    static_assert(((size_t)SK_WARPS * RG * (D + 8) + (size_t)RG * D) * 4 <= STAGES * stage, "and the cluster merge's O after it");
};

/* The fused merge of one split sequence with at most SK_FUSE_MAX partials, by the CTA that wrote
 * its last partial: each thread takes two (row, 4 adjacent columns) pairs at a time and loads
 * their n partial LSEs and n float4 pieces of O before it does any arithmetic, so the two pairs
 * cost one round trip to L2, not 2n (a row group of 8 rows at d = 128 is 256 pairs: one round
 * trip for 128 threads). Then the {m, d} of the LSEs in the order k = 0, 1, ... and the weights
 * combine_weight() (combine.h, the code the CPU test checks against the unsplit softmax); the
 * fixed order gives the same bits whichever CTA merges. Loads go through L2 (__ldcg): other CTAs of this launch wrote the
 * partials, and an SM's L1 does not see other SMs' writes. */
#ifndef SK_FUSE_MAX
#define SK_FUSE_MAX 4         /* an experiment knob: -DSK_FUSE_MAX=8 (lab/ab06.sh) */
#endif

/* One (row, 4 columns) pair of a split sequence: merges its n <= NMAX partial LSEs l and pieces x
 * of O in the order k = 0, 1, ...: their {m, d}, then the weights combine_weight() (combine.h, the
 * code the CPU test checks against the unsplit softmax). Writes the 4 halves at dst and, when
 * lse_out is not NULL, the row's LSE. */
template <int NMAX>
__device__ __forceinline__ void merge_pair(const float *l, const float4 *x, int n, __half *dst, float *lse_out)
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
    __half2 *d2 = reinterpret_cast<__half2 *>(dst);
    d2[0] = __floats2half2_rn(acc.x, acc.y);
    d2[1] = __floats2half2_rn(acc.z, acc.w);
    if (lse_out) *lse_out = md_lse(st);
}

template <int D, int RG>
__device__ __forceinline__ void merge_seq_cta(const sk_params &p, const sk_plan &plan, int seq, int n_rows)
{
    constexpr int CG = D / 4;                              /* groups of 4 columns in a row */
    constexpr int PAIRS = 2;                               /* (row, group) pairs per thread per round trip */
    const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    const int p0 = plan.seq_part[seq], n = plan.seq_part[seq + 1] - p0;
    const size_t row0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG;
    for (int base = 0; base < n_rows * CG; base += PAIRS * SK_THREADS) {
        float lse[PAIRS][SK_FUSE_MAX];
        float4 x[PAIRS][SK_FUSE_MAX];
#pragma unroll
        for (int i = 0; i < PAIRS; i++) {
            const int e = base + i * SK_THREADS + threadIdx.x, r = e / CG, c = (e % CG) * 4;
#pragma unroll
            for (int k = 0; k < SK_FUSE_MAX; k++)
                if (k < n && r < n_rows) {
                    lse[i][k] = __ldcg(plan.part_lse + (size_t)(p0 + k) * RG + r);
                    x[i][k] = __ldcg(reinterpret_cast<const float4 *>(plan.part_o + ((size_t)(p0 + k) * RG + r) * D + c));
                }
        }
#pragma unroll
        for (int i = 0; i < PAIRS; i++) {
            const int e = base + i * SK_THREADS + threadIdx.x, r = e / CG, c = (e % CG) * 4;
            if (r < n_rows) merge_pair<SK_FUSE_MAX>(lse[i], x[i], n, p.o + (row0 + r) * D + c, c == 0 ? p.lse + row0 + r : NULL);
        }
    }
}

/* The cluster merge (variant 06 on sm_90, when the plan allows it: see sk_cluster_for). The CTAs
 * of one sequence run as one thread-block cluster and merge their partials through distributed
 * shared memory: no partial goes to global memory, no CTA waits on another's writes through L2,
 * and no counter decides who merges. Each CTA leaves its normalized O (float32) and its rows' LSEs
 * in its own shared memory; after a cluster barrier, CTA q of the C merges the q-th share of the
 * (row, 4 columns) pairs, reading the C CTAs' pieces with ld.shared::cluster, with the fused
 * merge's arithmetic (merge_pair); a second barrier keeps every CTA's shared memory alive until
 * all have read it. On sm_80 the host never asks for it and these compile to a trap. */
#define SK_CLUSTER_MAX 8
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SK_ASM_SM90(...) asm volatile(__VA_ARGS__)
#else
#define SK_ASM_SM90(...) __trap()
#endif
__device__ __forceinline__ uint32_t cluster_rank(void)
{
    uint32_t r = 0;
    SK_ASM_SM90("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_barrier(void)
{
    SK_ASM_SM90("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ uint32_t cluster_addr(const void *p, uint32_t rank)   /* rank's copy of p */
{
    uint32_t r = 0;
    SK_ASM_SM90("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
    return r;
}
__device__ __forceinline__ float ld_cluster(uint32_t a)
{
    float v = 0.0f;
    SK_ASM_SM90("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ float4 ld_cluster4(uint32_t a)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    SK_ASM_SM90("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory");
    return v;
}

/* sO: this CTA's normalized O, [RG][D] float32; sLse: its rows' LSEs. Called by every thread. */
template <int D>
__device__ __forceinline__ void cluster_merge(const sk_params &p, int C, const float *sO, const float *sLse,
                                              size_t q_row0, int n_rows)
{
    constexpr int CG = D / 4;
    cluster_barrier();                                  /* every CTA's sO and sLse are written */
    const int q = (int)cluster_rank();
    for (int e = q * SK_THREADS + threadIdx.x; e < n_rows * CG; e += C * SK_THREADS) {
        const int r = e / CG, c = (e % CG) * 4;
        float l[SK_CLUSTER_MAX];
        float4 x[SK_CLUSTER_MAX];
#pragma unroll
        for (int j = 0; j < SK_CLUSTER_MAX; j++)
            if (j < C) {
                l[j] = ld_cluster(cluster_addr(sLse + r, j));
                x[j] = ld_cluster4(cluster_addr(sO + r * D + c, j));
            }
        merge_pair<SK_CLUSTER_MAX>(l, x, C, p.o + (q_row0 + r) * D + c, c == 0 ? p.lse + q_row0 + r : NULL);
    }
    cluster_barrier();                                  /* no CTA leaves while others read it */
}

template <int D, int MT, int STAGES>
__global__ void __launch_bounds__(SK_THREADS)
split_kv_kernel(sk_params p, sk_plan plan)
{
    constexpr int RG = 16 * MT, DT = D / 8;
    typedef sk_smem<D, MT, STAGES> L;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __half *sQ = reinterpret_cast<__half *>(smem_raw);
    __half *sKV = reinterpret_cast<__half *>(smem_raw + L::q);          /* stage s: K then V */
    float *scratch = reinterpret_cast<float *>(sKV);                     /* [warp][RG][D + 8] */
    float *sM = reinterpret_cast<float *>(smem_raw + L::q + STAGES * L::stage);
    float *sL = sM + SK_WARPS * RG;
    int *s_last = reinterpret_cast<int *>(sL + SK_WARPS * RG);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    /* ldmatrix lane bases (see fa2.cu): Q rows, this warp's 16 keys of a K / V stage */
    const uint32_t q_lane = smem_addr(sQ + tile_off<D, true>(lane % 16, (lane / 16) * 8));
    const uint32_t k_lane = smem_addr(sKV + tile_off<D, true>(warp * 16 + (lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    const uint32_t v_lane = smem_addr(sKV + SK_TILE * D + tile_off<D, true>(warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8, (lane / 16) * 8));
    constexpr uint32_t STAGE_BYTES = (uint32_t)L::stage;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Programmatic dependent launch: the combine kernel may start now; it waits (griddepcontrol.wait)
     * for this grid to finish before it reads any partial. */
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    SK_STAMP(sk_trace_split, blockIdx.x, 0);
    const int4 head = plan.cta_info[2 * blockIdx.x], first = plan.cta_info[2 * blockIdx.x + 1];
    for (int si = head.x; si < head.y; si++) {
        const int4 seg = si == head.x ? first : plan.segs[si];
        const int seq = seg.x, rg = seq % p.n_rg, bk = seq / p.n_rg;
        const int kvh = bk % p.Hkv, b = bk / p.Hkv;
        const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
        const int k_lo = seg.y * p.blk, k_hi = min(seg.z * p.blk, mk);
        const int n_tiles = (k_hi - k_lo + SK_TILE - 1) / SK_TILE;
        const int r0 = rg * RG;                              /* first packed row of the group */
        const size_t q_row0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + r0;   /* rows contiguous */
        const __half *k_ptr = p.k + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * D;
        const __half *v_ptr = p.v + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * D;
        const int causal_from = p.causal ? mk - p.N + 1 : mk;   /* keys >= this may be masked */

        load_tile<D, RG, SK_THREADS, true, true>(sQ, p.q + q_row0 * D, p.rows - r0);
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < n_tiles) {
                __half *st = sKV + s * (L::stage / 2);
                load_tile<D, SK_TILE, SK_THREADS, true, true>(st, k_ptr + (size_t)s * SK_TILE * D, k_hi - k_lo - s * SK_TILE);
                load_tile<D, SK_TILE, SK_THREADS, true, true>(st + SK_TILE * D, v_ptr + (size_t)s * SK_TILE * D, k_hi - k_lo - s * SK_TILE);
            }
            cp_async_commit();
        }

        float o[MT][DT][4], m_run[MT][2], l_run[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int dt = 0; dt < DT; dt++) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.0f;
            m_run[mt][0] = m_run[mt][1] = -INFINITY;
            l_run[mt][0] = l_run[mt][1] = 0.0f;
        }

        for (int j = 0; j < n_tiles; j++) {
            cp_async_wait<STAGES - 2>();   /* tile j has landed (this thread's part) */
            __syncthreads();                  /* ...everyone's part; and tile j - 1 is consumed */
            if (j == 0 && si == head.x) SK_STAMP(sk_trace_split, blockIdx.x, 1);
            {
                const int nj = j + STAGES - 1;
                if (nj < n_tiles) {
                    __half *st = sKV + (nj % STAGES) * (L::stage / 2);
                    load_tile<D, SK_TILE, SK_THREADS, true, true>(st, k_ptr + (size_t)nj * SK_TILE * D, k_hi - k_lo - nj * SK_TILE);
                    load_tile<D, SK_TILE, SK_THREADS, true, true>(st + SK_TILE * D, v_ptr + (size_t)nj * SK_TILE * D, k_hi - k_lo - nj * SK_TILE);
                }
                cp_async_commit();
            }
            const uint32_t stage_off = (uint32_t)(j % STAGES) * STAGE_BYTES;

            /* S = Q K^T: all RG rows x this warp's 16 keys */
            float s[MT][2][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < 2; nt++) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D; kk += 16) {
                uint32_t bk[4];
                ldmatrix_x4(bk, (k_lane + stage_off) ^ ((kk / 8) * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    uint32_t a[4];
                    ldmatrix_x4(a, (q_lane + mt * 16 * D * 2) ^ ((kk / 8) * 16));
                    mma_16816(s[mt][0], a, bk[0], bk[1]);
                    mma_16816(s[mt][1], a, bk[2], bk[3]);
                }
            }

            /* masks: past the segment's keys, and the causal corner (Nq > 1, last keys only) */
            const int key0 = k_lo + j * SK_TILE + warp * 16;
            if (key0 + 16 > k_hi || key0 + 16 > causal_from) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int key = key0 + nt * 8 + 2 * t + (e & 1);
                            const int qi = (r0 + mt * 16 + g + (e >= 2 ? 8 : 0)) % p.N;   /* token */
                            if (key >= k_hi || (p.causal && key > qi + mk - p.N)) s[mt][nt][e] = -INFINITY;
                        }
            }

            /* online softmax over this warp's keys, log2 units (as in rung 05) */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int hi = 0; hi < 2; hi++) {
                    float mx = fmaxf(fmaxf(s[mt][0][2 * hi], s[mt][0][2 * hi + 1]),
                                     fmaxf(s[mt][1][2 * hi], s[mt][1][2 * hi + 1]));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                    const float m_new = fmaxf(m_run[mt][hi], mx * p.scale_log2);
                    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
                    const float alpha = fast_exp2(m_run[mt][hi] - m_use);
                    m_run[mt][hi] = m_new;
                    float sum = 0.0f;
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            float pe = fast_exp2(fmaf(s[mt][nt][2 * hi + e], p.scale_log2, -m_use));
                            s[mt][nt][2 * hi + e] = pe;
                            sum += pe;
                        }
                    l_run[mt][hi] = l_run[mt][hi] * alpha + sum;
#pragma unroll
                    for (int dt = 0; dt < DT; dt++) {
                        o[mt][dt][2 * hi] *= alpha;
                        o[mt][dt][2 * hi + 1] *= alpha;
                    }
                }

            /* O += P V over this warp's 16 keys (one k16 step) */
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                a[mt][0] = pack_half2(s[mt][0][0], s[mt][0][1]);
                a[mt][1] = pack_half2(s[mt][0][2], s[mt][0][3]);
                a[mt][2] = pack_half2(s[mt][1][0], s[mt][1][1]);
                a[mt][3] = pack_half2(s[mt][1][2], s[mt][1][3]);
            }
#pragma unroll
            for (int dt = 0; dt < DT; dt += 2) {
                uint32_t bv[4];
                ldmatrix_x4_trans(bv, (v_lane + stage_off) ^ (dt * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816(o[mt][dt], a[mt], bv[0], bv[1]);
                    mma_16816(o[mt][dt + 1], a[mt], bv[2], bv[3]);
                }
            }
        }

        /* ---- merge the four warps' (O, m, l) of every row: the {m, d} merge, through smem ----
         * Three short phases, so that no thread walks a long dependent chain (with 4 warps per SM
         * there is no other work to hide it; measured 2.6 us per segment when every element
         * redid its row's max, exponentials, division and log, 0.8 us now: results/
         * h100-trace06-before.txt and h100-trace06.txt, "loop done to exit"):
         *   1. each warp puts its O rows (float32, rows padded by 8 floats: two wavefronts per
         *      store, not eight) and its m, l in smem;
         *   2. one thread per row forms the row's m, l, LSE and each warp's factor
         *      exp2(m_w - m) / l, in place of m_w;
         *   3. every thread sums the four warps' float4 pieces of O with those factors, all loads
         *      issued before the first add. */
        SK_STAMP(sk_trace_split, blockIdx.x, 2);   /* the last segment's stamp stays */
        cp_async_wait<0>();
        __syncthreads();                      /* the stages are free: reuse them as scratch */
        constexpr int SD = D + 8;             /* scratch row stride in floats */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                float l = l_run[mt][hi];
                l += __shfl_xor_sync(0xffffffffu, l, 1);
                l += __shfl_xor_sync(0xffffffffu, l, 2);
                const int r = mt * 16 + g + hi * 8;
                if (t == 0) { sM[warp * RG + r] = m_run[mt][hi]; sL[warp * RG + r] = l; }
                float *orow = scratch + ((size_t)warp * RG + r) * SD;
#pragma unroll
                for (int dt = 0; dt < DT; dt++)
                    *reinterpret_cast<float2 *>(orow + dt * 8 + 2 * t) = make_float2(o[mt][dt][2 * hi], o[mt][dt][2 * hi + 1]);
            }
        __syncthreads();
        const int n_rows = min(RG, p.rows - r0);  /* rows past this are padding */
        if (threadIdx.x < n_rows) {
            const int r = threadIdx.x;
            float m = -INFINITY;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) m = fmaxf(m, sM[w * RG + r]);
            const float m_use = m == -INFINITY ? 0.0f : m;
            float f[SK_WARPS], l = 0.0f;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) {
                f[w] = fast_exp2(sM[w * RG + r] - m_use);
                l += sL[w * RG + r] * f[w];
            }
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) sM[w * RG + r] = f[w] * inv;
            const float lse = l > 0.0f ? (m + log2f(l)) * LN2 : -INFINITY;
            if (plan.cluster) sL[r] = lse;                /* this thread has read row r's sL */
            else
            if (seg.w < 0) p.lse[q_row0 + r] = lse;
            else plan.part_lse[(size_t)seg.w * RG + r] = lse;
        }
        __syncthreads();
        constexpr int CG = D / 4;             /* float4 groups per row */
#pragma unroll 4
        for (int i = 0; i < RG * CG / SK_THREADS; i++) {
            const int e = threadIdx.x + i * SK_THREADS, r = e / CG, c = (e % CG) * 4;
            if (r < n_rows) {
                float4 x[SK_WARPS];
#pragma unroll
                for (int w = 0; w < SK_WARPS; w++) x[w] = *reinterpret_cast<const float4 *>(scratch + ((size_t)w * RG + r) * SD + c);
                float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
                for (int w = 0; w < SK_WARPS; w++) {
                    const float f = sM[w * RG + r];
                    acc.x += f * x[w].x; acc.y += f * x[w].y; acc.z += f * x[w].z; acc.w += f * x[w].w;
                }
                if (plan.cluster) *reinterpret_cast<float4 *>(scratch + (size_t)SK_WARPS * RG * SD + r * D + c) = acc;
                else
                if (seg.w < 0) {
                    __half2 *dst = reinterpret_cast<__half2 *>(p.o + (q_row0 + r) * D + c);
                    dst[0] = __floats2half2_rn(acc.x, acc.y);
                    dst[1] = __floats2half2_rn(acc.z, acc.w);
                } else {
                    *reinterpret_cast<float4 *>(plan.part_o + ((size_t)seg.w * RG + r) * D + c) = acc;
                }
            }
        }
        /* Cluster merge: the sequence's C CTAs merge it together through shared memory. */
        if (plan.cluster) cluster_merge<D>(p, plan.cluster, scratch + (size_t)SK_WARPS * RG * SD, sL, q_row0, n_rows);
        /* Fused merge: the CTA that writes a sequence's last partial merges them all, so no
         * second launch. Each thread's partial stores are made visible device-wide (fence) before
         * thread 0 counts this partial in; the CTA that brings the count to n then reads every
         * partial through L2. It puts the counter back to 0 for the next launch: no other CTA
         * touches it once it has reached n. */
        if (seg.w >= 0 && plan.fused) {
#ifdef SK_MERGE_ACQREL
            /* An experiment (lab/ab06.sh): one acquire-release atomic by thread 0 in place of a
             * fence in every thread. The barrier orders the CTA's partial stores before it; the
             * release is cumulative, so it publishes them; if this CTA is the last, the acquire
             * makes the other CTAs' partials visible, and the second barrier passes that on. */
            __syncthreads();
            if (threadIdx.x == 0) {
                const int n = plan.seq_part[seq + 1] - plan.seq_part[seq];
                int before;
                asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(before) : "l"(plan.seq_count + seq) : "memory");
                *s_last = before == n - 1;
                if (*s_last) plan.seq_count[seq] = 0;
            }
            __syncthreads();
            if (*s_last) merge_seq_cta<D, RG>(p, plan, seq, min(RG, p.rows - r0));
#else
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) {
                const int n = plan.seq_part[seq + 1] - plan.seq_part[seq];
                *s_last = atomicAdd(plan.seq_count + seq, 1) == n - 1;
                if (*s_last) plan.seq_count[seq] = 0;
            }
            __syncthreads();
            if (*s_last) {
                __threadfence();
                merge_seq_cta<D, RG>(p, plan, seq, min(RG, p.rows - r0));
            }
#endif
        }
        __syncthreads();                      /* scratch and sQ are rewritten by the next segment */
    }
    SK_STAMP(sk_trace_split, blockIdx.x, 3);
}

/* The separate merge, for sequences with more than SK_FUSE_MAX partials (and every split sequence
 * in variant 06s): a kernel of its own after the split kernel. One CTA of 128 threads per (split
 * sequence, row, COLS columns), laid out as partial lanes x float4 column groups:
 *   - COLS = 32 (16 lanes x 8 groups) when a sequence has more partials than the whole-row layout
 *     has lanes: a row of a B = 1 decode may have 100+ partials;
 *   - COLS = D, the whole row (4 lanes at d = 128, 8 at d = 64), when every lane has at most one
 *     partial: 06s with 2 partials per request then launches a quarter of the CTAs.
 * This kernel's time is round trips to L2, not bytes, so:
 *   - each thread issues the loads of its first 8 partials' pieces of O before anything else;
 *   - meanwhile the block reads the partials' LSEs (into smem), reduces their {m, d} (common/
 *     reduce.cuh) and turns each LSE into its weight combine_weight() (combine.h, the code the
 *     CPU test checks against the unsplit softmax);
 *   - lane l sums the partials l, l + LANES, ... in order, and the lanes' sums are added in order
 *     (same bits every launch).
 * Measured at B = 1, M = 32768 (86 partials): 7.7 us from the wait to the last CTA's exit with the
 * earlier layout (one CTA per row, 4 warps, a partial's weight formed next to its load), 2.4 us
 * with 32-column slices (results/lab/h100-trace06-before.txt, results/lab/h100-trace06.txt). The layout is
 * a template parameter: a version that computed it at run time took about 0.2 us longer from its
 * wait to its exit on a shape where both slice the row (results/lab/h100-trace06-ab.txt, B = 1,
 * M = 4096). */
#define SK_COMB_CTA ((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x)   /* for the trace */
#define SK_COMB_BATCH 8
#define SK_COMB_SLICE 32          /* columns per CTA when a row is sliced */
template <int D, int RG, int COLS>
__global__ void __launch_bounds__(128)
combine_kernel(sk_params p, sk_plan plan)
{
    constexpr int CGS = COLS / 4, LANES = 128 / CGS;       /* float4 column groups, partial lanes */
    extern __shared__ float s_w[];                          /* the row's n weights */
    __shared__ float4 red[LANES][CGS];
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 0);
    const int seq = plan.split_seqs[blockIdx.x], r = blockIdx.y, c0 = blockIdx.z * COLS;
    const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    if (rg * RG + r >= p.rows) return;                     /* a padding row (uniform per block) */
    const int p0 = plan.seq_part[seq], n = plan.seq_part[seq + 1] - p0;
    const int pl = threadIdx.x / CGS, cg = threadIdx.x % CGS;
    const float *lse = plan.part_lse + (size_t)p0 * RG + r;
    const float *src = plan.part_o + ((size_t)p0 * RG + r) * D + c0 + cg * 4;
    constexpr size_t PSTRIDE = (size_t)RG * D;             /* floats from one partial to the next */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Launched as a programmatic dependent of the split kernel (sm_90): the launch and the plan
     * reads above overlap its tail; the partials may be read only after this wait. */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 1);
#ifdef SK_COMB_ONLINE
    /* An experiment (lab/ab06.sh): no block reduction before the sums. Each lane keeps the
     * online-softmax state of its own partials -- {m, d} and O's running sum, rescaled when m
     * grows, as in rung 01 (combine_online_add, combine.h) -- loading each partial's LSE with its
     * piece of O; then one barrier, and the lanes' states are merged with the same {m, d} merge
     * (combine_lane_factor). One barrier instead of four, and no round trip for the LSEs before
     * the first add. The CPU test checks this math against the unsplit row (tests/test_combine.c). */
    __shared__ md_t lane_md[LANES];
    md_t st = md_identity();
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += LANES * SK_COMB_BATCH) {
        float4 x[SK_COMB_BATCH];
        float l[SK_COMB_BATCH];
#pragma unroll
        for (int i = 0; i < SK_COMB_BATCH; i++) {
            const int k = base + pl + i * LANES;
            if (k < n) {
                x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));
                l[i] = __ldcg(lse + (size_t)k * RG);
            }
        }
#pragma unroll
        for (int i = 0; i < SK_COMB_BATCH; i++) {
            const int k = base + pl + i * LANES;
            if (k < n) {
                float w;
                const float scale = combine_online_add(&st, l[i], &w);   /* combine.h */
                acc.x = acc.x * scale + w * x[i].x; acc.y = acc.y * scale + w * x[i].y;
                acc.z = acc.z * scale + w * x[i].z; acc.w = acc.w * scale + w * x[i].w;
            }
        }
    }
    red[pl][cg] = acc;
    if (cg == 0) lane_md[pl] = st;
    __syncthreads();
    md_t all = md_identity();
#pragma unroll
    for (int q = 0; q < LANES; q++) all = md_merge(all, lane_md[q]);
    st = all;
    const size_t row = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG + r;
    if (threadIdx.x < COLS) {
        const int c = threadIdx.x;
        float v = 0.0f;
#pragma unroll
        for (int q = 0; q < LANES; q++)
            v += reinterpret_cast<const float *>(&red[q][c / 4])[c % 4] * combine_lane_factor(lane_md[q], all);
        p.o[row * D + c0 + c] = __float2half_rn(v);
    }
#else

    float4 x[SK_COMB_BATCH];
#pragma unroll
    for (int i = 0; i < SK_COMB_BATCH; i++) {
        const int k = pl + i * LANES;
        if (k < n) x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));
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
                if (k < n) x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));
            }
        }
#pragma unroll
        for (int i = 0; i < SK_COMB_BATCH; i++) {
            const int k = base + pl + i * LANES;
            if (k < n) {
                const float w = s_w[k];
                acc.x += w * x[i].x; acc.y += w * x[i].y; acc.z += w * x[i].z; acc.w += w * x[i].w;
            }
        }
    }
    red[pl][cg] = acc;
    __syncthreads();
    const size_t row = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG + r;
    if (threadIdx.x < COLS) {
        const int c = threadIdx.x;
        float v = 0.0f;
#pragma unroll
        for (int l = 0; l < LANES; l++) v += reinterpret_cast<const float *>(&red[l][c / 4])[c % 4];
        p.o[row * D + c0 + c] = __float2half_rn(v);
    }
#endif
    if (blockIdx.z == 0 && threadIdx.x == 0) p.lse[row] = md_lse(st);
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* Host side: the plan, its cache, the workspace, the launches.                                */

typedef void (*sk_kernel_fn)(sk_params, sk_plan);
typedef void (*sk_combine_fn)(sk_params, sk_plan);

typedef struct sk_variant {
    sk_kernel_fn kernel;
    sk_combine_fn combine, combine_row;    /* 32-column slices; whole rows (see combine_kernel) */
    size_t smem;
    int rg;
} sk_variant;

/* The cluster merge (sk_cluster_for) is on unless SPLIT_CLUSTER=0 (for A/B runs). */
static int sk_cluster_on(void)
{
    const char *e = getenv("SPLIT_CLUSTER");
    return !(e && atoi(e) == 0);
}

/* Pipeline depth: SK_STAGES, or SPLIT_STAGES=3 from the environment (an experiment: 101 KB of
 * shared memory at d = 128, so two CTAs share an SM). */
static int sk_stages(void)
{
    const char *e = getenv("SPLIT_STAGES");
    return e && atoi(e) == 3 ? 3 : SK_STAGES;
}

#define SK_VARIANT(D, MT, S) (sk_variant){split_kv_kernel<D, MT, S>, combine_kernel<D, 16 * MT, SK_COMB_SLICE>, combine_kernel<D, 16 * MT, D>, sk_smem<D, MT, S>::bytes, 16 * MT}
static int sk_pick(int d, int rows, sk_variant *v)
{
    const int mt = rows <= 16 ? 1 : 2, st = sk_stages();
    if (d == 64 && mt == 1) { *v = st == 3 ? SK_VARIANT(64, 1, 3) : SK_VARIANT(64, 1, SK_STAGES); return 1; }
    if (d == 64 && mt == 2) { *v = st == 3 ? SK_VARIANT(64, 2, 3) : SK_VARIANT(64, 2, SK_STAGES); return 1; }
    if (d == 128 && mt == 1) { *v = st == 3 ? SK_VARIANT(128, 1, 3) : SK_VARIANT(128, 1, SK_STAGES); return 1; }
    if (d == 128 && mt == 2) { *v = st == 3 ? SK_VARIANT(128, 2, 3) : SK_VARIANT(128, 2, SK_STAGES); return 1; }
    return 0;
}

static const char *planner_of(const attn_env *env) { return env->planner ? env->planner : planner_default; }

static int known_planner(const char *name)
{
    for (int i = 0; planner_names[i]; i++)
        if (!strcmp(planner_names[i], name)) return 1;
    return 0;
}

/* CTAs that run at once: SMs x CTAs per SM for this kernel (the planner's "SMs"). */
static int sk_slots(const attn_env *env, const sk_variant *v)
{
    int per_sm = 1;
    if (cudaFuncSetAttribute(v->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v->smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v->kernel, SK_THREADS, v->smem) != cudaSuccess ||
        per_sm < 1) {
        cudaGetLastError();
        per_sm = 1;
    }
    return env->sm_count * per_sm;
}

/* The most partials any one sequence of the plan has (0: nothing is split). */
static int plan_max_parts(const split_plan *pl)
{
    int most = 0;
    for (int q = 0; q < pl->n_seqs; q++)
        if (pl->seq_part[q + 1] - pl->seq_part[q] > most) most = pl->seq_part[q + 1] - pl->seq_part[q];
    return most;
}

/* Keys per KV block, the planner's unit: SK_BLOCK_DEFAULT, or SPLIT_BLOCK from the environment
 * (a multiple of the 64-key pipeline tile, up to 1024) for experiments. Smaller blocks let the
 * planner cut the work into more nearly equal shares; every partial costs a merge either way. */
static int sk_block_keys(void)
{
    const char *e = getenv("SPLIT_BLOCK");
    int v = e ? atoi(e) : 0;
    return v >= SK_TILE && v <= 1024 && v % SK_TILE == 0 ? v : SK_BLOCK_DEFAULT;
}

/* The sequences: (request, KV head, row group), each with its number of KV blocks. */
static int *sk_sequences(const attn_shape *s, int rg, int *n_seqs)
{
    const int blk = sk_block_keys();
    const int rows = (s->Hq / s->Hkv) * s->N, n_rg = (rows + rg - 1) / rg;
    *n_seqs = s->B * s->Hkv * n_rg;
    int *blocks = (int *)malloc(sizeof(int) * *n_seqs);
    for (int b = 0; b < s->B; b++)
        for (int i = 0; i < s->Hkv * n_rg; i++)
            blocks[b * s->Hkv * n_rg + i] = (attn_kv_len(s, b) + blk - 1) / blk;
    return blocks;
}

/* Device layout of the workspace: plan arrays, then partial LSE, then partial O. */
typedef struct sk_layout {
    size_t seg_off, cta_off, seqp_off, split_off, cnt_off, lse_off, o_off, total;
} sk_layout;

static sk_layout sk_layout_of(const split_plan *pl, int rg, int d)
{
    sk_layout L;
    size_t at = 0;
    L.seg_off = at;  at += sizeof(int4) * (size_t)pl->n_segs;
    at = (at + 15) & ~(size_t)15;
    L.cta_off = at;  at += 2 * sizeof(int4) * (size_t)pl->n_ctas;
    L.seqp_off = at; at += sizeof(int) * (size_t)(pl->n_seqs + 1);
    L.split_off = at; at += sizeof(int) * (size_t)pl->n_seqs;
    L.cnt_off = at;  at += sizeof(int) * (size_t)pl->n_seqs;
    at = (at + 255) & ~(size_t)255;
    L.lse_off = at;  at += sizeof(float) * (size_t)pl->n_parts * rg;
    at = (at + 255) & ~(size_t)255;
    L.o_off = at;    at += sizeof(float) * (size_t)pl->n_parts * rg * d;
    L.total = at;
    return L;
}

static int sk_plan_for(const attn_shape *s, const attn_env *env, const sk_variant *v, split_plan *pl)
{
    int n_seqs;
    int *blocks = sk_sequences(s, v->rg, &n_seqs);
    int rc = plan_splits(planner_of(env), blocks, n_seqs, sk_slots(env, v), pl);
    free(blocks);
    return rc;
}

static int sk_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    sk_variant v;
    if (s->dtype != ATTN_F16) { snprintf(why, n, "rung 06 is written for float16 storage"); return 1; }
    if (s->N > 16) {
        snprintf(why, n, "rung 06 is the decode kernel: N = %d query tokens per request; it takes 1..16 "
                 "(prefill is rung 05's job)", s->N);
        return 1;
    }
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, &v)) {
        snprintf(why, n, "rung 06 is built for d = 64 and 128 (d = %d)", s->d);
        return 1;
    }
    if (!known_planner(planner_of(env))) {
        snprintf(why, n, "unknown planner '%s' (fa, greedy, balanced, auto)", planner_of(env));
        return 1;
    }
    if (v.smem > env->smem_per_block_optin || env->cc_major < 8) {
        snprintf(why, n, "needs compute capability 8.0+ and %zu KB of shared memory per block", v.smem / 1024);
        return 1;
    }
    return 0;
}

static size_t sk_workspace(const attn_shape *s, const attn_env *env)
{
    sk_variant v;
    split_plan pl;
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, &v) || sk_plan_for(s, env, &v, &pl)) return 0;
    size_t bytes = sk_layout_of(&pl, v.rg, s->d).total;
    plan_free(&pl);
    return bytes;
}

/* The plan depends only on the batch's lengths, the GPU and the planner: it is computed and
 * uploaded once per batch composition and reused while they stay the same (a serving loop would
 * plan on the GPU every step; FlashAttention-3 does that in a small kernel of its own). */
typedef struct sk_cache {
    void *workspace;
    char planner[16];
    int B, Hq, Hkv, N, M, d, sms, blk, stages;
    int *seqlens;
    split_plan plan;
    int4 *segs, *cta_info;
    int *split_seqs, n_split, max_parts;
    int cluster, cluster_on;       /* sk_cluster_for's answer; SPLIT_CLUSTER when it was asked */
    int valid;
} sk_cache;
static sk_cache cache;

static int cache_hit(const attn_args *a, const char *planner)
{
    const attn_shape *s = &a->shape;
    if (!cache.valid || cache.workspace != a->workspace || strcmp(cache.planner, planner) ||
        cache.B != s->B || cache.Hq != s->Hq || cache.Hkv != s->Hkv || cache.N != s->N ||
        cache.M != s->M || cache.d != s->d || cache.sms != a->env.sm_count || cache.blk != sk_block_keys() || cache.stages != sk_stages() ||
        cache.cluster_on != sk_cluster_on())
        return 0;
    for (int b = 0; b < s->B; b++)
        if (cache.seqlens[b] != attn_kv_len(s, b)) return 0;
    return 1;
}

#ifdef SK_TRACE
/* The last launch's timeline, printed at exit: times in ns from the first split CTA's entry. */
static int trace_ctas, trace_comb;
static int cmp_u64(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}
static void trace_line(const char *what, unsigned long long *v, int n)
{
    if (n < 1) return;
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    fprintf(stderr, "trace %-28s n=%4d  min %7llu  p50 %7llu  p90 %7llu  max %7llu\n", what, n, v[0], v[n / 2],
            v[(n * 9) / 10], v[n - 1]);
}
static void sk_trace_print(void)
{
    static unsigned long long sp[SK_TRACE_MAX][4], cb[SK_TRACE_MAX][3];
    static unsigned long long a[SK_TRACE_MAX], b[SK_TRACE_MAX];
    if (cudaDeviceSynchronize() != cudaSuccess || cudaMemcpyFromSymbol(sp, sk_trace_split, sizeof sp) != cudaSuccess ||
        cudaMemcpyFromSymbol(cb, sk_trace_comb, sizeof cb) != cudaSuccess)
        return;
    const int n = trace_ctas < SK_TRACE_MAX ? trace_ctas : SK_TRACE_MAX;
    unsigned long long t0 = ~0ull;
    for (int c = 0; c < n; c++) if (sp[c][0] && sp[c][0] < t0) t0 = sp[c][0];
    const char *names[4] = {"split: entry", "split: first tile landed", "split: loop done", "split: exit"};
    for (int k = 0; k < 4; k++) {
        int m = 0;
        for (int c = 0; c < n; c++) if (sp[c][k]) a[m++] = sp[c][k] - t0;
        trace_line(names[k], a, m);
    }
    int m = 0;
    for (int c = 0; c < n; c++) if (sp[c][1]) b[m++] = sp[c][1] - sp[c][0];
    trace_line("split: entry to first tile", b, m);
    m = 0;
    for (int c = 0; c < n; c++) if (sp[c][3]) b[m++] = sp[c][3] - sp[c][2];
    trace_line("split: loop done to exit", b, m);
    const int nc = trace_comb < SK_TRACE_MAX ? trace_comb : SK_TRACE_MAX;
    const char *cnames[3] = {"combine: entry", "combine: after wait", "combine: exit"};
    for (int k = 0; k < 3; k++) {
        m = 0;
        for (int c = 0; c < nc; c++) if (cb[c][2] && cb[c][k] >= t0) a[m++] = cb[c][k] - t0;
        trace_line(cnames[k], a, m);
    }
}
#endif

/* The cluster size for variant 06's cluster merge, or 0. The plan must give every sequence the same
 * number C (2..SK_CLUSTER_MAX) of one-segment CTAs, consecutive from a multiple of C, so that each
 * cluster of C consecutive CTAs is exactly one sequence's partials: fa's and greedy's plans of a
 * uniform batch are like that. And all the clusters must be resident at once: a cluster's CTAs
 * must share a GPC, so SMs left over in a GPC cannot take one, and fewer than SMs / C clusters of
 * C may fit. At B = 32, M = 4096 (32 clusters of 4, before this check) a cluster waited for a
 * second wave and the launch took 39.0 us against 30.9 without clusters
 * (results/lab/h100-ab06-cluster.csv). Other plans, sm_80, and any error of the occupancy query: 0,
 * the fused merge or the combine kernel as before. */
/* The split kernel's launch in clusters of C (the occupancy query asks about the same one). */
static void sk_cluster_config(cudaLaunchConfig_t *cc, cudaLaunchAttribute *ca, int n_ctas, int C, size_t smem,
                              cudaStream_t st)
{
    *cc = cudaLaunchConfig_t{};
    cc->gridDim = dim3(n_ctas);
    cc->blockDim = dim3(SK_THREADS);
    cc->dynamicSmemBytes = smem;
    cc->stream = st;
    *ca = cudaLaunchAttribute{};
    ca->id = cudaLaunchAttributeClusterDimension;
    ca->val.clusterDim.x = C; ca->val.clusterDim.y = 1; ca->val.clusterDim.z = 1;
    cc->attrs = ca;
    cc->numAttrs = 1;
}

static int sk_cluster_for(const split_plan *pl, const attn_env *env, const sk_variant *v)
{
    if (env->cc_major < 9 || pl->n_ctas < 1 || pl->n_segs != pl->n_ctas) return 0;
    const int C = pl->seq_part[pl->segs[0].seq + 1] - pl->seq_part[pl->segs[0].seq];
    if (C < 2 || C > SK_CLUSTER_MAX || pl->n_ctas % C) return 0;
    for (int c = 0; c < pl->n_ctas; c++) {
        if (pl->cta_seg[c] != c) return 0;                     /* one segment per CTA */
        const int q = pl->segs[c].seq;
        if (pl->seq_part[q + 1] - pl->seq_part[q] != C || q != pl->segs[c - c % C].seq) return 0;
        if (c % C && pl->segs[c - 1].seq != q) return 0;
    }
    cudaLaunchConfig_t cc;
    cudaLaunchAttribute ca;
    sk_cluster_config(&cc, &ca, pl->n_ctas, C, v->smem, 0);
    int resident = 0;
    if (cudaFuncSetAttribute(v->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v->smem) != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&resident, v->kernel, &cc) != cudaSuccess) {
        (void)cudaGetLastError();                              /* not sticky: clear it */
        return 0;
    }
    return pl->n_ctas / C <= resident ? C : 0;
}

static const char *sk_launch(const attn_args *a, cudaStream_t st, int fused)
{
    const attn_shape *s = &a->shape;
    sk_variant v;
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, &v)) return "rung 06: unsupported head dim";
    const char *planner = planner_of(&a->env);
    if (!cache_hit(a, planner)) {
        if (cache.valid) { plan_free(&cache.plan); free(cache.seqlens); cache.valid = 0; }
        if (sk_plan_for(s, &a->env, &v, &cache.plan)) return "rung 06: the planner failed";
        sk_layout L = sk_layout_of(&cache.plan, v.rg, s->d);
        if (L.total > a->workspace_bytes) return "rung 06: workspace smaller than the plan";
        /* Asynchronous on the rung's stream, so the kernels below are ordered after the copies;
         * the host arrays stay alive in the cache. */
        free(cache.segs);
        cache.segs = (int4 *)malloc(sizeof(int4) * cache.plan.n_segs);
        for (int i = 0; i < cache.plan.n_segs; i++) {
            const split_segment *g = &cache.plan.segs[i];
            cache.segs[i] = make_int4(g->seq, g->blk_begin, g->blk_end, g->part);
        }
        char *ws = (char *)a->workspace;
        RUNG_CUDA(cudaMemcpyAsync(ws + L.seg_off, cache.segs, sizeof(int4) * cache.plan.n_segs, cudaMemcpyHostToDevice, st));
        free(cache.cta_info);
        cache.cta_info = (int4 *)malloc(2 * sizeof(int4) * cache.plan.n_ctas);
        for (int c = 0; c < cache.plan.n_ctas; c++) {
            cache.cta_info[2 * c] = make_int4(cache.plan.cta_seg[c], cache.plan.cta_seg[c + 1], 0, 0);
            cache.cta_info[2 * c + 1] = cache.plan.cta_seg[c] < cache.plan.n_segs ? cache.segs[cache.plan.cta_seg[c]]
                                                                                   : make_int4(0, 0, 0, -1);
        }
        RUNG_CUDA(cudaMemcpyAsync(ws + L.cta_off, cache.cta_info, 2 * sizeof(int4) * cache.plan.n_ctas, cudaMemcpyHostToDevice, st));
        RUNG_CUDA(cudaMemcpyAsync(ws + L.seqp_off, cache.plan.seq_part, sizeof(int) * (cache.plan.n_seqs + 1), cudaMemcpyHostToDevice, st));
        free(cache.split_seqs);
        cache.split_seqs = (int *)malloc(sizeof(int) * cache.plan.n_seqs);
        cache.n_split = 0;
        for (int q = 0; q < cache.plan.n_seqs; q++)
            if (cache.plan.seq_part[q + 1] > cache.plan.seq_part[q]) cache.split_seqs[cache.n_split++] = q;
        cache.max_parts = plan_max_parts(&cache.plan);
        RUNG_CUDA(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
        cache.cluster_on = sk_cluster_on();
        cache.cluster = cache.cluster_on ? sk_cluster_for(&cache.plan, &a->env, &v) : 0;
        if (cache.n_split)
            RUNG_CUDA(cudaMemcpyAsync(ws + L.split_off, cache.split_seqs, sizeof(int) * cache.n_split, cudaMemcpyHostToDevice, st));
        RUNG_CUDA(cudaMemsetAsync(ws + L.cnt_off, 0, sizeof(int) * cache.plan.n_seqs, st));   /* then self-resetting */
        cache.workspace = a->workspace;
        snprintf(cache.planner, sizeof cache.planner, "%s", planner);
        cache.B = s->B; cache.Hq = s->Hq; cache.Hkv = s->Hkv; cache.N = s->N; cache.M = s->M; cache.d = s->d;
        cache.sms = a->env.sm_count;
        cache.blk = sk_block_keys();
        cache.stages = sk_stages();
        cache.seqlens = (int *)malloc(sizeof(int) * s->B);
        for (int b = 0; b < s->B; b++) cache.seqlens[b] = attn_kv_len(s, b);
        cache.valid = 1;
    }
    const split_plan *pl = &cache.plan;
    sk_layout L = sk_layout_of(pl, v.rg, s->d);
    char *ws = (char *)a->workspace;

    sk_params p;
    p.q = (const __half *)a->q; p.k = (const __half *)a->k; p.v = (const __half *)a->v;
    p.o = (__half *)a->o; p.lse = a->lse; p.seqlens_k = a->seqlens_k;
    p.Hq = s->Hq; p.Hkv = s->Hkv; p.N = s->N; p.M = s->M; p.causal = s->causal;
    p.g = s->Hq / s->Hkv; p.rows = p.g * s->N; p.n_rg = (p.rows + v.rg - 1) / v.rg;
    p.scale_log2 = s->scale * LOG2E;
    p.blk = cache.blk;
    sk_plan dp;
    dp.segs = (const int4 *)(ws + L.seg_off);
    dp.cta_info = (const int4 *)(ws + L.cta_off);
    dp.seq_part = (const int *)(ws + L.seqp_off);
    dp.split_seqs = (const int *)(ws + L.split_off);
    dp.part_lse = (float *)(ws + L.lse_off);
    dp.part_o = (float *)(ws + L.o_off);
    dp.seq_count = (int *)(ws + L.cnt_off);
    /* variant 06 only: its partials merge in the cluster, neither fused nor by the combine kernel */
    dp.cluster = fused ? cache.cluster : 0;
    if (dp.cluster) fused = 0;
    /* Fused only while every sequence has few partials: one CTA merging many would be slow. */
    fused = fused && cache.max_parts <= SK_FUSE_MAX;
    dp.fused = fused;

#ifdef SK_TRACE
    static int registered;
    if (!registered) { atexit(sk_trace_print); registered = 1; }
    trace_ctas = pl->n_ctas;
    trace_comb = 0;
#endif
    if (dp.cluster) {
        cudaLaunchConfig_t cc;
        cudaLaunchAttribute ca;
        sk_cluster_config(&cc, &ca, pl->n_ctas, dp.cluster, v.smem, st);
        RUNG_CUDA(cudaLaunchKernelEx(&cc, v.kernel, p, dp));
        RUNG_LAUNCHED(split_kv_kernel);
        return NULL;
    }
    v.kernel<<<pl->n_ctas, SK_THREADS, v.smem, st>>>(p, dp);
    RUNG_LAUNCHED(split_kv_kernel);
    if (!fused && cache.n_split > 0) {
        /* whole rows when each of the layout's 512 / d lanes has at most one partial */
        const int whole = cache.max_parts <= 512 / s->d;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(cache.n_split, min(v.rg, p.rows), whole ? 1 : s->d / SK_COMB_SLICE);
        cfg.blockDim = dim3(128);
        cfg.dynamicSmemBytes = sizeof(float) * cache.max_parts;
        cfg.stream = st;
        cudaLaunchAttribute attr = {};
        attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr.val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = a->env.cc_major >= 9 ? 1 : 0;   /* programmatic dependent launch: Hopper on */
#ifdef SK_TRACE
        trace_comb = (int)(cfg.gridDim.x * cfg.gridDim.y * cfg.gridDim.z);
#endif
        RUNG_CUDA(cudaLaunchKernelEx(&cfg, whole ? v.combine_row : v.combine, p, dp));
        RUNG_LAUNCHED(combine_kernel);
    }
    return NULL;
}

static const char *sk_run(const attn_args *a, cudaStream_t st) { return sk_launch(a, st, 1); }
static const char *sk_run_separate(const attn_args *a, cudaStream_t st) { return sk_launch(a, st, 0); }

/* For the report: the plan the launch used and the cost model's makespan for it. */
static void sk_describe_as(const attn_shape *s, const attn_env *env, char *buf, size_t n, int fused)
{
    sk_variant v;
    split_plan pl;
    buf[0] = 0;
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, &v)) return;
    int slots = sk_slots(env, &v);
    if (sk_plan_for(s, env, &v, &pl)) return;
    long total = 0;
    int n_seqs;
    int *blocks = sk_sequences(s, v.rg, &n_seqs);
    for (int i = 0; i < n_seqs; i++) total += blocks[i];
    free(blocks);
    const int max_parts = plan_max_parts(&pl);
    const int cluster = fused && max_parts > 0 && sk_cluster_on() ? sk_cluster_for(&pl, env, &v) : 0;
    const char *merge = max_parts == 0 ? "none" : cluster ? "cluster" : fused && max_parts <= SK_FUSE_MAX ? "fused" : "kernel";
    snprintf(buf, n, "planner=%s;block=%d;stages=%d;merge=%s;slots=%d;ctas=%d;segments=%d;partials=%d;kv_blocks=%ld;makespan=%ld;ideal=%ld",
             planner_of(env), sk_block_keys(), sk_stages(), merge, slots, pl.n_ctas, pl.n_segs, pl.n_parts, total, pl.makespan,
             (total + slots - 1) / slots);
    plan_free(&pl);
}

static void sk_describe(const attn_shape *s, const attn_env *env, char *buf, size_t n) { sk_describe_as(s, env, buf, n, 1); }
static void sk_describe_separate(const attn_shape *s, const attn_env *env, char *buf, size_t n) { sk_describe_as(s, env, buf, n, 0); }

static const rung rung_06 = {
    "06", "split-KV (Flash-Decoding)",
    "decode: GQA rows packed per KV head; KV split across CTAs by a planner; partials merged by LSE "
    "(in a thread-block cluster when each request has the same 2..8 CTAs and all fit at once (sm_90), "
    "else by the last CTA of a sequence when it has <= 4, else by a combine kernel)",
    sk_unsupported, sk_workspace, sk_run, sk_describe,
};

static const rung rung_06s = {
    "06s", "split-KV, separate combine kernel",
    "as 06, but the partials are merged by a second kernel launched after the split kernel",
    sk_unsupported, sk_workspace, sk_run_separate, sk_describe_separate,
};

extern "C" const rung *const rung_variants[] = {&rung_06, &rung_06s, NULL};
