/* Step 07c: ping-pong. 07b + one change: the consumers take turns on the tensor cores, so one's
 * softmax runs under the other's products. A turn issues a "product section", O += P V of tile
 * j - 1 then S = Q K^T of tile j, as one group; named barriers (one per consumer) order the turns:
 *
 *   consumer 1:  [PV(j-1) S(j)] softmax(j) ........ [PV(j) S(j+1)] softmax(j+1) ...
 *   consumer 2:  ........ [PV(j-1) S(j)] softmax(j) ........ [PV(j) S(j+1)] ...
 *
 * V of a tile is released once the P V that read it is done, one section later than in 07b. */
#ifndef PING_PONG_CUH
#define PING_PONG_CUH

#include "warp_specialized.cuh"

/* Consumer cw waits for its turn on its own barrier, 1 + cw, and passes it on by arriving on the next
 * one's. With three consumers the turn goes round: a consumer cannot arrive twice on a barrier
 * before its owner has waited on it, since its own next turn comes only after the owner's. */
static __device__ __forceinline__ void pp_wait_turn(int cw) { bar_sync_id<256>(1 + cw); }
template <int CW>
static __device__ __forceinline__ void pp_pass_turn(int cw) { bar_arrive_id<256>(cw == CW - 1 ? 1 : cw + 2); }
/* One product section for K/V tile i, in the consumer's turn: P V of tile i - 1, S of tile i. */
template <class T, bool PV, bool S>
static __device__ __forceinline__ void pp_section(f3_rows<T> &r, float (&s)[T::BC / 2],
                                                  const uint32_t (&pa)[T::PK][4], const f3_cons<T> &c,
                                                  uint32_t i, bool pass)
{
    if (S) f3_wait<T>(c.ring.full_k, i);
    if (PV) f3_wait<T>(c.ring.full_v, i - 1);
    pp_wait_turn(c.cw);
    wgmma_fence_regs(r.o);
    wgmma_fence();
    if constexpr (PV) T::issue_pv(r.o, pa, f3_v_addr(c, i - 1));
    if constexpr (S) T::issue_s(s, c.q, f3_k_addr(c, i));
    wgmma_commit();
    if (pass) pp_pass_turn<T::CW>(c.cw);
    wgmma_wait<0>();
    wgmma_fence_regs(r.o);
    wgmma_fence_regs(s);
    if (PV) f3_release<T>(c.ring.empty_v, i - 1);
    if (S) f3_release<T>(c.ring.empty_k, i);
}
/* 07c's loop: a product section per K/V tile, the softmax of the tile between two sections. */
template <class T>
struct f3_loop_pp {
    static __device__ __forceinline__ void enter(const f3_cons<T> &) {}
    static __device__ __forceinline__ void leave(int) {}
    static __device__ __forceinline__ void run(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p)
    {
        float s[T::BC / 2], alpha[2];
        uint32_t pa[T::PK][4];
        if (c.cw == T::CW - 1) pp_pass_turn<T::CW>(c.cw);   /* the first consumer (cw = 0) goes first */
        pp_section<T, false, true>(r, s, pa, c, c.it0, true);
        for (int j = 1; j < c.n; j++) {
            if (f3_softmax<T>(r, s, (j - 1) * T::BC, c.row0, c.m0, p, alpha)) f3_rescale(r, alpha);
            T::pack(s, pa);
            pp_section<T, true, true>(r, s, pa, c, c.it0 + j, true);
        }
        f3_q_done(c);                            /* its last S is done */
        if (f3_softmax<T>(r, s, (c.n - 1) * T::BC, c.row0, c.m0, p, alpha)) f3_rescale(r, alpha);
        T::pack(s, pa);
        /* the last tile's P V alone; the last consumer's last turn is passed to nobody */
        pp_section<T, true, false>(r, s, pa, c, c.it0 + c.n, c.cw != T::CW - 1);
    }
};

#endif
