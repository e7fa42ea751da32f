/* Variant 07g: exponentials on the FMA units, FlashAttention-4's second softmax trick. 07f + one
 * change in the softmax: some of the 2^x go to a polynomial instead of the special-function unit.
 *
 * Every score of a tile needs one 2^x, and the H100 does 2^x (MUFU.EX2) at 16 a clock per SM
 * against 128 FMAs. At d = 64 a 128 x 128 tile's two products take about as many tensor-core
 * cycles as its 16,384 exponentials take MUFU cycles, so the special-function unit, not the tensor
 * cores, sets the pace unless some exponentials go elsewhere. 2^x = 2^j * 2^f with j = floor(x)
 * and f in [0, 1): j goes straight into the float's exponent bits (an integer add), and 2^f is a
 * cubic, four FMAs' worth of work on the units that have room. The cubic's coefficients minimise
 * the largest relative error on [0, 1) (a Remez fit; 7.5e-5, below float16's rounding of P). The
 * blocks of 8 columns of S that f3_poly_at picks (a fixed share, so the choice unrolls away) take
 * the polynomial; the rest stay on MUFU.
 *
 * The rest of 07f is unchanged. Compiled into fa3.cu's translation unit. */

/* The n8 blocks of S whose exponentials take the polynomial: F3_POLY_OF_8 of every 8. */
#define F3_POLY_OF_8 2
template <class T>
static __device__ __forceinline__ constexpr bool f3_poly_at(int blk)
{
    return blk % 8 < F3_POLY_OF_8;
}

/* 2^x for x <= 2^F3_LAZY: x is clamped at -126 (below it the result is a denormal, and at -inf, a
 * masked score, it counts for nothing once P is rounded to 16 bits; a row that saw no key is told
 * by m = -inf, not by l). t = x + 1.5 * 2^23 rounded down holds floor(x) in its low mantissa bits;
 * shifted up by 23 it is the exponent to add. */
static __device__ __forceinline__ float f3_exp2_poly(float x)
{
    x = fmaxf(x, -126.0f);
    const float t = __fadd_rd(x, 12582912.0f);
    const float f = x - (t - 12582912.0f);
    const float q = fmaf(fmaf(fmaf(0.0780245215f, f, 0.226067156f), f, 0.695833564f), f, 0.999925196f);
    return __int_as_float(__float_as_int(q) + (__float_as_int(t) << 23));
}
