/* Rung 08 at d > 128 (08c and 08d, DP = 256): the two consumers split the head dim, not the keys.
 *
 * Up to DP = 128 a consumer owns 64 keys and every column of their dK and dV, DP / 2 + DP / 2
 * float32 registers a thread: at DP = 256 that is 256, more than a thread may have. So the block owns
 * 64 keys and both consumers work on all of them, each product split so that none is done twice:
 *
 *   S^T = K Q^T, dP^T = V dO^T   split by queries: consumer cw takes queries [32 cw, 32 cw + 32) of
 *                                the tile over all of d (h_ss_t with N = 32)
 *   P^T, dS^T                    as at every d, in registers; then both to shared memory (h_put_t,
 *                                two buffers each) and a barrier over both consumers, because
 *                                each product below reads every query's P^T or dS^T
 *   dV += P^T dO, dK += dS^T Q   split by columns: consumer cw owns columns [128 cw, 128 cw + 128)
 *                                (h_ss_cols: A from shared memory K-major, B N-major)
 *   dQ = dS K                    split by columns, as at every d (h_dq_product)
 *
 * A thread holds 64 + 64 floats of dV and dK for the whole walk, 64 of dQ from its product to its
 * store, 16 + 16 of S^T and dP^T. FlashAttention-3's d = 256 backward also keeps P and dS in shared
 * memory and splits dK and dV between its consumers along the head dim
 * (hopper/flash_bwd_launch_template.h, dKV_swapAB). 08d's overlap of dQ with the next tile is not
 * applied here; its bank-conflict-free dQ stores are.
 *
 * Compiled into hopper_bwd.cu's translation unit (its pieces, named barriers and shared memory). */

/* acc (64 keys x N columns) += A B over the tile's 64 queries: A = P^T or dS^T from the buffer at a
 * (keys by queries, K-major: 16-query steps 32 bytes apart), B = dO or Q of the stage from column
 * chunk b (N-major: 16-query steps 2048 bytes apart, chunks of 64 columns H_BR rows long). Committed,
 * not waited for. */
template <int N, bool BF16>
static __device__ __forceinline__ void h_ss_cols(float (&acc)[N / 2], uint32_t a, uint32_t b)
{
    wgmma_fence_regs(acc);
    wgmma_fence();
    const wgmma_dsc da = wgmma_dsc_of(a, 16, 1024), db = wgmma_dsc_of(b, H_BR * 128, 1024);
#pragma unroll
    for (int kb = 0; kb < H_BR / 16; kb++)
        wgmma_ss_nt<N, BF16>(acc, wgmma_dsc_at(da, kb * 32), wgmma_dsc_at(db, kb * 2048), 1);
    wgmma_commit();
}

/* A consumer warpgroup at DP = 256: the block's 64 keys, columns [DH cw, DH cw + DH) of their dK and
 * dV over the whole walk, a tile's pieces in order. OV: dQ stored without bank conflicts (08d). */
template <int D, typename T, bool OV>
static __device__ __forceinline__ void h_consume_wide(unsigned char *sm, uint64_t *bar, const h_walk &w,
                                                      const h_params &p, int cw)
{
    typedef h_smem<D> S;
    constexpr bool BF16 = storage_bf16<T>;
    constexpr int BC = h_cfg<D>::BC, ST = h_cfg<D>::ST, NQ = H_BR / 2, DH = D / 2;
    const int wq = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int q_off = NQ * cw;                           /* this consumer's queries in the tile */
    const uint32_t base = smem_addr(sm);
    const float *sL = reinterpret_cast<const float *>(sm + S::L), *sD = reinterpret_cast<const float *>(sm + S::DV);
    float *sdq = reinterpret_cast<float *>(sm + S::DQB);

    float dk[DH / 2], dv[DH / 2];
#pragma unroll
    for (int e = 0; e < DH / 2; e++) dk[e] = dv[e] = 0.0f;

    mbar_wait(&bar[H_KV_FULL], 0);
    h_tile_at at = h_first_tile(w, p);
    for (int i = 0; i < w.ntiles; i++, h_next_tile<H_BR>(at, w)) {
        const int st = i % ST;
        const int q0 = at.q0;
        mbar_wait(&bar[H_FULL + st], (i / ST) & 1);
        const uint32_t q_a = base + S::Q + st * S::QT, do_a = base + S::DO + st * S::QT;

        float s[NQ / 2], dp[NQ / 2];                     /* 64 keys x this consumer's 32 queries */
        wgmma_fence();
        h_ss_t<D, BC, H_BR, NQ, BF16>(s, base + S::K, 0, q_a + q_off * 128);    /* S^T = K Q^T */
        h_ss_t<D, BC, H_BR, NQ, BF16>(dp, base + S::V, 0, do_a + q_off * 128);  /* dP^T = V dO^T */

        wgmma_wait<1>();
        wgmma_fence_regs(s);
        const float *sl = sL + st * H_BR + q_off, *sd = sD + st * H_BR + q_off;
        const int key0 = w.k0 + 16 * wq + g;
        const bool mask = w.k0 + BC > p.M || q0 + q_off + NQ > p.N || (p.causal && w.k0 + 63 > q0 + q_off + w.shift);
        h_probs<NQ>(s, sl, w, p, q0 + q_off, key0, mask, c);
        uint32_t pa[NQ / 16][4];
        h_pack_a<T, NQ>(pa, s);
        unsigned char *spb = sm + S::PB + (i & 1) * S::DS, *sds = sm + S::DSB + (i & 1) * S::DS;
        h_put_t<NQ, BC>(spb, pa, 0, q_off, wq, lane);

        wgmma_wait<0>();
        wgmma_fence_regs(dp);
        h_dsoftmax<NQ>(dp, s, sd, c);
        uint32_t da[NQ / 16][4];
        h_pack_a<T, NQ>(da, dp);
        h_put_t<NQ, BC>(sds, da, 0, q_off, wq, lane);
        fence_proxy_async();
        bar_sync<H_DS_READY, H_CONS>();                  /* both consumers' P^T and dS^T written */

        const uint32_t cols = (DH / 64) * cw * H_BR * 128;   /* this consumer's column chunks of Q, dO */
        h_ss_cols<DH, BF16>(dv, smem_addr(spb), do_a + cols);   /* dV += P^T dO */
        h_ss_cols<DH, BF16>(dk, smem_addr(sds), q_a + cols);    /* dK += dS^T Q */
        float dq[D / 4];
        h_dq_product<D, BC, H_BR, BF16>(dq, sds, base + S::K, cw);   /* dQ = dS K */
        h_release<1, DH>(bar, st, dv, dk);
        wgmma_wait<0>();
        wgmma_fence_regs(dq);
        if constexpr (OV) ov_dq_out<D, H_BR>(sdq, dq, wq, g, c, cw);
        else h_dq_out<D, H_BR>(sdq, dq, wq, g, c, cw);
    }
    h_store_dkdv<DH, T>(dk, dv, w, p, 0, DH * cw, wq, g, c);
}
