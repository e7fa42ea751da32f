/* Variant 07c: ping-pong. Against 07b, one change: the two consumer warpgroups take turns on the
 * tensor cores, so that one's softmax runs while the other's products do. Each warpgroup's work
 * on a tile is reordered into a "product section" -- O += P V of the previous tile, then
 * S = Q K^T of this one, issued back to back -- followed by the softmax of this tile. Two named
 * barriers (ids 1 and 2, 256 threads each: one warpgroup waits on its own, the other arrives on
 * it) let a warpgroup issue its product section only after the other has issued its own:
 *
 *   consumer 1:  [PV(j-1) S(j)] softmax(j) ........ [PV(j) S(j+1)] softmax(j+1) ...
 *   consumer 2:  ........ [PV(j-1) S(j)] softmax(j) ........ [PV(j) S(j+1)] ...
 *
 * Consumer 1 starts (consumer 2 arrives on its barrier once, first); each one arrives on the other's
 * barrier after issuing a section, and the last arrival of consumer 2 is left out so that every
 * arrival is matched by a wait. A stage is released when the P V that read its V has finished,
 * one tile later than in 07b.
 *
 * Compiled into fa3.cu's translation unit (it uses that file's pieces of a tile step). */

/* Named barriers 1 and 2, one per consumer warpgroup, over both consumers' 256 threads; the ids are
 * immediates, so that the compiler reserves only these. */
template <int ID>
static __device__ __forceinline__ void named_bar_sync(void)
{
    asm volatile("bar.sync %0, 256;" :: "n"(ID) : "memory");
}
template <int ID>
static __device__ __forceinline__ void named_bar_arrive(void)
{
    asm volatile("bar.arrive %0, 256;" :: "n"(ID) : "memory");
}
/* Consumer cw waits for its turn on its own barrier; passes the turn by arriving on the other's. */
static __device__ __forceinline__ void pp_wait_turn(int cw)
{
    if (cw == 0) named_bar_sync<1>(); else named_bar_sync<2>();
}
static __device__ __forceinline__ void pp_pass_turn(int cw)
{
    if (cw == 0) named_bar_arrive<2>(); else named_bar_arrive<1>();
}

/* One product section: O += P V of the previous tile (PV), then S = Q K^T of this one (S), issued
 * back to back after the other consumer's section and committed as one group. */
template <int D, bool BF16, bool PV, bool S>
static __device__ __forceinline__ void pp_section(f3_rows<D> &r, float (&s)[f3_tile<D>::BC / 2],
                                                  const uint32_t (&pa)[f3_tile<D>::BC / 16][4], uint32_t q_wg,
                                                  uint32_t k_base, uint32_t v_base, int cw, bool pass)
{
    pp_wait_turn(cw);
    f3_fence_o(r);
    wgmma_fence();
    if constexpr (PV) f3_issue_pv<D, BF16>(r, pa, v_base);
    if constexpr (S) f3_issue_s<D, BF16>(s, q_wg, k_base);
    wgmma_commit();
    if (pass) pp_pass_turn(cw);
    wgmma_wait<0>();
    f3_fence_o(r);
    wgmma_fence_regs(s);
}

template <int D, bool BF16>
__global__ void __launch_bounds__(F3_WS_THREADS, 1)
fa3_pp_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
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
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            f3_load_q<D>(sm, &tq, &bar[0], m0, bh);
            for (int j = 0; j < n_tiles; j++) {
                const int st = j % STAGES;
                if (j >= STAGES) mbar_wait(&empty[st], (j / STAGES - 1) & 1);
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
        float s[BC / 2];
        uint32_t pa[BC / 16][4];
        mbar_wait(&bar[0], 0);                  /* also when there is no tile: Q's copy lands first */
        if (n_tiles > 0) {
            if (cw == 1) named_bar_arrive<1>();  /* consumer 1 (cw = 0) goes first */
            mbar_wait(&full[0], 0);
            pp_section<D, BF16, false, true>(r, s, pa, q_wg, smem_addr(sm.k(0)), 0, cw, true);
            f3_softmax<D, BF16>(r, s, pa, 0, row0, m0, p);
            for (int j = 1; j < n_tiles; j++) {
                const int st = j % STAGES, pst = (j - 1) % STAGES;
                mbar_wait(&full[st], (j / STAGES) & 1);
                pp_section<D, BF16, true, true>(r, s, pa, q_wg, smem_addr(sm.k(st)), smem_addr(sm.v(pst)), cw, true);
                if (threadIdx.x % 128 == 0) mbar_arrive(&empty[pst]);   /* tile j - 1 is read */
                f3_softmax<D, BF16>(r, s, pa, j * BC, row0, m0, p);
            }
            /* the last tile's P V alone; consumer 2's last turn is passed to nobody */
            pp_section<D, BF16, true, false>(r, s, pa, q_wg, 0, smem_addr(sm.v((n_tiles - 1) % STAGES)), cw, cw == 0);
        }
        f3_store<D, BF16>(r, row0, bh, p);
    }
}
