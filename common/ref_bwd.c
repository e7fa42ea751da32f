/* The float64 reference of the backward pass (rung 08), straight from the definitions.
 *
 * For one query row i of head h (scale s, the keys it sees j < e_i, as the forward's reference):
 *   S_ij  = s q_i . k_j                 LSE_i = log sum_j exp(S_ij)     P_ij = exp(S_ij - LSE_i)
 *   O_i   = sum_j P_ij v_j              (the forward, recomputed: P is never stored)
 *   D_i   = dO_i . O_i                  (= rowsum(dO o O))
 *   dP_ij = dO_i . v_j                  dS_ij = P_ij (dP_ij - D_i)
 *   dQ_i  = s sum_j dS_ij k_j           dK_j = s sum_i dS_ij q_i       dV_j = sum_i P_ij dO_i
 * These are the gradients of the scalar L = sum(dO o O) with dO held fixed (tests/test_ref_bwd.c
 * checks every element against central finite differences of L). With GQA/MQA, KV head kvh is read
 * by the G = Hq/Hkv query heads kvh*G .. kvh*G+G-1, so its dK and dV sum over those heads' rows.
 *
 * A row that sees no key (causal with N > M: i + M - N < 0) has no P, O_i = 0, LSE_i = -inf, and
 * contributes nothing: its dQ_i is exactly 0, and it adds nothing to any dK_j or dV_j. A key that no
 * row sees (past a request's KV length) gets dK_j = dV_j = 0.
 *
 * The unit of work is one (b, KV head) group: its G*N query rows and its M keys, converted once to
 * float64. ref_bwd_f64 takes float64 arrays (the finite-difference test perturbs them);
 * ref_bwd_group reads the storage type (float16 or bfloat16), as ref_row does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "half.h"

/* Row i's visible keys in [0, end): the forward's rule (attn.h). */
static int row_end(const attn_shape *s, int i, int mk) { return attn_row_end(s, i, mk); }

void ref_bwd_f64(const attn_shape *s, int mk, int G, const double *q, const double *k, const double *v,
                 const double *dout, double *o, double *lse, double *dq, double *dk, double *dv)
{
    const int N = s->N, M = s->M, d = s->d;
    const double scale = s->scale;
    const long rows = (long)G * N;
    double *D = malloc(sizeof(double) * (size_t)rows);

    /* 1. the forward, row by row (two passes: the max, then the sum), and D = rowsum(dO o O) */
    #pragma omp parallel
    {
        double *sc = malloc(sizeof(double) * (size_t)(M > 0 ? M : 1));
        #pragma omp for schedule(dynamic, 4)
        for (long r = 0; r < rows; r++) {
            const int i = (int)(r % N), end = row_end(s, i, mk);
            const double *qr = q + r * d;
            double *orow = o + r * d;
            for (int c = 0; c < d; c++) orow[c] = 0.0;
            if (end == 0) { lse[r] = -INFINITY; D[r] = 0.0; continue; }
            double mx = -INFINITY;
            for (int j = 0; j < end; j++) {
                double acc = 0.0;
                for (int c = 0; c < d; c++) acc += qr[c] * k[(size_t)j * d + c];
                sc[j] = scale * acc;
                if (sc[j] > mx) mx = sc[j];
            }
            double sum = 0.0;
            for (int j = 0; j < end; j++) {
                double p = exp(sc[j] - mx);
                for (int c = 0; c < d; c++) orow[c] += p * v[(size_t)j * d + c];
                sum += p;
            }
            double dd = 0.0;
            for (int c = 0; c < d; c++) { orow[c] /= sum; dd += dout[r * d + c] * orow[c]; }
            lse[r] = mx + log(sum);
            D[r] = dd;
        }
        free(sc);
    }

    /* P_ij and dS_ij, recomputed from the LSE wherever they are needed (as the kernels do) */
#define REF_P(r, j, out_p, out_ds)                                                               \
    do {                                                                                         \
        const double *qr_ = q + (r) * d, *kr_ = k + (size_t)(j) * d, *vr_ = v + (size_t)(j) * d;  \
        const double *gr_ = dout + (r) * d;                                                      \
        double s_ = 0.0, dp_ = 0.0;                                                              \
        for (int c_ = 0; c_ < d; c_++) { s_ += qr_[c_] * kr_[c_]; dp_ += gr_[c_] * vr_[c_]; }     \
        out_p = exp(scale * s_ - lse[r]);                                                        \
        out_ds = out_p * (dp_ - D[r]);                                                           \
    } while (0)

    /* 2. dQ, a row at a time: dQ_i = scale sum_j dS_ij k_j; a row that sees no key keeps 0 */
    #pragma omp parallel for schedule(dynamic, 4)
    for (long r = 0; r < rows; r++) {
        const int i = (int)(r % N), end = row_end(s, i, mk);
        double *g = dq + r * d;
        for (int c = 0; c < d; c++) g[c] = 0.0;
        for (int j = 0; j < end; j++) {
            double p, ds;
            REF_P(r, j, p, ds);
            (void)p;
            for (int c = 0; c < d; c++) g[c] += ds * k[(size_t)j * d + c];
        }
        for (int c = 0; c < d; c++) g[c] *= scale;
    }

    /* 3. dK and dV, a key at a time, summed over every row of every query head of the group that
     * sees the key (the key j is seen by row i iff j < row_end(i)) */
    #pragma omp parallel for schedule(dynamic, 4)
    for (int j = 0; j < M; j++) {
        double *gk = dk + (size_t)j * d, *gv = dv + (size_t)j * d;
        for (int c = 0; c < d; c++) gk[c] = gv[c] = 0.0;
        if (j >= mk) continue;
        for (long r = 0; r < rows; r++) {
            if (j >= row_end(s, (int)(r % N), mk)) continue;
            double p, ds;
            REF_P(r, j, p, ds);
            for (int c = 0; c < d; c++) {
                gk[c] += ds * q[r * d + c];
                gv[c] += p * dout[r * d + c];
            }
        }
        for (int c = 0; c < d; c++) gk[c] *= scale;
    }
#undef REF_P
    free(D);
}

static inline double elem64(attn_dtype t, uint16_t h) { return (double)elem_to_f32(t, h); }

int ref_bwd_alloc(const attn_shape *s, ref_bwd_out *r)
{
    const size_t G = (size_t)(s->Hq / s->Hkv), qn = G * s->N * s->d, kn = (size_t)s->M * s->d;
    memset(r, 0, sizeof *r);
    r->o = malloc(sizeof(double) * qn);
    r->lse = malloc(sizeof(double) * G * s->N);
    r->dq = malloc(sizeof(double) * qn);
    r->dk = malloc(sizeof(double) * kn);
    r->dv = malloc(sizeof(double) * kn);
    if (!r->o || !r->lse || !r->dq || !r->dk || !r->dv) { ref_bwd_free(r); return -1; }
    return 0;
}

void ref_bwd_free(ref_bwd_out *r)
{
    free(r->o); free(r->lse); free(r->dq); free(r->dk); free(r->dv);
    memset(r, 0, sizeof *r);
}

int ref_bwd_group(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  const uint16_t *dout, int b, int kvh, ref_bwd_out *r)
{
    const int G = s->Hq / s->Hkv, d = s->d;
    const size_t qn = (size_t)G * s->N * d, kn = (size_t)s->M * d;
    double *qd = malloc(sizeof(double) * qn), *gd = malloc(sizeof(double) * qn);
    double *kd = malloc(sizeof(double) * kn), *vd = malloc(sizeof(double) * kn);
    if (!qd || !gd || !kd || !vd) { free(qd); free(gd); free(kd); free(vd); return -1; }
    /* the group's query heads kvh*G .. kvh*G+G-1 are contiguous in [B, Hq, N, d] */
    const size_t q0 = ((size_t)b * s->Hq + (size_t)kvh * G) * s->N * d;
    const size_t k0 = ((size_t)b * s->Hkv + kvh) * kn;
    for (size_t e = 0; e < qn; e++) { qd[e] = elem64(s->dtype, q[q0 + e]); gd[e] = elem64(s->dtype, dout[q0 + e]); }
    for (size_t e = 0; e < kn; e++) { kd[e] = elem64(s->dtype, k[k0 + e]); vd[e] = elem64(s->dtype, v[k0 + e]); }
    ref_bwd_f64(s, attn_kv_len(s, b), G, qd, kd, vd, gd, r->o, r->lse, r->dq, r->dk, r->dv);
    free(qd); free(gd); free(kd); free(vd);
    return 0;
}

/* Multiply-adds of one group's reference: about 2 per (row, key, column) for the forward, 2 for
 * dP and dQ, 3 for S, dP again and dK, dV: 7 G N M d (masked pairs skipped, counted anyway). */
double ref_bwd_group_cost(const attn_shape *s)
{
    return 7.0 * (s->Hq / s->Hkv) * (double)s->N * s->M * s->d + 1.0;
}
