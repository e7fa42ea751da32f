/* Rung 08, step a: FlashAttention-2's backward pass (Dao, 2023, arXiv:2307.08691, Algorithm 2) on
 * the tensor cores with mma.sync. NOT YET RUN ON A GPU: written and compiled without one; the GPU
 * matrix (tests/gpu_cases.txt) and 08_backward/README.md say what to run first.
 *
 * Three kernels, launched in order on the rung's stream:
 *   1. bwd_pre     grid (ceil(B*Hq*N / 8)), 8 warps, one warp per query row:
 *                  D_i = rowsum(dO_i o O_i) in float32 into the workspace, and row i of the float32
 *                  dQ accumulator zeroed (the atomics below add into it).
 *   2. bwd_main    grid (ceil(M/BC), Hkv, B), 4 warps. One block owns BC = 64 keys of one KV head:
 *                  its K and V tiles are loaded once; it walks the query tiles (BR rows) of every
 *                  query head of the KV head's group (GQA/MQA: a loop over the group inside the block,
 *                  so dK and dV are summed in registers, in a fixed order: no atomics on them), and of
 *                  those only the ones that see a key of the tile under the causal mask.
 *                  Warp w owns keys [16w, 16w + 16) of the tile: for them, per query tile,
 *                    S^T  = K Q^T          (16 x BR, accumulators; rows keys, columns queries)
 *                    P^T  = 2^(S^T scale log2 e - LSE log2 e)     (recomputed from the forward's LSE)
 *                    dV  += P^T dO         (P^T re-packed from accumulators as A fragments, as rung 05
 *                                           re-packs P for P V)
 *                    dP^T = V dO^T         dS^T = P^T o (dP^T - D)
 *                    dK  += dS^T Q         (dK, dV: 16 x d float32 in registers for the whole block)
 *                  then writes dS to shared memory as [query][key] and, after a barrier, the block
 *                  computes dQ_tile = dS K (BR x d; warp w takes BR/4 rows' share, split by rows and
 *                  columns) and adds it into the float32 accumulator with atomicAdd: several KV tiles
 *                  add into the same dQ rows, in an order that changes run to run (rung_grad_own
 *                  below says so: the same-bits check covers dK and dV only).
 *                  Shared memory (storage type T, XOR-swizzled as rung 05c's, common/tiles.cuh):
 *                    K, V   BC x D each (loaded once)      Q, dO   BR x D each (per query tile)
 *                    dS     BR x BC                        LSE*log2e, D: BR floats each
 *                  d = 64: 8+8+8+8+8 KB; d = 128: 16+16+16+16+8 KB (+ 512 bytes).
 *   3. bwd_convert elementwise: dQ = scale * accumulator, rounded to T.
 * Masks: a query row past N gets LSE = +inf in shared memory, so its P is 0 (its Q and dO rows are
 * zero-filled); a row that sees no key (LSE = -inf, causal with N > M) likewise: it adds nothing and
 * its dQ stays 0. Keys past M and keys above the causal diagonal get P = 0, tested only on the tiles
 * that cross them. Scale: dK and dQ are multiplied by it once, at the end.
 * Head dims 64 and 128 (the tile's D is d: no padded head dims), float16 and bfloat16 (T). Needs
 * compute capability 8.0 (mma.sync m16n8k16, ldmatrix). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/mma.cuh"
#include "../common/tiles.cuh"
#include "../common/online_softmax.cuh"

#define LOG2E 1.4426950408889634f
#define BWD_WARPS 4
#define BWD_THREADS (BWD_WARPS * 32)
#define BWD_BC 64                 /* keys per block: 16 per warp */

/* 16-bit storage <-> float for the elementwise kernels */
template <typename T> static __device__ __forceinline__ float to_f32(T x);
template <> __device__ __forceinline__ float to_f32<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

/* 1. D_i = dO_i . O_i, and the dQ accumulator's row zeroed. One warp per row. */
template <int D, typename T>
__global__ void __launch_bounds__(256)
bwd_pre(const T *__restrict__ O, const T *__restrict__ dO, float *__restrict__ Dvec, float *__restrict__ dQacc, long rows)
{
    const long row = (long)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float acc = 0.0f;
#pragma unroll
    for (int c = lane; c < D; c += 32) {
        acc += to_f32<T>(O[row * D + c]) * to_f32<T>(dO[row * D + c]);
        dQacc[row * D + c] = 0.0f;
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) Dvec[row] = acc;
}

/* 3. dQ = scale * accumulator, in T */
template <typename T>
__global__ void bwd_convert(const float *__restrict__ dQacc, T *__restrict__ dQ, float scale, size_t n)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x)
        dQ[e] = to_storage<T>(dQacc[e] * scale);
}

/* acc (one 16 x 8*NT product per warp) += A B, A = 16 rows of `sa` from row a_row, B = rows of `sb`
 * as n (NT n8 tiles from row 0), k = the D columns of both: the S^T = K Q^T and dP^T = V dO^T
 * products (ldmatrix addresses as rung 05's Q and K, computed with tile_off). */
template <int D, int NT, typename T>
static __device__ __forceinline__ void mma_rows_by_rows(float acc[NT][4], const T *sa, int a_row, const T *sb, int lane)
{
#pragma unroll
    for (int nt = 0; nt < NT; nt++) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D; kk += 16) {
        uint32_t a[4];
        ldmatrix_x4(a, smem_addr(sa + tile_off<D, true>(a_row + (lane % 16), kk + (lane / 16) * 8)));
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
            /* lanes 0-7: rows nt*8.. at column kk; 8-15: the same rows at kk+8; 16-31: rows (nt+1)*8.. */
            uint32_t b[4];
            ldmatrix_x4(b, smem_addr(sb + tile_off<D, true>(nt * 8 + (lane % 8) + (lane / 16) * 8,
                                                            kk + ((lane / 8) % 2) * 8)));
            mma_16816_t<T>(acc[nt], a, b[0], b[1]);
            mma_16816_t<T>(acc[nt + 1], a, b[2], b[3]);
        }
    }
}

/* acc (16 x D) += A B with A = the 16 x BR accumulators `p` re-packed as T (k = the BR query
 * columns), B = the BR x D tile `sb` read transposed (rows = k): dV += P^T dO and dK += dS^T Q. */
template <int D, int BR, typename T>
static __device__ __forceinline__ void mma_acc_by_tile(float acc[D / 8][4], const float p[BR / 8][4], const T *sb, int lane)
{
#pragma unroll
    for (int kk = 0; kk < BR; kk += 16) {
        uint32_t a[4];
        a[0] = pack2_t<T>(p[kk / 8][0], p[kk / 8][1]);
        a[1] = pack2_t<T>(p[kk / 8][2], p[kk / 8][3]);
        a[2] = pack2_t<T>(p[kk / 8 + 1][0], p[kk / 8 + 1][1]);
        a[3] = pack2_t<T>(p[kk / 8 + 1][2], p[kk / 8 + 1][3]);
#pragma unroll
        for (int dt = 0; dt < D / 8; dt += 2) {
            /* lanes 0-7 rows kk..+7, 8-15 rows kk+8..+15 (columns dt*8..), 16-31 the same at dt+1 */
            uint32_t b[4];
            ldmatrix_x4_trans(b, smem_addr(sb + tile_off<D, true>(kk + (lane % 8) + ((lane / 8) % 2) * 8,
                                                                  dt * 8 + (lane / 16) * 8)));
            mma_16816_t<T>(acc[dt], a, b[0], b[1]);
            mma_16816_t<T>(acc[dt + 1], a, b[2], b[3]);
        }
    }
}

template <int D, int BR, typename T>
__global__ void __launch_bounds__(BWD_THREADS)
bwd_main(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, const T *__restrict__ dO,
         const float *__restrict__ LSE, const float *__restrict__ Dvec, float *__restrict__ dQacc,
         T *__restrict__ dK, T *__restrict__ dV, int Hq, int Hkv, int N, int M, int causal, float scale,
         float scale_log2)
{
    constexpr int BC = BWD_BC;
    constexpr int NT = BR / 8;                 /* n8 tiles of S^T: the query columns */
    constexpr int DT = D / 8;
    constexpr int MQ = BR / 16;                /* dQ: m16 row tiles ... */
    constexpr int CG = BWD_WARPS / MQ;         /* ... times column groups = the 4 warps */
    constexpr int DC = D / CG;                 /* dQ columns per warp */
    static_assert(BR % 16 == 0 && BWD_WARPS % MQ == 0 && DC % 16 == 0, "dQ split");
    static_assert(BC == 16 * BWD_WARPS, "16 keys per warp");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sK = reinterpret_cast<T *>(smem_raw);
    T *sV = sK + BC * D;
    T *sQ = sV + BC * D;
    T *sdO = sQ + BR * D;
    T *sdS = sdO + BR * D;                     /* [BR][BC], swizzled as a tile of BC columns */
    float *sL = reinterpret_cast<float *>(sdS + BR * BC);   /* LSE * log2(e), +inf: P = 0 */
    float *sD = sL + BR;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int b = blockIdx.z, kvh = blockIdx.y, k0 = blockIdx.x * BC;
    const int G = Hq / Hkv, shift = M - N;     /* bottom-right causal alignment */
    const int kw0 = warp * 16;                 /* this warp's keys in the tile */

    const T *k_ptr = K + (((size_t)b * Hkv + kvh) * M + k0) * D;
    const T *v_ptr = V + (((size_t)b * Hkv + kvh) * M + k0) * D;
    load_tile<D, BC, BWD_THREADS, false, true>(sK, k_ptr, M - k0);
    load_tile<D, BC, BWD_THREADS, false, true>(sV, v_ptr, M - k0);

    float dk[DT][4], dv[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; dt++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk[dt][e] = dv[dt][e] = 0.0f;

    /* the first query that sees a key of this tile: key k0 is seen by row i iff k0 <= i + shift */
    const int q_first = causal ? max(0, k0 - shift) : 0;
    const int qt_first = q_first / BR, qt_end = (N + BR - 1) / BR;

    for (int hh = 0; hh < G; hh++) {
        const int h = kvh * G + hh;
        const size_t row0 = ((size_t)b * Hq + h) * N;      /* row index of (b, h, 0) */
        for (int qt = qt_first; qt < qt_end; qt++) {
            const int q0 = qt * BR;
            __syncthreads();                   /* every warp is done with the last tile's Q, dO, dS */
            load_tile<D, BR, BWD_THREADS, false, true>(sQ, Q + (row0 + q0) * D, N - q0);
            load_tile<D, BR, BWD_THREADS, false, true>(sdO, dO + (row0 + q0) * D, N - q0);
            for (int r = threadIdx.x; r < BR; r += BWD_THREADS) {
                const float l = q0 + r < N ? LSE[row0 + q0 + r] : -INFINITY;
                sL[r] = l == -INFINITY ? INFINITY : l * LOG2E;
                sD[r] = q0 + r < N ? Dvec[row0 + q0 + r] : 0.0f;
            }
            __syncthreads();

            /* S^T = K Q^T, then P^T, in place */
            float p[NT][4];
            mma_rows_by_rows<D, NT, T>(p, sK, kw0, sQ, lane);
            const bool tail = k0 + BC > M;
            const bool diag = causal && k0 + BC - 1 > q0 + shift;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int qc = nt * 8 + 2 * t + (e & 1);
                    float x = fast_exp2(fmaf(p[nt][e], scale_log2, -sL[qc]));   /* 2^-inf = 0 */
                    if (tail || diag) {
                        const int key = k0 + kw0 + g + (e >= 2 ? 8 : 0), query = q0 + qc;
                        if (key >= M || (causal && key > query + shift)) x = 0.0f;
                    }
                    p[nt][e] = x;
                }

            /* dV += P^T dO */
            mma_acc_by_tile<D, BR, T>(dv, p, sdO, lane);

            /* dP^T = V dO^T, then dS^T = P^T o (dP^T - D), in place */
            float ds[NT][4];
            mma_rows_by_rows<D, NT, T>(ds, sV, kw0, sdO, lane);
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) ds[nt][e] = p[nt][e] * (ds[nt][e] - sD[nt * 8 + 2 * t + (e & 1)]);

            /* dK += dS^T Q (the scale comes at the end) */
            mma_acc_by_tile<D, BR, T>(dk, ds, sQ, lane);

            /* dS to shared memory as [query][key], for dQ = dS K */
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    sdS[tile_off<BC, true>(nt * 8 + 2 * t + (e & 1), kw0 + g + (e >= 2 ? 8 : 0))] = to_storage<T>(ds[nt][e]);
            __syncthreads();

            /* dQ_tile += dS K: this warp's 16 rows (m tile warp % MQ) and DC columns (group warp / MQ) */
            const int qm0 = (warp % MQ) * 16, c0 = (warp / MQ) * DC;
            float dq[DC / 8][4];
#pragma unroll
            for (int dt = 0; dt < DC / 8; dt++) dq[dt][0] = dq[dt][1] = dq[dt][2] = dq[dt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < BC; kk += 16) {
                uint32_t a[4];
                ldmatrix_x4(a, smem_addr(sdS + tile_off<BC, true>(qm0 + (lane % 16), kk + (lane / 16) * 8)));
#pragma unroll
                for (int dt = 0; dt < DC / 8; dt += 2) {
                    uint32_t bk[4];
                    ldmatrix_x4_trans(bk, smem_addr(sK + tile_off<D, true>(kk + (lane % 8) + ((lane / 8) % 2) * 8,
                                                                           c0 + dt * 8 + (lane / 16) * 8)));
                    mma_16816_t<T>(dq[dt], a, bk[0], bk[1]);
                    mma_16816_t<T>(dq[dt + 1], a, bk[2], bk[3]);
                }
            }
#pragma unroll
            for (int dt = 0; dt < DC / 8; dt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int r = q0 + qm0 + g + (e >= 2 ? 8 : 0), c = c0 + dt * 8 + 2 * t + (e & 1);
                    if (r < N) atomicAdd(dQacc + (row0 + r) * D + c, dq[dt][e]);
                }
        }
    }

    /* dK (times the scale) and dV of this warp's 16 keys: two adjacent columns per store */
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        const int key = k0 + kw0 + g + hi * 8;
        if (key >= M) continue;
        T *dk_row = dK + (((size_t)b * Hkv + kvh) * M + key) * D;
        T *dv_row = dV + (((size_t)b * Hkv + kvh) * M + key) * D;
#pragma unroll
        for (int dt = 0; dt < DT; dt++) {
            const int c = dt * 8 + 2 * t;
            *reinterpret_cast<uint32_t *>(dk_row + c) = pack2_t<T>(dk[dt][2 * hi] * scale, dk[dt][2 * hi + 1] * scale);
            *reinterpret_cast<uint32_t *>(dv_row + c) = pack2_t<T>(dv[dt][2 * hi], dv[dt][2 * hi + 1]);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Host side */

/* Query rows per tile: 64 at d = 64; 32 at d = 128, where S^T, dP^T, dK and dV (2 x 16 + 2 x 64
 * floats a lane) leave no registers for 64. */
template <int D> struct bwd_tile { static constexpr int BR = D == 64 ? 64 : 32; };

static size_t bwd_smem(int d)
{
    const int br = d == 64 ? bwd_tile<64>::BR : bwd_tile<128>::BR;
    return (size_t)(2 * BWD_BC * d + 2 * br * d + br * BWD_BC) * 2 + 2 * br * sizeof(float);
}

/* workspace: the float32 dQ accumulator [B,Hq,N,d], then D [B,Hq,N] */
static size_t bwd_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return attn_q_elems(s) * sizeof(float) + attn_lse_elems(s) * sizeof(float);
}

static int bwd_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (s->seqlens_k) {
        snprintf(why, n, "rung 08 takes every request with M keys; per-request KV lengths are a decode's, not a training step's");
        return 1;
    }
    if (s->d != 64 && s->d != 128) {
        snprintf(why, n, "rung 08a runs head dims 64 and 128 (d = %d)", s->d);
        return 1;
    }
    if (env->cc_major < 8) {
        snprintf(why, n, "mma.sync m16n8k16 (float16 and bfloat16) and ldmatrix need compute capability 8.0+");
        return 1;
    }
    if (bwd_smem(s->d) > env->smem_per_block_optin) {
        snprintf(why, n, "d = %d needs %zu KB of shared memory per block; this GPU allows %zu KB", s->d,
                 bwd_smem(s->d) / 1024, env->smem_per_block_optin / 1024);
        return 1;
    }
    return 0;
}

template <int D, typename T>
static const char *bwd_launch(const attn_args *a, cudaStream_t st)
{
    constexpr int BR = bwd_tile<D>::BR;
    const attn_shape *s = &a->shape;
    const attn_grads *gr = a->grad;
    if (!gr) return "rung 08 is a backward pass: the driver gives it no gradients (rung_grad_own missing?)";
    float *dQacc = (float *)a->workspace;
    float *Dvec = dQacc + attn_q_elems(s);
    const long rows = (long)s->B * s->Hq * s->N;

    bwd_pre<D, T><<<(unsigned)((rows + 7) / 8), 256, 0, st>>>((const T *)a->o, (const T *)gr->dout, Dvec, dQacc, rows);
    RUNG_LAUNCHED(bwd_pre);

    const size_t smem = bwd_smem(D);
    RUNG_CUDA(cudaFuncSetAttribute(bwd_main<D, BR, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((s->M + BWD_BC - 1) / BWD_BC, s->Hkv, s->B);
    bwd_main<D, BR, T><<<grid, BWD_THREADS, smem, st>>>(
        (const T *)a->q, (const T *)a->k, (const T *)a->v, (const T *)gr->dout, a->lse, Dvec, dQacc,
        (T *)gr->dk, (T *)gr->dv, s->Hq, s->Hkv, s->N, s->M, s->causal, s->scale, s->scale * LOG2E);
    RUNG_LAUNCHED(bwd_main);

    const size_t n = attn_q_elems(s);
    const unsigned blocks = (unsigned)((n + 255) / 256 < 65535 * 16 ? (n + 255) / 256 : 65535 * 16);
    bwd_convert<T><<<blocks, 256, 0, st>>>(dQacc, (T *)gr->dq, s->scale, n);
    RUNG_LAUNCHED(bwd_convert);
    return NULL;
}

static const char *run_08a(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const int bf = s->dtype == ATTN_BF16;
    if (s->d == 64) return bf ? bwd_launch<64, __nv_bfloat16>(a, st) : bwd_launch<64, __half>(a, st);
    if (s->d == 128) return bf ? bwd_launch<128, __nv_bfloat16>(a, st) : bwd_launch<128, __half>(a, st);
    return "rung 08a runs head dims 64 and 128";
}

static const rung rung_08a = {
    "08a", "fa2 backward, dQ atomics",
    "the backward pass: KV outer, P recomputed from the LSE, dK dV in registers, dQ by float32 atomics",
    bwd_unsupported, bwd_workspace, run_08a, NULL,
};

extern "C" const rung *const rung_variants[] = {&rung_08a, NULL};

/* Every variant of this binary is a backward pass; 08a's dQ is summed with float atomics. */
static const char *const atomic_dq_ids[] = {"08a", NULL};
extern "C" const rung_grad rung_grad_own = {atomic_dq_ids};
