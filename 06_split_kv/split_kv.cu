/* Rung 06: Flash-Decoding. Split each request's KV cache across CTAs, write partial (O, LSE),
 * merge the partials with their LSE weights; plan the split on the CPU so that no SM waits.
 *
 * What changed against rung 05 (whose B * Hq CTAs, mostly padding rows, leave SMs idle in decode):
 *   - GQA packing: the g = Hq/Hkv query heads that share a KV head, times the Nq tokens, are the
 *     rows of one tile (row r = head-in-group * Nq + token, contiguous in Q and O), so each K/V
 *     element is read once per KV head instead of once per query head.
 *   - The work unit is a segment: a contiguous range of KV blocks (128 keys, --kv-block) of one
 *     sequence (one request, KV head and group of up to 32 rows). The planner (planner.c) assigns
 *     segments to CTAs; a CTA may walk several (the balanced planner cuts across requests).
 *   - Warps split the keys, not the rows: each 64-key tile is four 16-key slices, one per warp;
 *     every warp keeps its own O, m, l for all the rows, and the four are merged at the end of a
 *     segment through shared memory with the {m, d} merge.
 *   - A four-stage cp.async pipeline keeps about 96 KB of K/V in flight per SM (d = 128).
 *   - A sequence covered by one segment writes O and LSE directly; otherwise each segment writes a
 *     float32 partial O (normalized) and its LSE, and the combine kernel merges them (variant 06a).
 *
 * The variants after 06a change only where a split sequence is merged; each is a merge policy
 * (below: merge_later) in a file of its own, compiled into this translation unit at the end:
 *   06b  fused_merge.cuh    the CTA that writes a sequence's last partial merges them (<= 4)
 *   06c  cluster_merge.cuh  on sm_90 a sequence's CTAs form a thread-block cluster and merge
 *                           through each other's shared memory (rung 06's own variant)
 *
 * Every variant also reads a paged KV cache (--page-size P): the kernel's PAGED instantiation
 * loads each K/V tile through the block table (paged.cuh); the contiguous one is unchanged.
 *
 * Storage type and head dims, as in rung 05 (fa2.cu): T is float16 (__half) or bfloat16
 * (__nv_bfloat16); only the mma.sync type and the float -> T conversions of P and O differ
 * (common/mma.cuh). The tile's head dim D is 64, 128 or 256 (the ldmatrix steps are one XOR on
 * the address only for rows of a power-of-two number of bytes); a head dim d < D (a multiple of 8
 * from 32 to 256) runs the PAD instantiation of the next tile up: rows in memory are d long (the
 * kernels' last argument), the tile's columns d..D-1 are zero-filled on load, the k16 steps of
 * Q K^T and the 16-column steps of P V at or past d are skipped, and no column past d is stored
 * (partials keep D floats a row; the merges skip the columns past d). The tile of 256 runs 16
 * packed rows (O alone is 128 floats a lane; a larger GQA group becomes several row groups) and
 * 2 stages (4 would take 256 KB). Without PAD, the float16 kernels are the ones they were before
 * T and PAD existed.
 *
 * Grid: one CTA per plan entry; block: 4 warps. Shared memory: Q tile RG x D (RG = 16 or 32
 * packed rows), STAGES x (K tile 64 x D + V tile 64 x D), all XOR-swizzled (common/tiles.cuh);
 * after a segment the K/V stages are reused as float32 scratch for the four warps' O. PAGED adds
 * STAGES x 4 ints after the rest: the block table's slice (physical pages) of each stage's tile. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/mma.cuh"
#include "../common/tiles.cuh"
#include "../common/online_softmax.cuh"
#include "../common/reduce.cuh"
#include "../common/cta_sync.cuh"
#include "planner.h"
#include "plan_device.h"
#include "combine.h"

#define SK_WARPS 4
#define SK_THREADS (SK_WARPS * 32)
#define SK_TILE 64            /* keys per pipeline stage: 16 per warp */
#define SK_STAGES 4           /* pipeline depth (D <= 128; the tile of 256 takes 2: sk_smem) */
#define SK_BLOCK_DEFAULT 128  /* keys per KV block, the planner's unit (--kv-block) */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

#include "paged.cuh"               /* the paged KV cache's tile loader (--page-size) */

/* The plan as the kernels read it (device copies of split_plan's arrays). */
typedef struct sk_plan {
    const int4 *cta_info;     /* per CTA, two int4: {first segment, end segment, -, -} and the first
                                 segment itself, so a CTA starts after one round trip, not two */
    const int4 *segs;         /* {seq, blk_begin, blk_end, part} */
    const int *seq_part;      /* n_seqs + 1 */
    const int *split_seqs;    /* the sequences that have partials (the combine kernel's grid) */
    int *seq_count;           /* 06b: partials of each sequence written so far (reset to 0) */
    float *part_o;            /* [n_parts][RG][d], normalized by its own l */
    float *part_lse;          /* [n_parts][RG] */
} sk_plan;

typedef struct sk_params {
    /* 16-bit storage, float16 or bfloat16: the kernels read it as their template parameter T
     * (reinterpret_cast), the host only passes it on, so sk_params is one type for both. Not void *:
     * a cast from void * moved the float16 kernels' address arithmetic (their SASS changed). */
    const __half *q, *k, *v;
    __half *o;
    float *lse;
    const int *seqlens_k;
    int Hq, Hkv, N, M, causal, g, rows, n_rg;
    int blk;                  /* keys per KV block (the plan's unit), a multiple of SK_TILE */
    float scale_log2;
} sk_params;

/* A finished segment, for the merge policy: its sequence, its partial slot (-1: the whole
 * sequence), its rows, its first row of O, the length d of a row of O in memory (D, or less in a
 * PAD instantiation: columns d..D-1 are not O's), and shared scratch (s_o [RG][D] float32 after the
 * warps' scratch, s_lse [RG], s_flag: one int) for the policies that need it. */
typedef struct sk_out {
    int seq, part, n_rows, d;
    size_t q_row0;
    float *s_o, *s_lse;
    int *s_flag;
} sk_out;

/* The layout of shared memory, in bytes (16-bit storage, whichever type). The tile of 256 keeps
 * 2 stages (64 KB each: 137 KB in all, which an A100's 163 KB per block still holds; 4 would be
 * 256 KB), so one 64 KB tile is in flight while the other computes. */
template <int D, int MT, bool PAGED>
struct sk_smem {
    static constexpr int RG = 16 * MT;
    static constexpr int STAGES = D <= 128 ? SK_STAGES : 2;
    static constexpr size_t q = (size_t)RG * D * 2;
    static constexpr size_t stage = (size_t)2 * SK_TILE * D * 2;          /* K + V */
    static constexpr size_t ml = (size_t)2 * SK_WARPS * RG * 4;
    static constexpr size_t pages = PAGED ? (size_t)STAGES * SK_PAGE_SLICE * 4 : 0;   /* s_pg */
    static constexpr size_t bytes = q + STAGES * stage + ml + 16 + pages;   /* + s_flag */
    static_assert(((size_t)SK_WARPS * RG * (D + 8) + (size_t)RG * D) * 4 <= STAGES * stage,
                  "the warps' scratch and s_o fit in the stages");
};

/* Four floats -> four T at dst (8-byte aligned). Stored as the pair type of T: through a
 * uint32_t (pack2_t) ptxas scheduled the float16 kernels' stores differently. */
template <typename T>
static __device__ __forceinline__ void store4(T *dst, float4 x)
{
    if constexpr (storage_bf16<T>) {
        __nv_bfloat162 *d2 = reinterpret_cast<__nv_bfloat162 *>(dst);
        d2[0] = __floats2bfloat162_rn(x.x, x.y);
        d2[1] = __floats2bfloat162_rn(x.z, x.w);
    } else {
        __half2 *d2 = reinterpret_cast<__half2 *>(dst);
        d2[0] = __floats2half2_rn(x.x, x.y);
        d2[1] = __floats2half2_rn(x.z, x.w);
    }
}

/* 06a's merge policy: a sequence covered by one segment (part < 0) writes O and LSE; a split one
 * writes its partial, and the combine kernel merges the partials after this kernel. */
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
        if (s.part < 0) store4(reinterpret_cast<T *>(p.o) + (s.q_row0 + r) * s.d + c, acc);
        else *reinterpret_cast<float4 *>(plan.part_o + ((size_t)s.part * RG + r) * D + c) = acc;
    }
    static __device__ __forceinline__ void finish(const sk_params &, const sk_plan &, const sk_out &) {}
};

/* d: the head dim of the rows in memory; read only by the PAD instantiation (d < D). It is the
 * last argument so that the others keep the places they had before it existed. */
template <typename T, int D, int MT, template <typename, int, int> class Merge, bool PAGED, bool PAD>
__global__ void __launch_bounds__(SK_THREADS)
split_kv_kernel(sk_params p, sk_plan plan, sk_pages pg, int d)
{
    constexpr int RG = 16 * MT, DT = D / 8;
    typedef sk_smem<D, MT, PAGED> L;
    constexpr int STAGES = L::STAGES;
    typedef Merge<T, D, RG> M;
    const int dg = PAD ? d : D;           /* row length in memory (Q, K, V, O) */
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sKV = reinterpret_cast<T *>(smem_raw + L::q);                    /* stage s: K then V */
    float *scratch = reinterpret_cast<float *>(sKV);                     /* [warp][RG][D + 8] */
    float *sM = reinterpret_cast<float *>(smem_raw + L::q + STAGES * L::stage);
    float *sL = sM + SK_WARPS * RG;
    /* PAGED: the block table's slice of each stage's tile (paged.cuh), after s_flag */
    int *s_pg = reinterpret_cast<int *>(smem_raw + L::q + STAGES * L::stage + L::ml + 16);
    constexpr int SD = D + 8;             /* scratch row stride in floats */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    /* ldmatrix lane bases (see fa2.cu): Q rows, this warp's 16 keys of a K / V stage */
    const uint32_t q_lane = smem_addr(sQ + tile_off<D, true>(lane % 16, (lane / 16) * 8));
    const uint32_t k_lane = smem_addr(sKV + tile_off<D, true>(warp * 16 + (lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    const uint32_t v_lane = smem_addr(sKV + SK_TILE * D + tile_off<D, true>(warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8, (lane / 16) * 8));
    constexpr uint32_t STAGE_BYTES = (uint32_t)L::stage;

    /* Programmatic dependent launch (sm_90): the combine kernel may start now; it waits (pdl_wait)
     * for this grid to finish before it reads any partial. */
    pdl_launch_dependents();
    const int4 head = plan.cta_info[2 * blockIdx.x], first = plan.cta_info[2 * blockIdx.x + 1];
    for (int si = head.x; si < head.y; si++) {
        const int4 seg = si == head.x ? first : plan.segs[si];
        const int seq = seg.x, rg = seq % p.n_rg, bk = seq / p.n_rg;
        const int kvh = bk % p.Hkv, b = bk / p.Hkv;
        /* PAGED: this request's row of the block table, and the first SK_STAGES tiles' slices (one
         * entry per thread), asked for before anything waits for the request's length */
        const int *bt = pg.table + (size_t)b * pg.max_pages;
        int pg_first = 0;
        if (PAGED && threadIdx.x < STAGES * SK_PAGE_SLICE)
            pg_first = sk_page_entry(bt, pg.max_pages, seg.y * p.blk + (threadIdx.x / SK_PAGE_SLICE) * SK_TILE, pg.P,
                                     threadIdx.x % SK_PAGE_SLICE);
        const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
        const int k_lo = seg.y * p.blk, k_hi = min(seg.z * p.blk, mk);
        const int n_tiles = (k_hi - k_lo + SK_TILE - 1) / SK_TILE;
        const int r0 = rg * RG;                              /* first packed row of the group */
        const size_t q_row0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + r0;   /* rows contiguous */
        const T *k_ptr = reinterpret_cast<const T *>(p.k) + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * dg;
        const T *v_ptr = reinterpret_cast<const T *>(p.v) + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * dg;
        const int causal_from = p.causal ? mk - p.N + 1 : mk;   /* keys >= this may be masked */
        /* PAGED: this KV head in the pools; keys Hkv * d elements apart in a page */
        const T *k_head = reinterpret_cast<const T *>(p.k) + (size_t)kvh * dg, *v_head = reinterpret_cast<const T *>(p.v) + (size_t)kvh * dg;
        const size_t kv_row = (size_t)p.Hkv * dg;

        load_tile<D, RG, SK_THREADS, true, true, PAD>(sQ, reinterpret_cast<const T *>(p.q) + q_row0 * dg, p.rows - r0, d);
        if (PAGED) {   /* the first slices in place; the loop fetches each later one a tile ahead */
            if (threadIdx.x < STAGES * SK_PAGE_SLICE) s_pg[threadIdx.x] = pg_first;
            __syncthreads();
        }
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < n_tiles) {
                T *st = sKV + s * (L::stage / 2);
                if (PAGED) {
                    sk_load_kv_paged<D, PAD>(st, k_head, v_head, kv_row, s_pg + s * SK_PAGE_SLICE, pg.P, k_lo + s * SK_TILE,
                                             k_hi - k_lo - s * SK_TILE, d);
                } else {
                    load_tile<D, SK_TILE, SK_THREADS, true, true, PAD>(st, k_ptr + (size_t)s * SK_TILE * dg, k_hi - k_lo - s * SK_TILE, d);
                    load_tile<D, SK_TILE, SK_THREADS, true, true, PAD>(st + SK_TILE * D, v_ptr + (size_t)s * SK_TILE * dg, k_hi - k_lo - s * SK_TILE, d);
                }
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
            cp_async_wait<STAGES - 2>();      /* tile j has landed (this thread's part) */
            __syncthreads();                  /* ...everyone's part; and tile j - 1 is consumed */
            const int nj = j + STAGES - 1;    /* the tile that goes into the stage just freed */
            if (nj < n_tiles) {
                T *st = sKV + (nj % STAGES) * (L::stage / 2);
                if (PAGED) {
                    sk_load_kv_paged<D, PAD>(st, k_head, v_head, kv_row, s_pg + (nj % STAGES) * SK_PAGE_SLICE, pg.P,
                                             k_lo + nj * SK_TILE, k_hi - k_lo - nj * SK_TILE, d);
                } else {
                    load_tile<D, SK_TILE, SK_THREADS, true, true, PAD>(st, k_ptr + (size_t)nj * SK_TILE * dg, k_hi - k_lo - nj * SK_TILE, d);
                    load_tile<D, SK_TILE, SK_THREADS, true, true, PAD>(st + SK_TILE * D, v_ptr + (size_t)nj * SK_TILE * dg, k_hi - k_lo - nj * SK_TILE, d);
                }
            }
            cp_async_commit();
            /* PAGED: the slice of tile nj + 1 is fetched now and stored after this tile's math, into
             * the slot of tile j (issued STAGES - 1 iterations ago); the next iteration's barrier
             * publishes it, and its latency hides behind the math */
            const bool fetch = PAGED && threadIdx.x < SK_PAGE_SLICE && nj + 1 < n_tiles;
            int pg_next = 0;
            if (fetch) pg_next = sk_page_entry(bt, pg.max_pages, k_lo + (nj + 1) * SK_TILE, pg.P, threadIdx.x);
            const uint32_t stage_off = (uint32_t)(j % STAGES) * STAGE_BYTES;

            /* S = Q K^T: all RG rows x this warp's 16 keys */
            float s[MT][2][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < 2; nt++) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D; kk += 16) {
                /* PAD: a k16 step wholly past d adds 0 * 0 (both tiles are zero there): skipped */
                if (PAD && kk >= d) break;
                uint32_t bk[4];
                ldmatrix_x4(bk, (k_lane + stage_off) ^ ((kk / 8) * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    uint32_t a[4];
                    ldmatrix_x4(a, (q_lane + mt * 16 * D * 2) ^ ((kk / 8) * 16));
                    mma_16816_t<T>(s[mt][0], a, bk[0], bk[1]);
                    mma_16816_t<T>(s[mt][1], a, bk[2], bk[3]);
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
                    const float m_use = online_offset(m_new);
                    const float alpha = online_alpha(m_run[mt][hi], m_use);
                    m_run[mt][hi] = m_new;
                    float sum = 0.0f;
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            float pe = online_p(s[mt][nt][2 * hi + e], p.scale_log2, m_use);
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

            /* O += P V over this warp's 16 keys (one k16 step); P re-packed as T */
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                a[mt][0] = pack2_t<T>(s[mt][0][0], s[mt][0][1]);
                a[mt][1] = pack2_t<T>(s[mt][0][2], s[mt][0][3]);
                a[mt][2] = pack2_t<T>(s[mt][1][0], s[mt][1][1]);
                a[mt][3] = pack2_t<T>(s[mt][1][2], s[mt][1][3]);
            }
#pragma unroll
            for (int dt = 0; dt < DT; dt += 2) {
                /* PAD: O's columns wholly past d (16 a step) are never stored: not computed */
                if (PAD && dt * 8 >= d) break;
                uint32_t bv[4];
                ldmatrix_x4_trans(bv, (v_lane + stage_off) ^ (dt * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816_t<T>(o[mt][dt], a[mt], bv[0], bv[1]);
                    mma_16816_t<T>(o[mt][dt + 1], a[mt], bv[2], bv[3]);
                }
            }
            if (fetch) s_pg[((nj + 1) % STAGES) * SK_PAGE_SLICE + threadIdx.x] = pg_next;
        }

        /* ---- merge the four warps' (O, m, l) of every row: the {m, d} merge, through smem ----
         * Three short phases, so that no thread walks a long dependent chain (with 4 warps per SM
         * there is no other work to hide it: one element per thread, each redoing its row's max,
         * exponentials, division and log, took 2.6 us per segment; these phases 0.8 us,
         * results/lab/h100-trace06-before.txt and results/lab/h100-trace06.txt):
         *   1. each warp puts its O rows (float32, rows padded by 8 floats: two wavefronts per
         *      store, not eight) and its m, l in smem;
         *   2. one thread per row forms the row's m, l, LSE and each warp's factor
         *      exp2(m_w - m) / l, in place of m_w;
         *   3. every thread sums the four warps' float4 pieces of O with those factors, all loads
         *      issued before the first add. Where the row goes is the merge policy's choice. */
        cp_async_wait<0>();
        __syncthreads();                      /* the stages are free: reuse them as scratch */
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
        const sk_out out = {seq, seg.w, min(RG, p.rows - r0), dg, q_row0,   /* rows past n_rows are padding */
                            scratch + (size_t)SK_WARPS * RG * SD, sL, reinterpret_cast<int *>(sL + SK_WARPS * RG)};
        if (threadIdx.x < out.n_rows) {
            const int r = threadIdx.x;
            float m = -INFINITY;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) m = fmaxf(m, sM[w * RG + r]);
            const float m_use = online_offset(m);
            float f[SK_WARPS], l = 0.0f;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) {
                f[w] = fast_exp2(sM[w * RG + r] - m_use);
                l += sL[w * RG + r] * f[w];
            }
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++) sM[w * RG + r] = f[w] * inv;
            M::put_lse(p, plan, out, r, l > 0.0f ? (m + log2f(l)) * LN2 : -INFINITY);   /* after its reads of sL */
        }
        __syncthreads();
        constexpr int CG = D / 4;             /* float4 groups per row */
#pragma unroll 4
        for (int i = 0; i < RG * CG / SK_THREADS; i++) {
            const int e = threadIdx.x + i * SK_THREADS, r = e / CG, c = (e % CG) * 4;
            if (r < out.n_rows && (!PAD || c < d)) {   /* PAD: the columns past d are not O's */
                float4 x[SK_WARPS];
#pragma unroll
                for (int w = 0; w < SK_WARPS; w++) x[w] = *reinterpret_cast<const float4 *>(scratch + ((size_t)w * RG + r) * SD + c);
                float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
                for (int w = 0; w < SK_WARPS; w++) {
                    const float f = sM[w * RG + r];
                    acc.x += f * x[w].x; acc.y += f * x[w].y; acc.z += f * x[w].z; acc.w += f * x[w].w;
                }
                M::put_o(p, plan, out, r, c, acc);
            }
        }
        M::finish(p, plan, out);
        __syncthreads();                      /* scratch and sQ are rewritten by the next segment */
    }
}

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
#define SK_COMB_BATCH 8
#define SK_COMB_SLICE 32          /* columns per CTA when a row is sliced */
template <typename T, int D, int RG, int COLS, bool PAD>
__global__ void __launch_bounds__(128)
combine_kernel(sk_params p, sk_plan plan, int d)
{
    constexpr int CGS = COLS / 4, LANES = 128 / CGS;       /* float4 column groups, partial lanes */
    extern __shared__ float s_w[];                          /* the row's n weights */
    __shared__ float4 red[LANES][CGS];
    const int seq = plan.split_seqs[blockIdx.x], r = blockIdx.y, c0 = blockIdx.z * COLS;
    const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    if (rg * RG + r >= p.rows) return;                     /* a padding row (uniform per block) */
    const int p0 = plan.seq_part[seq], n = plan.seq_part[seq + 1] - p0;
    const int pl = threadIdx.x / CGS, cg = threadIdx.x % CGS;
    const int nx = !PAD || c0 + cg * 4 < d ? n : 0;        /* the partials whose O this thread reads */
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
    red[pl][cg] = acc;
    __syncthreads();
    const size_t row = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG + r;
#pragma unroll
    for (int i = 0; i < (COLS + 127) / 128; i++) {        /* a whole row of 256: two columns a thread */
        if (threadIdx.x + i * 128 >= COLS) continue;       /* unsigned, as before: c is known >= 0 */
        const int c = threadIdx.x + i * 128;
        if (!PAD || c0 + c < d) {
            float v = 0.0f;
#pragma unroll
            for (int l = 0; l < LANES; l++) v += reinterpret_cast<const float *>(&red[l][c / 4])[c % 4];
            reinterpret_cast<T *>(p.o)[row * (PAD ? d : D) + c0 + c] = to_storage<T>(v);
        }
    }
    if (blockIdx.z == 0 && threadIdx.x == 0) p.lse[row] = md_lse(st);
}

/* ---- Host side: the kernels for a shape, the launches (the plan in device memory: plan_device.c) ---- */

typedef void (*sk_split_fn)(sk_params, sk_plan, sk_pages, int);
typedef void (*sk_kernel_fn)(sk_params, sk_plan, int);

/* The kernels and sizes for a storage type, a head dim, a number of packed rows (16 or 32 per row
 * group), and K and V contiguous or paged. */
typedef struct sk_variant {
    plan_kernel pk;                             /* 06a's split kernel, as the planner sees it */
    sk_kernel_fn combine, combine_row;          /* 32-column slices; whole rows */
} sk_variant;

/* The tile for head dim d: the smallest of 64, 128 and 256 that holds it, for d a multiple of 8 (rows
 * of whole 16-byte chunks) from 32 to 256; else 0. */
static int sk_tile_d(int d)
{
    if (d < 32 || d > 256 || d % 8) return 0;
    return d <= 64 ? 64 : d <= 128 ? 128 : 256;
}

/* The split kernel with merge policy Merge for the plan_kernel's type, tile, rows, layout and
 * padding (06a's is the plan_kernel's own; 06b and 06c ask for theirs). The tile of 256 has only
 * the 16-row instantiation (sk_pick). */
template <template <typename, int, int> class Merge, typename T, bool PAGED, bool PAD>
static sk_split_fn sk_kernel_of(const plan_kernel *k)
{
    if (k->d == 64) return k->rg == 16 ? split_kv_kernel<T, 64, 1, Merge, PAGED, PAD> : split_kv_kernel<T, 64, 2, Merge, PAGED, PAD>;
    if (k->d == 128) return k->rg == 16 ? split_kv_kernel<T, 128, 1, Merge, PAGED, PAD> : split_kv_kernel<T, 128, 2, Merge, PAGED, PAD>;
    return split_kv_kernel<T, 256, 1, Merge, PAGED, PAD>;
}
template <template <typename, int, int> class Merge, typename T>
static sk_split_fn sk_kernel_t(const plan_kernel *k)
{
    if (k->paged) return k->pad ? sk_kernel_of<Merge, T, true, true>(k) : sk_kernel_of<Merge, T, true, false>(k);
    return k->pad ? sk_kernel_of<Merge, T, false, true>(k) : sk_kernel_of<Merge, T, false, false>(k);
}
template <template <typename, int, int> class Merge>
static sk_split_fn sk_kernel(const plan_kernel *k)
{
    return k->dtype == ATTN_BF16 ? sk_kernel_t<Merge, __nv_bfloat16>(k) : sk_kernel_t<Merge, __half>(k);
}

/* The combine kernel (32-column slices, or whole rows) for the plan_kernel's type, tile and rows. */
template <typename T, bool PAD, int D, int RG>
static sk_kernel_fn sk_combine_of(int whole)
{
    return whole ? combine_kernel<T, D, RG, D, PAD> : combine_kernel<T, D, RG, SK_COMB_SLICE, PAD>;
}
template <typename T, bool PAD>
static sk_kernel_fn sk_combine_t(const plan_kernel *k, int whole)
{
    if (k->d == 64) return k->rg == 16 ? sk_combine_of<T, PAD, 64, 16>(whole) : sk_combine_of<T, PAD, 64, 32>(whole);
    if (k->d == 128) return k->rg == 16 ? sk_combine_of<T, PAD, 128, 16>(whole) : sk_combine_of<T, PAD, 128, 32>(whole);
    return sk_combine_of<T, PAD, 256, 16>(whole);
}
/* A template, so that the combine kernels are instantiated after the split kernels (sk_pick asks
 * for them second): the module's first extern shared declaration is then the split kernel's,
 * 1 KB-aligned, and the combine kernel's dynamic shared memory stays where it was (as its code). */
template <int WHOLE>
static sk_kernel_fn sk_combine(const plan_kernel *k)
{
    if (k->dtype == ATTN_BF16) return k->pad ? sk_combine_t<__nv_bfloat16, true>(k, WHOLE) : sk_combine_t<__nv_bfloat16, false>(k, WHOLE);
    return k->pad ? sk_combine_t<__half, true>(k, WHOLE) : sk_combine_t<__half, false>(k, WHOLE);
}

static size_t sk_smem_bytes(int D, int mt, int paged)
{
    if (D == 64) return mt == 1 ? (paged ? sk_smem<64, 1, true>::bytes : sk_smem<64, 1, false>::bytes)
                                : (paged ? sk_smem<64, 2, true>::bytes : sk_smem<64, 2, false>::bytes);
    if (D == 128) return mt == 1 ? (paged ? sk_smem<128, 1, true>::bytes : sk_smem<128, 1, false>::bytes)
                                 : (paged ? sk_smem<128, 2, true>::bytes : sk_smem<128, 2, false>::bytes);
    return paged ? sk_smem<256, 1, true>::bytes : sk_smem<256, 1, false>::bytes;
}

/* The kernels for a shape: 0 if its head dim has no tile. Rows per row group: 16 when the packed
 * rows (g * Nq) fit, else 32; the tile of 256 always 16 (32 rows would be 256 floats of O a lane),
 * so a larger group is several row groups, each reading the KV head again. */
static int sk_pick(const attn_shape *s, const attn_env *env, sk_variant *v)
{
    const int D = sk_tile_d(s->d);
    if (!D) return 0;
    const int mt = (s->Hq / s->Hkv) * s->N <= 16 || D == 256 ? 1 : 2, paged = s->page_size > 0;
    v->pk = (plan_kernel){NULL, SK_THREADS, sk_smem_bytes(D, mt, paged), D, 16 * mt,
                          env->kv_block ? env->kv_block : SK_BLOCK_DEFAULT, paged, s->dtype, s->d != D};
    v->pk.split = (const void *)sk_kernel<merge_later>(&v->pk);
    v->combine = sk_combine<0>(&v->pk);
    v->combine_row = sk_combine<1>(&v->pk);
    return 1;
}

static int sk_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    sk_variant v;
    if (s->N > 16)
        snprintf(why, n, "rung 06 is the decode kernel: N = %d query tokens per request; it takes 1..16 "
                 "(prefill is rung 05's job)", s->N);
    else if (!sk_pick(s, env, &v))
        snprintf(why, n, "rung 06 runs head dims 32 to 256 in steps of 8, float16 or bfloat16 (d = %d)", s->d);
    else if (!plan_planner_known(env)) snprintf(why, n, "unknown planner '%s' (fa, greedy, balanced, auto)", plan_planner(env));
    else if (s->page_size < 0 || s->page_size % ATTN_PAGE_STEP || s->page_size > ATTN_PAGE_MAX)
        snprintf(why, n, "rung 06 reads pages of a multiple of %d keys up to %d (page size %d)", ATTN_PAGE_STEP,
                 ATTN_PAGE_MAX, s->page_size);
    else if (v.pk.smem > env->smem_per_block_optin || env->cc_major < 8)
        snprintf(why, n, "d = %d (a tile of d = %d) needs compute capability 8.0+ and %zu KB of shared memory per block",
                 s->d, v.pk.d, v.pk.smem / 1024);
    else return 0;
    return 1;
}

static size_t sk_workspace(const attn_shape *s, const attn_env *env)
{
    sk_variant v;
    return sk_pick(s, env, &v) ? plan_workspace(s, env, &v.pk) : 0;
}

/* The plan for this launch (made and uploaded once per batch composition); the kernels' arguments. */
static const char *sk_prepare(const attn_args *a, cudaStream_t st, sk_variant *v, const plan_device **pd, sk_params *p,
                              sk_plan *dp, sk_pages *pp)
{
    const attn_shape *s = &a->shape;
    if (!sk_pick(s, &a->env, v)) return "rung 06: unsupported head dim";
    const char *err = plan_device_get(a, &v->pk, st, pd);
    if (err) return err;
    char *ws = (char *)a->workspace;
    const plan_layout *L = &(*pd)->at;
    *p = (sk_params){(const __half *)a->q, (const __half *)a->k, (const __half *)a->v, (__half *)a->o, a->lse, a->seqlens_k,
                     s->Hq, s->Hkv, s->N, s->M, s->causal, s->Hq / s->Hkv, (s->Hq / s->Hkv) * s->N, 0, v->pk.blk,
                     s->scale * LOG2E};
    p->n_rg = (p->rows + v->pk.rg - 1) / v->pk.rg;
    *dp = (sk_plan){(const int4 *)(ws + L->cta_info), (const int4 *)(ws + L->segs), (const int *)(ws + L->seq_part),
                    (const int *)(ws + L->split_seqs), (int *)(ws + L->seq_count), (float *)(ws + L->part_o),
                    (float *)(ws + L->part_lse)};
    *pp = (sk_pages){a->block_table, s->page_size, a->max_pages};
    if (s->page_size && !a->block_table) return "rung 06: a paged shape without a block table";
    return NULL;
}

/* 06a: the split kernel, then the combine kernel for the sequences that were split. */
static const char *sk_split_then_combine(const attn_args *a, cudaStream_t st, const sk_variant *v, const plan_device *pd,
                                         const sk_params *p, const sk_plan *dp, const sk_pages *pp)
{
    ((sk_split_fn)v->pk.split)<<<pd->plan.n_ctas, SK_THREADS, v->pk.smem, st>>>(*p, *dp, *pp, a->shape.d);
    RUNG_LAUNCHED(split_kv_kernel);
    if (pd->n_split == 0) return NULL;
    const int whole = pd->max_parts <= 512 / v->pk.d;      /* at most one partial per lane (the tile's D) */
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(pd->n_split, min(v->pk.rg, p->rows),   /* slices up to the last holding a column < d */
                       whole ? 1 : (a->shape.d + SK_COMB_SLICE - 1) / SK_COMB_SLICE);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = sizeof(float) * pd->max_parts;
    cfg.stream = st;
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = a->env.cc_major >= 9 ? 1 : 0;   /* programmatic dependent launch: Hopper on */
    RUNG_CUDA(cudaLaunchKernelEx(&cfg, whole ? v->combine_row : v->combine, *p, *dp, a->shape.d));
    RUNG_LAUNCHED(combine_kernel);
    return NULL;
}

/* A variant's run(): the plan and the arguments, then its launches. */
typedef const char *(*sk_launch_fn)(const attn_args *, cudaStream_t, const sk_variant *, const plan_device *,
                                     const sk_params *, const sk_plan *, const sk_pages *);
template <sk_launch_fn LAUNCH>
static const char *sk_run(const attn_args *a, cudaStream_t st)
{
    sk_variant v;
    const plan_device *pd;
    sk_params p;
    sk_plan dp;
    sk_pages pp;
    const char *err = sk_prepare(a, st, &v, &pd, &p, &dp, &pp);
    return err ? err : LAUNCH(a, st, &v, pd, &p, &dp, &pp);
}

/* For the report: the plan a variant's launch uses and how it merges (plan_describe). */
template <plan_merge_fn MERGE>
static void sk_describe(const attn_shape *s, const attn_env *env, char *buf, size_t n)
{
    sk_variant v;
    buf[0] = 0;
    if (sk_pick(s, env, &v)) plan_describe(s, env, &v.pk, MERGE, buf, n);
}

static const char *merge_06a(const split_plan *, const attn_env *, const plan_kernel *) { return "kernel"; }

static const rung rung_06a = {
    "06a", "split-KV + combine kernel",
    "decode: GQA rows packed per KV head; KV split across CTAs by a planner; partials merged by LSE "
    "in a second kernel",
    sk_unsupported, sk_workspace, sk_run<sk_split_then_combine>, sk_describe<merge_06a>,
};

/* The two refinements of the merge, each in its own file (and its own README section). */
#include "fused_merge.cuh"
#include "cluster_merge.cuh"

extern "C" const rung *const rung_variants[] = {&rung_06a, &rung_06b, &rung_06c, NULL};

/* What rung 06 adds to the command line (common/attn.h): its default shape is a decode step (one
 * query token per request, 8 requests, GQA 8:1 over 16384 keys, d = 128), since the driver's
 * default N = 1024 is prefill, which this rung refuses; --planner and --kv-block choose the split. */
extern "C" const rung_cli rung_cli_own = {
    8, 8, 1, 1, 16384, 128, planner_names, planner_default, SK_BLOCK_DEFAULT,
    "--b 32 --hq 8 --hkv 1 --n 1 --m 16384 --d 128 --seqlen-dist uniform",
};
