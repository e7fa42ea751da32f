/* Rung 07, step a: FlashAttention-3's first step (Shah et al., 2024, arXiv:2407.08608) on Hopper:
 * the tiles come in through the tensor-memory accelerator (TMA) and both products run on wgmma.
 * sm_90a only (wgmma); elsewhere the rung refuses.
 *
 * Grid (ceil(N / BR), B * Hq). Block: CW warpgroups (BR = 64 CW query rows: two, 128 rows, but
 * three at d = 64; the tile table, f3_tile below, has the sizes per head dim); warpgroup wg owns
 * query rows [64 wg, 64 wg + 64) of the tile, and within it warp w rows [16 w, 16 w + 16) -- the
 * rows of wgmma's m64 accumulators.
 * Shared memory, 1024-byte aligned, every tile 128B-swizzled in chunks of 64 columns as TMA
 * writes it (common/hopper.cuh):
 *   Q tile  BR x d             loaded once
 *   K tiles Bc x d, STAGES of them, then V tiles Bc x d, STAGES of them
 *   mbarriers: Q, and one per stage (its TMA bytes counted in)
 * Per K/V tile j (stage j % STAGES), every warpgroup:
 *   wait on the stage's barrier; S = Q K^T: DK / 16 wgmmas m64 nBc k16, both operands from shared
 *   memory (K-major); wait for them; masks (past M, causal) and the online softmax on the
 *   accumulators in registers, in log2 units, as in rung 05; P packed to halves in registers is
 *   the A operand of O += P V: Bc / 16 wgmmas m64 nDV k16, B = V from shared memory (N-major);
 *   wait; a block barrier; then thread 0 refills the stage with tile j + STAGES.
 * The loads of tile j + 1 (already issued) overlap tile j's products; the products and the softmax
 * do not overlap each other (07b to 07e take those steps).
 *
 * 07a against rung 05 (05c), every change:
 *   - wgmma (64 x N x 16 per warpgroup, asynchronous, operands read from shared memory by the
 *     tensor cores through descriptors) instead of mma.sync (16 x 8 x 16 per warp, operands
 *     gathered into registers by ldmatrix first): no ldmatrix, no B fragments in registers.
 *   - TMA instead of cp.async: one thread issues a copy per 64-column box of a tile; completion
 *     is counted in bytes on an mbarrier instead of cp.async groups and a block barrier. Rows,
 *     keys and columns past N, M and d are zero-filled by TMA (the tensor maps are 3-D:
 *     [B*H][N or M][d]).
 *   - The 128B swizzle of TMA and wgmma replaces 05c's own XOR swizzle (the same idea).
 *   - 8 warps in two warpgroups (05c: 4 warps), 128 rows per block (three warpgroups, 192 rows, at
 *     d = 64); Bc = 128 at d = 128 (05c: 64).
 *   - P goes to the second product straight from the accumulators of the first, as in 05c, but in
 *     wgmma's register-A form. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/hopper.cuh"
#include "../common/online_softmax.cuh"
#include "../common/tensor_map.h"

#define F3_SMEM_MAX (227 * 1024)  /* the most shared memory a block may have on an H100 */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

/* The tile sizes per head dim, one table (as ThunderKittens' tile-dims struct). A head dim d (a
 * multiple of 8 up to 256) runs in the tile of the next DK in {64, 96, 128, 192, 256}; the columns
 * from d up are zero-filled by TMA and never written out.
 *   DK  the columns S = Q K^T reads: DK / 16 k16 steps.
 *   CH  64-column chunks a row of Q, K, V or O takes in shared memory.
 *   DV  the columns of O += P V: one wgmma of N = DV per k16 step, DV = DK. V is read N-major
 *       in the swizzled chunks of 64 columns, but N need not fill the last one: at d = 96 the
 *       wgmma reads the second chunk's first 32 columns (N = 96), and O takes 48 registers, not 64.
 *   BC  keys per K/V tile: the largest that leaves two stages in shared memory with
 *       FlashAttention-3's choices (128 up to d = 128, 112 at 192, 80 at 256); WIDE (not causal,
 *       d = 128) takes FlashAttention-3's wider non-causal tile, 176. Three consumers at d = 96
 *       take 96 (below).
 *   STAGES  K/V stages: as many as fit, at most 3; two with three consumers at d = 96, where a
 *       third would leave 07e's staged O (48 KB) neither space of its own nor one or all V stages.
 *   CW  consumer warpgroups, 64 query rows each: BR = 64 CW rows per block (per work tile in
 *       07e). Three at d = 64 and 96 (FlashAttention-3's 192-row tile) where the rows allow it
 *       (f3_pick), two elsewhere. At d = 64 the softmax costs twice as much per FLOP as at
 *       d = 128 (at d = 96, 1.3 times), and a third warpgroup gives the SM more of it to
 *       interleave with the products. A consumer then gets 160 registers instead of 240: at
 *       d = 64, S of a 128-key tile (64), P (32) and O (32) fit, a 192-key tile's S (96) would not
 *       leave room for the rest; at d = 96, with O at 48, S of a 96-key tile (48) and P (24) fit,
 *       a 128-key tile's made ptxas spill 144 bytes and serialise the wgmmas.
 *   TURNS  07d and 07e keep 07c's turns between the consumers up to d = 128 (intra_overlap.cuh).
 *   O_SEP  07e stages O (128 x DV) in shared memory of its own where that still fits; else over
 *       O_STAGES of the V stages (persistent.cuh says which). */
template <int DK_, bool WIDE = false, int CW_ = 2>
struct f3_tile {
    static constexpr bool FP8 = false;                 /* 07g's tiles are fp8.cuh's f8_tile */
    static constexpr int DK = DK_;
    static constexpr int CH = (DK + 63) / 64;
    static constexpr int DV = DK;
    static constexpr int BC = WIDE ? 176 : CW_ == 3 && DK == 96 ? 96 : DK <= 128 ? 128 : DK <= 192 ? 112 : 80;
    static constexpr int CW = CW_;
    static constexpr int BR = 64 * CW;
    static constexpr int REGS = CW == 3 ? 160 : 240;   /* per consumer thread after setmaxnreg (07b on) */
    static constexpr uint32_t q_bytes = BR * CH * 128, kv_bytes = BC * CH * 128, o_bytes = q_bytes;
    static constexpr int ROWB = 128, PK = BC / 16;     /* bytes a row of a chunk; k steps of P V */
    static constexpr int FIT = (int)((F3_SMEM_MAX - 2048 - q_bytes) / (2 * kv_bytes));
    static constexpr int STAGES = CW == 3 && DK == 96 ? 2 : FIT < 3 ? FIT : 3;
    static constexpr bool TURNS = DK <= 128;
    static constexpr size_t ring = 1024 + q_bytes + 2 * STAGES * kv_bytes + 256;   /* + alignment, barriers */
    static constexpr bool O_SEP = ring + q_bytes <= F3_SMEM_MAX;
    static constexpr int O_STAGES = O_SEP ? 0 : (int)((q_bytes + kv_bytes - 1) / kv_bytes);
    static constexpr size_t smem = ring + (O_SEP ? q_bytes : 0);
    static_assert(!WIDE || DK == 128, "the wide tile at d = 128");
    static_assert(CW == 2 || (CW == 3 && DK <= 96), "three consumers at d = 64 and 96");
    static_assert(STAGES >= 2 && BC % 16 == 0 && smem <= F3_SMEM_MAX, "two stages fit");
    static_assert(O_STAGES == 1 || O_STAGES == 0 || O_STAGES == STAGES, "07e's O staging: its own, one V stage or all");
};

typedef struct f3_params {
    void *o;
    float *lse;
    int Hq, Hkv, N, M, causal, d;
    float scale_log2;
    int n_mblocks, n_bh, tiles, sec;   /* 07e's schedule: query blocks, heads, work tiles, heads per L2 section */
    int *sched;                        /* 07e, causal: the next work tile to hand out, and the blocks done */
} f3_params;

/* Two floats as two elements of the storage type in one register (the lower column low). */
template <bool BF16>
static __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
    if constexpr (BF16) {
        __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&b);
    } else {
        return pack_half2(lo, hi);
    }
}

/* The mbarriers of a block, by place: Q full (TMA) and empty (07e: the consumers are done with it),
 * O full and empty (07e: the staged O is written / has left), the work-tile slot full and empty
 * (07b-07e), then per stage K full, V full, K empty, V empty (07a: one full barrier per stage for
 * K and V, the K slot). */
enum { F3_QFULL = 0, F3_QEMPTY, F3_OFULL, F3_OEMPTY, F3_SFULL, F3_SEMPTY, F3_RING };

/* Where a block's tiles live: 1024-aligned shared memory, Q, the K stages, the V stages, 07e's O
 * staging space where it has its own (O_SEP), then the mbarriers and the slot in which the
 * producer of 07b-07e tells the consumers their next work tile. */
template <class T>
struct f3_smem {
    unsigned char *base;
    __device__ __forceinline__ f3_smem(unsigned char *raw)
    {
        const uint32_t a = smem_addr(raw);
        base = raw + (((a + 1023) & ~1023u) - a);
    }
    __device__ __forceinline__ __half *q() const { return reinterpret_cast<__half *>(base); }
    __device__ __forceinline__ __half *k(int s) const { return reinterpret_cast<__half *>(base + T::q_bytes + s * T::kv_bytes); }
    __device__ __forceinline__ __half *v(int s) const { return k(T::STAGES + s); }
    __device__ __forceinline__ uint64_t *bar() const
    {
        return reinterpret_cast<uint64_t *>(base + T::q_bytes + 2 * T::STAGES * T::kv_bytes + (T::O_SEP ? T::o_bytes : 0));
    }
    __device__ __forceinline__ int *slot() const { return reinterpret_cast<int *>(bar() + F3_RING + 4 * T::STAGES); }
};

/* The FP8 step's forms of the pieces below (fp8.cuh), taken where T::FP8. */
template <bool FP8> struct f3_rows_fp8 {};
template <class T> struct f3_rows;
template <class T> struct f3_cons;
template <class T>
static __device__ __forceinline__ void f8_copy_q(const f3_smem<T> &sm, const CUtensorMap *tq, uint64_t *bar, int m0, int bh);
template <class T, bool V>
static __device__ __forceinline__ void f8_copy_kv(void *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp);
template <class T>
static __device__ __forceinline__ void f8_issue_s(float (&s)[T::BC / 2], uint32_t q_wg, uint32_t k_base);
template <class T>
static __device__ __forceinline__ void f8_issue_pv(f3_rows<T> &r, const uint32_t (&pa)[T::PK][4], uint32_t v_base);
template <class T>
static __device__ __forceinline__ void f8_pack(const float (&s)[T::BC / 2], uint32_t (&pa)[T::PK][4]);
template <class T>
static __device__ __forceinline__ void f8_factors(const f3_rows<T> &r, const f3_params &p, float &sl2, float &lr, float &ir);
template <class T>
static __device__ __forceinline__ void f8_tile_begin(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int j);
template <class T>
static __device__ __forceinline__ void f8_wait_pv(const f3_rows<T> &r);
template <class T>
static __device__ __forceinline__ float f8_o_scale(const f3_rows<T> &r);

/* The copies of a block's Q tile, and of K or V (V: V's tile) tile j into stage s, each box of 64
 * columns; the f3_load_* forms also announce the bytes on the barrier. */
template <class T>
static __device__ __forceinline__ void f3_load_q(const f3_smem<T> &sm, const CUtensorMap *tq, uint64_t *bar, int m0, int bh)
{
    mbar_arrive_expect_tx(bar, T::q_bytes);
    if constexpr (T::FP8) f8_copy_q<T>(sm, tq, bar, m0, bh);
    else for (int ch = 0; ch < T::CH; ch++) tma_load_3d(sm.q() + ch * T::BR * 64, tq, bar, ch * 64, m0, bh);
}
template <class T, bool V = false>
static __device__ __forceinline__ void f3_copy_kv(__half *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
{
    if constexpr (T::FP8) f8_copy_kv<T, V>(dst, map, bar, j, kvp);
    else for (int ch = 0; ch < T::CH; ch++) tma_load_3d(dst + ch * T::BC * 64, map, bar, ch * 64, j * T::BC, kvp);
}
template <class T, bool V = false>
static __device__ __forceinline__ void f3_load_kv(__half *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
{
    mbar_arrive_expect_tx(bar, T::kv_bytes);
    f3_copy_kv<T, V>(dst, map, bar, j, kvp);
}

/* A warpgroup's 64 rows: O (float32), and per row (row0, row0 + 8) m and l, in registers. O's
 * element 4b + {0, 1} (+ {2, 3}: row0 + 8) is column 8b + 2c + {0, 1}, c = lane % 4. */
template <class T>
struct f3_rows : f3_rows_fp8<T::FP8> {   /* 07g: the scales of the work tile and K/V tile (fp8.cuh); else empty */
    float o[T::DV / 2], m[2], l[2];
};

/* The pieces of one K/V tile for one warpgroup. f3_issue_s: S = Q K^T, DK / 16 wgmmas with both
 * operands K-major in shared memory (issued, not waited for). f3_softmax: once S is there, the
 * masks (keys past M, the causal corner) and the online softmax on the accumulators, in log2 units
 * as in rung 05: S becomes the unnormalised P, l is updated, and O is rescaled (or, DEFER, the
 * factors handed back: a product may still be adding into O). f3_pack: P packed to the A
 * operand of the next product. f3_issue_pv: O += P V, Bc / 16 wgmmas, P from registers, V
 * N-major (issued, not waited for). */
template <class T, bool BF16>
static __device__ __forceinline__ void f3_issue_s(float (&s)[T::BC / 2], uint32_t q_wg, uint32_t k_base)
{
    if constexpr (T::FP8) {
        f8_issue_s<T>(s, q_wg, k_base);
    } else {
#pragma unroll
        for (int kk = 0; kk < T::DK / 16; kk++) {
            const uint32_t off = (kk % 4) * 32;        /* 16 columns = 32 bytes into the chunk */
            const uint64_t da = wgmma_desc(q_wg + (kk / 4) * T::BR * 128 + off, 16, 1024);
            const uint64_t db = wgmma_desc(k_base + (kk / 4) * T::BC * 128 + off, 16, 1024);
            wgmma_ss<T::BC, BF16>(s, da, db, kk > 0);
        }
    }
}

template <class T, bool BF16>
static __device__ __forceinline__ void f3_issue_pv(f3_rows<T> &r, const uint32_t (&pa)[T::PK][4], uint32_t v_base)
{
    if constexpr (T::FP8) {
        f8_issue_pv<T>(r, pa, v_base);
    } else {
#pragma unroll
        for (int kb = 0; kb < T::PK; kb++)
            wgmma_rs<T::DV, BF16>(r.o, pa[kb], wgmma_desc(v_base + kb * 2048, T::BC * 128, 1024), 1);
    }
}

template <class T>
static __device__ __forceinline__ void f3_rescale(f3_rows<T> &r, const float (&alpha)[2])
{
#pragma unroll
    for (int i = 0; i < T::DV / 2; i += 4) {
        r.o[i] *= alpha[0];
        r.o[i + 1] *= alpha[0];
        r.o[i + 2] *= alpha[1];
        r.o[i + 3] *= alpha[1];
    }
}

/* The softmax of a step: FlashAttention-3's (07a-07e: O rescaled on every tile) or 07f's (O
 * rescaled only when a row's max has grown by more than 2^F3_LAZY: lazy_rescale.cuh). */
enum { F3_SOFT_FA3, F3_SOFT_LAZY };

static __device__ __forceinline__ bool f3_lazy_keep(const float (&m_old)[2], const float (&m_new)[2]);

/* Returns whether O must be rescaled by alpha (always, but in 07f; the same for the whole
 * warp). A row that has seen no key yet keeps m = -inf; its exponentials are taken against 0. */
template <class T, int SOFT = F3_SOFT_FA3, bool DEFER = false>
static __device__ __forceinline__ bool f3_softmax(f3_rows<T> &r, float (&s)[T::BC / 2], int key0, int row0, int m0,
                                                  const f3_params &p, float (&alpha)[2])
{
    constexpr int BC = T::BC, SN = BC / 2;
    const int c = threadIdx.x % 4;
    if (key0 + BC > p.M || (p.causal && key0 + BC - 1 > m0 + p.M - p.N)) {
        int lim[2];                               /* per row: the keys it sees, counted from this thread's first */
#pragma unroll
        for (int hi = 0; hi < 2; hi++)
            lim[hi] = (p.causal ? min(p.M, row0 + hi * 8 + 1 + p.M - p.N) : p.M) - key0 - 2 * c;
#pragma unroll
        for (int i = 0; i < SN; i++)              /* the element's column offset is a constant */
            if ((i / 4) * 8 + (i & 1) >= lim[(i / 2) & 1]) s[i] = -INFINITY;
    }
    float sl2 = p.scale_log2, lr = 0.0f, ir = 1.0f;   /* 07g: S descaled; P times r_j, l by 1 / r_j (fp8.cuh) */
    if constexpr (T::FP8) f8_factors<T>(r, p, sl2, lr, ir);
    float m_new[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < SN; i += 4) mx = fmaxf(mx, fmaxf(s[i + 2 * hi], s[i + 2 * hi + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        m_new[hi] = fmaxf(r.m[hi], mx * sl2);
    }
    const bool keep = SOFT != F3_SOFT_FA3 && f3_lazy_keep(r.m, m_new);   /* the old maxima stay */
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        if (!keep) {
            alpha[hi] = online_alpha(r.m[hi], online_offset(m_new[hi]));
            r.m[hi] = m_new[hi];
        }
        float m_use = online_offset(r.m[hi]);
        if constexpr (T::FP8) m_use -= lr;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < SN; i += 4)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float pe = online_p(s[i + 2 * hi + e], sl2, m_use);
                s[i + 2 * hi + e] = pe;
                sum += pe;
            }
        if constexpr (T::FP8) sum *= ir;
        r.l[hi] = keep ? r.l[hi] + sum : r.l[hi] * alpha[hi] + sum;
    }
    if (!DEFER && !keep) f3_rescale(r, alpha);
    return !keep;
}

template <class T, bool BF16>
static __device__ __forceinline__ void f3_pack(const float (&s)[T::BC / 2], uint32_t (&pa)[T::PK][4])
{
    if constexpr (T::FP8) {
        f8_pack<T>(s, pa);
    } else {
#pragma unroll
        for (int kb = 0; kb < T::PK; kb++) {      /* two n8 blocks of S = one k16 step of A */
            pa[kb][0] = pack2<BF16>(s[8 * kb + 0], s[8 * kb + 1]);
            pa[kb][1] = pack2<BF16>(s[8 * kb + 2], s[8 * kb + 3]);
            pa[kb][2] = pack2<BF16>(s[8 * kb + 4], s[8 * kb + 5]);
            pa[kb][3] = pack2<BF16>(s[8 * kb + 6], s[8 * kb + 7]);
        }
    }
}

template <class T>
static __device__ __forceinline__ void f3_fence_o(f3_rows<T> &r)
{
    wgmma_fence_regs(r.o);
}

/* S = Q K^T of one tile, issued and waited for. */
template <class T, bool BF16>
static __device__ __forceinline__ void f3_product_s(float (&s)[T::BC / 2], uint32_t q_wg, uint32_t k_base)
{
    wgmma_fence();
    f3_issue_s<T, BF16>(s, q_wg, k_base);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_regs(s);
}

/* O += P V of one tile, issued and waited for. */
template <class T, bool BF16>
static __device__ __forceinline__ void f3_product_pv(f3_rows<T> &r, const uint32_t (&pa)[T::PK][4], uint32_t v_base)
{
    f3_fence_o(r);
    wgmma_fence();
    f3_issue_pv<T, BF16>(r, pa, v_base);
    wgmma_commit();
    wgmma_wait<0>();
    f3_fence_o(r);
}

/* What O / l is multiplied by on its way out: 1, but 07g's V descale (fp8.cuh). */
template <class T>
static __device__ __forceinline__ float f3_o_scale(const f3_rows<T> &r)
{
    if constexpr (T::FP8) return f8_o_scale<T>(r);
    else return 1.0f;
}

/* A row's LSE (natural log) from its m (log2 units, scale included) and l; -inf where it saw no key. */
static __device__ __forceinline__ float f3_lse(float m, float l)
{
    return m != -INFINITY ? (m + log2f(l)) * LN2 : -INFINITY;
}

/* The rows' l across their quads; row0's O / l and LSE written directly from the registers (07a to
 * 07d); rows past N and columns past d are not. */
template <class T, bool BF16>
static __device__ __forceinline__ void f3_store(const f3_rows<T> &r, int row0, int bh, const f3_params &p)
{
    const int c = threadIdx.x % 4;
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        float l = r.l[hi];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = row0 + hi * 8;
        if (row >= p.N) continue;
        const float inv = r.m[hi] != -INFINITY ? 1.0f / l : 0.0f;
        uint32_t *orow = reinterpret_cast<uint32_t *>(p.o) + ((size_t)bh * p.N + row) * p.d / 2;   /* two elements */
#pragma unroll
        for (int i = 0; i < T::DV / 2; i += 4) {
            const int col = (i / 4) * 8 + 2 * c;
            if (col < p.d)
                orow[col / 2] = pack2<BF16>(r.o[i + 2 * hi] * inv, r.o[i + 2 * hi + 1] * inv);
        }
        if (c == 0) p.lse[(size_t)bh * p.N + row] = f3_lse(r.m[hi], l);
    }
}

/* The K/V tiles a query block of br rows at m0 loads: up to the keys its last row sees (bottom-right
 * causal). */
static __device__ __forceinline__ int f3_tiles(const f3_params &p, int m0, int br, int bc)
{
    const int kend = p.causal ? min(p.M, m0 + br + p.M - p.N) : p.M;
    return kend > 0 ? (kend + bc - 1) / bc : 0;
}

/* 07a: every thread computes; thread 0 also issues the copies. */
template <class T, bool BF16>
__global__ void __launch_bounds__(128 * T::CW, 1)
fa3_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
           const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap to, f3_params p)
{
    constexpr int STAGES = T::STAGES;
    extern __shared__ unsigned char smem_raw[];
    const f3_smem<T> sm(smem_raw);
    uint64_t *bar = sm.bar(), *full = bar + F3_RING;   /* one barrier per stage for its K and V */
    const int wg = threadIdx.x / 128, w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq;
    const int kvp = b * p.Hkv + h / (p.Hq / p.Hkv);                     /* K/V plane */
    const int m0 = blockIdx.x * T::BR, n_tiles = f3_tiles(p, m0, T::BR, T::BC);
    (void)to;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv);
        mbar_init(&bar[F3_QFULL], 1);
        for (int i = 0; i < STAGES; i++) mbar_init(&full[i], 1);
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        f3_load_q<T>(sm, &tq, &bar[F3_QFULL], m0, bh);
        for (int j = 0; j < STAGES && j < n_tiles; j++) {
            mbar_arrive_expect_tx(&full[j], 2 * T::kv_bytes);
            f3_copy_kv<T>(sm.k(j), &tk, &full[j], j, kvp);
            f3_copy_kv<T>(sm.v(j), &tv, &full[j], j, kvp);
        }
    }

    f3_rows<T> r = {};
    r.m[0] = r.m[1] = -INFINITY;
    const int row0 = m0 + wg * 64 + w * 16 + g;                          /* this thread's rows: row0, row0 + 8 */
    const uint32_t q_wg = smem_addr(sm.q()) + wg * 64 * 128;              /* its warpgroup's 64 rows */
    float s[T::BC / 2], alpha[2];
    uint32_t pa[T::PK][4];
    mbar_wait(&bar[F3_QFULL], 0);
    for (int j = 0; j < n_tiles; j++) {
        const int st = j % STAGES;
        mbar_wait(&full[st], (j / STAGES) & 1);
        f3_product_s<T, BF16>(s, q_wg, smem_addr(sm.k(st)));
        f3_softmax<T>(r, s, j * T::BC, row0, m0, p, alpha);
        f3_pack<T, BF16>(s, pa);
        f3_product_pv<T, BF16>(r, pa, smem_addr(sm.v(st)));
        __syncthreads();                        /* every warpgroup is done with this stage */
        if (threadIdx.x == 0 && j + STAGES < n_tiles) {
            mbar_arrive_expect_tx(&full[st], 2 * T::kv_bytes);
            f3_copy_kv<T>(sm.k(st), &tk, &full[st], j + STAGES, kvp);
            f3_copy_kv<T>(sm.v(st), &tv, &full[st], j + STAGES, kvp);
        }
    }
    f3_store<T, BF16>(r, row0, bh, p);
}

/* ---- host: the variants (fp8.cuh, included below, adds 07g's host code) --------------------- */

typedef void (*f3_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap, f3_params);

typedef struct f3_variant {
    f3_kernel_fn kernel;
    size_t smem;
    int br, bc, threads, dk;
} f3_variant;

enum { F3_07A, F3_07B, F3_07C, F3_07D, F3_07E, F3_07F, F3_07G };

static const char *f3_launch(const attn_args *a, cudaStream_t st, const f3_variant &v, int var, const CUtensorMap *m);

#include "warp_specialized.cuh"        /* 07b's skeleton and loop; 07c-07e: their loops and schedule */
#include "ping_pong.cuh"
#include "intra_overlap.cuh"
#include "persistent.cuh"
#include "lazy_rescale.cuh"
#include "fp8.cuh"                     /* 07g: the FP8 forms of the pieces, the quantize kernels */

/* ---- host ---------------------------------------------------------------------------------- */

/* The kernel of a variant for a tile and storage type. */
template <class T, bool BF16>
static f3_kernel_fn f3_kernel_of(int var)
{
    switch (var) {
    case F3_07A: return fa3_kernel<T, BF16>;
    case F3_07B: return fa3_ws_kernel<T, BF16, F3_LOOP_WS, false, F3_SOFT_FA3>;
    case F3_07C: return fa3_ws_kernel<T, BF16, F3_LOOP_PP, false, F3_SOFT_FA3>;
    case F3_07D: return fa3_ws_kernel<T, BF16, F3_LOOP_OV, false, F3_SOFT_FA3>;
    case F3_07E: return fa3_ws_kernel<T, BF16, F3_LOOP_OV, true, F3_SOFT_FA3>;
    default:     return fa3_ws_kernel<T, BF16, F3_LOOP_OV, true, F3_SOFT_LAZY>;
    }
}

template <class T>
static void f3_fill(f3_variant *v, int var, int bf16)
{
    *v = (f3_variant){bf16 ? f3_kernel_of<T, true>(var) : f3_kernel_of<T, false>(var), T::smem, T::BR, T::BC,
                      128 * (var == F3_07A ? T::CW : T::CW + 1), T::DK};
}

/* The tile of a shape: d rounded up to the next DK of the table.
 * - d = 128: the wide tile when not causal and a row block sees at least 16 wide tiles. Below
 *   that, the narrow tile was faster on the H100 (results/lab/h100-fa3-tiles.csv, N = 512 and
 *   1024): the wide tile's partial last tile and its longer fill cost more than it saves.
 * - d = 64: three consumers (192 rows) unless 192-row blocks cover more than 5% more rows than
 *   128-row ones (N = 512 and 1024: 12.5% more), causal or not. On the H100 three consumers were
 *   2-13% faster on 10 of 11 shapes from N = 2048 up, and 8-9% slower at N = 512 and 1024 causal
 *   (results/lab/h100-fa3-d64.csv); they also beat the wide 192-key tile with two consumers, which
 *   d = 64 took before when not causal.
 * - d = 96: three consumers (192 rows, 96-key tiles) by the same rule; on the H100 1-8% faster than
 *   two (fastest launches) on 6 of the 7 shapes it takes, 2% slower at N = 2048 causal
 *   (results/lab/h100-fa3-d96.csv: rows -dv96cw3b against -dv96). */
static int f3_three_consumers(int n)
{
    const int rows3 = (n + 191) / 192 * 192, rows2 = (n + 127) / 128 * 128;
    return 20 * rows3 <= 21 * rows2;
}

static int f3_pick(const attn_shape *s, int var, f3_variant *v)
{
    const int d = s->d, bf16 = s->dtype == ATTN_BF16;
    const int wide = !s->causal && s->M >= 16 * f3_tile<128, true>::BC;
    if (d % 8 || d < 8 || d > 256) return 0;
    if (d <= 64) {
        if (f3_three_consumers(s->N)) f3_fill<f3_tile<64, false, 3> >(v, var, bf16);
        else f3_fill<f3_tile<64> >(v, var, bf16);
    }
    else if (d <= 96) {
        if (f3_three_consumers(s->N)) f3_fill<f3_tile<96, false, 3> >(v, var, bf16);
        else f3_fill<f3_tile<96> >(v, var, bf16);
    }
    else if (d <= 128) { if (wide) f3_fill<f3_tile<128, true> >(v, var, bf16); else f3_fill<f3_tile<128> >(v, var, bf16); }
    else if (d <= 192) f3_fill<f3_tile<192> >(v, var, bf16);
    else f3_fill<f3_tile<256> >(v, var, bf16);
    return 1;
}

static int f3_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    f3_variant v;
    if (env->cc_major != 9) snprintf(why, n, "rung 07 needs a Hopper GPU (sm_90: wgmma, TMA); this one is sm_%d%d",
                                      env->cc_major, env->cc_minor);
    else if (!f3_pick(s, F3_07A, &v))
        snprintf(why, n, "rung 07 takes head dims that are multiples of 8 up to 256 (TMA rows of 16-byte multiples; d = %d)", s->d);
    else if (attn_refuse_paged(s, why, n)) return 1;
    else if (s->seqlens_k) snprintf(why, n, "rung 07 takes one KV length for every request (varlen decode is rung 06's job)");
    else if (v.smem > env->smem_per_block_optin) snprintf(why, n, "needs %zu KB of shared memory per block", v.smem / 1024);
    else return 0;
    return 1;
}

static size_t f3_workspace(const attn_shape *s, const attn_env *env)
{
    (void)s; (void)env;
    return 0;   /* O, m and l live in registers */
}

static size_t f3_workspace_07e(const attn_shape *s, const attn_env *env)
{
    (void)s; (void)env;
    return 2 * sizeof(int);   /* the causal schedule's counters: the next work tile, the blocks done */
}

/* 07e's L2 sections: the query heads whose K and V (together) fit in 32 of the H100's 50 MB of L2,
 * rounded down to a power of two KV heads, times the query heads per KV head. */
static int f3_section(const attn_shape *s)
{
    const double kv_head = 2.0 * s->M * s->d * 2.0;
    int kv = 1;
    while (kv * 2 <= s->Hkv * s->B && (kv * 2) * kv_head <= 32.0 * 1024 * 1024) kv *= 2;
    return kv * (s->Hq / s->Hkv);
}

/* The tensor maps depend only on the buffers and the shape: built once and reused while they stay
 * the same, so that no host work sits between the timing events. */
static struct {
    const void *q, *k, *v, *o;
    int B, Hq, Hkv, N, M, d, dtype, br, bc, valid;
    CUtensorMap m[4];                            /* Q, K, V, O */
} maps;

static const char *f3_run(const attn_args *a, cudaStream_t st, int var)
{
    const attn_shape *s = &a->shape;
    f3_variant v;
    if (!f3_pick(s, var, &v)) return "rung 07: unsupported head dim";
    if (!maps.valid || maps.q != a->q || maps.k != a->k || maps.v != a->v || maps.o != a->o || maps.B != s->B ||
        maps.Hq != s->Hq || maps.Hkv != s->Hkv || maps.N != s->N || maps.M != s->M || maps.d != s->d ||
        maps.dtype != (int)s->dtype || maps.br != v.br || maps.bc != v.bc) {
        const char *err;
        if ((err = tensor_map_3d(&maps.m[0], a->q, s->dtype, s->d, s->N, s->B * s->Hq, v.br)) ||
            (err = tensor_map_3d(&maps.m[1], a->k, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc)) ||
            (err = tensor_map_3d(&maps.m[2], a->v, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc)) ||
            (err = tensor_map_3d(&maps.m[3], a->o, s->dtype, s->d, s->N, s->B * s->Hq, v.br))) {
            maps.valid = 0;
            return err;
        }
        maps.q = a->q; maps.k = a->k; maps.v = a->v; maps.o = a->o;
        maps.B = s->B; maps.Hq = s->Hq; maps.Hkv = s->Hkv; maps.N = s->N; maps.M = s->M; maps.d = s->d;
        maps.dtype = s->dtype; maps.br = v.br; maps.bc = v.bc;
        maps.valid = 1;
    }
    return f3_launch(a, st, v, var, maps.m);
}

/* The launch of a variant's kernel on the tensor maps m (Q, K, V, O): 07a-07d one block per work
 * tile, 07e-07g one per SM (and 07e's counters zeroed once for a workspace). */
static const char *f3_launch(const attn_args *a, cudaStream_t st, const f3_variant &v, int var, const CUtensorMap *m)
{
    const attn_shape *s = &a->shape;
    RUNG_CUDA(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
    const int n_mblocks = (s->N + v.br - 1) / v.br, n_bh = s->B * s->Hq;
    const f3_params p = {a->o, a->lse, s->Hq, s->Hkv, s->N, s->M, s->causal, s->d, s->scale * LOG2E,
                         n_mblocks, n_bh, n_mblocks * n_bh, f3_section(s), (int *)a->workspace};
    dim3 grid(n_mblocks, n_bh);
    if (var >= F3_07E) {
        static const void *zeroed;             /* 07e's two counters start at 0, and each launch leaves them so */
        if (a->workspace != zeroed) {
            RUNG_CUDA(cudaMemsetAsync(a->workspace, 0, 2 * sizeof(int), st));
            zeroed = a->workspace;
        }
        grid = dim3(p.tiles < a->env.sm_count ? p.tiles : a->env.sm_count);
    }
    v.kernel<<<grid, v.threads, v.smem, st>>>(m[0], m[1], m[2], m[3], p);
    RUNG_LAUNCHED(fa3_kernel);
    return NULL;
}

static const char *run_07a(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07A); }
static const char *run_07b(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07B); }
static const char *run_07c(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07C); }
static const char *run_07d(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07D); }
static const char *run_07e(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07E); }
static const char *run_07f(const attn_args *a, cudaStream_t st) { return f3_run(a, st, F3_07F); }

/* The tile a shape ran in, for the CSV's extra field. */
static void f3_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    f3_variant v;
    (void)env;
    if (f3_pick(s, F3_07A, &v)) snprintf(buf, len, "tile=%dx%d;dk=%d", v.br, v.bc, v.dk);
    else if (len) buf[0] = '\0';
}

static const rung rung_07a = {
    "07a", "fa3: TMA + wgmma",
    "Hopper: K/V tiles by TMA on mbarriers, S = Q K^T and O += P V on wgmma (P from registers); "
    "two warpgroups, no overlap of the products yet",
    f3_unsupported, f3_workspace, run_07a, f3_describe, NULL,
};

static const rung rung_07b = {
    "07b", "fa3: warp-specialized",
    "07a + a producer warpgroup issues the TMA copies into rings of full/empty mbarriers (K and V "
    "apart); two consumer warpgroups compute; setmaxnreg gives the registers to the consumers",
    f3_unsupported, f3_workspace, run_07b, f3_describe, NULL,
};

static const rung rung_07c = {
    "07c", "fa3: ping-pong",
    "07b + the two consumer warpgroups take turns on the tensor cores (named barriers): one's "
    "softmax runs under the other's P V and Q K^T",
    f3_unsupported, f3_workspace, run_07c, f3_describe, NULL,
};

static const rung rung_07d = {
    "07d", "fa3: ping-pong + intra-warpgroup overlap",
    "07c + inside each consumer, the softmax of tile j runs while the tensor cores do P V of tile "
    "j - 1 (FlashAttention-3's kernel); P made and O rescaled once that product is done",
    f3_unsupported, f3_workspace, run_07d, f3_describe, NULL,
};

static const rung rung_07e = {
    "07e", "fa3: persistent",
    "07d + one block per SM walks the work tiles (longest first when causal, heads in L2-sized "
    "sections); Q and K of the next tile load under this one; O leaves through shared memory by TMA",
    f3_unsupported, f3_workspace_07e, run_07e, f3_describe, NULL,
};

static const rung rung_07f = {
    "07f", "fa3: lazy rescale",
    "07e + O is rescaled only when a row's max has grown by more than 2^8 since the max its "
    "exponentials use (FlashAttention-4): the decision per warp, so it does not diverge",
    f3_unsupported, f3_workspace_07e, run_07f, f3_describe, NULL,
};

static const rung rung_07g = {
    "07g", "fa3: FP8",
    "07f + Q, K, V in float8 e4m3 on FP8 wgmma (k32), quantized by the step: a scale per block of "
    "rows, Q and K through a random Hadamard map; P's bytes and V's keys in one permuted order",
    f8_unsupported, f8_workspace, f8_run, f8_describe, f8_prepare,
};

/* 07g with f8_tile's HOLD (fp8.cuh, f8_wait_pv): listed after 07g, so the rung's own FP8 step (the
 * last); measured against 07g by lab/fp8_hold_ab.sh (results/lab/h100-hold-timing.csv). */
static const rung rung_07g_ov = {
    "07g-ov", "fa3: FP8, softmax under its own P V",
    "07g + the wait for P V of tile j - 1 tied to tile j's softmax sums, so that ptxas cannot lift it "
    "above the exponentials: the softmax of tile j runs under P V of tile j - 1 (07d's overlap) again",
    f8_unsupported, f8_workspace, f8_run_ov, f8_describe, f8_prepare,
};

extern "C" const rung *const rung_variants[] = {&rung_07a, &rung_07b, &rung_07c, &rung_07d, &rung_07e,
                                                 &rung_07f, NULL};

/* The FP8 step (attn.h): listed after 07f, the rung's own for --dtype e4m3; 07f stays rung 07's own. */
extern "C" const rung *const rung_fp8_variants[] = {&rung_07g, &rung_07g_ov, NULL};
