/* Rung 03: Br query rows per block, one warp per row, warp shuffles instead of block barriers.
 *
 * Still FlashAttention-1 loop order (Dao et al., 2022, arXiv:2205.14135, Algorithm 1): K/V tiles
 * outside, Q tiles inside, O and {m, l} of every row read and written in device memory once per
 * K/V tile. What changes against rung 02 follows the seed article's v2 ("Flash Attention 算子的
 * 简单实现"):
 *   - rung 02 split every dot product over the whole block, so each score cost a block_sum (two
 *     __syncthreads) and the tile's {m, l} a block_md (two more), while one row at a time was in
 *     flight per block;
 *   - here a block holds a Q tile of Br rows and gives each row to one warp. A score is split over
 *     the 32 lanes of that warp only and summed with warp_sum (five shuffles, no barrier); the
 *     tile's {m, l} is a warp_md. Warps never wait for each other inside the Q loop: the only
 *     block barriers left are the two around each K/V tile load, so Br rows progress at once and
 *     one slow reduction no longer stalls the whole block.
 * Loads stay coalesced (flat tile copies, a warp reads a whole q row) and shared-memory reads stay
 * conflict-free (lanes walk consecutive columns), as in rung 02.
 * Names follow the paper: Br, Bc, Tr, Tc, S, P, m, l (softmax_state.h's md_t holds {m, l} as {m, d}). */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/fa1.cuh"
#include "../common/reduce.cuh"

#define BR 8          /* rows per Q tile = warps per block */
/* Bc <= 32: a warp's reductions are latency that other warps must hide, so shared memory is worth
 * more as resident blocks than as longer K/V tiles (d = 256: 75 KB, three blocks per SM, against
 * 141 KB and one block with Bc = 64). Longer tiles would halve the O round trips. */
#define MAX_BC 32

/* grid  = B*Hq blocks, one per (batch, query head): the block owns every query row of that head.
 * block = Br warps (Br = 8, 256 threads). Warp w owns row w of every Q tile (rows i*Br + w); lane
 *         l owns columns x = l, l + 32, ... of that row's q, of every K/V row and of O, and, for
 *         the softmax, the tile's keys k = l, l + 32, ... (just k = l while Bc <= 32). All threads
 *         copy the K/V tile together.
 * shared memory (float32): Qi [Br][d] | Kj [Bc][d] | Vj [Bc][d] | S [Br][Bc]
 *         Qi row w and S row w are private to warp w (__syncwarp is enough); Kj, Vj are shared.
 * Per K/V tile j (outer): copy Kj, Vj (flat, coalesced); barrier;
 *   per Q tile i (inner), warp w on row r = i*Br + w, with no block barrier:
 *     copy q; s_k = scale * warp_sum(partial dot) for each visible key k -> S row w;
 *     {m~, l~} = warp_md over S row w; P = exp(S - m~) in place;
 *     O_r <- (l e^{m - m_new} O_r + e^{m~ - m_new} P V_j) / l_new in device memory;
 *   barrier before the next tile overwrites Kj, Vj.
 * Against rung 02: Br rows in flight per block instead of one; warp shuffles instead of block
 * reductions; 2 block barriers per K/V tile instead of 2*nv + 4 per row and tile. */
__global__ void br_rows_per_warp_fa1(fa1_params p)
{
    extern __shared__ float4 smem_f4[];          /* float4: 16-byte alignment for the vector stores */
    const int d = p.d, Bc = p.Bc, Br = BR;
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float *Qi = (float *)smem_f4;
    float *Kj = Qi + (size_t)Br * d;
    float *Vj = Kj + (size_t)Bc * d;
    float *S = Vj + (size_t)Bc * d;

    const int bh = blockIdx.x, b = bh / p.Hq, h = bh % p.Hq;
    const int hk = h / (p.Hq / p.Hkv);
    const int N = p.N;
    const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
    const int Tr = (N + Br - 1) / Br, Tc = (mk + Bc - 1) / Bc;

    const __half *Q = p.q + (size_t)bh * N * d;
    const __half *K = p.k + ((size_t)b * p.Hkv + hk) * p.M * d;   /* stride M: varlen only shortens */
    const __half *V = p.v + ((size_t)b * p.Hkv + hk) * p.M * d;
    float *O = p.o_acc + (size_t)bh * N * d;
    md_t *ml = p.ml + (size_t)bh * N;

    /* Algorithm 1, line 2: O = 0, l = 0, m = -inf (the workspace arrives uninitialized). Each row
     * is initialized by the warp that will own it; the barrier after the first tile copy orders
     * lane 0's {m, l} store before the other lanes read it. */
    for (int r = w; r < N; r += Br) {
        for (int x = lane; x < d; x += 32) O[(size_t)r * d + x] = 0.0f;
        if (lane == 0) ml[r] = md_identity();
    }

    float *q = Qi + (size_t)w * d;               /* this warp's row of the Q tile */
    float *s = S + (size_t)w * Bc;               /* this warp's row of the S / P tile */

    for (int j = 0; j < Tc; j++) {
        const int c0 = j * Bc;
        const int nkv = min(Bc, mk - c0);        /* keys in this tile; the last one may be partial */

        /* Rows c0 .. c0+nkv-1 of K (and V) are one contiguous range: copy it flat, 16 bytes per
         * thread, consecutive threads on consecutive addresses. */
        const __half *Kt = K + (size_t)c0 * d, *Vt = V + (size_t)c0 * d;
        for (int e = 8 * threadIdx.x; e < nkv * d; e += 8 * blockDim.x) {
            load8_to_float(Kt + e, Kj + e);
            load8_to_float(Vt + e, Vj + e);
        }
        __syncthreads();

        /* Causal: rows above c0 + N - mk see no key of this tile; Q tiles made only of such rows
         * are skipped. */
        const int i_first = p.causal ? max(0, c0 + N - mk) / Br : 0;
        for (int i = i_first; i < Tr; i++) {
            const int r = i * Br + w;
            if (r >= N) break;                   /* tail of the last Q tile */
            const int nv = min(nkv, visible_end(r, N, mk, p.causal) - c0);
            if (nv <= 0) continue;               /* this row sees none of the tile: state unchanged */

            const __half *qrow = Q + (size_t)r * d;
            for (int e = 8 * lane; e < d; e += 8 * 32) load8_to_float(qrow + e, q + e);
            const md_t prev = ml[r];             /* every lane reads it before lane 0 rewrites it */
            __syncwarp();

            /* S = scale * q K_j^T: lanes split the head dim, warp_sum adds the 32 partials (five
             * dependent shuffles per score: latency that only other warps can hide). */
            for (int k = 0; k < nv; k++) {
                const float *krow = Kj + (size_t)k * d;
                float part = 0.0f;
                for (int x = lane; x < d; x += 32) part += q[x] * krow[x];
                part = warp_sum(part);
                if (lane == 0) s[k] = part * p.scale;
            }
            __syncwarp();

            /* {m~, l~} of the tile: each lane merges its keys, warp_md merges the lanes. Then
             * P = exp(S - m~), each lane on the keys it read (no hazard between lanes). */
            md_t tile = md_identity();
            for (int k = lane; k < nv; k += 32) tile = md_merge(tile, md_of(s[k]));
            tile = warp_md(tile);
            for (int k = lane; k < nv; k += 32) s[k] = expf(s[k] - tile.m);
            __syncwarp();

            /* m_new, l_new (Algorithm 1, line 11); O_r <- (alpha O_r + beta P V_j) / l_new (line 12).
             * For the first visible tile prev = {-inf, 0}: alpha = 0 and the old O (zero) drops out. */
            const md_t next = md_merge(prev, tile);
            const float alpha = prev.d * expf(prev.m - next.m);
            const float beta = expf(tile.m - next.m);
            const float inv = 1.0f / next.d;
            float *orow = O + (size_t)r * d;
            for (int x = lane; x < d; x += 32) {
                float pv = 0.0f;
                for (int k = 0; k < nv; k++) pv += s[k] * Vj[(size_t)k * d + x];
                orow[x] = (alpha * orow[x] + beta * pv) * inv;
            }
            if (lane == 0) ml[r] = next;
            __syncwarp();                        /* before the next row overwrites q and s */
        }
        __syncthreads();                         /* everyone is done with Kj, Vj */
    }

    /* O (float16) and LSE = m + log(l); rows that saw no key keep O = 0 and get LSE = -inf. */
    __half *Oout = p.o + (size_t)bh * N * d;
    for (int r = w; r < N; r += Br) {
        for (int x = lane; x < d; x += 32)
            Oout[(size_t)r * d + x] = __float2half_rn(O[(size_t)r * d + x]);
        if (lane == 0) p.lse[(size_t)bh * N + r] = md_lse(ml[r]);
    }
}

/* ------------------------------------------------------------------ host side */

static size_t smem_bytes(int Bc, int d)
{
    return ((size_t)BR * d + 2 * (size_t)Bc * d + (size_t)BR * Bc) * sizeof(float);
}

/* Bc: the largest power of two <= 32 whose tiles fit next to the Q tile; 0 if none. */
static int pick_bc(int d, size_t limit)
{
    for (int bc = MAX_BC; bc >= 1; bc >>= 1)
        if (smem_bytes(bc, d) <= limit) return bc;
    return 0;
}

static int brw_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (fa1_refuse_common(s, why, n)) return 1;
    if (!pick_bc(s->d, env->smem_per_block_optin)) {
        snprintf(why, n, "d = %d needs %.1f KB of shared memory even with Bc = 1 (Br = %d); this "
                         "GPU allows %.1f KB per block", s->d, smem_bytes(1, s->d) / 1024.0, BR,
                 env->smem_per_block_optin / 1024.0);
        return 1;
    }
    return 0;
}

/* The running O in float32 (4 bytes per output element) and {m, l} per query row. */
static size_t brw_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return fa1_workspace_bytes(s);
}

static const char *brw_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const int Bc = pick_bc(s->d, a->env.smem_per_block_optin);
    if (s->dtype != ATTN_F16 || s->d % 8 != 0 || !Bc) return "br_rows_per_warp: unsupported shape";

    fa1_params p = fa1_params_of(a);
    p.Bc = Bc;

    const size_t smem = smem_bytes(Bc, s->d);
    RUNG_CUDA(cudaFuncSetAttribute(br_rows_per_warp_fa1, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem));
    br_rows_per_warp_fa1<<<s->B * s->Hq, BR * 32, smem, st>>>(p);
    RUNG_LAUNCHED(br_rows_per_warp_fa1);
    return NULL;
}

/* The tile this shape gets, for the report's extra field. */
static void brw_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    const int Bc = pick_bc(s->d, env->smem_per_block_optin);
    snprintf(buf, len, "Br=%d;Bc=%d;threads=%d;smem=%zu;", BR, Bc, BR * 32, smem_bytes(Bc, s->d));
}

static const rung br_rows_per_warp = {
    "03", "Br rows, one warp per row",
    "Br rows per block, one warp per row: warp_sum / warp_md shuffles, no block barrier per score",
    brw_unsupported, brw_workspace, brw_run, brw_describe, NULL,
};

extern "C" const rung *const rung_variants[] = {&br_rows_per_warp, NULL};
