/* Step 07a: FlashAttention-3's first step (Shah et al., 2024, arXiv:2407.08608): the tiles come in
 * by TMA and both products run on wgmma (sm_90a only). Against 05c: wgmma reads its operands from
 * shared memory through descriptors (no ldmatrix); one thread copies a whole tile, counted in bytes
 * on an mbarrier (no cp.async); TMA's 128B swizzle replaces 05c's own.
 *
 * Grid (ceil(N / BR), B * Hq). Block: CW warpgroups, 64 query rows each; warp w owns rows
 * [16 w, 16 w + 16), those of wgmma's m64 accumulators. Shared memory (f3_smem): Q, STAGES K tiles,
 * STAGES V tiles, the mbarriers; thread 0 refills a stage after a block barrier. */
#ifndef TMA_WGMMA_CUH
#define TMA_WGMMA_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include "../common/attn.h"
#include "../common/hopper.cuh"
#include "../common/online_softmax.cuh"

#define F3_SMEM_MAX (227 * 1024)  /* the most shared memory a block may have on an H100 or H200 */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f
typedef struct f3_params {
    void *o;
    float *lse;
    int Hq, Hkv, N, M, causal, d;
    float scale_log2;
    int n_mblocks, n_bh, tiles, sec;   /* the work tiles: query blocks, heads, their product, heads per L2 section (07e) */
    int *sched;                        /* the workspace: 07e's counters first */
} f3_params;

/* Two floats as two 16-bit elements in one register (the lower column low). */
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
/* What a tile's softmax multiplies by: S into log2 units (sl2), an offset of the exponents (lr), a
 * factor of their sums (ir). A tile with scaled operands folds its descales in (07g). */
typedef struct f3_factors { float sl2, lr, ir; } f3_factors;
/* The tile table, the sizes per head dim in one place. d runs in the tile of the next DK; TMA
 * zero-fills the columns from d up. BC: keys per K/V tile, the most that leaves two stages (as
 * FlashAttention-3's), WIDE at d = 128 not causal. CW: consumer warpgroups, three at d = 64 and 96
 * where the rows allow it (f3_pick), since the softmax weighs more at small d. O_SEP: 07e stages O
 * in space of its own where it fits (else over O_STAGES of the V stages). The members are what of a
 * tile step depends on how the operands are stored (07g has its own tile). */
template <int DK_, bool WIDE, int CW_, bool BF16_>
struct f3_tile {
    static constexpr bool BF16 = BF16_;
    static constexpr int DK = DK_, CH = (DK + 63) / 64, DV = DK, CW = CW_, BR = 64 * CW;
    static constexpr int BC = WIDE ? 176 : CW == 3 && DK == 96 ? 96 : DK <= 128 ? 128 : DK <= 192 ? 112 : 80;
    static constexpr int REGS = CW == 3 ? 160 : 240;
    static constexpr uint32_t q_bytes = BR * CH * 128, kv_bytes = BC * CH * 128, o_bytes = q_bytes;
    static constexpr int ROWB = 128, PK = BC / 16;     /* bytes a row of a chunk; k steps of P V */
    static constexpr int FIT = (int)((F3_SMEM_MAX - 2048 - q_bytes) / (2 * kv_bytes));
    static constexpr int STAGES = CW == 3 && DK == 96 ? 2 : FIT < 3 ? FIT : 3;
    static constexpr size_t ring = 1024 + q_bytes + 2 * STAGES * kv_bytes + 256;   /* + alignment, barriers */
    static constexpr bool O_SEP = ring + q_bytes <= F3_SMEM_MAX;
    static constexpr int O_STAGES = O_SEP ? 0 : (int)((q_bytes + kv_bytes - 1) / kv_bytes);
    static constexpr size_t smem = ring + (O_SEP ? q_bytes : 0);
    static_assert(!WIDE || DK == 128, "the wide tile at d = 128");
    static_assert(CW == 2 || (CW == 3 && DK <= 96), "three consumers at d = 64 and 96");
    static_assert(STAGES >= 2 && BC % 16 == 0 && smem <= F3_SMEM_MAX, "two stages fit");
    static_assert(O_STAGES == 1 || O_STAGES == 0 || O_STAGES == STAGES, "07e's O staging: its own, one V stage or all");

    struct scales {};                                  /* nothing per row beyond O, m and l */

    /* The copies of Q (rows m0.. of plane bh) and of K/V tile j (plane kvp), a box per 64 columns. */
    static __device__ __forceinline__ void copy_q(void *q, const CUtensorMap *map, uint64_t *bar, int m0, int bh)
    {
        for (int ch = 0; ch < CH; ch++) tma_load_3d(static_cast<__half *>(q) + ch * BR * 64, map, bar, ch * 64, m0, bh);
    }
    template <bool V>
    static __device__ __forceinline__ void copy_kv(void *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
    {
        for (int ch = 0; ch < CH; ch++) tma_load_3d(static_cast<__half *>(dst) + ch * BC * 64, map, bar, ch * 64, j * BC, kvp);
    }

    /* S = Q K^T: DK / 16 wgmmas, both operands K-major in shared memory (issued, not waited for). */
    static __device__ __forceinline__ void issue_s(float (&s)[BC / 2], uint32_t q_wg, uint32_t k_base)
    {
        const wgmma_dsc da = wgmma_dsc_of(q_wg, 16, 1024), db = wgmma_dsc_of(k_base, 16, 1024);
#pragma unroll
        for (int kk = 0; kk < DK / 16; kk++) {
            const uint32_t off = (kk % 4) * 32;        /* 16 columns = 32 bytes into the chunk */
            wgmma_ss<BC, BF16>(s, wgmma_dsc_at(da, (kk / 4) * BR * 128 + off), wgmma_dsc_at(db, (kk / 4) * BC * 128 + off), kk > 0);
        }
    }

    /* O += P V: BC / 16 wgmmas, P from registers, V N-major in shared memory (issued, not waited for). */
    static __device__ __forceinline__ void issue_pv(float (&o)[DV / 2], const uint32_t (&pa)[PK][4], uint32_t v_base)
    {
        const wgmma_dsc dv = wgmma_dsc_of(v_base, BC * 128, 1024);
#pragma unroll
        for (int kb = 0; kb < PK; kb++) wgmma_rs<DV, BF16>(o, pa[kb], wgmma_dsc_at(dv, kb * 2048), 1);
    }

    /* P (S's accumulators after the softmax) to the A registers: two n8 blocks of S = one k16 step. */
    static __device__ __forceinline__ void pack(const float (&s)[BC / 2], uint32_t (&pa)[PK][4])
    {
#pragma unroll
        for (int kb = 0; kb < PK; kb++) {
            pa[kb][0] = pack2<BF16>(s[8 * kb + 0], s[8 * kb + 1]);
            pa[kb][1] = pack2<BF16>(s[8 * kb + 2], s[8 * kb + 3]);
            pa[kb][2] = pack2<BF16>(s[8 * kb + 4], s[8 * kb + 5]);
            pa[kb][3] = pack2<BF16>(s[8 * kb + 6], s[8 * kb + 7]);
        }
    }

    template <class R>
    static __device__ __forceinline__ f3_factors factors(const R &, const f3_params &p)
    {
        return {p.scale_log2, 0.0f, 1.0f};
    }
    template <class R>
    static __device__ __forceinline__ float o_scale(const R &) { return 1.0f; }   /* O / l leaves as it is */
    template <class R, class C>
    static __device__ __forceinline__ void tile_begin(R &, const C &, const f3_params &, int) {}   /* no per-tile data */
};

/* A warpgroup's 64 rows: O in wgmma's accumulator layout (hopper.cuh), m and l of row0, row0 + 8. */
template <class T>
struct f3_rows : T::scales {
    float o[T::DV / 2], m[2], l[2];
};
/* A block's shared memory, 1024-aligned: Q, the K stages, the V stages, 07e's O (O_SEP), the mbarriers. */
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
};
/* The copies of Q and of K or V tile j, their bytes announced on bar. */
template <class T>
static __device__ __forceinline__ void f3_load_q(const f3_smem<T> &sm, const CUtensorMap *tq, uint64_t *bar, int m0, int bh)
{
    mbar_arrive_expect_tx(bar, T::q_bytes);
    T::copy_q(sm.q(), tq, bar, m0, bh);
}
template <class T, bool V = false>
static __device__ __forceinline__ void f3_load_kv(__half *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
{
    mbar_arrive_expect_tx(bar, T::kv_bytes);
    T::template copy_kv<V>(dst, map, bar, j, kvp);
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
/* Whether a warp keeps its old maxima: never, as FlashAttention has it (07f's f3_lazy may). */
struct f3_rescale_always {
    static __device__ __forceinline__ bool keep(const float (&)[2], const float (&)[2]) { return false; }
};

/* Around a tile's exponentials a consumer does nothing (07f's f3_exp_turn takes a turn there). */
struct f3_exp_free {
    static constexpr bool TURN = false;
    template <class C> static __device__ __forceinline__ f3_exp_free of(const C &) { return {}; }
    __device__ __forceinline__ float wait() const { return 1.0f; }   /* before the exponentials */
    __device__ __forceinline__ void pass(float) const {}             /* after them, given their sum */
};
/* The softmax of a K/V tile on S's accumulators: the masks (keys past M, the causal corner), then
 * the online softmax in log2 units as in rung 05; S becomes P. Returns whether O must be multiplied
 * by alpha (the caller does it, once no product adds into O). A row that saw no key keeps -inf. */
template <class T, class K = f3_rescale_always, class X = f3_exp_free>
static __device__ __forceinline__ bool f3_softmax(f3_rows<T> &r, float (&s)[T::BC / 2], int key0, int row0, int m0,
                                                  const f3_params &p, float (&alpha)[2], const X &x = X())
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
    const f3_factors f = T::factors(r, p);
    float m_new[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < SN; i += 4) mx = fmaxf(mx, fmaxf(s[i + 2 * hi], s[i + 2 * hi + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        m_new[hi] = fmaxf(r.m[hi], mx * f.sl2);
    }
    const bool keep = K::keep(r.m, m_new);
    const float sl2 = f.sl2 * x.wait();
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        if (!keep) {
            alpha[hi] = online_alpha(r.m[hi], online_offset(m_new[hi]));
            r.m[hi] = m_new[hi];
        }
        const float m_use = online_offset(r.m[hi]) - f.lr;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < SN; i += 4)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float pe = online_p(s[i + 2 * hi + e], sl2, m_use);
                s[i + 2 * hi + e] = pe;
                sum += pe;
            }
        sum *= f.ir;
        r.l[hi] = keep ? r.l[hi] + sum : r.l[hi] * alpha[hi] + sum;
    }
    x.pass(r.l[0] + r.l[1]);
    return !keep;
}

/* S = Q K^T of one tile, issued and waited for. */
template <class T>
static __device__ __forceinline__ void f3_product_s(float (&s)[T::BC / 2], uint32_t q_wg, uint32_t k_base)
{
    wgmma_fence();
    T::issue_s(s, q_wg, k_base);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_regs(s);
}
/* O += P V of one tile, issued and waited for. */
template <class T>
static __device__ __forceinline__ void f3_product_pv(f3_rows<T> &r, const uint32_t (&pa)[T::PK][4], uint32_t v_base)
{
    wgmma_fence_regs(r.o);
    wgmma_fence();
    T::issue_pv(r.o, pa, v_base);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_regs(r.o);
}

/* A row's LSE (natural log) from its m (log2 units, scale included) and l; -inf where it saw no key
 * (l = 0), NaN where a NaN reached it (l NaN, m maybe -inf: fmaxf skips NaN scores). Hence l - inf,
 * not -inf, where m = -inf; a default and an if, not ?:, for the machine code (NOTES.md). */
static __device__ __forceinline__ float f3_lse(float m, float l)
{
    float lse = l - INFINITY;
    if (m != -INFINITY) lse = (m + log2f(l)) * LN2;
    return lse;
}

/* l summed over the row's quad; O / l and the LSE written from the registers (not past N or d). */
template <class T>
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
            if (col < p.d) orow[col / 2] = pack2<T::BF16>(r.o[i + 2 * hi] * inv, r.o[i + 2 * hi + 1] * inv);
        }
        if (c == 0) p.lse[(size_t)bh * p.N + row] = f3_lse(r.m[hi], l);
    }
}
/* The K/V tiles a block of br rows at m0 reads: up to the keys its last row sees (bottom-right). */
static __device__ __forceinline__ int f3_tiles(const f3_params &p, int m0, int br, int bc)
{
    const int kend = p.causal ? min(p.M, m0 + br + p.M - p.N) : p.M;
    return kend > 0 ? (kend + bc - 1) / bc : 0;
}

/* 07a: every thread computes, thread 0 also copies. Barriers: Q's, then one per stage (K and V). */
template <class T>
__global__ void __launch_bounds__(128 * T::CW, 1)
fa3_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
           const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap to, f3_params p)
{
    constexpr int STAGES = T::STAGES;
    extern __shared__ unsigned char smem_raw[];
    const f3_smem<T> sm(smem_raw);
    uint64_t *qfull = sm.bar(), *full = qfull + 1;
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0), w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq;
    const int kvp = b * p.Hkv + h / (p.Hq / p.Hkv);                     /* K/V plane */
    const int m0 = blockIdx.x * T::BR, n_tiles = f3_tiles(p, m0, T::BR, T::BC);
    (void)to;
    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv);
        mbar_init(qfull, 1);
        for (int i = 0; i < STAGES; i++) mbar_init(&full[i], 1);
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        f3_load_q<T>(sm, &tq, qfull, m0, bh);
        for (int j = 0; j < STAGES && j < n_tiles; j++) {
            mbar_arrive_expect_tx(&full[j], 2 * T::kv_bytes);
            T::template copy_kv<false>(sm.k(j), &tk, &full[j], j, kvp);
            T::template copy_kv<true>(sm.v(j), &tv, &full[j], j, kvp);
        }
    }

    f3_rows<T> r = {};
    r.m[0] = r.m[1] = -INFINITY;
    const int row0 = m0 + wg * 64 + w * 16 + g;                          /* this thread's rows: row0, row0 + 8 */
    const uint32_t q_wg = smem_addr(sm.q()) + wg * 64 * 128;              /* its warpgroup's 64 rows */
    float s[T::BC / 2], alpha[2];
    uint32_t pa[T::PK][4];
    mbar_wait(qfull, 0);
    for (int j = 0; j < n_tiles; j++) {
        const int st = j % STAGES;
        mbar_wait(&full[st], (j / STAGES) & 1);
        f3_product_s<T>(s, q_wg, smem_addr(sm.k(st)));
        if (f3_softmax<T>(r, s, j * T::BC, row0, m0, p, alpha)) f3_rescale(r, alpha);
        T::pack(s, pa);
        f3_product_pv<T>(r, pa, smem_addr(sm.v(st)));
        __syncthreads();                        /* every warpgroup is done with this stage */
        if (threadIdx.x == 0 && j + STAGES < n_tiles) {
            mbar_arrive_expect_tx(&full[st], 2 * T::kv_bytes);
            T::template copy_kv<false>(sm.k(st), &tk, &full[st], j + STAGES, kvp);
            T::template copy_kv<true>(sm.v(st), &tv, &full[st], j + STAGES, kvp);
        }
    }
    f3_store<T>(r, row0, bh, p);
}

#endif
