/* Lab, not course: rung 05's tuning candidates and ablations. lab/tune05.sh compiles this file
 * into a binary of its own (build/bin/tune05, linked with the same driver and common objects as
 * a rung); the course build never sees it.
 *
 * The kernel is fa2.cu's, included whole, so every configuration below is the same template as
 * the course's 05b and 05c with other tile sizes, warp counts or load/layout switches. Each one is
 * a variant of the tuning binary, with id t<index>; its name spells the configuration, which
 * lab/tune05.sh copies into the config column of its CSV. The index is that CSV's cfg column: the
 * order is the one of the run in results/lab/h100-tune05.csv, so its cfg numbers still apply. */

/* fa2.cu defines the course's list of variants; rename it, so this file can define the tuning
 * binary's own (the driver reads rung_variants). */
#define rung_variants fa2_course_variants
#include "../05_fa2_outer_q/fa2.cu"
#undef rung_variants

/* X(index, d, Br, Bc, warps, cp.async, swizzle, what it is); candidates and ablations are
 * described against 05c at the same d. */
#define TUNE05_CONFIGS(X)                                                                   \
    X(0, 64, 128, 128, 4, 1, 1, "05c at d = 64")                                            \
    X(1, 128, 128, 64, 4, 1, 1, "05c at d = 128")                                           \
    X(2, 256, 64, 64, 4, 1, 1, "05c at d = 256")                                            \
    X(3, 64, 128, 128, 4, 0, 0, "05b at d = 64")                                            \
    X(4, 128, 128, 64, 4, 0, 0, "05b at d = 128")                                           \
    X(5, 256, 64, 64, 4, 0, 0, "05b at d = 256")                                            \
    X(6, 64, 128, 64, 4, 1, 1, "candidate: half the keys per tile")                         \
    X(7, 64, 64, 64, 4, 1, 1, "candidate: 16 rows per warp, half the keys per tile")        \
    X(8, 64, 128, 64, 8, 1, 1, "candidate: 8 warps of 16 rows, half the keys per tile")     \
    X(9, 128, 128, 32, 4, 1, 1, "candidate: half the keys per tile")                        \
    X(10, 128, 64, 64, 4, 1, 1, "candidate: 16 rows per warp")                              \
    X(11, 128, 128, 64, 8, 1, 1, "candidate: 8 warps of 16 rows")                           \
    X(12, 128, 64, 32, 4, 1, 1, "candidate: 16 rows per warp, half the keys per tile")      \
    X(13, 64, 128, 128, 4, 1, 0, "ablation: cp.async double buffer alone, no swizzle")      \
    X(14, 128, 128, 64, 4, 1, 0, "ablation: cp.async double buffer alone, no swizzle")      \
    X(15, 64, 128, 128, 4, 0, 1, "ablation: swizzle alone, synchronous loads")              \
    X(16, 128, 128, 64, 4, 0, 1, "ablation: swizzle alone, synchronous loads")              \
    X(17, 256, 128, 64, 8, 1, 1, "candidate: 8 warps of 16 rows, 128 rows per tile")         \
    X(18, 256, 64, 32, 4, 1, 1, "candidate: half the keys per tile")                        \
    X(19, 256, 128, 32, 8, 1, 1, "candidate: 8 warps of 16 rows, half the keys per tile")

#define TUNE_CFG(I, D, BR, BC, W, A, S, WHAT) FA2_CFG(D, BR, BC, W, A, S),
static const fa2_config tune_configs[] = {TUNE05_CONFIGS(TUNE_CFG)};

template <int I>
static int tune_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    const fa2_config *c = &tune_configs[I];
    if (s->d != c->d) {
        snprintf(why, n, "configuration t%d is built for d = %d (d = %d)", I, c->d, s->d);
        return 1;
    }
    return fa2_refuse(c, s, env, why, n);
}

template <int I>
static const char *tune_run(const attn_args *a, cudaStream_t st)
{
    return fa2_launch(&tune_configs[I], a, st);
}

#define TUNE_RUNG(I, D, BR, BC, W, A, S, WHAT)                                              \
    static const rung tune_##I = {                                                          \
        "t" #I, "d=" #D " br=" #BR " bc=" #BC " warps=" #W " async=" #A " swizzle=" #S,    \
        WHAT, tune_unsupported<I>, fa2_workspace, tune_run<I>, NULL, NULL};
TUNE05_CONFIGS(TUNE_RUNG)

#define TUNE_PTR(I, ...) &tune_##I,
extern "C" const rung *const rung_variants[] = {TUNE05_CONFIGS(TUNE_PTR) NULL};
