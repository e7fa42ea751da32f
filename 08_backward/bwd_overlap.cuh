/* Rung 08, step d: 08c + overlap. Three changes to the consumers' loop (08c's is hopper_bwd.cu's
 * h_consume), each chosen by a measurement (08_backward/NOTES.md: "08d: the clock count" for the
 * first two, "The consumers out of step" for the third). Up to d = 128 the loops are this file's
 * ov_consume (d = 64) and ov_consume_lag (d = 96, 128); above, bwd_wide.cuh's loop takes change 2.
 *
 *   1. dQ left in flight. 08c waited for dQ = dS K at once and stored it before the next tile's
 *      products were issued: the tensor cores idled through the product's drain, the stores, the
 *      proxy fence, the barrier and the next issue. ov_consume_lag leaves dQ's product running into
 *      the next tile; there it waits for it (wait_group 0) only when the next stage is in, issues
 *      S^T, and stores dQ to shared memory and hands it to the dQ warp while S^T runs.
 *
 *      Why not leave dQ in flight under S^T and dP^T too (wait_group 2 after their issue)? Tried:
 *      ptxas (CUDA 13.0) then serialises the kernel's wgmma (C7514: non-wgmma instructions reading
 *      accumulators in flight), at d = 64 and 128, though the PTX reads dq only after the wait; it
 *      does not seem to follow a group across the loop's back edge through a wait_group that leaves
 *      two others running. A wait with nothing else in flight keeps its pipeline. And dQ is stored
 *      under S^T alone, so that dq's 32 registers (d = 128) are dead again before dP^T's arrive:
 *      64 dK + 64 dV + 32 S^T + 32 dQ at the peak, as 08c's 64 + 64 + 32 + 32 (S^T and dP^T).
 *
 *   2. dQ's float32 stores without bank conflicts. Rows are 4 D bytes apart, a multiple of 128, so
 *      a row's column col sits in bank col % 32 whatever the row; thread (g, c) holds the columns
 *      8 j + 2 c (+1) of rows g and g + 8, and 08c's store j wrote column 8 j + 2 c in all 8 rows g
 *      at once: 8 rows on the same 8 banks, 8 wavefronts for 256 bytes (2 would do). Here the rows
 *      are swizzled: column col of row r lies at col ^ 8 (r % 4), so store j of rows g = 0..3 hits
 *      the four different 8-bank groups of 32 columns, rows 4..7 the same four again: 2 wavefronts.
 *      The value a store writes is the same register in every lane; only its address depends on the
 *      row, so nothing is permuted in registers. The bulk reduce-add copies the buffer as it lies,
 *      so the float32 accumulator in global memory holds the same swizzled rows, and the convert
 *      kernel reads column col of query q at col ^ 8 (q % 4) (bwd_dq_convert's swz). q, not the
 *      row counted over all heads: N need not be a multiple of 4, while the tiles start at
 *      multiples of 64 queries. D is a multiple of 32 (64, 96, 128, 256), so a row's columns stay
 *      in the row.
 *
 *   3. The consumers out of step. dQ = dS K needs both consumers' halves of dS^T, so 08c's
 *      consumers meet at a barrier every tile, and again at dQ's buffer: they run in step, both in
 *      their softmax at once while the tensor cores wait. 08d issues dQ of tile i - 1 in tile i.
 *      The other consumer wrote its half of dS(i - 1) a tile ago, so a consumer waits for it only
 *      when it runs a whole tile ahead. Each consumer signals its own half (two barriers, by the
 *      tile's parity) and waits for the dQ warp on a barrier of its own.
 *
 *        08c:     [S dP] P dS [dV dK] | both dS | [dQ(i)] | wait | store dQ(i) | [S dP] ...
 *        d = 128: [S dP] P dS [dV dK] | other's dS(i-1) | [dQ(i-1)] | wait dV dK | wait dQ(i-1) | [S']
 *                 store dQ(i-1) [dP'] ...
 *        d = 64:  [S dP] P dS [dV dK] | other's dS(i-1) | [dQ(i-1)] | wait | store dQ(i-1) | [S' dP'] ...
 *
 *      At d = 96 and 128, dQ(i - 1) still runs when the consumer signals dS(i), so the other may
 *      already write dS(i + 1): a third dS^T buffer. At d = 64 the 128-query tile leaves no room for
 *      it (shared memory), and dQ(i - 1) is waited for within tile i.
 *
 * Compiled into hopper_bwd.cu's translation unit (it uses that file's named barriers). */

/* One 8-byte shared-memory store. Written out because, through a float2 pointer, the compiler split
 * the first store at some base addresses into two 4-byte stores, each with a two-way bank conflict;
 * volatile with "memory" keeps it before the proxy fence that follows. */
static __device__ __forceinline__ void ov_st2(uint32_t addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" :: "r"(addr), "f"(x), "f"(y) : "memory");
}

/* dQ (dq[4 j + e]: row 16 wq + g (+8 for e >= 2), column col0 + 8 j + 2 c (+1 for odd e)) into the
 * swizzled float32 rows of sdq, D floats a row: column col of row r at col ^ 8 (r % 4). */
template <int D, int BR>
static __device__ __forceinline__ void ov_store_dq(float *sdq, const float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g,
                                                   int c, int cw)
{
    typedef h_dq_part<D, BR> P;
    constexpr int QN = P::QN;
    const int qn = P::cols(cw), r = g & 3;             /* row % 4: row0, 16 wq and 8 are multiples of 4 */
    const uint32_t row = smem_addr(sdq) + 4 * ((P::row0(cw) + 16 * wq + g) * D + P::col0(cw) + 2 * c);
    uint32_t at[4];                                      /* j ^ r = (j & ~3) + ((j & 3) ^ r): four addresses, */
#pragma unroll                                           /* the rest constant offsets (bytes) */
    for (int k = 0; k < 4; k++) at[k] = row + 32 * (k ^ r);
#pragma unroll
    for (int hi = 0; hi < 2; hi++)
#pragma unroll
        for (int j = 0; j < QN / 8; j++) {
            if (8 * j >= qn) break;                      /* qn is a multiple of 32: j ^ r < qn / 8 */
            ov_st2(at[j & 3] + 32 * (j & ~3) + 32 * hi * D, dq[4 * j + 2 * hi], dq[4 * j + 2 * hi + 1]);
        }
}

/* dq's values are dead (stored): the next dQ product overwrites them, its first k step not adding.
 * Said to the compiler by an empty statement that defines them, so that they are not kept live
 * through the tile as the product's inputs (at d = 128, 32 more registers at the tile's peak). */
template <int n>
static __device__ __forceinline__ void ov_dead(float (&d)[n])
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "=f"(d[i]));
}

/* A tile's dQ, once waited for, to shared memory and the dQ warp: 08c's hand-off (h_dq_out: the
 * buffer free, the stores, the proxy fence, the arrival) with the stores above. */
template <int D, int BR>
static __device__ __forceinline__ void ov_dq_out(float *sdq, float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g, int c,
                                                 int cw)
{
    bar_sync<H_DQ_EMPTY, H_DQ_SYNC>();
    ov_store_dq<D, BR>(sdq, dq, wq, g, c, cw);
    fence_proxy_async();
    bar_arrive<H_DQ_FULL, H_DQ_SYNC>();
}

/* ---- change 3: the consumers out of step (d <= 128) -------------------------------------------- */

/* dS^T of this consumer for tile parity par written (k = 2 cw + par), or waited for from the other:
 * the barrier's id from a register, one instruction where a branch on k took several */
static __device__ __forceinline__ void ov_ds_signal(int k) { bar_arrive_id<H_CONS>(H_OV_DS + k); }
static __device__ __forceinline__ void ov_ds_wait(int k) { bar_sync_id<H_CONS>(H_OV_DS + k); }

/* ov_dq_out with this consumer's own "buffer free" barrier: it waits for the dQ warp alone */
template <int D, int BR>
static __device__ __forceinline__ void ov_dq_out_own(float *sdq, float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g,
                                                     int c, int cw)
{
    if (cw == 0) bar_sync<H_OV_EMPTY, H_OV_EMPTY_SYNC>();
    else bar_sync<H_OV_EMPTY + 1, H_OV_EMPTY_SYNC>();
    ov_store_dq<D, BR>(sdq, dq, wq, g, c, cw);
    fence_proxy_async();
    bar_arrive<H_DQ_FULL, H_DQ_SYNC>();
}

/* 08d's consumer at d = 64 (change 3 alone; any d up to 128 would run it): tile i issues dQ of tile
 * i - 1, whose dS^T the other consumer wrote a tile ago, and waits for it within the tile:
 *
 *   [S dP] P [dV] dS [dK] | wait other's dS(i-1) | write dS(i) | [dQ(i-1)] | wait, signal dS(i) | store dQ(i-1)
 *
 * Two dS^T buffers suffice: a consumer signals dS(i) only once its dQ(i - 1) is done, so
 * the other's dQ(i - 2), the last reader of buffer i % 2, is done by the signal of dS(i - 1), which
 * this one waits for before it writes dS(i). The signals alternate between two barriers by the
 * tile's parity, so that a consumer a tile ahead does not arrive twice on one before the other has
 * waited on it. */
template <int D, typename T>
static __device__ __forceinline__ void ov_consume(unsigned char *sm, uint64_t *bar, const h_walk &w, const h_params &p,
                                                  int cw)
{
    typedef h_smem<D> S;
    constexpr bool BF16 = storage_bf16<T>;
    constexpr int BC = h_cfg<D>::BC, BR = h_cfg<D>::BR, QN = h_dq_part<D, BR>::QN;
    const int wq = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int kw = 64 * cw, other = 2 * (1 - cw);
    const uint32_t base = smem_addr(sm);
    const float *sL = reinterpret_cast<const float *>(sm + S::L), *sD = reinterpret_cast<const float *>(sm + S::DV);
    float *sdq = reinterpret_cast<float *>(sm + S::DQB);

    float dk[D / 2], dv[D / 2];
#pragma unroll
    for (int e = 0; e < D / 2; e++) dk[e] = dv[e] = 0.0f;

    float dq[QN / 2];
    mbar_wait(&bar[H_KV_FULL], 0);
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
        h_ss_t<D, BC, BR, BR, BF16>(s, base + S::K, kw, q_a);
        if constexpr (VR) h_rs_t<D, BR, BF16>(dp, va, do_a);
        else h_ss_t<D, BC, BR, BR, BF16>(dp, base + S::V, kw, do_a);

        uint32_t pa[BR / 16][4], da[BR / 16][4];
        h_grads<D, T>(s, dp, pa, da, dv, dk, sL + st * BR, sD + st * BR, w, p, q0, kw, wq, g, c, q_a, do_a);

        if (i > 0) ov_ds_wait(other + ((i - 1) & 1));   /* the other's dS(i - 1): buffer i % 2 is free */
        h_put_t<BR, BC>(sm + S::DSB + st * S::DS, da, kw, 0, wq, lane);
        fence_proxy_async();
        if (i > 0) {
            ov_dead(dq);
            h_dq_product<D, BC, BR, BF16>(dq, sm + S::DSB + (st ^ 1) * S::DS, base + S::K, cw);
            h_release<1, D>(bar, st, dv, dk);            /* dV, dK done: the stage goes back */
            wgmma_wait<0>();
            wgmma_fence_regs(dq);
            ov_ds_signal(2 * cw + st);                   /* after dQ(i - 1), its last read of buffer (i - 1) % 2 */
            ov_dq_out_own<D, BR>(sdq, dq, wq, g, c, cw);
        } else {
            ov_ds_signal(2 * cw + st);
            h_release<0, D>(bar, st, dv, dk);
        }
    }
    if (w.ntiles > 0) {                                  /* the last tile's dQ */
        const int last = (w.ntiles - 1) & 1;
        ov_ds_wait(other + last);
        ov_dead(dq);
        h_dq_product<D, BC, BR, BF16>(dq, sm + S::DSB + last * S::DS, base + S::K, cw);
        wgmma_wait<0>();
        wgmma_fence_regs(dq);
        ov_dq_out_own<D, BR>(sdq, dq, wq, g, c, cw);
    }
    h_store_dkdv<D, T>(dk, dv, w, p, kw, 0, wq, g, c);
}

/* 08d's consumer at d = 96 and 128 (changes 1 and 3): ov_consume with dQ left in flight into the
 * next tile. Tile i issues dQ(i - 1) at its end and stores it under S^T(i + 1), so dQ's product
 * drains under the next tile's first product. dQ(i - 1) is then read after this consumer has
 * signalled dS(i), so the other consumer may write dS(i + 1) while it runs: three dS^T buffers
 * (tile i % 3). Buffer i % 3 was last read by the
 * other's dQ(i - 3), done before it signalled dS(i - 1); this consumer's dQ(i - 2), the last reader
 * of the buffer the other writes next, is done at the top of tile i, before dS(i) is signalled.
 * One tile of the walk; FIRST (tile 0) has no dQ to issue, and is its own copy of the code: with
 * the product issued on one path of a branch instead, ptxas spilled at d = 128 (NOTES.md). */
template <int D, typename T, bool FIRST>
static __device__ __forceinline__ void ov_lag_tile(unsigned char *sm, uint64_t *bar, const h_walk &w, const h_params &p,
                                                   int cw, int i, int q0, int b3, float (&dk)[D / 2], float (&dv)[D / 2],
                                                   float (&dq)[h_dq_part<D, h_cfg<D>::BR>::QN / 2],
                                                   const uint32_t (&va)[D == 96 ? D / 16 : 1][4])
{
    typedef h_smem<D> S;
    constexpr bool BF16 = storage_bf16<T>, VR = D == 96;
    constexpr int BC = h_cfg<D>::BC, BR = h_cfg<D>::BR;
    const int wq = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int kw = 64 * cw, other = 2 * (1 - cw), st = i & 1;
    const uint32_t base = smem_addr(sm);
    const float *sL = reinterpret_cast<const float *>(sm + S::L), *sD = reinterpret_cast<const float *>(sm + S::DV);
    float *sdq = reinterpret_cast<float *>(sm + S::DQB);

    mbar_wait(&bar[H_FULL + st], (i >> 1) & 1);
    const uint32_t q_a = base + S::Q + st * S::QT, do_a = base + S::DO + st * S::QT;
    if constexpr (!FIRST) {
        wgmma_wait<0>();                                  /* dQ(i - 2) */
        wgmma_fence_regs(dq);
    }

    float s[BR / 2], dp[BR / 2];
    wgmma_fence();
    h_ss_t<D, BC, BR, BR, BF16>(s, base + S::K, kw, q_a);
    if constexpr (!FIRST)
        if (i > 1) ov_dq_out_own<D, BR>(sdq, dq, wq, g, c, cw);   /* dQ(i - 2) stored under S^T */
    wgmma_fence();
    if constexpr (VR) h_rs_t<D, BR, BF16>(dp, va, do_a);
    else h_ss_t<D, BC, BR, BR, BF16>(dp, base + S::V, kw, do_a);

    uint32_t pa[BR / 16][4], da[BR / 16][4];
    h_grads<D, T>(s, dp, pa, da, dv, dk, sL + st * BR, sD + st * BR, w, p, q0, kw, wq, g, c, q_a, do_a);

    if constexpr (!FIRST) ov_ds_wait(other + ((i - 1) & 1));   /* the other's dS(i - 1): buffer i % 3 free */
    h_put_t<BR, BC>(sm + S::DSB + b3 * S::DS, da, kw, 0, wq, lane);
    fence_proxy_async();
    ov_ds_signal(2 * cw + st);
    if constexpr (FIRST) {
        h_release<0, D>(bar, st, dv, dk);
    } else {
        ov_dead(dq);
        h_dq_product<D, BC, BR, BF16>(dq, sm + S::DSB + (b3 == 0 ? 2 : b3 - 1) * S::DS, base + S::K, cw);
        h_release<1, D>(bar, st, dv, dk);                 /* dV, dK done: the stage goes back; dQ(i - 1) running */
    }
}

/* Tiles 1 to n - 1 of the walk. At d = 96 it is called once for each consumer with cw a constant, so
 * that each copy holds its descriptors and barrier ids as constants rather than values. */
template <int D, typename T>
static __device__ __forceinline__ void ov_lag_walk(unsigned char *sm, uint64_t *bar, const h_walk &w, const h_params &p,
                                                   int cw, h_tile_at &at, float (&dk)[D / 2], float (&dv)[D / 2],
                                                   float (&dq)[h_dq_part<D, h_cfg<D>::BR>::QN / 2],
                                                   const uint32_t (&va)[D == 96 ? D / 16 : 1][4])
{
    int b3 = 1;                                           /* i % 3 */
    for (int i = 1; i < w.ntiles; i++, h_next_tile<h_cfg<D>::BR>(at, w)) {
        ov_lag_tile<D, T, false>(sm, bar, w, p, cw, i, at.q0, b3, dk, dv, dq, va);
        b3 = b3 == 2 ? 0 : b3 + 1;
    }
}

template <int D, typename T>
static __device__ __forceinline__ void ov_consume_lag(unsigned char *sm, uint64_t *bar, const h_walk &w,
                                                      const h_params &p, int cw)
{
    typedef h_smem<D> S;
    constexpr bool BF16 = storage_bf16<T>;
    constexpr int BC = h_cfg<D>::BC, BR = h_cfg<D>::BR, QN = h_dq_part<D, BR>::QN;
    static_assert(h_cfg<D>::NDS == 3, "three dS^T buffers");
    const int wq = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int kw = 64 * cw, other = 2 * (1 - cw);
    float *sdq = reinterpret_cast<float *>(sm + S::DQB);

    float dk[D / 2], dv[D / 2];
#pragma unroll
    for (int e = 0; e < D / 2; e++) dk[e] = dv[e] = 0.0f;

    float dq[QN / 2];                                     /* dQ(i - 2) at the top of tile i, in flight */
    mbar_wait(&bar[H_KV_FULL], 0);
    uint32_t va[D == 96 ? D / 16 : 1][4];
    if constexpr (D == 96) h_load_a<D, BC>(va, sm + S::V, kw, wq, lane);
    if (w.ntiles == 0) return;
    h_tile_at at = h_first_tile(w, p);
    ov_lag_tile<D, T, true>(sm, bar, w, p, cw, 0, at.q0, 0, dk, dv, dq, va);
    h_next_tile<BR>(at, w);
    if constexpr (D == 96) {                              /* a copy a consumer */
        if (cw == 0) ov_lag_walk<D, T>(sm, bar, w, p, 0, at, dk, dv, dq, va);
        else ov_lag_walk<D, T>(sm, bar, w, p, 1, at, dk, dv, dq, va);
    } else ov_lag_walk<D, T>(sm, bar, w, p, cw, at, dk, dv, dq, va);
    wgmma_wait<0>();
    wgmma_fence_regs(dq);
    if (w.ntiles > 1) ov_dq_out_own<D, BR>(sdq, dq, wq, g, c, cw);   /* dQ(n - 2) */
    const int last = w.ntiles - 1;                       /* dQ(n - 1) */
    ov_ds_wait(other + (last & 1));
    ov_dead(dq);
    h_dq_product<D, BC, BR, BF16>(dq, sm + S::DSB + (last % 3) * S::DS, smem_addr(sm) + S::K, cw);
    wgmma_wait<0>();
    wgmma_fence_regs(dq);
    ov_dq_out_own<D, BR>(sdq, dq, wq, g, c, cw);
    h_store_dkdv<D, T>(dk, dv, w, p, kw, 0, wq, g, c);
}
