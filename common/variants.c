/* A rung's variants (variants.h): its lists, found one way for the driver and the C API. */
#include <stdio.h>
#include <string.h>
#include "variants.h"

/* The optional lists (attn.h) are weak references, so a rung that does not define them need not
 * mention them. Hidden: inside a shared library (build/lib) each must resolve to its own rung at
 * link time, never at load time to another rung's library loaded beside it. */
extern const rung *const rung_fp8_variants[] __attribute__((weak, visibility("hidden")));
extern const rung_grad rung_grad_own __attribute__((weak, visibility("hidden")));
static const rung *const no_variants[] = {NULL};

const rung *variant_at(int i, int *fp8)
{
    const rung *const *lists[2] = {rung_variants, rung_fp8_variants ? rung_fp8_variants : no_variants};
    for (int l = 0; l < 2; l++)
        for (int j = 0; lists[l][j]; j++, i--)
            if (i == 0) {
                if (fp8) *fp8 = l;
                return lists[l][j];
            }
    return NULL;
}

const rung *variant_pick(const char *id, attn_dtype dtype, int *fp8)
{
    const rung *own[2] = {NULL, NULL}, *r;
    int l;
    for (int i = 0; (r = variant_at(i, &l)); i++) {
        own[l] = r;
        if (id && !strcmp(r->id, id)) { *fp8 = l; return r; }
    }
    if (id) return NULL;
    *fp8 = dtype == ATTN_E4M3 && own[1];
    return own[*fp8];
}

void variant_ids(char *out, size_t n)
{
    const rung *r;
    size_t k = 0;
    if (n) out[0] = 0;
    for (int i = 0; (r = variant_at(i, NULL)) && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "", r->id);
}

const rung_grad *variant_grad(void)
{
    return &rung_grad_own ? &rung_grad_own : NULL;
}
