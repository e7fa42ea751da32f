/* Step 07e: persistent. 07d + one change in where the work comes from: one block per SM walks the
 * work tiles, instead of a block per tile that pays its own start and end; the producer runs ahead:
 *
 *   producer   Q(k) K0 V- K1 V0 ... | Q(k+1) K0 | store O(k) | V0 K1 ...
 *   consumers  ... last P V(k) | O(k) -> shared | S0(k+1) softmax ...
 *
 * The order is f3_tile_of's. O leaves through shared memory: the consumers write it in TMA's layout
 * (f3_o_stage: where) and the producer stores it by TMA before the V load that would overwrite it. */
#ifndef PERSISTENT_CUH
#define PERSISTENT_CUH

#include "intra_overlap.cuh"

/* The schedule's two mbarriers (warp_specialized.cuh's F3_SCHED): O staged, O's space free again;
 * the named barrier of the consumers before they stage O over V (ids 1-3 are 07c's turns). */
enum { F3_OFULL = F3_SCHED, F3_OEMPTY };
enum { F3_EPILOGUE = 4 };
/* The producer's note of a work tile whose O is staged, or about to be, and not yet stored. */
typedef struct f3_pending {
    int k, m0, bh;                               /* k < 0: none */
    uint32_t it_next;                            /* the K/V tiles gone through when the tile ended */
} f3_pending;
/* Work tile t's query block and head. Not causal: block b takes tiles b, b + G, ... (f3_next_tile),
 * a head's query blocks together, sharing K and V in L2; causal: longest first from an atomic
 * counter, within sections of heads whose K and V fit in L2 (f3_section, fa3.cu). */
static __device__ __forceinline__ void f3_tile_of(const f3_params &p, int t, int *mb, int *bh)
{
    if (!p.causal) { *bh = t / p.n_mblocks; *mb = t % p.n_mblocks; return; }   /* as 07d's grid */
    const int per_sec = p.sec * p.n_mblocks, first = t / per_sec * p.sec, rem = t % per_sec;
    const int heads = min(p.sec, p.n_bh - first);                       /* the last section may be short */
    *bh = first + rem % heads;
    *mb = p.n_mblocks - 1 - rem / heads;                                /* longest first */
}
/* The block's work tile after t (G blocks). */
static __device__ __forceinline__ int f3_next_tile(const f3_params &p, int t)
{
    return p.causal ? atomicAdd(&p.sched[0], 1) + (int)gridDim.x : t + (int)gridDim.x;
}
/* Causal: the last block to finish puts the counter back to 0 for the next launch (every block has
 * taken its last tile number by then: it counts itself done after). */
static __device__ __forceinline__ void f3_schedule_done(const f3_params &p)
{
    if (!p.causal) return;
    __threadfence();
    if (atomicAdd(&p.sched[1], 1) == (int)gridDim.x - 1) { p.sched[0] = 0; p.sched[1] = 0; }
}
/* Where the consumers stage a work tile's O: in space of its own (O_SEP), else over the V stage the
 * next work tile fills last of its first STAGES (so that its first V loads need not wait for the
 * store), or over all of them when O needs them all. */
template <class T>
static __device__ __forceinline__ __half *f3_o_stage(const f3_smem<T> &sm, uint32_t it_next)
{
    if (T::O_SEP) return sm.v(T::STAGES);
    if (T::O_STAGES == 1) return sm.v((it_next + T::STAGES - 1) % T::STAGES);
    return sm.v(0);
}

/* 07e's schedule for 07b's skeleton (warp_specialized.cuh's f3_grid says what each hook is for). */
template <class T>
struct f3_persistent {
    typedef f3_pending pending;
    static constexpr bool ONE = false;
    static __device__ __forceinline__ pending none() { return {-1, 0, 0, 0}; }
    static __device__ __forceinline__ void init(uint64_t *bar, const CUtensorMap *to)
    {
        tma_prefetch_map(to);
        mbar_init(&bar[0], T::CW * 128);          /* O full: every consumer thread, after its part of O */
        mbar_init(&bar[1], 1);                    /* O empty: the producer, once TMA has read it */
    }
    /* work tile t's (mb, bh); false past the last */
    static __device__ __forceinline__ bool tile(const f3_params &p, int t, int, int *mb, int *bh)
    {
        if (t >= p.tiles) return false;
        f3_tile_of(p, t, mb, bh);
        return true;
    }
    /* the block's next work tile, taken by the lead thread and shared with its warp */
    static __device__ __forceinline__ int next(const f3_params &p, int t, bool lead)
    {
        return __shfl_sync(0xffffffffu, lead ? f3_next_tile(p, t) : 0, 0);
    }

    /* The pending O out once the consumers have staged it; its space back once TMA has read it. */
    static __device__ __forceinline__ void store_o(const f3_smem<T> &sm, const CUtensorMap *to, pending &o)
    {
        if (o.k < 0) return;
        uint64_t *bar = sm.bar();
        const __half *src = f3_o_stage(sm, o.it_next);
        mbar_wait(&bar[F3_OFULL], o.k & 1);
        if (threadIdx.x == 0) {
            for (int ch = 0; ch < T::CH; ch++) tma_store_3d(to, src + ch * T::BR * 64, ch * 64, o.m0, o.bh);
            bulk_commit();
            bulk_wait_read<0>();
            mbar_arrive(&bar[F3_OEMPTY]);
        }
        __syncwarp();
        o.k = -1;
    }
    /* Before a V load into stage s: the pending O leaves first if it is staged there. */
    static __device__ __forceinline__ void before_v(const f3_smem<T> &sm, const CUtensorMap *to, pending &o, int s)
    {
        if (o.k < 0 || T::O_SEP) return;
        if (T::O_STAGES == 1 && s != (int)((o.it_next + T::STAGES - 1) % T::STAGES)) return;
        store_o(sm, to, o);
    }
    /* The last tile's O, if still there, leaves; this tile's is staged by the consumers at its end. */
    static __device__ __forceinline__ void tile_end(const f3_smem<T> &sm, const CUtensorMap *to, pending &o, int k,
                                                    const f3_work &w, uint32_t it_next)
    {
        store_o(sm, to, o);
        o = {k, w.m0, w.bh, it_next};
    }
    static __device__ __forceinline__ void finish(const f3_smem<T> &sm, const CUtensorMap *to, pending &o,
                                                  const f3_params &p, bool lead)
    {
        store_o(sm, to, o);
        if (lead) {
            bulk_wait<0>();                       /* the last O is written before the block ends */
            f3_schedule_done(p);
        }
    }
    /* A consumer's part of O / l into the staging layout (Q's), and its rows' LSE. Over V stages,
     * every consumer's last P V must be done first; the previous tile's O must have left. */
    static __device__ __forceinline__ void epilogue(const f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int k)
    {
        uint64_t *bar = c.sm.bar();
        const int cq = threadIdx.x % 4;
        if (!T::O_SEP) bar_sync<F3_EPILOGUE, T::CW * 128>();
        if (k > 0) mbar_wait(&bar[F3_OEMPTY], (k - 1) & 1);
        unsigned char *o = reinterpret_cast<unsigned char *>(f3_o_stage(c.sm, c.it0 + c.n));
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            float l = r.l[hi];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = r.m[hi] != -INFINITY ? T::o_scale(r) / l : 0.0f;   /* a scaled tile's descale too */
            const int row = c.row0 - c.m0 + hi * 8;                         /* in the tile; row % 8 = lane / 4 */
            unsigned char *orow = o + row * 128 + cq * 4;
#pragma unroll
            for (int i = 0; i < T::DV / 2; i += 4) {
                const int blk = i / 4;                                      /* 8-column block: chunk blk / 8, unit blk % 8 */
                *reinterpret_cast<uint32_t *>(orow + (blk / 8) * T::BR * 128 + (((blk % 8) ^ (row % 8)) * 16)) =
                    pack2<T::BF16>(r.o[i + 2 * hi] * inv, r.o[i + 2 * hi + 1] * inv);
            }
            if (cq == 0 && c.row0 + hi * 8 < p.N) p.lse[(size_t)c.bh * p.N + c.row0 + hi * 8] = f3_lse(r.m[hi], l);
        }
        fence_proxy_async();                        /* the stores above are read next by TMA */
        mbar_arrive(&bar[F3_OFULL]);
    }
};
#endif
