/* Variant 07b: warp specialization, and the skeleton 07c, 07d and 07e run in. Against 07a, one
 * change in roles: a third warpgroup, the producer, only issues the TMA copies; the two consumer
 * warpgroups only compute. The stages become rings with two mbarriers per stage, one ring for K
 * and one for V: "full" (the producer announces the bytes, TMA completes them) and "empty" (each
 * consumer warpgroup arrives once it has waited for its last wgmma on the tile). With K and V
 * apart, a consumer starts S = Q K^T of a tile before its V is there, and K goes back to the
 * producer as soon as S is done. The producer refills a stage as soon as both consumers have
 * released it, instead of at 07a's block-wide barrier after every tile, so a consumer that
 * finishes a tile early goes on to the next one without waiting for the other. setmaxnreg moves
 * registers from the producer (which needs few) to the consumers: 24 + 2 x 240 per thread of each
 * warpgroup, the 64,512 the block starts with (168 per thread of 384); with three consumers
 * (d = 64) 24 + 3 x 160 of 512 threads' 128.
 *
 * Block: 128 (CW + 1) threads; warpgroup 0 produces (one thread of it issues), consumer cw
 * (warpgroup cw + 1) owns rows [64 cw, 64 cw + 64) of the tile. Shared memory as in 07a.
 *
 * Written once here, for every warp-specialized step: the barriers and setmaxnreg
 * (fa3_ws_kernel), the producer (f3_produce), the walk over work tiles (one per block; 07e's
 * persistent walk is in persistent.cuh) and the frame around a consumer's loop (f3_consume). The
 * steps differ in their consumer loop: f3_loop_ws here (07b), f3_loop_pp (07c, ping_pong.cuh),
 * f3_loop_ov (07d and 07e, intra_overlap.cuh).
 *
 * Compiled into fa3.cu's translation unit (it uses that file's pieces of a tile step). */

enum { F3_LOOP_WS = 1, F3_LOOP_PP, F3_LOOP_OV };

/* Named barriers (bar_sync / bar_arrive ids; 0 is __syncthreads): 1 to 3 are 07c's and 07d's
 * turns, one per consumer (ping_pong.cuh), 4 the consumers' before 07e stages O over V. */
enum { F3_EPILOGUE = 4 };

/* One work tile: BR query rows of one head (m0, bh), its K/V plane and the K/V tiles it sees. */
typedef struct f3_work {
    int m0, bh, kvp, n;
} f3_work;

/* 07e: the producer's note of a work tile whose O is staged, or about to be, and not yet stored. */
typedef struct f3_pending {
    int k, m0, bh;                               /* k < 0: none */
    uint32_t it_next;                            /* the K/V tiles gone through when the tile ended */
} f3_pending;

/* The K and V rings. Both sides count the K/V tiles the block has gone through, over all its work
 * tiles: tile number i is in stage i % STAGES, that stage's (i / STAGES)-th use, so it is there
 * when the stage's full barrier has completed phase (i / STAGES) & 1. */
template <class T>
struct f3_ring {
    uint64_t *full_k, *full_v, *empty_k, *empty_v;
    __device__ __forceinline__ f3_ring(uint64_t *bar)
        : full_k(bar + F3_RING), full_v(bar + F3_RING + T::STAGES), empty_k(bar + F3_RING + 2 * T::STAGES),
          empty_v(bar + F3_RING + 3 * T::STAGES) {}
};

template <class T>
static __device__ __forceinline__ void f3_wait(uint64_t *full, uint32_t i)
{
    mbar_wait(&full[i % T::STAGES], (i / T::STAGES) & 1);
}

/* A consumer warpgroup hands tile i's stage back once its wgmmas on it are waited for. */
template <class T>
static __device__ __forceinline__ void f3_release(uint64_t *empty, uint32_t i)
{
    if (threadIdx.x % 128 == 0) mbar_arrive(&empty[i % T::STAGES]);
}

/* What a consumer warpgroup's loop knows of its work tile: its 64 rows of Q in shared memory, the
 * K/V tiles the block went through before this work tile (it0), the tile's first row, this
 * thread's first row, the number of K/V tiles, which consumer it is (cw = 0, 1) and the head. */
template <class T>
struct f3_cons {
    f3_smem<T> sm;
    f3_ring<T> ring;
    uint32_t q, it0;
    int m0, row0, n, cw, bh;
};

template <class T>
static __device__ __forceinline__ uint32_t f3_k_addr(const f3_cons<T> &c, uint32_t i)
{
    return smem_addr(c.sm.k(i % T::STAGES));
}
template <class T>
static __device__ __forceinline__ uint32_t f3_v_addr(const f3_cons<T> &c, uint32_t i)
{
    return smem_addr(c.sm.v(i % T::STAGES));
}

/* The warpgroup's last S of the work tile is done: Q's shared memory may take the next one (07e). */
template <class T>
static __device__ __forceinline__ void f3_q_done(const f3_cons<T> &c)
{
    if (threadIdx.x % 128 == 0) mbar_arrive(&c.sm.bar()[F3_QEMPTY]);
}

/* 07b's loop: each K/V tile one product after the other, S, softmax, P V; K released after S, V
 * after P V. */
template <class T, bool BF16>
static __device__ __forceinline__ void f3_loop_ws(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p)
{
    float s[T::BC / 2], alpha[2];
    uint32_t pa[T::PK][4];
    for (int j = 0; j < c.n; j++) {
        const uint32_t i = c.it0 + j;
        f3_wait<T>(c.ring.full_k, i);
        f3_product_s<T, BF16>(s, c.q, f3_k_addr(c, i));
        f3_release<T>(c.ring.empty_k, i);
        if (j == c.n - 1) f3_q_done(c);
        f3_softmax<T>(r, s, j * T::BC, c.row0, c.m0, p, alpha);
        f3_pack<T, BF16>(s, pa);
        f3_wait<T>(c.ring.full_v, i);
        f3_product_pv<T, BF16>(r, pa, f3_v_addr(c, i));
        f3_release<T>(c.ring.empty_v, i);
    }
}

/* The later steps' loops and 07e's pieces, defined in the files that teach them. */
template <int CW>
static __device__ __forceinline__ void pp_wait_turn(int cw);
template <int CW>
static __device__ __forceinline__ void pp_pass_turn(int cw);
template <class T, bool BF16>
static __device__ __forceinline__ void f3_loop_pp(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p);
template <class T, bool BF16, int SOFT>
static __device__ __forceinline__ void f3_loop_ov(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p);
template <class T, bool BF16>
static __device__ __forceinline__ void f3_epilogue(const f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int k);
template <class T>
static __device__ __forceinline__ void f3_store_o(const f3_smem<T> &sm, const CUtensorMap *to, f3_pending &o);
template <class T>
static __device__ __forceinline__ void f3_store_before(const f3_smem<T> &sm, const CUtensorMap *to, f3_pending &o, int s);
static __device__ __forceinline__ void f3_stage_o(f3_pending &o, int k, const f3_work &w, uint32_t it_next);
static __device__ __forceinline__ void f3_tile_of(const f3_params &p, int t, int *mb, int *bh);
static __device__ __forceinline__ int f3_next_tile(const f3_params &p, int t);
static __device__ __forceinline__ void f3_schedule_done(const f3_params &p);

/* The work tile of query block mb of head bh. */
template <class T>
static __device__ __forceinline__ f3_work f3_work_of(const f3_params &p, int mb, int bh)
{
    const int b = bh / p.Hq, h = bh % p.Hq;
    f3_work w;
    w.m0 = mb * T::BR;
    w.bh = bh;
    w.kvp = b * p.Hkv + h / (p.Hq / p.Hkv);                              /* K/V plane */
    w.n = f3_tiles(p, w.m0, T::BR, T::BC);
    return w;
}

/* The producer (one warp; its first lane issues the copies) walks the block's work tiles:
 * blockIdx's one (07b-07d), or 07e's schedule (persistent.cuh). For each it writes the tile into a
 * slot of shared memory that the consumers read (mbarrier F3_SFULL: its lane 0 arrives once it has
 * written; F3_SEMPTY: each consumer thread arrives once it has read, so every read is ordered
 * before the next write, thread by thread), then loads K of tile j and V of tile j - 1 in turn
 * (the order in which 07d's consumers use them; 07b and 07c take them in the same order), each
 * into the next stage of its ring once the consumers have released it, and Q right after the
 * first K, once the consumers' last S of the last work tile is done (07e), so that the first K
 * does not wait behind that S. When no tile is left it
 * writes -1 into the slot. 07e: a tile's O, staged by the consumers, is stored before the first V
 * load that would overwrite it, or at the latest once the next tile's loads are issued. */
template <class T, bool PERSIST>
static __device__ __forceinline__ void f3_produce(const f3_smem<T> &sm, const CUtensorMap *tq, const CUtensorMap *tk,
                                                  const CUtensorMap *tv, const CUtensorMap *to, const f3_params &p)
{
    constexpr int S = T::STAGES;
    const bool lead = threadIdx.x == 0;
    uint64_t *bar = sm.bar();
    const f3_ring<T> ring(bar);
    f3_pending o = {-1, 0, 0, 0};
    uint32_t it = 0;
    int t = blockIdx.x;                           /* 07e: the block's first work tile */
    for (int k = 0;; k++) {
        int mb = blockIdx.x, bh = blockIdx.y;
        const bool done = PERSIST ? t >= p.tiles : k > 0;
        if (PERSIST && !done) f3_tile_of(p, t, &mb, &bh);
        if (k > 0) mbar_wait(&bar[F3_SEMPTY], (k - 1) & 1);   /* the consumers have read the last slot */
        if (lead) {
            sm.slot()[0] = done ? -1 : mb;
            sm.slot()[1] = bh;
            mbar_arrive(&bar[F3_SFULL]);
        }
        if (done) break;
        const f3_work w = f3_work_of<T>(p, mb, bh);
        if (PERSIST) t = __shfl_sync(0xffffffffu, lead ? f3_next_tile(p, t) : 0, 0);   /* asked for now, used next */
        for (int j = 0; j <= w.n; j++) {
            if (j < w.n) {
                const uint32_t i = it + j;
                if (i >= S) mbar_wait(&ring.empty_k[i % S], (i / S - 1) & 1);
                if (lead) f3_load_kv<T>(sm.k(i % S), tk, &ring.full_k[i % S], j, w.kvp);
            }
            if (j == 0) {                         /* Q after the first K, once the last tile's last S is done */
                if (k > 0) mbar_wait(&bar[F3_QEMPTY], (k - 1) & 1);
                if (lead) f3_load_q<T>(sm, tq, &bar[F3_QFULL], w.m0, w.bh);
            }
            if (j > 0) {
                const uint32_t i = it + j - 1;
                if (PERSIST) f3_store_before<T>(sm, to, o, i % S);
                if (i >= S) mbar_wait(&ring.empty_v[i % S], (i / S - 1) & 1);
                if (lead) f3_load_kv<T, true>(sm.v(i % S), tv, &ring.full_v[i % S], j - 1, w.kvp);
            }
        }
        it += w.n;
        if (PERSIST) {
            f3_store_o<T>(sm, to, o);             /* the last tile's O, if still there */
            f3_stage_o(o, k, w, it);              /* this tile's, staged by the consumers at its end */
        }
    }
    if (PERSIST) {
        f3_store_o<T>(sm, to, o);
        if (lead) {
            bulk_wait<0>();                       /* the last O is written before the block ends */
            f3_schedule_done(p);
        }
    }
}

/* A consumer warpgroup: per work tile, wait for Q and read which tile it is; fresh O, m and l; the
 * step's loop over the K/V tiles; O and LSE out (07e: O staged for the producer's TMA store). */
template <class T, bool BF16, int LOOP, bool PERSIST, int SOFT>
static __device__ __forceinline__ void f3_consume(const f3_smem<T> &sm, const f3_params &p, int cw)
{
    uint64_t *bar = sm.bar();
    const int w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
    f3_cons<T> c = {sm, f3_ring<T>(bar), smem_addr(sm.q()) + cw * 64 * T::ROWB, 0, 0, 0, 0, cw, 0};
    constexpr bool turns = LOOP == F3_LOOP_OV && T::TURNS;
    if (turns && cw == T::CW - 1) pp_pass_turn<T::CW>(cw);   /* 07d: the first consumer (cw = 0) takes the first turn */
    for (int k = 0;; k++) {
        mbar_wait(&bar[F3_SFULL], k & 1);
        const int mb = sm.slot()[0], bh = sm.slot()[1];
        if (mb < 0) break;                        /* no work tile left */
        mbar_arrive(&bar[F3_SEMPTY]);
        const f3_work wk = f3_work_of<T>(p, mb, bh);
        mbar_wait(&bar[F3_QFULL], k & 1);
        f3_rows<T> r = {};
        r.m[0] = r.m[1] = -INFINITY;
        c.m0 = wk.m0;
        c.n = wk.n;
        c.bh = wk.bh;
        c.row0 = wk.m0 + cw * 64 + w * 16 + g;                          /* this thread's rows: row0, row0 + 8 */
        if (wk.n == 0) f3_q_done(c);
        else if constexpr (LOOP == F3_LOOP_WS) f3_loop_ws<T, BF16>(r, c, p);
        else if constexpr (LOOP == F3_LOOP_PP) f3_loop_pp<T, BF16>(r, c, p);
        else f3_loop_ov<T, BF16, SOFT>(r, c, p);
        if constexpr (PERSIST) f3_epilogue<T, BF16>(r, c, p, k);
        else f3_store<T, BF16>(r, c.row0, wk.bh, p);
        c.it0 += wk.n;
    }
    if (turns && cw == 0) pp_wait_turn<T::CW>(cw);   /* the last turn passed to it: every arrival is waited for */
}

template <class T, bool BF16, int LOOP, bool PERSIST, int SOFT>
__global__ void __launch_bounds__(128 * (T::CW + 1), 1)
fa3_ws_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
              const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap to, f3_params p)
{
    extern __shared__ unsigned char smem_raw[];
    const f3_smem<T> sm(smem_raw);
    uint64_t *bar = sm.bar();
    const f3_ring<T> ring(bar);
    if (threadIdx.x == 0) {
        tma_prefetch_map(&tq); tma_prefetch_map(&tk); tma_prefetch_map(&tv);
        if (PERSIST) tma_prefetch_map(&to);
        mbar_init(&bar[F3_QFULL], 1);
        mbar_init(&bar[F3_QEMPTY], T::CW);        /* one arrival per consumer warpgroup */
        mbar_init(&bar[F3_OFULL], T::CW * 128);   /* every consumer thread, after its part of O */
        mbar_init(&bar[F3_OEMPTY], 1);
        mbar_init(&bar[F3_SFULL], 1);
        mbar_init(&bar[F3_SEMPTY], T::CW * 128);  /* every consumer thread, after reading the slot */
        for (int s = 0; s < T::STAGES; s++) {
            mbar_init(&ring.full_k[s], 1);
            mbar_init(&ring.full_v[s], 1);
            mbar_init(&ring.empty_k[s], T::CW);
            mbar_init(&ring.empty_v[s], T::CW);
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (threadIdx.x < 128) {                    /* the producer */
        setmaxnreg_dec<24>();
        if (threadIdx.x < 32) f3_produce<T, PERSIST>(sm, &tq, &tk, &tv, &to, p);
    } else {                                    /* a consumer */
        setmaxnreg_inc<T::REGS>();
        f3_consume<T, BF16, LOOP, PERSIST, SOFT>(sm, p, threadIdx.x / 128 - 1);
    }
}
