/* Rung 05, step a: the FlashAttention-2 loop order, still on WMMA.
 *
 * Grid (ceil(N/64), Hq, B), query tiles walked in reverse (the longest causal rows first); block
 * 128 threads (4 warps). A block owns Br = 64 query rows and streams every K/V tile (Bc = 64 keys)
 * past them. Warp w owns rows [16w, 16w + 16) of S, P and O: it computes S for its rows (16 x 64,
 * four 16x16 fragments), their softmax (each lane holds 2 of a row's 64 scores) and their O
 * (16 x d), so between the two barriers around each tile's loads a warp syncs only with itself.
 * Shared memory, padded rows (+8 halves, +4 floats) so that WMMA's row accesses spread over the
 * banks:
 *   sQ [64][d+8] f16, sK [64][d+8] f16, sV [64][d+8] f16, sS [64][68] f32, sP [64][72] f16,
 *   sO [64][d+4] f32, m[64], l[64] f32.      (70.5 KB at d = 64, 110.5 KB at d = 128, 190.5 KB
 *                                             at d = 256: over an A100's 163 KB, refused there)
 *
 * Against rung 04 (04_d_tiled_wmma), every change:
 *   - The loop order: rung 04 ran one block per (batch, query head), K/V tiles outer and Q tiles
 *     inner; here a block owns one Q tile and the K/V loop is its only loop. The grid spans
 *     (N/Br, Hq, B) instead of B*Hq blocks.
 *   - O and {m, l} stay on chip (shared memory) for the whole K/V loop and are written to device
 *     memory once: no workspace (rung 04 read and wrote its float32 O and {m, l} in device memory
 *     on every K/V tile, then converted O to float16 and computed LSE in a last pass over them).
 *   - FlashAttention-2's softmax: O is kept unnormalized, rescaled by exp(m_old - m_new) when the
 *     row max grows, p = exp(scale * s - m_new) against the running max, and divided by l once at
 *     the end; LSE = m + log l is written with O. (Rung 04 kept O normalized: the tile's own max
 *     and sum, merged with {m, l} as {m, d} pairs, then O <- alpha O + beta P~V with alpha and beta
 *     each divided by the new l.) S is scaled when it is read back, not in the fragments.
 *   - The d tiling is gone: whole d-long rows of Q, K and V sit in shared memory, so shared memory
 *     grows with d and tiles are built for D = 64, 128 and 256; any other multiple of 8 from 32
 *     to 256 runs the next tile up with its columns past d zero-filled (PAD, as in fa2.cu)
 *     (rung 04: chunks of Bd = 64 columns, 78 KB at any d that is a multiple of 16). Q is loaded
 *     once per block (rung 04 reloaded its Q chunks for every K/V tile and every d chunk).
 *   - K and V have a tile each, both loaded at the start of the K/V tile (rung 04 had one buffer
 *     for a K chunk, later a V chunk).
 *   - Tiles: Br = 64, Bc = 64 (rung 04: Br = 64, Bc = 128).
 *   - 4 warps, each owning 16 whole rows of S, P and O (rung 04: 8 warps; S split 2 x 4 into
 *     32 x 32 warp tiles, the P V chunk split 4 x 2 into 16 x 32, the softmax 8 rows per warp with
 *     4 scores per lane, and a barrier between every phase). The row max and sum are warp
 *     shuffles over 32 lanes (warp_max, warp_sum).
 *   - P V accumulates into O's fragments loaded from and stored back to sO (rung 04 computed a
 *     fresh P V chunk into shared memory and updated O in device memory from there).
 *   - Every score of every loaded tile is masked by test (rung 04 also skipped whole 32 x 32 warp
 *     tiles and P V k-steps past the last visible key); causal K/V tiles wholly above the
 *     diagonal of the Q tile are not loaded (rung 04 skipped Q tiles wholly above it).
 *   - __launch_bounds__(128), no minimum of blocks per SM and no shared-memory carveout request
 *     (rung 04: __launch_bounds__(256, 2) and the largest carveout).
 *
 * What stays as in rung 04: WMMA fragments are opaque (their element-to-lane mapping is not
 * specified), so the scores go through shared memory to be read row by row, P is written back to
 * shared memory as T (float16 or bfloat16) for the second product, and O must live in shared
 * memory (float32) to be rescaled row by row. Loads are synchronous (global -> registers ->
 * shared, zero-filled tails). The storage type T is a template parameter, as in rung 04. Step b
 * (fa2.cu) moves S, P and O into registers with mma.sync, whose fragment layout is documented. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/mma.cuh"
#include "../common/reduce.cuh"
#include "fa2.h"

using namespace nvcuda;

#define WB_R 64          /* Br */
#define WB_C 64          /* Bc */
#define W_WARPS 4
#define W_THREADS (W_WARPS * 32)

template <int D>
struct wmma_smem {
    static constexpr int QLD = D + 8, SLD = WB_C + 4, PLD = WB_C + 8, OLD = D + 4;
    static constexpr size_t bytes = (size_t)(3 * 64 * QLD) * 2 + (size_t)64 * SLD * 4 + (size_t)64 * PLD * 2 +
                                    (size_t)64 * OLD * 4 + 2 * 64 * 4;
};

/* 64 rows x D elements from global (row stride D; PAD: d < D, columns d..D-1 read as 0) to
 * shared (row stride LD); rows >= valid read 0. */
template <int D, int LD, bool PAD, typename T>
static __device__ __forceinline__ void load_rows(T *dst, const T *src, int valid, int d)
{
    const int dg = PAD ? d : D;
    for (int c = threadIdx.x; c < 64 * D / 8; c += W_THREADS) {
        int r = c / (D / 8), col = (c % (D / 8)) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < valid && (!PAD || col < d)) v = *reinterpret_cast<const uint4 *>(src + (size_t)r * dg + col);
        *reinterpret_cast<uint4 *>(dst + r * LD + col) = v;
    }
}

template <int D, typename T, bool PAD>
__global__ void __launch_bounds__(W_THREADS)
fa2_wmma_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                T *__restrict__ O, float *__restrict__ LSE, const int *__restrict__ seqlens_k,
                int Hq, int Hkv, int N, int M, int causal, float scale, int d)
{
    typedef wmma_smem<D> L;
    const int dg = PAD ? d : D;        /* the rows in global memory (PAD: d < D, see fa2.cu) */
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = sQ + 64 * L::QLD;
    T *sV = sK + 64 * L::QLD;
    float *sS = reinterpret_cast<float *>(sV + 64 * L::QLD);
    T *sP = reinterpret_cast<T *>(sS + 64 * L::SLD);
    float *sO = reinterpret_cast<float *>(sP + 64 * L::PLD);
    float *sm = sO + 64 * L::OLD, *sl = sm + 64;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int b = blockIdx.z, h = blockIdx.y;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * WB_R;
    const int kvh = h / (Hq / Hkv);
    const int mk = seqlens_k ? seqlens_k[b] : M;
    const int shift = mk - N;
    const T *k_ptr = K + ((size_t)b * Hkv + kvh) * (size_t)M * dg;
    const T *v_ptr = V + ((size_t)b * Hkv + kvh) * (size_t)M * dg;
    int kv_end = causal ? min(mk, max(0, q0 + WB_R + shift)) : mk;

    load_rows<D, L::QLD, PAD>(sQ, Q + (((size_t)b * Hq + h) * N + q0) * dg, N - q0, d);
    for (int i = threadIdx.x; i < 64 * L::OLD; i += W_THREADS) sO[i] = 0.0f;
    if (threadIdx.x < 64) { sm[threadIdx.x] = -INFINITY; sl[threadIdx.x] = 0.0f; }
    __syncthreads();                   /* rows are initialized by other warps than their owners */

    const int r0 = warp * 16;          /* this warp's rows of the tile */
    for (int k0 = 0; k0 < kv_end; k0 += WB_C) {
        __syncthreads();               /* every warp is done with the previous K/V tile */
        load_rows<D, L::QLD, PAD>(sK, k_ptr + (size_t)k0 * dg, kv_end - k0, d);
        load_rows<D, L::QLD, PAD>(sV, v_ptr + (size_t)k0 * dg, kv_end - k0, d);
        __syncthreads();

        /* S (16 x 64 per warp) = Q K^T on the tensor cores; K row-major is K^T column-major */
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
        for (int n = 0; n < 4; n++) wmma::fill_fragment(acc[n], 0.0f);
        for (int kk = 0; kk < D; kk += 16) {
            if (PAD && kk >= d) break;     /* k-steps wholly past d: zeros times zeros */
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
            wmma::load_matrix_sync(fa, sQ + r0 * L::QLD + kk, L::QLD);
            for (int n = 0; n < 4; n++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
                wmma::load_matrix_sync(fb, sK + n * 16 * L::QLD + kk, L::QLD);
                wmma::mma_sync(acc[n], fa, fb, acc[n]);
            }
        }
        for (int n = 0; n < 4; n++)
            wmma::store_matrix_sync(sS + r0 * L::SLD + n * 16, acc[n], L::SLD, wmma::mem_row_major);
        __syncwarp();

        /* online softmax of the warp's 16 rows: each lane holds 2 of the 64 scores of a row */
        for (int rr = 0; rr < 16; rr++) {
            const int r = r0 + rr, row = q0 + r;
            float x[2];
            for (int e = 0; e < 2; e++) {
                int c = lane + 32 * e, key = k0 + c;
                bool visible = key < mk && (!causal || key <= row + shift);
                x[e] = visible ? sS[r * L::SLD + c] * scale : -INFINITY;
            }
            const float m_old = sm[r];
            const float m_new = fmaxf(m_old, warp_max(fmaxf(x[0], x[1])));
            const float m_use = m_new == -INFINITY ? 0.0f : m_new;   /* no key yet: no NaN */
            float p0 = expf(x[0] - m_use), p1 = expf(x[1] - m_use);
            sP[r * L::PLD + lane] = to_storage<T>(p0);
            sP[r * L::PLD + lane + 32] = to_storage<T>(p1);
            const float alpha = expf(m_old - m_use);
            const float psum = warp_sum(p0 + p1);
            for (int c = lane; c < D; c += 32) sO[r * L::OLD + c] *= alpha;
            __syncwarp();
            if (lane == 0) { sm[r] = m_new; sl[r] = sl[r] * alpha + psum; }
        }
        __syncwarp();

        /* O (16 x D per warp) += P V, the accumulator read from and written back to shared memory */
        for (int n = 0; n < D; n += 16) {
            if (PAD && n >= d) break;      /* O columns past d: never stored, not computed */
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
            wmma::load_matrix_sync(o, sO + r0 * L::OLD + n, L::OLD, wmma::mem_row_major);
            for (int kk = 0; kk < WB_C; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
                wmma::load_matrix_sync(fa, sP + r0 * L::PLD + kk, L::PLD);
                wmma::load_matrix_sync(fb, sV + kk * L::QLD + n, L::QLD);
                wmma::mma_sync(o, fa, fb, o);
            }
            wmma::store_matrix_sync(sO + r0 * L::OLD + n, o, L::OLD, wmma::mem_row_major);
        }
        __syncwarp();
    }

    /* normalize once and write O and LSE once; a row that saw no key has l = 0: O = 0, -inf */
    __syncwarp();
    for (int rr = 0; rr < 16; rr++) {
        const int r = r0 + rr, row = q0 + r;
        if (row >= N) break;
        const float l = sl[r], inv = l > 0.0f ? 1.0f / l : 0.0f;
        T *orow = O + (((size_t)b * Hq + h) * N + row) * dg;
        for (int c = 2 * lane; c < dg; c += 64)
            *reinterpret_cast<uint32_t *>(orow + c) = pack2_t<T>(sO[r * L::OLD + c] * inv, sO[r * L::OLD + c + 1] * inv);
        if (lane == 0) LSE[((size_t)b * Hq + h) * N + row] = l == 0.0f ? -INFINITY : sm[r] + logf(l);
    }
}

template <typename T>
using wmma_fn = void (*)(const T *, const T *, const T *, T *, float *, const int *, int, int, int, int, int,
                         float, int);

/* The tile for head dim d: the smallest D in {64, 128, 256} with D >= d; d < D runs the PAD
 * instantiation (as 05b and 05c do). The same head dims as fa2.cu: multiples of 8 in 32..256. */
typedef struct wmma_config {
    int D;
    size_t smem;
    wmma_fn<__half> f16[2];             /* [0]: d == D; [1]: PAD */
    wmma_fn<__nv_bfloat16> bf16[2];
} wmma_config;

#define WMMA_CFG(D)                                                                          \
    {D, wmma_smem<D>::bytes, {fa2_wmma_kernel<D, __half, false>, fa2_wmma_kernel<D, __half, true>}, \
     {fa2_wmma_kernel<D, __nv_bfloat16, false>, fa2_wmma_kernel<D, __nv_bfloat16, true>}}
static const wmma_config wmma_configs[] = {WMMA_CFG(64), WMMA_CFG(128), WMMA_CFG(256)};

static const wmma_config *wmma_pick(int d)
{
    if (d < 32 || d > 256 || d % 8 != 0) return NULL;
    for (int i = 0; i < 3; i++)
        if (wmma_configs[i].D >= d) return &wmma_configs[i];
    return NULL;
}

static int unsupported_05a(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    const wmma_config *c = wmma_pick(s->d);
    if (attn_refuse_paged(s, why, n)) return 1;
    if (!c) {
        snprintf(why, n, "rung 05 runs head dims 32 to 256 in steps of 8 (d = %d)", s->d);
        return 1;
    }
    if (c->smem > env->smem_per_block_optin) {
        snprintf(why, n, "d = %d (a tile of d = %d) needs %zu KB of shared memory per block; this GPU allows %zu KB",
                 s->d, c->D, c->smem / 1024, env->smem_per_block_optin / 1024);
        return 1;
    }
    if (s->dtype == ATTN_BF16 && env->cc_major < 8) {
        snprintf(why, n, "bfloat16 WMMA fragments need compute capability 8.0+");
        return 1;
    }
    return 0;
}

static size_t workspace_05a(const attn_shape *s, const attn_env *env)
{
    (void)s; (void)env;
    return 0;
}

template <typename T>
static const char *start_05a(wmma_fn<T> fn, size_t smem, const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    RUNG_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((s->N + WB_R - 1) / WB_R, s->Hq, s->B);
    fn<<<grid, W_THREADS, smem, st>>>((const T *)a->q, (const T *)a->k, (const T *)a->v, (T *)a->o, a->lse,
                                      a->seqlens_k, s->Hq, s->Hkv, s->N, s->M, s->causal, s->scale, s->d);
    RUNG_LAUNCHED(fa2_wmma_kernel);
    return NULL;
}

static const char *run_05a(const attn_args *a, cudaStream_t st)
{
    const wmma_config *c = wmma_pick(a->shape.d);
    if (!c) return "no 05a kernel for this head dim";
    const int pad = a->shape.d != c->D;
    if (a->shape.dtype == ATTN_BF16) return start_05a<__nv_bfloat16>(c->bf16[pad], c->smem, a, st);
    return start_05a<__half>(c->f16[pad], c->smem, a, st);
}

extern "C" const rung rung_05a = {
    "05a", "fa2 loop order, WMMA",
    "Q outer (grid N/Br x Hq x B), O and {m, l} on chip and written once; still WMMA, S/P/O via shared memory",
    unsupported_05a, workspace_05a, run_05a, NULL, NULL,
};
