/* Rung 08, step a: FlashAttention-2's backward pass (Dao, 2023, arXiv:2307.08691, Algorithm 2) on
 * the tensor cores with mma.sync.
 *
 * Three kernels, launched in order on the rung's stream:
 *   1. bwd_pre     grid (ceil(B*Hq*N / 8)), 8 warps, one warp per query row: D_i = rowsum(dO_i o O_i)
 *                  in float32, the row's LSE in log2 units (+inf for a row that sees no key, so that
 *                  its P is 0), and row i of the float32 dQ accumulator zeroed.
 *   2. bwd_main    grid ceil(M/BC) * Hkv * B, 8 warps (causal: KV heads in L2-sized sections, in a
 *                  section every head's first key tile first, the heaviest: bwd_block_tile in
 *                  fa2_bwd.cuh). One block owns BC = 128 keys of one KV head:
 *                  its K and V tiles are loaded once; it walks the query tiles (BR = 64 rows) of
 *                  every query head of the KV head's group (GQA/MQA: a loop over the group inside
 *                  the block, so dK and dV are summed in registers, in a fixed order: no atomics on
 *                  them), and of those only the ones that see a key of the tile under the causal mask.
 *                  Warp w owns keys [16w, 16w + 16) of the tile. Per query tile, BRW queries at a
 *                  time (the whole tile at d = 64, half of it at d = 128, where registers are short):
 *                    S^T  = K Q^T          (16 x BRW, accumulators; rows keys, columns queries)
 *                    P^T  = 2^(S^T scale log2 e - LSE log2 e)     (recomputed from the forward's LSE)
 *                    dV  += P^T dO         (P^T re-packed from accumulators as A fragments, as rung 05
 *                                           re-packs P for P V)
 *                    dP^T = V dO^T         dS^T = P^T o (dP^T - D)
 *                    dK  += dS^T Q         (dK, dV: 16 x d float32 in registers for the whole block)
 *                  dS^T goes to shared memory; after a barrier the 8 warps compute
 *                  dQ_tile = dS K (BR x d; warp w a 32-row by d/4-column part of it) and add it into
 *                  the float32 accumulator with reductions of two floats (red.global.add.v2.f32 on
 *                  sm_90): several KV tiles add into the same dQ rows, in an order that changes run
 *                  to run (rung_grad_own below says so: the same-bits check covers dK and dV only).
 *                  Shared memory (storage type T, XOR-swizzled as rung 05c's, common/tiles.cuh):
 *                    K, V     BC x D each (loaded once)
 *                    Q, dO    BR x D each, two stages: the next tile's copy (cp.async) runs under
 *                             this tile's products
 *                    dS^T     BC x BR (keys by queries)
 *                    LSE, D   BR floats each, two stages
 *                  d = 64: 16+16+32+32+16 KB; d = 128: 32+32+64+64+16 KB (+ 1 KB).
 *   3. bwd_convert elementwise: dQ = scale * accumulator, rounded to T.
 *
 * Against the first 08a (commit 0ea7601: 64 keys a block over 4 warps, loads through registers,
 * dQ by scalar atomicAdd), each change and what it is for:
 *   - 128 keys a block, 8 warps of 16 keys: each Q, dO, LSE and D tile copied into shared memory
 *     serves twice as many keys, and dQ's additions into the accumulator (a BR x d tile per query
 *     tile and key block) halve: (M/128) x N x d floats per head, not (M/64) x N x d.
 *   - cp.async, double-buffered: Q, dO, LSE and D of query tile i + 1 are in flight while tile i is
 *     multiplied (the first 08a waited for every tile's loads: its warps' largest stall).
 *   - Query tiles of 64 rows at both head dims (32 before at d = 128), worked BRW rows at a time:
 *     half as many barriers and copies a key, the registers of a 32-row tile.
 *   - dS stored as dS^T (keys by queries), two adjacent queries a 4-byte store, and read back for
 *     dQ = dS K with ldmatrix .trans: half the stores of the scalar [query][key] writes.
 *   - dQ: each warp a 32 x d/4 part (2 x d/32 mma tiles: A and B fragments each serve two
 *     products), added two floats a reduction: one L2 request for 8 contiguous bytes where scalar
 *     atomics sent two, and no lanes of one request half a sector apart.
 *   - The LSE is turned into log2 units, and -inf into +inf, once per row in bwd_pre, not per tile.
 *
 * Masks: a query row past N is zero-filled (Q, dO, LSE, D = 0), and its P^T column is set to 0 (an
 * infinity in K would make its score 0 * inf = NaN, and dV and dK would carry it), so it adds
 * exactly 0 to dV, dP^T, dS^T, dK and dQ; its dQ row is never stored. A row that sees no key (causal
 * with N > M) has LSE = +inf in log2 units: P = 0. Keys past M, queries past N and keys above the
 * causal diagonal get P = 0, tested only where a warp's 16 keys and BRW queries cross them.
 * Scale: dK and dQ are multiplied by it once, at the end.
 * Head dims 64 and 128 (the tile's D is d: no padded head dims), float16 and bfloat16 (T). Needs
 * compute capability 8.0 (mma.sync m16n8k16, ldmatrix, cp.async) and, at d = 128, 145 KB of shared
 * memory a block. */
#include "../common/check_cuda.h"
#include "../common/online_softmax.cuh"
#include "fa2_bwd.cuh"

#define BWD_WARPS 8
#define BWD_THREADS (BWD_WARPS * 32)
#define BWD_BC 128                /* keys per block: 16 per warp */
#define BWD_BR 64                 /* query rows per tile (the swizzle of dS^T's rows needs >= 64) */

/* Query rows a warp works at a time (BRW) and the blocks an SM should hold (MINB, for
 * __launch_bounds__): at d = 128, dK and dV alone are 128 registers a lane, so S^T and dP^T take
 * 32 queries at a time (16 registers each); at d = 64 the whole tile. */
template <int D> struct bwd_tile;
template <> struct bwd_tile<64> { static constexpr int BRW = 64, MINB = 1; };
template <> struct bwd_tile<128> { static constexpr int BRW = 32, MINB = 1; };

/* 1. bwd_pre: fa2_bwd.cuh (08b launches it too). */

/* 3. dQ = scale * accumulator, in T; the accumulator's rows dp floats apart (dp >= d: 08c pads d).
 * Eight elements a thread and a step, two 16-byte loads and one 16-byte store: d is a multiple of 8,
 * so eight never straddle two rows. One element at a time it reached half the memory's rate.
 * swz (08d): column col of query q (of n in a head) lies at col ^ 8 (q % 4) (bwd_overlap.cuh);
 * eight columns from a multiple of 8 stay eight in a row. */
template <typename T>
__global__ void bwd_convert(const float *__restrict__ dQacc, T *__restrict__ dQ, float scale, size_t chunks, int d, int dp,
                            int swz, int n)
{
    pdl_wait();   /* 08d launches this grid as a dependent of its main kernel: wait for all of dQ */
    const int d8 = d / 8;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (size_t)gridDim.x * blockDim.x) {
        const size_t row = c / d8;
        const int col = (int)(c % d8) * 8;
        int src = col;
        if (swz) {   /* the query q = row % n, in 32 bits where the row fits (a 64-bit division is long) */
            const unsigned q = row <= 0xffffffffu ? (unsigned)row % (unsigned)n : (unsigned)(row % (size_t)n);
            src ^= (int)(q % 4) * 8;
        }
        const float4 a = *reinterpret_cast<const float4 *>(dQacc + row * dp + src);
        const float4 b = *reinterpret_cast<const float4 *>(dQacc + row * dp + src + 4);
        *reinterpret_cast<uint4 *>(dQ + row * d + col) =
            make_uint4(pack2_t<T>(a.x * scale, a.y * scale), pack2_t<T>(a.z * scale, a.w * scale),
                       pack2_t<T>(b.x * scale, b.y * scale), pack2_t<T>(b.z * scale, b.w * scale));
    }
}

/* bwd_convert one element at a time, for a dQ that does not start on 16 bytes (the C API's caller's) */
template <typename T>
__global__ void bwd_convert_rows(const float *__restrict__ dQacc, T *__restrict__ dQ, float scale, size_t n, int d, int dp,
                                 int swz, int nq)
{
    pdl_wait();
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x) {
        const size_t row = e / d;
        const int col = (int)(e % d);
        dQ[e] = to_storage<T>(dQacc[row * dp + (swz ? col ^ (int)(row % nq % 4) * 8 : col)] * scale);
    }
}

/* Start copying query tile (rows row..row+BR-1 of the flattened [B,Hq,N] rows) into one stage:
 * Q and dO (16-byte cp.async, rows past `valid` zero-filled), LSE in log2 units and D (4 bytes a
 * row: a head's rows start anywhere). One commit group. */
template <int D, int BR, typename T>
static __device__ __forceinline__ void load_query_tile(T *sq, T *sdo, float *sl, float *sd, const T *Q, const T *dO,
                                                       const float *Lsc, const float *Dvec, size_t row, int valid)
{
    static_assert(2 * BR <= BWD_THREADS, "one thread a row of LSE and of D");
    load_tile<D, BR, BWD_THREADS, true, true>(sq, Q + row * D, valid);
    load_tile<D, BR, BWD_THREADS, true, true>(sdo, dO + row * D, valid);
    const int r = threadIdx.x % BR;
    if (threadIdx.x < BR) cp_async_4(smem_addr(sl + r), Lsc + row + r, r < valid);
    else if (threadIdx.x < 2 * BR) cp_async_4(smem_addr(sd + r), Dvec + row + r, r < valid);
    cp_async_commit();
}

/* 2. The main kernel. DQ = false (08b): dK and dV alone; no dS^T in shared memory, one barrier a
 * tile, no dQ product, no additions into dQ (08b's own kernel computes dQ). */
template <int D, int BRW, int MINB, bool DQ, typename T>
__global__ void __launch_bounds__(BWD_THREADS, MINB)
bwd_main(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, const T *__restrict__ dO,
         const float *__restrict__ Lsc, const float *__restrict__ Dvec, float *__restrict__ dQacc,
         T *__restrict__ dK, T *__restrict__ dV, int Hq, int Hkv, int N, int M, int causal, int sec,
         float scale, float scale_log2)
{
    constexpr int BC = BWD_BC, BR = BWD_BR;
    constexpr int NT = BRW / 8;                /* n8 tiles of S^T: the query columns a warp works at once */
    constexpr int DT = D / 8;
    constexpr int WM = 32, WN = D / 4;         /* dQ: warp w's part, rows (w % 2)*32.., columns (w / 2)*WN.. */
    static_assert(BC == 16 * BWD_WARPS && BR % BRW == 0 && BRW % 16 == 0, "16 keys a warp, 16-query k steps");
    static_assert((BR / WM) * (D / WN) == BWD_WARPS && WN % 16 == 0, "dQ split over the warps");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sK = reinterpret_cast<T *>(smem_raw);   /* [BC][D] */
    T *sV = sK + BC * D;                       /* [BC][D] */
    T *sQ = sV + BC * D;                       /* [2][BR][D] */
    T *sdO = sQ + 2 * BR * D;                  /* [2][BR][D] */
    T *sdS = sdO + 2 * BR * D;                 /* [BC][BR]: dS^T, swizzled as a tile of BR columns (DQ) */
    float *sL = reinterpret_cast<float *>(sdS + (DQ ? BC * BR : 0));   /* [2][BR] LSE * log2(e) */
    float *sD = sL + 2 * BR;                   /* [2][BR] */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    int kt, bh;                                /* the block's key tile and (batch, KV head) */
    bwd_block_tile((M + BC - 1) / BC, causal, sec, &kt, &bh);
    const int b = bh / Hkv, kvh = bh % Hkv, k0 = kt * BC;
    const int G = Hq / Hkv, shift = M - N;     /* bottom-right causal alignment */
    const int kw0 = warp * 16;                 /* this warp's keys in the tile */

    /* the query tiles: for each of the G query heads of the group, those from the first query
     * that sees a key of this tile (key k0 is seen by row i iff k0 <= i + shift) to the end */
    const int q_first = causal ? max(0, k0 - shift) : 0;
    const int q_start = q_first / BR * BR;
    const int ntiles = G * ((N - q_start + BR - 1) / BR);
    const size_t head0 = ((size_t)b * Hq + (size_t)kvh * G) * N;   /* row of (b, first head of the group, 0) */

    /* K, V and the first query tile in one commit group */
    const T *k_ptr = K + (((size_t)b * Hkv + kvh) * M + k0) * D;
    const T *v_ptr = V + (((size_t)b * Hkv + kvh) * M + k0) * D;
    load_tile<D, BC, BWD_THREADS, true, true>(sK, k_ptr, M - k0);
    load_tile<D, BC, BWD_THREADS, true, true>(sV, v_ptr, M - k0);
    load_query_tile<D, BR, T>(sQ, sdO, sL, sD, Q, dO, Lsc, Dvec, head0 + q_start, N - q_start);

    float dk[DT][4], dv[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; dt++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk[dt][e] = dv[dt][e] = 0.0f;

    size_t row0 = head0;                       /* row of (b, this tile's head, 0) */
    int q0 = q_start;                          /* this tile's first query */
    for (int i = 0; i < ntiles; i++) {
        const int st = i & 1;
        cp_async_wait<0>();
        __syncthreads();   /* tile i visible to all; every warp done with tile i - 1 (its stage, dS^T) */
        /* the next tile: the next query tile of this head, or the first one of the next head */
        int q_next = q0 + BR;
        size_t row_next = row0;
        if (q_next >= N) { q_next = q_start; row_next += N; }
        if (i + 1 < ntiles)
            load_query_tile<D, BR, T>(sQ + (st ^ 1) * BR * D, sdO + (st ^ 1) * BR * D, sL + (st ^ 1) * BR,
                                      sD + (st ^ 1) * BR, Q, dO, Lsc, Dvec, row_next + q_next, N - q_next);
        const T *sq = sQ + st * BR * D, *sdo = sdO + st * BR * D;
        const float *sl = sL + st * BR, *sd = sD + st * BR;

#pragma unroll 1   /* one sub-tile's S^T and dP^T live at a time: what keeps d = 128 in registers */
        for (int sub = 0; sub < BR; sub += BRW) {
            /* S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys and queries sub..sub+BRW-1: the
             * second product has work for the tensor cores while the first one's exponentials run */
            float p[NT][4], ds[NT][4];
            mma_rows_by_rows<D, NT, T>(p, sK, kw0, sq, sub, lane);
            mma_rows_by_rows<D, NT, T>(ds, sV, kw0, sdo, sub, lane);

            /* P^T from the LSE, then dS^T = P^T o (dP^T - D), both in place; queries past N are
             * masked too (a zero Q row times an infinity in K is a NaN score: hopper_bwd.cu's h_probs) */
            const bool mask = k0 + BC > M || q0 + sub + BRW > N || (causal && k0 + kw0 + 15 > q0 + sub + shift);
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const float2 l = *reinterpret_cast<const float2 *>(sl + sub + nt * 8 + 2 * t);
                const float2 dd = *reinterpret_cast<const float2 *>(sd + sub + nt * 8 + 2 * t);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float x = fast_exp2(fmaf(p[nt][e], scale_log2, -((e & 1) ? l.y : l.x)));   /* 2^-inf = 0 */
                    if (mask) {
                        const int key = k0 + kw0 + g + (e >= 2 ? 8 : 0), query = q0 + sub + nt * 8 + 2 * t + (e & 1);
                        if (key >= M || query >= N || (causal && key > query + shift)) x = 0.0f;
                    }
                    p[nt][e] = x;
                    ds[nt][e] = x * (ds[nt][e] - ((e & 1) ? dd.y : dd.x));
                }
            }

            /* dV += P^T dO, dK += dS^T Q (the scale comes at the end) */
            mma_acc_by_tile<D, NT, T>(dv, p, sdo, sub, lane);
            mma_acc_by_tile<D, NT, T>(dk, ds, sq, sub, lane);

            /* dS^T to shared memory, [key][query]: a lane's two adjacent queries are one 4-byte store */
            if constexpr (DQ) {
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int hi = 0; hi < 2; hi++)
                        *reinterpret_cast<uint32_t *>(sdS + tile_off<BR, true>(kw0 + g + hi * 8, sub + nt * 8 + 2 * t)) =
                            pack2_t<T>(ds[nt][2 * hi], ds[nt][2 * hi + 1]);
            }
        }
        if constexpr (DQ) {
            __syncthreads();   /* dS^T of all 128 keys written */

            /* dQ_tile += dS K over the block's 128 keys: this warp's rows qm0..qm0+31, columns c0..c0+WN-1.
             * A = dS (queries by keys) is dS^T as stored, read with .trans; B = K (keys by d), .trans. */
            const int qm0 = (warp % (BR / WM)) * WM, c0 = (warp / (BR / WM)) * WN;
            float dq[WM / 16][WN / 8][4];
#pragma unroll
            for (int mt = 0; mt < WM / 16; mt++)
#pragma unroll
                for (int nt = 0; nt < WN / 8; nt++) dq[mt][nt][0] = dq[mt][nt][1] = dq[mt][nt][2] = dq[mt][nt][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < BC; kk += 16) {
                /* A: lanes 0-7 keys kk.. (queries qm..), 8-15 the same keys at queries qm+8.., 16-31 keys kk+8.. */
                uint32_t a[WM / 16][4];
#pragma unroll
                for (int mt = 0; mt < WM / 16; mt++)
                    ldmatrix_x4_trans(a[mt], smem_addr(sdS + tile_off<BR, true>(kk + (lane / 16) * 8 + (lane % 8),
                                                                                qm0 + mt * 16 + ((lane / 8) % 2) * 8)));
#pragma unroll
                for (int nt = 0; nt < WN / 8; nt += 2) {
                    uint32_t bk[4];
                    ldmatrix_x4_trans(bk, smem_addr(sK + tile_off<D, true>(kk + (lane % 8) + ((lane / 8) % 2) * 8,
                                                                           c0 + nt * 8 + (lane / 16) * 8)));
#pragma unroll
                    for (int mt = 0; mt < WM / 16; mt++) {
                        mma_16816_t<T>(dq[mt][nt], a[mt], bk[0], bk[1]);
                        mma_16816_t<T>(dq[mt][nt + 1], a[mt], bk[2], bk[3]);
                    }
                }
            }
            /* two adjacent columns a reduction; fire and forget: the next tile's products start while
             * these travel to L2 */
#pragma unroll
            for (int mt = 0; mt < WM / 16; mt++)
#pragma unroll
                for (int hi = 0; hi < 2; hi++) {
                    const int r = q0 + qm0 + mt * 16 + g + hi * 8;
                    if (r >= N) continue;
                    float *dst = dQacc + (row0 + r) * D + c0 + 2 * t;
#pragma unroll
                    for (int nt = 0; nt < WN / 8; nt++) red_add_f32x2(dst + nt * 8, dq[mt][nt][2 * hi], dq[mt][nt][2 * hi + 1]);
                }
        }
        q0 = q_next;
        row0 = row_next;
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

size_t bwd_kv_smem(int d, int with_dq)
{
    return (size_t)(2 * BWD_BC * d + 4 * BWD_BR * d + (with_dq ? BWD_BC * BWD_BR : 0)) * 2 + 4 * BWD_BR * sizeof(float);
}

template <int D, bool DQ, typename T>
static const char *launch_pre_and_kv(const attn_args *a, cudaStream_t st, float *dq_acc, float *Dvec, float *Lsc)
{
    constexpr int BRW = bwd_tile<D>::BRW, MINB = bwd_tile<D>::MINB;
    const attn_shape *s = &a->shape;
    const attn_grads *gr = a->grad;
    const long rows = (long)s->B * s->Hq * s->N;

    bwd_pre<D, T><<<bwd_pre_blocks(rows), 256, 0, st>>>((const T *)a->o, (const T *)gr->dout, a->lse, Dvec, Lsc,
                                                              dq_acc, rows, D);
    RUNG_LAUNCHED(bwd_pre);

    const size_t smem = bwd_kv_smem(D, DQ);
    RUNG_CUDA(cudaFuncSetAttribute(bwd_main<D, BRW, MINB, DQ, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const unsigned grid = (unsigned)((s->M + BWD_BC - 1) / BWD_BC) * s->Hkv * s->B;   /* key tiles x heads */
    bwd_main<D, BRW, MINB, DQ, T><<<grid, BWD_THREADS, smem, st>>>(
        (const T *)a->q, (const T *)a->k, (const T *)a->v, (const T *)gr->dout, Lsc, Dvec, dq_acc,
        (T *)gr->dk, (T *)gr->dv, s->Hq, s->Hkv, s->N, s->M, s->causal, bwd_section(s), s->scale,
        s->scale * LOG2E);
    RUNG_LAUNCHED(bwd_main);
    return NULL;
}

template <int D, typename T>
static const char *pre_and_kv(const attn_args *a, cudaStream_t st, float *dq_acc, float *Dvec, float *Lsc)
{
    return dq_acc ? launch_pre_and_kv<D, true, T>(a, st, dq_acc, Dvec, Lsc)
                  : launch_pre_and_kv<D, false, T>(a, st, NULL, Dvec, Lsc);
}

const char *bwd_pre_and_kv(const attn_args *a, cudaStream_t st, float *dq_acc, float *Dvec, float *Lsc)
{
    const attn_shape *s = &a->shape;
    const int bf = s->dtype == ATTN_BF16;
    if (s->d == 64)
        return bf ? pre_and_kv<64, __nv_bfloat16>(a, st, dq_acc, Dvec, Lsc) : pre_and_kv<64, __half>(a, st, dq_acc, Dvec, Lsc);
    if (s->d == 128)
        return bf ? pre_and_kv<128, __nv_bfloat16>(a, st, dq_acc, Dvec, Lsc) : pre_and_kv<128, __half>(a, st, dq_acc, Dvec, Lsc);
    return "rung 08 runs head dims 64 and 128";
}

/* A grid of 256-thread blocks on st, as a programmatic dependent of the kernel before it when pdl
 * (its blocks launch once that kernel's last blocks have started, and wait in pdl_wait). */
static cudaLaunchConfig_t convert_config(unsigned blocks, cudaStream_t st, int pdl, cudaLaunchAttribute *attr)
{
    return pdl_config(dim3(blocks), dim3(256), 0, st, pdl, attr);
}

const char *bwd_dq_convert(const attn_args *a, cudaStream_t st, const float *dq_acc, int dp, int swz, int pdl)
{
    const attn_shape *s = &a->shape;
    const size_t n = attn_q_elems(s);
    const int bf = s->dtype == ATTN_BF16;
    const float scale = s->scale;
    cudaLaunchAttribute attr;
    if ((uintptr_t)a->grad->dq % 16 == 0 && (uintptr_t)dq_acc % 16 == 0) {
        const size_t chunks = n / 8;
        const cudaLaunchConfig_t cfg =
            convert_config((unsigned)((chunks + 255) / 256 < 65535 * 16 ? (chunks + 255) / 256 : 65535 * 16), st, pdl, &attr);
        if (bf) RUNG_CUDA(cudaLaunchKernelEx(&cfg, bwd_convert<__nv_bfloat16>, dq_acc, (__nv_bfloat16 *)a->grad->dq, scale, chunks, s->d, dp, swz, s->N));
        else RUNG_CUDA(cudaLaunchKernelEx(&cfg, bwd_convert<__half>, dq_acc, (__half *)a->grad->dq, scale, chunks, s->d, dp, swz, s->N));
        RUNG_LAUNCHED(bwd_convert);
    } else {
        const cudaLaunchConfig_t cfg =
            convert_config((unsigned)((n + 255) / 256 < 65535 * 16 ? (n + 255) / 256 : 65535 * 16), st, pdl, &attr);
        if (bf) RUNG_CUDA(cudaLaunchKernelEx(&cfg, bwd_convert_rows<__nv_bfloat16>, dq_acc, (__nv_bfloat16 *)a->grad->dq, scale, n, s->d, dp, swz, s->N));
        else RUNG_CUDA(cudaLaunchKernelEx(&cfg, bwd_convert_rows<__half>, dq_acc, (__half *)a->grad->dq, scale, n, s->d, dp, swz, s->N));
        RUNG_LAUNCHED(bwd_convert_rows);
    }
    return NULL;
}

/* workspace: the float32 dQ accumulator [B,Hq,N,d], then D and LSE in log2 units, [B,Hq,N] each */
static size_t workspace_08a(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return attn_q_elems(s) * sizeof(float) + 2 * attn_lse_elems(s) * sizeof(float);
}

static int unsupported_08a(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    return bwd_refuse(s, env, why, n, bwd_kv_smem(s->d, 1), 0);
}

static const char *run_08a(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    if (!a->grad) return "rung 08 is a backward pass: the driver gives it no gradients (rung_grad_own missing?)";
    float *dQacc = (float *)a->workspace;
    float *Dvec = dQacc + attn_q_elems(s);
    float *Lsc = Dvec + attn_lse_elems(s);
    const char *err = bwd_pre_and_kv(a, st, dQacc, Dvec, Lsc);
    if (err) return err;
    return bwd_dq_convert(a, st, dQacc, s->d, 0, 0);
}

static const rung rung_08a = {
    "08a", "fa2 backward, dQ atomics",
    "the backward pass: KV outer, P recomputed from the LSE, dK dV in registers, dQ by float32 atomics",
    unsupported_08a, workspace_08a, run_08a, NULL, NULL,
};

extern "C" const rung *const rung_variants[] = {&rung_08a, &rung_08b, &rung_08c, &rung_08d, NULL};

/* Every variant of this binary is a backward pass; 08a's dQ is summed with float atomics, 08c's
 * and 08d's with bulk reduce-adds, all in an order that changes run to run (08b's is not: the
 * same-bits check covers its dQ too). */
static const char *const atomic_dq_ids[] = {"08a", "08c", "08d", NULL};
extern "C" const rung_grad rung_grad_own = {atomic_dq_ids};
