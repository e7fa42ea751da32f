/* Seeded random inputs. A counter-based generator (a splitmix64 hash of seed, stream and index)
 * makes every element independent of how the work is split across threads. */
#include <math.h>
#include <string.h>
#include "harness.h"
#include "half.h"

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t rng_bits(uint64_t seed, uint64_t stream, uint64_t i)
{
    return mix64(mix64(seed * 0x9e3779b97f4a7c15ull + stream) ^ (i * 0xd1b54a32d192ed03ull));
}

uint64_t rng_next(rng_stream *r)
{
    return rng_bits(r->seed, r->stream, r->i++);
}

double rng_uniform(uint64_t seed, uint64_t stream, uint64_t i)
{
    return (double)(rng_bits(seed, stream, i) >> 11) * (1.0 / 9007199254740992.0);
}

double rng_normal(uint64_t seed, uint64_t stream, uint64_t i)
{
    /* Box-Muller on the two 32-bit halves of one hash; u1 in (0, 1] keeps log() finite. */
    uint64_t r = rng_bits(seed, stream, i);
    double u1 = ((double)(r >> 32) + 1.0) * (1.0 / 4294967296.0);
    double u2 = (double)(r & 0xffffffffu) * (1.0 / 4294967296.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void fill_normal(uint16_t *dst, size_t n, attn_dtype t, uint64_t seed, uint64_t stream, double sigma)
{
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        dst[i] = f32_to_elem(t, (float)(sigma * rng_normal(seed, stream, (uint64_t)i)));
}

/* N(0,1), but each entry with probability 1/1000 (stream + 100 decides) from N(0, 10^2). */
static void fill_sparse_outlier(uint16_t *dst, size_t n, attn_dtype t, uint64_t seed, uint64_t stream)
{
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++) {
        double sigma = rng_uniform(seed, stream + 100, (uint64_t)i) < 1e-3 ? 10.0 : 1.0;
        dst[i] = f32_to_elem(t, (float)(sigma * rng_normal(seed, stream, (uint64_t)i)));
    }
}

static const char *const input_names[INPUT_MODES] = {"normal", "outlier", "sparse-outlier", "nonfinite-q",
                                                     "nonfinite-k", "nonfinite-v"};

int input_mode_parse(const char *name)
{
    for (int m = 0; name && m < INPUT_MODES; m++)
        if (!strcmp(name, input_names[m])) return m;
    return -1;
}

const char *input_mode_name(int mode) { return mode >= 0 && mode < INPUT_MODES ? input_names[mode] : "?"; }

/* nonfinite-q|k|v: a NaN in the first (b, head) pair and an infinity in the last, where every row that
 * sees any key meets them: in Q the last query row (it sees every key, causal or not); in K and V
 * key 0. Q: NaN in column 0, +Inf in column d - 1 (scores of +-Inf: a NaN row). K: NaN in column 0
 * (every row of the head NaN), +Inf in column d - 1 (score +Inf for a row whose q[d - 1] > 0: a NaN
 * row; -Inf where q[d - 1] < 0: key 0 weighs 0, the row stays a number). V: NaN in column 0 and -Inf
 * in column d - 1 (that column of every row of the head). */
static void plant_nonfinite(const attn_shape *s, int mode, uint16_t *q, uint16_t *k, uint16_t *v)
{
    const size_t d = (size_t)s->d;
    const uint16_t nan = f32_to_elem(s->dtype, NAN);
    if (mode == INPUT_NONFINITE_Q) {
        q[(size_t)(s->N - 1) * d] = nan;
        q[(((size_t)s->B * s->Hq - 1) * s->N + s->N - 1) * d + d - 1] = f32_to_elem(s->dtype, INFINITY);
    } else {
        uint16_t *t = mode == INPUT_NONFINITE_K ? k : v;
        t[0] = nan;
        t[((size_t)s->B * s->Hkv - 1) * s->M * d + d - 1] = f32_to_elem(s->dtype, mode == INPUT_NONFINITE_K ? INFINITY : -INFINITY);
    }
}

void make_inputs(const attn_shape *s, uint64_t seed, int mode, uint16_t *q, uint16_t *k, uint16_t *v)
{
    if (mode == INPUT_SPARSE_OUTLIER) {
        fill_sparse_outlier(q, attn_q_elems(s), s->dtype, seed, 1);
        fill_sparse_outlier(k, attn_kv_elems(s), s->dtype, seed, 2);
        fill_sparse_outlier(v, attn_kv_elems(s), s->dtype, seed, 3);
        return;
    }
    double qk_sigma = mode == INPUT_OUTLIER ? 10.0 : 1.0;
    fill_normal(q, attn_q_elems(s), s->dtype, seed, 1, qk_sigma);
    fill_normal(k, attn_kv_elems(s), s->dtype, seed, 2, qk_sigma);
    fill_normal(v, attn_kv_elems(s), s->dtype, seed, 3, 1.0);
    if (mode >= INPUT_NONFINITE_Q) plant_nonfinite(s, mode, q, k, v);
}

void make_grad_input(const attn_shape *s, uint64_t seed, uint16_t *dout)
{
    fill_normal(dout, attn_q_elems(s), s->dtype, seed, 4, 1.0);
}

int make_seqlens(const char *dist, int B, int M, uint64_t seed, int *out)
{
    for (int b = 0; b < B; b++) {
        double u = rng_uniform(seed, 7, (uint64_t)b);
        long len;
        if (strcmp(dist, "equal") == 0) len = M;
        else if (strcmp(dist, "uniform") == 0) len = 1 + (long)(u * M);
        /* u^4: median M/16, mean M/5, a few requests near M */
        else if (strcmp(dist, "longtail") == 0) len = 1 + (long)(u * u * u * u * M);
        else return -1;
        out[b] = (int)(len > M ? M : len);
    }
    return 0;
}
