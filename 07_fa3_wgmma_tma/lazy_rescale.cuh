/* Step 07f: the lazy rescale, FlashAttention-4's first softmax trick. 07e + one change in the
 * softmax: a warp keeps its rows' maxima until one has grown by more than 2^F3_LAZY, and O is
 * rescaled only then. Any m works if O, l and O / l use the same one and 2^(s - m) stays in range:
 * P is at most 2^8, which float32 and 16-bit P hold. The warp decides together (__any_sync), so
 * the branch does not diverge; once the maxima settle, no warp rescales again. */
#ifndef LAZY_RESCALE_CUH
#define LAZY_RESCALE_CUH

#include "persistent.cuh"

#define F3_LAZY 8.0f   /* log2 of the largest P value a kept maximum allows */
/* A row that has seen no key (m = -inf) takes its first finite max at once. */
struct f3_lazy {
    static __device__ __forceinline__ bool keep(const float (&m_old)[2], const float (&m_new)[2])
    {
        const bool grow = m_new[0] > m_old[0] + F3_LAZY || m_new[1] > m_old[1] + F3_LAZY;
        return !__any_sync(0xffffffffu, grow);
    }
};

#endif
