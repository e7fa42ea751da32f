/* Rung 07, step a: FlashAttention-3's first step (Shah et al., 2024, arXiv:2407.08608) on Hopper:
 * the tiles come in through the tensor-memory accelerator (TMA) and both products run on wgmma.
 * sm_90a only (wgmma); elsewhere the rung refuses.
 *
 * Grid (ceil(N / 128), B * Hq). Block: two warpgroups (256 threads); warpgroup wg owns query rows
 * [64 wg, 64 wg + 64) of the tile, and within it warp w rows [16 w, 16 w + 16) -- the rows of
 * wgmma's m64 accumulators. Bc = 128 keys per K/V tile at d = 64 and 128, 64 at d = 256.
 * Shared memory, 1024-byte aligned, every tile 128B-swizzled in chunks of 64 columns as TMA
 * writes it (common/hopper.cuh):
 *   Q tile  128 x d            loaded once
 *   K tile  Bc x d  x STAGES (3 where they fit, d <= 128; 2 at d = 256)
 *   V tile  Bc x d  x STAGES           112 / 224 / 192 KB at d = 64 / 128 / 256
 *   mbarriers: Q, and one per stage (its TMA bytes counted in)
 * Per K/V tile j (stage j % STAGES), every warpgroup:
 *   wait on the stage's barrier; S = Q K^T: d / 16 wgmmas m64 n Bc k16, both operands from shared
 *   memory (K-major); wait for them; masks (past M, causal) and the online softmax on the
 *   accumulators in registers, in log2 units, as in rung 05; P packed to halves in registers is
 *   the A operand of O += P V: Bc / 16 wgmmas m64 n d k16, B = V from shared memory (N-major);
 *   wait; a block barrier; then thread 0 refills the stage with tile j + STAGES.
 * The loads of tile j + 1 (already issued) overlap tile j's products; the products and the softmax
 * do not overlap each other (07b, 07c, 07d take those steps).
 *
 * 07a against rung 05 (05c), every change:
 *   - wgmma (64 x N x 16 per warpgroup, asynchronous, operands read from shared memory by the
 *     tensor cores through descriptors) instead of mma.sync (16 x 8 x 16 per warp, operands
 *     gathered into registers by ldmatrix first): no ldmatrix, no B fragments in registers.
 *   - TMA instead of cp.async: one thread issues a copy per 64-column box of a tile; completion
 *     is counted in bytes on an mbarrier instead of cp.async groups and a block barrier. Rows and
 *     keys past N and M are zero-filled by TMA (the tensor maps are 3-D: [B*H][N or M][d]).
 *   - The 128B swizzle of TMA and wgmma replaces 05c's own XOR swizzle (the same idea).
 *   - 8 warps in two warpgroups (05c: 4 warps), 128 rows per block; Bc = 128 at d = 128 (05c: 64).
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
#include "../common/tiles.cuh"
#include "../common/tensor_map.h"

#define F3_BR 128                 /* query rows per block */
#define F3_THREADS 256            /* two warpgroups */
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

template <int D>
struct f3_tile {
    static constexpr int BC = D <= 128 ? 128 : 64;            /* keys per K/V tile */
    static constexpr int ON = D <= 128 ? D : 128;              /* N of one O wgmma */
    static constexpr int OH = D / ON;                          /* O wgmmas per k16 step (d = 256: 2) */
    static constexpr int STAGES = D <= 128 ? 3 : 2;            /* K/V stages: as many as fit */
    static constexpr uint32_t q_bytes = F3_BR * D * 2, kv_bytes = BC * D * 2;
    static constexpr size_t smem = 1024 + q_bytes + STAGES * 2 * kv_bytes + 64;
};

typedef struct f3_params {
    void *o;
    float *lse;
    int Hq, Hkv, N, M, causal;
    float scale_log2;
} f3_params;

/* One wgmma of the S product (N = Bc) or of the O product (N = ON), picked by N. */
template <int N, int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
    if constexpr (N == 64) wgmma_ss_64<TRANS_B, BF16>(d, da, db, acc);
    else wgmma_ss_128<TRANS_B, BF16>(d, da, db, acc);
}
template <int N, int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db, int acc)
{
    if constexpr (N == 64) wgmma_rs_64<TRANS_B, BF16>(d, a, db, acc);
    else wgmma_rs_128<TRANS_B, BF16>(d, a, db, acc);
}

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

/* Where a block's tiles live: 1024-aligned shared memory, Q, then stage s's K and V, then the
 * mbarriers (bar[0]: Q; then per stage "full", and in 07b "empty"). */
template <int D>
struct f3_smem {
    unsigned char *base;
    __device__ __forceinline__ f3_smem(unsigned char *raw)
    {
        const uint32_t a = smem_addr(raw);
        base = raw + (((a + 1023) & ~1023u) - a);
    }
    __device__ __forceinline__ __half *q() const { return reinterpret_cast<__half *>(base); }
    __device__ __forceinline__ __half *k(int s) const { return reinterpret_cast<__half *>(base + f3_tile<D>::q_bytes + 2 * s * f3_tile<D>::kv_bytes); }
    __device__ __forceinline__ __half *v(int s) const { return k(s) + f3_tile<D>::kv_bytes / 2; }
    __device__ __forceinline__ uint64_t *bar() const
    {
        return reinterpret_cast<uint64_t *>(base + f3_tile<D>::q_bytes + f3_tile<D>::STAGES * 2 * f3_tile<D>::kv_bytes);
    }
};

/* The copies of a block's Q tile, and of K/V tile j into stage s, each box of 64 columns. */
template <int D>
static __device__ __forceinline__ void f3_load_q(const f3_smem<D> &sm, const CUtensorMap *tq, uint64_t *bar, int m0, int bh)
{
    mbar_arrive_expect_tx(bar, f3_tile<D>::q_bytes);
    for (int ch = 0; ch < D / 64; ch++) tma_load_3d(sm.q() + ch * F3_BR * 64, tq, bar, ch * 64, m0, bh);
}
template <int D>
static __device__ __forceinline__ void f3_load_kv(const f3_smem<D> &sm, const CUtensorMap *tk, const CUtensorMap *tv,
                                                  uint64_t *bar, int s, int j, int kvp)
{
    constexpr int BC = f3_tile<D>::BC;
    mbar_arrive_expect_tx(bar, 2 * f3_tile<D>::kv_bytes);
    for (int ch = 0; ch < D / 64; ch++) {
        tma_load_3d(sm.k(s) + ch * BC * 64, tk, bar, ch * 64, j * BC, kvp);
        tma_load_3d(sm.v(s) + ch * BC * 64, tv, bar, ch * 64, j * BC, kvp);
    }
}

/* A warpgroup's 64 rows: O (float32), and per row (row0, row0 + 8) m and l, in registers. */
template <int D>
struct f3_rows {
    float o[f3_tile<D>::OH][f3_tile<D>::ON / 2], m[2], l[2];
};

/* The pieces of one K/V tile for one warpgroup. f3_issue_s: S = Q K^T, d / 16 wgmmas with both
 * operands K-major in shared memory (issued, not waited for). f3_softmax: once S is there, the
 * masks (keys past M, the causal corner) and the online softmax on the accumulators, in log2 units
 * as in rung 05, O rescaled (or, for 07d, the factors handed back), and P packed to the A
 * operand of the next product. f3_issue_pv:
 * O += P V, Bc / 16 wgmmas, P from registers, V N-major (issued, not waited for). */
template <int D, bool BF16>
static __device__ __forceinline__ void f3_issue_s(float (&s)[f3_tile<D>::BC / 2], uint32_t q_wg, uint32_t k_base)
{
    constexpr int BC = f3_tile<D>::BC;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint32_t off = (kk % 4) * 32;            /* 16 columns = 32 bytes into the chunk */
        const uint64_t da = wgmma_desc(q_wg + (kk / 4) * F3_BR * 128 + off, 16, 1024);
        const uint64_t db = wgmma_desc(k_base + (kk / 4) * BC * 128 + off, 16, 1024);
        wgmma_ss<BC, 0, BF16>(s, da, db, kk > 0);
    }
}

template <int D, bool BF16>
static __device__ __forceinline__ void f3_issue_pv(f3_rows<D> &r, const uint32_t (&pa)[f3_tile<D>::BC / 16][4],
                                                   uint32_t v_base)
{
    typedef f3_tile<D> T;
    constexpr int BC = T::BC;
#pragma unroll
    for (int kb = 0; kb < BC / 16; kb++)
#pragma unroll
        for (int oh = 0; oh < T::OH; oh++) {
            const uint64_t db = wgmma_desc(v_base + oh * (T::ON / 64) * BC * 128 + kb * 2048, BC * 128, 1024);
            wgmma_rs<T::ON, 1, BF16>(r.o[oh], pa[kb], db, 1);
        }
}

template <int D, bool BF16, bool DEFER = false>
static __device__ __forceinline__ void f3_softmax(f3_rows<D> &r, float (&s)[f3_tile<D>::BC / 2],
                                                  uint32_t (&pa)[f3_tile<D>::BC / 16][4], int key0, int row0, int m0,
                                                  const f3_params &p, float *alpha_out = nullptr)
{
    typedef f3_tile<D> T;
    constexpr int BC = T::BC, SN = BC / 2, OPT = T::ON / 2;
    const int c = threadIdx.x % 4;
    if (key0 + BC > p.M || (p.causal && key0 + BC - 1 > m0 + p.M - p.N)) {
#pragma unroll
        for (int i = 0; i < SN; i++) {
            const int key = key0 + (i / 4) * 8 + 2 * c + (i & 1), row = row0 + ((i / 2) & 1) * 8;
            if (key >= p.M || (p.causal && key > row + p.M - p.N)) s[i] = -INFINITY;
        }
    }
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < SN; i += 4) mx = fmaxf(mx, fmaxf(s[i + 2 * hi], s[i + 2 * hi + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(r.m[hi], mx * p.scale_log2);
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = fast_exp2(r.m[hi] - m_use);
        r.m[hi] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < SN; i += 4)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float pe = fast_exp2(fmaf(s[i + 2 * hi + e], p.scale_log2, -m_use));
                s[i + 2 * hi + e] = pe;
                sum += pe;
            }
        r.l[hi] = r.l[hi] * alpha + sum;
        if constexpr (DEFER) {                 /* 07d: O is still being accumulated; rescaled later */
            alpha_out[hi] = alpha;
        } else {
#pragma unroll
            for (int oh = 0; oh < T::OH; oh++)
#pragma unroll
                for (int i = 0; i < OPT; i += 4) {
                    r.o[oh][i + 2 * hi] *= alpha;
                    r.o[oh][i + 2 * hi + 1] *= alpha;
                }
        }
    }
#pragma unroll
    for (int kb = 0; kb < BC / 16; kb++) {     /* two n8 blocks of S = one k16 step of A */
        pa[kb][0] = pack2<BF16>(s[8 * kb + 0], s[8 * kb + 1]);
        pa[kb][1] = pack2<BF16>(s[8 * kb + 2], s[8 * kb + 3]);
        pa[kb][2] = pack2<BF16>(s[8 * kb + 4], s[8 * kb + 5]);
        pa[kb][3] = pack2<BF16>(s[8 * kb + 6], s[8 * kb + 7]);
    }
}

template <int D>
static __device__ __forceinline__ void f3_fence_o(f3_rows<D> &r)
{
#pragma unroll
    for (int oh = 0; oh < f3_tile<D>::OH; oh++) wgmma_fence_regs(r.o[oh]);
}

/* One K/V tile, one product after the other (07a, 07b): S, wait, softmax, P V, wait. When it
 * returns, the stage may be refilled. */
template <int D, bool BF16>
static __device__ __forceinline__ void f3_tile_step(f3_rows<D> &r, uint32_t q_wg, uint32_t k_base, uint32_t v_base,
                                                    int key0, int row0, int m0, const f3_params &p)
{
    constexpr int BC = f3_tile<D>::BC;
    float s[BC / 2];
    uint32_t pa[BC / 16][4];
    wgmma_fence();
    f3_issue_s<D, BF16>(s, q_wg, k_base);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_regs(s);
    f3_softmax<D, BF16>(r, s, pa, key0, row0, m0, p);
    f3_fence_o(r);
    wgmma_fence();
    f3_issue_pv<D, BF16>(r, pa, v_base);
    wgmma_commit();
    wgmma_wait<0>();
    f3_fence_o(r);
}

/* The rows' l across their quads, O / l and LSE written; rows past N are not. */
template <int D, bool BF16>
static __device__ __forceinline__ void f3_store(const f3_rows<D> &r, int row0, int bh, const f3_params &p)
{
    typedef f3_tile<D> T;
    const int c = threadIdx.x % 4;
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        float l = r.l[hi];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = row0 + hi * 8;
        if (row >= p.N) continue;
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        uint32_t *orow = reinterpret_cast<uint32_t *>(p.o) + (((size_t)bh * p.N + row) * D) / 2;   /* two elements */
#pragma unroll
        for (int oh = 0; oh < T::OH; oh++)
#pragma unroll
            for (int i = 0; i < T::ON / 2; i += 4)
                orow[(oh * T::ON + (i / 4) * 8 + 2 * c) / 2] = pack2<BF16>(r.o[oh][i + 2 * hi] * inv, r.o[oh][i + 2 * hi + 1] * inv);
        if (c == 0) p.lse[(size_t)bh * p.N + row] = l > 0.0f ? (r.m[hi] + log2f(l)) * LN2 : -INFINITY;
    }
}

/* The K/V tiles a block loads: up to the keys its last row sees (bottom-right causal). */
static __device__ __forceinline__ int f3_tiles(const f3_params &p, int m0, int bc)
{
    const int kend = p.causal ? min(p.M, m0 + F3_BR + p.M - p.N) : p.M;
    return kend > 0 ? (kend + bc - 1) / bc : 0;
}

/* 07a: every thread computes; thread 0 also issues the copies. */
template <int D, bool BF16>
__global__ void __launch_bounds__(F3_THREADS, 1)
fa3_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
           const __grid_constant__ CUtensorMap tv, f3_params p)
{
    constexpr int BC = f3_tile<D>::BC, STAGES = f3_tile<D>::STAGES;
    extern __shared__ unsigned char smem_raw[];
    const f3_smem<D> sm(smem_raw);
    uint64_t *bar = sm.bar();                   /* Q, then one per stage */
    const int wg = threadIdx.x / 128, w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq;
    const int kvp = b * p.Hkv + h / (p.Hq / p.Hkv);                     /* K/V plane */
    const int m0 = blockIdx.x * F3_BR, n_tiles = f3_tiles(p, m0, BC);

    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv);
        for (int i = 0; i < 1 + STAGES; i++) mbar_init(&bar[i], 1);
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        f3_load_q<D>(sm, &tq, &bar[0], m0, bh);
        for (int j = 0; j < STAGES && j < n_tiles; j++) f3_load_kv<D>(sm, &tk, &tv, &bar[1 + j], j, j, kvp);
    }

    f3_rows<D> r = {};
    r.m[0] = r.m[1] = -INFINITY;
    const int row0 = m0 + wg * 64 + w * 16 + g;                          /* this thread's rows: row0, row0 + 8 */
    const uint32_t q_wg = smem_addr(sm.q()) + wg * 64 * 128;              /* its warpgroup's 64 rows */
    mbar_wait(&bar[0], 0);
    for (int j = 0; j < n_tiles; j++) {
        const int st = j % STAGES;
        mbar_wait(&bar[1 + st], (j / STAGES) & 1);
        f3_tile_step<D, BF16>(r, q_wg, smem_addr(sm.k(st)), smem_addr(sm.v(st)), j * BC, row0, m0, p);
        __syncthreads();                        /* every warpgroup is done with this stage */
        if (threadIdx.x == 0 && j + STAGES < n_tiles) f3_load_kv<D>(sm, &tk, &tv, &bar[1 + st], st, j + STAGES, kvp);
    }
    f3_store<D, BF16>(r, row0, bh, p);
}

/* ---- host ---------------------------------------------------------------------------------- */

typedef void (*f3_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, f3_params);

typedef struct f3_variant {
    f3_kernel_fn kernel;
    size_t smem;
    int bc, threads;
} f3_variant;

#include "warp_specialized.cuh"        /* 07b and 07c: their kernels use this file's tile step */
#include "ping_pong.cuh"
#include "intra_overlap.cuh"

/* The kernel of a variant (0: 07a, 1: 07b, 2: 07c, 3: 07d) for a head dim and storage type. */
#define F3_K(D, B) (ws == 3 ? fa3_ov_kernel<D, B> : ws == 2 ? fa3_pp_kernel<D, B> : ws ? fa3_ws_kernel<D, B> : fa3_kernel<D, B>)
#define F3_PICK(D) { *v = (f3_variant){bf16 ? F3_K(D, true) : F3_K(D, false), f3_tile<D>::smem, f3_tile<D>::BC, \
                                       ws ? F3_WS_THREADS : F3_THREADS}; return 1; }
static int f3_pick(int d, attn_dtype dtype, int ws, f3_variant *v)
{
    const int bf16 = dtype == ATTN_BF16;
    if (d == 64) F3_PICK(64)
    if (d == 128) F3_PICK(128)
    if (d == 256) F3_PICK(256)
    return 0;
}

static int f3_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    f3_variant v;
    if (env->cc_major != 9) snprintf(why, n, "rung 07 needs a Hopper GPU (sm_90: wgmma, TMA); this one is sm_%d%d",
                                      env->cc_major, env->cc_minor);
    else if (!f3_pick(s->d, s->dtype, 0, &v)) snprintf(why, n, "rung 07 is built for d = 64, 128 and 256 (d = %d)", s->d);
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

/* The tensor maps depend only on the buffers and the shape: built once and reused while they stay
 * the same, so that no host work sits between the timing events. */
static struct {
    const void *q, *k, *v;
    int B, Hq, Hkv, N, M, d, dtype, ws, valid;
    CUtensorMap tq, tk, tv;
} maps;

static const char *f3_run(const attn_args *a, cudaStream_t st, int ws)
{
    const attn_shape *s = &a->shape;
    f3_variant v;
    if (!f3_pick(s->d, s->dtype, ws, &v)) return "rung 07: unsupported head dim";
    if (!maps.valid || maps.q != a->q || maps.k != a->k || maps.v != a->v || maps.B != s->B || maps.Hq != s->Hq ||
        maps.Hkv != s->Hkv || maps.N != s->N || maps.M != s->M || maps.d != s->d || maps.dtype != (int)s->dtype || maps.ws != ws) {
        const char *err;
        if ((err = tensor_map_3d(&maps.tq, a->q, s->dtype, s->d, s->N, s->B * s->Hq, F3_BR)) ||
            (err = tensor_map_3d(&maps.tk, a->k, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc)) ||
            (err = tensor_map_3d(&maps.tv, a->v, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc))) {
            maps.valid = 0;
            return err;
        }
        maps.q = a->q; maps.k = a->k; maps.v = a->v;
        maps.B = s->B; maps.Hq = s->Hq; maps.Hkv = s->Hkv; maps.N = s->N; maps.M = s->M; maps.d = s->d; maps.dtype = s->dtype; maps.ws = ws;
        maps.valid = 1;
        RUNG_CUDA(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
    }
    const f3_params p = {a->o, a->lse, s->Hq, s->Hkv, s->N, s->M, s->causal, s->scale * LOG2E};
    v.kernel<<<dim3((s->N + F3_BR - 1) / F3_BR, s->B * s->Hq), v.threads, v.smem, st>>>(maps.tq, maps.tk, maps.tv, p);
    RUNG_LAUNCHED(fa3_kernel);
    return NULL;
}

static const char *run_07a(const attn_args *a, cudaStream_t st) { return f3_run(a, st, 0); }
static const char *run_07b(const attn_args *a, cudaStream_t st) { return f3_run(a, st, 1); }
static const char *run_07c(const attn_args *a, cudaStream_t st) { return f3_run(a, st, 2); }
static const char *run_07d(const attn_args *a, cudaStream_t st) { return f3_run(a, st, 3); }

static const rung rung_07a = {
    "07a", "fa3: TMA + wgmma",
    "Hopper: K/V tiles by TMA on mbarriers, S = Q K^T and O += P V on wgmma (P from registers); "
    "two warpgroups, no overlap of the products yet",
    f3_unsupported, f3_workspace, run_07a, NULL,
};

static const rung rung_07b = {
    "07b", "fa3: warp-specialized",
    "07a + a producer warpgroup issues the TMA copies into a ring of full/empty mbarriers; two "
    "consumer warpgroups compute; setmaxnreg gives the registers to the consumers",
    f3_unsupported, f3_workspace, run_07b, NULL,
};

static const rung rung_07c = {
    "07c", "fa3: ping-pong",
    "07b + the two consumer warpgroups take turns on the tensor cores (named barriers): one's "
    "softmax runs under the other's P V and Q K^T",
    f3_unsupported, f3_workspace, run_07c, NULL,
};

static const rung rung_07d = {
    "07d", "fa3: intra-warpgroup overlap",
    "07b + inside each consumer, the softmax of tile j runs while the tensor cores do P V of tile "
    "j - 1 (Q K^T of tile j issued with it); O rescaled once that product is done",
    f3_unsupported, f3_workspace, run_07d, NULL,
};

extern "C" const rung *const rung_variants[] = {&rung_07a, &rung_07b, &rung_07c, &rung_07d, NULL};
