/* Rung 08, step c: the backward pass on Hopper, as FlashAttention-3's (Shah et al., 2024,
 * arXiv:2407.08608, section 3 and its backward kernel): TMA copies, wgmma, a producer warpgroup and
 * dQ added into its float32 accumulator with the bulk reduce-add copy.
 *
 * Three kernels, launched in order on the rung's stream:
 *   1. bwd_pre     fa2_bwd.cuh (08a's): D_i = rowsum(dO_i o O_i), LSE_i in log2 units (+inf for a row
 *                  that sees no key), the row of the dQ accumulator zeroed.
 *   2. bwd_sm90    grid ceil(M/BC) * Hkv * B (causal: KV heads in L2-sized sections, bwd_section;
 *                  in a section every head's first key tile first, the heaviest, as 08a's order),
 *                  384 threads: warpgroup 0 the producer, warpgroups 1 and 2 the consumers. One block
 *                  owns BC keys of one KV head and walks the query tiles (BR rows) of every query
 *                  head of the group that see one of its keys (08a's walk). BC and BR by head dim
 *                  (h_cfg, the tile table): 128 and 64 at d <= 128, 128 and 128 at d <= 64, 64 and
 *                  64 above 128. Below, the tile of d = 128.
 *                  Producer, warp 0: K and V once (TMA, one mbarrier), then per query tile Q and dO
 *                  (TMA) and LSE and D (its 32 lanes, plain loads: a head's rows start anywhere, not
 *                  on the 16 bytes a bulk copy needs) into a two-stage ring of full/empty mbarriers.
 *                  Producer, warp 1: per query tile, waits for dQ in shared memory, adds it into the
 *                  accumulator with one cp.reduce.async.bulk (rows past N left out), and hands the
 *                  buffer back once the copy has read it.
 *                  Consumer cw (0, 1) owns keys [64 cw, 64 cw + 64) of the tile; per query tile
 *                  (h_consume, one function a step):
 *                    S^T  = K Q^T,  dP^T = V dO^T      h_ss_t: wgmma SS (64 keys x 64 queries each:
 *                                                      K, V, Q and dO K-major as loaded)
 *                    P^T  = 2^(S^T scale log2 e - LSE) h_probs (registers)
 *                    dV  += P^T dO                     h_rs_acc: wgmma RS, P^T packed from its
 *                                                      accumulator as A (h_pack_a), dO N-major as B
 *                                                      (the forward's P V); dV 64 x d float32
 *                    dS^T = P^T o (dP^T - D)           h_dsoftmax (registers)
 *                    dK  += dS^T Q                     h_rs_acc, as dV
 *                    dS^T to shared memory             h_share_ds: keys by queries, 128B-swizzled, two
 *                                                      buffers; a named barrier over both consumers
 *                    the stage back                    h_release, once dV and dK are done
 *                    dQ   = dS K                       h_dq_product: wgmma SS, both operands
 *                                                      transposed (A = dS^T M-major, B = K N-major);
 *                                                      consumer cw the columns [cw d/2, cw d/2 + d/2)
 *                    dQ (float32) to shared memory     h_dq_out, then producer warp 1 (named barriers)
 *                  and at the end dK * scale and dV, rounded, straight from the registers (h_store_dkdv).
 *                  Shared memory (1024-aligned tiles of 128-byte rows, TMA's 128B swizzle; wider rows
 *                  are chunks of 64 columns): K, V 128 x d; Q, dO 64 x d in two stages; dS^T 128 x 64
 *                  in two buffers (three at d = 96 and 128, for 08d); dQ 64 x d float32 (plain rows:
 *                  the bulk copy's source); LSE and D 64 floats in two stages: 32+32+32+32+48+32+1 KB
 *                  (d = 64, 128-row tiles, two dS^T buffers: 16+16+32+32+64+32+2).
 *   3. bwd_convert fa2_bwd.cu's: dQ = scale * accumulator, rounded to T.
 *
 * Against 08a: the same walk, masks and tiles of work (128 keys a block, 64-query tiles, GQA summed
 * in registers); what changes is who moves the data and how the products read it. 08a's warps each
 * own 16 keys and load every operand fragment with ldmatrix (one B fragment per mma: bounded by
 * shared-memory reads); here a warpgroup's wgmma reads both operands of S^T, dP^T and dQ, and B of
 * dV and dK, from shared memory itself, 64 keys at a time. The copies are TMA's, issued by one
 * thread of a warp that does nothing else; dQ leaves through shared memory and one bulk reduce-add
 * a tile (08a: 16 K red.global.add.v2 a tile at d = 128) issued off the consumers' path.
 * Against FlashAttention-3's backward (read for its design, hopper/mainloop_bwd_sm90_tma_gmma_ws.hpp):
 * the same roles and the same dQ path; FA3 sizes its tiles per head dim, as h_cfg does here (at
 * d = 64 128-query tiles with dQ split by rows between the consumers), and keeps P and dS in shared
 * memory where its layouts need them; here P stays in registers up to d = 128.
 *
 * Masks as 08a's: Q and dO rows past N are TMA's zero fill, their LSE is +inf and they are masked
 * (P = 0); keys past M are zero-filled and masked (P = 0); causal, keys above the diagonal P = 0,
 * tested only where a tile crosses N or M or a consumer's 64 keys cross the diagonal. dQ rows past
 * N are not added (the bulk copy's size). Every head dim that is a multiple of 8 up to 256,
 * zero-padded to 64, 128 or 256; float16 and bfloat16; sm_90a only (the kernel body is empty in the
 * sm_80 build).
 *
 * Step d (08d) is this kernel with its template bool OV set: the same roles and shared memory, and
 * consumer loops of its own (bwd_overlap.cuh): dQ overlapped, and the two consumers no longer
 * meeting every tile. OV = false is 08c (h_consume). 08d also launches bwd_sm90 and bwd_convert as
 * programmatic dependents (launch_08c): a grid's blocks start while the grid before it drains,
 * and wait only before they read what it writes (pdl_wait: the LSE, D, and the accumulator). */
#include "../common/check_cuda.h"
#include "../common/hopper_bwd.cuh"
#include "../common/online_softmax.cuh"
#include "../common/tensor_map.h"
#include "fa2_bwd.cuh"

#define H_BR 64                   /* query rows a tile (at d = 64, 128: h_cfg) */
#define H_THREADS 384             /* producer warpgroup + two consumers */
#define H_REGS 240                /* a consumer thread's registers after setmaxnreg (producer 24) */

/* Named barriers (0 is __syncthreads): both consumers' dS^T written (256 threads); dQ in shared
 * memory (consumers arrive, the dQ warp waits: 288); the dQ buffer free again (the reverse). */
enum { H_DS_READY = 1, H_DQ_FULL = 2, H_DQ_EMPTY = 3 };
#define H_CONS 256
#define H_DQ_SYNC (H_CONS + 32)
/* 08d up to d = 128 (bwd_overlap.cuh): dS^T of consumer cw for the tiles of parity par written
 * (H_OV_DS + 2 cw + par: the writer arrives, the other consumer waits, 256); dQ's buffer free again
 * for consumer cw (H_OV_EMPTY + cw: the consumer waits, the dQ warp arrives, 160). */
enum { H_OV_DS = 4, H_OV_EMPTY = 8 };
#define H_OV_EMPTY_SYNC (128 + 32)

/* The tile table. d is padded to DP = 64, 96, 128 or 256 (h_dp) with zero columns: TMA fills the
 * columns past d with zeros, which add nothing to S^T, dP^T or dQ, and the dK and dV columns past d
 * are not stored. Up to DP = 128 a consumer owns 64 of the block's 128 keys and all DP columns of
 * their dK and dV (DP registers a thread). At DP = 64 a tile has 128 query rows, so that a tile's
 * fixed work (waits, barriers, the LSE and D, the dQ hand-off) is spread over twice the products;
 * the consumers then split dQ by rows (h_dq_part). At DP = 256 a consumer's dK and dV would take 256
 * registers: the block owns 64 keys and its two consumers split the columns instead (WIDE,
 * bwd_wide.cuh), and Q and dO keep one stage, so that shared memory holds the tiles. */
template <int DP>
struct h_cfg {
    static constexpr bool WIDE = DP > 128;
    static constexpr int BC = WIDE ? 64 : 128;   /* keys a block */
    static constexpr int ST = WIDE ? 1 : 2;      /* stages of the Q and dO ring */
    static constexpr int BR = DP == 64 ? 2 * H_BR : H_BR;   /* query rows a tile */
    static constexpr int NDS = DP == 96 || DP == 128 ? 3 : 2;   /* dS^T buffers (3: 08d's ov_consume_lag) */
};
static inline int h_dp(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 256; }

/* The block's shared memory, by padded head dim: offsets in bytes from a 1024-aligned base. WIDE
 * keeps P^T beside dS^T (PB): its dV product reads P^T from shared memory. */
template <int DP>
struct h_smem {
    typedef h_cfg<DP> C;
    static constexpr int CW = (DP + 63) / 64 * 64;   /* the columns TMA's 64-column chunks hold */
    static constexpr uint32_t KV = C::BC * CW * 2, QT = C::BR * CW * 2, DS = C::BC * C::BR * 2, DQ = C::BR * DP * 4;
    static constexpr uint32_t K = 0, V = K + KV, Q = V + KV, DO = Q + C::ST * QT, DSB = DO + C::ST * QT;
    static constexpr uint32_t PB = DSB + C::NDS * DS, DQB = PB + (C::WIDE ? 2 * DS : 0);
    static constexpr uint32_t L = DQB + DQ, DV = L + C::ST * C::BR * 4, BAR = DV + C::ST * C::BR * 4;
    static constexpr uint32_t END = BAR + 8 * 8;
    static constexpr size_t bytes = END + 1024;   /* + the alignment of the base */
};

/* mbarriers: K and V loaded; per stage, Q/dO/LSE/D full and empty */
enum { H_KV_FULL = 0, H_FULL = 1, H_EMPTY = 3 };

typedef struct h_params {
    const float *Lsc, *Dvec;
    float *dQacc;
    void *dK, *dV;
    int Hq, Hkv, N, M, d, causal;
    int sec;                                     /* causal: KV heads per L2 section (bwd_section) */
    float scale, scale_log2;
} h_params;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/* The block's key tile, KV head and query walk (08a's): G heads x the query tiles from the first
 * one that sees a key of the tile. */
typedef struct h_walk {
    int k0, b, kvh, G, shift, q_start, tiles_head, ntiles;
} h_walk;

template <int BC, int BR>
static __device__ __forceinline__ h_walk h_walk_of(const h_params &p)
{
    h_walk w;
    int kt, bh;
    bwd_block_tile((p.M + BC - 1) / BC, p.causal, p.sec, &kt, &bh);
    w.b = bh / p.Hkv;
    w.kvh = bh % p.Hkv;
    w.k0 = kt * BC;
    w.G = p.Hq / p.Hkv;
    w.shift = p.M - p.N;
    const int q_first = p.causal ? max(0, w.k0 - w.shift) : 0;
    w.q_start = q_first / BR * BR;
    w.tiles_head = w.q_start < p.N ? (p.N - w.q_start + BR - 1) / BR : 0;
    w.ntiles = w.G * w.tiles_head;
    return w;
}

/* The walk's current query tile: its query plane (b, head) and first row, carried from one tile to
 * the next (tile i is head i / tiles_head: an integer division a tile, in the consumers' issue slots,
 * if computed from i). */
typedef struct h_tile_at {
    int plane, q0, t;
} h_tile_at;
static __device__ __forceinline__ h_tile_at h_first_tile(const h_walk &w, const h_params &p)
{
    return h_tile_at{w.b * p.Hq + w.kvh * w.G, w.q_start, 0};
}
template <int BR>
static __device__ __forceinline__ void h_next_tile(h_tile_at &a, const h_walk &w)
{
    if (++a.t == w.tiles_head) {
        a.t = 0;
        a.plane++;
        a.q0 = w.q_start;
    } else {
        a.q0 += BR;
    }
}

/* Producer warp 0: K, V, then the query tiles through the ring of ST stages. */
template <int D, bool PDL>
static __device__ __forceinline__ void h_produce(unsigned char *sm, uint64_t *bar, const CUtensorMap *tq,
                                                 const CUtensorMap *tk, const CUtensorMap *tv, const CUtensorMap *tdo,
                                                 const h_walk &w, const h_params &p)
{
    typedef h_smem<D> S;
    constexpr int CH = (D + 63) / 64, BC = h_cfg<D>::BC, ST = h_cfg<D>::ST, BR = h_cfg<D>::BR;
    const int lane = threadIdx.x % 32;
    const int kvp = w.b * p.Hkv + w.kvh;
    if (lane == 0) {
        mbar_arrive_expect_tx(&bar[H_KV_FULL], 2 * S::KV);
        for (int ch = 0; ch < CH; ch++) {
            tma_load_3d(sm + S::K + ch * BC * 128, tk, &bar[H_KV_FULL], ch * 64, w.k0, kvp);
            tma_load_3d(sm + S::V + ch * BC * 128, tv, &bar[H_KV_FULL], ch * 64, w.k0, kvp);
        }
    }
    float *sL = reinterpret_cast<float *>(sm + S::L), *sD = reinterpret_cast<float *>(sm + S::DV);
    h_tile_at at = h_first_tile(w, p);
    for (int i = 0; i < w.ntiles; i++, h_next_tile<BR>(at, w)) {
        const int st = i % ST;
        if (i >= ST) mbar_wait(&bar[H_EMPTY + st], (i / ST - 1) & 1);
        const int plane = at.plane, q0 = at.q0;
        if (lane == 0) {
            mbar_arrive_expect_tx(&bar[H_FULL + st], 2 * S::QT);
            for (int ch = 0; ch < CH; ch++) {
                tma_load_3d(sm + S::Q + st * S::QT + ch * BR * 128, tq, &bar[H_FULL + st], ch * 64, q0, plane);
                tma_load_3d(sm + S::DO + st * S::QT + ch * BR * 128, tdo, &bar[H_FULL + st], ch * 64, q0, plane);
            }
        }
        /* 08d: the LSE and D come from bwd_pre, which may still be running (above its first tile
         * the producer only loaded K, V, Q and dO, none of which bwd_pre writes) */
        if (PDL && i == 0) pdl_wait();
        /* LSE (log2 units) and D of the tile's rows; rows past N: LSE = +inf, so P = 0 */
        const size_t row = (size_t)plane * p.N + q0;
#pragma unroll
        for (int h = 0; h < BR / 32; h++) {
            const int r = lane + 32 * h;
            const bool in = q0 + r < p.N;
            sL[st * BR + r] = in ? p.Lsc[row + r] : INFINITY;
            sD[st * BR + r] = in ? p.Dvec[row + r] : 0.0f;
        }
        mbar_arrive(&bar[H_FULL + st]);   /* each lane's stores released by its own arrival (lane 0: its second) */
    }
}

/* The buffer free again: to both consumers at once (H_DQ_EMPTY), or to each on its own barrier
 * (OWN: 08d's loops up to d = 128, whose consumers do not wait for each other there) */
template <bool OWN>
static __device__ __forceinline__ void h_dq_free(void)
{
    if constexpr (OWN) {
        bar_arrive<H_OV_EMPTY, H_OV_EMPTY_SYNC>();
        bar_arrive<H_OV_EMPTY + 1, H_OV_EMPTY_SYNC>();
    } else {
        bar_arrive<H_DQ_EMPTY, H_DQ_SYNC>();
    }
}

/* Producer warp 1: each query tile's dQ, from shared memory into the float32 accumulator. */
template <int D, bool OWN, bool PDL>
static __device__ __forceinline__ void h_write_dq(unsigned char *sm, const h_walk &w, const h_params &p)
{
    typedef h_smem<D> S;
    constexpr int BR = h_cfg<D>::BR;
    const bool lead = threadIdx.x % 32 == 0;
    const float *sdq = reinterpret_cast<const float *>(sm + S::DQB);
    if (w.ntiles > 0) h_dq_free<OWN>();                  /* the buffer starts free */
    if (PDL) pdl_wait();                                 /* bwd_pre zeroes the accumulator */
    h_tile_at at = h_first_tile(w, p);
    for (int i = 0; i < w.ntiles; i++, h_next_tile<BR>(at, w)) {
        bar_sync<H_DQ_FULL, H_DQ_SYNC>();
        const int plane = at.plane, q0 = at.q0;
        if (lead) {
            const int rows = min(BR, p.N - q0);
            bulk_reduce_add_f32(p.dQacc + ((size_t)plane * p.N + q0) * D, sdq, (uint32_t)rows * D * 4);
            bulk_commit();
            bulk_wait_read<0>();
        }
        __syncwarp();
        if (i + 1 < w.ntiles) h_dq_free<OWN>();
    }
    if (lead) bulk_wait<0>();
}

/* ---- the consumer's pieces, in the order a tile runs them -------------------------------------- */

/* S^T = K Q^T or dP^T = V dO^T over this consumer's 64 keys (rows kw.. of the K or V tile at kv) and
 * the tile's 64 queries (the stage's Q or dO at q): wgmma SS, both operands K-major as TMA loads them
 * (16 columns = 32 bytes a k step, chunks of 64 columns). Committed, not waited for: the caller
 * issues both products before it waits for the first, so that P^T's exponentials run under dP^T. */
template <int D, int BC, int BR, int NQ, bool BF16>
static __device__ __forceinline__ void h_ss_t(float (&acc)[NQ / 2], uint32_t kv, int kw, uint32_t q)
{
    const wgmma_dsc da = wgmma_dsc_of(kv + kw * 128, 16, 1024), db = wgmma_dsc_of(q, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint32_t off = (kk % 4) * 32;
        wgmma_ss<NQ, BF16>(acc, wgmma_dsc_at(da, (kk / 4) * BC * 128 + off), wgmma_dsc_at(db, (kk / 4) * BR * 128 + off),
                           kk > 0);
    }
    wgmma_commit();
}

/* A swizzled tile's element (row, col) of a 128-byte row: the 16-byte chunk XOR row % 8 (TMA's 128B
 * swizzle, the layout wgmma's descriptors read). */
static __device__ __forceinline__ uint32_t h_sw128(int row, int col)
{
    return row * 128 + ((((col / 8) ^ row) & 7) * 16) + (col % 8) * 2;
}

/* A K-major tile slice (rows kw.. of a BC-row tile at t, D columns, TMA's 128B-swizzled chunks of
 * 64 columns) into registers as wgmma's A, one k16 step per a[kk]: ldmatrix's four matrices are
 * the fragment's four registers (rows + 8 for odd m, columns + 8 for m >= 2; lane l gives row
 * l % 8 of matrix l / 8). */
template <int D, int BC>
static __device__ __forceinline__ void h_load_a(uint32_t (&a)[D / 16][4], const unsigned char *t, int kw, int wq, int lane)
{
    const int m = lane / 8, row = kw + 16 * wq + lane % 8 + (m & 1) * 8;
    const uint32_t b = smem_addr(t);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const int col = 16 * kk + (m >> 1) * 8;
        ldmatrix_x4(a[kk], b + (col / 64) * BC * 128 + h_sw128(row, col % 64));
    }
}

/* h_ss_t with A from registers (h_load_a): dP^T = V dO^T at d = 96, B the stage's dO (K-major).
 * Committed, not waited for. */
template <int D, int BR, bool BF16>
static __device__ __forceinline__ void h_rs_t(float (&acc)[BR / 2], const uint32_t (&a)[D / 16][4], uint32_t q)
{
    const wgmma_dsc db = wgmma_dsc_of(q, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
        wgmma_rs_k<BR, BF16>(acc, a[kk], wgmma_dsc_at(db, (kk / 4) * BR * 128 + (kk % 4) * 32), kk > 0);
    wgmma_commit();
}

/* P^T = 2^(S^T scale log2 e - LSE), in place: the forward's P recomputed from its LSE (sl: the
 * stage's 64 LSE in log2 units; +inf for a row past N or that sees no key, so 2^-inf = 0). s[4j + e]:
 * key key0 (+8 for e >= 2), query q0 + 8 j + 2 c (+1 for odd e). Keys past M, queries past N and,
 * causal, keys above the diagonal get P = 0, tested only where mask says the tile crosses one of
 * them. Queries past N need the test too: their Q rows are zeros, and 0 times an infinity in K is a
 * NaN score, which 2^(NaN - inf) keeps, and dK = dS^T Q would carry into a key's gradient. */
template <int NQ, bool MASK>
static __device__ __forceinline__ void h_probs_as(float (&s)[NQ / 2], const float *sl, const h_walk &w,
                                                  const h_params &p, int q0, int key0, int c)
{
#pragma unroll
    for (int j = 0; j < NQ / 8; j++) {
        const float2 l = *reinterpret_cast<const float2 *>(sl + 8 * j + 2 * c);
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float x = fast_exp2(fmaf(s[4 * j + e], p.scale_log2, -((e & 1) ? l.y : l.x)));
            if constexpr (MASK) {
                const int key = key0 + (e >= 2 ? 8 : 0), query = q0 + 8 * j + 2 * c + (e & 1);
                if (key >= p.M || query >= p.N || (p.causal && key > query + w.shift)) x = 0.0f;
            }
            s[4 * j + e] = x;
        }
    }
}

/* Two instances, so that a tile no mask touches (most of them) runs no test at all: written as one
 * loop with a run-time mask, ptxas folded the test into every element's select. */
template <int NQ>
static __device__ __forceinline__ void h_probs(float (&s)[NQ / 2], const float *sl, const h_walk &w,
                                               const h_params &p, int q0, int key0, bool mask, int c)
{
    if (mask) h_probs_as<NQ, true>(s, sl, w, p, q0, key0, c);
    else h_probs_as<NQ, false>(s, sl, w, p, q0, key0, c);
}

/* A consumer's 64 x 64 accumulator (P^T or dS^T, laid out as in h_probs) packed in 16-bit pairs as
 * wgmma's A from registers, one k16 step of queries per a[kb]: P and dS never leave the registers
 * for dV and dK, as P does not for the forward's P V. */
template <typename T, int NQ>
static __device__ __forceinline__ void h_pack_a(uint32_t (&a)[NQ / 16][4], const float (&x)[NQ / 2])
{
#pragma unroll
    for (int kb = 0; kb < NQ / 16; kb++) {
        a[kb][0] = pack2_t<T>(x[8 * kb + 0], x[8 * kb + 1]);
        a[kb][1] = pack2_t<T>(x[8 * kb + 2], x[8 * kb + 3]);
        a[kb][2] = pack2_t<T>(x[8 * kb + 4], x[8 * kb + 5]);
        a[kb][3] = pack2_t<T>(x[8 * kb + 6], x[8 * kb + 7]);
    }
}

/* dV += P^T dO or dK += dS^T Q: acc (64 keys x D, float32 in registers for the whole walk) += A B over
 * the tile's 64 queries, A from registers (h_pack_a), B the stage's dO or Q at b (N-major: 16-query
 * steps 2048 bytes apart, chunks of 64 columns). Committed, not waited for. */
template <int D, int BR, bool BF16>
static __device__ __forceinline__ void h_rs_acc(float (&acc)[D / 2], const uint32_t (&a)[BR / 16][4], uint32_t b)
{
    wgmma_fence_regs(acc);
    wgmma_fence();
    const wgmma_dsc db = wgmma_dsc_of(b, BR * 128, 1024);
#pragma unroll
    for (int kb = 0; kb < BR / 16; kb++)
        wgmma_rs<D, BF16>(acc, a[kb], wgmma_dsc_at(db, kb * 2048), 1);
    wgmma_commit();
}

/* dS^T = P^T o (dP^T - D), in place in dp: the softmax's gradient, where D_i = rowsum(dO_i o O_i)
 * (bwd_pre) stands for sum_j P_ij dP_ij. sd: the stage's 64 D. */
template <int NQ>
static __device__ __forceinline__ void h_dsoftmax(float (&dp)[NQ / 2], const float (&pt)[NQ / 2], const float *sd,
                                                  int c)
{
#pragma unroll
    for (int j = 0; j < NQ / 8; j++) {
        const float2 dd = *reinterpret_cast<const float2 *>(sd + 8 * j + 2 * c);
#pragma unroll
        for (int e = 0; e < 4; e++) dp[4 * j + e] = pt[4 * j + e] * (dp[4 * j + e] - ((e & 1) ? dd.y : dd.x));
    }
}

/* pack2_t's inverse: a register of two T back to two floats */
template <typename T>
static __device__ __forceinline__ float2 unpack2_t(uint32_t u)
{
    if constexpr (storage_bf16<T>) return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&u));
    else return __half22float2(*reinterpret_cast<const __half2 *>(&u));
}

/* h_dsoftmax with P^T read back from its packed 16-bit form (h_pack_a's layout), so that the float
 * P^T is dead once packed: at 128 query rows its 64 registers are what ptxas lacks (C7512). dS^T
 * is then P^T rounded to T times (dP^T - D), where it is P^T times (dP^T - D) rounded below. */
template <typename T, int NQ>
static __device__ __forceinline__ void h_dsoftmax_packed(float (&dp)[NQ / 2], const uint32_t (&pa)[NQ / 16][4],
                                                         const float *sd, int c)
{
#pragma unroll
    for (int j = 0; j < NQ / 8; j++) {
        const float2 dd = *reinterpret_cast<const float2 *>(sd + 8 * j + 2 * c);
#pragma unroll
        for (int e = 0; e < 4; e += 2) {
            const int i = 4 * j + e;                     /* x[i], x[i + 1] are one register of pa */
            const float2 pt = unpack2_t<T>(pa[i / 8][(i % 8) / 2]);
            dp[i] = pt.x * (dp[i] - dd.x);
            dp[i + 1] = pt.y * (dp[i + 1] - dd.y);
        }
    }
}

/* A packed keys-by-queries accumulator (P^T or dS^T, NQ queries from column q_off) into a buffer of
 * BC key rows, rows kw + 16 wq + g (+8), 128B-swizzled, in chunks of 64 query columns: one
 * stmatrix a k16 step, whose four matrices are a[kb][0..3] (rows + 8 for odd r, columns + 8 for
 * r >= 2). Lane l gives row l % 8 of matrix l / 8. */
template <int NQ, int BC>
static __device__ __forceinline__ void h_put_t(unsigned char *buf, const uint32_t (&a)[NQ / 16][4], int kw, int q_off,
                                               int wq, int lane)
{
    const int m = lane / 8, row = kw + 16 * wq + lane % 8 + (m & 1) * 8;
    const uint32_t b = smem_addr(buf);
#pragma unroll
    for (int kb = 0; kb < NQ / 16; kb++) {
        const int col = q_off + 16 * kb + (m >> 1) * 8;
        stmatrix_x4(b + (col / 64) * BC * 128 + h_sw128(row, col % 64), a[kb][0], a[kb][1], a[kb][2], a[kb][3]);
    }
}

/* dS^T (packed as A) into the tile's buffer sds: the A of dQ = dS K, which needs both consumers'
 * keys, so a named barrier over both follows. With two buffers that barrier also proves the one
 * being written was read two tiles ago, by the dQ product the other consumer issued before the last
 * tile's barrier. */
template <int BR, int BC>
static __device__ __forceinline__ void h_share_ds(unsigned char *sds, const uint32_t (&a)[BR / 16][4], int kw, int wq,
                                                  int lane)
{
    h_put_t<BR, BC>(sds, a, kw, 0, wq, lane);
    fence_proxy_async();
    bar_sync<H_DS_READY, H_CONS>();
}

/* The stage's Q and dO are done with once dV and dK are (n: the wgmma groups still allowed in
 * flight): the stage goes back. Every consumer thread arrives after its own last read of the stage
 * (its LSE and D included), so each read is ordered before the producer's next writes by that
 * thread's own release (the barrier counts 256). */
template <int n, int D>
static __device__ __forceinline__ void h_release(uint64_t *bar, int st, float (&dv)[D / 2], float (&dk)[D / 2])
{
    wgmma_wait<n>();
    wgmma_fence_regs(dv);
    wgmma_fence_regs(dk);
    mbar_arrive(&bar[H_EMPTY + st]);
}

/* A consumer's part of a tile's dQ: 64 rows from h_dq_row0, h_dq_cols<D, BR> columns from
 * h_dq_col0. A 64-row tile splits the columns between the two consumers, a 128-row tile (d = 64)
 * the rows. */
template <int D, int BR> struct h_dq_part {
    /* the product's columns: halves, but at D = 96 64 each, because a part that starts inside a
     * 64-column chunk must end in it (the N-major descriptor's chunks): consumer 1's last 32 are
     * the chunk's zero padding, computed and not stored (cols). One N for both consumers: a wgmma
     * on a path that differs between them would be serialized by ptxas (C7520). */
    static constexpr int QN = BR > 64 ? D : D == 96 ? 64 : D / 2;
    static __device__ __forceinline__ int row0(int cw) { return BR > 64 ? 64 * cw : 0; }
    static __device__ __forceinline__ int col0(int cw) { return BR > 64 ? 0 : cw * QN; }
    /* a constant where both parts are whole (cw is 0 or 1, which the compiler cannot know) */
    static __device__ __forceinline__ int cols(int cw) { return BR > 64 ? D : 2 * QN <= D ? QN : min(QN, D - cw * QN); }
};

/* dQ = dS K, this consumer's part over the block's BC keys: wgmma SS with both operands
 * transposed, A = dS^T as stored (keys by queries, read M-major: 16-key steps 2048 bytes apart,
 * chunks of 64 queries), B = K (keys by d, N-major, the same steps, chunks of 64 columns BC rows
 * long; at D = 64 and BR = 64 consumer 1 starts 64 bytes into the row). Committed, not waited for. */
template <int D, int BC, int BR, bool BF16>
static __device__ __forceinline__ void h_dq_product(float (&dq)[h_dq_part<D, BR>::QN / 2], const unsigned char *sds,
                                                    uint32_t k, int cw)
{
    typedef h_dq_part<D, BR> P;
    const int col = P::col0(cw);
    const uint32_t a0 = smem_addr(sds) + (P::row0(cw) / 64) * BC * 128;
    const uint32_t kb_a = k + (col / 64) * BC * 128 + (col % 64) * 2;
    const wgmma_dsc da = wgmma_dsc_of(a0, BC * 128, 1024), db = wgmma_dsc_of(kb_a, BC * 128, 1024);
    wgmma_fence();
#pragma unroll
    for (int kb = 0; kb < BC / 16; kb++)
        wgmma_ss_tt<P::QN, BF16>(dq, wgmma_dsc_at(da, kb * 2048), wgmma_dsc_at(db, kb * 2048), kb > 0);
    wgmma_commit();
}

/* 08c's dQ hand-off: once the dQ warp has read the last tile's dQ out (H_DQ_EMPTY), this one's into
 * the plain float32 rows of sdq (dq[4j + e]: row row0 + 16 wq + g (+8), column col0 + 8 j + 2 c
 * (+1)), then the proxy fence (the bulk copy reads through the async proxy) and H_DQ_FULL. */
template <int D, int BR>
static __device__ __forceinline__ void h_dq_out(float *sdq, const float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g,
                                                int c, int cw)
{
    typedef h_dq_part<D, BR> P;
    constexpr int QN = P::QN;
    const int qn = P::cols(cw);
    bar_sync<H_DQ_EMPTY, H_DQ_SYNC>();
#pragma unroll
    for (int j = 0; j < QN / 8; j++)
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            if (8 * j >= qn) break;
            const int row = P::row0(cw) + 16 * wq + g + 8 * hi, col = P::col0(cw) + 8 * j + 2 * c;
            *reinterpret_cast<float2 *>(sdq + row * D + col) = make_float2(dq[4 * j + 2 * hi], dq[4 * j + 2 * hi + 1]);
        }
    fence_proxy_async();
    bar_arrive<H_DQ_FULL, H_DQ_SYNC>();
}

/* After the walk: dK * scale and dV of this warpgroup's 64 keys (NC columns from col0), rounded,
 * straight from the registers (each written once: the block owns these keys, GQA's heads summed in
 * the walk), two columns a store; the padding's columns past d are not stored. */
template <int NC, typename T>
static __device__ __forceinline__ void h_store_dkdv(const float (&dk)[NC / 2], const float (&dv)[NC / 2], const h_walk &w,
                                                    const h_params &p, int kw, int col0, int wq, int g, int c)
{
    T *dK = reinterpret_cast<T *>(p.dK), *dV = reinterpret_cast<T *>(p.dV);
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        const int key = w.k0 + kw + 16 * wq + g + 8 * hi;
        if (key >= p.M) continue;
        const size_t r = (((size_t)w.b * p.Hkv + w.kvh) * p.M + key) * p.d;
#pragma unroll
        for (int j = 0; j < NC / 8; j++) {
            const int col = col0 + 8 * j + 2 * c;
            if (col >= p.d) break;
            *reinterpret_cast<uint32_t *>(dK + r + col) = pack2_t<T>(dk[4 * j + 2 * hi] * p.scale, dk[4 * j + 2 * hi + 1] * p.scale);
            *reinterpret_cast<uint32_t *>(dV + r + col) = pack2_t<T>(dv[4 * j + 2 * hi], dv[4 * j + 2 * hi + 1]);
        }
    }
}

/* A tile's middle, once S^T and dP^T are issued (in this order, the last two groups in flight):
 * P^T from S^T and dV += P^T dO issued, then, once dP^T is in, dS^T and dK += dS^T Q issued. pa
 * and da (P^T and dS^T packed as wgmma's A) stay the caller's: the products in flight read them,
 * and dS^T goes on to shared memory. sl, sd: the stage's LSE and D. */
template <int D, typename T>
static __device__ __forceinline__ void h_grads(float (&s)[h_cfg<D>::BR / 2], float (&dp)[h_cfg<D>::BR / 2],
                                               uint32_t (&pa)[h_cfg<D>::BR / 16][4], uint32_t (&da)[h_cfg<D>::BR / 16][4],
                                               float (&dv)[D / 2], float (&dk)[D / 2], const float *sl, const float *sd,
                                               const h_walk &w, const h_params &p, int q0, int kw, int wq, int g, int c,
                                               uint32_t q_a, uint32_t do_a)
{
    constexpr bool BF16 = storage_bf16<T>;
    constexpr int BC = h_cfg<D>::BC, BR = h_cfg<D>::BR;
    wgmma_wait<1>();                                     /* S^T done, dP^T still running */
    wgmma_fence_regs(s);
    const int key0 = w.k0 + kw + 16 * wq + g;            /* this thread's first key */
    const bool mask = w.k0 + BC > p.M || q0 + BR > p.N || (p.causal && w.k0 + kw + 63 > q0 + w.shift);
    h_probs<BR>(s, sl, w, p, q0, key0, mask, c);
    h_pack_a<T, BR>(pa, s);
    h_rs_acc<D, BR, BF16>(dv, pa, do_a);                 /* dV += P^T dO */

    wgmma_wait<1>();                                     /* dP^T done, dV still running */
    wgmma_fence_regs(dp);
    if constexpr (BR > 64) h_dsoftmax_packed<T, BR>(dp, pa, sd, c);
    else h_dsoftmax<BR>(dp, s, sd, c);
    h_pack_a<T, BR>(da, dp);
    h_rs_acc<D, BR, BF16>(dk, da, q_a);                  /* dK += dS^T Q */
}

/* 08c's consumer warpgroup: its 64 keys' dK and dV over the whole walk, the pieces above in a
 * tile's order; dQ waited for and stored at once. 08d's loops are bwd_overlap.cuh's. */
template <int D, typename T>
static __device__ __forceinline__ void h_consume(unsigned char *sm, uint64_t *bar, const h_walk &w, const h_params &p,
                                                 int cw)
{
    typedef h_smem<D> S;
    constexpr bool BF16 = storage_bf16<T>;
    constexpr int BC = h_cfg<D>::BC, BR = h_cfg<D>::BR, QN = h_dq_part<D, BR>::QN;
    const int wq = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int kw = 64 * cw;                              /* this warpgroup's keys in the tile */
    const uint32_t base = smem_addr(sm);
    const float *sL = reinterpret_cast<const float *>(sm + S::L), *sD = reinterpret_cast<const float *>(sm + S::DV);
    float *sdq = reinterpret_cast<float *>(sm + S::DQB);

    float dk[D / 2], dv[D / 2];
#pragma unroll
    for (int e = 0; e < D / 2; e++) dk[e] = dv[e] = 0.0f;

    float dq[QN / 2];
    mbar_wait(&bar[H_KV_FULL], 0);
    /* At d = 96 (FlashAttention-3's choice there) V's 64 x 96 slice of this consumer is loaded into
     * registers once, as wgmma's A: dP^T then reads only dO from shared memory. 24 registers, which
     * d = 96 has to spare (d = 128 has not). */
    constexpr bool VR = D == 96;
    uint32_t va[VR ? D / 16 : 1][4];
    if constexpr (VR) h_load_a<D, BC>(va, sm + S::V, kw, wq, lane);
    h_tile_at at = h_first_tile(w, p);
    for (int i = 0; i < w.ntiles; i++, h_next_tile<BR>(at, w)) {
        const int st = i & 1;
        const int q0 = at.q0;
        mbar_wait(&bar[H_FULL + st], (i >> 1) & 1);
        const uint32_t q_a = base + S::Q + st * S::QT, do_a = base + S::DO + st * S::QT;

        float s[BR / 2], dp[BR / 2];
        wgmma_fence();
        h_ss_t<D, BC, BR, BR, BF16>(s, base + S::K, kw, q_a);     /* S^T = K Q^T */
        if constexpr (VR) h_rs_t<D, BR, BF16>(dp, va, do_a);           /* dP^T = V dO^T, V from registers */
        else h_ss_t<D, BC, BR, BR, BF16>(dp, base + S::V, kw, do_a);   /* dP^T = V dO^T */

        uint32_t pa[BR / 16][4], da[BR / 16][4];
        h_grads<D, T>(s, dp, pa, da, dv, dk, sL + st * BR, sD + st * BR, w, p, q0, kw, wq, g, c, q_a, do_a);

        unsigned char *sds = sm + S::DSB + st * S::DS;   /* buffer i % 2 */
        h_share_ds<BR, BC>(sds, da, kw, wq, lane);
        h_release<0, D>(bar, st, dv, dk);
        h_dq_product<D, BC, BR, BF16>(dq, sds, base + S::K, cw);
        wgmma_wait<0>();
        wgmma_fence_regs(dq);
        h_dq_out<D, BR>(sdq, dq, wq, g, c, cw);
    }
    h_store_dkdv<D, T>(dk, dv, w, p, kw, 0, wq, g, c);
}

/* Step d's loops (OV = true): dQ left in flight, its stores without bank conflicts, and the two
 * consumers no longer meeting every tile. */
#include "bwd_overlap.cuh"

/* d > 128 (DP = 256): the consumers split the columns, not the keys. */
#include "bwd_wide.cuh"

#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

template <int D, typename T, bool OV>
__global__ void __launch_bounds__(H_THREADS, 1)
bwd_sm90(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
         const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap tdo, h_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    typedef h_smem<D> S;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t a = smem_addr(smem_raw);
    unsigned char *sm = smem_raw + (((a + 1023) & ~1023u) - a);
    uint64_t *bar = reinterpret_cast<uint64_t *>(sm + S::BAR);
    const h_walk w = h_walk_of<h_cfg<D>::BC, h_cfg<D>::BR>(p);

    if (OV) pdl_launch_dependents();   /* 08d: bwd_convert's blocks may launch as this grid's last ones start */
    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv); tma_prefetch_map(&tdo);
        mbar_init(&bar[H_KV_FULL], 1);
        for (int s = 0; s < 2; s++) {
            mbar_init(&bar[H_FULL + s], 33);     /* lane 0 with the bytes, then every lane after its stores */
            mbar_init(&bar[H_EMPTY + s], 256);   /* every thread of both consumer warpgroups */
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (threadIdx.x < 128) {                     /* the producer warpgroup */
        setmaxnreg_dec<24>();
        if (threadIdx.x < 32) h_produce<D, OV>(sm, bar, &tq, &tk, &tv, &tdo, w, p);
        else if (threadIdx.x < 64) h_write_dq<D, OV && !h_cfg<D>::WIDE, OV>(sm, w, p);
    } else {
        setmaxnreg_inc<H_REGS>();
        /* the consumer's index read from lane 0: the compiler then knows it is the same in the
         * whole warp and keeps what derives from it (descriptors, addresses) in uniform registers */
        const int cw = __shfl_sync(0xffffffffu, threadIdx.x / 128 - 1, 0);
        if constexpr (h_cfg<D>::WIDE) h_consume_wide<D, T, OV>(sm, bar, w, p, cw);
        else if constexpr (OV && h_cfg<D>::NDS == 3) ov_consume_lag<D, T>(sm, bar, w, p, cw);
        else if constexpr (OV) ov_consume<D, T>(sm, bar, w, p, cw);
        else h_consume<D, T>(sm, bar, w, p, cw);
    }
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* Host side */

static size_t smem_08c(int d)
{
    const int dp = h_dp(d);
    return dp == 64 ? h_smem<64>::bytes : dp == 96 ? h_smem<96>::bytes : dp == 128 ? h_smem<128>::bytes : h_smem<256>::bytes;
}

/* the float32 dQ accumulator's elements, [B,Hq,N,DP]: rows of the padded head dim */
static size_t h_dq_elems(const attn_shape *s)
{
    return (size_t)s->B * s->Hq * s->N * h_dp(s->d);
}

/* workspace: the float32 dQ accumulator, then D and LSE in log2 units (08a's, with padded rows) */
static size_t workspace_08c(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return h_dq_elems(s) * sizeof(float) + 2 * attn_lse_elems(s) * sizeof(float);
}

/* 08c's and 08d's refusals: the same kernel, the same shapes */
static int h_refuse(const char *id, const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (env->cc_major != 9) {
        snprintf(why, n, "%s needs a Hopper GPU (sm_90a: wgmma, TMA, setmaxnreg); this one is sm_%d%d", id,
                 env->cc_major, env->cc_minor);
        return 1;
    }
    return bwd_refuse(s, env, why, n, s->d % 8 == 0 && s->d <= 256 ? smem_08c(s->d) : 0, 1);
}

static int unsupported_08c(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    return h_refuse("08c", s, env, why, n);
}

static int unsupported_08d(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    return h_refuse("08d", s, env, why, n);
}

template <int D, typename T, bool OV>
static const char *launch_08c(const attn_args *a, cudaStream_t st, float *dQacc, float *Dvec, float *Lsc)
{
    const attn_shape *s = &a->shape;
    const attn_grads *gr = a->grad;
    const long rows = (long)s->B * s->Hq * s->N;
    bwd_pre<D, T><<<bwd_pre_blocks(rows), 256, 0, st>>>((const T *)a->o, (const T *)gr->dout, a->lse, Dvec, Lsc,
                                                              dQacc, rows, s->d);
    RUNG_LAUNCHED(bwd_pre);

    /* Q and dO as [B*Hq][N][d] in boxes of 64 rows, K and V as [B*Hkv][M][d] in boxes of BC; the
     * columns past d read as zeros */
    constexpr int BC = h_cfg<D>::BC;
    CUtensorMap tq, tk, tv, tdo;
    const char *err;
    if ((err = tensor_map_3d(&tq, a->q, s->dtype, s->d, s->N, s->B * s->Hq, h_cfg<D>::BR)) ||
        (err = tensor_map_3d(&tdo, gr->dout, s->dtype, s->d, s->N, s->B * s->Hq, h_cfg<D>::BR)) ||
        (err = tensor_map_3d(&tk, a->k, s->dtype, s->d, s->M, s->B * s->Hkv, BC)) ||
        (err = tensor_map_3d(&tv, a->v, s->dtype, s->d, s->M, s->B * s->Hkv, BC)))
        return err;

    h_params p = {Lsc, Dvec, dQacc, gr->dk, gr->dv, s->Hq, s->Hkv, s->N, s->M, s->d, s->causal, bwd_section(s), s->scale,
                  s->scale * LOG2E};
    const size_t smem = h_smem<D>::bytes;
    RUNG_CUDA(cudaFuncSetAttribute(bwd_sm90<D, T, OV>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const unsigned grid = (unsigned)((s->M + BC - 1) / BC) * s->Hkv * s->B;
    /* 08d: a programmatic dependent of bwd_pre, and bwd_convert one of this kernel: each grid's
     * blocks start as the one before it drains, and wait (pdl_wait) only where they read its results */
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = pdl_config(dim3(grid), dim3(H_THREADS), smem, st, OV, &attr);
    RUNG_CUDA((cudaLaunchKernelEx(&cfg, bwd_sm90<D, T, OV>, tq, tk, tv, tdo, p)));
    RUNG_LAUNCHED(bwd_sm90);
    return bwd_dq_convert(a, st, dQacc, D, OV, OV);
}

/* OV: 08d's consumer loop (bwd_overlap.cuh); the workspace, the launches and the grid are 08c's */
template <bool OV>
static const char *h_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    if (!a->grad) return "rung 08 is a backward pass: the driver gives it no gradients (rung_grad_own missing?)";
    float *dQacc = (float *)a->workspace;
    float *Dvec = dQacc + h_dq_elems(s);
    float *Lsc = Dvec + attn_lse_elems(s);
    const int bf = s->dtype == ATTN_BF16, dp = h_dp(s->d);
    if (dp == 64) return bf ? launch_08c<64, __nv_bfloat16, OV>(a, st, dQacc, Dvec, Lsc) : launch_08c<64, __half, OV>(a, st, dQacc, Dvec, Lsc);
    if (dp == 96) return bf ? launch_08c<96, __nv_bfloat16, OV>(a, st, dQacc, Dvec, Lsc) : launch_08c<96, __half, OV>(a, st, dQacc, Dvec, Lsc);
    if (dp == 128) return bf ? launch_08c<128, __nv_bfloat16, OV>(a, st, dQacc, Dvec, Lsc) : launch_08c<128, __half, OV>(a, st, dQacc, Dvec, Lsc);
    return bf ? launch_08c<256, __nv_bfloat16, OV>(a, st, dQacc, Dvec, Lsc) : launch_08c<256, __half, OV>(a, st, dQacc, Dvec, Lsc);
}

static const char *run_08c(const attn_args *a, cudaStream_t st)
{
    return h_run<false>(a, st);
}

static const char *run_08d(const attn_args *a, cudaStream_t st)
{
    return h_run<true>(a, st);
}

extern "C" const rung rung_08c = {
    "08c", "fa3-style backward on Hopper",
    "the backward pass on Hopper: TMA, wgmma, a producer warpgroup, dQ by bulk reduce-add through shared memory",
    unsupported_08c, workspace_08c, run_08c, NULL, NULL,
};

extern "C" const rung rung_08d = {
    "08d", "08c + overlap",
    "08c with overlap: dQ of a query tile left in flight under the next tile's S, dQ stored without bank conflicts, the two consumers out of step",
    unsupported_08d, workspace_08c, run_08d, NULL, NULL,
};
