/* Rung 05, steps b and c: FlashAttention-2 (Dao, 2023, arXiv:2307.08691) on the tensor cores with
 * mma.sync. One kernel template; per head dim, one instantiation is 05b and one is 05c. (Step a,
 * the flipped loop on WMMA, is fa2_wmma.cu.)
 *
 * Grid (ceil(N/Br), Hq, B), query tiles walked in reverse so that the longest causal rows start
 * first. Block: WARPS warps; Br = WARPS * WR rows, WR = 16 * MT. Tiles (fa2_configs_05b/05c
 * below, the same for both variants): d = 64: Br = 128, Bc = 128, 4 warps; d = 128: Br = 128,
 * Bc = 64, 4 warps; d = 256: Br = 128, Bc = 64, 8 warps. Warp w owns rows [w*WR, (w+1)*WR) of the
 * tile (32 rows, MT = 2; 16 at d = 256) and all Bc columns of their scores, so its softmax needs no other warp: a row lives in
 * the 4 lanes of an mma quad, and its max and sum are 2 shuffles. Its O rows (WR x d, float32),
 * m and l are registers for the whole K/V loop. Shared memory (the storage type T, no padding):
 *   Q tile  Br x d           loaded once; each warp reads only its own rows (and at the end
 *                            stages its output rows there)
 *   K tile  Bc x d  x STAGES (1 in 05b, 2 in 05c)
 *   V tile  Bc x d  x STAGES        48 / 64 / 128 KB (05b), 80 / 96 / 192 KB (05c) at d = 64/128/256
 * Causal: K/V tiles entirely above the diagonal are never loaded; only tiles that cross the
 * diagonal (or the end of the keys) pay for per-element masks.
 *
 * 05b against 05a (fa2_wmma.cu), every change:
 *   - mma.sync m16n8k16 fed by ldmatrix instead of WMMA 16x16x16. Its fragment layout is specified
 *     (common/mma.cuh), which is what allows the next three changes.
 *   - S stays in the accumulator registers: no float32 S tile in shared memory. The masks and the
 *     online softmax run on the accumulators in place; a row's max and sum are shuffles among the
 *     4 lanes of a quad (05a: a warp read each row back from shared memory, 2 scores per lane,
 *     and reduced over all 32 lanes).
 *   - P never leaves registers: the C layout of two adjacent n8 tiles of S is the A layout of one
 *     k16 step of P V, so P is re-packed as float16 A fragments (05a wrote P to shared memory).
 *   - O (float32), m and l are registers, not shared memory; l stays a per-lane partial sum,
 *     added across the quad once at the end (05a loaded and stored its O fragments from shared
 *     memory around every P V, and kept m and l in shared memory).
 *   - Shared memory holds only the Q, K and V tiles, unpadded and row-major (05a: padded rows,
 *     plus S, P, O, m and l). Rows 2d bytes apart start in the same bank: every ldmatrix phase is
 *     an 8-way bank conflict. 05c fixes it.
 *   - Larger tiles: Br = 128 and 32 rows per warp at d = 64 and 128, Bc = 128 at d = 64
 *     (05a: Br = Bc = 64 and 16 rows per warp at every d). Still 4 warps, one block per Q tile.
 *   - exp2 with the scale folded in: p = 2^(s * scale * log2(e) - m), one FFMA + one EX2
 *     (ex2.approx); m is kept in log2 units and LSE = (m + log2 l) * ln 2
 *     (05a: expf(scale * s - m), LSE = m + log l).
 *   - Masks only on tiles that cross the causal diagonal or the end of the keys (05a tested every
 *     score of every tile).
 *   - The first K/V tile is loaded together with Q, before the loop. Loads stay synchronous
 *     (global -> registers -> shared), two barriers per later tile, as in 05a.
 *   - The epilogue normalizes O in registers, stages it as float16 through the warp's own Q rows
 *     and writes 16-byte stores, a warp's rows at a time (05a: half2 stores straight from its
 *     float32 O in shared memory, row by row).
 *   - Needs compute capability 8.0 (mma.sync m16n8k16, ldmatrix).
 * 05c against 05b, every change (tiles, warps and registers as in 05b):
 *   - Q, K and V are copied with cp.async (global -> shared, no trip through registers; tails
 *     zero-filled) and K/V are double-buffered: the copy of tile j + 1 into the other stage
 *     starts right after the barrier that makes tile j visible, so it is in flight while j
 *     computes. One barrier per K/V tile instead of two; K/V shared memory doubles
 *     (80 / 96 / 192 KB in all at d = 64 / 128 / 256; 160 KB in the 64-row tile that d = 256
 *     keeps for GPUs that give a block less).
 *   - XOR-swizzled shared layout: 16-byte chunk c of row r is stored at c ^ (r % 8), so every
 *     8-row ldmatrix phase touches 8 different chunks, i.e. all 32 banks once, with no padding.
 *
 * Storage type and head dims (both variants, and 05a alike). T is float16 (__half) or bfloat16
 * (__nv_bfloat16): only the mma.sync type and the float -> T packing of P and O differ
 * (mma_16816_t, pack2_t of common/mma.cuh); ldmatrix, cp.async and the swizzle move 16-bit
 * elements whatever they are. The tile's head dim D is 64, 128 or 256; a head dim d < D (a
 * multiple of 8, 32 <= d <= 256) runs the PAD instantiation of the next tile up: rows in global
 * memory are d long, the tile's columns d..D-1 are zero-filled on load (one test per thread, in
 * load_tile), the k16 steps of Q K^T and the 16-column steps of P V that start at or past d are
 * skipped (warp-uniform branches), and the epilogue stores only the chunks below d. Without PAD
 * (d = D) the kernel is the one it was before T and PAD existed, instruction for instruction. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/mma.cuh"
#include "../common/tiles.cuh"
#include "../common/online_softmax.cuh"
#include "fa2.h"

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

template <int D, int BR, int BC, int WARPS, bool ASYNC, bool SWIZZLE, typename T, bool PAD>
__global__ void __launch_bounds__(WARPS * 32)
fa2_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
           T *__restrict__ O, float *__restrict__ LSE, const int *__restrict__ seqlens_k,
           int Hq, int Hkv, int N, int M, int causal, float scale_log2, int d)
{
    constexpr int THREADS = WARPS * 32;
    constexpr int WR = BR / WARPS;       /* rows per warp */
    constexpr int MT = WR / 16;          /* m16 tiles per warp */
    constexpr int NT = BC / 8;           /* n8 tiles of S per warp */
    constexpr int DT = D / 8;            /* n8 tiles of O per warp */
    constexpr int STAGES = ASYNC ? 2 : 1;
    static_assert(WR % 16 == 0 && BC % 16 == 0 && D % 16 == 0 && D >= 64, "tile shape");

    /* The rows in global memory: D long, or with PAD d < D long (the tile's columns d..D-1 are
     * zero-filled on load and never stored). */
    const int dg = PAD ? d : D;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = sQ + BR * D;                       /* STAGES tiles of BC x D */
    T *sV = sK + STAGES * BC * D;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int b = blockIdx.z, h = blockIdx.y;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;    /* longest causal rows first */
    const int kvh = h / (Hq / Hkv);
    const int mk = seqlens_k ? seqlens_k[b] : M;
    const int shift = mk - N;                            /* bottom-right causal alignment */

    const T *q_ptr = Q + (((size_t)b * Hq + h) * N + q0) * dg;
    const T *k_ptr = K + ((size_t)b * Hkv + kvh) * (size_t)M * dg;
    const T *v_ptr = V + ((size_t)b * Hkv + kvh) * (size_t)M * dg;

    /* Keys this tile needs: all mk, or under the causal mask up to its last row's diagonal. */
    int kv_end = mk;
    if (causal) kv_end = min(mk, max(0, q0 + BR + shift));
    const int n_tiles = (kv_end + BC - 1) / BC;

    load_tile<D, BR, THREADS, ASYNC, SWIZZLE, PAD>(sQ, q_ptr, N - q0, d);
    if (n_tiles > 0) {
        load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sK, k_ptr, kv_end, d);
        load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sV, v_ptr, kv_end, d);
    }
    if (ASYNC) cp_async_commit();

    float o[MT][DT][4];
    float m_run[MT][2], l_run[MT][2];    /* per row g and g + 8 of each m16 tile; m in log2 units */
    online_start(o, m_run, l_run);
    const int wrow0 = warp * WR;         /* first row of this warp inside the tile */

    /* ldmatrix addresses. Each lane's address is a fixed base (its row, its chunk) plus, per
     * unrolled step, a row offset (a multiple of 8 rows: leaves row % 8, hence the swizzle, alone)
     * and a chunk offset whose bits are disjoint from the lane's own chunk bits, so that
     * "chunk + offset" equals "chunk ^ offset" and commutes with the swizzle's XOR. With tiles
     * aligned to 1024 bytes the whole step is one XOR on the byte address: no per-step address
     * registers. (Without the swizzle the same XOR is a plain add on disjoint bits.) */
    const uint32_t q_lane = smem_addr(sQ + tile_off<D, SWIZZLE>(wrow0 + (lane % 16), (lane / 16) * 8));
    const uint32_t k_lane = smem_addr(sK + tile_off<D, SWIZZLE>((lane % 8) + (lane / 16) * 8, ((lane / 8) % 2) * 8));
    const uint32_t v_lane = smem_addr(sV + tile_off<D, SWIZZLE>((lane % 8) + ((lane / 8) % 2) * 8, (lane / 16) * 8));

    for (int j = 0; j < n_tiles; j++) {
        const int k0 = j * BC;
        const int stage = ASYNC ? (j & 1) : 0;
        if (ASYNC) {
            cp_async_wait<0>();
            __syncthreads();      /* tile j visible to all; every warp is done with tile j - 1 */
            if (j + 1 < n_tiles) {/* so its buffer can take tile j + 1 while we compute */
                int nxt = (j + 1) & 1;
                load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sK + nxt * BC * D, k_ptr + (size_t)(k0 + BC) * dg, kv_end - k0 - BC, d);
                load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sV + nxt * BC * D, v_ptr + (size_t)(k0 + BC) * dg, kv_end - k0 - BC, d);
            }
            cp_async_commit();
        } else {
            if (j > 0) {
                __syncthreads();  /* every warp is done with tile j - 1 */
                load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sK, k_ptr + (size_t)k0 * dg, kv_end - k0, d);
                load_tile<D, BC, THREADS, ASYNC, SWIZZLE, PAD>(sV, v_ptr + (size_t)k0 * dg, kv_end - k0, d);
            }
            __syncthreads();
        }

        /* ---- S = Q K^T for this warp's WR rows and the tile's BC keys ---- */
        float s[MT][NT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < D; kk += 16) {
            /* PAD: k16 steps wholly past d add zeros (both operands are zero there): skipped.
             * d is a multiple of 8, so a step that starts below d holds at least 8 real columns. */
            if (PAD && kk >= d) break;
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                ldmatrix_x4(a[mt], (q_lane + mt * 16 * D * 2) ^ ((kk / 8) * 16));
#pragma unroll
            for (int nt = 0; nt < NT; nt += 2) {
                /* lanes 0-7: keys nt*8.. at d kk; 8-15: same keys at d kk+8; 16-31: keys
                 * (nt+1)*8.. -- registers b0, b1 of n-tile nt, then b0, b1 of n-tile nt + 1 */
                uint32_t bk[4];
                ldmatrix_x4(bk, (k_lane + stage * BC * D * 2 + nt * 8 * D * 2) ^ ((kk / 8) * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816_t<T>(s[mt][nt], a[mt], bk[0], bk[1]);
                    mma_16816_t<T>(s[mt][nt + 1], a[mt], bk[2], bk[3]);
                }
            }
        }

        /* ---- masks: only on tiles that cross the end of the keys or the causal diagonal ---- */
        const bool tail = k0 + BC > mk;
        const bool diag = causal && k0 + BC - 1 > q0 + shift;
        if (tail || diag) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        int row = q0 + wrow0 + mt * 16 + g + (e >= 2 ? 8 : 0);
                        int key = k0 + nt * 8 + 2 * t + (e & 1);
                        bool visible = key < mk && (!causal || key <= row + shift);
                        if (!visible) s[mt][nt][e] = -INFINITY;
                    }
        }

        /* ---- online softmax, in log2 units, per row (g and g + 8 of each m16 tile) ---- */
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < NT; nt++) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * hi], s[mt][nt][2 * hi + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));   /* the quad holds the row */
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                /* a row with no visible key yet keeps m = -inf (common/online_softmax.cuh) */
                const float m_new = fmaxf(m_run[mt][hi], mx * scale_log2);
                const float m_use = online_offset(m_new);
                const float alpha = online_alpha(m_run[mt][hi], m_use);
                m_run[mt][hi] = m_new;
                float sum = 0.0f;
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    float p0 = online_p(s[mt][nt][2 * hi], scale_log2, m_use);
                    float p1 = online_p(s[mt][nt][2 * hi + 1], scale_log2, m_use);
                    s[mt][nt][2 * hi] = p0;
                    s[mt][nt][2 * hi + 1] = p1;
                    sum += p0 + p1;
                }
                /* l stays a per-lane partial sum; the quad adds its parts once, at the end */
                l_run[mt][hi] = l_run[mt][hi] * alpha + sum;
#pragma unroll
                for (int dt = 0; dt < DT; dt++) {
                    o[mt][dt][2 * hi] *= alpha;
                    o[mt][dt][2 * hi + 1] *= alpha;
                }
            }
        }

        /* ---- O += P V: P straight from the accumulators, re-packed as T (float16 or bfloat16)
         * A fragments ---- */
#pragma unroll
        for (int kk = 0; kk < BC; kk += 16) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                a[mt][0] = pack2_t<T>(s[mt][kk / 8][0], s[mt][kk / 8][1]);
                a[mt][1] = pack2_t<T>(s[mt][kk / 8][2], s[mt][kk / 8][3]);
                a[mt][2] = pack2_t<T>(s[mt][kk / 8 + 1][0], s[mt][kk / 8 + 1][1]);
                a[mt][3] = pack2_t<T>(s[mt][kk / 8 + 1][2], s[mt][kk / 8 + 1][3]);
            }
#pragma unroll
            for (int dt = 0; dt < DT; dt += 2) {
                /* PAD: O columns wholly past d (16 per step) are never stored: not computed */
                if (PAD && dt * 8 >= d) break;
                /* V is [key][d] in shared memory; B wants pairs of keys per register: .trans.
                 * lanes 0-7 keys kk..+7, 8-15 keys kk+8..+15 (d chunk dt), 16-31 the same at dt+1 */
                uint32_t bv[4];
                ldmatrix_x4_trans(bv, (v_lane + stage * BC * D * 2 + kk * D * 2) ^ (dt * 16));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816_t<T>(o[mt][dt], a[mt], bv[0], bv[1]);
                    mma_16816_t<T>(o[mt][dt + 1], a[mt], bv[2], bv[3]);
                }
            }
        }
    }

    /* ---- normalize once, write O once (staged through this warp's own Q rows), write LSE ----
     * The Q tile was loaded by all threads (possibly still in flight if no K/V tile ran): wait
     * and sync before a warp overwrites its rows. */
    if (ASYNC) cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            float l = l_run[mt][hi];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
            const int r = wrow0 + mt * 16 + g + hi * 8;
#pragma unroll
            for (int dt = 0; dt < DT; dt++) {
                *reinterpret_cast<uint32_t *>(sQ + tile_off<D, SWIZZLE>(r, dt * 8 + 2 * t)) =
                    pack2_t<T>(o[mt][dt][2 * hi] * inv, o[mt][dt][2 * hi + 1] * inv);
            }
            if (t == 0 && q0 + r < N)
                LSE[((size_t)b * Hq + h) * N + q0 + r] = l == 0.0f ? -INFINITY : (m_run[mt][hi] + log2f(l)) * LN2;
        }
    }
    __syncwarp();
    /* 16-byte stores, a warp's rows at a time: consecutive lanes write consecutive chunks
     * (PAD: not the chunks past d) */
#pragma unroll
    for (int c = lane; c < WR * D / 8; c += 32) {
        int r = wrow0 + c / (D / 8), col = (c % (D / 8)) * 8;
        if (q0 + r < N && (!PAD || col < d))
            *reinterpret_cast<uint4 *>(O + (((size_t)b * Hq + h) * N + q0 + r) * dg + col) =
                *reinterpret_cast<const uint4 *>(sQ + tile_off<D, SWIZZLE>(r, col));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Host side: the tile sizes each variant runs, per head dim, and the rung entries.             */

/* The kernel for storage type T (float16 or bfloat16), one pointer type per T. */
template <typename T>
using fa2_kernel_fn = void (*)(const T *, const T *, const T *, T *, float *, const int *, int, int, int, int,
                               int, float, int);

/* One tile configuration of the kernel, its four instantiations (float16 and bfloat16; d = D and
 * d < D padded) and what its launch needs. */
typedef struct fa2_config {
    int d, br, bc, warps;    /* d: the tile's head dim D */
    int async, swizzle;
    fa2_kernel_fn<__half> f16[2];            /* [0]: rows of D elements; [1]: PAD, rows of d < D */
    fa2_kernel_fn<__nv_bfloat16> bf16[2];
    size_t smem;             /* bytes: the Q tile and STAGES K and V tiles */
} fa2_config;

#define FA2_CFG(D, BR, BC, W, A, S)                                                         \
    {D, BR, BC, W, A, S,                                                                    \
     {fa2_kernel<D, BR, BC, W, A, S, __half, false>, fa2_kernel<D, BR, BC, W, A, S, __half, true>}, \
     {fa2_kernel<D, BR, BC, W, A, S, __nv_bfloat16, false>,                                 \
      fa2_kernel<D, BR, BC, W, A, S, __nv_bfloat16, true>},                                 \
     (size_t)((BR) * (D) + ((A) ? 2 : 1) * 2 * (BC) * (D)) * 2}

/* The fastest 05c tiles of tuning runs on an H100 (lab/tune05.sh, which also times the candidates
 * that lost and each of 05c's two changes alone; results/lab/h100-tune05.csv for d = 64 and 128,
 * results/lab/h100-tune05-d256.csv for d = 256). At d = 256 that is 128 rows on 8 warps of 16 rows
 * (O is 128 floats a lane): 192 KB of shared memory in 05c, more than an A100 gives a block, so 05c
 * keeps the 64 x 64 tile on 4 warps (160 KB) for GPUs that allow less. 05b runs the same tiles, so
 * that the step from 05b to 05c changes only the loads and the layout. Every other head dim (a
 * multiple of 8 from 32 to 256) runs the padded kernel of the next tile up: 32..56 in the d = 64
 * tile, 72..120 in the d = 128 tile, 136..248 in the d = 256 tile. */
static const fa2_config fa2_configs_05b[] = {
    FA2_CFG(64, 128, 128, 4, 0, 0),
    FA2_CFG(128, 128, 64, 4, 0, 0),
    FA2_CFG(256, 128, 64, 8, 0, 0),
};
static const fa2_config fa2_configs_05c[] = {
    FA2_CFG(64, 128, 128, 4, 1, 1),
    FA2_CFG(128, 128, 64, 4, 1, 1),
    FA2_CFG(256, 128, 64, 8, 1, 1),
    FA2_CFG(256, 64, 64, 4, 1, 1),       /* where a block may not have 192 KB */
};
#define FA2_COUNT(t) (int)(sizeof(t) / sizeof((t)[0]))

/* The head dims rung 05 runs: multiples of 8 (rows of whole 16-byte chunks) from 32 to 256. */
static int fa2_head_dim_ok(int d) { return d >= 32 && d <= 256 && d % 8 == 0; }

/* A variant's configuration for head dim d on this GPU: the first of the smallest tile D >= d whose
 * shared memory the GPU allows a block, else the first of that tile (which fa2_refuse then refuses,
 * saying how much it needs); or NULL. */
static const fa2_config *fa2_pick(const fa2_config *table, int n, int d, const attn_env *env)
{
    if (!fa2_head_dim_ok(d)) return NULL;
    const fa2_config *first = NULL;
    for (int i = 0; i < n; i++) {
        if (table[i].d < d || (first && table[i].d != first->d)) continue;
        if (!first) first = &table[i];
        if (table[i].smem <= env->smem_per_block_optin) return &table[i];
    }
    return first;
}

/* 0 if configuration c (NULL: none for this head dim) can run the shape, else 1 and the reason. */
static int fa2_refuse(const fa2_config *c, const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (!c || !fa2_head_dim_ok(s->d) || s->d > c->d) {
        snprintf(why, n, "rung 05 runs head dims 32 to 256 in steps of 8 (d = %d)", s->d);
        return 1;
    }
    if (c->smem > env->smem_per_block_optin) {
        snprintf(why, n, "d = %d (a tile of d = %d) needs %zu KB of shared memory per block; this GPU allows %zu KB",
                 s->d, c->d, c->smem / 1024, env->smem_per_block_optin / 1024);
        return 1;
    }
    if (env->cc_major < 8) {
        snprintf(why, n, "mma.sync m16n8k16 (float16 and bfloat16), ldmatrix and cp.async need compute capability 8.0+");
        return 1;
    }
    return 0;
}

static size_t fa2_workspace(const attn_shape *s, const attn_env *env)
{
    (void)s; (void)env;
    return 0;   /* O, m and l live in registers */
}

template <typename T>
static const char *fa2_start(const fa2_config *c, fa2_kernel_fn<T> kernel, const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    RUNG_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c->smem));
    dim3 grid((s->N + c->br - 1) / c->br, s->Hq, s->B);
    kernel<<<grid, c->warps * 32, c->smem, st>>>(
        (const T *)a->q, (const T *)a->k, (const T *)a->v, (T *)a->o, a->lse,
        a->seqlens_k, s->Hq, s->Hkv, s->N, s->M, s->causal, s->scale * LOG2E, s->d);
    RUNG_LAUNCHED(fa2_kernel);
    return NULL;
}

static const char *fa2_launch(const fa2_config *c, const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    if (!c || s->d > c->d) return "no configuration for this head dim";
    const int pad = s->d != c->d;
    if (s->dtype == ATTN_BF16) return fa2_start<__nv_bfloat16>(c, c->bf16[pad], a, st);
    return fa2_start<__half>(c, c->f16[pad], a, st);
}

#define FA2_PICK(t, d, env) fa2_pick(t, FA2_COUNT(t), d, env)
static int unsupported_05b(const attn_shape *s, const attn_env *e, char *w, size_t n) { return fa2_refuse(FA2_PICK(fa2_configs_05b, s->d, e), s, e, w, n); }
static int unsupported_05c(const attn_shape *s, const attn_env *e, char *w, size_t n) { return fa2_refuse(FA2_PICK(fa2_configs_05c, s->d, e), s, e, w, n); }
static const char *run_05b(const attn_args *a, cudaStream_t st) { return fa2_launch(FA2_PICK(fa2_configs_05b, a->shape.d, &a->env), a, st); }
static const char *run_05c(const attn_args *a, cudaStream_t st) { return fa2_launch(FA2_PICK(fa2_configs_05c, a->shape.d, &a->env), a, st); }

static const rung rung_05b = {
    "05b", "fa2 mma.sync, registers",
    "Q outer; O, m, l in registers; mma.sync + ldmatrix; P re-packed in registers; sync loads",
    unsupported_05b, fa2_workspace, run_05b, NULL, NULL,
};

static const rung rung_05c = {
    "05c", "fa2 + cp.async + swizzle",
    "05b + K/V double-buffered with cp.async + XOR-swizzled shared tiles (the final rung 05)",
    unsupported_05c, fa2_workspace, run_05c, NULL, NULL,
};

/* The steps in lesson order; the last, 05c, the final kernel, is the rung's default. The ladder
 * runs all three. */
extern "C" const rung *const rung_variants[] = {&rung_05a, &rung_05b, &rung_05c, NULL};
