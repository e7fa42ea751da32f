/* Rung 02: one query row at a time per block; the whole block shares each dot product.
 *
 * Still FlashAttention-1 loop order (Dao et al., 2022, arXiv:2205.14135, Algorithm 1): K/V tiles
 * outside, query rows inside, O and {m, l} of every row read and written in device memory once per
 * K/V tile. What changes against rung 01 is who does the work inside a block, following the seed
 * article's v1 ("Flash Attention 算子的简单实现"):
 *   - rung 01 gave each thread a whole query row, so a warp read 32 rows of K, V, Q and O at once,
 *     d elements apart (uncoalesced), and its shared-memory reads of Q and S all fell in one bank;
 *   - here all NT threads of the block work on ONE query row: thread t owns the columns
 *     x = t, t + NT, ... of the head dim. Tiles are copied to shared memory as one flat, contiguous
 *     range (coalesced 16-byte loads), every shared-memory read walks consecutive words (no bank
 *     conflicts), and O is read and written a whole row at a time (coalesced);
 *   - the price: each score q.k is split over the block, so it needs a block-wide sum (block_sum,
 *     two __syncthreads), and the row's {m, l} over a tile is a block-wide merge (block_md) -- the
 *     first time the online-softmax merge of softmax_state.h is used as a reduction operator.
 * Names follow the paper: Bc, Tc, S, P, m, l (softmax_state.h's md_t holds {m, l} as {m, d}). */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/fa1.cuh"
#include "../common/reduce.cuh"

#define MAX_THREADS 256
/* Bc <= 32: this kernel waits on two barriers per score, so it lives on latency, which only more
 * resident blocks hide; larger K/V tiles would cut the O round trips but cost those blocks. */
#define MAX_BC 32
/* block_sum and block_md keep their per-warp scratch in static shared memory (32 floats and 32
 * md_t = 384 bytes); leave room for it when sizing the dynamic part. */
#define STATIC_SMEM_RESERVE 1024

/* grid  = B*Hq blocks, one per (batch, query head): the block owns every query row of that head
 *         and visits them one at a time.
 * block = NT = min(256, d rounded up to 32) threads. For the current row, thread t owns columns
 *         x = t, t + NT, ... of q, of every K/V row and of O; thread k (< Bc) also holds score k.
 *         A warp owns nothing by itself: every reduction spans the block.
 * shared memory (float32): q [d] | Kj [Bc][d] | Vj [Bc][d] | P [Bc]  (+ the reductions' scratch)
 * Per K/V tile j (outer): copy Kj, Vj (flat, coalesced); barrier;
 *   per query row r (inner, one at a time): copy q; barrier;
 *     for each visible key k: s_k = scale * block_sum(partial dot)          2 barriers per key
 *     {m~, l~} = block_md over the tile's scores                            2 barriers
 *     P_k = exp(s_k - m~); barrier; O_r <- (l e^{m - m_new} O_r + e^{m~ - m_new} P V_j) / l_new
 *   barrier before the next tile overwrites Kj, Vj.
 * Against rung 01: one row per block instead of one row per thread; coalesced loads of Q, K, V
 * and O, conflict-free shared memory; block reductions (block_sum, block_md) where rung 01 had a
 * thread's private loop. */
__global__ void row_per_block_fa1(fa1_params p)
{
    extern __shared__ float4 smem_f4[];          /* float4: 16-byte alignment for the vector stores */
    const int d = p.d, Bc = p.Bc, NT = blockDim.x, t = threadIdx.x;
    float *q = (float *)smem_f4;
    float *Kj = q + d;
    float *Vj = Kj + (size_t)Bc * d;
    float *P = Vj + (size_t)Bc * d;

    const int bh = blockIdx.x, b = bh / p.Hq, h = bh % p.Hq;
    const int hk = h / (p.Hq / p.Hkv);
    const int N = p.N;
    const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
    const int Tc = (mk + Bc - 1) / Bc;

    const __half *Q = p.q + (size_t)bh * N * d;
    const __half *K = p.k + ((size_t)b * p.Hkv + hk) * p.M * d;   /* stride M: varlen only shortens */
    const __half *V = p.v + ((size_t)b * p.Hkv + hk) * p.M * d;
    float *O = p.o_acc + (size_t)bh * N * d;
    md_t *ml = p.ml + (size_t)bh * N;

    /* Algorithm 1, line 2: O = 0, l = 0, m = -inf (the workspace arrives uninitialized). */
    for (size_t e = t; e < (size_t)N * d; e += NT) O[e] = 0.0f;
    for (int r = t; r < N; r += NT) ml[r] = md_identity();
    __syncthreads();                             /* rows are later read by other threads */

    for (int j = 0; j < Tc; j++) {
        const int c0 = j * Bc;
        const int nkv = min(Bc, mk - c0);        /* keys in this tile; the last one may be partial */

        /* Rows c0 .. c0+nkv-1 of K (and V) are one contiguous range of nkv*d halves: copy it flat,
         * 16 bytes per thread, consecutive threads on consecutive addresses. */
        const __half *Kt = K + (size_t)c0 * d, *Vt = V + (size_t)c0 * d;
        for (int e = 8 * t; e < nkv * d; e += 8 * NT) {
            load8_to_float(Kt + e, Kj + e);
            load8_to_float(Vt + e, Vj + e);
        }
        __syncthreads();

        /* Causal: rows above c0 + N - mk see no key of this tile. */
        const int r_first = p.causal ? max(0, c0 + N - mk) : 0;
        for (int r = r_first; r < N; r++) {
            const int nv = min(nkv, visible_end(r, N, mk, p.causal) - c0);
            if (nv <= 0) continue;               /* same for every thread: no barrier is skipped unevenly */

            const __half *qrow = Q + (size_t)r * d;
            for (int e = 8 * t; e < d; e += 8 * NT) load8_to_float(qrow + e, q + e);
            const md_t prev = ml[r];             /* read before the barriers that precede its update */
            __syncthreads();

            /* S = scale * q K_j^T: each thread sums its columns, block_sum adds the NT partials.
             * Every thread gets every score; thread k keeps score k. */
            float s_mine = -INFINITY;
            for (int k = 0; k < nv; k++) {
                const float *krow = Kj + (size_t)k * d;
                float part = 0.0f;
                for (int x = t; x < d; x += NT) part += q[x] * krow[x];
                const float s = block_sum(part) * p.scale;
                if (t == k) s_mine = s;
            }
            /* {m~, l~} of this tile's scores: merge the states of the nv threads that hold one. */
            const md_t tile = block_md(t < nv ? md_of(s_mine) : md_identity());
            if (t < nv) P[t] = expf(s_mine - tile.m);
            __syncthreads();

            /* m_new, l_new (Algorithm 1, line 11); O_r <- (alpha O_r + beta P V_j) / l_new (line 12).
             * For the first visible tile prev = {-inf, 0}: alpha = 0 and the old O (zero) drops out. */
            const md_t next = md_merge(prev, tile);
            const float alpha = prev.d * expf(prev.m - next.m);
            const float beta = expf(tile.m - next.m);
            const float inv = 1.0f / next.d;
            float *orow = O + (size_t)r * d;
            for (int x = t; x < d; x += NT) {
                float pv = 0.0f;
                for (int k = 0; k < nv; k++) pv += P[k] * Vj[(size_t)k * d + x];
                orow[x] = (alpha * orow[x] + beta * pv) * inv;
            }
            if (t == 0) ml[r] = next;
            /* No barrier here: the next row writes q only after every thread has passed this row's
             * block_md, and P only after the next row's block_sums. */
        }
        __syncthreads();                         /* everyone is done with Kj, Vj */
    }

    /* O (float16) and LSE = m + log(l); rows that saw no key keep O = 0 and get LSE = -inf. */
    __half *Oout = p.o + (size_t)bh * N * d;
    for (size_t e = t; e < (size_t)N * d; e += NT) Oout[e] = __float2half_rn(O[e]);
    for (int r = t; r < N; r += NT) p.lse[(size_t)bh * N + r] = md_lse(ml[r]);
}

/* ------------------------------------------------------------------ host side */

typedef struct tiles {
    int threads, Bc;
    size_t smem;             /* dynamic shared memory, bytes */
} tiles;

static size_t smem_bytes(int Bc, int d)
{
    return ((size_t)d + 2 * (size_t)Bc * d + Bc) * sizeof(float);
}

/* NT: one thread per column up to 256 (a multiple of 32 for the block reductions).
 * Bc: the largest power of two <= 32 (and <= NT, since thread k holds score k) whose tiles let three
 * blocks share an SM -- the barrier latency of one block is hidden only by the others; if even
 * Bc = 1 does not allow that (large d), the largest Bc that fits one block. 0 if none fits. */
static int pick_tiles(int d, const attn_env *env, tiles *tl)
{
    int nt = (d + 31) / 32 * 32;
    if (nt > MAX_THREADS) nt = MAX_THREADS;
    tl->threads = nt;
    tl->Bc = 0;
    tl->smem = smem_bytes(1, d);
    const size_t limit = env->smem_per_block_optin;
    if (limit <= STATIC_SMEM_RESERVE) return 0;
    size_t three = env->smem_per_sm / 3;       /* the SM also keeps 1 KB per resident block */
    three = three > 2 * STATIC_SMEM_RESERVE ? three - 2 * STATIC_SMEM_RESERVE : 0;
    for (int pass = 0; pass < 2; pass++) {
        const size_t budget = pass == 0 && three < limit - STATIC_SMEM_RESERVE
                                  ? three : limit - STATIC_SMEM_RESERVE;
        for (int bc = MAX_BC; bc >= 1; bc >>= 1) {
            if (bc > nt || smem_bytes(bc, d) > budget) continue;
            tl->Bc = bc;
            tl->smem = smem_bytes(bc, d);
            return bc;
        }
    }
    return 0;
}

static int rpb_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    tiles tl;
    if (fa1_refuse_common(s, why, n)) return 1;
    if (!pick_tiles(s->d, env, &tl)) {
        snprintf(why, n, "d = %d needs %.1f KB of shared memory even with Bc = 1; this GPU allows "
                         "%.1f KB per block", s->d, (tl.smem + STATIC_SMEM_RESERVE) / 1024.0,
                 env->smem_per_block_optin / 1024.0);
        return 1;
    }
    return 0;
}

/* The running O in float32 (4 bytes per output element) and {m, l} per query row. */
static size_t rpb_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return fa1_workspace_bytes(s);
}

static const char *rpb_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    tiles tl;
    if (s->dtype != ATTN_F16 || s->d % 8 != 0 || !pick_tiles(s->d, &a->env, &tl))
        return "row_per_block: unsupported shape";

    fa1_params p = fa1_params_of(a);
    p.Bc = tl.Bc;

    RUNG_CUDA(cudaFuncSetAttribute(row_per_block_fa1, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)tl.smem));
    row_per_block_fa1<<<s->B * s->Hq, tl.threads, tl.smem, st>>>(p);
    RUNG_LAUNCHED(row_per_block_fa1);
    return NULL;
}

/* The tile this shape gets, for the report's extra field. */
static void rpb_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    tiles tl;
    pick_tiles(s->d, env, &tl);
    snprintf(buf, len, "Br=1;Bc=%d;threads=%d;smem=%zu;", tl.Bc, tl.threads, tl.smem);
}

static const rung row_per_block = {
    "02", "row per block",
    "one Q row per block: coalesced tiles, block_sum per score, block_md merges {m, l}",
    rpb_unsupported, rpb_workspace, rpb_run, rpb_describe, NULL,
};

extern "C" const rung *const rung_variants[] = {&row_per_block, NULL};
