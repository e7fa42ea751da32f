/* Variant 07d: overlap inside a warpgroup (FlashAttention-3's two-stage pipelining within a
 * consumer). Against 07b, one change in each consumer's loop: the product of tile j - 1 and the
 * softmax of tile j run at the same time. For tile j the consumer issues S(j) = Q K_j^T and
 * O += P(j - 1) V(j - 1) as two wgmma groups, waits for the first only (wgmma.wait_group 1), and
 * does the softmax of S(j) while the tensor cores still work on P V; the factor by which O must be
 * rescaled is kept until that product is done, then applied. P of two tiles live at once (the one
 * being multiplied, the one being formed): 32 more registers per thread at d = 128.
 *
 *   consumer:  S0 | softmax0 | S1 PV0 | softmax1 (under PV0) | wait PV0, rescale O | S2 PV1 | ...
 *
 * The stage of tile j - 1 is released once its P V is done. Producer as in 07b.
 *
 * Compiled into fa3.cu's translation unit (it uses that file's pieces of a tile step). */

template <int D>
static __device__ __forceinline__ void f3_rescale(f3_rows<D> &r, const float (&alpha)[2])
{
#pragma unroll
    for (int hi = 0; hi < 2; hi++)
#pragma unroll
        for (int oh = 0; oh < f3_tile<D>::OH; oh++)
#pragma unroll
            for (int i = 0; i < f3_tile<D>::ON / 2; i += 4) {
                r.o[oh][i + 2 * hi] *= alpha[hi];
                r.o[oh][i + 2 * hi + 1] *= alpha[hi];
            }
}

/* One tile j >= 1 of a consumer: S(j) and P(j - 1) V(j - 1) issued as two groups, the softmax of
 * S(j) into p_next under the second, then O rescaled. p_cur and p_next swap roles from one tile to
 * the next (the caller alternates them: a register copy between the two would be an instruction
 * writing a wgmma's input while another is in flight, and the compiler would serialize them). */
template <int D, bool BF16>
static __device__ __forceinline__ void f3_ov_step(const f3_smem<D> &sm, uint64_t *full, uint64_t *empty, f3_rows<D> &r,
                                                  float (&s)[f3_tile<D>::BC / 2],
                                                  const uint32_t (&p_cur)[f3_tile<D>::BC / 16][4],
                                                  uint32_t (&p_next)[f3_tile<D>::BC / 16][4], uint32_t q_wg, int j,
                                                  int row0, int m0, const f3_params &p)
{
    constexpr int BC = f3_tile<D>::BC, STAGES = f3_tile<D>::STAGES;
    const int st = j % STAGES, pst = (j - 1) % STAGES;
    float alpha[2];
    mbar_wait(&full[st], (j / STAGES) & 1);
    f3_fence_o(r);
    wgmma_fence();
    f3_issue_s<D, BF16>(s, q_wg, smem_addr(sm.k(st)));
    wgmma_commit();
    f3_issue_pv<D, BF16>(r, p_cur, smem_addr(sm.v(pst)));
    wgmma_commit();
    wgmma_wait<1>();                            /* S(j) is there; P V of tile j - 1 may still run */
    wgmma_fence_regs(s);
    f3_softmax<D, BF16, true>(r, s, p_next, j * BC, row0, m0, p, alpha);
    wgmma_wait<0>();
    f3_fence_o(r);
    if (threadIdx.x % 128 == 0) mbar_arrive(&empty[pst]);   /* tile j - 1 is read */
    f3_rescale(r, alpha);
}

template <int D, bool BF16>
__global__ void __launch_bounds__(F3_WS_THREADS, 1)
fa3_ov_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
              const __grid_constant__ CUtensorMap tv, f3_params p)
{
    constexpr int BC = f3_tile<D>::BC, STAGES = f3_tile<D>::STAGES;
    extern __shared__ unsigned char smem_raw[];
    const f3_smem<D> sm(smem_raw);
    uint64_t *bar = sm.bar(), *full = bar + 1, *empty = bar + 1 + STAGES;
    const int wg = threadIdx.x / 128;
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq;
    const int kvp = b * p.Hkv + h / (p.Hq / p.Hkv);
    const int m0 = blockIdx.x * F3_BR, n_tiles = f3_tiles(p, m0, BC);

    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv);
        mbar_init(&bar[0], 1);
        for (int s = 0; s < STAGES; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 2);            /* one arrival per consumer warpgroup */
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {                              /* the producer, as in 07b */
        setmaxnreg_dec<24>();
        if (threadIdx.x == 0) {
            f3_load_q<D>(sm, &tq, &bar[0], m0, bh);
            for (int j = 0; j < n_tiles; j++) {
                const int st = j % STAGES;
                if (j >= STAGES) mbar_wait(&empty[st], (j / STAGES - 1) & 1);
                f3_load_kv<D>(sm, &tk, &tv, &full[st], st, j, kvp);
            }
        }
    } else {                                    /* a consumer */
        setmaxnreg_inc<240>();
        const int cw = wg - 1, w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
        f3_rows<D> r = {};
        r.m[0] = r.m[1] = -INFINITY;
        const int row0 = m0 + cw * 64 + w * 16 + g;
        const uint32_t q_wg = smem_addr(sm.q()) + cw * 64 * 128;
        float s[BC / 2];
        uint32_t pa[BC / 16][4], pb[BC / 16][4];    /* P of tile j - 1 (in the product), of tile j */
        mbar_wait(&bar[0], 0);
        if (n_tiles > 0) {
            mbar_wait(&full[0], 0);
            wgmma_fence();
            f3_issue_s<D, BF16>(s, q_wg, smem_addr(sm.k(0)));
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence_regs(s);
            f3_softmax<D, BF16>(r, s, pa, 0, row0, m0, p);
            int j = 1;
            for (; j + 1 < n_tiles; j += 2) {       /* two tiles a turn, so that P's registers alternate */
                f3_ov_step<D, BF16>(sm, full, empty, r, s, pa, pb, q_wg, j, row0, m0, p);
                f3_ov_step<D, BF16>(sm, full, empty, r, s, pb, pa, q_wg, j + 1, row0, m0, p);
            }
            if (j < n_tiles) f3_ov_step<D, BF16>(sm, full, empty, r, s, pa, pb, q_wg, j, row0, m0, p);
            const bool last_in_b = j < n_tiles;     /* the last tile's P: in pb after an odd step */
            f3_fence_o(r);
            wgmma_fence();
            if (last_in_b) f3_issue_pv<D, BF16>(r, pb, smem_addr(sm.v((n_tiles - 1) % STAGES)));
            else f3_issue_pv<D, BF16>(r, pa, smem_addr(sm.v((n_tiles - 1) % STAGES)));
            wgmma_commit();
            wgmma_wait<0>();
            f3_fence_o(r);
        }
        f3_store<D, BF16>(r, row0, bh, p);
    }
}
