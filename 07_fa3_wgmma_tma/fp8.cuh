/* Step 07g: FP8, FlashAttention-3's third idea. 07f + one change in what the tensor cores read:
 * Q, K and V in float8 e4m3, one byte an element, on wgmma's FP8 form (m64nNk32, twice the k of the
 * 16-bit form in the same time: twice the FLOP rate), with block quantization and incoherent
 * processing. The driver's inputs and O stay float16; before the attention kernel, the step's
 * quantize kernels (fp8.cu) write e4m3 copies of Q, K and V and their scales into the workspace.
 *
 * The kernel is 07f's: 07b's skeleton with 07d's loop, 07e's schedule and 07f's softmax,
 * run with the tile f8_tile below, which carries the FP8 forms of a tile step's pieces:
 *
 *   smem    Q: BR rows x DK bytes; K: STAGES tiles of BC keys x DK bytes (BC = 128, or 192 at
 *           DK = 128 on long rows); V transposed: STAGES tiles of DK rows x BC keys; O: BR x DK
 *           float16, staged for its TMA store; mbarriers. Rows of 128 bytes, 128B-swizzled; Q and K
 *           at DK = 64 rows of 64 bytes, 64B-swizzled; at DK = 256 rows of two 128-byte chunks; V's
 *           192-key tile three chunks of rows of 64 keys, 64B-swizzled.
 *   S = Q K^T    DK / 32 wgmma m64nBCk32 e4m3, both operands K-major from shared memory
 *   softmax      07f's, on S descaled in the same multiply that takes it to log2 units:
 *                scale * log2(e) * scale_q * scale_k(j); P at most 2^8 (the lazy rescale's bound)
 *   O += P V     BC / 32 wgmma m64nDKk32, P from registers (its e4m3 bytes in the order of
 *                fp8_quant.h), V transposed from shared memory: FP8 wgmma has no transpose, both
 *                operands are K-major, so V must lie keys-contiguous. The quantize kernel writes it so.
 *   epilogue     07e's, with O / l times the head's V scale.
 *
 * Quantization (fp8_quant.h has the formats): a scale per 64 query rows and per K/V tile of keys of
 * K and of V, per batch and head: scale = amax / 448, so each block uses the whole range of e4m3.
 * S's descale is free (one multiply per tile folded into the one the softmax does anyway). V's is
 * not: O sums over tiles with different scales. P of tile j is instead multiplied by r_j =
 * scale_v(j) / vmax (at most 1) before its cast -- free as well, an offset log2(r_j) in the
 * exponent -- so that O comes out in units of vmax, the head's largest V scale, applied once at the
 * end; l adds the true P (the sum times 1 / r_j). With --fp8-scale tensor a first pass finds each
 * tensor's amax and every block takes its scale.
 * Incoherent processing (--fp8-hadamard on, the default): each row of Q and K, zero-padded to DK,
 * goes through H D (common/hadamard.cuh) before its amax is taken; (H D q) . (H D k) = q . k, so S
 * is unchanged and nothing is undone; an outlier is spread over the row. */
#ifndef FA3_FP8_CUH
#define FA3_FP8_CUH

#include "lazy_rescale.cuh"
#include "../common/hopper_fp8.cuh"
#include "fp8_quant.h"

/* Where the workspace's scales are, from the kernel's parameters (07e's counters, p.sched, are its
 * first bytes). */
static __device__ __forceinline__ f8_ws_layout f8_ws_dev(const f3_params &p)
{
    return f8_ws_of(p.n_bh / p.Hq, p.Hq, p.Hkv, p.N, p.M, p.d);
}

/* The tiles of 07g for DK = 64, 128, 256 (f8_dk), with the members 07b's skeleton reads, as f3_tile:
 *   CH   64-column chunks of O (float16, the epilogue's and its store's); Q and K are chunks of
 *        ROWB bytes (QCH of them a row: 1, 1, 2), V transposed chunks of VROWB keys a row (VCH of
 *        them a tile: fp8_quant.h's f8_v_rowb).
 *   BC   keys per K/V tile, f8_bc: 128, and 192 at DK = 128 where a row sees 16 tiles or more: the
 *        products of a tile take half their 16-bit time, so what a tile costs besides them (the
 *        turn, the waits, the scales, the row maxima) weighs twice as much; 192 keys spread it over
 *        1.5 times the work. A consumer holds S (96 registers), P (24) and O (64) of its 240.
 *   CW   consumer warpgroups: 3 (192 query rows) at DK = 64 where the rows allow it (the 16-bit
 *        table's rule), 2 elsewhere: at DK = 128, O alone takes 64 registers and S 64.
 *   STAGES  3, but 2 at DK = 256, where a third would leave O no room of its own. */
template <int DK_, int BC_, int CW_>
struct f8_tile {
    static constexpr bool BF16 = false;                /* O is float16 */
    static constexpr int DK = DK_, DV = DK_, CH = DK_ / 64, BC = BC_, CW = CW_, BR = 64 * CW, REGS = CW == 3 ? 160 : 240;
    static constexpr int ROWB = DK < 128 ? DK : 128, QCH = DK / ROWB, PK = BC / 32;
    static constexpr int VROWB = BC % 128 == 0 ? 128 : 64, VCH = BC / VROWB;   /* fp8_quant.h's f8_v_rowb */
    static constexpr uint32_t q_bytes = BR * DK, kv_bytes = BC * DK, o_bytes = BR * DK * 2;
    static constexpr int STAGES = DK == 256 ? 2 : 3;
    static constexpr size_t ring = 1024 + q_bytes + 2 * STAGES * kv_bytes + 256;
    static constexpr bool O_SEP = ring + o_bytes <= F3_SMEM_MAX;
    static constexpr int O_STAGES = 0;
    static constexpr size_t smem = ring + o_bytes;
    static_assert(DK == 64 || DK == 128 || DK == 256, "07g's tiles: DK = 64, 128, 256");
    static_assert(BC == F8_BC || (BC == F8_BC_WIDE && DK == 128), "the K/V tiles of f8_bc");
    static_assert(CW == 2 || (CW == 3 && DK == 64 && BC == F8_BC), "three consumers at DK = 64");
    static_assert(O_SEP && smem <= F3_SMEM_MAX, "O staged in space of its own");

    /* A consumer's scales: its 64 rows' Q scale and the head's vmax (per work tile), the K and V
     * scales of the K/V tile at hand. */
    struct scales {
        float sq, vmax, sk, sv;
    };

    /* The copies: Q in QCH chunks of ROWB bytes; K the same; V transposed, VCH boxes of DK rows x
     * VROWB keys from key j BC of its plane on (one box where BC = VROWB = 128). */
    static __device__ __forceinline__ void copy_q(void *q, const CUtensorMap *map, uint64_t *bar, int m0, int bh)
    {
        for (int ch = 0; ch < QCH; ch++) tma_load_3d(static_cast<unsigned char *>(q) + ch * BR * ROWB, map, bar, ch * ROWB, m0, bh);
    }
    template <bool V>
    static __device__ __forceinline__ void copy_kv(void *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
    {
        unsigned char *t = static_cast<unsigned char *>(dst);
        if constexpr (V)
            for (int ch = 0; ch < VCH; ch++) tma_load_3d(t + ch * DV * VROWB, map, bar, j * BC + ch * VROWB, 0, kvp);
        else
            for (int ch = 0; ch < QCH; ch++) tma_load_3d(t + ch * BC * ROWB, map, bar, ch * ROWB, j * BC, kvp);
    }

    /* S = Q K^T: DK / 32 steps of k32 (32 bytes), each within a chunk of ROWB bytes; both K-major. */
    static __device__ __forceinline__ void issue_s(float (&s)[BC / 2], uint32_t q_wg, uint32_t k_base)
    {
        constexpr int SW = ROWB == 128 ? WGMMA_SWIZZLE_128B : WGMMA_SWIZZLE_64B, STEPS = ROWB / 32;
#pragma unroll
        for (int kk = 0; kk < DK / 32; kk++) {
            const uint32_t off = (kk % STEPS) * 32;
            const uint64_t da = wgmma_desc_sw(q_wg + (kk / STEPS) * BR * ROWB + off, 16, 8 * ROWB, SW);
            const uint64_t db = wgmma_desc_sw(k_base + (kk / STEPS) * BC * ROWB + off, 16, 8 * ROWB, SW);
            wgmma_ss_e4m3<BC>(s, da, db, kk > 0);
        }
    }

    /* O += P V: a k32 step per 32 keys, B = the transposed V tile (DV rows of BC keys, K-major, in
     * chunks of VROWB keys); the step starts 32 bytes further along the rows, or at the next chunk. */
    static __device__ __forceinline__ void issue_pv(float (&o)[DV / 2], const uint32_t (&pa)[PK][4], uint32_t v_base)
    {
        constexpr int SW = VROWB == 128 ? WGMMA_SWIZZLE_128B : WGMMA_SWIZZLE_64B;
#pragma unroll
        for (int kb = 0; kb < PK; kb++)
            wgmma_rs_e4m3<DV>(o, pa[kb], wgmma_desc_sw(v_base + f8_v_step_at(kb, BC, DV), 16, 8 * VROWB, SW), 1);
    }

    /* P (the accumulators of S after the softmax) to the A registers: 16 accumulators a k32 step. */
    static __device__ __forceinline__ void pack(const float (&s)[BC / 2], uint32_t (&pa)[PK][4])
    {
#pragma unroll
        for (int kb = 0; kb < PK; kb++) f8_pack_k32(&s[16 * kb], pa[kb]);
    }

    /* The softmax's factors for the tile: S to log2 units, descaled; log2 of r_j, taken off the
     * exponents (P r_j instead of P); 1 / r_j, which takes their sum back to the sum of P for l. */
    template <class R>
    static __device__ __forceinline__ f3_factors factors(const R &r, const f3_params &p)
    {
        const float rv = f8_v_ratio(r.sv, r.vmax);
        return {p.scale_log2 * r.sq * r.sk, __log2f(rv), __fdividef(1.0f, rv)};
    }

    /* O / l of a row is O_acc vmax / l. */
    template <class R>
    static __device__ __forceinline__ float o_scale(const R &r) { return r.vmax > 0.0f ? r.vmax : 1.0f; }

    /* Tile j's scales, loaded as soon as its K is there: the loads run under S = Q K^T, and the
     * softmax that reads them comes after it. Per work tile (j = 0) also the Q scale of this
     * consumer's 64 rows (rows past N: the last block's) and vmax. */
    template <class R, class C>
    static __device__ __forceinline__ void tile_begin(R &r, const C &c, const f3_params &p, int j)
    {
        const unsigned char *ws = reinterpret_cast<const unsigned char *>(p.sched);
        const f8_ws_layout w = f8_ws_dev(p);
        const int b = c.bh / p.Hq, h = c.bh % p.Hq, kvp = b * p.Hkv + h / (p.Hq / p.Hkv);
        if (j == 0) {
            const int qb = min(c.m0 / F8_QROWS + c.cw, w.nq - 1);
            r.sq = __ldg(reinterpret_cast<const float *>(ws + w.qs) + (size_t)c.bh * w.nq + qb);
            r.vmax = __uint_as_float(__ldg(reinterpret_cast<const unsigned *>(ws + w.vmax) + kvp));
        }
        r.sk = __ldg(reinterpret_cast<const float *>(ws + w.ks) + (size_t)kvp * w.nk + j);
        r.sv = __ldg(reinterpret_cast<const float *>(ws + w.vs) + (size_t)kvp * w.nk + j);
    }
};

#endif
