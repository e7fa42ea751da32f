/* --sweep FILE: every shape of a sweep file, smallest first, one report row each. A shape whose
 * first launch takes longer than --too-slow seconds marks every larger one "skipped: too slow",
 * so that a slow rung does not spend hours on the largest shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs.h"

typedef struct sweep_item {
    run_case c;
    double flops;
    int order;
} sweep_item;

static int by_flops(const void *a, const void *b)
{
    const sweep_item *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? -1 : 1;
    return x->order - y->order;
}

/* One case: through the rung (a backward rung: run_grad.c), or with --read-floor the floor of its K and V; ST_*. Each shape of a
 * sweep, and main's single shape. */
int run_one(driver *D, const run_case *c, uint16_t *const loaded[4], double *first_ms_out)
{
    if (D->opt.read_floor) {
        *first_ms_out = 0.0;
        return D->have_device ? run_floor(D, &c->shape, first_ms_out) : ST_OK;
    }
    if (D->grad) return run_grad(D, c, loaded, first_ms_out);
    return run_shape(D, c, loaded, first_ms_out);
}

/* Reads and validates every line of the sweep file (cli.c's sweep_read: no GPU needed); sorted
 * smallest first, so that the too-slow rule of run_sweep can stop before the largest shapes. NULL on
 * error (printed). */
static sweep_item *sweep_items(driver *D, int *count)
{
    run_case *cases;
    int n;
    char err[1024];
    if (sweep_read(D->opt.sweep, &D->opt, &cases, &n, err, sizeof err)) {
        fprintf(stderr, "error: %s\n", err);
        return NULL;
    }
    sweep_item *items = malloc(sizeof(sweep_item) * n);
    if (!items) {
        cli_message(err, sizeof err, "--sweep %s: out of memory for %d shapes", D->opt.sweep, n);
        fprintf(stderr, "error: %s\n", err);
        sweep_free(cases, n);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        items[i].c = cases[i];
        items[i].flops = attn_flops(&cases[i].shape);
        items[i].order = i;
    }
    free(cases);              /* the items own the seqlens now */
    qsort(items, n, sizeof(sweep_item), by_flops);
    *count = n;
    return items;
}

int sweep_check(driver *D)
{
    int n;
    sweep_item *items = sweep_items(D, &n);
    if (!items) return -1;
    for (int i = 0; i < n; i++) free(items[i].c.seqlens);
    free(items);
    return 0;
}

int run_sweep(driver *D)
{
    int n;
    sweep_item *items = sweep_items(D, &n);
    if (!items) return EXIT_USAGE;

    int failed = 0;
    double slow_flops = INFINITY, slow_s = 0.0;
    char slow_at[128] = "";
    for (int i = 0; i < n; i++) {
        attn_shape *s = &items[i].c.shape;
        if (!D->opt.quiet)
            fprintf(stderr, "[%s %d/%d] B=%d Hq=%d Hkv=%d N=%d M=%d d=%d causal=%d%s\n", D->r->id, i + 1, n,
                    s->B, s->Hq, s->Hkv, s->N, s->M, s->d, s->causal, s->page_size ? " (paged)" : "");
        if (items[i].flops >= slow_flops) {
            char status[300], label[128];
            report_row row;
            memset(&row, 0, sizeof row);
            row.rung = D->r->id;
            row.shape = *s;
            snprintf(status, sizeof status, "skipped: too slow (one run took %.1f s at %s)", slow_s, slow_at);
            row.status = status;
            report_label(&items[i].c, label, sizeof label);
            row.extra = label;
            report_emit(&D->out, &row);
            free(items[i].c.seqlens);
            continue;
        }
        double first_ms;
        int st = run_one(D, &items[i].c, NULL, &first_ms);
        if (st == ST_FAIL) failed++;
        if (first_ms > D->opt.too_slow_s * 1000.0 && items[i].flops < slow_flops) {
            slow_flops = items[i].flops;
            slow_s = first_ms * 1e-3;
            snprintf(slow_at, sizeof slow_at, "B=%d N=%d M=%d d=%d causal=%d", s->B, s->N, s->M, s->d, s->causal);
        }
        free(items[i].c.seqlens);
    }
    free(items);
    return failed ? EXIT_FAIL : EXIT_OK;
}
