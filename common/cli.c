/* Command line and sweep-file parsing. Every bad value gets one line that names the argument and
 * says what is allowed; nothing here touches the GPU, so the checks run (and are tested) anywhere. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

#define MAX_DIM 1000000000L   /* sizes beyond this are typos, not shapes */
#define MAX_HEAD_DIM 2048     /* the reference's row buffer */
/* a sweep line's model=NAME: a label that the CSV's extra field carries as it is */
#define MODEL_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+"
#define KV_BLOCK_STEP 64      /* --kv-block: whole 64-key tiles, as rung 06 loads them */
#define KV_BLOCK_MAX 1024
/* per-request KV lengths (--seqlens, --seqlen-dist, a sweep line's seqlens= and dist=): a serving
 * batch, not a typo of a billion requests whose lengths would take gigabytes to draw */
#define MAX_REQUESTS 1048576

/* The one line of a refusal: a value echoed in it (an argument, a field of a file) may hold any
 * byte, so control bytes are written as \xNN, never as a line break; and it may be of any length,
 * so the line stops near 1 KB, ending in "..." where it was cut. */
static int verrf(char *err, size_t n, const char *fmt, va_list ap)
{
    char raw[1024];
    int len = vsnprintf(raw, sizeof raw, fmt, ap);
    if (len >= (int)sizeof raw) memcpy(raw + sizeof raw - 4, "...", 4);
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p && k + 5 < n; p++) {
        if (*p < 0x20 || *p == 0x7f) k += snprintf(err + k, n - k, "\\x%02x", *p);
        else err[k++] = (char)*p;
    }
    if (n) err[k < n ? k : n - 1] = 0;
    return -1;
}

static int errf(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

int cli_message(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrf(out, n, fmt, ap);
    va_end(ap);
    return -1;
}

void cli_defaults(cli_opts *o) { cli_defaults_for(o, NULL); }

void cli_defaults_for(cli_opts *o, const rung_cli *own)
{
    memset(o, 0, sizeof *o);
    o->own = own;
    o->shape.B = own ? own->B : 2;
    o->shape.Hq = own ? own->Hq : 16;
    o->shape.Hkv = own ? own->Hkv : 16;
    o->shape.N = own ? own->N : 1024;
    o->shape.M = own ? own->M : 1024;
    o->shape.d = own ? own->d : 64;
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

/* --scale S: positive, and a normal float once converted (the kernels take a float): 1e-300 would
 * become 0 and 1e300 inf, each a softmax of nothing but NaN or a constant. The range is checked on
 * the double, as converting a double beyond float's range is undefined in C. */
static int parse_scale(const char *v, float *out, char *err, size_t n)
{
    double x;
    if (parse_double("--scale", v, &x, err, n)) return -1;
    if (x < FLT_MIN || x > FLT_MAX || !isnormal((float)x))
        return errf(err, n, "--scale: %s is outside float's normal range (%.3g to %.3g)", v, (double)FLT_MIN,
                    (double)FLT_MAX);
    *out = (float)x;
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

/* The rung's planner names, "fa, greedy, balanced, auto" */
static const char *planner_list(const rung_cli *own, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; own && own->planners && own->planners[i] && k < n; i++)
        k += snprintf(out + k, n - k, "%s%s", i ? ", " : "", own->planners[i]);
    return out;
}

/* another shape to try, for a rung that names none of its own (rung_cli.example): a long causal prefill */
#define EXAMPLE_SHAPE "--b 1 --h 16 --n 8192 --d 128 --causal"

static int self_attention_default(const cli_opts *o) { return !o->own || o->own->N == o->own->M; }

void cli_usage(const cli_opts *o, const char *prog, char *out, size_t n)
{
    const attn_shape *s = &o->shape;
    const rung_cli *own = o->own;
    char pl[256];
    size_t k = 0;
#define PUT(...) (k += (size_t)snprintf(k < n ? out + k : NULL, k < n ? n - k : 0, __VA_ARGS__))
    PUT("usage: %s [flags]   (no flags: the shape below, every check, timed; exit 0 ok, 1 a check failed,\n"
        "          2 bad arguments or a failed write of --save or --csv, 3 the rung refuses the shape,\n"
        "          4 no CUDA device; --help wins over any other flag)\n", prog);
    PUT("shape:    --b B --hq HQ --hkv HKV --h H --n N --m M --d D --causal (--h: both head counts, but an\n"
        "          --hq or --hkv wins over it wherever it stands)\n"
        "          default --b %d --hq %d --hkv %d --n %d --m %d --d %d, not causal; --n alone %s\n",
        s->B, s->Hq, s->Hkv, s->N, s->M, s->d, self_attention_default(o) ? "sets --m too" : "keeps --m");
    PUT("          --dtype f16|bf16|e4m3 (default f16) --scale S (default 1/sqrt(d))\n"
        "          --seqlens L1,L2,.. (one KV length per request, each <= M) or --seqlen-dist equal|uniform|longtail\n"
        "          --page-size P (a paged KV cache: pages of P keys, a multiple of 16 from 16 to 256, in a\n"
        "          random order behind a block table; default 0: contiguous; rungs other than 06 refuse it)\n");
    PUT("example:  %s\n", own && own->example ? own->example : EXAMPLE_SHAPE);
    PUT("inputs:   --seed S (default %llu) --inputs normal|outlier|sparse-outlier|nonfinite-q|nonfinite-k|\n"
        "          nonfinite-v (default normal; outlier: scores in the hundreds, which break an unsafe softmax;\n"
        "          sparse-outlier: 0.1%% of the entries of Q, K and V from N(0, 10^2), FlashAttention-3's FP8\n"
        "          accuracy test; nonfinite-x: a NaN and an Inf planted in x, which must reach the output as\n"
        "          the float64 reference says)\n"
        "          --load DIR: q.npy, k.npy, v.npy as numpy saves them (np.save): float16 or float32, C order,\n"
        "          4-D, q [B, Hq, N, d], k and v [B, Hkv, M, d]; the files give the shape, so no shape flags\n"
        "          and no --seqlens with it\n", (unsigned long long)o->seed);
    PUT("run:      --variant ID (default: the rung's own, the last --list prints)\n"
        "          --warmups W (default %d) --runs R (default: at least 20) --no-check\n"
        "          --warm-ms MS (0 to %d; default 0: off) warm up until MS ms of launches have run (at most\n"
        "          %d launches): each row is then timed at the GPU's sustained clock (under its power cap),\n"
        "          not at whatever clock the row before left it\n"
        "          --check-budget MACS (default %.0e: larger shapes check a sample of rows)\n"
        "          --no-time (tests: check, and check a second launch gives the same bits; no timing)\n"
        "          --dtype e4m3: float16 inputs and O, computed in float8 e4m3 by an FP8 step (rung 07's\n"
        "          07g), which quantizes Q, K, V itself; with it --fp8-scale block|tensor (one scale per\n"
        "          block of rows, or per tensor) and --fp8-hadamard on|off (Q and K through a random\n"
        "          Hadamard map or not; default block, on)\n"
        "          --profile (as --no-time, the second launch alone between cudaProfilerStart and\n"
        "          cudaProfilerStop: for ncu --profile-from-start off, as make profile runs it)\n"
        "          --flush write|write+read (the L2 flush before every timed launch; default write+read:\n"
        "          the read-back leaves the L2 clean, so no kernel pays for the flush's dirty lines)\n",
        o->warmups, BENCH_WARM_MS_MAX, BENCH_WARMUPS_MAX, o->check_budget);
    if (own && (own->planners || own->kv_block_default)) {
        PUT("this rung's own flags:\n");
        if (own->planners)
            PUT("          --planner NAME (the split planner): %s (default %s)\n", planner_list(own, pl, sizeof pl),
                own->planner_default ? own->planner_default : "the first");
        if (own->kv_block_default)
            PUT("          --kv-block K (keys per KV block, the planner's unit): a multiple of %d from %d to %d\n"
                "          (default %d)\n", KV_BLOCK_STEP, KV_BLOCK_STEP, KV_BLOCK_MAX, own->kv_block_default);
    } else {
        PUT("this rung's own flags: none (--planner and --kv-block are rung 06's)\n");
    }
    PUT("output:   --csv FILE (append a CSV row; its folder must exist) --save DIR (made if missing: o.npy\n"
        "          [B, Hq, N, d], lse.npy [B, Hq, N]) --quiet; both checked before the GPU runs, and written\n"
        "          whole or not at all: a failed write leaves the old files as they were, and exits 2\n"
        "          --no-header (the rows without the table header: make stage prints one for all its variants)\n"
        "modes:    --sweep FILE (a shape a line: B Hq Hkv N M d causal [key=value ...]; see sweeps/)\n"
        "          --check-sweep FILE (no GPU: each line as --sweep reads it, one line out per shape line,\n"
        "          'ok LINE' or 'bad LINE: reason'; exit 0 if every line is ok, else 2)\n"
        "          --too-slow S (default %g: a sweep skips shapes larger than one that took longer)\n"
        "          --ceilings --list --probe --help\n"
        "          --pass (prints forward or backward: which pass this binary's variants compute; the\n"
        "          forward sweeps and the tour run the forward ones, the backward sweep the others)\n"
        "          --read-floor (instead of the rung: time one kernel that only reads K and V)", o->too_slow_s);
    if (o->backward)
        PUT("\nthis rung is a backward pass: inputs Q, K, V and dO (seeded, or --load's do.npy [B, Hq, N, d]\n"
            "          beside q, k, v); the forward's O and LSE made untimed; outputs dQ, dK, dV, checked and\n"
            "          --save'd as dq.npy, dk.npy, dv.npy; TFLOP/s counts 2.5x the forward's FLOPs");
#undef PUT
}

/* "--b": its index in the space-separated list, or -1 */
static int flag_index(const char *list, const char *f)
{
    size_t len = strlen(f);
    int i = 0;
    for (const char *p = list; *p; i++) {
        size_t w = strcspn(p, " ");
        if (w == len && !strncmp(p, f, len)) return i;
        p += w;
        while (*p == ' ') p++;
    }
    return -1;
}
#define SHAPE_FLAGS "--b --hq --hkv --h --n --m --d"

/* --help anywhere wins over everything else on the line, also over a bad value before it: the
 * defaults' text, whatever came before */
static int help_asked(int argc, char **argv, cli_opts *o, char *err, size_t n)
{
    for (int a = 1; a < argc; a++)
        if (argv[a] && (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))) {
            cli_opts d;
            cli_defaults_for(&d, o->own);
            d.backward = o->backward;
            cli_usage(&d, argc > 0 && argv[0] ? argv[0] : "rung", err, n);
            return 1;
        }
    return 0;
}

/* "--hq 8" or "--h 8" or "the default 16": what set a head count, for a message */
static const char *heads_from(const char *flag, int given, int h_given, int x, char *out, size_t n)
{
    if (given) snprintf(out, n, "%s %d", flag, x);
    else if (h_given) snprintf(out, n, "--h %d", x);
    else snprintf(out, n, "%s %d (the default)", flag, x);
    return out;
}

int cli_parse(int argc, char **argv, cli_opts *o, char *err, size_t n)
{
    int nseq = 0, have_n = 0, have_m = 0;
    /* --h H is the default of both --hq and --hkv: an --hq or --hkv given anywhere on the line wins,
     * so that the order of the flags does not matter (--hq 8 --hkv 3 --h 8 is --h 8 --hkv 3) */
    int h = 0, hq = 0, hkv = 0;
    const char *first_shape_flag = NULL, *fp8_flag = NULL;
    if (help_asked(argc, argv, o, err, n)) return 1;
    for (int a = 1; a < argc; a++) {
        const char *f = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        int takes = 1;
        attn_shape *s = &o->shape;
        int shape_flag = flag_index(SHAPE_FLAGS, f);
        if (shape_flag >= 0) {
            if (!first_shape_flag) first_shape_flag = f;
            o->shape_flags |= 1 << shape_flag;
        }
        if (!strcmp(f, "--b")) { if (parse_int(f, v, 1, MAX_DIM, &s->B, err, n)) return -1; }
        else if (!strcmp(f, "--hq")) { if (parse_int(f, v, 1, MAX_DIM, &hq, err, n)) return -1; }
        else if (!strcmp(f, "--hkv")) { if (parse_int(f, v, 1, MAX_DIM, &hkv, err, n)) return -1; }
        else if (!strcmp(f, "--h")) { if (parse_int(f, v, 1, MAX_DIM, &h, err, n)) return -1; }
        else if (!strcmp(f, "--n")) { if (parse_int(f, v, 1, MAX_DIM, &s->N, err, n)) return -1; have_n = 1; }
        else if (!strcmp(f, "--m")) { if (parse_int(f, v, 1, MAX_DIM, &s->M, err, n)) return -1; have_m = 1; }
        else if (!strcmp(f, "--d")) { if (parse_int(f, v, 1, MAX_HEAD_DIM, &s->d, err, n)) return -1; }
        else if (!strcmp(f, "--causal")) { s->causal = 1; takes = 0; }
        else if (!strcmp(f, "--dtype")) {
            if (v && !strcmp(v, "f16")) s->dtype = ATTN_F16;
            else if (v && !strcmp(v, "bf16")) s->dtype = ATTN_BF16;
            else if (v && !strcmp(v, "e4m3")) s->dtype = ATTN_E4M3;
            else return errf(err, n, "--dtype: expected f16, bf16 or e4m3, got '%s'", v ? v : "");
        }
        else if (!strcmp(f, "--fp8-scale")) {
            if (v && !strcmp(v, "block")) o->fp8_per_tensor = 0;
            else if (v && !strcmp(v, "tensor")) o->fp8_per_tensor = 1;
            else return errf(err, n, "--fp8-scale: expected block or tensor, got '%s'", v ? v : "");
            fp8_flag = f;
        }
        else if (!strcmp(f, "--fp8-hadamard")) {
            if (v && !strcmp(v, "on")) o->fp8_no_hadamard = 0;
            else if (v && !strcmp(v, "off")) o->fp8_no_hadamard = 1;
            else return errf(err, n, "--fp8-hadamard: expected on or off, got '%s'", v ? v : "");
            fp8_flag = f;
        }
        else if (!strcmp(f, "--scale")) {
            if (parse_scale(v, &s->scale, err, n)) return -1;
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
            const int m = input_mode_parse(v);
            if (m < 0) return errf(err, n, "--inputs: expected " INPUT_NAMES ", got '%s'", v ? v : "");
            o->input_mode = m;
        }
        else if (!strcmp(f, "--warmups")) { if (parse_int(f, v, 0, BENCH_WARMUPS_MAX, &o->warmups, err, n)) return -1; }
        else if (!strcmp(f, "--warm-ms")) { if (parse_int(f, v, 0, BENCH_WARM_MS_MAX, &o->warm_ms, err, n)) return -1; }
        else if (!strcmp(f, "--runs")) { if (parse_int(f, v, 1, 100000, &o->runs, err, n)) return -1; }
        else if (!strcmp(f, "--no-check")) { o->check = 0; takes = 0; }
        else if (!strcmp(f, "--check-budget")) { if (parse_double(f, v, &o->check_budget, err, n)) return -1; }
        else if (!strcmp(f, "--too-slow")) { if (parse_double(f, v, &o->too_slow_s, err, n)) return -1; }
        else if (!strcmp(f, "--kv-block")) {
            if (!o->own || !o->own->kv_block_default)
                return errf(err, n, "--kv-block: this rung has no KV blocks to size (it is rung 06's flag)");
            if (parse_kv_block(v, &o->kv_block, err, n)) return -1;
        }
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
                 !strcmp(f, "--save") || !strcmp(f, "--sweep") || !strcmp(f, "--planner") ||
                 !strcmp(f, "--check-sweep")) {
            if (!v || !*v || v[0] == '-')
                return errf(err, n, "%s: expected a value", f);
            const char **dst = !strcmp(f, "--variant") ? &o->variant : !strcmp(f, "--csv") ? &o->csv
                             : !strcmp(f, "--load") ? &o->load : !strcmp(f, "--save") ? &o->save
                             : !strcmp(f, "--sweep") ? &o->sweep : !strcmp(f, "--check-sweep") ? &o->check_sweep
                             : &o->planner;
            *dst = v;
            if (dst == &o->planner) {
                char pl[256];
                if (!o->own || !o->own->planners)
                    return errf(err, n, "--planner: this rung has no split planner (it is rung 06's flag)");
                int k = 0;
                while (o->own->planners[k] && strcmp(o->own->planners[k], v)) k++;
                if (!o->own->planners[k])
                    return errf(err, n, "--planner: expected one of %s, got '%s'", planner_list(o->own, pl, sizeof pl), v);
            }
        }
        else if (!strcmp(f, "--no-time")) { o->no_time = 1; takes = 0; }
        else if (!strcmp(f, "--profile")) { o->profile = 1; takes = 0; }
        else if (!strcmp(f, "--list")) { o->list = 1; takes = 0; }
        else if (!strcmp(f, "--probe")) { o->probe = 1; takes = 0; }
        else if (!strcmp(f, "--pass")) { o->pass = 1; takes = 0; }
        else if (!strcmp(f, "--ceilings")) { o->ceilings = 1; takes = 0; }
        else if (!strcmp(f, "--read-floor")) { o->read_floor = 1; takes = 0; }
        else if (!strcmp(f, "--quiet")) { o->quiet = 1; takes = 0; }
        else if (!strcmp(f, "--no-header")) { o->no_header = 1; takes = 0; }
        else return errf(err, n, "unknown argument '%s' (--help lists the arguments)", f);
        a += takes;
    }
    /* --load: the files give the shape (driver.c), so a shape flag would be ignored: refuse it */
    if (o->load && first_shape_flag)
        return errf(err, n, "--load: the shape comes from q.npy, k.npy and v.npy; drop %s (or drop --load)",
                    first_shape_flag);
    if (o->load && (o->seqlens || o->seqlen_dist[0]))
        return errf(err, n, "--load: per-request KV lengths (--seqlens, --seqlen-dist) cannot be given with --load");
    if (o->load && o->sweep)
        return errf(err, n, "--load and --sweep: give one or the other (a sweep makes its own inputs)");
    if (o->check_sweep && (o->sweep || o->load))
        return errf(err, n, "--check-sweep and %s: give one or the other (--check-sweep only reads the file)",
                    o->sweep ? "--sweep" : "--load");
    /* the head counts, whatever the order of --h, --hq and --hkv */
    if (hq || h) o->shape.Hq = hq ? hq : h;
    if (hkv || h) o->shape.Hkv = hkv ? hkv : h;
    if (o->shape.Hq % o->shape.Hkv) {
        char a[48], b[48];
        return errf(err, n, "%s %s: Hq must be a multiple of Hkv (MHA, GQA or MQA)",
                    heads_from("--hq", hq != 0, h != 0, o->shape.Hq, a, sizeof a),
                    heads_from("--hkv", hkv != 0, h != 0, o->shape.Hkv, b, sizeof b));
    }
    /* the FP8 step's quantization: with a sweep, for its dtype=e4m3 lines */
    if (fp8_flag && o->shape.dtype != ATTN_E4M3 && !o->sweep)
        return errf(err, n, "%s: it sets how --dtype e4m3 quantizes Q, K and V; give --dtype e4m3 (or a --sweep "
                    "with dtype=e4m3 lines)", fp8_flag);
    /* N alone means self-attention (M = N) where the default shape is self-attention; M alone keeps
     * the default N. (Rung 06's default is a decode step: there --n alone keeps its M keys.) */
    if (have_n && !have_m && self_attention_default(o)) o->shape.M = o->shape.N;
    if (!o->have_scale) o->shape.scale = 1.0f / sqrtf((float)o->shape.d);
    if ((o->seqlens || o->seqlen_dist[0]) && o->shape.B > MAX_REQUESTS)
        return errf(err, n, "--b %d: per-request KV lengths are for up to %d requests", o->shape.B, MAX_REQUESTS);
    if (o->seqlens && nseq != o->shape.B)
        return errf(err, n, "--seqlens: %d lengths given for --b %d; give one per request", nseq, o->shape.B);
    if (o->seqlens && o->seqlen_dist[0])
        return errf(err, n, "--seqlens and --seqlen-dist: give one or the other");
    for (int b = 0; o->seqlens && b < nseq; b++)
        if (o->seqlens[b] > o->shape.M)
            return errf(err, n, "--seqlens: request %d has length %d; each must be in 1..M (%d)", b, o->seqlens[b],
                        o->shape.M);
    if (o->seqlen_dist[0]) {
        o->seqlens = malloc(sizeof(int) * o->shape.B);
        if (!o->seqlens) return errf(err, n, "--seqlen-dist: out of memory for %d lengths", o->shape.B);
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
        return errf(err, n, "Hq %d, Hkv %d: Hq must be a multiple of Hkv (MHA, GQA or MQA)", s->Hq, s->Hkv);
    if (s->d > MAX_HEAD_DIM)
        return errf(err, n, "head dim %d: head dims up to %d", s->d, MAX_HEAD_DIM);
    double elems = (double)s->B * s->Hq * s->N * s->d, kv = (double)s->B * s->Hkv * s->M * s->d;
    if (elems > 4e11 || kv > 4e11)
        return errf(err, n, "shape: %.3g elements per tensor is beyond any GPU", elems > kv ? elems : kv);
    if (!page_size_ok(s->page_size))
        return errf(err, n, "page size %d: expected " PAGE_SIZES, s->page_size);
    if (s->seqlens_k)
        for (int b = 0; b < s->B; b++)
            if (s->seqlens_k[b] < 1 || s->seqlens_k[b] > s->M)
                return errf(err, n, "KV lengths: request %d has length %d; each must be in 1..M (%d)",
                            b, s->seqlens_k[b], s->M);
    return 0;
}

/* A line of a file, fit to be quoted inside a one-line message: no end of line, control bytes as
 * \xNN, and cut to its first 60 characters ("...") */
static const char *shown(const char *line, char *out, size_t n)
{
    size_t k = 0, len = strcspn(line, "\r\n");
    for (size_t i = 0; i < len && k + 8 < n; i++) {
        unsigned char ch = (unsigned char)line[i];
        if (i == 60) { k += snprintf(out + k, n - k, "..."); break; }
        if (ch < 0x20 || ch == 0x7f) k += snprintf(out + k, n - k, "\\x%02x", ch);
        else out[k++] = (char)ch;
    }
    out[k] = 0;
    return out;
}

#define SWEEP_TOKENS_MAX 32
int sweep_line(const char *line, const cli_opts *base, run_case *c, char *err, size_t n)
{
    char buf[SWEEP_LINE_MAX], show[128];
    memset(c, 0, sizeof *c);
    if ((size_t)snprintf(buf, sizeof buf, "%s", line) >= sizeof buf)
        return errf(err, n, "sweep line: longer than %d characters", SWEEP_LINE_MAX - 1);
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char *tok[SWEEP_TOKENS_MAX + 1];
    int nt = 0;
    for (char *t = strtok(buf, " \t\r\n"); t && nt <= SWEEP_TOKENS_MAX; t = strtok(NULL, " \t\r\n")) tok[nt++] = t;
    if (nt == 0) return 0;
    if (nt < 7)
        return errf(err, n, "sweep line '%s': expected B Hq Hkv N M d causal [key=value ...]", shown(line, show, sizeof show));
    if (nt > SWEEP_TOKENS_MAX)
        return errf(err, n, "sweep line '%s': more than %d fields", shown(line, show, sizeof show), SWEEP_TOKENS_MAX);

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
        if (!eq) return errf(err, n, "sweep line: '%s' is not key=value", shown(tok[t], show, sizeof show));
        *eq = 0;
        const char *k = tok[t], *v = eq + 1;
        if (!strcmp(k, "inputs")) {
            const int m = input_mode_parse(v);
            if (m < 0) return errf(err, n, "sweep line: inputs=%s; expected " INPUT_NAMES, v);
            c->input_mode = m;
        } else if (!strcmp(k, "dtype")) {
            if (!strcmp(v, "f16")) s->dtype = ATTN_F16;
            else if (!strcmp(v, "bf16")) s->dtype = ATTN_BF16;
            else if (!strcmp(v, "e4m3")) s->dtype = ATTN_E4M3;
            else return errf(err, n, "sweep line: dtype=%s; expected f16, bf16 or e4m3", v);
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
    if (dist && s->B > MAX_REQUESTS)
        return errf(err, n, "sweep line: B=%d; per-request KV lengths (dist=) are for up to %d requests", s->B, MAX_REQUESTS);
    if (dist) {
        free(c->seqlens);
        c->seqlens = malloc(sizeof(int) * s->B);
        if (!c->seqlens) return errf(err, n, "sweep line: out of memory for %d lengths", s->B);
        if (make_seqlens(dist, s->B, s->M, base->seed, c->seqlens))
            return errf(err, n, "sweep line: dist=%s; expected equal, uniform or longtail", dist);
        snprintf(c->dist, sizeof c->dist, "%s", dist);   /* a known name: short */
    }
    s->seqlens_k = c->seqlens;
    return shape_validate(s, err, n) ? -1 : 1;
}

/* One line of f into buf (without its '\n'): 1, 0 at the end of the file; -1 with the reason in why
 * for a line too long or a NUL byte (not a text file), the rest of the line read past so that the
 * next call reads the next line; -2 for a read error. */
static int read_line(FILE *f, char *buf, size_t cap, char *why, size_t n)
{
    size_t len = 0;
    int ch, bad = 0;
    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (bad) continue;
        if (ch == 0) {
            snprintf(why, n, "a NUL byte at column %zu: not a text file", len + 1);
            bad = 1;
        } else if (len + 1 >= cap) {
            snprintf(why, n, "line longer than %zu characters", cap - 1);
            bad = 1;
        } else {
            buf[len++] = (char)ch;
        }
    }
    if (ferror(f)) {
        snprintf(why, n, "cannot read (%s)", strerror(errno));
        return -2;
    }
    buf[len] = 0;
    if (bad) return -1;
    return ch == EOF && len == 0 ? 0 : 1;
}

void sweep_free(run_case *cases, int count)
{
    for (int i = 0; i < count; i++) free(cases[i].seqlens);
    free(cases);
}

/* ---------------------------------------------------------------- files named on the command line */

static const char *file_kind(mode_t m)
{
    return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
         : "not a regular file or directory";
}

/* A file to read as text (a sweep file): opened without blocking, as a FIFO or a device would block
 * a plain open() forever, and refused at once unless it is a regular file. NULL with err. */
static FILE *open_text(const char *flag, const char *path, char *err, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        errf(err, n, "%s %s: cannot open (%s)", flag, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        mode_t m = st.st_mode;
        close(fd);
        if (dir) errf(err, n, "%s %s: a directory; give a sweep file (such as sweeps/decode.txt)", flag, path);
        else errf(err, n, "%s %s: %s, not a regular file; give a sweep file (such as sweeps/decode.txt)", flag, path,
                  file_kind(m));
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        errf(err, n, "%s %s: cannot open (%s)", flag, path, strerror(errno));
        close(fd);
    }
    return f;
}

/* Whether f starts with a UTF-8 byte-order mark (EF BB BF), which some editors put at the start of
 * a text file: an invisible character in front of the first field. f is left at its start. */
#define BOM_WHY "the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which a sweep file " \
                "does not take: save it without one (plain ASCII)"
static int starts_with_bom(FILE *f)
{
    unsigned char b[3];
    size_t got = fread(b, 1, 3, f);
    rewind(f);
    return got == 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf;
}

int sweep_read(const char *path, const cli_opts *base, run_case **cases, int *count, char *err, size_t n)
{
    *cases = NULL;
    *count = 0;
    FILE *f = open_text("--sweep", path, err, n);
    if (!f) return -1;
    if (starts_with_bom(f)) {
        fclose(f);
        return errf(err, n, "%s:1: %s", path, BOM_WHY);
    }
    static char line[SWEEP_LINE_MAX];
    char why[512];
    run_case *items = NULL;
    int k = 0, cap = 0, lineno = 0, rc;
    for (;;) {
        rc = read_line(f, line, sizeof line, why, sizeof why);
        if (rc == 0) break;
        lineno++;
        if (rc < 0) break;
        run_case c;
        int got = sweep_line(line, base, &c, why, sizeof why);
        if (got < 0) {
            free(c.seqlens);
            rc = -1;
            break;
        }
        if (got == 0) continue;
        if (k == cap) {
            run_case *grown = realloc(items, sizeof *items * (cap = cap ? 2 * cap : 64));
            if (!grown) { free(c.seqlens); snprintf(why, sizeof why, "out of memory"); rc = -1; break; }
            items = grown;
        }
        items[k++] = c;
    }
    fclose(f);
    if (rc < 0) {
        sweep_free(items, k);
        return errf(err, n, "%s:%d: %s", path, lineno, why);
    }
    if (k == 0) {
        free(items);
        return errf(err, n, "--sweep %s: no shapes in it (%s); a line is B Hq Hkv N M d causal [key=value ...]",
                    path, lineno ? "only blank lines and comments" : "the file is empty");
    }
    *cases = items;
    *count = k;
    return 0;
}

int sweep_check_file(const char *path, const cli_opts *base, FILE *out, char *err, size_t n)
{
    FILE *f = open_text("--check-sweep", path, err, n);
    if (!f) return -1;
    static char line[SWEEP_LINE_MAX];
    char why[1024];
    int lineno = 0, lines = 0, bad = 0, rc;
    if (starts_with_bom(f)) {                 /* line 1 is bad whatever follows the mark */
        rc = read_line(f, line, sizeof line, why, sizeof why);
        if (rc == -2) {
            fclose(f);
            return errf(err, n, "--check-sweep %s: %s", path, why);
        }
        lineno = lines = bad = 1;
        fprintf(out, "bad 1: %s\n", BOM_WHY);
    }
    while ((rc = read_line(f, line, sizeof line, why, sizeof why)) != 0) {
        lineno++;
        if (rc == -2) {
            fclose(f);
            return errf(err, n, "--check-sweep %s:%d: %s", path, lineno, why);
        }
        int got = -1;
        if (rc > 0) {
            run_case c;
            got = sweep_line(line, base, &c, why, sizeof why);
            free(c.seqlens);
            if (got == 0) continue;
        }
        lines++;
        if (got < 0) {
            bad++;
            fprintf(out, "bad %d: %s\n", lineno, why);
        } else {
            fprintf(out, "ok %d\n", lineno);
        }
    }
    fclose(f);
    fflush(out);
    if (lines == 0)
        return errf(err, n, "--check-sweep %s: no shapes in it (%s); a line is B Hq Hkv N M d causal [key=value ...]",
                    path, lineno ? "only blank lines and comments" : "the file is empty");
    return bad ? 1 : 0;
}

/* 0 if a file can be made in dir (one is made and removed), else -1 with errno set */
static int probe_dir(const char *dir)
{
    char p[4200];
    if ((size_t)snprintf(p, sizeof p, "%s/.attn_probe_XXXXXX", dir) >= sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(p);
    if (fd < 0) return -1;
    close(fd);
    unlink(p);
    return 0;
}

#define PATH_CHARS 4096

/* --save DIR: a directory, or one that can be made; a file can be made in it; the files the run
 * writes there are not directories. A missing DIR is made to see that it can be, then removed again
 * (the save makes it): nothing is left behind by a run that stops before it saves. */
static int check_save(const char *dir, int backward, char *err, size_t n)
{
    static const char *const fwd[] = {"o.npy", "lse.npy", NULL}, *const bwd[] = {"dq.npy", "dk.npy", "dv.npy", NULL};
    char buf[PATH_CHARS];
    struct stat st;
    if (strlen(dir) >= PATH_CHARS - 64) return errf(err, n, "--save %s: the path is too long", dir);
    int made[64], nmade = 0, bad = 0;
    snprintf(buf, sizeof buf, "%s", dir);
    /* every prefix of the path, then the path: a directory, or made */
    for (size_t i = 1, len = strlen(buf); i <= len && !bad; i++) {
        if (i < len && buf[i] != '/') continue;
        if (i < len && buf[i - 1] == '/') continue;              /* "a//b" */
        char keep = buf[i];
        buf[i] = 0;
        if (!stat(buf, &st)) {
            if (!S_ISDIR(st.st_mode)) {
                if (i == len) errf(err, n, "--save %s: %s, not a directory", dir, file_kind(st.st_mode));
                else errf(err, n, "--save %s: %s is %s, not a directory", dir, buf, file_kind(st.st_mode));
                bad = 1;
            }
        } else if (errno == ENOENT && nmade < 64 && !mkdir(buf, 0777)) {
            made[nmade++] = (int)i;
        } else {
            errf(err, n, "--save %s: cannot make %s (%s)", dir, buf, strerror(errno));
            bad = 1;
        }
        buf[i] = keep;
    }
    if (!bad && probe_dir(dir)) {
        errf(err, n, "--save %s: cannot write in it (%s)", dir, strerror(errno));
        bad = 1;
    }
    for (const char *const *name = backward ? bwd : fwd; !bad && *name; name++) {
        snprintf(buf, sizeof buf, "%s/%s", dir, *name);
        if (!lstat(buf, &st) && S_ISDIR(st.st_mode)) {
            errf(err, n, "--save %s: %s in it is a directory; the run writes a file of that name", dir, *name);
            bad = 1;
        }
    }
    while (nmade > 0) {                                          /* what was made, undone */
        snprintf(buf, sizeof buf, "%s", dir);
        buf[made[--nmade]] = 0;
        rmdir(buf);
    }
    return bad ? -1 : 0;
}

/* --csv FILE: a regular file that opens for appending, or a new file in a directory that exists
 * and where a file can be made (the CSV is not made before there is a row for it). */
static int check_csv(const char *path, char *err, size_t n)
{
    struct stat st;
    if (!stat(path, &st)) {
        if (S_ISDIR(st.st_mode))
            return errf(err, n, "--csv %s: a directory; give a file name (rows are appended to it)", path);
        if (!S_ISREG(st.st_mode)) return errf(err, n, "--csv %s: %s, not a regular file", path, file_kind(st.st_mode));
        int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK);
        if (fd < 0) return errf(err, n, "--csv %s: cannot open it for appending (%s)", path, strerror(errno));
        close(fd);
        return 0;
    }
    if (errno != ENOENT && errno != ENOTDIR) return errf(err, n, "--csv %s: %s", path, strerror(errno));
    char dir[PATH_CHARS];
    if (strlen(path) >= sizeof dir) return errf(err, n, "--csv %s: the path is too long", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    if (stat(dir, &st))
        return errf(err, n, "--csv %s: its folder %s %s", path, dir,
                    errno == ENOTDIR ? "is under a file, not a directory" : "does not exist (make it first)");
    if (!S_ISDIR(st.st_mode))
        return errf(err, n, "--csv %s: %s is %s, not a directory", path, dir, file_kind(st.st_mode));
    if (probe_dir(dir)) return errf(err, n, "--csv %s: cannot make a file in %s (%s)", path, dir, strerror(errno));
    return 0;
}

/* --sweep FILE, --check-sweep FILE, and the .npy files of --load DIR: regular files, refused at once
 * otherwise (a FIFO would block the read forever) */
static int check_regular(const char *flag, const char *dir, const char *path, char *err, size_t n)
{
    struct stat st;
    const char *show = dir ? path + strlen(dir) + 1 : path;
    if (stat(path, &st)) {
        if (dir) return errf(err, n, "%s %s: %s: cannot open (%s)", flag, dir, show, strerror(errno));
        return errf(err, n, "%s %s: cannot open (%s)", flag, path, strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return 0;
    if (dir) return errf(err, n, "%s %s: %s is %s, not a regular file", flag, dir, show, file_kind(st.st_mode));
    if (S_ISDIR(st.st_mode))
        return errf(err, n, "%s %s: a directory; give a sweep file (such as sweeps/decode.txt)", flag, path);
    return errf(err, n, "%s %s: %s, not a regular file; give a sweep file (such as sweeps/decode.txt)", flag, path,
                file_kind(st.st_mode));
}

int cli_check_files(const cli_opts *o, char *err, size_t n)
{
    if (o->save && check_save(o->save, o->backward, err, n)) return -1;
    if (o->csv && check_csv(o->csv, err, n)) return -1;
    if (o->sweep && check_regular("--sweep", NULL, o->sweep, err, n)) return -1;
    if (o->check_sweep && check_regular("--check-sweep", NULL, o->check_sweep, err, n)) return -1;
    if (o->load) {
        struct stat st;
        if (stat(o->load, &st)) return errf(err, n, "--load %s: cannot open (%s)", o->load, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return errf(err, n, "--load %s: %s, not a directory (it holds q.npy, k.npy and v.npy)", o->load,
                        file_kind(st.st_mode));
        static const char *const names[4] = {"q.npy", "k.npy", "v.npy", "do.npy"};
        char path[PATH_CHARS + 16];
        if (strlen(o->load) >= PATH_CHARS) return errf(err, n, "--load %s: the path is too long", o->load);
        for (int t = 0; t < (o->backward ? 4 : 3); t++) {
            snprintf(path, sizeof path, "%s/%s", o->load, names[t]);
            if (check_regular("--load", o->load, path, err, n)) return -1;
        }
    }
    return 0;
}
