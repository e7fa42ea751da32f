/* Rung 06's split planners (06_split_kv/planner.c): every plan covers every KV block exactly once
 * with its bookkeeping consistent, the planners are ordered by makespan as they claim, the seed
 * article's worked example comes out with its numbers, and the cost model on cases done by hand. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"
#include "../06_split_kv/planner.h"

static rng_stream rs;   /* common/inputs.c's counter-based generator, as a sequence */
static uint64_t rng(void) { return rng_next(&rs); }
static int rnd(int lo, int hi) { return lo + (int)(rng() % (uint64_t)(hi - lo + 1)); }

static long ceil_div(long a, long b) { return (a + b - 1) / b; }

/* ------------------------------------------------------------------ the plan checker */

/* Walks the plan: every segment non-empty and inside its sequence, every block of every sequence
 * covered exactly once, every CTA with at least one segment, the slots of a sequence cut in k > 1
 * segments exactly seq_part[s] .. +k-1 in key order, -1 for a sequence in one segment, and the
 * makespan equal to the cost model on the CTA costs. Reports through EXPECT_MSG with `tag`;
 * returns 0 when the plan is sound (so a caller stops at the first broken case). */
static int check_plan(const char *tag, const char *planner, const int *blocks, int n, int sms,
                      const split_plan *p)
{
    int bad = 0;
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            char m_[200];                                                                       \
            snprintf(m_, sizeof m_, __VA_ARGS__);                                               \
            EXPECT_MSG(0, "%s %s: %s", tag, planner, m_);                                       \
            bad = 1;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

    long total = 0;
    long *off = malloc(((size_t)n + 1) * sizeof *off);
    int *nseg = calloc((size_t)n, sizeof *nseg);
    for (int s = 0; s < n; s++) total += blocks[s];
    off[0] = 0;
    for (int s = 0; s < n; s++) off[s + 1] = off[s] + blocks[s];
    unsigned char *seen = calloc((size_t)total, 1);
    long *cost = malloc(((size_t)p->n_ctas + 1) * sizeof *cost);
    int *slot_begin = NULL;

    CHECK(p->n_seqs == n, "n_seqs %d, expected %d", p->n_seqs, n);
    CHECK(p->n_ctas >= 1 && p->cta_seg && p->segs && p->seq_part, "empty plan (n_ctas %d)", p->n_ctas);
    CHECK(p->cta_seg[0] == 0 && p->cta_seg[p->n_ctas] == p->n_segs,
          "cta_seg runs %d..%d, n_segs %d", p->cta_seg[0], p->cta_seg[p->n_ctas], p->n_segs);
    for (int c = 0; c < p->n_ctas; c++) {
        CHECK(p->cta_seg[c + 1] > p->cta_seg[c], "CTA %d has no segment", c);
        cost[c] = 0;
        for (int i = p->cta_seg[c]; i < p->cta_seg[c + 1]; i++) {
            const split_segment *g = &p->segs[i];
            CHECK(g->seq >= 0 && g->seq < n, "segment %d: sequence %d", i, g->seq);
            CHECK(g->blk_begin >= 0 && g->blk_end > g->blk_begin && g->blk_end <= blocks[g->seq],
                  "segment %d: blocks [%d, %d) of a %d-block sequence", i, g->blk_begin,
                  g->blk_end, blocks[g->seq]);
            for (int b = g->blk_begin; b < g->blk_end; b++) {
                CHECK(!seen[off[g->seq] + b], "block %d of sequence %d covered twice", b, g->seq);
                seen[off[g->seq] + b] = 1;
            }
            nseg[g->seq]++;
            cost[c] += g->blk_end - g->blk_begin;
        }
    }
    for (long i = 0; i < total; i++) CHECK(seen[i], "global block %ld never covered", i);

    CHECK(p->seq_part[0] == 0 && p->seq_part[n] == p->n_parts, "seq_part[0] %d, seq_part[n] %d, n_parts %d",
          p->seq_part[0], p->seq_part[n], p->n_parts);
    for (int s = 0; s < n; s++) {
        int want = nseg[s] > 1 ? nseg[s] : 0;
        CHECK(p->seq_part[s + 1] - p->seq_part[s] == want, "sequence %d: %d slots for %d segments",
              s, p->seq_part[s + 1] - p->seq_part[s], nseg[s]);
    }
    slot_begin = malloc(((size_t)p->n_parts + 1) * sizeof *slot_begin);
    for (int k = 0; k < p->n_parts; k++) slot_begin[k] = -1;
    for (int i = 0; i < p->n_segs; i++) {
        const split_segment *g = &p->segs[i];
        if (nseg[g->seq] == 1) {
            CHECK(g->part == -1, "sequence %d is one segment but has slot %d", g->seq, g->part);
            continue;
        }
        CHECK(g->part >= p->seq_part[g->seq] && g->part < p->seq_part[g->seq + 1],
              "segment %d of sequence %d: slot %d outside [%d, %d)", i, g->seq, g->part,
              p->seq_part[g->seq], p->seq_part[g->seq + 1]);
        CHECK(slot_begin[g->part] < 0, "slot %d used twice", g->part);
        slot_begin[g->part] = g->blk_begin;
    }
    for (int s = 0; s < n; s++)   /* slots in key order: first blocks rising with the slot */
        for (int k = p->seq_part[s] + 1; k < p->seq_part[s + 1]; k++)
            CHECK(slot_begin[k] > slot_begin[k - 1], "sequence %d: slot %d starts at block %d, "
                  "slot %d at %d (not in key order)", s, k - 1, slot_begin[k - 1], k, slot_begin[k]);

    long ms = plan_simulate(cost, p->n_ctas, sms);
    CHECK(p->makespan == ms, "makespan %ld, the cost model says %ld", p->makespan, ms);
    CHECK(p->makespan >= ceil_div(total, sms), "makespan %ld below the bound %ld", p->makespan,
          ceil_div(total, sms));
done:
#undef CHECK
    free(off);
    free(nseg);
    free(seen);
    free(cost);
    free(slot_begin);
    return !bad;
}

/* ------------------------------------------------------------------ random batches */

enum { D_EQUAL, D_UNIFORM, D_LONGTAIL, D_BIMODAL, D_TINY, N_DIST };
static const char *const dist_name[] = {"equal", "uniform", "longtail", "bimodal", "tiny"};

/* n sequences of at most 256 blocks (32768 tokens in blocks of 128), drawn from distribution d. */
static void draw(int d, int n, int *blocks)
{
    int L = rnd(1, 256);
    for (int s = 0; s < n; s++) {
        switch (d) {
        case D_EQUAL: blocks[s] = L; break;
        case D_UNIFORM: blocks[s] = rnd(1, 256); break;
        case D_LONGTAIL: {   /* 256 * u^4: most short, a few long */
            double u = (double)(rng() >> 11) / 9007199254740992.0;
            blocks[s] = 1 + (int)(255.0 * u * u * u * u);
            break;
        }
        case D_BIMODAL: blocks[s] = rnd(0, 7) ? rnd(1, 8) : rnd(224, 256); break;
        default: blocks[s] = rnd(1, 3); break;
        }
    }
}

/* A fa plan's chunk counts, computed here from the formula of planner.h, independently. */
static int fa_chunks_of(long total, int sms, int b)
{
    long per_sm = ceil_div(total * 11, 10L * sms);
    long k = ceil_div(b, per_sm);
    return (int)(k < 1 ? 1 : k > b ? b : k);
}

static void planner_random_plans(void)
{
    static const int sms_list[] = {78, 114, 132, 1, 5};
    int blocks[200];
    rs = (rng_stream){20231013, 0, 0};
    int cases = 0, broken = 0;
    for (int it = 0; it < 1500 && !broken; it++) {
        int d = it % N_DIST;
        int sms = sms_list[(it / N_DIST) % 5];
        int n = it < 10 ? 1 + it % 3 : rnd(1, 200);
        draw(d, n, blocks);
        if (it == 0) blocks[0] = 1;   /* one sequence of one block */
        long total = 0;
        for (int s = 0; s < n; s++) total += blocks[s];
        char tag[96];
        snprintf(tag, sizeof tag, "case %d (%s, B=%d, sms=%d, total=%ld)", it, dist_name[d], n, sms, total);

        split_plan p[3];
        long ms[3];
        for (int k = 0; k < 3; k++) {
            int rc = plan_splits(planner_names[k], blocks, n, sms, &p[k]);
            EXPECT_MSG(rc == 0, "%s %s: plan_splits returned %d", tag, planner_names[k], rc);
            if (rc || !check_plan(tag, planner_names[k], blocks, n, sms, &p[k])) broken = 1;
            ms[k] = p[k].makespan;
        }
        if (!broken) {
            /* fa and greedy: one segment per CTA, chunks of a sequence within one block of each
             * other; fa's chunk counts are the formula's */
            for (int k = 0; k < 2 && !broken; k++) {
                EXPECT_MSG(p[k].n_segs == p[k].n_ctas, "%s %s: %d segments on %d CTAs", tag,
                           planner_names[k], p[k].n_segs, p[k].n_ctas);
                int lo[200], hi[200], cnt[200] = {0};
                for (int i = 0; i < p[k].n_segs; i++) {
                    int s = p[k].segs[i].seq, len = p[k].segs[i].blk_end - p[k].segs[i].blk_begin;
                    if (!cnt[s]++) lo[s] = hi[s] = len;
                    if (len < lo[s]) lo[s] = len;
                    if (len > hi[s]) hi[s] = len;
                }
                for (int s = 0; s < n; s++) {
                    EXPECT_MSG(hi[s] - lo[s] <= 1, "%s %s: sequence %d has chunks of %d and %d",
                               tag, planner_names[k], s, lo[s], hi[s]);
                    if (k == 0)
                        EXPECT_MSG(cnt[s] == fa_chunks_of(total, sms, blocks[s]),
                                   "%s fa: sequence %d of %d blocks in %d chunks, formula %d", tag,
                                   s, blocks[s], cnt[s], fa_chunks_of(total, sms, blocks[s]));
                }
            }
            /* balanced: greedy's very plan when greedy already reaches the ideal makespan;
             * otherwise min(sms, total) CTAs of floor or ceil of total/sms blocks */
            long want_ctas = total < sms ? total : sms;
            if (ms[1] == ceil_div(total, sms))
                EXPECT_MSG(p[2].n_ctas == p[1].n_ctas && p[2].n_segs == p[1].n_segs,
                           "%s balanced: greedy is ideal, yet %d CTAs against greedy's %d", tag,
                           p[2].n_ctas, p[1].n_ctas);
            else
                EXPECT_MSG(p[2].n_ctas == want_ctas, "%s balanced: %d CTAs, expected %ld", tag,
                           p[2].n_ctas, want_ctas);
            EXPECT_MSG(ms[2] == ceil_div(total, sms), "%s: balanced makespan %ld, expected %ld",
                       tag, ms[2], ceil_div(total, sms));
            /* greedy keeps a re-split only if it lowers the makespan: no gain, fa's plan */
            if (ms[1] == ms[0])
                EXPECT_MSG(p[1].n_ctas == p[0].n_ctas, "%s: greedy no better than fa (%ld) but "
                           "%d CTAs against fa's %d", tag, ms[0], p[1].n_ctas, p[0].n_ctas);
            EXPECT_MSG(ms[2] <= ms[1] && ms[1] <= ms[0],
                       "%s: makespans fa %ld, greedy %ld, balanced %ld (not ordered)", tag, ms[0],
                       ms[1], ms[2]);
            /* auto: a valid plan, greedy's when greedy is within max(2, 15%) of the ideal,
             * else balanced's cut */
            split_plan pa;
            EXPECT(plan_splits("auto", blocks, n, sms, &pa) == 0);
            if (check_plan(tag, "auto", blocks, n, sms, &pa)) {
                long ideal = ceil_div(total, sms), slack = (ideal * 15 + 99) / 100;
                if (slack < 2) slack = 2;
                const split_plan *want = ms[1] <= ideal + slack ? &p[1] : &p[2];
                EXPECT_MSG(pa.makespan == want->makespan && pa.n_ctas == want->n_ctas &&
                               pa.n_segs == want->n_segs,
                           "%s auto: makespan %ld on %d CTAs, expected %s's %ld on %d", tag,
                           pa.makespan, pa.n_ctas, want == &p[1] ? "greedy" : "balanced",
                           want->makespan, want->n_ctas);
                EXPECT_MSG(pa.makespan <= ms[1], "%s auto: makespan %ld above greedy's %ld", tag,
                           pa.makespan, ms[1]);
            }
            plan_free(&pa);
        }
        for (int k = 0; k < 3; k++) plan_free(&p[k]);
        cases++;
    }
    EXPECT_MSG(cases == 1500, "stopped after %d cases", cases);
}

/* More SMs than blocks: every planner gives one block per CTA (fa: blocks_per_sm = 1). */
static void planner_more_sms_than_blocks(void)
{
    const int blocks[] = {1, 2, 1};
    for (int k = 0; planner_names[k]; k++) {
        split_plan p;
        EXPECT(plan_splits(planner_names[k], blocks, 3, 132, &p) == 0);
        check_plan("3 sequences of 1, 2, 1 blocks on 132 SMs", planner_names[k], blocks, 3, 132, &p);
        EXPECT_MSG(p.n_ctas == 4 && p.makespan == 1, "%s: %d CTAs, makespan %ld",
                   planner_names[k], p.n_ctas, p.makespan);
        plan_free(&p);
    }
    split_plan p;
    EXPECT(plan_splits("balanced", blocks, 3, 132, &p) == 0);
    EXPECT(p.n_ctas == 4 && p.n_parts == 2 && p.makespan == 1);
    plan_free(&p);
    const int one[] = {1};
    for (int k = 0; planner_names[k]; k++) {
        EXPECT(plan_splits(planner_names[k], one, 1, 78, &p) == 0);
        EXPECT_MSG(p.n_ctas == 1 && p.n_segs == 1 && p.n_parts == 0 && p.segs[0].part == -1 &&
                       p.segs[0].blk_begin == 0 && p.segs[0].blk_end == 1 && p.makespan == 1,
                   "%s on one block: %d CTAs, %d parts, makespan %ld", planner_names[k], p.n_ctas,
                   p.n_parts, p.makespan);
        plan_free(&p);
    }
}

/* ------------------------------------------------------------------ the seed article's example */

/* 32 requests x 4096 tokens in 176-token blocks = 24 blocks each, on an H20's 78 SMs.
 * fa: blocks_per_sm = ceil(768 * 1.1 / 78) = 11, so 3 chunks of 8 per request, 96 CTAs: 78 in
 * the first wave, 18 in a second, makespan 8 + 8 = 16. Two chunks of 12 (64 CTAs, one wave)
 * would take 12; greedy finds 12 with 18 requests in 2 chunks and 14 in 3 (78 CTAs); balanced
 * gives 66 CTAs 10 blocks and 12 CTAs 9: ceil(768 / 78) = 10. */
static void planner_article_example(void)
{
    int blocks[32];
    for (int s = 0; s < 32; s++) blocks[s] = ceil_div(4096, 176);
    EXPECT(blocks[0] == 24);
    split_plan p;

    EXPECT(plan_splits("fa", blocks, 32, 78, &p) == 0);
    check_plan("article", "fa", blocks, 32, 78, &p);
    EXPECT_MSG(p.n_ctas == 96 && p.makespan == 16, "fa: %d CTAs, makespan %ld", p.n_ctas, p.makespan);
    EXPECT(p.n_parts == 96 && p.seq_part[1] == 3);
    for (int i = 0; i < p.n_segs; i++) EXPECT(p.segs[i].blk_end - p.segs[i].blk_begin == 8);
    plan_free(&p);

    EXPECT(plan_splits("greedy", blocks, 32, 78, &p) == 0);
    check_plan("article", "greedy", blocks, 32, 78, &p);
    EXPECT_MSG(p.n_ctas == 78 && p.makespan == 12, "greedy: %d CTAs, makespan %ld", p.n_ctas, p.makespan);
    int two = 0, three = 0;
    for (int s = 0; s < 32; s++) {
        int k = p.seq_part[s + 1] - p.seq_part[s];
        two += k == 2;
        three += k == 3;
    }
    EXPECT_MSG(two == 18 && three == 14, "greedy: %d requests in 2 chunks, %d in 3", two, three);
    plan_free(&p);

    EXPECT(plan_splits("balanced", blocks, 32, 78, &p) == 0);
    check_plan("article", "balanced", blocks, 32, 78, &p);
    EXPECT_MSG(p.n_ctas == 78 && p.makespan == 10, "balanced: %d CTAs, makespan %ld", p.n_ctas, p.makespan);
    int tens = 0;
    for (int c = 0; c < p.n_ctas; c++) {
        int len = 0;
        for (int i = p.cta_seg[c]; i < p.cta_seg[c + 1]; i++) len += p.segs[i].blk_end - p.segs[i].blk_begin;
        tens += len == 10;
        EXPECT(len == 9 || len == 10);
    }
    EXPECT_MSG(tens == 66, "balanced: %d CTAs of 10 blocks, expected 66", tens);
    /* CTA 2 takes blocks 20..29 of the concatenation: the last 4 of request 0, the first 6 of 1 */
    EXPECT(p.cta_seg[3] - p.cta_seg[2] == 2);
    const split_segment *g = &p.segs[p.cta_seg[2]];
    EXPECT(g[0].seq == 0 && g[0].blk_begin == 20 && g[0].blk_end == 24);
    EXPECT(g[1].seq == 1 && g[1].blk_begin == 0 && g[1].blk_end == 6);
    plan_free(&p);
}

/* The 1.1 margin in integers: 780 blocks on 78 SMs is exactly 11 blocks per SM (in doubles,
 * 780 * 1.1 / 78 = 11.000000000000002 would round up to 12 and give 65 chunks, not 71). */
static void planner_fa_margin_exact(void)
{
    const int blocks[] = {780};
    split_plan p;
    EXPECT(plan_splits("fa", blocks, 1, 78, &p) == 0);
    EXPECT_MSG(p.n_ctas == 71 && p.makespan == 11, "fa: %d CTAs, makespan %ld", p.n_ctas, p.makespan);
    EXPECT(p.segs[0].blk_end - p.segs[0].blk_begin == 11);                      /* larger first */
    EXPECT(p.segs[70].blk_end - p.segs[70].blk_begin == 10 && p.segs[70].blk_end == 780);
    EXPECT(p.n_parts == 71 && p.segs[70].part == 70);
    plan_free(&p);
}

/* ------------------------------------------------------------------ the cost model by hand */

static void planner_simulate_by_hand(void)
{
    long c[96];
    for (int i = 0; i < 96; i++) c[i] = 8;
    EXPECT(plan_simulate(c, 96, 78) == 16);          /* 78 then 18: two waves */
    EXPECT(plan_simulate(c, 78, 78) == 8);           /* exactly one wave */
    EXPECT(plan_simulate(c, 64, 78) == 8);
    const long five[] = {5, 5, 5};
    EXPECT(plan_simulate(five, 3, 2) == 10);
    const long a[] = {3, 1, 1, 1};                   /* SM1 frees first and takes the short ones */
    EXPECT(plan_simulate(a, 4, 2) == 3);
    const long b[] = {1, 1, 1, 3};                   /* launch order matters: the long one last */
    EXPECT(plan_simulate(b, 4, 2) == 4);
    const long e[] = {4, 2, 2, 7};                   /* the 2s stack on SM1, then the 7 on 4 */
    EXPECT(plan_simulate(e, 4, 2) == 11);
    const long f[] = {4, 2};
    EXPECT(plan_simulate(f, 2, 132) == 4);
    EXPECT(plan_simulate(f, 0, 4) == 0);
    EXPECT(plan_simulate(f, 2, 1) == 6);
    EXPECT(plan_simulate(f, 2, 0) == -1);
}

static void planner_bad_input(void)
{
    const int blocks[] = {3, 4};
    const int zero[] = {3, 0};
    split_plan p;
    EXPECT(plan_splits("fastest", blocks, 2, 78, &p) == -1);
    EXPECT(p.n_ctas == 0 && p.segs == NULL);         /* untouched plan: plan_free is safe */
    plan_free(&p);
    EXPECT(plan_splits(NULL, blocks, 2, 78, &p) == -1);
    EXPECT(plan_splits("fa", blocks, 0, 78, &p) == -1);
    EXPECT(plan_splits("fa", blocks, 2, 0, &p) == -1);
    EXPECT(plan_splits("balanced", zero, 2, 78, &p) == -1);
    EXPECT(plan_splits("greedy", zero, 2, 78, &p) == -1);
    int known = 0;
    for (int k = 0; planner_names[k]; k++) known += !strcmp(planner_names[k], planner_default);
    EXPECT_MSG(known == 1, "planner_default \"%s\" is not in planner_names", planner_default);
}

const test_case TESTS_planner[] = {
    {"planner_random_plans", planner_random_plans},
    {"planner_more_sms_than_blocks", planner_more_sms_than_blocks},
    {"planner_article_example", planner_article_example},
    {"planner_fa_margin_exact", planner_fa_margin_exact},
    {"planner_simulate_by_hand", planner_simulate_by_hand},
    {"planner_bad_input", planner_bad_input},
    {NULL, NULL},
};
