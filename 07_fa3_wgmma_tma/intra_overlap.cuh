/* Variant 07d: ping-pong + overlap inside a warpgroup, FlashAttention-3's kernel. 07c + one change
 * in each consumer's loop: the product of tile j - 1 and the softmax of tile j run at the same time.
 * For tile j the consumer issues S(j) = Q K_j^T and O += P(j - 1) V(j - 1) as two wgmma groups,
 * waits for the first only (wgmma.wait_group 1), and does the softmax of S(j) while the tensor cores
 * still work on P V. Two things must wait until that product is done, because it reads P and adds
 * into O: turning S(j) into P(j), and rescaling O by the factor the softmax of tile j found. So
 * one P is enough, and no register a wgmma in flight uses is touched (the compiler injects no
 * warpgroup.arrive).
 *
 *   consumer:  S0 | softmax0, P0 | [S1 PV0] wait S1 | softmax1 (under PV0) | wait PV0, P1, rescale O | [S2 PV1] ...
 *
 * Why both overlaps: 07c hides one consumer's softmax under the *other* consumer's products, which
 * needs the two to alternate exactly; here a consumer's softmax also runs under its *own* product,
 * so the tensor cores stay busy while the other consumer is late, and the product section of a turn
 * is two independent groups that the tensor cores take one after the other. At d > 128 the turns
 * are left out (FlashAttention-3 does the same): O alone takes 64-128 registers there, the products
 * of a tile are long enough to hide the softmax by themselves, and O is rescaled between the issue
 * of S and of P V instead of after the wait, where it would sit between two products.
 *
 * The V of tile j - 1 is released once its P V is done. Producer and skeleton as in 07b
 * (warp_specialized.cuh); 07e runs this loop in its persistent skeleton (persistent.cuh), and 07f
 * with its softmax (SOFT; the rescale is skipped where f3_softmax kept the maxima).
 *
 * Compiled into fa3.cu's translation unit (it uses that file's pieces of a tile step). */

/* 07g: tile j's scales, asked for once its K is there (fp8.cuh); nothing for the 16-bit steps. */
template <class T>
static __device__ __forceinline__ void f3_tile_begin(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p, int j)
{
    if constexpr (T::FP8) f8_tile_begin<T>(r, c, p, j);
}

/* The wait for P V of tile j - 1 once tile j's softmax is done: wgmma.wait_group 0, but 07g's tiles
 * with HOLD tie it to the softmax's sums (fp8.cuh, f8_wait_pv), so that ptxas cannot move it above
 * the exponentials. */
template <class T>
static __device__ __forceinline__ void f3_wait_pv(const f3_rows<T> &r)
{
    if constexpr (T::FP8) f8_wait_pv<T>(r);
    else wgmma_wait<0>();
}

template <class T, bool BF16, int SOFT>
static __device__ __forceinline__ void f3_loop_ov(f3_rows<T> &r, const f3_cons<T> &c, const f3_params &p)
{
    constexpr bool TURNS = T::TURNS, EARLY = !TURNS;   /* EARLY: O rescaled between the two issues */
    float s[T::BC / 2], alpha[2];
    uint32_t pa[T::PK][4];
    uint32_t i = c.it0;
    f3_wait<T>(c.ring.full_k, i);
    f3_tile_begin<T>(r, c, p, 0);
    f3_product_s<T, BF16>(s, c.q, f3_k_addr(c, i));
    f3_release<T>(c.ring.empty_k, i);
    if (c.n == 1) f3_q_done(c);
    bool scale = f3_softmax<T, SOFT, true>(r, s, 0, c.row0, c.m0, p, alpha);   /* O is still zero */
    f3_pack<T, BF16>(s, pa);
    for (int j = 1; j < c.n; j++) {
        i = c.it0 + j;
        f3_wait<T>(c.ring.full_k, i);
        f3_tile_begin<T>(r, c, p, j);
        if (TURNS) pp_wait_turn<T::CW>(c.cw);
        wgmma_fence();
        f3_issue_s<T, BF16>(s, c.q, f3_k_addr(c, i));
        wgmma_commit();
        if (EARLY && scale) f3_rescale(r, alpha); /* by tile j - 1's factor, before its P V adds in */
        f3_wait<T>(c.ring.full_v, i - 1);
        f3_fence_o(r);
        wgmma_fence();
        f3_issue_pv<T, BF16>(r, pa, f3_v_addr(c, i - 1));
        wgmma_commit();
        if (TURNS) pp_pass_turn<T::CW>(c.cw);
        wgmma_wait<1>();                          /* S(j) is there; P V of tile j - 1 may still run */
        wgmma_fence_regs(s);
        f3_release<T>(c.ring.empty_k, i);
        if (j == c.n - 1) f3_q_done(c);
        scale = f3_softmax<T, SOFT, true>(r, s, j * T::BC, c.row0, c.m0, p, alpha);
        f3_wait_pv<T>(r);
        f3_fence_o(r);
        f3_release<T>(c.ring.empty_v, i - 1);
        f3_pack<T, BF16>(s, pa);
        if (!EARLY && scale) f3_rescale(r, alpha);
    }
    i = c.it0 + c.n - 1;
    if (EARLY && scale) f3_rescale(r, alpha);
    f3_wait<T>(c.ring.full_v, i);
    f3_product_pv<T, BF16>(r, pa, f3_v_addr(c, i));
    f3_release<T>(c.ring.empty_v, i);
}
