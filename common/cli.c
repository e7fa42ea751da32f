/* Command line and sweep-file parsing. Every bad value gets one line that names the argument and
 * says what is allowed; nothing here touches the GPU, so the checks run (and are tested) anywhere. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

#define MAX_DIM 1000000000L   /* sizes beyond this are typos, not shapes */
#define MAX_HEAD_DIM 2048     /* the reference's row buffer */
/* a sweep line's model=NAME: a label that the CSV's extra field carries as it is */
#define MODEL_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+"
#define KV_BLOCK_STEP 64      /* --kv-block: whole 64-key tiles, as rung 06 loads them */
#define KV_BLOCK_MAX 1024

static int errf(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

void cli_defaults(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->shape.B = 2;
    o->shape.Hq = 16;
    o->shape.Hkv = 16;
    o->shape.N = 1024;
    o->shape.M = 1024;
    o->shape.d = 64;
    o->shape.dtype = ATTN_F16;
    o->seed = 1234;
    o->warmups = 3;
    o->check = 1;
    o->check_budget = 2e9;
    o->too_slow_s = 10.0;
}

static int parse_long(const char *flag, const char *v, long lo, long hi, long *out, char *err, size_t n)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno)
        return errf(err, n, "%s: expected an integer, got '%s'", flag, v ? v : "");
    if (x < lo || x > hi)
        return errf(err, n, "%s: %ld is out of range; allowed %ld..%ld", flag, x, lo, hi);
    *out = x;
    return 0;
}

static int parse_int(const char *flag, const char *v, long lo, long hi, int *out, char *err, size_t n)
{
    long x;
    if (parse_long(flag, v, lo, hi, &x, err, n)) return -1;
    *out = (int)x;
    return 0;
}

static int parse_double(const char *flag, const char *v, double *out, char *err, size_t n)
{
    char *end;
    double x = v ? strtod(v, &end) : 0.0;
    if (!v || !*v || *end || !isfinite(x) || x <= 0.0)
        return errf(err, n, "%s: expected a positive number, got '%s'", flag, v ? v : "");
    *out = x;
    return 0;
}

/* "12,7,4096" -> malloc'd array; count returned in *n. */
static int parse_list(const char *flag, const char *v, int **out, int *count, char *err, size_t n)
{
    int cap = 16, k = 0;
    int *a = malloc(sizeof(int) * cap);
    const char *p = v;
    while (p && *p) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 1 || x > MAX_DIM || (*end && *end != ',') || (*end == ',' && !end[1])) {
            free(a);
            return errf(err, n, "%s: expected a comma-separated list of positive integers, got '%s'", flag, v);
        }
        if (k == cap) a = realloc(a, sizeof(int) * (cap *= 2));
        a[k++] = (int)x;
        p = *end ? end + 1 : end;
    }
    if (k == 0) {
        free(a);
        return errf(err, n, "%s: expected a comma-separated list of positive integers, got '%s'", flag, v ? v : "");
    }
    *out = a;
    *count = k;
    return 0;
}

/* --kv-block K: K a multiple of 64 in 64..1024. */
static int parse_kv_block(const char *v, int *out, char *err, size_t n)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < KV_BLOCK_STEP || x > KV_BLOCK_MAX || x % KV_BLOCK_STEP)
        return errf(err, n, "--kv-block: expected a multiple of %d from %d to %d, got '%s'", KV_BLOCK_STEP,
                    KV_BLOCK_STEP, KV_BLOCK_MAX, v ? v : "");
    *out = (int)x;
    return 0;
}

/* --page-size P (and a sweep line's page=P): 0 (contiguous) or a multiple of ATTN_PAGE_STEP up to
 * ATTN_PAGE_MAX (attn.h). */
#define PAGE_SIZES "0 (contiguous) or a multiple of 16 from 16 to 256"
_Static_assert(ATTN_PAGE_STEP == 16 && ATTN_PAGE_MAX == 256, "PAGE_SIZES spells them out");
static int page_size_ok(long x) { return x == 0 || (x >= ATTN_PAGE_STEP && x <= ATTN_PAGE_MAX && x % ATTN_PAGE_STEP == 0); }

static int parse_page_size(const char *v, int *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || !page_size_ok(x)) return -1;
    *out = (int)x;
    return 0;
}

static const char *USAGE =
    "shape:    --b B --hq HQ --hkv HKV --h H (sets both) --n N --m M --d D --causal\n"
    "          --dtype f16|bf16 --scale S --seqlens L1,L2,.. --seqlen-dist equal|uniform|longtail\n"
    "inputs:   --seed S --inputs normal|outlier --load DIR (q.npy k.npy v.npy)\n"
    "run:      --variant ID (default: the rung's own, the last --list prints)\n"
    "          --warmups W --runs R --no-check --check-budget MACS\n"
    "          --no-time (tests: check, and check a second launch gives the same bits; no timing)\n"
    "          --profile (as --no-time, the second launch alone between cudaProfilerStart and\n"
    "          cudaProfilerStop: for ncu --profile-from-start off, as make profile runs it)\n"
    "          --flush write|write+read (the L2 flush before every timed launch; default write+read:\n"
    "          the read-back leaves the L2 clean, so no kernel pays for the flush's dirty lines)\n"
    "rung 06:  --planner NAME (the split planner)\n"
    "          --kv-block K (keys per KV block, the planner's unit: a multiple of 64 from 64 to 1024;\n"
    "          default: the rung's own)\n"
    "          --page-size P (a paged KV cache: K and V in pages of P keys, a multiple of 16 from 16\n"
    "          to 256, laid out in a random order and read through a block table; default 0: contiguous)\n"
    "output:   --csv FILE --save DIR (o.npy lse.npy) --quiet\n"
    "modes:    --sweep FILE [--too-slow S] --ceilings --list --probe --help\n"
    "          --read-floor (instead of the rung: time one kernel that only reads K and V)";

int cli_parse(int argc, char **argv, cli_opts *o, char *err, size_t n)
{
    int nseq = 0, have_n = 0, have_m = 0;
    for (int a = 1; a < argc; a++) {
        const char *f = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        int takes = 1;
        attn_shape *s = &o->shape;
        if (!strcmp(f, "--b")) { if (parse_int(f, v, 1, MAX_DIM, &s->B, err, n)) return -1; }
        else if (!strcmp(f, "--hq")) { if (parse_int(f, v, 1, MAX_DIM, &s->Hq, err, n)) return -1; }
        else if (!strcmp(f, "--hkv")) { if (parse_int(f, v, 1, MAX_DIM, &s->Hkv, err, n)) return -1; }
        else if (!strcmp(f, "--h")) {
            if (parse_int(f, v, 1, MAX_DIM, &s->Hq, err, n)) return -1;
            s->Hkv = s->Hq;
        }
        else if (!strcmp(f, "--n")) { if (parse_int(f, v, 1, MAX_DIM, &s->N, err, n)) return -1; have_n = 1; }
        else if (!strcmp(f, "--m")) { if (parse_int(f, v, 1, MAX_DIM, &s->M, err, n)) return -1; have_m = 1; }
        else if (!strcmp(f, "--d")) { if (parse_int(f, v, 1, MAX_HEAD_DIM, &s->d, err, n)) return -1; }
        else if (!strcmp(f, "--causal")) { s->causal = 1; takes = 0; }
        else if (!strcmp(f, "--dtype")) {
            if (v && !strcmp(v, "f16")) s->dtype = ATTN_F16;
            else if (v && !strcmp(v, "bf16")) s->dtype = ATTN_BF16;
            else return errf(err, n, "--dtype: expected f16 or bf16, got '%s'", v ? v : "");
        }
        else if (!strcmp(f, "--scale")) {
            double x;
            if (parse_double(f, v, &x, err, n)) return -1;
            s->scale = (float)x;
            o->have_scale = 1;
        }
        else if (!strcmp(f, "--seqlens")) {
            free(o->seqlens);
            o->seqlens = NULL;
            if (parse_list(f, v, &o->seqlens, &nseq, err, n)) return -1;
        }
        else if (!strcmp(f, "--seqlen-dist")) {
            int tmp;
            if (!v || make_seqlens(v, 1, 1, 0, &tmp) != 0)
                return errf(err, n, "--seqlen-dist: expected equal, uniform or longtail, got '%s'", v ? v : "");
            snprintf(o->seqlen_dist, sizeof o->seqlen_dist, "%s", v);
        }
        else if (!strcmp(f, "--seed")) {
            long x;
            if (parse_long(f, v, 0, 0x7fffffffL, &x, err, n)) return -1;
            o->seed = (uint64_t)x;
        }
        else if (!strcmp(f, "--inputs")) {
            if (v && !strcmp(v, "normal")) o->input_mode = INPUT_NORMAL;
            else if (v && !strcmp(v, "outlier")) o->input_mode = INPUT_OUTLIER;
            else return errf(err, n, "--inputs: expected normal or outlier, got '%s'", v ? v : "");
        }
        else if (!strcmp(f, "--warmups")) { if (parse_int(f, v, 0, 1000, &o->warmups, err, n)) return -1; }
        else if (!strcmp(f, "--runs")) { if (parse_int(f, v, 1, 100000, &o->runs, err, n)) return -1; }
        else if (!strcmp(f, "--no-check")) { o->check = 0; takes = 0; }
        else if (!strcmp(f, "--check-budget")) { if (parse_double(f, v, &o->check_budget, err, n)) return -1; }
        else if (!strcmp(f, "--too-slow")) { if (parse_double(f, v, &o->too_slow_s, err, n)) return -1; }
        else if (!strcmp(f, "--kv-block")) { if (parse_kv_block(v, &o->kv_block, err, n)) return -1; }
        else if (!strcmp(f, "--page-size")) {
            if (parse_page_size(v, &s->page_size))
                return errf(err, n, "--page-size: expected " PAGE_SIZES ", got '%s'", v ? v : "");
        }
        else if (!strcmp(f, "--flush")) {
            if (v && !strcmp(v, "write+read")) o->flush = FLUSH_WRITE_READ;
            else if (v && !strcmp(v, "write")) o->flush = FLUSH_WRITE;
            else return errf(err, n, "--flush: expected write or write+read, got '%s'", v ? v : "");
        }
        else if (!strcmp(f, "--variant") || !strcmp(f, "--csv") || !strcmp(f, "--load") ||
                 !strcmp(f, "--save") || !strcmp(f, "--sweep") || !strcmp(f, "--planner")) {
            if (!v || !*v || v[0] == '-')
                return errf(err, n, "%s: expected a value", f);
            const char **dst = !strcmp(f, "--variant") ? &o->variant : !strcmp(f, "--csv") ? &o->csv
                             : !strcmp(f, "--load") ? &o->load : !strcmp(f, "--save") ? &o->save
                             : !strcmp(f, "--sweep") ? &o->sweep : &o->planner;
            *dst = v;
        }
        else if (!strcmp(f, "--no-time")) { o->no_time = 1; takes = 0; }
        else if (!strcmp(f, "--profile")) { o->profile = 1; takes = 0; }
        else if (!strcmp(f, "--list")) { o->list = 1; takes = 0; }
        else if (!strcmp(f, "--probe")) { o->probe = 1; takes = 0; }
        else if (!strcmp(f, "--ceilings")) { o->ceilings = 1; takes = 0; }
        else if (!strcmp(f, "--read-floor")) { o->read_floor = 1; takes = 0; }
        else if (!strcmp(f, "--quiet")) { o->quiet = 1; takes = 0; }
        else if (!strcmp(f, "--help") || !strcmp(f, "-h")) { errf(err, n, "%s", USAGE); return 1; }
        else return errf(err, n, "unknown argument '%s' (--help lists the arguments)", f);
        a += takes;
    }
    /* N alone means self-attention (M = N); M alone keeps the default N. */
    if (have_n && !have_m) o->shape.M = o->shape.N;
    if (!o->have_scale) o->shape.scale = 1.0f / sqrtf((float)o->shape.d);
    if (o->seqlens && nseq != o->shape.B)
        return errf(err, n, "--seqlens: %d lengths given for --b %d; give one per request", nseq, o->shape.B);
    if (o->seqlens && o->seqlen_dist[0])
        return errf(err, n, "--seqlens and --seqlen-dist: give one or the other");
    if (o->seqlen_dist[0]) {
        o->seqlens = malloc(sizeof(int) * o->shape.B);
        make_seqlens(o->seqlen_dist, o->shape.B, o->shape.M, o->seed, o->seqlens);
    }
    o->shape.seqlens_k = o->seqlens;
    return shape_validate(&o->shape, err, n);
}

int shape_validate(const attn_shape *s, char *err, size_t n)
{
    if (s->B < 1 || s->Hq < 1 || s->Hkv < 1 || s->N < 1 || s->M < 1 || s->d < 1)
        return errf(err, n, "shape: every size must be >= 1 (B=%d Hq=%d Hkv=%d N=%d M=%d d=%d)",
                    s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    if (s->Hq % s->Hkv)
        return errf(err, n, "--hq %d --hkv %d: Hq must be a multiple of Hkv (MHA, GQA or MQA)", s->Hq, s->Hkv);
    if (s->d > MAX_HEAD_DIM)
        return errf(err, n, "--d %d: head dims up to %d", s->d, MAX_HEAD_DIM);
    double elems = (double)s->B * s->Hq * s->N * s->d, kv = (double)s->B * s->Hkv * s->M * s->d;
    if (elems > 4e11 || kv > 4e11)
        return errf(err, n, "shape: %.3g elements per tensor is beyond any GPU", elems > kv ? elems : kv);
    if (!page_size_ok(s->page_size))
        return errf(err, n, "page size %d: expected " PAGE_SIZES, s->page_size);
    if (s->seqlens_k)
        for (int b = 0; b < s->B; b++)
            if (s->seqlens_k[b] < 1 || s->seqlens_k[b] > s->M)
                return errf(err, n, "--seqlens: request %d has length %d; each must be in 1..M (%d)",
                            b, s->seqlens_k[b], s->M);
    return 0;
}

int sweep_line(const char *line, const cli_opts *base, run_case *c, char *err, size_t n)
{
    char buf[SWEEP_LINE_MAX];
    memset(c, 0, sizeof *c);
    if ((size_t)snprintf(buf, sizeof buf, "%s", line) >= sizeof buf)
        return errf(err, n, "sweep line: longer than %d characters", SWEEP_LINE_MAX - 1);
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char *tok[32];
    int nt = 0;
    for (char *t = strtok(buf, " \t\r\n"); t && nt < 32; t = strtok(NULL, " \t\r\n")) tok[nt++] = t;
    if (nt == 0) return 0;
    if (nt < 7) return errf(err, n, "sweep line '%s': expected B Hq Hkv N M d causal [key=value ...]", line);

    attn_shape *s = &c->shape;
    *s = base->shape;
    s->seqlens_k = NULL;
    c->input_mode = base->input_mode;
    static const char *names[7] = {"B", "Hq", "Hkv", "N", "M", "d", "causal"};
    int *fields[7] = {&s->B, &s->Hq, &s->Hkv, &s->N, &s->M, &s->d, &s->causal};
    for (int f = 0; f < 7; f++)
        if (parse_int(names[f], tok[f], f == 6 ? 0 : 1, f == 6 ? 1 : MAX_DIM, fields[f], err, n)) return -1;
    s->scale = 1.0f / sqrtf((float)s->d);

    const char *dist = NULL;
    int nseq = 0;
    for (int t = 7; t < nt; t++) {
        char *eq = strchr(tok[t], '=');
        if (!eq) return errf(err, n, "sweep line: '%s' is not key=value", tok[t]);
        *eq = 0;
        const char *k = tok[t], *v = eq + 1;
        if (!strcmp(k, "inputs")) {
            if (!strcmp(v, "normal")) c->input_mode = INPUT_NORMAL;
            else if (!strcmp(v, "outlier")) c->input_mode = INPUT_OUTLIER;
            else return errf(err, n, "sweep line: inputs=%s; expected normal or outlier", v);
        } else if (!strcmp(k, "dtype")) {
            if (!strcmp(v, "f16")) s->dtype = ATTN_F16;
            else if (!strcmp(v, "bf16")) s->dtype = ATTN_BF16;
            else return errf(err, n, "sweep line: dtype=%s; expected f16 or bf16", v);
        } else if (!strcmp(k, "seqlens")) {
            free(c->seqlens);
            c->seqlens = NULL;
            if (parse_list("seqlens", v, &c->seqlens, &nseq, err, n)) return -1;
        } else if (!strcmp(k, "dist")) {
            dist = v;
        } else if (!strcmp(k, "page")) {
            if (parse_page_size(v, &s->page_size))
                return errf(err, n, "sweep line: page=%s; expected " PAGE_SIZES, v);
        } else if (!strcmp(k, "model")) {
            /* a label carried to the CSV's extra field (model=NAME;), which ';' and ',' would break */
            size_t len = strlen(v);
            if (len == 0 || len >= sizeof c->model || strspn(v, MODEL_CHARS) != len)
                return errf(err, n, "sweep line: model=%s; expected a name of letters, digits and . _ - + "
                            "(up to %d characters)", v, (int)sizeof c->model - 1);
            snprintf(c->model, sizeof c->model, "%s", v);
        } else if (!strcmp(k, "expect")) {
            /* read by the test runner, not here */
        } else {
            return errf(err, n, "sweep line: unknown key '%s' (inputs, dtype, seqlens, dist, page, model, expect)", k);
        }
    }
    if (c->seqlens && nseq != s->B)
        return errf(err, n, "sweep line: %d seqlens for B=%d", nseq, s->B);
    if (dist) {
        free(c->seqlens);
        c->seqlens = malloc(sizeof(int) * s->B);
        if (make_seqlens(dist, s->B, s->M, base->seed, c->seqlens))
            return errf(err, n, "sweep line: dist=%s; expected equal, uniform or longtail", dist);
        snprintf(c->dist, sizeof c->dist, "%s", dist);   /* a known name: short */
    }
    s->seqlens_k = c->seqlens;
    return shape_validate(s, err, n) ? -1 : 1;
}
