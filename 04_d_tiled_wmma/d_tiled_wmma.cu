/* Rung 04: the head dimension tiled by Bd, both matrix products on the tensor cores through WMMA.
 *
 * Still FlashAttention-1 (Dao et al., 2022, arXiv:2205.14135, Algorithm 1): one block per
 * (batch, query head), K/V tiles in the OUTER loop, Q tiles in the INNER loop, so the running
 * state of every query row -- O in float32, {m, l} -- is read from and written back to device
 * memory once per K/V tile, exactly as in rungs 01-03. Two things change, following the seed
 * article's v3 ("Flash Attention 算子的简单实现"):
 *
 *   1. d is cut into chunks of Bd columns. Shared memory holds a Br x Bd slice of Q and a Bc x Bd
 *      slice of K (later of V) instead of whole rows, so its size -- and therefore Br and Bc --
 *      no longer depends on d: the same Br = 64, Bc = 128 run d = 16 and d = 2048.
 *         S  = sum over chunks c of  Q[:, c] K[:, c]^T        (accumulated in the fragments)
 *         PV = concatenation over chunks c of  P V[:, c]       (one Br x Bd block of O per chunk)
 *   2. Both products run on the tensor cores: WMMA 16x16x16 fragments, float16 in, float32
 *      accumulate. The 8 warps of the block tile the products between them.
 *
 * The storage type T is a template parameter: float16 (__half) or bfloat16 (__nv_bfloat16, WMMA
 * fragments of sm_80+). Only the fragments and the float -> T conversions of P and O change.
 *
 * Names follow the paper: Br, Bc, S, P, m, l; md_t (common/softmax_state.h) holds {m, l} as {m, d}. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/fa1.cuh"
#include "../common/mma.cuh"
#include "../common/reduce.cuh"

/* ---------------------------------------------------------------- tile sizes and layout */

enum {
    Br = 64,            /* query rows per Q tile */
    Bc = 128,           /* keys per K/V tile: the O round trip costs N*d*8 bytes per K/V tile,
                           so a large Bc is what keeps this rung's traffic down */
    Bd = 64,            /* head-dim columns per chunk: 128 bytes of float16, one row of a chunk */
    WARPS = 8,
    THREADS = WARPS * 32,

    /* S = Q K^T (Br x Bc = 64 x 128) split 2 x 4 over the warps: each owns 32 x 32 = 2 x 2 frags */
    S_WR = 32, S_WC = 32, S_WARP_COLS = Bc / S_WC,
    /* O chunk = P V_chunk (Br x Bd = 64 x 64) split 4 x 2: each warp owns 16 x 32 = 1 x 2 frags */
    O_WR = 16, O_WC = 32, O_WARP_COLS = Bd / O_WC,

    /* Leading dimensions (elements) of the shared tiles. Each float16 row is padded by 8 halves
     * (16 bytes) and each float32 row by 4 floats (16 bytes), so that consecutive rows start 16
     * bytes further along the 32 banks: the 8 rows that a fragment load or store touches at once
     * then fall on 8 different groups of 4 banks instead of piling onto the same ones. */
    LDQ = Bd + 8,       /* sQ  [Br][LDQ]  T (float16 or bfloat16) */
    LDKV = Bd + 8,      /* sKV [Bc][LDKV] T  (K chunk, then V chunk) */
    LDS = Bc + 4,       /* sS  [Br][LDS]  float (scaled scores) */
    LDP = Bc + 8,       /* sP  [Br][LDP]  T  (P~ = exp(S - m~)) */
    LDO = Bd + 4,       /* sO  [Br][LDO]  float (P V for one chunk; aliases sS) */

    /* Byte offsets in the dynamic shared memory. WMMA wants every fragment pointer 32-byte
     * aligned: each region starts on a multiple of 32 and 16 rows of every stride are too. */
    SM_Q = 0,
    SM_KV = SM_Q + Br * LDQ * 2,
    SM_S = SM_KV + Bc * LDKV * 2,
    SM_P = SM_S + Br * LDS * 4,
    SM_ML = SM_P + Br * LDP * 2,          /* md_t [Br]: {m, l} of the tile's rows, read from HBM */
    SM_ALPHA = SM_ML + Br * 8,            /* float [Br]: factor on the old O */
    SM_BETA = SM_ALPHA + Br * 4,          /* float [Br]: factor on P~ V */
    SM_UPD = SM_BETA + Br * 4,            /* int [Br]: 1 if this K/V tile changes the row */
    SMEM_BYTES = SM_UPD + Br * 4
};

static_assert(WARPS * S_WR * S_WC == Br * Bc, "the S warp tiles must cover Br x Bc");
static_assert(WARPS * O_WR * O_WC == Br * Bd, "the PV warp tiles must cover Br x Bd");
static_assert(Bc == 32 * 4, "softmax: each lane owns 4 consecutive scores of a row");
static_assert(Br % WARPS == 0, "softmax: each warp owns Br / WARPS rows");
static_assert((Br * Bd / 8) % THREADS == 0 && (Bc * Bd / 8) % THREADS == 0, "16-byte loads");
static_assert((Br * Bd / 4) % THREADS == 0 && THREADS % (Bd / 4) == 0, "float4 O update");
static_assert(Br * LDO <= Br * LDS, "sO must fit in the space of sS");
static_assert(SM_KV % 32 == 0 && SM_S % 32 == 0 && SM_P % 32 == 0 && SM_ML % 32 == 0,
              "WMMA pointers must be 32-byte aligned");

template <typename T>
using frag_a = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major>;
/* K is stored [key][dim] (row-major, ld LDKV). The product needs K^T (dims x keys) as the B
 * operand; that is the same memory read column-major, so no transpose is ever made. */
template <typename T>
using frag_kt = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::col_major>;
template <typename T>
using frag_v = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::row_major>;
typedef nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> frag_acc;

/* ---------------------------------------------------------------- small helpers */

/* End of the keys of the current K/V tile (tile-local index) that query row i sees: keys
 * [kv0, kv0 + result) exist and are visible. May be <= 0 (sees none of this tile). */
static __device__ __forceinline__ int tile_key_end(int i, int kv0, int kv_valid, int shift, int causal)
{
    if (!causal) return kv_valid;
    return min(kv_valid, i + shift + 1 - kv0);   /* bottom-right: key j visible iff j <= i + shift */
}

/* One chunk (ROWS x Bd halves) from device memory into registers: 16-byte loads, 8 threads per
 * 128-byte chunk row, so each group of 8 lanes reads one contiguous, aligned 128-byte segment.
 * Rows >= rows_valid and columns >= cols_valid are zero: tail keys then contribute 0 to P V
 * (their P is 0 and 0 * 0 = 0 -- never 0 * whatever was left in shared memory, which could be NaN).
 * Loading into registers first and storing to shared memory afterwards keeps all of a thread's
 * loads in flight together. */
template <int ROWS, typename T>
static __device__ __forceinline__ void fetch_chunk(uint4 *r, const T *src, int d, int rows_valid,
                                                   int cols_valid)
{
#pragma unroll
    for (int it = 0; it < ROWS * Bd / 8 / THREADS; it++) {
        const int idx = it * THREADS + threadIdx.x;
        const int row = idx / (Bd / 8), col = (idx % (Bd / 8)) * 8;
        r[it] = make_uint4(0, 0, 0, 0);
        if (row < rows_valid && col < cols_valid) r[it] = *(const uint4 *)(src + (size_t)row * d + col);
    }
}

template <int ROWS, int LD, typename T>
static __device__ __forceinline__ void put_chunk(T *dst, const uint4 *r)
{
#pragma unroll
    for (int it = 0; it < ROWS * Bd / 8 / THREADS; it++) {
        const int idx = it * THREADS + threadIdx.x;
        const int row = idx / (Bd / 8), col = (idx % (Bd / 8)) * 8;
        *(uint4 *)(dst + row * LD + col) = r[it];
    }
}

/* ---------------------------------------------------------------- the kernel */

/* grid  = B*Hq blocks, one per (batch, query head); the block owns every query row of that head
 *         (its rows of O, m, l in the workspace are touched by no other block).
 * block = 256 threads = 8 warps.
 * Per K/V tile (kv0, outer) and Q tile (q0, inner), the block computes, for its Br x Bc tile pair:
 *   S   Br x Bc = 64 x 128: warp w owns the 32 x 32 sub-tile at rows (w/4)*32, cols (w%4)*32
 *       (2 x 2 accumulator fragments), summed over d in chunks of Bd = 64 (4 k-steps of 16);
 *       scaled and stored to sS.
 *   softmax: warp w owns rows 8w .. 8w+7; lane l owns scores 4l .. 4l+3 of a row. Tile max and
 *       sum by the {m, d} merge across the warp, merged with the row's {m, l} from HBM.
 *   P V per d chunk: Br x Bd = 64 x 64; warp w owns the 16 x 32 sub-tile at rows (w/2)*16,
 *       cols (w%2)*32 (1 x 2 fragments), k over the Bc keys; stored to sO; then the block
 *       rescales that Br x Bd slice of O in HBM: O <- alpha O + beta (P~ V).
 * shared memory (78.2 KB whatever d is; rows padded by 16 bytes, see LDQ..LDO):
 *   sQ [64][72] half 9 KB | sKV [128][72] half 18 KB | sS [64][132] float 33 KB (sO [64][68]
 *   float aliases it) | sP [64][136] half 17 KB | {m,l}, alpha, beta, flag per row 1.3 KB
 * What changed against rung 03: rung 03 kept whole d-long float32 rows of Q, K and V in shared
 * memory (so its Bc shrank as d grew: 64 up to d = 256, 16 at d = 1024 on an H100) and did every
 * multiply-add on the CUDA cores, one query row per warp. Here shared memory holds Bd-wide chunks
 * (Br = 64, Bc = 128 at every d), and both products are WMMA tensor-core fragments. */
template <typename T>
__global__ void __launch_bounds__(THREADS, 2)
fa1_wmma(fa1_params p)
{
    using namespace nvcuda;
    extern __shared__ __align__(128) unsigned char smem[];
    T *sQ = (T *)(smem + SM_Q);
    T *sKV = (T *)(smem + SM_KV);
    float *sS = (float *)(smem + SM_S);
    float *sO = sS;                       /* S is dead once P is written: P V reuses its space */
    T *sP = (T *)(smem + SM_P);
    md_t *sML = (md_t *)(smem + SM_ML);
    float *sAlpha = (float *)(smem + SM_ALPHA);
    float *sBeta = (float *)(smem + SM_BETA);
    int *sUpd = (int *)(smem + SM_UPD);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int bh = blockIdx.x, b = bh / p.Hq, h = bh % p.Hq;
    const int hk = h / (p.Hq / p.Hkv);
    const int N = p.N, d = p.d, causal = p.causal;
    const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
    const int shift = mk - N;             /* causal: row i sees keys j <= i + shift */

    /* fa1_params carries float16 pointers (rungs 01-03 are float16 only); with T = bfloat16 the
     * same buffers hold bfloat16. */
    const T *Q = reinterpret_cast<const T *>(p.q) + (size_t)bh * N * d;
    const T *K = reinterpret_cast<const T *>(p.k) + ((size_t)b * p.Hkv + hk) * p.M * d;   /* stride M: varlen only shortens */
    const T *V = reinterpret_cast<const T *>(p.v) + ((size_t)b * p.Hkv + hk) * p.M * d;
    float *O = p.o_acc + (size_t)bh * N * d;
    md_t *ml = p.ml + (size_t)bh * N;

    /* Algorithm 1, line 2: O = 0, l = 0, m = -inf. The workspace arrives uninitialized; this block
     * is the only one that touches these rows, and the barrier makes the zeros visible to every
     * thread that reads them later. */
    for (size_t x = tid; x < (size_t)N * d / 4; x += THREADS)
        ((float4 *)O)[x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int r = tid; r < N; r += THREADS) ml[r] = md_identity();
    __syncthreads();

    /* What each warp owns in the two products (see the block comment). */
    const int s_r0 = (warp / S_WARP_COLS) * S_WR, s_c0 = (warp % S_WARP_COLS) * S_WC;
    const int o_r0 = (warp / O_WARP_COLS) * O_WR, o_c0 = (warp % O_WARP_COLS) * O_WC;

    for (int kv0 = 0; kv0 < mk; kv0 += Bc) {                       /* K/V tiles: outer */
        const int kv_valid = min(Bc, mk - kv0);
        /* Causal: the first row that sees key kv0 is kv0 - shift; Q tiles above it see nothing of
         * this K/V tile and are skipped (that row is < N because kv0 < mk). */
        const int q_first = causal ? max(0, kv0 - shift) : 0;

        for (int q0 = q_first / Br * Br; q0 < N; q0 += Br) {      /* Q tiles: inner */
            const int q_valid = min(Br, N - q0);

            /* ---- S = Q K^T, d in chunks of Bd. A warp whose 32 x 32 sub-tile lies wholly past
             * the last query row, past the last key, or above the causal diagonal skips the
             * products (its part of sS is then never read: the softmax masks those scores). */
            const int s_last = q0 + min(s_r0 + S_WR, q_valid) - 1;   /* its last real row */
            const bool s_live = s_r0 < q_valid &&
                                s_c0 < tile_key_end(s_last, kv0, kv_valid, shift, causal);
            frag_acc acc[2][2];
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

            for (int k0 = 0; k0 < d; k0 += Bd) {
                const int dv = min(Bd, d - k0);  /* the last chunk may hold 16, 32 or 48 columns */
                uint4 rq[Br * Bd / 8 / THREADS], rk[Bc * Bd / 8 / THREADS];
                fetch_chunk<Br>(rq, Q + (size_t)q0 * d + k0, d, q_valid, dv);
                fetch_chunk<Bc>(rk, K + (size_t)kv0 * d + k0, d, kv_valid, dv);
                /* The rows' {m, l} ride along with the first chunk: used by the softmax below. */
                if (k0 == 0 && tid < Br) sML[tid] = tid < q_valid ? ml[q0 + tid] : md_identity();
                put_chunk<Br, LDQ>(sQ, rq);
                put_chunk<Bc, LDKV>(sKV, rk);
                __syncthreads();

                if (s_live) {
#pragma unroll
                    for (int ks = 0; ks < Bd / 16; ks++) {
                        if (ks * 16 >= dv) break;           /* warp-uniform: partial last chunk */
                        frag_a<T> a[2];
                        frag_kt<T> bt[2];
#pragma unroll
                        for (int i = 0; i < 2; i++)
                            wmma::load_matrix_sync(a[i], sQ + (s_r0 + 16 * i) * LDQ + ks * 16, LDQ);
#pragma unroll
                        for (int j = 0; j < 2; j++)
                            wmma::load_matrix_sync(bt[j], sKV + (s_c0 + 16 * j) * LDKV + ks * 16, LDKV);
#pragma unroll
                        for (int i = 0; i < 2; i++)
#pragma unroll
                            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], a[i], bt[j], acc[i][j]);
                    }
                }
                __syncthreads();                     /* before the next chunk overwrites sQ, sKV */
            }

            /* The fragments are opaque (which lane holds which (row, col) is unspecified), so
             * the row-wise softmax cannot be done in them: S goes to shared memory, scaled. */
            if (s_live) {
#pragma unroll
                for (int i = 0; i < 2; i++)
#pragma unroll
                    for (int j = 0; j < 2; j++) {
#pragma unroll
                        for (int t = 0; t < acc[i][j].num_elements; t++) acc[i][j].x[t] *= p.scale;
                        wmma::store_matrix_sync(sS + (s_r0 + 16 * i) * LDS + s_c0 + 16 * j, acc[i][j], LDS,
                                                wmma::mem_row_major);
                    }
            }
            __syncthreads();

            /* ---- Softmax of the tile, one row per warp at a time (rows 8w .. 8w+7). */
#pragma unroll 1
            for (int rr = 0; rr < Br / WARPS; rr++) {
                const int r = warp * (Br / WARPS) + rr;
                uint32_t *prow = (uint32_t *)(sP + r * LDP + 4 * lane);   /* two T per word */
                const int end = r < q_valid ? tile_key_end(q0 + r, kv0, kv_valid, shift, causal) : 0;
                /* Invalid scores are selected away, never computed with: what sits in sS there
                 * may be stale or uninitialized. */
                const float4 s4 = *(const float4 *)(sS + r * LDS + 4 * lane);
                const int c = 4 * lane;
                const float x0 = c + 0 < end ? s4.x : -INFINITY;
                const float x1 = c + 1 < end ? s4.y : -INFINITY;
                const float x2 = c + 2 < end ? s4.z : -INFINITY;
                const float x3 = c + 3 < end ? s4.w : -INFINITY;
                /* This lane's {m, d} over its 4 scores, then the {m, d} merge across the warp. */
                md_t st;
                st.m = fmaxf(fmaxf(x0, x1), fmaxf(x2, x3));
                float e0 = 0.0f, e1 = 0.0f, e2 = 0.0f, e3 = 0.0f;
                if (st.m != -INFINITY) {
                    e0 = expf(x0 - st.m); e1 = expf(x1 - st.m);
                    e2 = expf(x2 - st.m); e3 = expf(x3 - st.m);
                }
                st.d = (e0 + e1) + (e2 + e3);
                const float m_lane = st.m;
                st = warp_md(st);                    /* every lane: the tile row's m~ and l~ */

                if (st.m == -INFINITY) {             /* no visible key in this tile (or r >= N) */
                    prow[0] = pack2_t<T>(0.0f, 0.0f);
                    prow[1] = pack2_t<T>(0.0f, 0.0f);
                    if (lane == 0) sUpd[r] = 0;
                    continue;
                }
                /* P~ = exp(S - m~) in float16, every value in [0, 1]: rescale this lane's
                 * exp(x - m_lane) by exp(m_lane - m~) (0 for a lane with no visible score). */
                const float f = m_lane == -INFINITY ? 0.0f : expf(m_lane - st.m);
                prow[0] = pack2_t<T>(e0 * f, e1 * f);
                prow[1] = pack2_t<T>(e2 * f, e3 * f);
                /* Algorithm 1, lines 11-12: m_new, l_new and the two factors of the O update,
                 * O_new = (l e^{m - m_new} O + e^{m~ - m_new} P~ V) / l_new. For the first tile a
                 * row sees, {m, l} = {-inf, 0}: alpha = 0 * 0 = 0 and the old O drops out.
                 * l_new >= 1 (the maximal score contributes exp(0)), so the division is safe. */
                if (lane == 0) {
                    const md_t prev = sML[r];
                    const md_t nw = md_merge(prev, st);
                    sAlpha[r] = prev.d * expf(prev.m - nw.m) / nw.d;
                    sBeta[r] = expf(st.m - nw.m) / nw.d;
                    sUpd[r] = 1;
                    ml[q0 + r] = nw;
                }
            }
            __syncthreads();

            /* ---- P~ V and the O update, d in chunks of Bd. A warp needs the tile's keys up to
             * the last one its last row sees; a warp wholly past the last query row does nothing. */
            const int o_last = q0 + min(o_r0 + O_WR, q_valid) - 1;
            const int o_keys = o_r0 < q_valid ? tile_key_end(o_last, kv0, kv_valid, shift, causal) : 0;
            /* The O update: thread tid owns columns 4*(tid%16) .. +3 of rows tid/16 + 16*it. */
            const int u_c = (tid % (Bd / 4)) * 4, u_r0 = tid / (Bd / 4);
            for (int k0 = 0; k0 < d; k0 += Bd) {
                const int dv = min(Bd, d - k0);
                uint4 rv[Bc * Bd / 8 / THREADS];
                fetch_chunk<Bc>(rv, V + (size_t)kv0 * d + k0, d, kv_valid, dv);
                /* This thread's old O values, fetched now so that their latency overlaps the
                 * V chunk's and the products below. */
                float4 ro[Br * Bd / 4 / THREADS];
#pragma unroll
                for (int it = 0; it < Br * Bd / 4 / THREADS; it++) {
                    const int r = u_r0 + it * (THREADS / (Bd / 4));
                    ro[it] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    if (sUpd[r] && u_c < dv) ro[it] = *(const float4 *)(O + (size_t)(q0 + r) * d + k0 + u_c);
                }
                put_chunk<Bc, LDKV>(sKV, rv);
                __syncthreads();

                if (o_r0 < q_valid) {
                    frag_acc c[2];
                    wmma::fill_fragment(c[0], 0.0f);
                    wmma::fill_fragment(c[1], 0.0f);
#pragma unroll
                    for (int ks = 0; ks < Bc / 16; ks++) {
                        if (ks * 16 >= o_keys) break;       /* past every key these rows see */
                        frag_a<T> a;
                        wmma::load_matrix_sync(a, sP + o_r0 * LDP + ks * 16, LDP);
#pragma unroll
                        for (int j = 0; j < 2; j++) {
                            if (o_c0 + 16 * j >= dv) continue;   /* columns past d */
                            frag_v<T> bv;
                            wmma::load_matrix_sync(bv, sKV + ks * 16 * LDKV + o_c0 + 16 * j, LDKV);
                            wmma::mma_sync(c[j], a, bv, c[j]);
                        }
                    }
#pragma unroll
                    for (int j = 0; j < 2; j++)
                        if (o_c0 + 16 * j < dv)
                            wmma::store_matrix_sync(sO + o_r0 * LDO + o_c0 + 16 * j, c[j], LDO, wmma::mem_row_major);
                }
                __syncthreads();

                /* O <- alpha O + beta P~V for the rows this tile changes. Each group of 16 lanes
                 * writes one 256-byte row segment: coalesced float4 stores. */
#pragma unroll
                for (int it = 0; it < Br * Bd / 4 / THREADS; it++) {
                    const int r = u_r0 + it * (THREADS / (Bd / 4));
                    if (!sUpd[r] || u_c >= dv) continue;
                    const float al = sAlpha[r], be = sBeta[r];
                    const float4 pv = *(const float4 *)(sO + r * LDO + u_c);
                    float4 o = ro[it];
                    o.x = al * o.x + be * pv.x;
                    o.y = al * o.y + be * pv.y;
                    o.z = al * o.z + be * pv.z;
                    o.w = al * o.w + be * pv.w;
                    *(float4 *)(O + (size_t)(q0 + r) * d + k0 + u_c) = o;
                }
                /* No barrier here: the next chunk's first write to shared memory (sKV) comes after
                 * the barrier that follows the products which read it, and sO is written only
                 * after the next barrier. */
            }
        }
    }
    __syncthreads();                                 /* the last O and {m, l} writes are visible */

    /* Only now, after the last K/V tile, does O become T: rounding it on every round trip would
     * add a float16 rounding error (2^-11 relative; bfloat16: 2^-8) per K/V tile. LSE = m + log(l); a row
     * that never saw a key still holds O = 0, {-inf, 0} and gets O = 0, LSE = -inf. */
    T *Oh = reinterpret_cast<T *>(p.o) + (size_t)bh * N * d;
    float *lse = p.lse + (size_t)bh * N;
    for (size_t x = tid; x < (size_t)N * d / 8; x += THREADS) {
        const float4 a = ((const float4 *)O)[2 * x], c = ((const float4 *)O)[2 * x + 1];
        union { uint4 u; uint32_t w[4]; } pk; /* a union, not a cast of &pk: stays in registers */
        pk.w[0] = pack2_t<T>(a.x, a.y);
        pk.w[1] = pack2_t<T>(a.z, a.w);
        pk.w[2] = pack2_t<T>(c.x, c.y);
        pk.w[3] = pack2_t<T>(c.z, c.w);
        ((uint4 *)Oh)[x] = pk.u;
    }
    for (int r = tid; r < N; r += THREADS) lse[r] = md_lse(ml[r]);
}

/* ------------------------------------------------------------------ host side */

static int wmma_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (s->dtype == ATTN_BF16 && env->cc_major < 8) {
        snprintf(why, n, "bfloat16 WMMA fragments need compute capability 8.0+");
        return 1;
    }
    if (s->d % 16 != 0) {
        snprintf(why, n, "d = %d is not a multiple of 16: the head dimension is consumed in WMMA "
                         "k-steps of 16 (16x16x16 fragments)", s->d);
        return 1;
    }
    if ((size_t)SMEM_BYTES > env->smem_per_block_optin) {
        snprintf(why, n, "needs %d bytes of shared memory per block (any d); this GPU allows %zu",
                 (int)SMEM_BYTES, env->smem_per_block_optin);
        return 1;
    }
    return 0;
}

/* The running O in float32 (4 bytes per output element) and {m, l} per query row: the same
 * workspace as rungs 01-03. */
static size_t wmma_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return fa1_workspace_bytes(s);
}

template <typename T>
static const char *wmma_start(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    fa1_params p = fa1_params_of(a);

    /* 78 KB is over the 48 KB default: opt in. Ask for the largest shared-memory carveout so
     * that two blocks (2 x 79 KB) fit on one SM. Once per process and storage type: the
     * attributes stick to the kernel, and the timed launches then carry no extra host calls. */
    static int configured = 0;
    if (!configured) {
        RUNG_CUDA(cudaFuncSetAttribute(fa1_wmma<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));
        RUNG_CUDA(cudaFuncSetAttribute(fa1_wmma<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       (int)cudaSharedmemCarveoutMaxShared));
        configured = 1;
    }
    fa1_wmma<T><<<s->B * s->Hq, THREADS, SMEM_BYTES, st>>>(p);
    RUNG_LAUNCHED(fa1_wmma);
    return NULL;
}

static const char *wmma_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    if (s->d % 16 != 0) return "d_tiled_wmma: unsupported shape";
    if (s->dtype == ATTN_BF16) return wmma_start<__nv_bfloat16>(a, st);
    return wmma_start<__half>(a, st);
}

static const rung d_tiled_wmma = {
    "04", "d tiled, WMMA",
    "d tiled by Bd = 64 so Br = 64, Bc = 128 at every d; QK^T and PV on tensor cores (WMMA)",
    wmma_unsupported, wmma_workspace, wmma_run, NULL, NULL,
};

extern "C" const rung *const rung_variants[] = {&d_tiled_wmma, NULL};
