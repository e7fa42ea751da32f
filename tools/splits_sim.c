/* splits_sim: rung 06's split planners (06_split_kv/planner.c) on the cost model alone, no GPU.
 *
 *   build/bin/splits_sim              CSV on stdout (make splits writes it to results/splits-sim.csv)
 *   build/bin/splits_sim --summary    per distribution and SM count: the makespan of fa and greedy
 *                                     over balanced's (mean and max over the batches, the ratio of
 *                                     the sums, i.e. of running every batch once), and how often
 *                                     each is worse
 *
 * Batches: B requests with KV lengths (tokens) drawn from one of these distributions, in blocks of
 * 128 tokens, up to 32768 tokens:
 *   equal     every request the same length, drawn once per batch from 1..32768
 *   uniform   each request uniform in 1..32768
 *   longtail  log-normal, median 2048 tokens, sigma 1.2, clipped to 1..32768
 *   bimodal   7 in 8 requests short (1..2048), 1 in 8 near the maximum (28672..32768)
 *   article   the seed article's shape: every request 4096 tokens, in its 176-token blocks
 *             (B = 32 on 78 SMs is its worked example)
 * A batch depends on (distribution, B, seed) only, so the SM counts see the same batches.
 * Deterministic: splitmix64, seeded from those three. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../06_split_kv/planner.h"

#define MAX_TOKENS 32768
#define BLOCK 128
#define ARTICLE_TOKENS 4096
#define ARTICLE_BLOCK 176
#define N_SEEDS 8

static const int batch_sizes[] = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128};
static const int sm_counts[] = {78, 114, 132};   /* H20, H100 PCIe, H100 SXM / H200 */
static const char *const dists[] = {"equal", "uniform", "longtail", "bimodal", "article"};
#define N_B (int)(sizeof batch_sizes / sizeof batch_sizes[0])
#define N_SM (int)(sizeof sm_counts / sizeof sm_counts[0])
#define N_DIST (int)(sizeof dists / sizeof dists[0])

static uint64_t rng_state;
static uint64_t rng(void)   /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int uniform(int lo, int hi) { return lo + (int)(rng() % (uint64_t)(hi - lo + 1)); }
static double unit(void) { return ((double)(rng() >> 11) + 0.5) / 9007199254740992.0; }

/* Token counts of one batch; returns the block size in tokens. */
static int draw(int d, int B, int seed, int *tokens)
{
    rng_state = 0x5EEDull * 1000003u + (uint64_t)d * 7919u + (uint64_t)B * 104729u + (uint64_t)seed;
    rng();
    int L = uniform(1, MAX_TOKENS);
    for (int i = 0; i < B; i++) {
        int t;
        if (!strcmp(dists[d], "equal")) t = L;
        else if (!strcmp(dists[d], "uniform")) t = uniform(1, MAX_TOKENS);
        else if (!strcmp(dists[d], "longtail")) {
            double z = sqrt(-2.0 * log(unit())) * cos(6.283185307179586 * unit());
            double x = 2048.0 * exp(1.2 * z);
            t = x < 1.0 ? 1 : x > MAX_TOKENS ? MAX_TOKENS : (int)x;
        } else if (!strcmp(dists[d], "bimodal"))
            t = uniform(0, 7) ? uniform(1, 2048) : uniform(MAX_TOKENS - 4096, MAX_TOKENS);
        else
            t = ARTICLE_TOKENS;
        tokens[i] = t;
    }
    return !strcmp(dists[d], "article") ? ARTICLE_BLOCK : BLOCK;
}

typedef struct row {
    long total, ideal, ms[3];
    int ctas[3];
} row;

static int run(const int *blocks, int B, int sms, row *r)
{
    r->total = 0;
    for (int i = 0; i < B; i++) r->total += blocks[i];
    r->ideal = (r->total + sms - 1) / sms;
    for (int k = 0; k < 3; k++) {
        split_plan p;
        if (plan_splits(planner_names[k], blocks, B, sms, &p)) {
            fprintf(stderr, "splits_sim: plan_splits(%s) failed\n", planner_names[k]);
            return -1;
        }
        r->ms[k] = p.makespan;
        r->ctas[k] = p.n_ctas;
        plan_free(&p);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int summary = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--summary")) summary = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: splits_sim [--summary]\n"
                   "  rung 06's split planners on the cost model alone, no GPU (tools/splits_sim.c)\n"
                   "  (none)      the CSV on stdout: make splits writes it to results/splits-sim.csv\n"
                   "  --summary   per distribution and SM count, fa's and greedy's makespan over balanced's\n");
            return 0;
        } else {
            fprintf(stderr, "splits_sim: unknown argument '%.200s' (allowed: --summary, --help)\n", argv[i]);
            return 2;
        }
    }
    /* the planner order of the columns below */
    if (strcmp(planner_names[0], "fa") || strcmp(planner_names[1], "greedy") ||
        strcmp(planner_names[2], "balanced")) {
        fprintf(stderr, "splits_sim: expected the planners fa, greedy, balanced\n");
        return 1;
    }

    if (!summary) {
        printf("# splits-sim: makespan in KV blocks per planner (cost model in 06_split_kv/planner.h)\n");
        printf("dist,B,sms,seed,block_tokens,total_blocks,ideal,fa,greedy,balanced,fa_ctas,greedy_ctas,balanced_ctas\n");
    } else {
        printf("makespan over balanced's (= the ideal ceil(total/SMs)), over B in {1..128} x %d seeds\n", N_SEEDS);
        printf("%-9s %4s %4s  %-27s %-27s\n", "dist", "SMs", "rows", "fa: mean max sum worse",
               "greedy: mean max sum worse");
    }
    int tokens[128], blocks[128];
    for (int d = 0; d < N_DIST; d++) {
        int seeds = strcmp(dists[d], "article") ? N_SEEDS : 1;
        for (int m = 0; m < N_SM; m++) {
            int sms = sm_counts[m], rows = 0, worse[2] = {0, 0};
            double sum[2] = {0, 0}, max[2] = {0, 0}, tot[3] = {0, 0, 0};
            for (int b = 0; b < N_B; b++) {
                int B = batch_sizes[b];
                for (int seed = 0; seed < seeds; seed++) {
                    int bt = draw(d, B, seed, tokens);
                    for (int i = 0; i < B; i++) blocks[i] = (tokens[i] + bt - 1) / bt;
                    row r;
                    if (run(blocks, B, sms, &r)) return 1;
                    if (!summary) {
                        printf("%s,%d,%d,%d,%d,%ld,%ld,%ld,%ld,%ld,%d,%d,%d\n", dists[d], B, sms, seed,
                               bt, r.total, r.ideal, r.ms[0], r.ms[1], r.ms[2], r.ctas[0], r.ctas[1],
                               r.ctas[2]);
                        continue;
                    }
                    rows++;
                    for (int k = 0; k < 3; k++) tot[k] += (double)r.ms[k];
                    for (int k = 0; k < 2; k++) {
                        double q = (double)r.ms[k] / (double)r.ms[2];
                        sum[k] += q;
                        if (q > max[k]) max[k] = q;
                        worse[k] += r.ms[k] > r.ms[2];
                    }
                }
            }
            if (summary)
                printf("%-9s %4d %4d  %5.3f %5.3f %5.3f %4.0f%%     %5.3f %5.3f %5.3f %4.0f%%\n",
                       dists[d], sms, rows, sum[0] / rows, max[0], tot[0] / tot[2],
                       100.0 * worse[0] / rows, sum[1] / rows, max[1], tot[1] / tot[2],
                       100.0 * worse[1] / rows);
        }
    }
    return 0;
}
