/* float16 / bfloat16 conversions of common/half.h: known bit patterns, round to nearest even on
 * every tie (checked exhaustively at every midpoint between two neighbouring values), and the
 * round trip half -> float -> half for every bit pattern. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include "test.h"
#include "../common/half.h"

#define EXPECT_BITS(got, want)                                                              \
    do {                                                                                    \
        unsigned g_ = (got), w_ = (want);                                                   \
        EXPECT_MSG(g_ == w_, "%s = 0x%04x, expected 0x%04x", #got, g_, w_);                 \
    } while (0)

static int f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
static int bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu); }

static void f16_known_patterns(void)
{
    EXPECT_BITS(f32_to_f16(1.0f), 0x3c00);
    EXPECT_BITS(f32_to_f16(-2.0f), 0xc000);
    EXPECT_BITS(f32_to_f16(0.5f), 0x3800);
    EXPECT_BITS(f32_to_f16(0.0f), 0x0000);
    EXPECT_BITS(f32_to_f16(-0.0f), 0x8000);
    EXPECT_BITS(f32_to_f16(65504.0f), 0x7bff);            /* largest finite half */
    EXPECT_BITS(f32_to_f16(65519.0f), 0x7bff);            /* below the midpoint to 2^16 */
    EXPECT_BITS(f32_to_f16(65520.0f), 0x7c00);            /* the midpoint: ties to even = inf */
    EXPECT_BITS(f32_to_f16(-65520.0f), 0xfc00);
    EXPECT_BITS(f32_to_f16(1e9f), 0x7c00);
    EXPECT_BITS(f32_to_f16(INFINITY), 0x7c00);
    EXPECT_BITS(f32_to_f16(-INFINITY), 0xfc00);
    EXPECT(f16_is_nan(f32_to_f16(NAN)));
    EXPECT_BITS(f32_to_f16(ldexpf(1.0f, -14)), 0x0400);   /* smallest normal */
    EXPECT_BITS(f32_to_f16(ldexpf(1023.0f, -24)), 0x03ff); /* largest subnormal */
    EXPECT_BITS(f32_to_f16(ldexpf(1.0f, -24)), 0x0001);   /* smallest subnormal */
    EXPECT_BITS(f32_to_f16(-ldexpf(1.0f, -24)), 0x8001);
    EXPECT_BITS(f32_to_f16(ldexpf(1.0f, -25)), 0x0000);   /* tie between 0 and 2^-24: even is 0 */
    EXPECT_BITS(f32_to_f16(ldexpf(1.0f, -25) * 1.0001f), 0x0001);
    EXPECT_BITS(f32_to_f16(ldexpf(3.0f, -25)), 0x0002);   /* tie between 1 and 2 (x2^-24): 2 */
    EXPECT_BITS(f32_to_f16(ldexpf(5.0f, -25)), 0x0002);   /* tie between 2 and 3: 2 */
    EXPECT_BITS(f32_to_f16(ldexpf(2047.0f, -25)), 0x0400); /* subnormal rounding up to normal */
    EXPECT_BITS(f32_to_f16(1e-10f), 0x0000);              /* underflows to zero */
    /* Ties in the normal range: 1 + 2^-11 lies halfway between 1 (0x3c00, even) and 1 + 2^-10. */
    EXPECT_BITS(f32_to_f16(1.0f + ldexpf(1.0f, -11)), 0x3c00);
    EXPECT_BITS(f32_to_f16(1.0f + ldexpf(3.0f, -11)), 0x3c02);   /* between 0x3c01 and 0x3c02 */
    EXPECT_BITS(f32_to_f16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -20)), 0x3c01);
    EXPECT_BITS(f32_to_f16(0.1f), 0x2e66);
    EXPECT_BITS(f32_to_f16(3.14159265f), 0x4248);
}

static void f16_to_f32_known(void)
{
    EXPECT(f16_to_f32(0x3c00) == 1.0f);
    EXPECT(f16_to_f32(0xc000) == -2.0f);
    EXPECT(f16_to_f32(0x7bff) == 65504.0f);
    EXPECT(f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    EXPECT(f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
    EXPECT(f16_to_f32(0x0400) == ldexpf(1.0f, -14));
    EXPECT(f16_to_f32(0x3555) == 0x155 * ldexpf(1.0f, -12) + 0.25f);   /* 0.333251953125 */
    float nz = f16_to_f32(0x8000);
    EXPECT(nz == 0.0f && signbit(nz));
    EXPECT(isinf(f16_to_f32(0x7c00)) && f16_to_f32(0x7c00) > 0);
    EXPECT(isinf(f16_to_f32(0xfc00)) && f16_to_f32(0xfc00) < 0);
    EXPECT(isnan(f16_to_f32(0x7e00)));
    EXPECT(isnan(f16_to_f32(0x7c01)));   /* signalling-style payload is still NaN */
    EXPECT(isnan(f16_to_f32(0xfe00)));
}

/* Every non-NaN half survives half -> float -> half bit for bit; every NaN stays a NaN. */
static void f16_round_trip_all(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = f16_to_f32((uint16_t)h);
        uint16_t back = f32_to_f16(f);
        if (f16_is_nan((uint16_t)h)) {
            if (!isnan(f) || !f16_is_nan(back)) bad++;
        } else if (back != h) {
            if (!bad) EXPECT_MSG(0, "0x%04x -> %.9g -> 0x%04x", h, f, back);
            bad++;
        }
    }
    EXPECT_MSG(bad == 0, "%d of 65536 half patterns do not round-trip", bad);
}

/* Halves are monotone in their bits: the float of each positive pattern exceeds the one before. */
static void f16_monotone(void)
{
    int bad = 0;
    for (uint32_t h = 1; h <= 0x7c00; h++)
        if (!(f16_to_f32((uint16_t)h) > f16_to_f32((uint16_t)(h - 1)))) bad++;
    EXPECT_MSG(bad == 0, "%d positive halves not above their predecessor", bad);
}

/* For every pair of neighbouring finite halves a < b: the midpoint goes to the one with an even
 * mantissa, and the floats just below / above the midpoint go to a / b. Both signs. */
static void f16_round_nearest_even_everywhere(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x7bff; h++) {
        float a = f16_to_f32((uint16_t)h), b = f16_to_f32((uint16_t)(h + 1));
        float mid = a + (b - a) * 0.5f;    /* exact: a float has 13 more mantissa bits */
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        for (int s = 0; s < 2; s++) {
            float sg = s ? -1.0f : 1.0f;
            uint16_t sb = s ? 0x8000u : 0;
            if (f32_to_f16(sg * mid) != (uint16_t)(even | sb)) bad++;
            if (f32_to_f16(sg * nextafterf(mid, 0.0f)) != (uint16_t)(h | sb)) bad++;
            if (f32_to_f16(sg * nextafterf(mid, INFINITY)) != (uint16_t)((h + 1) | sb)) bad++;
        }
        if (bad && bad < 4) EXPECT_MSG(0, "rounding wrong around 0x%04x/0x%04x", h, h + 1);
    }
    EXPECT_MSG(bad == 0, "%d roundings wrong", bad);
    /* and the top: the midpoint between 65504 and 65536 goes to inf, just below it does not */
    EXPECT_BITS(f32_to_f16(nextafterf(65520.0f, 0.0f)), 0x7bff);
}

static void bf16_known_patterns(void)
{
    EXPECT_BITS(f32_to_bf16(1.0f), 0x3f80);
    EXPECT_BITS(f32_to_bf16(-2.0f), 0xc000);
    EXPECT_BITS(f32_to_bf16(3.0f), 0x4040);
    EXPECT_BITS(f32_to_bf16(0.0f), 0x0000);
    EXPECT_BITS(f32_to_bf16(-0.0f), 0x8000);
    EXPECT_BITS(f32_to_bf16(0.1f), 0x3dcd);   /* 0x3dcccccd rounds up */
    EXPECT_BITS(f32_to_bf16(1.0f + ldexpf(1.0f, -8)), 0x3f80);   /* tie: to even (1.0) */
    EXPECT_BITS(f32_to_bf16(1.0f + ldexpf(3.0f, -8)), 0x3f82);   /* tie between 0x3f81, 0x3f82 */
    EXPECT_BITS(f32_to_bf16(1.0f + ldexpf(1.0f, -8) + ldexpf(1.0f, -20)), 0x3f81);
    EXPECT_BITS(f32_to_bf16(bf16_to_f32(0x7f7f)), 0x7f7f);       /* largest finite bf16 */
    EXPECT_BITS(f32_to_bf16(FLT_MAX), 0x7f80);                   /* rounds to inf */
    EXPECT_BITS(f32_to_bf16(INFINITY), 0x7f80);
    EXPECT_BITS(f32_to_bf16(-INFINITY), 0xff80);
    EXPECT_BITS(f32_to_bf16(1e-40f), 0x0001);                    /* float subnormal 0x000116c2 */
    EXPECT(bf16_is_nan(f32_to_bf16(NAN)));
    EXPECT(bf16_is_nan(f32_to_bf16(bits_f32(0x7f800001u))));     /* NaN payload only in low bits */
    EXPECT(bf16_to_f32(0x3f80) == 1.0f);
    EXPECT(bf16_to_f32(0xc040) == -3.0f);
    EXPECT(bf16_to_f32(0x7f7f) == bits_f32(0x7f7f0000u));
    EXPECT(isinf(bf16_to_f32(0x7f80)));
    EXPECT(isnan(bf16_to_f32(0x7fc0)));
}

static void bf16_round_trip_and_ties(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = bf16_to_f32((uint16_t)h);
        uint16_t back = f32_to_bf16(f);
        if (bf16_is_nan((uint16_t)h) ? !bf16_is_nan(back) : back != h) bad++;
    }
    EXPECT_MSG(bad == 0, "%d of 65536 bf16 patterns do not round-trip", bad);

    bad = 0;
    for (uint32_t h = 0; h < 0x7f7f; h++) {
        float a = bf16_to_f32((uint16_t)h), b = bf16_to_f32((uint16_t)(h + 1));
        float mid = a + (b - a) * 0.5f;
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (f32_to_bf16(mid) != even) bad++;
        if (f32_to_bf16(-mid) != (uint16_t)(even | 0x8000u)) bad++;
        if (f32_to_bf16(nextafterf(mid, 0.0f)) != h) bad++;
        if (f32_to_bf16(nextafterf(mid, INFINITY)) != h + 1) bad++;
    }
    EXPECT_MSG(bad == 0, "%d bf16 roundings wrong", bad);
}

static void elem_dispatch(void)
{
    EXPECT_BITS(f32_to_elem(ATTN_F16, 1.0f), 0x3c00);
    EXPECT_BITS(f32_to_elem(ATTN_BF16, 1.0f), 0x3f80);
    EXPECT(elem_to_f32(ATTN_F16, 0x4000) == 2.0f);
    EXPECT(elem_to_f32(ATTN_BF16, 0x4000) == 2.0f);
    EXPECT(elem_to_f32(ATTN_F16, 0x3f80) == 1.875f);
    EXPECT(elem_to_f32(ATTN_BF16, 0x3c00) == 0.0078125f);
}

const test_case TESTS_half[] = {
    {"half: f32 -> f16 known bit patterns (1, 65504, 65520 -> inf, 2^-24, ties)", f16_known_patterns},
    {"half: f16 -> f32 known values (subnormal, -0, inf, NaN)", f16_to_f32_known},
    {"half: f16 -> f32 -> f16 is the identity on all 65536 patterns (NaN stays NaN)", f16_round_trip_all},
    {"half: f16 -> f32 is monotone over the positive patterns", f16_monotone},
    {"half: f32 -> f16 rounds to nearest even at every midpoint", f16_round_nearest_even_everywhere},
    {"half: f32 -> bf16 known bit patterns", bf16_known_patterns},
    {"half: bf16 round trip on all patterns, nearest even at every midpoint", bf16_round_trip_and_ties},
    {"half: elem_to_f32 / f32_to_elem follow the dtype", elem_dispatch},
    {NULL, NULL},
};
