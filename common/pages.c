/* A paged KV cache (harness.h, the layout in attn.h): the block table and the pools.
 *
 * The driver generates K and V contiguously, [B,Hkv,M,d], as for every other shape, so the float64
 * reference and the check do not change; for a paged shape it then builds the block table here and
 * scatters K and V into their pools, outside the timed region. Plain C: the CPU tests
 * (tests/test_pages.c) check the table and the round trip without a GPU.
 *
 * Physical page order: the request-ordered pages 0, 1, ..., num_pages - 1 go through a Fisher-Yates
 * shuffle driven by the counter-based generator of inputs.c (stream 13), so the order depends on
 * the seed and the number of pages alone, and a request's consecutive pages are almost never
 * neighbours in the pool, as in a serving engine's cache after many requests came and went. */
#include <stdlib.h>
#include <string.h>
#include "harness.h"

#define PAGES_STREAM 13        /* inputs.c's streams: 1-3 Q, K, V; 7 lengths; 11 check.c's sample */
#define NAN_BITS 0xffffu       /* a NaN in float16 and in bfloat16 */

static int pages_of(int len, int P) { return (len + P - 1) / P; }

int pages_build(const attn_shape *s, uint64_t seed, page_table *pt)
{
    memset(pt, 0, sizeof *pt);
    const int P = s->page_size;
    if (P < 1) return -1;
    pt->P = P;
    pt->B = s->B;
    pt->max_pages = pages_of(s->M, P);
    long total = 0;
    for (int b = 0; b < s->B; b++) total += pages_of(attn_kv_len(s, b), P);
    pt->num_pages = (int)total;
    int *perm = malloc(sizeof(int) * (size_t)total);
    pt->table = malloc(sizeof(int) * (size_t)s->B * pt->max_pages);
    for (int i = 0; i < pt->num_pages; i++) perm[i] = i;
    for (int i = pt->num_pages - 1; i > 0; i--) {
        int j = (int)(rng_uniform(seed, PAGES_STREAM, (uint64_t)i) * (i + 1));
        if (j > i) j = i;                                     /* u < 1, but be sure */
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    int next = 0;                                             /* request-ordered page number */
    for (int b = 0; b < s->B; b++) {
        const int n = pages_of(attn_kv_len(s, b), P);
        int *row = pt->table + (size_t)b * pt->max_pages;
        for (int i = 0; i < pt->max_pages; i++) row[i] = i < n ? perm[next + i] : -1;
        next += n;
    }
    free(perm);
    return 0;
}

void pages_free(page_table *pt)
{
    free(pt->table);
    memset(pt, 0, sizeof *pt);
}

size_t pages_pool_elems(const attn_shape *s, const page_table *pt)
{
    return (size_t)pt->num_pages * pt->P * s->Hkv * s->d;
}

/* Element offset of (request b, KV head h, key t) in the pool, and in the contiguous tensor. */
static size_t pool_at(const attn_shape *s, const page_table *pt, int b, int h, int t)
{
    const size_t page = (size_t)pt->table[(size_t)b * pt->max_pages + t / pt->P];
    return ((page * pt->P + (size_t)(t % pt->P)) * s->Hkv + h) * s->d;
}
static size_t kv_at(const attn_shape *s, int b, int h, int t)
{
    return (((size_t)b * s->Hkv + h) * s->M + t) * s->d;
}

void pages_scatter(const attn_shape *s, const page_table *pt, const uint16_t *kv, uint16_t *pool)
{
    const size_t n = pages_pool_elems(s, pt);
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++) pool[i] = NAN_BITS;
    #pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < s->B; b++)
        for (int t = 0; t < attn_kv_len(s, b); t++)
            for (int h = 0; h < s->Hkv; h++)
                memcpy(pool + pool_at(s, pt, b, h, t), kv + kv_at(s, b, h, t), sizeof(uint16_t) * s->d);
}

void pages_gather(const attn_shape *s, const page_table *pt, const uint16_t *pool, uint16_t *kv)
{
    for (int b = 0; b < s->B; b++)
        for (int t = 0; t < attn_kv_len(s, b); t++)
            for (int h = 0; h < s->Hkv; h++)
                memcpy(kv + kv_at(s, b, h, t), pool + pool_at(s, pt, b, h, t), sizeof(uint16_t) * s->d);
}
