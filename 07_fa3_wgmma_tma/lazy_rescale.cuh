/* Step 07f: the softmax's schedule, 07e + two changes. The lazy rescale (FlashAttention-4): a warp
 * keeps its rows' maxima until one has grown by more than 2^F3_LAZY, and only then rescales O. Any m
 * works if O, l and O / l use the same one and 2^(s - m) stays in range: P is at most 2^8. The warp
 * decides together (__any_sync), so the branch does not diverge. The turn on the exponentials
 * (cuDNN's order): with two consumers, the turn is taken between a tile's row maxima and its
 * exponentials, not around the products' issue, so the special-function unit serves one at a time. */
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
/* The turn on the exponentials, 07d's loop's policy X (with three consumers it was slower). ptxas
 * moves register arithmetic across bar.sync and bar.arrive, so data holds the order: the
 * exponentials' scale is multiplied by a 1.0f loaded from shared memory after the wait, and their
 * sum is stored before the arrive (one[0], one[2]: the last 16 bytes of the barriers' space). */
template <class T>
struct f3_exp_turn {
    static constexpr bool TURN = T::CW == 2 && T::DK <= 128;
    int cw;
    float *one;
    template <class C> static __device__ __forceinline__ f3_exp_turn of(const C &c) { return {c.cw, (float *)(c.sm.bar() + 30) + c.cw}; }
    template <class C> static __device__ __forceinline__ void init(const C &c) { if (threadIdx.x % 128 == 0) *of(c).one = 1.0f; }
    __device__ __forceinline__ float wait() const { if (TURN) pp_wait_turn(cw); return TURN ? *one : 1.0f; }
    __device__ __forceinline__ void pass(float l) const
    { if (TURN) { if (threadIdx.x % 128 == 0) one[2] = l; pp_pass_turn<T::CW>(cw); } }
};

#endif
