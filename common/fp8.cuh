/* float8 e4m3 (the OCP "E4M3FN" format that Hopper's FP8 tensor cores read) <-> float, and the
 * scale of a block: what rung 07's FP8 step quantizes Q, K and V with (issue 24).
 *
 * The format, one byte s eeee mmm: bias 7, 3 mantissa bits, no infinities; exponent 1111 is a
 * normal binade except mantissa 111 (0x7f, 0xff), the only NaN. So the largest finite value is
 * 1.75 * 2^8 = 448 (0x7e), the smallest normal 2^-6 and the smallest subnormal 2^-9 (0x01).
 * Three mantissa bits: neighbouring values differ by 1/8 to 1/16 of their size, a relative rounding
 * error of up to 2^-4. A float becomes e4m3 with round to nearest even and, as the hardware's
 * .satfinite conversion does, saturates to +-448 (infinities too) rather than turning into NaN.
 *
 * Block quantization: a block of values (a tile of Q rows, of K or V keys) is stored as e4m3 codes
 * times one float scale, scale = amax / 448, so that the block's largest |x| lands on 448 and the
 * whole range of the format serves that block; S = Q K^T is then descaled by scale_q * scale_k.
 *
 * Written for C and CUDA alike, as common/softmax_state.h is. On sm_89 and newer the device uses
 * the conversion instruction, wrapped once below; the host and older devices run the soft path,
 * which the CPU tests compare bit for bit with the host conversion of cuda_fp8.h (CUDA's model of
 * that instruction: on sm_89+ its own code issues the same cvt). */
#ifndef FP8_CUH
#define FP8_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FP8_FN __host__ __device__ static inline
#else
#define FP8_FN static inline
#endif

#define FP8_E4M3_MAX 448.0f   /* largest finite e4m3, 0x7e */

FP8_FN uint32_t fp8_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
FP8_FN float fp8_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* The portable encoder: the bits cvt.rn.satfinite.e4m3x2.f32 produces for one float. */
FP8_FN uint8_t fp8_e4m3_encode_soft(float x)
{
    uint32_t u = fp8_f32_bits(x), a = u & 0x7fffffffu;
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    if (a > 0x7f800000u) return 0x7f;                          /* NaN: the canonical NaN */
    if (a >= 0x43e00000u) return (uint8_t)(sign | 0x7e);       /* |x| >= 448, inf too: satfinite */
    if (a < 0x3c800000u) {                                     /* |x| < 2^-6: subnormal or 0 */
        /* the subnormal code is |x| / 2^-9 (exact in float) rounded to nearest even, which rintf
         * does in the default rounding mode, host and device; 8, the largest rounded up, is the
         * code of 2^-6, the smallest normal, as it should be */
        return (uint8_t)(sign | (uint32_t)rintf(fp8_bits_f32(a) * 512.0f));
    }
    /* Normal: drop 20 of float's 23 mantissa bits with round to nearest even (add just under half
     * an e4m3 ulp, plus 1 if the kept last bit is odd; a carry moves into the exponent, as it
     * must), then rebias the exponent from 127 to 7. Below 448 the result stays <= 0x7e. */
    uint32_t r = a + 0x7ffffu + ((a >> 20) & 1u);
    return (uint8_t)(sign | ((r >> 20) - ((127u - 7u) << 3)));
}

/* The device's conversion, two floats at once (the instruction's only form): lo goes to the low
 * byte, hi to the high byte, as they lie in memory. Rounds to nearest even, saturates to +-448,
 * NaN -> 0x7f. sm_89 (Ada) and newer have it; older targets and the host take the soft path. */
FP8_FN uint16_t fp8_e4m3x2_encode(float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return (uint16_t)(fp8_e4m3_encode_soft(lo) | (fp8_e4m3_encode_soft(hi) << 8));
#endif
}

FP8_FN uint8_t fp8_e4m3_encode(float x) { return (uint8_t)fp8_e4m3x2_encode(x, 0.0f); }

/* Exact: every e4m3 value is a float. */
FP8_FN float fp8_e4m3_decode(uint8_t c)
{
    uint32_t sign = (uint32_t)(c & 0x80u) << 24, e = (c >> 3) & 0xfu, m = c & 7u;
    if (e == 0xf && m == 7) return fp8_bits_f32(0x7fc00000u);          /* NaN */
    if (e == 0) {                                                       /* zero, subnormal */
        float f = (float)m * (1.0f / 512.0f);                           /* m * 2^-9 */
        return sign ? -f : f;
    }
    return fp8_bits_f32(sign | ((e + 127u - 7u) << 23) | (m << 20));
}

/* The scale of a block whose largest |x| is amax: x is stored as encode(x / scale) and read back as
 * decode(code) * scale. An all-zero block gets scale 1, so that x / scale stays 0 (not 0/0 = NaN)
 * and its descale is harmless. amax must be finite: an infinity or NaN in the inputs is not
 * something a scale can represent. */
FP8_FN float fp8_e4m3_scale(float amax)
{
    return amax > 0.0f ? amax / FP8_E4M3_MAX : 1.0f;
}

#endif
