/* Variant 07g: FP8, FlashAttention-3's third idea. 07f + one change in what the tensor cores read:
 * Q, K and V in float8 e4m3, one byte an element, on wgmma's FP8 form (m64nNk32, twice the k of the
 * 16-bit form in the same time: twice the FLOP rate), with block quantization and incoherent
 * processing. The driver's inputs and O stay float16; before the attention kernel, the step's
 * quantize kernels (below) write e4m3 copies of Q, K and V and their scales into the workspace.
 *
 * The kernel is 07f's, the persistent warp-specialized skeleton of warp_specialized.cuh and
 * persistent.cuh with 07d's loop (intra_overlap.cuh) and 07f's lazy rescale, run with the tile
 * f8_tile below; the pieces of a tile step (fa3.cu) take their FP8 form where T::FP8 (the functions
 * of this file):
 *
 *   grid    one block per SM (07e's schedule); block 1 + CW warpgroups: the producer, CW consumers
 *           of 64 query rows each (BR = 64 CW): two with 240 registers each, three at DK = 64 with
 *           160 (f8_tile below has the table)
 *   smem    Q: BR rows x DK bytes; K: STAGES tiles of BC keys x DK bytes (BC = 128, or 192 at
 *           DK = 128 on long rows); V transposed: STAGES tiles of DK rows x BC keys; O: BR x DK
 *           float16, staged for its TMA store; mbarriers.
 *           Rows of 128 bytes, 128B-swizzled (TMA writes them so, wgmma reads them so); Q and K at
 *           DK = 64 are rows of 64 bytes, 64B-swizzled; at DK = 256 rows of two 128-byte chunks;
 *           V's 192-key tile three chunks of rows of 64 keys, 64B-swizzled.
 *   S = Q K^T    DK / 32 wgmma m64nBCk32 e4m3, both operands K-major from shared memory, as 07f's
 *                k16 steps but 32 bytes = 32 elements each
 *   softmax      07f's, on S descaled in the same multiply that takes it to log2 units:
 *                scale * log2(e) * scale_q * scale_k(j); P at most 2^8 (the lazy rescale's bound)
 *   O += P V     BC / 32 wgmma m64nDKk32, P from registers (its e4m3 bytes in the order of fp8_quant.h),
 *                V transposed from shared memory: FP8 wgmma has no transpose, both operands are
 *                K-major, so V must lie keys-contiguous. The quantize kernel writes it so.
 *   epilogue     07e's, with O / l times the head's V scale.
 *
 * Quantization (fp8_quant.h has the formats): a scale per 64 query rows and per K/V tile of keys of
 * K and of V (f8_bc: 128 or 192), per batch and head: scale = amax / 448, so each block uses the whole range of e4m3.
 * S's descale is free (one multiply per tile folded into the one the softmax does anyway). V's is
 * not: O sums over tiles with different scales. P of tile j is instead multiplied by r_j =
 * scale_v(j) / vmax (at most 1) before its cast -- free as well, an offset log2(r_j) in the
 * exponent -- so that O comes out in units of vmax, the head's largest V scale, applied once at the
 * end; l adds the true P (the sum times 1 / r_j). With --fp8-scale tensor (the accuracy table's
 * baseline) a first pass finds each tensor's amax and every block takes its scale.
 * Incoherent processing (--fp8-hadamard on, the default): each row of Q and K, zero-padded to DK,
 * goes through H D (common/hadamard.cuh) before its amax is taken; (H D q) . (H D k) = q . k, so S
 * is unchanged and nothing is undone; an outlier is spread over the row.
 *
 * Compiled into fa3.cu's translation unit. */
#include <cuda_fp16.h>
#include "../common/reduce.cuh"
#include "fp8_quant.h"

/* The tiles of 07g for DK = 64, 128, 256 (f8_dk), the members fa3.cu's skeleton reads, as f3_tile
 * has them:
 *   CH   64-column chunks of O (float16, the epilogue's and its store's); Q and K are chunks of
 *        ROWB bytes (QCH of them a row: 1, 1, 2), V transposed chunks of VROWB keys a row (VCH of
 *        them a tile: fp8_quant.h's f8_v_rowb).
 *   BC   keys per K/V tile, f8_bc: 128, and 192 at DK = 128 where a row sees 16 tiles or more.
 *        At d = 128 in FP8 the products of a 128-key tile take half their 16-bit time and the
 *        softmax the same, so what a tile costs besides its products -- the turn between the
 *        consumers, the waits, the tile's scales, the row maxima's shuffles -- weighs twice as much;
 *        192 keys spread it over 1.5 times the work. A consumer holds S of the tile (96 registers),
 *        P (24) and O (64): 184 of its 240. The transposed V tile of 192 keys is three chunks of
 *        64 keys (64B swizzle), three TMA boxes. FlashAttention-3's FP8 tiles: 192 x 160 at d = 64,
 *        128 x 224 at 128, 128 x 128 at 256, two stages.
 *   CW   consumer warpgroups: 3 (192 query rows) at DK = 64 where the rows allow it (fa3.cu's
 *        f3_three_consumers, as the 16-bit tile table), 2 elsewhere. A consumer then has 160
 *        registers: S of a 128-key tile (64), P (16) and O (32) fit. At DK = 128, O alone takes 64
 *        and S 64, so three consumers would spill.
 *   STAGES  3, but 2 at DK = 256, where a third would leave O no room of its own.
 *   PK   k32 steps of P V (fa3.cu's pieces take P as uint32_t[PK][4]).
 *   HOLD the variant 07g-ov (listed after 07g, so the rung's own FP8 step: faster at d = 64 and
 *        128, 07's README measures it): the wait for P V of tile j - 1 is
 *        tied to tile j's softmax (f8_wait_pv), so that the softmax runs under that product. At
 *        DK = 64 and 128 (the turns' head dims); at 256 it left the softmax's temporaries too few
 *        registers beside O (128), S (64) and P (16) in flight, and ptxas serialised the wgmmas
 *        (C7512), so 07g-ov runs 07g's tile there. */
template <int DK_, int BC_ = F8_BC, int CW_ = 2, bool HOLD_ = false>
struct f8_tile {
    static constexpr bool FP8 = true, HOLD = HOLD_;   /* HOLD: the variant 07g-ov (f8_wait_pv below) */
    static constexpr int DK = DK_, DV = DK_, CH = DK_ / 64, BC = BC_, CW = CW_, BR = 64 * CW, REGS = CW == 3 ? 160 : 240;
    static constexpr int ROWB = DK < 128 ? DK : 128, QCH = DK / ROWB, PK = BC / 32;
    static constexpr int VROWB = BC % 128 == 0 ? 128 : 64, VCH = BC / VROWB;   /* fp8_quant.h's f8_v_rowb */
    static constexpr uint32_t q_bytes = BR * DK, kv_bytes = BC * DK, o_bytes = BR * DK * 2;
    static constexpr int STAGES = DK == 256 ? 2 : 3;
    static constexpr bool TURNS = DK <= 128;
    static constexpr size_t ring = 1024 + q_bytes + 2 * STAGES * kv_bytes + 256;
    static constexpr bool O_SEP = ring + o_bytes <= F3_SMEM_MAX;
    static constexpr int O_STAGES = 0;
    static constexpr size_t smem = ring + o_bytes;
    static_assert(DK == 64 || DK == 128 || DK == 256, "07g's tiles: DK = 64, 128, 256");
    static_assert(BC == F8_BC || (BC == F8_BC_WIDE && DK == 128), "the K/V tiles of f8_bc");
    static_assert(CW == 2 || (CW == 3 && DK == 64 && BC == F8_BC), "three consumers at DK = 64");
    static_assert(O_SEP && smem <= F3_SMEM_MAX, "O staged in space of its own");
    static_assert(!HOLD || DK <= 128, "HOLD at DK = 64 and 128");
};

/* A consumer's scales (a base of f3_rows, empty for the 16-bit tiles): its 64 rows' Q scale and the
 * head's vmax (per work tile), the K and V scales of the K/V tile at hand (per tile, f8_tile_begin). */
template <>
struct f3_rows_fp8<true> {
    float f8_sq, f8_vmax, f8_sk, f8_sv;
};

/* Where the workspace's scales are, from the kernel's parameters (07e's counters, p.sched, are its
 * first bytes). */
static __device__ __forceinline__ f8_ws_layout f8_ws_dev(const f3_params &p)
{
    return f8_ws_of(p.n_bh / p.Hq, p.Hq, p.Hkv, p.N, p.M, p.d);
}

/* Tile j's scales, loaded as soon as its K is there: the loads run under S = Q K^T, and the softmax
 * that reads them comes after it. Per work tile (j = 0) also the Q scale of this consumer's 64 rows
 * (rows past N: the last block's) and vmax. Read-only data of the quantize kernels, which ran before. */
template <class T>
static __device__ __forceinline__ void f8_tile_begin(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int j)
{
    const unsigned char *ws = reinterpret_cast<const unsigned char *>(p.sched);
    const f8_ws_layout w = f8_ws_dev(p);
    const int b = c.bh / p.Hq, h = c.bh % p.Hq, kvp = b * p.Hkv + h / (p.Hq / p.Hkv);
    if (j == 0) {
        const int qb = min(c.m0 / F8_QROWS + c.cw, w.nq - 1);
        r.f8_sq = __ldg(reinterpret_cast<const float *>(ws + w.qs) + (size_t)c.bh * w.nq + qb);
        r.f8_vmax = __uint_as_float(__ldg(reinterpret_cast<const unsigned *>(ws + w.vmax) + kvp));
    }
    r.f8_sk = __ldg(reinterpret_cast<const float *>(ws + w.ks) + (size_t)kvp * w.nk + j);
    r.f8_sv = __ldg(reinterpret_cast<const float *>(ws + w.vs) + (size_t)kvp * w.nk + j);
}

/* The softmax's factors for the tile: S to log2 units, descaled; log2 of r_j, added to the
 * exponents (P r_j instead of P); 1 / r_j, which takes their sum back to the sum of P for l. */
template <class T>
static __device__ __forceinline__ void f8_factors(const f3_rows<T> &r, const f3_params &p, float &sl2, float &lr, float &ir)
{
    const float rv = f8_v_ratio(r.f8_sv, r.f8_vmax);
    sl2 = p.scale_log2 * r.f8_sq * r.f8_sk;
    lr = __log2f(rv);
    ir = __fdividef(1.0f, rv);
}

/* The wait for P V of tile j - 1 after tile j's softmax (intra_overlap.cuh's loop, 07d's overlap).
 * The PTX has it where the loop puts it, after the exponentials; but ptxas's scheduler lifts
 * WARPGROUP.DEPBAR (wgmma.wait_group, an instruction without operands) to the top of its basic
 * block, above the row maxima, the shuffles and all the exponentials (07d-07g alike, at every DK),
 * so the softmax of tile j starts only when P V of tile j - 1 is done: its exponentials run under
 * the other consumer's products only, never under its own. HOLD ends the basic block after the
 * softmax: a warp vote on the bits of both rows' l, which the sums of all the exponentials write
 * last, and a branch on it to a trap, so the wait starts a block that ptxas cannot begin before
 * them. The branch is never taken: l is a sum of exponentials, 0 or more, +inf or the canonical NaN
 * 0x7fffffff, never the bits 0xffffffff; ptxas cannot know that. (A wait guarded by such a predicate
 * instead made ptxas serialise every wgmma, C7514.) Without HOLD, 07f's wgmma.wait_group 0. */
template <class T>
static __device__ __forceinline__ void f8_wait_pv(const f3_rows<T> &r)
{
    if constexpr (T::HOLD)
        if (__any_sync(0xffffffffu, (__float_as_uint(r.l[0]) & __float_as_uint(r.l[1])) == 0xffffffffu)) __trap();
    wgmma_wait<0>();
}

/* O / l of a row is O_acc vmax / l. */
template <class T>
static __device__ __forceinline__ float f8_o_scale(const f3_rows<T> &r)
{
    return r.f8_vmax > 0.0f ? r.f8_vmax : 1.0f;
}

/* S = Q K^T: DK / 32 steps of k32 (32 bytes), each within a chunk of ROWB bytes; both K-major. */
template <class T>
static __device__ __forceinline__ void f8_issue_s(float (&s)[T::BC / 2], uint32_t q_wg, uint32_t k_base)
{
    constexpr int SW = T::ROWB == 128 ? WGMMA_SWIZZLE_128B : WGMMA_SWIZZLE_64B, STEPS = T::ROWB / 32;
#pragma unroll
    for (int kk = 0; kk < T::DK / 32; kk++) {
        const uint32_t off = (kk % STEPS) * 32;
        const uint64_t da = wgmma_desc_sw(q_wg + (kk / STEPS) * T::BR * T::ROWB + off, 16, 8 * T::ROWB, SW);
        const uint64_t db = wgmma_desc_sw(k_base + (kk / STEPS) * T::BC * T::ROWB + off, 16, 8 * T::ROWB, SW);
        wgmma_ss_e4m3<T::BC>(s, da, db, kk > 0);
    }
}

/* O += P V: a k32 step per 32 keys, B = the transposed V tile (DV rows of BC keys, K-major, in
 * chunks of VROWB keys); the step starts 32 bytes further along the rows, or at the next chunk
 * (f8_v_step_at). */
template <class T>
static __device__ __forceinline__ void f8_issue_pv(f3_rows<T> &r, const uint32_t (&pa)[T::PK][4], uint32_t v_base)
{
    constexpr int SW = T::VROWB == 128 ? WGMMA_SWIZZLE_128B : WGMMA_SWIZZLE_64B;
#pragma unroll
    for (int kb = 0; kb < T::PK; kb++)
        wgmma_rs_e4m3<T::DV>(r.o, pa[kb], wgmma_desc_sw(v_base + f8_v_step_at(kb, T::BC, T::DV), 16, 8 * T::VROWB, SW), 1);
}

/* P (the accumulators of S after the softmax) to the A registers: 16 accumulators a k32 step. */
template <class T>
static __device__ __forceinline__ void f8_pack(const float (&s)[T::BC / 2], uint32_t (&pa)[T::PK][4])
{
#pragma unroll
    for (int kb = 0; kb < T::PK; kb++) f8_pack_k32(&s[16 * kb], pa[kb]);
}

/* The copies: Q in QCH chunks of ROWB bytes; K the same; V transposed, VCH boxes of DK rows x VROWB
 * keys from key j BC of its plane on (one box where BC = VROWB = 128). */
template <class T>
static __device__ __forceinline__ void f8_copy_q(const f3_smem<T> &sm, const CUtensorMap *tq, uint64_t *bar, int m0, int bh)
{
    unsigned char *q = reinterpret_cast<unsigned char *>(sm.q());
    for (int ch = 0; ch < T::QCH; ch++) tma_load_3d(q + ch * T::BR * T::ROWB, tq, bar, ch * T::ROWB, m0, bh);
}
template <class T, bool V>
static __device__ __forceinline__ void f8_copy_kv(void *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
{
    if constexpr (V) {
        unsigned char *v = reinterpret_cast<unsigned char *>(dst);
        for (int ch = 0; ch < T::VCH; ch++) tma_load_3d(v + ch * T::DV * T::VROWB, map, bar, j * T::BC + ch * T::VROWB, 0, kvp);
    } else {
        unsigned char *k = reinterpret_cast<unsigned char *>(dst);
        for (int ch = 0; ch < T::QCH; ch++) tma_load_3d(k + ch * T::BC * T::ROWB, map, bar, ch * T::ROWB, j * T::BC, kvp);
    }
}

/* ---- the quantize kernels ------------------------------------------------------------------
 * The rung's prepare() (f8_prepare below): the driver runs them before the attention kernel and
 * times them apart, and the two together (the row's quant_ms and total_ms). Memory-bound: each
 * reads a tensor in float16 (2 bytes an element) and writes it in e4m3 (1 byte), so they are
 * written as copies: every thread's loads issued before any use, 16-byte loads and 128-byte
 * coalesced stores, the arithmetic in registers, no shared memory for Q and K. The values they
 * write are the bytes of fp8_quant.h's host code, operation for operation (the same butterflies in
 * the same order, x / scale by IEEE division, the same conversion), so the CPU tests' model of 07g
 * is the kernel's. mode: F8_BLOCK (a scale per block), F8_AMAX (per-tensor mode, first pass: only
 * the block's amax, into the tensor's slot by atomicMax), F8_TENSOR (second pass: every block
 * takes the tensor's scale). */
enum { F8_BLOCK = 0, F8_AMAX, F8_TENSOR };

/* The block's scale, written at `scale`; 0 in the F8_AMAX pass (nothing more to do). */
static __device__ __forceinline__ float f8_block_scale(float amax, int mode, const unsigned *tensor_amax, unsigned *slot,
                                                       float *scale)
{
    amax = block_max(amax);
    if (mode == F8_AMAX) {
        if (threadIdx.x == 0) atomicMax(slot, __float_as_uint(amax));
        return 0.0f;
    }
    const float s = fp8_e4m3_scale(mode == F8_TENSOR ? __uint_as_float(*tensor_amax) : amax);
    if (threadIdx.x == 0) *scale = s;
    return s;
}

/* Eight halves (one 16-byte load) to floats. */
static __device__ __forceinline__ void f8_unpack8(const uint4 &u, float (&f)[8])
{
    const __half2 *h = reinterpret_cast<const __half2 *>(&u);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 x = __half22float2(h[k]);
        f[2 * k] = x.x;
        f[2 * k + 1] = x.y;
    }
}

/* Q or K: one block per scale block, ROWS rows (F8_QROWS of Q, the K/V tile's of K) of plane `plane` of
 * x [planes][rows][d] -> out [planes][rows][DK] (q8 or k8 of the workspace layout w).
 *   block  ROWS DK / 64 threads: 64 values each, 8 columns of 8 rows
 *   a row  DK / 8 neighbouring threads, 8 columns (16 bytes of float16) each: a warp reads
 *          256 / DK whole rows, contiguous (coalesced); columns from d up are 0
 *   H D    the row's sign pattern, then hadamard_transform's passes in its order: pairs 1, 2 and 4
 *          apart inside a thread's 8 values (f8_had8), pairs 8 m apart (m = 1, 2, .. DK / 16)
 *          between the thread and the one m lanes away (__shfl_xor_sync, f8_had_cross); then
 *          1 / sqrt(DK). tests/test_fp8_step.c checks the split against hadamard_transform, bit
 *          for bit
 *   scale  the block's amax by block_max; then each thread writes its 8 codes of each row as one
 *          8-byte store (a warp: 256 contiguous bytes). */
template <int DK, int ROWS>
__global__ void __launch_bounds__(ROWS * DK / 64) f8_quant_rows(const __half *x, int rows, int d, int nblk, int hadamard,
                                                                int mode, uint8_t *out, float *scales, unsigned *amax,
                                                                f8_ws_layout w)
{
    constexpr int L = DK / 8, THREADS = ROWS * DK / 64, RP = THREADS / L, PASSES = ROWS / RP;
    static_assert(PASSES == 8 && L <= 32, "8 rows of 8 values a thread; a row within a warp");
    const int plane = blockIdx.x / nblk, blk = blockIdx.x % nblk, r0 = blk * ROWS;
    const int li = threadIdx.x % L, c0 = 8 * li, rsub = threadIdx.x / L;
    const uint4 *src = reinterpret_cast<const uint4 *>(x + (size_t)plane * rows * d);
    uint4 raw[PASSES];
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        const int r = r0 + p * RP + rsub;
        raw[p] = r < rows && c0 < d ? __ldg(src + ((size_t)r * d + c0) / 8) : make_uint4(0, 0, 0, 0);
    }
    float sg[8];
#pragma unroll
    for (int i = 0; i < 8; i++) sg[i] = hadamard_sign(F8_SEED, c0 + i);
    const float rs = 1.0f / sqrtf((float)DK);
    float v[PASSES][8], am = 0.0f;
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        float(&e)[8] = v[p];
        f8_unpack8(raw[p], e);
        if (hadamard) {
            f8_had8(e, sg);
#pragma unroll
            for (int m = 1; m < L; m *= 2) {
                float o[8];
#pragma unroll
                for (int i = 0; i < 8; i++) o[i] = __shfl_xor_sync(FULL_MASK, e[i], m);
                f8_had_cross(e, o, li & m);
            }
#pragma unroll
            for (int i = 0; i < 8; i++) e[i] *= rs;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) am = fmaxf(am, fabsf(e[i]));
    }
    const float s = f8_block_scale(am, mode, amax, amax, scales + (size_t)plane * nblk + blk);
    if (mode == F8_AMAX) return;
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        const int r = r0 + p * RP + rsub;
        if (r >= rows) continue;
        const float(&e)[8] = v[p];
        uint2 c;
        c.x = (uint32_t)fp8_e4m3x2_encode(e[0] / s, e[1] / s) | (uint32_t)fp8_e4m3x2_encode(e[2] / s, e[3] / s) << 16;
        c.y = (uint32_t)fp8_e4m3x2_encode(e[4] / s, e[5] / s) | (uint32_t)fp8_e4m3x2_encode(e[6] / s, e[7] / s) << 16;
        *reinterpret_cast<uint2 *>(out + f8_row_at(w, plane, rows, r, c0)) = c;
    }
}

/* V's block: 256 threads, one K/V tile of BC keys (f8_bc: 128 or 192). */
enum { F8_VT_THREADS = 256 };

/* Bytes of V's shared tile: bc keys of DK / 8 + 1 chunks of 16 bytes (the extra chunk staggers
 * the rows over the banks). */
static constexpr size_t f8_vt_smem(int dk, int bc) { return (size_t)bc * (dk / 8 + 1) * 16; }

/* V: keys [k0, k0 + BC) of plane `plane` of v [planes][M][d] -> rows n = 0 .. DK - 1 of the
 * transposed out [planes][DK][nk BC] (vt8 of the workspace layout w), bytes k0 .. k0 + BC - 1: byte
 * p holds key k0 + f8_vt_key(p); keys from M up and columns from d up are 0. The tile's scale also
 * goes into the head's vmax (atomicMax; an all-zero tile's scale of 1 is left out).
 *   load   the tile as it lies, 16-byte loads, coalesced (all of a thread's issued first), into
 *          shared memory as float16, rows of DK + 8 halves; the amax on the way
 *   write  a warp takes 8 columns n and writes 8 rows of the transposed tile, each BC contiguous
 *          bytes (a lane a 4-byte word, words q = lane, lane + 32, ...: at BC = 192 the second
 *          pass has half the lanes): word q of a row is slots 4q .. 4q + 3, which hold keys kb,
 *          kb + 1, kb + 8, kb + 9 (kb = f8_vt_word_key(q)), so the lane reads those four keys' 16
 *          bytes at the warp's columns and has all 8 words. */
template <int DK, int BC>
__global__ void __launch_bounds__(F8_VT_THREADS) f8_quant_vt(const __half *v, int M, int d, int nk, int mode, uint8_t *out,
                                                             float *scales, unsigned *vmax, unsigned *amax, f8_ws_layout w)
{
    extern __shared__ uint4 f8_vsm[];
    constexpr int CPR = DK / 8 + 1, CH = DK / 8, ITER = BC * CH / F8_VT_THREADS;
    static_assert(BC * CH % F8_VT_THREADS == 0 && BC % 32 == 0, "whole passes of 16-byte loads; whole 32-key steps");
    const int plane = blockIdx.x / nk, j = blockIdx.x % nk, k0 = j * BC, nr = min(BC, M - k0), dc = d / 8;
    const uint4 *src = reinterpret_cast<const uint4 *>(v + ((size_t)plane * M + k0) * d);
    uint4 raw[ITER];
#pragma unroll
    for (int it = 0; it < ITER; it++) {
        const int e = it * F8_VT_THREADS + threadIdx.x, key = e / CH, ch = e % CH;
        raw[it] = key < nr && ch < dc ? __ldg(src + (size_t)key * dc + ch) : make_uint4(0, 0, 0, 0);
    }
    float am = 0.0f;
#pragma unroll
    for (int it = 0; it < ITER; it++) {
        const int e = it * F8_VT_THREADS + threadIdx.x;
        f8_vsm[(e / CH) * CPR + e % CH] = raw[it];
        float f[8];
        f8_unpack8(raw[it], f);
#pragma unroll
        for (int i = 0; i < 8; i++) am = fmaxf(am, fabsf(f[i]));
    }
    __syncthreads();   /* the tile is in; block_max's own barriers follow */
    const float block_amax = block_max(am);
    const float s = f8_block_scale(block_amax, mode, amax + 2, amax + 2, scales + (size_t)plane * nk + j);
    if (mode == F8_AMAX) return;
    if (threadIdx.x == 0 && (block_amax > 0.0f || mode == F8_TENSOR)) atomicMax(vmax + plane, __float_as_uint(s));
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int q = lane; q < BC / 4; q += 32) {
        const int kb = f8_vt_word_key(q);
#pragma unroll
        for (int nc = warp; nc < CH; nc += F8_VT_THREADS / 32) {
            float a[8], b[8], c[8], e[8];
            f8_unpack8(f8_vsm[kb * CPR + nc], a);
            f8_unpack8(f8_vsm[(kb + 1) * CPR + nc], b);
            f8_unpack8(f8_vsm[(kb + 8) * CPR + nc], c);
            f8_unpack8(f8_vsm[(kb + 9) * CPR + nc], e);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const uint32_t word = (uint32_t)fp8_e4m3x2_encode(a[i] / s, b[i] / s) |
                                      (uint32_t)fp8_e4m3x2_encode(c[i] / s, e[i] / s) << 16;
                *reinterpret_cast<uint32_t *>(out + f8_vt_at(w, plane, 8 * nc + i, k0 + 4 * q)) = word;
            }
        }
    }
}

/* ---- host ---------------------------------------------------------------------------------- */

template <int DK, int BC>
static const char *f8_quantize(const attn_args *a, cudaStream_t st, const f8_ws_layout &w)
{
    const attn_shape *s = &a->shape;
    const int bh = s->B * s->Hq, bkv = s->B * s->Hkv, had = !a->env.fp8_no_hadamard;
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    unsigned *amax = reinterpret_cast<unsigned *>(ws + w.amax), *vmax = reinterpret_cast<unsigned *>(ws + w.vmax);
    const size_t smv = f8_vt_smem(DK, BC);
    RUNG_CUDA(cudaFuncSetAttribute(f8_quant_vt<DK, BC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smv));
    RUNG_CUDA(cudaMemsetAsync(ws + w.amax, 0, w.qs - w.amax, st));   /* amax and vmax accumulate */
    const __half *q = static_cast<const __half *>(a->q), *k = static_cast<const __half *>(a->k),
                 *v = static_cast<const __half *>(a->v);
    for (int pass = a->env.fp8_per_tensor ? 0 : 1; pass < 2; pass++) {
        const int mode = !a->env.fp8_per_tensor ? F8_BLOCK : pass == 0 ? F8_AMAX : F8_TENSOR;
        f8_quant_rows<DK, F8_QROWS><<<w.nq * bh, F8_QROWS * DK / 64, 0, st>>>(
            q, s->N, s->d, w.nq, had, mode, ws + w.q8, reinterpret_cast<float *>(ws + w.qs), amax, w);
        RUNG_LAUNCHED(f8_quant_rows);
        f8_quant_rows<DK, BC><<<w.nk * bkv, BC * DK / 64, 0, st>>>(
            k, s->M, s->d, w.nk, had, mode, ws + w.k8, reinterpret_cast<float *>(ws + w.ks), amax + 1, w);
        RUNG_LAUNCHED(f8_quant_rows);
        f8_quant_vt<DK, BC><<<w.nk * bkv, F8_VT_THREADS, smv, st>>>(v, s->M, s->d, w.nk, mode, ws + w.vt8,
                                                                reinterpret_cast<float *>(ws + w.vs), vmax, amax, w);
        RUNG_LAUNCHED(f8_quant_vt);
    }
    return NULL;
}

template <class T>
static void f8_fill(f3_variant *v)
{
    *v = (f3_variant){fa3_ws_kernel<T, false, F3_LOOP_OV, true, F3_SOFT_LAZY>, T::smem, T::BR, T::BC, 128 * (T::CW + 1), T::DK};
}

static int f3_three_consumers(int n);   /* fa3.cu: the 16-bit tile table's rule */

/* The tile of a shape: DK = f8_dk(d); its K/V tile f8_bc(d, M), which the quantize kernels' K and V
 * scales follow; three consumers at DK = 64 by the 16-bit table's rule. */
template <bool HOLD>
static void f8_pick_tile(const attn_shape *s, f3_variant *v)
{
    const int dk = f8_dk(s->d), bc = f8_bc(s->d, s->M);
    if (dk == 64) {
        if (f3_three_consumers(s->N)) f8_fill<f8_tile<64, F8_BC, 3, HOLD> >(v);
        else f8_fill<f8_tile<64, F8_BC, 2, HOLD> >(v);
    }
    else if (dk == 128) {
        if (bc == F8_BC_WIDE) f8_fill<f8_tile<128, F8_BC_WIDE, 2, HOLD> >(v);
        else f8_fill<f8_tile<128, F8_BC, 2, HOLD> >(v);
    }
    else f8_fill<f8_tile<256> >(v);   /* HOLD at DK = 256 runs out of registers: ptxas serialises its wgmmas (C7512) */
}

/* hold: 07g-ov's tiles (f8_wait_pv). */
static int f8_pick(const attn_shape *s, f3_variant *v, int hold = 0)
{
    if (s->d % 8 || s->d < 8 || s->d > 256) return 0;
    if (hold) f8_pick_tile<true>(s, v);
    else f8_pick_tile<false>(s, v);
    return 1;
}

static int f8_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    f3_variant v;
    if (env->cc_major != 9) snprintf(why, n, "rung 07 needs a Hopper GPU (sm_90: wgmma, TMA); this one is sm_%d%d",
                                      env->cc_major, env->cc_minor);
    else if (!f8_pick(s, &v))
        snprintf(why, n, "07g takes head dims that are multiples of 8 up to 256 (d = %d)", s->d);
    else if (attn_refuse_paged(s, why, n)) return 1;
    else if (s->seqlens_k) snprintf(why, n, "rung 07 takes one KV length for every request (varlen decode is rung 06's job)");
    else if (v.smem > env->smem_per_block_optin || f8_vt_smem(f8_dk(s->d), v.bc) > env->smem_per_block_optin)
        snprintf(why, n, "needs %zu KB of shared memory per block", v.smem / 1024);
    else return 0;
    return 1;
}

static size_t f8_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d).total;
}

/* The tensor maps of the quantized tensors (in the workspace) and of O: built once while the buffers
 * and the shape stay the same, as f3_run's. */
static struct {
    const void *ws, *o;
    int B, Hq, Hkv, N, M, d, valid;
    CUtensorMap m[4];
} f8_maps;

/* The rung's prepare(): the quantize kernels, which the driver runs before every f8_run, outside
 * the attention kernel's timed region, and times on their own (attn.h). */
static const char *f8_prepare(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const f8_ws_layout w = f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    if (w.dk == 64) return f8_quantize<64, F8_BC>(a, st, w);
    if (w.dk == 128) return w.bc == F8_BC_WIDE ? f8_quantize<128, F8_BC_WIDE>(a, st, w) : f8_quantize<128, F8_BC>(a, st, w);
    return f8_quantize<256, F8_BC>(a, st, w);
}

/* The attention kernel on the workspace's e4m3 Q, K, V and scales, which f8_prepare wrote; hold: 07g-ov. */
static const char *f8_run_as(const attn_args *a, cudaStream_t st, int hold)
{
    const attn_shape *s = &a->shape;
    f3_variant v;
    const char *err;
    if (!f8_pick(s, &v, hold)) return "07g: unsupported head dim";
    const f8_ws_layout w = f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    const int rowb = w.dk < 128 ? w.dk : 128, vrowb = f8_v_rowb(w.bc);
    if (w.bc != v.bc) return "07g: the kernel's K/V tile is not the quantize kernels' (f8_bc)";
    if (!f8_maps.valid || f8_maps.ws != a->workspace || f8_maps.o != a->o || f8_maps.B != s->B || f8_maps.Hq != s->Hq ||
        f8_maps.Hkv != s->Hkv || f8_maps.N != s->N || f8_maps.M != s->M || f8_maps.d != s->d) {
        if ((err = tensor_map_3d_u8(&f8_maps.m[0], ws + w.q8, w.dk, s->N, s->B * s->Hq, rowb, v.br)) ||
            (err = tensor_map_3d_u8(&f8_maps.m[1], ws + w.k8, w.dk, s->M, s->B * s->Hkv, rowb, v.bc)) ||
            (err = tensor_map_3d_u8(&f8_maps.m[2], ws + w.vt8, w.nk * w.bc, w.dk, s->B * s->Hkv, vrowb, w.dk)) ||
            (err = tensor_map_3d(&f8_maps.m[3], a->o, ATTN_F16, s->d, s->N, s->B * s->Hq, v.br))) {
            f8_maps.valid = 0;
            return err;
        }
        f8_maps.ws = a->workspace; f8_maps.o = a->o;
        f8_maps.B = s->B; f8_maps.Hq = s->Hq; f8_maps.Hkv = s->Hkv; f8_maps.N = s->N; f8_maps.M = s->M; f8_maps.d = s->d;
        f8_maps.valid = 1;
    }
    return f3_launch(a, st, v, F3_07G, f8_maps.m);
}

static const char *f8_run(const attn_args *a, cudaStream_t st) { return f8_run_as(a, st, 0); }
static const char *f8_run_ov(const attn_args *a, cudaStream_t st) { return f8_run_as(a, st, 1); }

static void f8_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    f3_variant v;
    if (f8_pick(s, &v))
        snprintf(buf, len, "tile=%dx%d;dk=%d;fp8=%s;hadamard=%d;", v.br, v.bc, v.dk, env->fp8_per_tensor ? "tensor" : "block",
                 !env->fp8_no_hadamard);
    else if (len) buf[0] = '\0';
}
