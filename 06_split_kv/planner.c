/* Split planners for Flash-Decoding: see planner.h for the problem, the cost model and the three
 * planners. Plain C11, no GPU: the CPU tests and tools/splits_sim.c run exactly this code.
 *
 * Every planner produces the same thing, a list of segments in CTA order; one routine
 * (plan_finish) then derives the rest of the plan from it: the partial slots of every sequence
 * cut into several segments, and the simulated makespan. */
#include "planner.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *const planner_names[] = {"fa", "greedy", "balanced", "auto", NULL};
const char *const planner_default = "auto";   /* measured best on the decode and varlen sweeps; see NOTES.md */

/* ------------------------------------------------------------------ the cost model */

/* List scheduling with a binary min-heap of (load, SM index): the SM that frees first is the one
 * with the least accumulated load; ties go to the lowest index, so the first `sms` CTAs land on
 * SMs 0, 1, 2, ... in order, as a launch fills an idle GPU. Returns -1 for bad arguments. */
static int sm_less(const long *load, const int *idx, int a, int b)
{
    return load[a] < load[b] || (load[a] == load[b] && idx[a] < idx[b]);
}

long plan_simulate(const long *cta_cost, int n_ctas, int sms)
{
    if (sms < 1 || n_ctas < 0 || (n_ctas > 0 && !cta_cost)) return -1;
    if (n_ctas == 0) return 0;
    int n = sms < n_ctas ? sms : n_ctas;   /* SMs beyond the CTA count stay idle */
    long *load = calloc((size_t)n, sizeof *load);
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!load || !idx) {
        free(load);
        free(idx);
        return -1;
    }
    for (int i = 0; i < n; i++) idx[i] = i;   /* all loads 0, indices ascending: a valid heap */

    long makespan = 0;
    for (int c = 0; c < n_ctas; c++) {
        load[0] += cta_cost[c];               /* the root frees first: it takes CTA c */
        if (load[0] > makespan) makespan = load[0];
        for (int i = 0;;) {                   /* sift the root down */
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < n && sm_less(load, idx, l, m)) m = l;
            if (r < n && sm_less(load, idx, r, m)) m = r;
            if (m == i) break;
            long tl = load[i]; load[i] = load[m]; load[m] = tl;
            int ti = idx[i]; idx[i] = idx[m]; idx[m] = ti;
            i = m;
        }
    }
    free(load);
    free(idx);
    return makespan;
}

/* ------------------------------------------------------------------ building a plan */

void plan_free(split_plan *plan)
{
    if (!plan) return;
    free(plan->cta_seg);
    free(plan->segs);
    free(plan->seq_part);
    memset(plan, 0, sizeof *plan);
}

/* Space for at most max_ctas CTAs and max_segs segments; the planner then appends. */
static int plan_alloc(split_plan *p, int n_seqs, long max_ctas, long max_segs)
{
    memset(p, 0, sizeof *p);
    if (max_ctas > INT_MAX - 1 || max_segs > INT_MAX) return -1;
    p->n_seqs = n_seqs;
    p->cta_seg = malloc((size_t)(max_ctas + 1) * sizeof *p->cta_seg);
    p->segs = malloc((size_t)(max_segs > 0 ? max_segs : 1) * sizeof *p->segs);
    p->seq_part = calloc((size_t)n_seqs + 1, sizeof *p->seq_part);
    if (!p->cta_seg || !p->segs || !p->seq_part) {
        plan_free(p);
        return -1;
    }
    p->cta_seg[0] = 0;
    return 0;
}

static void add_seg(split_plan *p, int seq, int begin, int end)
{
    split_segment *s = &p->segs[p->n_segs++];
    s->seq = seq;
    s->blk_begin = begin;
    s->blk_end = end;
    s->part = -1;
}

static void end_cta(split_plan *p) { p->cta_seg[++p->n_ctas] = p->n_segs; }

/* Partial slots and makespan. Every planner emits a sequence's segments in key order (its chunks
 * left to right, or the concatenation left to right), so a running count per sequence is the
 * segment's rank k in key order and its slot is seq_part[s] + k. */
static int plan_finish(split_plan *p, int sms)
{
    int *nseg = p->seq_part + 1;   /* count in place, then turn into the prefix */
    for (int i = 0; i < p->n_segs; i++) nseg[p->segs[i].seq]++;
    for (int s = 0; s < p->n_seqs; s++) {
        int k = nseg[s] > 1 ? nseg[s] : 0;   /* one segment: written straight to O, no slot */
        p->seq_part[s + 1] = p->seq_part[s] + k;
    }
    p->n_parts = p->seq_part[p->n_seqs];

    int *rank = calloc((size_t)p->n_seqs, sizeof *rank);
    long *cost = malloc((size_t)(p->n_ctas > 0 ? p->n_ctas : 1) * sizeof *cost);
    if (!rank || !cost) {
        free(rank);
        free(cost);
        return -1;
    }
    for (int i = 0; i < p->n_segs; i++) {
        split_segment *g = &p->segs[i];
        int s = g->seq;
        g->part = p->seq_part[s + 1] > p->seq_part[s] ? p->seq_part[s] + rank[s]++ : -1;
    }
    for (int c = 0; c < p->n_ctas; c++) {
        cost[c] = 0;
        for (int i = p->cta_seg[c]; i < p->cta_seg[c + 1]; i++)
            cost[c] += p->segs[i].blk_end - p->segs[i].blk_begin;
    }
    p->makespan = plan_simulate(cost, p->n_ctas, sms);
    free(rank);
    free(cost);
    return p->makespan < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ "fa" and "greedy" */

/* One CTA per chunk: sequence s cut into splits[s] contiguous chunks whose sizes differ by at most
 * one, the larger ones first. splits[s] <= blocks[s], so no chunk is empty. */
static int plan_chunks(const int *blocks, const int *splits, int n_seqs, int sms, split_plan *p)
{
    long n = 0;
    for (int s = 0; s < n_seqs; s++) n += splits[s];
    if (plan_alloc(p, n_seqs, n, n)) return -1;
    for (int s = 0; s < n_seqs; s++) {
        int q = blocks[s] / splits[s], r = blocks[s] % splits[s], b = 0;
        for (int k = 0; k < splits[s]; k++) {
            int len = q + (k < r);
            add_seg(p, s, b, b + len);
            end_cta(p);
            b += len;
        }
    }
    return plan_finish(p, sms);
}

/* The makespan of the chunk costs alone (same order as plan_chunks), without building a plan. */
static long chunks_makespan(const int *blocks, const int *splits, int n_seqs, int sms, long *cost)
{
    int n = 0;
    for (int s = 0; s < n_seqs; s++) {
        int q = blocks[s] / splits[s], r = blocks[s] % splits[s];
        for (int k = 0; k < splits[s]; k++) cost[n++] = q + (k < r);
    }
    return plan_simulate(cost, n, sms);
}

/* FA3's heuristic: blocks_per_sm = ceil(total * 1.1 / sms), done in integers as
 * ceil(total * 11 / (10 * sms)) so no rounding of 1.1 can move a boundary. */
static void fa_splits(const int *blocks, int n_seqs, int sms, long long total, int *splits)
{
    long long den = 10LL * sms;
    long long per_sm = (total * 11 + den - 1) / den;
    for (int s = 0; s < n_seqs; s++) {
        long long k = (blocks[s] + per_sm - 1) / per_sm;
        if (k < 1) k = 1;
        if (k > blocks[s]) k = blocks[s];
        splits[s] = (int)k;
    }
}

/* Start from fa. While the chunk count spills into a last, partly filled wave, take chunks away
 * (from the sequence with the most chunks; ties to the one whose chunks grow least, then the
 * lowest index) until the count fits in one wave fewer; keep that only if the simulated makespan
 * drops. The makespan never rises above fa's, and the chunk count falls each round, so it ends.
 * `splits` comes in holding fa's chunk counts and leaves holding greedy's. */
static int greedy_splits(const int *blocks, int n_seqs, int sms, int *splits, int *cand,
                         long *cost)
{
    long best = chunks_makespan(blocks, splits, n_seqs, sms, cost);
    if (best < 0) return -1;
    long n = 0;
    for (int s = 0; s < n_seqs; s++) n += splits[s];
    for (;;) {
        long waves = (n + sms - 1) / sms;
        if (waves <= 1) break;
        long target = (waves - 1) * sms, m = n;
        memcpy(cand, splits, (size_t)n_seqs * sizeof *cand);
        while (m > target) {
            int pick = -1;
            long pick_chunk = 0;
            for (int s = 0; s < n_seqs; s++) {
                if (cand[s] <= 1) continue;
                long chunk = (blocks[s] + cand[s] - 2) / (cand[s] - 1);   /* ceil(b / (k-1)) */
                if (pick < 0 || cand[s] > cand[pick] ||
                    (cand[s] == cand[pick] && chunk < pick_chunk)) {
                    pick = s;
                    pick_chunk = chunk;
                }
            }
            if (pick < 0) break;   /* every sequence is down to one chunk */
            cand[pick]--;
            m--;
        }
        if (m > target) break;
        long ms = chunks_makespan(blocks, cand, n_seqs, sms, cost);
        if (ms < 0) return -1;
        if (ms >= best) break;
        best = ms;
        n = m;
        memcpy(splits, cand, (size_t)n_seqs * sizeof *splits);
    }
    return 0;
}

/* ------------------------------------------------------------------ "balanced" */

/* Cut the concatenation of all sequences (0's blocks, then 1's, ...) into n = min(sms, total)
 * consecutive shares, the first total % n of them one block longer; a share that crosses a
 * sequence boundary becomes several segments of one CTA. */
static int plan_balanced(const int *blocks, int n_seqs, int sms, long long total, split_plan *p)
{
    long long n = total < sms ? total : sms;
    long long q = total / n, r = total % n;
    if (plan_alloc(p, n_seqs, n, n + n_seqs - 1)) return -1;
    int s = 0, b = 0;   /* the next block not yet handed out: block b of sequence s */
    for (long long c = 0; c < n; c++) {
        long long left = q + (c < r);
        while (left > 0) {
            int take = blocks[s] - b < left ? blocks[s] - b : (int)left;
            add_seg(p, s, b, b + take);
            b += take;
            left -= take;
            if (b == blocks[s]) {
                s++;
                b = 0;
            }
        }
        end_cta(p);
    }
    return plan_finish(p, sms);
}

/* ------------------------------------------------------------------ entry point */

int plan_splits(const char *planner, const int *blocks, int n_seqs, int sms, split_plan *plan)
{
    if (!plan) return -1;
    memset(plan, 0, sizeof *plan);
    if (!planner || !blocks || n_seqs < 1 || sms < 1) return -1;
    int kind = -1;
    for (int i = 0; planner_names[i]; i++)
        if (!strcmp(planner, planner_names[i])) kind = i;
    if (kind < 0) return -1;
    long long total = 0;
    for (int s = 0; s < n_seqs; s++) {
        if (blocks[s] < 1) return -1;
        total += blocks[s];
    }
    if (total > INT_MAX) return -1;   /* chunk and CTA counts are ints */

    if (kind == 2 || kind == 3) {
        /* If greedy's whole-request chunks already reach the ideal makespan, cutting across
         * requests buys nothing and costs partials and a combine pass: take greedy's plan.
         * "auto" takes it also when it is close: within max(2 blocks, 15%) of the ideal. The
         * cost model counts only KV blocks; on the GPU each CTA and each partial has a fixed
         * cost too, and the decode and varlen sweeps measured greedy faster than a balanced cut
         * whenever its makespan was that close (NOTES.md). */
        if (plan_splits("greedy", blocks, n_seqs, sms, plan) == 0) {
            long ideal = (total + sms - 1) / sms;
            long slack = kind == 3 ? (ideal * 15 + 99) / 100 : 0;
            if (kind == 3 && slack < 2) slack = 2;
            if (plan->makespan <= ideal + slack) return 0;
            plan_free(plan);
        }
        memset(plan, 0, sizeof *plan);
        int rc = plan_balanced(blocks, n_seqs, sms, total, plan);
        if (rc) plan_free(plan);
        return rc;
    }

    /* fa's chunk count bounds every later one: greedy only takes chunks away */
    int *splits = malloc((size_t)n_seqs * sizeof *splits);
    int *cand = malloc((size_t)n_seqs * sizeof *cand);
    long *cost = NULL;
    int rc = -1;
    if (splits && cand) {
        fa_splits(blocks, n_seqs, sms, total, splits);
        long n = 0;
        for (int s = 0; s < n_seqs; s++) n += splits[s];
        cost = malloc((size_t)n * sizeof *cost);
        if (cost && (kind == 0 || greedy_splits(blocks, n_seqs, sms, splits, cand, cost) == 0))
            rc = plan_chunks(blocks, splits, n_seqs, sms, plan);
    }
    free(splits);
    free(cand);
    free(cost);
    if (rc) plan_free(plan);
    return rc;
}
