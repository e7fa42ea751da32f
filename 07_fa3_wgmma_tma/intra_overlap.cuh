/* Step 07d: the overlap inside a warpgroup, FlashAttention-3's kernel. 07c + one change in the loop:
 * the consumer issues S(j) and P V(j - 1) as two groups, waits for the first only, and runs the
 * softmax of tile j while P V(j - 1) is still on the tensor cores. P(j) and the rescale of O wait
 * for that product, so one P is enough and no register in flight is touched.
 *
 *   consumer:  [S1 PV0] wait S1 | softmax1 (under PV0) | wait PV0, P1, rescale O | [S2 PV1] ...
 *
 * At d > 128 there are no turns (as in FlashAttention-3), and O is rescaled between the two issues. */
#ifndef INTRA_OVERLAP_CUH
#define INTRA_OVERLAP_CUH

#include "ping_pong.cuh"

/* The wait for P V of tile j - 1 once tile j's softmax is done. PIN: ptxas lifts wgmma.wait_group (no
 * operands) to the top of its basic block, above the softmax; a warp vote on the bits of both rows' l
 * (the last exponentials') and a branch to a trap end the block there. l is never the bits 0xffffffff
 * (a NaN l is 0x7fffffff), which ptxas cannot know. tests/sass_overlap.sh checks it. */
template <class T, bool PIN>
static __device__ __forceinline__ void f3_wait_pv(const f3_rows<T> &r)
{
    if constexpr (PIN)
        if (__any_sync(0xffffffffu, (__float_as_uint(r.l[0]) & __float_as_uint(r.l[1])) == 0xffffffffu)) __trap();
    wgmma_wait<0>();
}

/* X: what a consumer does around its exponentials (07f: its turn, and then none around the issue). */
template <class T, class K, class X = f3_exp_free>
struct f3_loop_ov {
    static constexpr bool TURNS = T::DK <= 128, EARLY = !TURNS;   /* EARLY: O rescaled between the two issues */
    static constexpr bool PIN = TURNS;  /* beyond, O and S in flight leave too few registers: ptxas serialises (C7512) */
    static constexpr bool ISSUE = TURNS && !X::TURN;              /* the turn around the products' issue */
    /* The turns run across the work tiles: the first consumer takes the first one, and the last turn
     * passed to it is waited for, so that every arrival is matched. */
    static __device__ __forceinline__ void enter(const f3_cons<T> &c)
    { if (TURNS && c.cw == T::CW - 1) pp_pass_turn<T::CW>(c.cw); if constexpr (X::TURN) X::init(c); }
    static __device__ __forceinline__ void leave(int cw) { if (TURNS && cw == 0) pp_wait_turn(cw); }
    static __device__ __forceinline__ void run(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p)
    {
        float s[T::BC / 2], alpha[2];
        uint32_t pa[T::PK][4];
        const X x = X::of(c);
        uint32_t i = c.it0;
        f3_wait<T>(c.ring.full_k, i);
        T::tile_begin(r, c, p, 0);
        f3_product_s<T>(s, c.q, f3_k_addr(c, i));
        f3_release<T>(c.ring.empty_k, i);
        if (c.n == 1) f3_q_done(c);
        bool scale = f3_softmax<T, K, X>(r, s, 0, c.row0, c.m0, p, alpha, x);   /* O is still zero */
        T::pack(s, pa);
        for (int j = 1; j < c.n; j++) {
            i = c.it0 + j;
            f3_wait<T>(c.ring.full_k, i);
            T::tile_begin(r, c, p, j);
            if (ISSUE) pp_wait_turn(c.cw);
            wgmma_fence();
            T::issue_s(s, c.q, f3_k_addr(c, i));
            wgmma_commit();
            if (EARLY && scale) f3_rescale(r, alpha); /* by tile j - 1's factor, before its P V adds in */
            f3_wait<T>(c.ring.full_v, i - 1);
            wgmma_fence_regs(r.o);
            wgmma_fence();
            T::issue_pv(r.o, pa, f3_v_addr(c, i - 1));
            wgmma_commit();
            if (ISSUE) pp_pass_turn<T::CW>(c.cw);
            wgmma_wait<1>();                          /* S(j) is there; P V of tile j - 1 may still run */
            wgmma_fence_regs(s);
            f3_release<T>(c.ring.empty_k, i);
            if (j == c.n - 1) f3_q_done(c);
            scale = f3_softmax<T, K, X>(r, s, j * T::BC, c.row0, c.m0, p, alpha, x);
            f3_wait_pv<T, PIN>(r);
            wgmma_fence_regs(r.o);
            f3_release<T>(c.ring.empty_v, i - 1);
            T::pack(s, pa);
            if (!EARLY && scale) f3_rescale(r, alpha);
        }
        i = c.it0 + c.n - 1;
        if (EARLY && scale) f3_rescale(r, alpha);
        f3_wait<T>(c.ring.full_v, i);
        f3_product_pv<T>(r, pa, f3_v_addr(c, i));
        f3_release<T>(c.ring.empty_v, i);
    }
};

#endif
