/* Split planners for Flash-Decoding (rung 06): plain C, run on the CPU, tested in CI.
 *
 * The problem. A decode batch is a list of sequences (for rung 06: one per request and KV head,
 * and per group of query rows if a request has more rows than one block holds), sequence s
 * having blocks[s] KV blocks of a fixed number of keys. The kernel launches one CTA per entry of
 * a plan; each CTA walks one or more segments (a contiguous range of one sequence's blocks).
 * A sequence covered by a single segment is written straight to O; a sequence cut into several
 * segments has each write a partial (O, LSE) that the combine kernel merges.
 *
 * The cost model (what the simulator measures). The GPU runs one CTA per SM at a time; CTAs are
 * handed out in launch order to whichever SM frees first (list scheduling); a CTA costs the number
 * of KV blocks it processes. The makespan is the largest total any SM processes: the length of
 * the launch in KV blocks, waves included.
 *
 * The planners:
 *   "fa"        FlashAttention-3's varlen decode heuristic: blocks_per_sm =
 *               ceil(total_blocks * 1.1 / SMs); sequence s is cut into
 *               ceil(blocks[s] / blocks_per_sm) chunks of near-equal size, one CTA each.
 *   "greedy"    start from "fa"; when the chunk count spills past a whole number of waves, take
 *               one chunk away from sequences (most chunks first) until the count fits in one
 *               wave fewer; keep the result only if its makespan is lower; repeat.
 *   "balanced"  cut the concatenation of all sequences into SMs contiguous shares of
 *               ceil(total / SMs) blocks (or one fewer); a share may span sequence boundaries,
 *               so a CTA may walk several segments. Makespan ceil(total / SMs): one wave, no
 *               quantization. When greedy's plan already reaches that makespan, balanced
 *               returns greedy's plan instead (same makespan, fewer partials to combine).
 *   "auto"      greedy's plan when its makespan is within max(2 blocks, 15%) of the ideal
 *               ceil(total / SMs), else balanced's cut: the cost model ignores the fixed cost of
 *               a CTA and of a partial, which the GPU measurements showed (NOTES.md).
 */
#ifndef PLANNER_H
#define PLANNER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct split_segment {
    int seq;              /* which sequence */
    int blk_begin;        /* first KV block of the segment */
    int blk_end;          /* one past the last; blk_end > blk_begin (no empty segment) */
    int part;             /* index of its partial (O, LSE) slot, or -1: the segment is the whole
                             sequence and writes O and LSE directly */
} split_segment;

typedef struct split_plan {
    int n_ctas;
    int *cta_seg;         /* n_ctas + 1 entries: CTA c walks segments cta_seg[c] .. cta_seg[c+1]-1 */
    int n_segs;
    split_segment *segs;  /* in CTA order */
    int n_seqs;
    int *seq_part;        /* n_seqs + 1 entries: the partials of sequence s are slots
                             seq_part[s] .. seq_part[s+1]-1 (none for a sequence written directly),
                             in key order */
    int n_parts;          /* total partial slots */
    long makespan;        /* simulated, in KV blocks (see the cost model above) */
} split_plan;

/* Plan `n_seqs` sequences (blocks[s] >= 1 each) for a GPU of `sms` SMs with `planner` one of
 * "fa", "greedy", "balanced", "auto". Returns 0, or -1 for an unknown planner name or bad input.
 * The plan owns its arrays; free them with plan_free. */
int plan_splits(const char *planner, const int *blocks, int n_seqs, int sms, split_plan *plan);
void plan_free(split_plan *plan);

/* The cost model alone: the makespan of CTAs costing cta_cost[0..n_ctas) launched in order on
 * `sms` SMs, one CTA per SM at a time, each to the SM that frees first. -1 for sms < 1 or
 * n_ctas < 0. */
long plan_simulate(const long *cta_cost, int n_ctas, int sms);

/* The planner names, NULL-terminated, and the default (the best one as measured). */
extern const char *const planner_names[];
extern const char *const planner_default;

#ifdef __cplusplus
}
#endif
#endif
