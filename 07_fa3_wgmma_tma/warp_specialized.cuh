/* Variant 07b: warp specialization. Against 07a, one change in roles: a third warpgroup, the
 * producer, only issues the TMA copies; the two consumer warpgroups only compute. The stages are a
 * ring with two mbarriers each: "full" (the producer announces the bytes, TMA completes them) and
 * "empty" (each consumer warpgroup arrives once it has waited for its last wgmma on the stage).
 * The producer refills a stage as soon as both consumers have released it, instead of at 07a's
 * block-wide barrier after every tile, so a consumer that finishes a tile early goes on to the next
 * one without waiting for the other. setmaxnreg moves registers from the producer (which needs
 * few) to the consumers: 40 + 2 x 232 per thread of each warpgroup, 64,512 of the SM's 65,536.
 *
 * Block: 384 threads; warpgroup 0 produces (one thread of it issues), warpgroups 1 and 2 own rows
 * [0, 64) and [64, 128) of the tile. Shared memory as in 07a.
 *
 * Compiled into fa3.cu's translation unit (it uses that file's tile step and store). */

#define F3_WS_THREADS 384

template <int D, bool BF16>
__global__ void __launch_bounds__(F3_WS_THREADS, 1)
fa3_ws_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
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

    if (wg == 0) {                              /* the producer */
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            f3_load_q<D>(sm, &tq, &bar[0], m0, bh);
            for (int j = 0; j < n_tiles; j++) {
                const int st = j % STAGES;
                if (j >= STAGES) mbar_wait(&empty[st], (j / STAGES - 1) & 1);   /* tile j - STAGES released */
                f3_load_kv<D>(sm, &tk, &tv, &full[st], st, j, kvp);
            }
        }
    } else {                                    /* a consumer */
        setmaxnreg_inc<232>();
        const int cw = wg - 1, w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
        f3_rows<D> r = {};
        r.m[0] = r.m[1] = -INFINITY;
        const int row0 = m0 + cw * 64 + w * 16 + g;
        const uint32_t q_wg = smem_addr(sm.q()) + cw * 64 * 128;
        mbar_wait(&bar[0], 0);
        for (int j = 0; j < n_tiles; j++) {
            const int st = j % STAGES;
            mbar_wait(&full[st], (j / STAGES) & 1);
            f3_tile_step<D, BF16>(r, q_wg, smem_addr(sm.k(st)), smem_addr(sm.v(st)), j * BC, row0, m0, p);
            if (threadIdx.x % 128 == 0) mbar_arrive(&empty[st]);   /* its wgmmas on the stage are done */
        }
        f3_store<D, BF16>(r, row0, bh, p);
    }
}
