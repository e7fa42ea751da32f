/* float16 / bfloat16 <-> float on the host, in plain C (cuda_fp16.h is C++ only).
 * Round to nearest even, as the GPU's __float2half_rn and __float2bfloat16_rn do. */
#ifndef HALF_H
#define HALF_H

#include <stdint.h>
#include <string.h>
#include "attn.h"

static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));      /* inf, NaN */
    if (exp == 0) {                                                            /* zero, subnormal */
        float f = (float)man * (1.0f / 16777216.0f);                           /* man * 2^-24 */
        return sign ? -f : f;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                  /* rounds to inf */
    if (a < 0x38800000u) {                                                     /* subnormal or 0 */
        /* value * 2^24 rounded to nearest even is the subnormal mantissa */
        float v = bits_f32(a) * 16777216.0f;
        uint32_t m = (uint32_t)v;
        float rem = v - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) m++;
        return (uint16_t)(sign | m);
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u);                               /* nearest even */
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static inline float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float elem_to_f32(attn_dtype t, uint16_t h)
{
    return t == ATTN_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

static inline uint16_t f32_to_elem(attn_dtype t, float f)
{
    return t == ATTN_BF16 ? f32_to_bf16(f) : f32_to_f16(f);
}

#endif
