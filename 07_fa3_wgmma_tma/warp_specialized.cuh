/* Step 07b: warp specialization. 07a + one change in roles: a producer warpgroup only issues the
 * TMA copies; the consumer warpgroups only compute. Each stage gets a "full" mbarrier (TMA completes
 * it) and an "empty" one (each consumer arrives when done), in a ring for K and one for V, so S
 * starts before V lands and K goes back as soon as S is done. No block barrier: a consumer that is
 * ahead goes on. setmaxnreg moves registers to the consumers.
 *
 * The skeleton every later step runs in (fa3_ws_kernel) takes two policies as types: L, the
 * consumer's loop over a work tile's K/V tiles, and S, where work tiles come from and how O leaves. */
#ifndef WARP_SPECIALIZED_CUH
#define WARP_SPECIALIZED_CUH

#include "tma_wgmma.cuh"

/* The mbarriers of a block, by place: Q full and empty, two for the schedule's own use (F3_SCHED),
 * the work-tile slot full and empty, then per stage K full, V full, K empty, V empty. */
enum { F3_QFULL = 0, F3_QEMPTY, F3_SCHED, F3_SFULL = F3_SCHED + 2, F3_SEMPTY, F3_RING };
/* One work tile: BR query rows of one head (m0, bh), its K/V plane and the K/V tiles it sees. */
typedef struct f3_work { int m0, bh, kvp, n; } f3_work;
template <class T>
static __device__ __forceinline__ f3_work f3_work_of(const f3_params &p, int mb, int bh)
{
    const int b = bh / p.Hq, h = bh % p.Hq, m0 = mb * T::BR;
    return {m0, bh, b * p.Hkv + h / (p.Hq / p.Hkv), f3_tiles(p, m0, T::BR, T::BC)};   /* kvp: the K/V plane */
}
/* The slot in which the producer tells the consumers their next work tile, after the barriers. */
template <class T>
static __device__ __forceinline__ int *f3_slot(const f3_smem<T> &sm)
{ return reinterpret_cast<int *>(sm.bar() + F3_RING + 4 * T::STAGES); }
/* The K and V rings. Both sides count the K/V tiles the block has gone through, over all its work
 * tiles: tile i is in stage i % STAGES, there once that stage's full barrier completes phase
 * (i / STAGES) & 1. */
template <class T>
struct f3_ring {
    uint64_t *full_k, *full_v, *empty_k, *empty_v;
    __device__ __forceinline__ f3_ring(uint64_t *bar)
        : full_k(bar + F3_RING), full_v(bar + F3_RING + T::STAGES), empty_k(bar + F3_RING + 2 * T::STAGES),
          empty_v(bar + F3_RING + 3 * T::STAGES) {}
};
template <class T>
static __device__ __forceinline__ void f3_wait(uint64_t *full, uint32_t i) { mbar_wait(&full[i % T::STAGES], (i / T::STAGES) & 1); }
/* A consumer warpgroup hands tile i's stage back once its wgmmas on it are waited for. */
template <class T>
static __device__ __forceinline__ void f3_release(uint64_t *empty, uint32_t i)
{ if (threadIdx.x % 128 == 0) mbar_arrive(&empty[i % T::STAGES]); }
/* What a consumer warpgroup's loop knows of its work tile: q, its 64 rows of Q; it0, the K/V tiles
 * the block went through before this work tile. */
template <class T>
struct f3_cons {
    f3_smem<T> sm;
    f3_ring<T> ring;
    uint32_t q, it0;
    int m0, row0, n, cw, bh;
};
template <class T>
static __device__ __forceinline__ uint32_t f3_k_addr(const f3_cons<T> &c, uint32_t i) { return smem_addr(c.sm.k(i % T::STAGES)); }
template <class T>
static __device__ __forceinline__ uint32_t f3_v_addr(const f3_cons<T> &c, uint32_t i) { return smem_addr(c.sm.v(i % T::STAGES)); }
/* The warpgroup's last S of the work tile is done: Q's shared memory may take the next one. */
template <class T>
static __device__ __forceinline__ void f3_q_done(const f3_cons<T> &c) { if (threadIdx.x % 128 == 0) mbar_arrive(&c.sm.bar()[F3_QEMPTY]); }

/* 07b's loop: each K/V tile one product after the other, S, softmax, P V; K released after S, V
 * after P V. */
template <class T>
struct f3_loop_ws {
    static __device__ __forceinline__ void enter(const f3_cons<T> &) {}
    static __device__ __forceinline__ void leave(int) {}
    static __device__ __forceinline__ void run(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p)
    {
        float s[T::BC / 2], alpha[2];
        uint32_t pa[T::PK][4];
        for (int j = 0; j < c.n; j++) {
            const uint32_t i = c.it0 + j;
            f3_wait<T>(c.ring.full_k, i);
            f3_product_s<T>(s, c.q, f3_k_addr(c, i));
            f3_release<T>(c.ring.empty_k, i);
            if (j == c.n - 1) f3_q_done(c);
            if (f3_softmax<T>(r, s, j * T::BC, c.row0, c.m0, p, alpha)) f3_rescale(r, alpha);
            T::pack(s, pa);
            f3_wait<T>(c.ring.full_v, i);
            f3_product_pv<T>(r, pa, f3_v_addr(c, i));
            f3_release<T>(c.ring.empty_v, i);
        }
    }
};

/* 07b's schedule: one work tile per block (ONE), blockIdx's; O and the LSE written from the registers.
 * The producer's hooks (none here): an O on its way out, before a V load, after a work tile, at the
 * end. A schedule of several tiles per block (07e) also says which tile is next (tile, next). */
template <class T>
struct f3_grid {
    struct pending {};
    static __device__ __forceinline__ pending none() { return {}; }
    static __device__ __forceinline__ void init(uint64_t *, const CUtensorMap *) {}
    static constexpr bool ONE = true;
    static __device__ __forceinline__ void before_v(const f3_smem<T> &, const CUtensorMap *, pending &, int) {}
    static __device__ __forceinline__ void tile_end(const f3_smem<T> &, const CUtensorMap *, pending &, int, const f3_work &, uint32_t) {}
    static __device__ __forceinline__ void finish(const f3_smem<T> &, const CUtensorMap *, pending &, const f3_params &, bool) {}
    static __device__ __forceinline__ void epilogue(const f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int)
    { f3_store<T>(r, c.row0, c.bh, p); }
};

/* The producer (one warp; its first lane issues the copies) walks the work tiles S hands out. It
 * writes each into the slot (F3_SEMPTY: every consumer thread has read the last, so each read comes
 * before the next write; -1: none left), then loads K of tile j and V of tile j - 1 in turn (the
 * order 07d's consumers use them), each once its stage is released, and Q right after the first K,
 * so that K does not wait behind the consumers' last S of the last work tile. */
template <class T, class S>
static __device__ __forceinline__ void f3_produce(const f3_smem<T> &sm, const CUtensorMap *tq, const CUtensorMap *tk,
                                                  const CUtensorMap *tv, const CUtensorMap *to, const f3_params &p)
{
    constexpr int ST = T::STAGES;
    const bool lead = threadIdx.x == 0;
    uint64_t *bar = sm.bar();
    const f3_ring<T> ring(bar);
    typename S::pending o = S::none();
    uint32_t it = 0;
    int t = blockIdx.x;                           /* the block's first work tile */
    for (int k = 0;; k++) {
        int mb = blockIdx.x, bh = blockIdx.y;
        bool done = k > 0;                        /* ONE: the block's tile, then done */
        if constexpr (!S::ONE) done = !S::tile(p, t, k, &mb, &bh);
        if (k > 0) mbar_wait(&bar[F3_SEMPTY], (k - 1) & 1);   /* the consumers have read the last slot */
        if (lead) {
            f3_slot(sm)[0] = done ? -1 : mb;
            f3_slot(sm)[1] = bh;
            mbar_arrive(&bar[F3_SFULL]);
        }
        if (done) break;
        const f3_work w = f3_work_of<T>(p, mb, bh);
        if constexpr (!S::ONE) t = S::next(p, t, lead);   /* asked for now, used next */
        for (int j = 0; j <= w.n; j++) {
            if (j < w.n) {
                const uint32_t i = it + j;
                if (i >= ST) mbar_wait(&ring.empty_k[i % ST], (i / ST - 1) & 1);
                if (lead) f3_load_kv<T>(sm.k(i % ST), tk, &ring.full_k[i % ST], j, w.kvp);
            }
            if (j == 0) {                         /* Q after the first K, once the last tile's last S is done */
                if (k > 0) mbar_wait(&bar[F3_QEMPTY], (k - 1) & 1);
                if (lead) f3_load_q<T>(sm, tq, &bar[F3_QFULL], w.m0, w.bh);
            }
            if (j > 0) {
                const uint32_t i = it + j - 1;
                S::before_v(sm, to, o, i % ST);
                if (i >= ST) mbar_wait(&ring.empty_v[i % ST], (i / ST - 1) & 1);
                if (lead) f3_load_kv<T, true>(sm.v(i % ST), tv, &ring.full_v[i % ST], j - 1, w.kvp);
            }
        }
        it += w.n;
        S::tile_end(sm, to, o, k, w, it);
    }
    S::finish(sm, to, o, p, lead);
}

/* A consumer warpgroup: per work tile from the slot, fresh O, m and l, the step's loop, O out by S. */
template <class T, class L, class S>
static __device__ __forceinline__ void f3_consume(const f3_smem<T> &sm, const f3_params &p, int cw)
{
    uint64_t *bar = sm.bar();
    const int w = (threadIdx.x / 32) % 4, g = (threadIdx.x % 32) / 4;
    f3_cons<T> c = {sm, f3_ring<T>(bar), smem_addr(sm.q()) + cw * 64 * T::ROWB, 0, 0, 0, 0, cw, 0};
    L::enter(c);
    for (int k = 0;; k++) {
        mbar_wait(&bar[F3_SFULL], k & 1);
        const int mb = f3_slot(sm)[0], bh = f3_slot(sm)[1];
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
        else L::run(r, c, p);
        S::epilogue(r, c, p, k);
        c.it0 += wk.n;
    }
    L::leave(cw);
}

template <class T, class L, class S>
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
        mbar_init(&bar[F3_QFULL], 1);
        mbar_init(&bar[F3_QEMPTY], T::CW);        /* one arrival per consumer warpgroup */
        /* 07e's two O barriers, unused with ONE: initialised as the old kernel did (its prologue, NOTES.md) */
        if constexpr (S::ONE) { mbar_init(&bar[F3_SCHED], T::CW * 128); mbar_init(&bar[F3_SCHED + 1], 1); }
        mbar_init(&bar[F3_SFULL], 1);
        mbar_init(&bar[F3_SEMPTY], T::CW * 128);  /* every consumer thread, after reading the slot */
        S::init(&bar[F3_SCHED], &to);
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
        if (threadIdx.x < 32) f3_produce<T, S>(sm, &tq, &tk, &tv, &to, p);
    } else {                                    /* a consumer */
        setmaxnreg_inc<T::REGS>();
        const int cw = threadIdx.x / 128 - 1;   /* from lane 0: uniform (not above d = 128: 07d spills) */
        f3_consume<T, L, S>(sm, p, T::DK <= 128 ? __shfl_sync(0xffffffffu, cw, 0) : cw);
    }
}

#endif
