/* Rung 08, step b: the backward pass, deterministic: dQ, dK and dV the same bits run to run.
 *
 * 08a adds every key block's dS K into a float32 dQ accumulator with reductions whose order
 * changes run to run, and float addition is not associative: dQ's last bits change. 08b computes
 * dQ where its rows live instead, as FlashAttention-2's paper suggests for a deterministic
 * backward: a second kernel walks, per query tile, the key tiles in a fixed order and sums
 * dQ = dS K in registers. It has no P or dS of its own, so it recomputes them: S = Q K^T and
 * dP = dO V^T again, then dS = P o (dP - D). Determinism costs those two products: 7 matrix
 * products of the forward's size where 08a has 5.
 *
 * Three kernels, launched in order on the rung's stream:
 *   1. bwd_pre     fa2_bwd.cuh: D_i = rowsum(dO_i o O_i) and LSE_i in log2 units (no dQ
 *                  accumulator to zero).
 *   2. bwd_main    fa2_bwd.cu's, with DQ = false: dK and dV only (sums in registers, a fixed
 *                  order: already deterministic in 08a); no dS^T in shared memory, no dQ product,
 *                  no additions, one barrier a query tile.
 *   3. bwd_dq      this file. Grid ceil(N/BQ) * Hq * B (causal: every head's last query tile
 *                  first, the one that sees the most keys), 8 warps. One block owns BQ = 128
 *                  queries of one query head; warp w owns queries [16w, 16w + 16). Q and dO of the
 *                  tile are loaded once; the K and V tiles (BKV = 64 keys) of the head's KV head that
 *                  the tile's last row sees are walked in order, double-buffered with cp.async.
 *                  Per key tile each warp computes, for its 16 queries:
 *                    S  = Q K^T,  dP = dO V^T          (16 x BKV accumulators; rows queries)
 *                    P  = 2^(S scale log2 e - LSE log2 e),   dS = P o (dP - D)      (in place)
 *                    dQ += dS K                        (dS re-packed from accumulators as A
 *                                                       fragments; dQ 16 x d float32 in registers)
 *                  and at the end writes dQ * scale, rounded to T, once.
 *                  Shared memory (storage type T, XOR-swizzled): Q, dO BQ x D each; K, V BKV x D
 *                  each, two stages. d = 64: 16+16+16+16 KB; d = 128: 32+32+32+32 KB.
 * Masks as in 08a: rows past N and rows that see no key get LSE = +inf (P = 0: their dQ is 0);
 * keys past M and above the causal diagonal get P = 0, tested only where a warp's rows cross them.
 * Same head dims, storage types and shapes as 08a. */
#include "../common/check_cuda.h"
#include "../common/online_softmax.cuh"
#include "fa2_bwd.cuh"

#define DQ_WARPS 8
#define DQ_THREADS (DQ_WARPS * 32)
#define DQ_BQ (16 * DQ_WARPS)          /* query rows a block: 16 a warp */
#define DQ_BKV 64                      /* keys a K/V tile */

template <int D, typename T>
__global__ void __launch_bounds__(DQ_THREADS, 1)
bwd_dq(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, const T *__restrict__ dO,
       const float *__restrict__ Lsc, const float *__restrict__ Dvec, T *__restrict__ dQ, int Hq, int Hkv, int N,
       int M, int causal, float scale, float scale_log2)
{
    constexpr int BQ = DQ_BQ, BKV = DQ_BKV;
    constexpr int NT = BKV / 8;                /* n8 tiles of S: the keys of a tile */
    constexpr int DT = D / 8;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);   /* [BQ][D] */
    T *sdO = sQ + BQ * D;                      /* [BQ][D] */
    T *sK = sdO + BQ * D;                      /* [2][BKV][D] */
    T *sV = sK + 2 * BKV * D;                  /* [2][BKV][D] */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;

    /* the block's query tile and (batch, query head) = bh. Not causal: a head's query tiles are
     * neighbours in launch order, so the blocks that run together read the same K and V tiles.
     * Causal: every head's last query tile first, then every head's second last, ...: the blocks
     * that see the most keys start first (as bwd_main orders its key tiles) */
    const int nqt = (N + BQ - 1) / BQ, heads = gridDim.x / nqt;   /* heads = B * Hq */
    const int qt = causal ? nqt - 1 - (int)blockIdx.x / heads : (int)blockIdx.x % nqt;
    const int bh = causal ? blockIdx.x % heads : blockIdx.x / nqt;
    const int b = bh / Hq, kvh = (bh % Hq) / (Hq / Hkv);
    const int q0 = qt * BQ, shift = M - N;     /* bottom-right causal alignment */
    const size_t row0 = (size_t)bh * N;        /* row of (b, h, 0) */

    /* keys [0, kv_end): those the tile's last row sees */
    const int kv_end = causal ? min(M, max(0, q0 + BQ + shift)) : M;
    const int nkt = (kv_end + BKV - 1) / BKV;
    const T *k_ptr = K + ((size_t)b * Hkv + kvh) * M * D;
    const T *v_ptr = V + ((size_t)b * Hkv + kvh) * M * D;

    /* Q, dO and the first K/V tile in one commit group (none when no row of the tile sees a key) */
    if (nkt > 0) {
        load_tile<D, BQ, DQ_THREADS, true, true>(sQ, Q + (row0 + q0) * D, N - q0);
        load_tile<D, BQ, DQ_THREADS, true, true>(sdO, dO + (row0 + q0) * D, N - q0);
        load_tile<D, BKV, DQ_THREADS, true, true>(sK, k_ptr, M);
        load_tile<D, BKV, DQ_THREADS, true, true>(sV, v_ptr, M);
        cp_async_commit();
    }

    /* this lane's two rows (g and g + 8 of the warp's 16): LSE in log2 units, +inf past N (P = 0),
     * and D */
    const int r0 = q0 + warp * 16 + g, r1 = r0 + 8;
    const float l0 = r0 < N ? Lsc[row0 + r0] : INFINITY, l1 = r1 < N ? Lsc[row0 + r1] : INFINITY;
    const float d0 = r0 < N ? Dvec[row0 + r0] : 0.0f, d1 = r1 < N ? Dvec[row0 + r1] : 0.0f;

    float dq[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; dt++) dq[dt][0] = dq[dt][1] = dq[dt][2] = dq[dt][3] = 0.0f;

    for (int j = 0; j < nkt; j++) {
        const int st = j & 1, k0 = j * BKV;
        cp_async_wait<0>();
        __syncthreads();   /* tile j visible to all; every warp done with tile j - 1's stage */
        if (j + 1 < nkt) {
            load_tile<D, BKV, DQ_THREADS, true, true>(sK + (st ^ 1) * BKV * D, k_ptr + (size_t)(k0 + BKV) * D, M - k0 - BKV);
            load_tile<D, BKV, DQ_THREADS, true, true>(sV + (st ^ 1) * BKV * D, v_ptr + (size_t)(k0 + BKV) * D, M - k0 - BKV);
            cp_async_commit();
        }
        const T *sk = sK + st * BKV * D, *sv = sV + st * BKV * D;

        /* S = Q K^T and dP = dO V^T for this warp's 16 queries and the tile's keys */
        float s[NT][4], ds[NT][4];
        mma_rows_by_rows<D, NT, T>(s, sQ, warp * 16, sk, 0, lane);
        mma_rows_by_rows<D, NT, T>(ds, sdO, warp * 16, sv, 0, lane);

        /* P from the LSE, then dS = P o (dP - D), in place */
        const bool mask = k0 + BKV > M || (causal && k0 + BKV - 1 > q0 + warp * 16 + shift);
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float x = fast_exp2(fmaf(s[nt][e], scale_log2, -(e < 2 ? l0 : l1)));   /* 2^-inf = 0 */
                if (mask) {
                    const int key = k0 + nt * 8 + 2 * t + (e & 1), row = e < 2 ? r0 : r1;
                    if (key >= M || (causal && key > row + shift)) x = 0.0f;
                }
                ds[nt][e] = x * (ds[nt][e] - (e < 2 ? d0 : d1));
            }

        /* dQ += dS K (the scale comes at the end) */
        mma_acc_by_tile<D, NT, T>(dq, ds, sk, 0, lane);
    }

    /* dQ (times the scale) of this lane's two rows: two adjacent columns a store */
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        const int r = hi ? r1 : r0;
        if (r >= N) continue;
        T *dq_row = dQ + (row0 + r) * D;
#pragma unroll
        for (int dt = 0; dt < DT; dt++)
            *reinterpret_cast<uint32_t *>(dq_row + dt * 8 + 2 * t) =
                pack2_t<T>(dq[dt][2 * hi] * scale, dq[dt][2 * hi + 1] * scale);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Host side */

static size_t dq_smem(int d)
{
    return (size_t)(2 * DQ_BQ * d + 4 * DQ_BKV * d) * 2;
}

/* workspace: D and LSE in log2 units, [B,Hq,N] each (no dQ accumulator) */
static size_t workspace_08b(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return 2 * attn_lse_elems(s) * sizeof(float);
}

static int unsupported_08b(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    const size_t kv = bwd_kv_smem(s->d, 0), q = dq_smem(s->d);
    return bwd_refuse(s, env, why, n, kv > q ? kv : q, 0);
}

template <int D, typename T>
static const char *launch_dq(const attn_args *a, cudaStream_t st, const float *Dvec, const float *Lsc)
{
    const attn_shape *s = &a->shape;
    const size_t smem = dq_smem(D);
    RUNG_CUDA(cudaFuncSetAttribute(bwd_dq<D, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const unsigned grid = (unsigned)((s->N + DQ_BQ - 1) / DQ_BQ) * s->Hq * s->B;   /* query tiles x heads */
    bwd_dq<D, T><<<grid, DQ_THREADS, smem, st>>>((const T *)a->q, (const T *)a->k, (const T *)a->v,
                                                 (const T *)a->grad->dout, Lsc, Dvec, (T *)a->grad->dq, s->Hq, s->Hkv,
                                                 s->N, s->M, s->causal, s->scale, s->scale * LOG2E);
    RUNG_LAUNCHED(bwd_dq);
    return NULL;
}

static const char *run_08b(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    if (!a->grad) return "rung 08 is a backward pass: the driver gives it no gradients (rung_grad_own missing?)";
    float *Dvec = (float *)a->workspace;
    float *Lsc = Dvec + attn_lse_elems(s);
    const char *err = bwd_pre_and_kv(a, st, NULL, Dvec, Lsc);   /* bwd_pre, then dK and dV */
    if (err) return err;
    const int bf = s->dtype == ATTN_BF16;
    if (s->d == 64) return bf ? launch_dq<64, __nv_bfloat16>(a, st, Dvec, Lsc) : launch_dq<64, __half>(a, st, Dvec, Lsc);
    if (s->d == 128) return bf ? launch_dq<128, __nv_bfloat16>(a, st, Dvec, Lsc) : launch_dq<128, __half>(a, st, Dvec, Lsc);
    return "rung 08 runs head dims 64 and 128";
}

extern "C" const rung rung_08b = {
    "08b", "fa2 backward, deterministic",
    "dQ without atomics: a second kernel walks the key tiles per query tile, S and dP recomputed",
    unsupported_08b, workspace_08b, run_08b, NULL, NULL,
};
