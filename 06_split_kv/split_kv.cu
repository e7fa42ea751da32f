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
 *   - A four-stage cp.async pipeline keeps about 96 KB of K/V in flight per SM (d = 128), and it
 *     runs across segment boundaries: the tiles of a CTA's next segment (and its Q) are loading
 *     while the current one's epilogue runs, so a CTA that walks several segments streams without
 *     a gap (the balanced planner's cuts cost a merge, not a pipeline refill).
 *   - A sequence covered by one segment writes O and LSE directly; otherwise each segment writes a
 *     float32 partial O (normalized) and its LSE. With at most SK_FUSE_MAX partials per sequence
 *     the CTA that writes the last one merges them (variant 06); otherwise, and always in variant
 *     06s, the combine kernel does, launched as a programmatic dependent on sm_90.
 *
 * Grid: one CTA per plan entry; block: 4 warps. Shared memory: STAGES Q tiles RG x d (RG = 16 or
 * 32 packed rows; one per segment in flight), STAGES x (K tile 64 x d + V tile 64 x d), all
 * XOR-swizzled (common/tiles.cuh); a float32 scratch where the warps trade pieces of O at the end
 * of a segment; each in-flight segment's record. */
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
#define SK_STAGES 4           /* pipeline depth (3 where shared memory is short: sk_pick) */
#define SK_BLOCK_DEFAULT 128  /* keys per KV block, the planner's unit (SPLIT_BLOCK=64|128|...) */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

/* The plan as the kernel reads it (device copies of split_plan's arrays). */
typedef struct sk_plan {
    const int4 *cta_info;     /* per CTA, three int4: {first segment, end segment, -, -} and the
                                 first segment's record, so a CTA starts after one round trip */
    const int4 *segs;         /* per segment a record of two int4: {seq, first key, end key, part},
                                 {the request's KV length, -, -, -}; keys clipped to the request */
    const int *seq_part;      /* n_seqs + 1 */
    const int *split_seqs;    /* the sequences that have partials (the combine kernel's grid) */
    int *seq_count;           /* fused merge: partials of each sequence written so far (reset to 0) */
    int fused;                /* 1: the last CTA of a sequence merges it; 0: the combine kernel does */
    float *part_o;            /* [n_parts][RG][d], normalized by its own l */
    float *part_lse;          /* [n_parts][RG] */
} sk_plan;

typedef struct sk_params {
    const __half *q, *k, *v;
    __half *o;
    float *lse;
    int Hq, Hkv, N, M, causal, g, rows, n_rg;
    float scale_log2;
} sk_params;

/* A timeline of one launch, for the README's "where the time goes" (build with -DSK_TRACE:
 * tools/gpu_run.sh trace06). Thread 0 of each split CTA stamps the global nanosecond timer at
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
    static constexpr size_t q = (size_t)STAGES * RG * D * 2;             /* a Q tile per segment in flight */
    static constexpr size_t stage = (size_t)2 * SK_TILE * D * 2;          /* K + V */
    /* each warp keeps the 1/4 of O's columns it writes out and receives the other three warps'
     * fragments of them: 4 owners x 3 sources x MT x (D/32 column tiles) x 32 lanes x float4 */
    static constexpr size_t scratch = (size_t)SK_WARPS * (SK_WARPS - 1) * MT * (D / 8 / SK_WARPS) * 32 * 16;
    static constexpr size_t ml = (size_t)2 * SK_WARPS * RG * 4;
    static constexpr size_t seg = (size_t)STAGES * 2 * 16;               /* in-flight segments' records */
    static constexpr size_t bytes = q + STAGES * stage + scratch + ml + seg + 16;   /* + the fused merge's flag */
};

/* The fused merge of one split sequence with at most SK_FUSE_MAX partials, by the CTA that wrote
 * its last partial: each thread takes two (row, 4 adjacent columns) pairs at a time and loads
 * their n partial LSEs and n float4 pieces of O before it does any arithmetic, so the two pairs
 * cost one round trip to L2, not 2n (a row group of 8 rows at d = 128 is 256 pairs: one round
 * trip for 128 threads). Then the {m, d} of the LSEs in the order k = 0, 1, ... and the weights combine_weight()
 * (combine.h, the code the CPU test checks against the unsplit softmax); the fixed order gives the
 * same bits whichever CTA merges. Loads go through L2 (__ldcg): other CTAs of this launch wrote the
 * partials, and an SM's L1 does not see other SMs' writes. */
#define SK_FUSE_MAX 4

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
            if (r >= n_rows) continue;
            md_t st = md_identity();
#pragma unroll
            for (int k = 0; k < SK_FUSE_MAX; k++)
                if (k < n) st = md_merge(st, md_of(lse[i][k]));
            float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int k = 0; k < SK_FUSE_MAX; k++)
                if (k < n) {
                    const float w = combine_weight(lse[i][k], st);
                    acc.x += w * x[i][k].x; acc.y += w * x[i][k].y; acc.z += w * x[i][k].z; acc.w += w * x[i][k].w;
                }
            __half2 *dst = reinterpret_cast<__half2 *>(p.o + (row0 + r) * D + c);
            dst[0] = __floats2half2_rn(acc.x, acc.y);
            dst[1] = __floats2half2_rn(acc.z, acc.w);
            if (c == 0) p.lse[row0 + r] = md_lse(st);
        }
    }
}

/* The producer side of the pipeline: where the next K/V tile to load comes from. Every thread
 * keeps the same copy (the loads are cooperative). It walks the CTA's segments in order; the
 * record of the segment after the current one is fetched when the current one starts, so moving
 * on never waits for a global load. */
typedef struct sk_cursor {
    int seg, end;            /* segment being loaded, the CTA's end */
    int ord;                 /* its ordinal within the CTA: its Q and record slot is ord % STAGES */
    int tile, n_tiles;       /* next tile of it, its tile count */
    int4 rec, rec1;          /* its record */
    int4 nxt, nxt1;          /* the next segment's record (valid when seg + 1 < end) */
    size_t kv0;              /* its first key's row in K and V */
    size_t q0;               /* its first packed row in Q */
    int q_rows;              /* rows of its row group that exist (the rest are padding) */
} sk_cursor;

/* The cursor's per-segment values, from its record (once per segment, not per tile). */
template <int RG>
__device__ __forceinline__ void sk_cursor_set(const sk_params &p, sk_cursor &c)
{
    const int seq = c.rec.x, rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    c.n_tiles = (c.rec.z - c.rec.y + SK_TILE - 1) / SK_TILE;
    c.kv0 = ((size_t)b * p.Hkv + kvh) * p.M + c.rec.y;
    c.q0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG;
    c.q_rows = p.rows - rg * RG;
}

/* Issue the next tile (and, at a segment's first tile, its Q and record), then commit: exactly one
 * cp.async group per call, empty once the CTA's segments are all issued. `issued` counts tiles:
 * tile i lands in stage i % STAGES. */
template <int D, int RG, int STAGES>
__device__ __forceinline__ void sk_issue(const sk_params &p, const sk_plan &plan, sk_cursor &c, int &issued,
                                         __half *sQ, __half *sKV, int4 *sSeg)
{
    if (c.seg < c.end) {
        const int left = c.rec.z - c.rec.y - c.tile * SK_TILE;
        if (c.tile == 0) {
            const int slot = c.ord % STAGES;
            load_tile<D, RG, SK_THREADS, true, true>(sQ + (size_t)slot * RG * D, p.q + c.q0 * D, c.q_rows);
            if (threadIdx.x == 0) { sSeg[2 * slot] = c.rec; sSeg[2 * slot + 1] = c.rec1; }
        }
        __half *st = sKV + (size_t)(issued % STAGES) * 2 * SK_TILE * D;
        load_tile<D, SK_TILE, SK_THREADS, true, true>(st, p.k + (c.kv0 + (size_t)c.tile * SK_TILE) * D, left);
        load_tile<D, SK_TILE, SK_THREADS, true, true>(st + SK_TILE * D, p.v + (c.kv0 + (size_t)c.tile * SK_TILE) * D, left);
        issued++;
        if (++c.tile == c.n_tiles) {          /* on to the next segment; fetch the one after it */
            c.seg++; c.ord++; c.tile = 0;
            if (c.seg < c.end) {
                c.rec = c.nxt; c.rec1 = c.nxt1;
                sk_cursor_set<RG>(p, c);
                if (c.seg + 1 < c.end) { c.nxt = plan.segs[2 * (c.seg + 1)]; c.nxt1 = plan.segs[2 * (c.seg + 1) + 1]; }
            }
        }
    }
    cp_async_commit();
}

template <int D, int MT, int STAGES>
__global__ void __launch_bounds__(SK_THREADS)
split_kv_kernel(sk_params p, sk_plan plan)
{
    constexpr int RG = 16 * MT, DT = D / 8, DTW = DT / SK_WARPS;   /* DTW: column tiles a warp writes out */
    static_assert(DT % SK_WARPS == 0, "each warp writes out the same number of column tiles");
    typedef sk_smem<D, MT, STAGES> L;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __half *sQ = reinterpret_cast<__half *>(smem_raw);
    __half *sKV = reinterpret_cast<__half *>(smem_raw + L::q);          /* stage s: K then V */
    float4 *scratch = reinterpret_cast<float4 *>(smem_raw + L::q + STAGES * L::stage);
    float *sM = reinterpret_cast<float *>(smem_raw + L::q + STAGES * L::stage + L::scratch);
    float *sL = sM + SK_WARPS * RG;
    int4 *sSeg = reinterpret_cast<int4 *>(sL + SK_WARPS * RG);
    int *s_last = reinterpret_cast<int *>(sSeg + 2 * STAGES);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    /* ldmatrix lane bases (see fa2.cu): Q rows (slot 0), this warp's 16 keys of a K / V stage */
    const uint32_t q_lane = smem_addr(sQ + tile_off<D, true>(lane % 16, (lane / 16) * 8));
    const uint32_t k_lane = smem_addr(sKV + tile_off<D, true>(warp * 16 + (lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    const uint32_t v_lane = smem_addr(sKV + SK_TILE * D + tile_off<D, true>(warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8, (lane / 16) * 8));
    constexpr uint32_t STAGE_BYTES = (uint32_t)L::stage, QSLOT_BYTES = (uint32_t)(RG * D * 2);

    SK_STAMP(sk_trace_split, blockIdx.x, 0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Programmatic dependent launch: the combine kernel may start now; it waits (griddepcontrol.wait)
     * for this grid to finish before it reads any partial. */
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    const int4 head = plan.cta_info[3 * blockIdx.x];
    if (head.x >= head.y) return;
    sk_cursor cur;
    cur.seg = head.x; cur.end = head.y; cur.ord = 0; cur.tile = 0;
    cur.rec = plan.cta_info[3 * blockIdx.x + 1]; cur.rec1 = plan.cta_info[3 * blockIdx.x + 2];
    sk_cursor_set<RG>(p, cur);
    cur.nxt = cur.nxt1 = make_int4(0, 0, 0, 0);
    if (head.x + 1 < head.y) { cur.nxt = plan.segs[2 * (head.x + 1)]; cur.nxt1 = plan.segs[2 * (head.x + 1) + 1]; }
    int issued = 0;
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; s++) sk_issue<D, RG, STAGES>(p, plan, cur, issued, sQ, sKV, sSeg);

    /* the consumer: segment ordinal, its tile count, the tile within it; per segment its record */
    int c_ord = 0, c_tiles = 0, cj = 0;
    int seq = 0, k_lo = 0, k_hi = 0, part = -1, mk = 0, r0 = 0, causal_from = 0;
    size_t q_row0 = 0;
    uint32_t q_base = q_lane;
    float o[MT][DT][4], m_run[MT][2], l_run[MT][2];

    for (int i = 0;; i++) {
        cp_async_wait<STAGES - 2>();   /* tile i has landed (this thread's part) */
        __syncthreads();                  /* ...everyone's part; and tile i - 1 is consumed */
        if (i == 0) SK_STAMP(sk_trace_split, blockIdx.x, 1);
        if (cj == 0) {                    /* a new segment: its record, written with its first tile */
            const int slot = c_ord % STAGES;
            const int4 rec = sSeg[2 * slot];
            seq = rec.x; k_lo = rec.y; k_hi = rec.z; part = rec.w; mk = sSeg[2 * slot + 1].x;
            c_tiles = (k_hi - k_lo + SK_TILE - 1) / SK_TILE;
            const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
            r0 = rg * RG;
            q_row0 = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + r0;   /* rows contiguous */
            causal_from = p.causal ? mk - p.N + 1 : mk;                   /* keys >= this may be masked */
            q_base = q_lane + (uint32_t)slot * QSLOT_BYTES;
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
#pragma unroll
                for (int dt = 0; dt < DT; dt++) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.0f;
                m_run[mt][0] = m_run[mt][1] = -INFINITY;
                l_run[mt][0] = l_run[mt][1] = 0.0f;
            }
        }
        sk_issue<D, RG, STAGES>(p, plan, cur, issued, sQ, sKV, sSeg);   /* tile i + STAGES - 1 */
        const uint32_t stage_off = (uint32_t)(i % STAGES) * STAGE_BYTES;

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
                ldmatrix_x4(a, (q_base + mt * 16 * D * 2) ^ ((kk / 8) * 16));
                mma_16816(s[mt][0], a, bk[0], bk[1]);
                mma_16816(s[mt][1], a, bk[2], bk[3]);
            }
        }

        /* masks: past the segment's keys, and the causal corner (Nq > 1, last keys only) */
        const int key0 = k_lo + cj * SK_TILE + warp * 16;
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
        if (++cj < c_tiles) continue;

        /* ---- the segment's last tile is in: merge the four warps' (O, m, l) of every row ----
         * The {m, d} merge through smem, with one barrier: each warp publishes its m, l and sends
         * the fragments of O it does not write out to the warp that does (warp w writes columns
         * [w D/4, (w + 1) D/4)); then every lane forms its rows' factors exp2(m_w - m) / l itself
         * and sums the four warps' pieces in warp order (same bits every launch). Measured 2.6 us
         * per segment when the merge was one long loop per element (results/h100-trace06-before.txt).
         * The next segment's tiles are already loading into the other stages meanwhile. */
        SK_STAMP(sk_trace_split, blockIdx.x, 2);   /* the last segment's stamp stays */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                float l = l_run[mt][hi];
                l += __shfl_xor_sync(0xffffffffu, l, 1);
                l += __shfl_xor_sync(0xffffffffu, l, 2);
                if (t == 0) { sM[warp * RG + mt * 16 + g + hi * 8] = m_run[mt][hi]; sL[warp * RG + mt * 16 + g + hi * 8] = l; }
            }
#pragma unroll
        for (int v = 0; v < SK_WARPS; v++) {
            if (v == warp) continue;
            const int src = (warp - v - 1 + SK_WARPS) % SK_WARPS;            /* 0..2 */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int dl = 0; dl < DTW; dl++) {
                    const float *f = o[mt][v * DTW + dl];
                    scratch[(((v * (SK_WARPS - 1) + src) * MT + mt) * DTW + dl) * 32 + lane] = make_float4(f[0], f[1], f[2], f[3]);
                }
        }
        __syncthreads();
        const int n_rows = min(RG, p.rows - r0);  /* rows past this are padding */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                const int r = mt * 16 + g + hi * 8;
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
                if (warp == 0 && t == 0 && r < n_rows) {
                    const float lse = l > 0.0f ? (m + log2f(l)) * LN2 : -INFINITY;
                    if (part < 0) p.lse[q_row0 + r] = lse;
                    else plan.part_lse[(size_t)part * RG + r] = lse;
                }
#pragma unroll
                for (int dl = 0; dl < DTW; dl++) {
                    const int dt = warp * DTW + dl;
                    float own0 = 0.0f, own1 = 0.0f;   /* o[mt][dt]: selected with constant indices */
#pragma unroll
                    for (int v = 0; v < SK_WARPS; v++)
                        if (v == warp) { own0 = o[mt][v * DTW + dl][2 * hi]; own1 = o[mt][v * DTW + dl][2 * hi + 1]; }
                    float x0 = 0.0f, x1 = 0.0f;
#pragma unroll
                    for (int w = 0; w < SK_WARPS; w++) {
                        float y0, y1;
                        if (w == warp) { y0 = own0; y1 = own1; }
                        else {
                            const int src = (w - warp - 1 + SK_WARPS) % SK_WARPS;
                            const float4 q4 = scratch[(((warp * (SK_WARPS - 1) + src) * MT + mt) * DTW + dl) * 32 + lane];
                            y0 = hi ? q4.z : q4.x; y1 = hi ? q4.w : q4.y;
                        }
                        x0 += f[w] * y0; x1 += f[w] * y1;
                    }
                    if (r < n_rows) {
                        const int col = dt * 8 + 2 * t;
                        if (part < 0) *reinterpret_cast<__half2 *>(p.o + (q_row0 + r) * D + col) = __floats2half2_rn(x0 * inv, x1 * inv);
                        else *reinterpret_cast<float2 *>(plan.part_o + ((size_t)part * RG + r) * D + col) = make_float2(x0 * inv, x1 * inv);
                    }
                }
            }
        /* Fused merge: the CTA that writes a sequence's last partial merges them all, so no
         * second launch. Each thread's partial stores are made visible device-wide (fence) before
         * thread 0 counts this partial in; the CTA that brings the count to n then reads every
         * partial through L2. It puts the counter back to 0 for the next launch: no other CTA
         * touches it once it has reached n. */
        if (part >= 0 && plan.fused) {
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
                merge_seq_cta<D, RG>(p, plan, seq, n_rows);
            }
        }
        cj = 0;
        if (++c_ord == head.y - head.x) break;
    }
    cp_async_wait<0>();
    SK_STAMP(sk_trace_split, blockIdx.x, 3);
}

/* The separate merge, for sequences with more than SK_FUSE_MAX partials (and every split sequence
 * in variant 06s): a kernel of its own after the split kernel. One CTA of 128 threads per (split
 * sequence, row, column slice), the threads laid out as partial lanes x float4 column groups:
 * a whole row per CTA (4 lanes at d = 128) when a sequence has at most 32 partials, 32 columns per
 * CTA (16 lanes) when it has more: a row of a B = 1 decode may have 100+ partials, and this
 * kernel's time is round trips to L2, not bytes, so:
 *   - each thread issues the loads of its first 8 partials' pieces of O before anything else;
 *   - meanwhile the block reads the partials' LSEs (into smem), reduces their {m, d} (common/
 *     reduce.cuh) and turns each LSE into its weight combine_weight() (combine.h, the code the
 *     CPU test checks against the unsplit softmax);
 *   - lane l sums the partials l, l + lanes, ... in order, and the lanes' sums are added in order
 *     (same bits every launch).
 * Measured at B = 1, M = 32768 (86 partials): 7.7 us from the wait to the last CTA's exit with the
 * first layout (one CTA per row, 4 warps, a partial's weight formed next to its load), 2.4 us with
 * 32-column slices and 16 lanes (results/h100-trace06-before.txt, results/h100-trace06.txt). */
#define SK_COMB_BATCH 8
#define SK_COMB_CTA ((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x)   /* for the trace */
#define SK_COMB_SLICE 32          /* columns per CTA when a row is sliced */
template <int D, int RG>
__global__ void __launch_bounds__(128)
combine_kernel(sk_params p, sk_plan plan)
{
    extern __shared__ float s_w[];                          /* the row's n weights */
    __shared__ float4 red[128];                             /* [lane][column group] */
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 0);
    const int cols = gridDim.z == 1 ? D : SK_COMB_SLICE, cgs = cols / 4, lanes = 128 / cgs;
    const int seq = plan.split_seqs[blockIdx.x], r = blockIdx.y, c0 = blockIdx.z * cols;
    const int rg = seq % p.n_rg, bk = seq / p.n_rg, kvh = bk % p.Hkv, b = bk / p.Hkv;
    if (rg * RG + r >= p.rows) return;                     /* a padding row (uniform per block) */
    const int p0 = plan.seq_part[seq], n = plan.seq_part[seq + 1] - p0;
    const int pl = threadIdx.x / cgs, cg = threadIdx.x % cgs;
    const float *lse = plan.part_lse + (size_t)p0 * RG + r;
    const float *src = plan.part_o + ((size_t)p0 * RG + r) * D + c0 + cg * 4;
    constexpr size_t PSTRIDE = (size_t)RG * D;             /* floats from one partial to the next */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Launched as a programmatic dependent of the split kernel (sm_90): the launch and the plan
     * reads above overlap its tail; the partials may be read only after this wait. */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 1);

    float4 x[SK_COMB_BATCH];
#pragma unroll
    for (int i = 0; i < SK_COMB_BATCH; i++) {
        const int k = pl + i * lanes;
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
    for (int base = 0; base < n; base += lanes * SK_COMB_BATCH) {
        if (base > 0) {                                    /* more partials than one batch */
#pragma unroll
            for (int i = 0; i < SK_COMB_BATCH; i++) {
                const int k = base + pl + i * lanes;
                if (k < n) x[i] = __ldcg(reinterpret_cast<const float4 *>(src + k * PSTRIDE));
            }
        }
#pragma unroll
        for (int i = 0; i < SK_COMB_BATCH; i++) {
            const int k = base + pl + i * lanes;
            if (k < n) {
                const float w = s_w[k];
                acc.x += w * x[i].x; acc.y += w * x[i].y; acc.z += w * x[i].z; acc.w += w * x[i].w;
            }
        }
    }
    red[threadIdx.x] = acc;                                /* = red[pl * cgs + cg] */
    __syncthreads();
    const size_t row = ((size_t)b * p.Hq + (size_t)kvh * p.g) * p.N + rg * RG + r;
    if (threadIdx.x < cols) {
        const int c = threadIdx.x;
        float v = 0.0f;
        for (int l = 0; l < lanes; l++) v += reinterpret_cast<const float *>(&red[l * cgs + c / 4])[c % 4];
        p.o[row * D + c0 + c] = __float2half_rn(v);
    }
    if (blockIdx.z == 0 && threadIdx.x == 0) p.lse[row] = md_lse(st);
    SK_STAMP(sk_trace_comb, SK_COMB_CTA, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* Host side: the plan, its cache, the workspace, the launches.                                */

typedef void (*sk_kernel_fn)(sk_params, sk_plan);
typedef void (*sk_combine_fn)(sk_params, sk_plan);

typedef struct sk_variant {
    sk_kernel_fn kernel;
    sk_combine_fn combine;
    size_t smem;
    int rg;
    int stages;
} sk_variant;

#define SK_VARIANT(D, MT, S) (sk_variant){split_kv_kernel<D, MT, S>, combine_kernel<D, 16 * MT>, sk_smem<D, MT, S>::bytes, 16 * MT, S}
/* The kernel for a head dim and a row count: four stages where the GPU's shared memory per block
 * allows (the H100's 227 KB holds every variant), else three (the A100's 163 KB at d = 128, 16
 * rows). 0 when neither fits or d is not 64 or 128. */
static int sk_pick(int d, int rows, size_t smem_optin, sk_variant *v)
{
    const int mt = rows <= 16 ? 1 : 2;
    sk_variant four, three;
    if (d == 64 && mt == 1) { four = SK_VARIANT(64, 1, 4); three = SK_VARIANT(64, 1, 3); }
    else if (d == 64 && mt == 2) { four = SK_VARIANT(64, 2, 4); three = SK_VARIANT(64, 2, 3); }
    else if (d == 128 && mt == 1) { four = SK_VARIANT(128, 1, 4); three = SK_VARIANT(128, 1, 3); }
    else if (d == 128 && mt == 2) { four = SK_VARIANT(128, 2, 4); three = SK_VARIANT(128, 2, 3); }
    else return 0;
    *v = four.smem <= smem_optin ? four : three;
    return 1;
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
    L.seg_off = at;  at += 2 * sizeof(int4) * (size_t)pl->n_segs;
    at = (at + 15) & ~(size_t)15;
    L.cta_off = at;  at += 3 * sizeof(int4) * (size_t)pl->n_ctas;
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
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, env->smem_per_block_optin, &v)) {
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
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, env->smem_per_block_optin, &v) || sk_plan_for(s, env, &v, &pl)) return 0;
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
    int B, Hq, Hkv, N, M, d, sms, blk;
    int *seqlens;
    split_plan plan;
    int4 *segs, *cta_info;
    int *split_seqs, n_split, max_parts;
    int valid;
} sk_cache;
static sk_cache cache;

static int cache_hit(const attn_args *a, const char *planner)
{
    const attn_shape *s = &a->shape;
    if (!cache.valid || cache.workspace != a->workspace || strcmp(cache.planner, planner) ||
        cache.B != s->B || cache.Hq != s->Hq || cache.Hkv != s->Hkv || cache.N != s->N ||
        cache.M != s->M || cache.d != s->d || cache.sms != a->env.sm_count || cache.blk != sk_block_keys())
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

static const char *sk_launch(const attn_args *a, cudaStream_t st, int fused)
{
    const attn_shape *s = &a->shape;
    sk_variant v;
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, a->env.smem_per_block_optin, &v)) return "rung 06: unsupported head dim";
    const char *planner = planner_of(&a->env);
    if (!cache_hit(a, planner)) {
        if (cache.valid) { plan_free(&cache.plan); free(cache.seqlens); cache.valid = 0; }
        if (sk_plan_for(s, &a->env, &v, &cache.plan)) return "rung 06: the planner failed";
        sk_layout L = sk_layout_of(&cache.plan, v.rg, s->d);
        if (L.total > a->workspace_bytes) return "rung 06: workspace smaller than the plan";
        /* Asynchronous on the rung's stream, so the kernels below are ordered after the copies;
         * the host arrays stay alive in the cache. */
        /* segment records in keys, clipped to the request's length (the kernel reads no seqlens) */
        free(cache.segs);
        cache.segs = (int4 *)malloc(2 * sizeof(int4) * cache.plan.n_segs);
        const int blk = sk_block_keys(), n_rg = (s->Hq / s->Hkv * s->N + v.rg - 1) / v.rg;
        for (int i = 0; i < cache.plan.n_segs; i++) {
            const split_segment *g = &cache.plan.segs[i];
            const int mk = attn_kv_len(s, g->seq / n_rg / s->Hkv);
            const int hi = g->blk_end * blk < mk ? g->blk_end * blk : mk;
            cache.segs[2 * i] = make_int4(g->seq, g->blk_begin * blk, hi, g->part);
            cache.segs[2 * i + 1] = make_int4(mk, 0, 0, 0);
        }
        char *ws = (char *)a->workspace;
        RUNG_CUDA(cudaMemcpyAsync(ws + L.seg_off, cache.segs, 2 * sizeof(int4) * cache.plan.n_segs, cudaMemcpyHostToDevice, st));
        free(cache.cta_info);
        cache.cta_info = (int4 *)malloc(3 * sizeof(int4) * cache.plan.n_ctas);
        for (int c = 0; c < cache.plan.n_ctas; c++) {
            const int f = cache.plan.cta_seg[c];
            cache.cta_info[3 * c] = make_int4(f, cache.plan.cta_seg[c + 1], 0, 0);
            cache.cta_info[3 * c + 1] = f < cache.plan.n_segs ? cache.segs[2 * f] : make_int4(0, 0, 0, -1);
            cache.cta_info[3 * c + 2] = f < cache.plan.n_segs ? cache.segs[2 * f + 1] : make_int4(0, 0, 0, 0);
        }
        RUNG_CUDA(cudaMemcpyAsync(ws + L.cta_off, cache.cta_info, 3 * sizeof(int4) * cache.plan.n_ctas, cudaMemcpyHostToDevice, st));
        RUNG_CUDA(cudaMemcpyAsync(ws + L.seqp_off, cache.plan.seq_part, sizeof(int) * (cache.plan.n_seqs + 1), cudaMemcpyHostToDevice, st));
        free(cache.split_seqs);
        cache.split_seqs = (int *)malloc(sizeof(int) * cache.plan.n_seqs);
        cache.n_split = 0;
        for (int q = 0; q < cache.plan.n_seqs; q++)
            if (cache.plan.seq_part[q + 1] > cache.plan.seq_part[q]) cache.split_seqs[cache.n_split++] = q;
        cache.max_parts = plan_max_parts(&cache.plan);
        RUNG_CUDA(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
        if (cache.n_split)
            RUNG_CUDA(cudaMemcpyAsync(ws + L.split_off, cache.split_seqs, sizeof(int) * cache.n_split, cudaMemcpyHostToDevice, st));
        RUNG_CUDA(cudaMemsetAsync(ws + L.cnt_off, 0, sizeof(int) * cache.plan.n_seqs, st));   /* then self-resetting */
        cache.workspace = a->workspace;
        snprintf(cache.planner, sizeof cache.planner, "%s", planner);
        cache.B = s->B; cache.Hq = s->Hq; cache.Hkv = s->Hkv; cache.N = s->N; cache.M = s->M; cache.d = s->d;
        cache.sms = a->env.sm_count;
        cache.blk = sk_block_keys();
        cache.seqlens = (int *)malloc(sizeof(int) * s->B);
        for (int b = 0; b < s->B; b++) cache.seqlens[b] = attn_kv_len(s, b);
        cache.valid = 1;
    }
    const split_plan *pl = &cache.plan;
    sk_layout L = sk_layout_of(pl, v.rg, s->d);
    char *ws = (char *)a->workspace;

    sk_params p;
    p.q = (const __half *)a->q; p.k = (const __half *)a->k; p.v = (const __half *)a->v;
    p.o = (__half *)a->o; p.lse = a->lse;
    p.Hq = s->Hq; p.Hkv = s->Hkv; p.N = s->N; p.M = s->M; p.causal = s->causal;
    p.g = s->Hq / s->Hkv; p.rows = p.g * s->N; p.n_rg = (p.rows + v.rg - 1) / v.rg;
    p.scale_log2 = s->scale * LOG2E;
    sk_plan dp;
    dp.segs = (const int4 *)(ws + L.seg_off);
    dp.cta_info = (const int4 *)(ws + L.cta_off);
    dp.seq_part = (const int *)(ws + L.seqp_off);
    dp.split_seqs = (const int *)(ws + L.split_off);
    dp.part_lse = (float *)(ws + L.lse_off);
    dp.part_o = (float *)(ws + L.o_off);
    dp.seq_count = (int *)(ws + L.cnt_off);
    /* Fused only while every sequence has few partials: one CTA merging many would be slow. */
    fused = fused && cache.max_parts <= SK_FUSE_MAX;
    dp.fused = fused;

#ifdef SK_TRACE
    static int registered;
    if (!registered) { atexit(sk_trace_print); registered = 1; }
    trace_ctas = pl->n_ctas;
    trace_comb = 0;
#endif
    v.kernel<<<pl->n_ctas, SK_THREADS, v.smem, st>>>(p, dp);
    RUNG_LAUNCHED(split_kv_kernel);
    if (!fused && cache.n_split > 0) {
        cudaLaunchConfig_t cfg = {};
        const int slices = cache.max_parts > 4 * SK_COMB_BATCH ? s->d / SK_COMB_SLICE : 1;   /* see combine_kernel */
        cfg.gridDim = dim3(cache.n_split, min(v.rg, p.rows), slices);
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
        RUNG_CUDA(cudaLaunchKernelEx(&cfg, v.combine, p, dp));
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
    if (!sk_pick(s->d, (s->Hq / s->Hkv) * s->N, env->smem_per_block_optin, &v)) return;
    int slots = sk_slots(env, &v);
    if (sk_plan_for(s, env, &v, &pl)) return;
    long total = 0;
    int n_seqs;
    int *blocks = sk_sequences(s, v.rg, &n_seqs);
    for (int i = 0; i < n_seqs; i++) total += blocks[i];
    free(blocks);
    const int max_parts = plan_max_parts(&pl);
    const char *merge = max_parts == 0 ? "none" : fused && max_parts <= SK_FUSE_MAX ? "fused" : "kernel";
    snprintf(buf, n, "planner=%s;block=%d;stages=%d;merge=%s;slots=%d;ctas=%d;segments=%d;partials=%d;kv_blocks=%ld;makespan=%ld;ideal=%ld",
             planner_of(env), sk_block_keys(), v.stages, merge, slots, pl.n_ctas, pl.n_segs, pl.n_parts, total, pl.makespan,
             (total + slots - 1) / slots);
    plan_free(&pl);
}

static void sk_describe(const attn_shape *s, const attn_env *env, char *buf, size_t n) { sk_describe_as(s, env, buf, n, 1); }
static void sk_describe_separate(const attn_shape *s, const attn_env *env, char *buf, size_t n) { sk_describe_as(s, env, buf, n, 0); }

static const rung rung_06 = {
    "06", "split-KV (Flash-Decoding)",
    "decode: GQA rows packed per KV head; KV split across CTAs by a planner; partials merged by LSE "
    "(by the last CTA of a sequence when it has <= 4, else by a combine kernel)",
    sk_unsupported, sk_workspace, sk_run, sk_describe,
};

static const rung rung_06s = {
    "06s", "split-KV, separate combine kernel",
    "as 06, but the partials are merged by a second kernel launched after the split kernel",
    sk_unsupported, sk_workspace, sk_run_separate, sk_describe_separate,
};

extern "C" const rung *const rung_variants[] = {&rung_06, &rung_06s, NULL};
