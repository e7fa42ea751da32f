/* Rung 06: Flash-Decoding. Split each request's KV cache across CTAs, write partial (O, LSE),
 * merge the partials with their LSE weights; plan the split on the CPU so that no SM waits.
 * This file holds the split kernel; split_kv.cu is the host side (the plan, the launches, the
 * variants), and kernels.cuh lists the instantiations, one translation unit per storage type and
 * tile (instantiations/).
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
 * The split kernel has two policies, template parameters:
 *   Merge  where a finished segment's rows go (put_lse and put_o: where a row's LSE and each
 *          float4 of its O go; finish: what happens after the segment): merge_later (06a,
 *          combine_kernel.cuh: a second kernel, the combine kernel, merges the partials),
 *          merge_fused (06b, fused_merge.cuh: the CTA that writes a sequence's last partial merges
 *          them, <= 4), merge_cluster (06c, cluster_merge.cuh: on sm_90 a sequence's CTAs form a
 *          thread-block cluster and merge through each other's shared memory);
 *   Loader how a 64-key tile of K and V is loaded (paged.cuh): kv_contiguous ([B, Hkv, M, d]) or
 *          kv_paged (a paged KV cache, --page-size P, through the block table).
 *
 * Storage type and head dims, as in rung 05 (fa2.cu): T is float16 (__half) or bfloat16
 * (__nv_bfloat16); only the mma.sync type and the float -> T conversions of P and O differ
 * (common/mma.cuh). The tile's head dim D is 64, 96, 128 or 256. Rows of a power-of-two number of
 * bytes are XOR-swizzled and an ldmatrix step is one XOR on the address; rows of 96 elements (192
 * bytes) break that swizzle, so the tile of 96 is padded instead, 104 elements (208 bytes) a row:
 * the 8 rows an ldmatrix reads then start in 8 different 16-byte bank groups, and a step is an add
 * (sk_layout). A head dim d < D (a multiple of 8 from 32 to 256) runs the PAD instantiation of the
 * next tile up: rows in memory are d long (sk_params' d), the tile's columns d..D-1 are
 * zero-filled on load, the k16 steps of Q K^T and the 16-column steps of P V at or past d are
 * skipped, and no column past d is stored (partials keep D floats a row; the merges skip the
 * columns past d). The tile of 256 runs 16 packed rows (O alone is 128 floats a lane; a larger
 * GQA group becomes several row groups) and 2 stages (4 would take 256 KB).
 *
 * Grid: one CTA per plan entry; block: 4 warps. Shared memory: Q tile RG x D (RG = 16 or 32
 * packed rows), STAGES x (K tile 64 x D + V tile 64 x D), XOR-swizzled (common/tiles.cuh) or, in
 * the tile of 96, rows padded to 104 elements (sk_layout); the tile of 96 with 16 rows takes 108 KB,
 * so two CTAs share an SM (the multi-head decode case: one query row per KV head);
 * the two-heads tile (PAIR, below) takes 106 KB, two CTAs an SM too;
 * after a segment the K/V stages are reused as float32 scratch for the four warps' O. The K/V
 * loader's ints follow (SLICE a stage: kv_paged's slices of the block table). */
/* The two-heads tile (PAIR; a paged cache, d = 96, one query head per KV head, Hq = Hkv even,
 * N <= 4). A page holds each key's rows of all KV heads side by side, so one head's 192-byte rows
 * lie Hkv * 192 bytes apart, and HBM serves such a read slower than a contiguous one
 * (lab/stride_read.cu; 06's NOTES.md has the figures); two neighbouring heads' rows are 384
 * contiguous bytes, which it serves at full speed. So a CTA takes KV heads 2h and 2h + 1 as one
 * sequence: its K and V tiles are DK = 2D = 192 wide, the two heads side by side (in a page one
 * 384-byte row a key, so kv_paged serves it at DK). To the plan, the merges and the combine kernel
 * the pair is one KV head of a GQA group of 2: the rows of head 2h (its N tokens) and then those of
 * head 2h + 1, contiguous in Q and O as a group's are. Each row must meet only its own head's K and
 * V, also when the other head's hold a NaN or an infinity (0 * inf is NaN), so nothing of one head
 * is multiplied by a zero in place of the other's:
 *   - S: Q K0^T and Q K1^T into two accumulators, and each row keeps its own head's;
 *   - O: transposed, O^T = V^T P^T, the queries as the mma's 8 columns: S's accumulator already is
 *     P^T's fragment, and one accumulator per head (O0^T, O1^T) is as many registers as O of 16
 *     rows was. Each query column keeps its own head's at the end, and the rescale by alpha
 *     reaches a column through two shuffles.
 * The products of S double; the mma is not what limits this shape (06's NOTES.md). */
#ifndef SPLIT_KV_CUH
#define SPLIT_KV_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include "../common/attn.h"
#include "../common/mma.cuh"
#include "../common/tiles.cuh"
#include "../common/online_softmax.cuh"
#include "../common/cta_sync.cuh"

#define SK_WARPS 4
#define SK_THREADS (SK_WARPS * 32)
#define SK_TILE 64            /* keys per pipeline stage: 16 per warp */
#define SK_STAGES 4           /* pipeline depth (D <= 128; the tile of 256 takes 2: sk_smem) */
#define SK_BLOCK_DEFAULT 128  /* keys per KV block, the planner's unit (--kv-block) */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

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
    /* 16-bit storage, float16 or bfloat16: the kernels read it as their template parameter T, the
     * host only passes it on, so sk_params is one type for both */
    const void *q, *k, *v;
    void *o;
    float *lse;
    const int *seqlens_k;
    int Hq, Hkv, N, M, causal, g, rows, n_rg;
    int d;                    /* head dim of the rows in memory: D, or less in a PAD instantiation */
    int blk;                  /* keys per KV block (the plan's unit), a multiple of SK_TILE */
    float scale_log2;
} sk_params;

/* The paged cache as the kernel reads it (attn_args); only kv_paged reads it (paged.cuh). */
typedef struct sk_pages {
    const int *table;         /* [B][max_pages], int32 */
    int P, max_pages;
} sk_pages;

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

/* How a shared tile of D columns is laid out. D a power of two (64, 128, 256): rows of D elements,
 * XOR-swizzled (common/tiles.cuh), and the 16-byte chunk `c` of a lane's ldmatrix row is an XOR on
 * its address. D = 96: rows padded to PITCH = 104 elements, 208 bytes = 52 banks, so rows r and
 * r + 1..7 start 20, 40, ... banks apart mod 32: the 8 rows an ldmatrix reads fall in 8 different
 * groups of 4 banks, no conflict, and a chunk step is an add. */
template <int D>
struct sk_layout {
    static constexpr bool SWZ = (D & (D - 1)) == 0;
    static constexpr int PITCH = SWZ ? D : D + 8;          /* elements from one row to the next */
    static __device__ __forceinline__ int off(int row, int col)
    {
        return SWZ ? tile_off<D, true>(row, col) : row * PITCH + col;
    }
    /* the address of chunk c (16 bytes) past a lane's ldmatrix address `base` (chunk 0 of its row) */
    static __device__ __forceinline__ uint32_t at(uint32_t base, int c) { return SWZ ? base ^ (c * 16) : base + c * 16; }
};

/* ROWS x D elements from global (row stride D, or d with PAD) into a padded tile (sk_layout: PITCH
 * elements a row), asynchronously; rows >= valid_rows, and with PAD the chunks at columns >= d, are
 * zero-filled and not read. The tile's ROWS * D / 8 chunks are numbered row by row and thread t
 * takes chunks t, t + THREADS, ...: 12 chunks a row at D = 96 do not divide 128 threads, so a
 * thread's row and column change from step to step (one multiply-high each, by the constant D / 8);
 * consecutive threads still take consecutive chunks (coalesced). */
template <int D, int ROWS, int THREADS, bool PAD, typename T>
static __device__ __forceinline__ void sk_load_pitched(T *tile, const T *src, int valid_rows, int d)
{
    constexpr int CPR = D / 8, N = ROWS * CPR, STEPS = (N + THREADS - 1) / THREADS;
    static_assert(!sk_layout<D>::SWZ && sizeof(T) == 2, "the padded tile, 16-bit storage");
    const int ld = PAD ? d : D;
    const uint32_t s0 = smem_addr(tile);
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        const int i = threadIdx.x + k * THREADS, r = i / CPR, c = i % CPR;
        if (N % THREADS && i >= N) break;
        const bool valid = (!PAD || c * 8 < d) && r < valid_rows;
        cp_async_16(s0 + (uint32_t)(r * sk_layout<D>::PITCH + c * 8) * 2, src + (size_t)r * ld + c * 8, valid);
    }
}

/* A tile of ROWS x D from global into shared memory, in the tile's layout (sk_layout). */
template <int D, int ROWS, bool PAD, typename T>
static __device__ __forceinline__ void sk_load_tile(T *tile, const T *src, int valid_rows, int d)
{
    if constexpr (sk_layout<D>::SWZ) load_tile<D, ROWS, SK_THREADS, true, true, PAD>(tile, src, valid_rows, d);
    else sk_load_pitched<D, ROWS, SK_THREADS, PAD>(tile, src, valid_rows, d);
}

/* The layout of shared memory, in bytes (16-bit storage, whichever type), with SLICE ints a stage
 * for the K/V loader. The tile of 256 keeps 2 stages (64 KB each: 137 KB in all, which an A100's
 * 163 KB per block still holds; 4 would be 256 KB), so one 64 KB tile is in flight while the
 * other computes. */
template <int D, int MT, int SLICE>
struct sk_smem {
    static constexpr int RG = 16 * MT;
    static constexpr int STAGES = D <= 128 ? SK_STAGES : 2;
    static constexpr int PITCH = sk_layout<D>::PITCH;
    static constexpr size_t q = (size_t)RG * PITCH * 2;
    static constexpr size_t stage = (size_t)2 * SK_TILE * PITCH * 2;      /* K + V */
    static constexpr size_t ml = (size_t)2 * SK_WARPS * RG * 4;
    static constexpr size_t pages = (size_t)STAGES * SLICE * 4;           /* the loader's ints */
    static constexpr size_t bytes = q + STAGES * stage + ml + 16 + pages;   /* + s_flag */
    static_assert(((size_t)SK_WARPS * RG * (D + 8) + (size_t)RG * D) * 4 <= STAGES * stage,
                  "the warps' scratch and s_o fit in the stages");
};

/* Four floats -> four T at dst (8-byte aligned): one 8-byte store. */
template <typename T>
static __device__ __forceinline__ void store4(T *dst, float4 x)
{
    *reinterpret_cast<uint2 *>(dst) = make_uint2(pack2_t<T>(x.x, x.y), pack2_t<T>(x.z, x.w));
}

/* The split kernel (grid, block and shared memory: the top of this file). D is the width of Q's and
 * O's rows; K's and V's tiles are DK wide: D, or 2D in the two-heads tile (PAIR). */
template <typename T, int D, int MT, template <typename, int, int> class Merge, template <typename, int, bool> class Loader,
          bool PAD, bool PAIR = false>
__global__ void __launch_bounds__(SK_THREADS)
split_kv_kernel(sk_params p, sk_plan plan, sk_pages pg)
{
    constexpr int RG = 16 * MT, DT = D / 8, DK = PAIR ? 2 * D : D;
    static_assert(!PAIR || (MT == 1 && !PAD), "the two-heads tile: 16 rows, d = D");
    typedef Loader<T, DK, PAD> KV;
    typedef sk_smem<DK, MT, KV::SLICE> L;
    constexpr int STAGES = L::STAGES;
    typedef Merge<T, D, RG> M;
    const int d = p.d, dg = PAD ? d : D;  /* row length in memory (Q, K, V, O) */
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sKV = reinterpret_cast<T *>(smem_raw + L::q);                    /* stage s: K then V */
    float *scratch = reinterpret_cast<float *>(sKV);                     /* [warp][RG][D + 8] */
    float *sM = reinterpret_cast<float *>(smem_raw + L::q + STAGES * L::stage);
    float *sL = sM + SK_WARPS * RG;
    int *s_kv = reinterpret_cast<int *>(smem_raw + L::q + STAGES * L::stage + L::ml + 16);   /* the loader's, after s_flag */
    constexpr int SD = D + 8;             /* scratch row stride in floats */

    typedef sk_layout<DK> TL;             /* K and V */
    typedef sk_layout<D> QL;              /* Q (D wide also in the two-heads tile) */
    constexpr int PITCH = TL::PITCH;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    /* ldmatrix lane bases (see fa2.cu): Q rows, this warp's 16 keys of a K / V stage */
    const uint32_t q_lane = smem_addr(sQ + QL::off(lane % 16, (lane / 16) * 8));
    const uint32_t k_lane = smem_addr(sKV + TL::off(warp * 16 + (lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    const uint32_t v_lane = smem_addr(sKV + SK_TILE * PITCH + TL::off(warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8, (lane / 16) * 8));
    /* PAIR: V^T as the mma's A (16 columns of d by the warp's 16 keys), the four 8 x 8 blocks in A's order */
    const uint32_t vt_lane = smem_addr(sKV + SK_TILE * PITCH + TL::off(warp * 16 + (lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    constexpr uint32_t STAGE_BYTES = (uint32_t)L::stage;

    /* Programmatic dependent launch (sm_90): the combine kernel may start now; it waits (pdl_wait)
     * for this grid to finish before it reads any partial. */
    pdl_launch_dependents();
    const int4 head = plan.cta_info[2 * blockIdx.x], first = plan.cta_info[2 * blockIdx.x + 1];
    for (int si = head.x; si < head.y; si++) {
        const int4 seg = si == head.x ? first : plan.segs[si];
        const int seq = seg.x, rg = seq % p.n_rg, bk = seq / p.n_rg;
        const int kvh = bk % p.Hkv, b = bk / p.Hkv;
        KV kv;
        KV::begin(kv, p, pg, b, seg.y, STAGES);              /* before anything waits for the length */
        const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
        const int k_lo = seg.y * p.blk, k_hi = min(seg.z * p.blk, mk);
        const int n_tiles = (k_hi - k_lo + SK_TILE - 1) / SK_TILE;
        const int r0 = rg * RG;                              /* first packed row of the group */
        const size_t q_row0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + r0;   /* rows contiguous */
        const int causal_from = p.causal ? mk - p.N + 1 : mk;   /* keys >= this may be masked */
        KV::at(kv, p, pg, b, kvh, k_lo, PAIR ? 2 * dg : dg);   /* the segment's K and V of this KV head (pair) */

        sk_load_tile<D, RG, PAD>(sQ, (const T *)p.q + q_row0 * dg, p.rows - r0, d);
        KV::start(kv, s_kv, STAGES);
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < n_tiles) {
                T *st = sKV + s * (L::stage / 2);
                KV::load(kv, st, s_kv, s, STAGES, k_hi - k_lo, d);
            }
            cp_async_commit();
        }

        float o[MT][DT][4], m_run[MT][2], l_run[MT][2];
        online_start(o, m_run, l_run);
        /* PAIR: which head of the pair this thread's rows g and g + 8 belong to (2 or more: padding) */
        const int head_lo = (r0 + g) / p.N, head_hi = (r0 + g + 8) / p.N;

        for (int j = 0; j < n_tiles; j++) {
            cp_async_wait<STAGES - 2>();      /* tile j has landed (this thread's part) */
            __syncthreads();                  /* ...everyone's part; and tile j - 1 is consumed */
            const int nj = j + STAGES - 1;    /* the tile that goes into the stage just freed */
            if (nj < n_tiles) {
                T *st = sKV + (nj % STAGES) * (L::stage / 2);
                KV::load(kv, st, s_kv, nj, STAGES, k_hi - k_lo, d);
            }
            cp_async_commit();
            /* the loader's int of tile nj + 1 for this thread (kv_paged: an entry of the tile's slice
             * of the block table), fetched now and kept after this tile's math, in the slot of
             * tile j: the next iteration's barrier publishes it, and its latency hides behind the
             * math */
            const bool fetch = KV::SLICE > 0 && threadIdx.x < KV::SLICE && nj + 1 < n_tiles;
            int next = 0;
            if (fetch) next = KV::ask(kv, k_lo + (nj + 1) * SK_TILE);
            const uint32_t stage_off = (uint32_t)(j % STAGES) * STAGE_BYTES;

            /* S = Q K^T: all RG rows x this warp's 16 keys (PAIR: s against the first head's K, s1
             * against the second's) */
            float s[MT][2][4], s1[2][4] = {};
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < 2; nt++) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D; kk += 16) {
                /* PAD: a k16 step wholly past d adds 0 * 0 (both tiles are zero there): skipped */
                if (PAD && kk >= d) break;
                uint32_t bk[4];
                ldmatrix_x4(bk, TL::at(k_lane + stage_off, kk / 8));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    uint32_t a[4];
                    ldmatrix_x4(a, QL::at(q_lane + mt * 16 * QL::PITCH * 2, kk / 8));
                    mma_16816_t<T>(s[mt][0], a, bk[0], bk[1]);
                    mma_16816_t<T>(s[mt][1], a, bk[2], bk[3]);
                    if constexpr (PAIR) {
                        ldmatrix_x4(bk, TL::at(k_lane + stage_off, (kk + D) / 8));
                        mma_16816_t<T>(s1[0], a, bk[0], bk[1]);
                        mma_16816_t<T>(s1[1], a, bk[2], bk[3]);
                    }
                }
            }
            if constexpr (PAIR)                   /* each row its own head's scores (row g: e < 2) */
#pragma unroll
                for (int nt = 0; nt < 2; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        if ((e < 2 ? head_lo : head_hi) == 1) s[0][nt][e] = s1[nt][e];

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
                    if constexpr (PAIR) {
                        /* O^T: this thread's columns are queries 2t and 2t + 1, whose alpha rows g = 2t
                         * and 2t + 1 hold (the pair's rows are < 8: hi = 0 alone) */
                        if (hi == 0) {
                            const float a0 = __shfl_sync(0xffffffffu, alpha, 8 * t);
                            const float a1 = __shfl_sync(0xffffffffu, alpha, 8 * t + 4);
#pragma unroll
                            for (int dt = 0; dt < DT; dt++) {
                                o[0][dt][0] *= a0; o[0][dt][2] *= a0;
                                o[0][dt][1] *= a1; o[0][dt][3] *= a1;
                            }
                        }
                    } else {
#pragma unroll
                        for (int dt = 0; dt < DT; dt++) {
                            o[mt][dt][2 * hi] *= alpha;
                            o[mt][dt][2 * hi + 1] *= alpha;
                        }
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
            if constexpr (PAIR) {
                /* O^T += V^T P^T, per head: P^T's fragment (keys 2t, 2t + 1 and 8 + 2t, 9 + 2t of
                 * query g) is S's row g as it stands; o[0][0 .. DT/2) is the first head's O^T (16
                 * columns of d each), o[0][DT/2 .. DT) the second's */
                const uint32_t b0 = pack2_t<T>(s[0][0][0], s[0][0][1]), b1 = pack2_t<T>(s[0][1][0], s[0][1][1]);
#pragma unroll
                for (int mt = 0; mt < DT; mt++) {
                    uint32_t av[4];
                    ldmatrix_x4_trans(av, TL::at(vt_lane + stage_off, (mt / (DT / 2)) * (D / 8) + (mt % (DT / 2)) * 2));
                    mma_16816_t<T>(o[0][mt], av, b0, b1);
                }
            } else {
#pragma unroll
                for (int dt = 0; dt < DT; dt += 2) {
                    /* PAD: O's columns wholly past d (16 a step) are never stored: not computed */
                    if (PAD && dt * 8 >= d) break;
                    uint32_t bv[4];
                    ldmatrix_x4_trans(bv, TL::at(v_lane + stage_off, dt));
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        mma_16816_t<T>(o[mt][dt], a[mt], bv[0], bv[1]);
                        mma_16816_t<T>(o[mt][dt + 1], a[mt], bv[2], bv[3]);
                    }
                }
            }
            if (fetch) s_kv[((nj + 1) % STAGES) * KV::SLICE + threadIdx.x] = next;
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
                if constexpr (PAIR) {
                    /* O^T's element (d = 16 m + g + 8 (e / 2), query 2t + e % 2), from its head's half */
                    if (hi == 0)
#pragma unroll
                        for (int mt2 = 0; mt2 < DT; mt2++)
#pragma unroll
                            for (int e = 0; e < 4; e++) {
                                const int q = 2 * t + (e & 1);
                                if ((r0 + q) / p.N == mt2 / (DT / 2))
                                    scratch[((size_t)warp * RG + q) * SD + (mt2 % (DT / 2)) * 16 + g + (e / 2) * 8] = o[0][mt2][e];
                            }
                } else {
                    float *orow = scratch + ((size_t)warp * RG + r) * SD;
#pragma unroll
                    for (int dt = 0; dt < DT; dt++)
                        *reinterpret_cast<float2 *>(orow + dt * 8 + 2 * t) = make_float2(o[mt][dt][2 * hi], o[mt][dt][2 * hi + 1]);
                }
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
            M::put_lse(p, plan, out, r, l == 0.0f ? -INFINITY : (m + log2f(l)) * LN2);   /* after its reads of sL */
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

#endif
