/* The float64 CPU reference: one query row at a time, straight from the definition
 * (two passes over the visible keys: scores and their max, then the weighted sum of V). */
#include <math.h>
#include "harness.h"
#include "half.h"

static float f16_table[65536];
static int f16_table_ready;

/* float16 -> float by table lookup: the reference spends most of its time converting K and V. */
void ref_init(void)
{
    if (f16_table_ready) return;
    for (int i = 0; i < 65536; i++) f16_table[i] = f16_to_f32((uint16_t)i);
    f16_table_ready = 1;
}

static inline double elem(attn_dtype t, uint16_t h)
{
    return t == ATTN_BF16 ? (double)bf16_to_f32(h) : (double)f16_table[h];
}

double ref_row(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
               int b, int h, int i, double *out, double *scores)
{
    if (!f16_table_ready) ref_init();  /* callers running rows in parallel call ref_init first */
    const int d = s->d, group = s->Hq / s->Hkv, kvh = h / group;
    const int mk = attn_kv_len(s, b), end = attn_row_end(s, i, mk);
    const uint16_t *qr = q + (((size_t)b * s->Hq + h) * s->N + i) * d;
    const uint16_t *kb = k + ((size_t)b * s->Hkv + kvh) * (size_t)s->M * d;
    const uint16_t *vb = v + ((size_t)b * s->Hkv + kvh) * (size_t)s->M * d;
    double qd[2048];  /* d <= 2048 is enforced by shape_validate */

    for (int c = 0; c < d; c++) { qd[c] = elem(s->dtype, qr[c]); out[c] = 0.0; }
    if (end == 0) return -INFINITY;

    double mx = -INFINITY;
    for (int j = 0; j < end; j++) {
        const uint16_t *kr = kb + (size_t)j * d;
        double acc = 0.0;
        for (int c = 0; c < d; c++) acc += qd[c] * elem(s->dtype, kr[c]);
        scores[j] = (double)s->scale * acc;
        if (scores[j] > mx) mx = scores[j];
    }
    double sum = 0.0;
    for (int j = 0; j < end; j++) {
        double p = exp(scores[j] - mx);
        const uint16_t *vr = vb + (size_t)j * d;
        for (int c = 0; c < d; c++) out[c] += p * elem(s->dtype, vr[c]);
        sum += p;
    }
    for (int c = 0; c < d; c++) out[c] /= sum;
    return mx + log(sum);
}
