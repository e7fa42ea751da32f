/* A rung's variants as its binary (or its shared library) holds them: the list every rung's .cu
 * defines (rung_variants, and rung 07's rung_fp8_variants, attn.h), looked up one way for the
 * driver's --list and --variant and for the C API (common/ladder.c). Linked beside a rung only:
 * it names the rung's own lists, so the CPU tests, which link no rung, never link it. */
#ifndef VARIANTS_H
#define VARIANTS_H

#include <stddef.h>
#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The i-th variant in --list order (the 16-bit ones in lesson order, then the FP8 steps), NULL
 * past the end; *fp8 (may be NULL) says whether it is an FP8 step. */
const rung *variant_at(int i, int *fp8);
/* The variant named id, or with id NULL the rung's own: the last 16-bit one, or for dtype e4m3 the
 * last FP8 step (a rung without one: the last 16-bit one, which refuses it). NULL for an unknown id. */
const rung *variant_pick(const char *id, attn_dtype dtype, int *fp8);
/* "05a, 05b, 05c": every id, for a message that refuses an unknown one. */
void variant_ids(char *out, size_t n);
/* The binary's rung_grad_own (a backward rung, 08), or NULL for a forward rung. */
const rung_grad *variant_grad(void);

#ifdef __cplusplus
}
#endif
#endif
