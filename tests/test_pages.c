/* The paged KV cache's host side (common/pages.c): the block table uses every physical page exactly
 * once, gives request b ceil(len_b / P) pages, depends on the lengths, P and the seed only, and the
 * scatter into a pool and the gather back are exact, with the tails of last pages poisoned. */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"

static attn_shape shape(int B, int Hkv, int M, int d, int P, const int *lens)
{
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = B; s.Hq = 2 * Hkv; s.Hkv = Hkv; s.N = 1; s.M = M; s.d = d;
    s.scale = 1.0f;
    s.page_size = P;
    s.seqlens_k = lens;
    return s;
}

/* Every property of a table that does not depend on the order: sizes, each request's pages, each
 * physical page used once, -1 past a request's pages. */
static void check_table(const attn_shape *s, const page_table *pt, const char *what)
{
    const int P = s->page_size;
    EXPECT_MSG(pt->P == P && pt->B == s->B, "%s: P %d B %d", what, pt->P, pt->B);
    EXPECT_MSG(pt->max_pages == (s->M + P - 1) / P, "%s: max_pages %d for M %d, P %d", what, pt->max_pages, s->M, P);
    long want = 0;
    for (int b = 0; b < s->B; b++) want += (attn_kv_len(s, b) + P - 1) / P;
    EXPECT_MSG(pt->num_pages == want, "%s: %d pages, expected %ld", what, pt->num_pages, want);
    int *seen = calloc((size_t)pt->num_pages + 1, sizeof(int));
    for (int b = 0; b < s->B; b++) {
        const int n = (attn_kv_len(s, b) + P - 1) / P;
        for (int i = 0; i < pt->max_pages; i++) {
            const int pg = pt->table[(size_t)b * pt->max_pages + i];
            if (i < n) {
                EXPECT_MSG(pg >= 0 && pg < pt->num_pages, "%s: request %d page %d -> %d, outside 0..%d", what, b, i, pg,
                           pt->num_pages - 1);
                if (pg >= 0 && pg < pt->num_pages) seen[pg]++;
            } else {
                EXPECT_MSG(pg == -1, "%s: request %d has %d pages, entry %d is %d (expected -1)", what, b, n, i, pg);
            }
        }
    }
    for (int pg = 0; pg < pt->num_pages; pg++)
        EXPECT_MSG(seen[pg] == 1, "%s: physical page %d used %d times", what, pg, seen[pg]);
    free(seen);
}

/* A worked example: lengths 1, 16, 17, 40 with P = 16 take 1, 1, 2, 3 pages, 7 in all; max_pages = ceil(40/16). */
static void pages_counts(void)
{
    int lens[4] = {1, 16, 17, 40};
    attn_shape s = shape(4, 2, 40, 8, 16, lens);
    page_table pt;
    EXPECT(pages_build(&s, 1234, &pt) == 0);
    EXPECT(pt.num_pages == 7 && pt.max_pages == 3);
    EXPECT(pt.table[0 * 3 + 1] == -1 && pt.table[1 * 3 + 1] == -1 && pt.table[2 * 3 + 2] == -1);
    EXPECT(pt.table[3 * 3 + 2] >= 0);
    check_table(&s, &pt, "1,16,17,40 P=16");
    pages_free(&pt);
    EXPECT(pt.table == NULL);

    /* no seqlens: every request has M keys; M not a multiple of P */
    s = shape(3, 1, 100, 8, 48, NULL);
    EXPECT(pages_build(&s, 7, &pt) == 0);
    EXPECT(pt.num_pages == 9 && pt.max_pages == 3);
    check_table(&s, &pt, "B=3 M=100 P=48");
    pages_free(&pt);

    s.page_size = 0;
    EXPECT(pages_build(&s, 7, &pt) == -1);                   /* contiguous: no table */
}

/* Every page size, many batches, varlen: the table is a permutation laid out in request order. */
static void pages_every_size(void)
{
    int lens[9];
    for (int P = ATTN_PAGE_STEP; P <= ATTN_PAGE_MAX; P += ATTN_PAGE_STEP)
        for (int trial = 0; trial < 4; trial++) {
            const int B = 1 + trial * 2, M = 1 + 97 * trial + P * trial;
            for (int b = 0; b < B; b++) lens[b] = 1 + (int)(rng_uniform(99, 5, (uint64_t)(P * 16 + trial * 9 + b)) * M);
            attn_shape s = shape(B, 1 + trial % 2, M, 8, P, trial ? lens : NULL);
            page_table pt;
            char what[64];
            snprintf(what, sizeof what, "P=%d trial %d", P, trial);
            EXPECT(pages_build(&s, (uint64_t)P + trial, &pt) == 0);
            check_table(&s, &pt, what);
            pages_free(&pt);
        }
}

/* The order depends on the seed (and the number of pages) only: not on Hq, Hkv, d or N, nor on how
 * the pages are split among requests; another seed gives another order; and it is not the identity. */
static void pages_seeded(void)
{
    int lens[4] = {300, 5, 1000, 777};
    attn_shape s = shape(4, 2, 1000, 64, 16, lens);
    page_table a, b, c;
    EXPECT(pages_build(&s, 1234, &a) == 0);
    EXPECT(pages_build(&s, 1234, &b) == 0);
    EXPECT(a.num_pages == 19 + 1 + 63 + 49);
    EXPECT(!memcmp(a.table, b.table, sizeof(int) * (size_t)a.B * a.max_pages));
    pages_free(&b);
    attn_shape t = s;
    t.Hq = 16; t.Hkv = 8; t.d = 128; t.N = 7;
    EXPECT(pages_build(&t, 1234, &b) == 0);
    EXPECT(!memcmp(a.table, b.table, sizeof(int) * (size_t)a.B * a.max_pages));
    pages_free(&b);
    EXPECT(pages_build(&s, 1235, &c) == 0);
    EXPECT(memcmp(a.table, c.table, sizeof(int) * (size_t)a.B * a.max_pages) != 0);
    pages_free(&c);
    /* scattered: few of request 2's 63 consecutive logical pages are physical neighbours */
    int inorder = 0, moved = 0;
    for (int i = 0; i + 1 < 63; i++) inorder += a.table[2 * a.max_pages + i + 1] == a.table[2 * a.max_pages + i] + 1;
    for (int b2 = 0, k = 0; b2 < 4; b2++)
        for (int i = 0; i < (lens[b2] + 15) / 16; i++, k++) moved += a.table[b2 * a.max_pages + i] != k;
    EXPECT_MSG(inorder < 6, "%d of 62 neighbouring pages stayed neighbours", inorder);
    EXPECT_MSG(moved > a.num_pages / 2, "only %d of %d pages moved", moved, a.num_pages);
    pages_free(&a);
}

/* Scatter a small K [B,Hkv,M,d] into a pool and gather it back: exact for keys < len_b; each key's
 * row lands where the block table says; the tails of last pages are 0xffff (NaN). */
static void pages_round_trip(void)
{
    for (int P = 16; P <= 64; P += 48) {
        int lens[3] = {37, 1, 64};
        attn_shape s = shape(3, 2, 64, 8, P, lens);
        page_table pt;
        EXPECT(pages_build(&s, 42, &pt) == 0);
        const size_t n = attn_kv_elems(&s), pn = pages_pool_elems(&s, &pt);
        EXPECT(pn == (size_t)pt.num_pages * P * 2 * 8);
        uint16_t *k = malloc(n * 2), *back = malloc(n * 2), *pool = malloc(pn * 2);
        for (size_t i = 0; i < n; i++) k[i] = (uint16_t)(i * 2654435761u >> 7) & 0x3bff;   /* finite, distinct-ish */
        pages_scatter(&s, &pt, k, pool);
        for (size_t i = 0; i < n; i++) back[i] = 0x1234;
        pages_gather(&s, &pt, pool, back);
        long bad = 0, untouched = 0;
        for (int b = 0; b < 3; b++)
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < 64; t++)
                    for (int c = 0; c < 8; c++) {
                        const size_t i = (((size_t)b * 2 + h) * 64 + t) * 8 + c;
                        if (t < lens[b]) bad += back[i] != k[i];
                        else untouched += back[i] == 0x1234;
                    }
        EXPECT_MSG(bad == 0, "P=%d: %ld elements differ after the round trip", P, bad);
        EXPECT_MSG(untouched == (long)(3 * 64 - 37 - 1 - 64) * 2 * 8, "P=%d: keys past a length were written", P);
        /* one element by hand: request 0, head 1, key 20, column 5 */
        const int pg = pt.table[0 * pt.max_pages + 20 / P];
        EXPECT(pool[(((size_t)pg * P + 20 % P) * 2 + 1) * 8 + 5] == k[((0 * 2 + 1) * 64 + 20) * 8 + 5]);
        /* the tails: every position not holding a key is NaN; the rest are the keys */
        long nan = 0;
        for (size_t i = 0; i < pn; i++) nan += pool[i] == 0xffff;
        long tails = 0;
        for (int b = 0; b < 3; b++) tails += (long)((lens[b] + P - 1) / P * P - lens[b]) * 2 * 8;
        EXPECT_MSG(nan == tails, "P=%d: %ld NaN positions, expected %ld", P, nan, tails);
        free(k); free(back); free(pool);
        pages_free(&pt);
    }
}

const test_case TESTS_pages[] = {
    {"pages: request b gets ceil(len_b / P) pages, -1 past them; a worked example", pages_counts},
    {"pages: every page size 16..256, varlen: each physical page used exactly once", pages_every_size},
    {"pages: the order depends on the seed only, and scatters a request's pages", pages_seeded},
    {"pages: scatter into the pool and gather back is exact; tails of last pages are NaN", pages_round_trip},
    {NULL, NULL},
};
