/* Step 07f: lazy rescaling, FlashAttention-4's first softmax trick. 07e + one change in the
 * softmax: O is rescaled only when it has to be.
 *
 * The online softmax takes each tile's exponentials against the largest score of the row so far,
 * m, and when a tile raises m it multiplies O and l by alpha = 2^(m_old - m_new) -- DV / 2
 * multiplications a thread, and one more exponential per row, on every tile where any row's max
 * moved, which early in a row is most of them. But m need not be the true max: any value works as
 * long as O, l and the final O / l use the same one, and the exponentials 2^(s - m) stay in range.
 * So a warp keeps its old maxima until some row's max has grown by more than 2^F3_LAZY (256x):
 * its P values are then at most 256, which float32 accumulators and P in float16 or bfloat16 hold
 * without loss, and O is not touched. The decision is taken for the whole warp (__any_sync), so
 * that the branch around the rescale does not diverge; once the maxima have settled (after a few
 * tiles of a long row) no warp rescales again. The row's LSE comes out the same: m + log2(l) with
 * the m the exponentials used.
 *
 * The rest of 07e is unchanged: f3_lazy is the softmax's policy (tma_wgmma.cuh's f3_softmax) in
 * 07d's loop, which skips the rescale when the maxima were kept. */
#ifndef LAZY_RESCALE_CUH
#define LAZY_RESCALE_CUH

#include "persistent.cuh"

#define F3_LAZY 8.0f   /* log2 of the largest P value a kept maximum allows */

/* The warp keeps its rows' maxima while no row of it grew by more than 2^F3_LAZY. A row that has
 * seen no key (m = -inf) takes its first finite max at once. */
struct f3_lazy {
    static __device__ __forceinline__ bool keep(const float (&m_old)[2], const float (&m_new)[2])
    {
        const bool grow = m_new[0] > m_old[0] + F3_LAZY || m_new[1] > m_old[1] + F3_LAZY;
        return !__any_sync(0xffffffffu, grow);
    }
};

#endif
