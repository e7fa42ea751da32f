/* The fuzz test (make test runs it): the three readers of what a user types or hands over -- the
 * .npy reader (npy_load4), the sweep-file reader (sweep_read, and --check-sweep's sweep_check_file,
 * which must agree with it line for line) and the command line (cli_parse, then cli_check_files on
 * the paths it named) --
 * fed the fixed cases of issue 21 and then a few thousand mutated and random inputs from a seeded
 * generator. Every input must end as the driver would end it: accepted (exit 0), or refused with one
 * line naming the problem (exit 2); never a crash, a sanitizer report or a hang. The parsers return
 * their errors rather than exiting, so thousands of inputs take seconds in one process.
 *
 * The Makefile builds it twice: build/bin/fuzz_asan under AddressSanitizer and UBSan where gcc has
 * their runtime, and build/bin/fuzz without (tools/run_tests.sh runs the first if it starts here).
 * Each input is written to a file under the scratch folder first, so that the one that crashed or
 * hung is still there afterwards; the FAIL line names it.
 *
 *   build/bin/fuzz [--seed S] [--count N] [--dir DIR]     N inputs per reader (default 2000)
 *
 * Prints "ok ..." or "FAIL ..." per check (tools/run_tests.sh counts them), then one summary line. */
#include <float.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../common/harness.h"
#include "../06_split_kv/planner.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SANITIZED "AddressSanitizer and UBSan"
#else
#define SANITIZED ""
#endif

/* ------------------------------------------------------------------ the generator (splitmix64) */
static uint64_t rng_state;
static uint64_t next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int below(int n) { return n > 0 ? (int)(next() % (uint64_t)n) : 0; }
static const char *pick(const char *const *list, int n) { return list[below(n)]; }
#define PICK(list) pick(list, (int)(sizeof list / sizeof list[0]))

/* ------------------------------------------------------------------ what is being run now */
static char dir[256] = "build/test/fuzz";
static char current[512];            /* "npy input 17 (build/test/fuzz/in.npy)", for a crash or a hang */
static int failures;
static int accepted, refused;          /* per family: both paths must be reached */

static void say_current(const char *what)
{
    char line[700];
    int k = snprintf(line, sizeof line, "FAIL fuzz: %s on %s; the input is kept there\n", what, current);
    if (k > 0 && write(2, line, (size_t)k) < 0) return;
}
static void on_alarm(int sig) { (void)sig; say_current("a hang (over 10 s)"); _exit(1); }
#if defined(__SANITIZE_ADDRESS__)
static void on_sanitizer_death(void) { say_current("a sanitizer report (above)"); }
#else
static void on_signal(int sig) { say_current(sig == SIGSEGV ? "a segfault" : "a crash (signal)"); _exit(1); }
#endif

static void watch(const char *family, int i, const char *path)
{
    snprintf(current, sizeof current, "%s input %d (%s)", family, i, path);
    alarm(10);
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* A refusal must be one line of text saying something (and, for a file, naming it). */
static int one_line(const char *err, const char *must_name)
{
    if (!err[0] || strchr(err, '\n') || strlen(err) < 10) return 0;
    return !must_name || strstr(err, must_name) != NULL;
}

static void fail(const char *what, const char *err)
{
    if (failures++ < 20) printf("FAIL fuzz: %s on %s: '%s'\n", what, current, err);
}

/* ------------------------------------------------------------------ .npy files */
typedef struct bytes { unsigned char *p; size_t n, cap; } bytes;
static void put(bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "fuzz: out of memory\n"); exit(1); }
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

/* A header dict, and the file numpy would write around it: magic, version, length, the dict padded
 * with spaces to a multiple of 64 bytes, '\n', then `data_bytes` bytes of data. */
static void npy_file(bytes *b, int version, const char *dict, size_t data_bytes)
{
    size_t pre = version == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0,
                              (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8), 0, 0};
    b->n = 0;
    put(b, head, pre);
    put(b, dict, dl);
    for (size_t i = pre + dl; i + 1 < total; i++) put(b, " ", 1);
    put(b, "\n", 1);
    for (size_t i = 0; i < data_bytes; i++) { unsigned char x = (unsigned char)next(); put(b, &x, 1); }
}

static const char *const NUMBERS[] = {"0", "1", "2", "3", "7", "64", "128", "1000", "4096", "65536", "-1",
    "2147483647", "2147483648", "4294967296", "1000000000", "1000000001", "99999999999999999999",
    "18446744073709551617", "1e3", "0x10", "", " ", "1.5", "+3", "00000000000000000000000001"};
static const char *const NPY_TOKENS[] = {"(", ")", ",", "'", "\"", "{", "}", ":", " ", "True", "False", "None",
    "'<f2'", "'<f4'", "'<f8'", "'>f2'", "'|u1'", "'descr'", "'shape'", "'fortran_order'", "\n", "\t", "L"};

/* one mutation of a string: a token in, a character out, a number replaced */
static void mutate_text(char *s, size_t cap)
{
    size_t len = strlen(s);
    int how = below(4);
    if (how == 0 && len) {                                   /* drop a character */
        size_t at = (size_t)below((int)len);
        memmove(s + at, s + at + 1, len - at);
    } else if (how == 1) {                                   /* insert a token */
        const char *t = PICK(NPY_TOKENS);
        size_t at = (size_t)below((int)len + 1), tl = strlen(t);
        if (len + tl + 1 < cap) { memmove(s + at + tl, s + at, len - at + 1); memcpy(s + at, t, tl); }
    } else {                                                 /* a number replaced by another */
        size_t at = (size_t)below((int)len + 1);
        while (at < len && (s[at] < '0' || s[at] > '9')) at++;
        if (at >= len) return;
        size_t end = at;
        while (end < len && s[end] >= '0' && s[end] <= '9') end++;
        const char *t = PICK(NUMBERS);
        size_t tl = strlen(t);
        if (len - (end - at) + tl + 1 < cap) { memmove(s + at + tl, s + end, len - end + 1); memcpy(s + at, t, tl); }
    }
}

static void mutate_bytes(bytes *b)
{
    int how = below(5);
    if (how == 0 && b->n) b->p[below((int)b->n)] ^= (unsigned char)(1u << below(8));   /* flip a bit */
    else if (how == 1 && b->n) b->p[below((int)b->n)] = (unsigned char)next();           /* a byte */
    else if (how == 2 && b->n) b->n = (size_t)below((int)b->n);                          /* truncate */
    else if (how == 3) { for (int k = below(16); k >= 0; k--) { unsigned char x = (unsigned char)next(); put(b, &x, 1); } }
    else if (b->n > 12) { b->p[6 + below(6)] = (unsigned char)next(); }                   /* version or length */
}

/* load one file; check that it is loaded whole or refused in one line naming it */
static void npy_case(const char *path, const char *what)
{
    uint16_t *data = NULL;
    int dims[4] = {0, 0, 0, 0};
    char err[512] = "";
    int rc = npy_load4(path, below(2) ? ATTN_F16 : ATTN_BF16, &data, dims, err, sizeof err);
    if (rc == 0) {
        if (!data || dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[3] < 1) fail(what, "loaded with a bad shape");
        free(data);
        accepted++;
    } else if (rc != -1 || !one_line(err, path)) {
        fail(what, err);
    } else refused++;
}

static int npy_fuzz(int count)
{
    char path[300], dict[600];
    snprintf(path, sizeof path, "%s/in.npy", dir);
    bytes b = {0};
    for (int i = 0; i < count; i++) {
        watch("npy", i, path);
        int version = 1 + below(3), nd = below(8) ? 4 : below(6);
        long d[6];
        size_t elems = 1;
        char shape[200] = "";
        size_t k = 0;
        for (int j = 0; j < nd; j++) {
            d[j] = 1 + below(j == 3 ? 9 : 4);
            elems *= (size_t)d[j];
            k += (size_t)snprintf(shape + k, sizeof shape - k, "%ld%s", d[j], nd == 1 || j + 1 < nd ? ", " : "");
        }
        int f32 = below(2);
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", f32 ? "<f4" : "<f2",
                 below(10) ? "False" : "True", shape);
        for (int m = below(4); m > 0; m--) mutate_text(dict, sizeof dict);
        size_t data_bytes = elems * (f32 ? 4 : 2);
        if (!below(5)) data_bytes = (size_t)below((int)data_bytes * 2 + 3);
        npy_file(&b, version, dict, data_bytes);
        for (int m = below(3) ? 0 : 1 + below(3); m > 0; m--) mutate_bytes(&b);
        if (!below(20)) {                                 /* now and then: random bytes, magic kept or not */
            b.n = 0;
            for (int j = below(300); j >= 0; j--) { unsigned char x = (unsigned char)next(); put(&b, &x, 1); }
            if (below(2) && b.n > 6) memcpy(b.p, "\x93NUMPY", 6);
        }
        if (write_file(path, b.p, b.n)) { fail("cannot write the input", path); break; }
        npy_case(path, "npy");
    }
    free(b.p);
    alarm(0);
    return count;
}

/* ------------------------------------------------------------------ sweep files */
static char **corpus;
static int ncorpus;

static void corpus_add(const char *line)
{
    char **grown = realloc(corpus, sizeof *corpus * (size_t)(ncorpus + 1));
    if (!grown) return;
    corpus = grown;
    corpus[ncorpus] = malloc(strlen(line) + 1);
    if (corpus[ncorpus]) strcpy(corpus[ncorpus++], line);
}

/* The lines of the sweeps the course runs and of the GPU matrix (from the repository root), plus a few
 * of every key, as the seeds of the mutations. */
static void corpus_read(void)
{
    static const char *const files[] = {"sweeps/prefill.txt", "sweeps/decode.txt", "sweeps/varlen.txt",
        "sweeps/models.txt", "sweeps/article.txt", "sweeps/tour.txt", "tests/gpu_cases.txt"};
    static const char *const extra[] = {"1 8 1 1 1000 128 0 seqlens=1 page=16", "4 2 2 8 20 32 1 dist=longtail",
        "2 4 1 1 100 64 0 dtype=bf16 inputs=outlier model=A+B", "1 1 1 1 1 64 0 expect=ok", "# comment", "",
        "2 4 4 512 512 64 1 dtype=e4m3 inputs=sparse-outlier"};
    char line[4096];
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        FILE *in = fopen(files[f], "r");
        if (!in) continue;
        while (fgets(line, sizeof line, in)) { line[strcspn(line, "\n")] = 0; corpus_add(line); }
        fclose(in);
    }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) corpus_add(extra[i]);
}

static const char *const SWEEP_TOKENS[] = {"0", "1", "-1", "2147483647", "2147483648", "1000000000",
    "99999999999", "1048577", "seqlens=", "seqlens=1,2", "seqlens=,", "dist=uniform", "dist=zipf",
    "page=16", "page=24", "page=", "model=", "model=a;b", "dtype=fp8", "dtype=e4m3", "inputs=x",
    "inputs=sparse-outlier", "=", "x=y", "#", "\t",
    "\r", "causal", "expect=FAIL"};

/* --check-sweep on the same file: its lines well formed ("ok N" or "bad N: reason", N rising), and in
 * agreement with sweep_read, which took the file (rc 0) or refused it at a line ("path:N: ...") */
static void check_sweep_agrees(const char *path, const char *what, int read_rc, const char *read_err)
{
    cli_opts base;
    cli_defaults(&base);
    char *buf = NULL, err[1024] = "";
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) { fail(what, "open_memstream failed"); return; }
    int rc = sweep_check_file(path, &base, mem, err, sizeof err);
    fclose(mem);
    int last = 0, first_bad = 0, oks = 0, bads = 0;
    for (char *line = buf, *end; line && *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end) { fail("--check-sweep: a line without its end", line); break; }
        int no = 0, used = 0;
        if (sscanf(line, "ok %d%n", &no, &used) == 1 && line + used == end) oks++;
        else if (sscanf(line, "bad %d: %n", &no, &used) == 1 && used > 0 && line + used < end) { bads++; if (!first_bad) first_bad = no; }
        else { *end = 0; fail("--check-sweep: a line neither 'ok N' nor 'bad N: reason'", line); break; }
        if (no <= last) { fail("--check-sweep: line numbers not rising", line); break; }
        last = no;
    }
    if (rc == -1 && (oks || bads || !one_line(err, path))) fail("--check-sweep refused the file but printed lines, or no one line", err);
    else if (rc != -1 && (rc != (bads > 0) || oks + bads == 0)) fail("--check-sweep's return and its lines disagree", buf ? buf : "");
    else if ((read_rc == 0) != (rc == 0)) fail("--check-sweep and sweep_read disagree", read_err);
    else if (read_rc != 0 && rc == 1) {                     /* the line sweep_read stopped at is the first bad one */
        char at[400];
        snprintf(at, sizeof at, "%s:%d: ", path, first_bad);
        if (!strstr(read_err, at)) fail("--check-sweep's first bad line is not the one sweep_read names", read_err);
    }
    free(buf);
}

static void sweep_case(const char *path, const char *what)
{
    cli_opts base;
    cli_defaults(&base);
    run_case *cases = NULL;
    int n = 0;
    char err[1024] = "";
    int rc = sweep_read(path, &base, &cases, &n, err, sizeof err);
    check_sweep_agrees(path, what, rc, err);
    if (rc == 0) {
        if (n < 1 || !cases) fail(what, "accepted with no shape");
        for (int i = 0; i < n; i++) {
            char why[512];
            if (shape_validate(&cases[i].shape, why, sizeof why)) fail(what, why);
            double fl = attn_flops(&cases[i].shape);       /* as the driver sorts them: no hang */
            if (!(fl >= 0)) fail(what, "negative or NaN FLOPs");
        }
        sweep_free(cases, n);
        accepted++;
    } else if (rc != -1 || !one_line(err, path)) {
        fail(what, err);
    } else refused++;
}

static int sweep_fuzz(int count)
{
    char path[300];
    snprintf(path, sizeof path, "%s/in.txt", dir);
    bytes b = {0};
    char line[8192];
    for (int i = 0; i < count; i++) {
        watch("sweep", i, path);
        b.n = 0;
        for (int l = below(6); l >= 0; l--) {
            snprintf(line, sizeof line, "%s", ncorpus ? corpus[below(ncorpus)] : "1 1 1 1 1 64 0");
            for (int m = below(3) ? 0 : 1 + below(3); m > 0; m--) {
                size_t len = strlen(line), at = (size_t)below((int)len + 1);
                const char *t = below(3) ? PICK(SWEEP_TOKENS) : PICK(NUMBERS);
                size_t tl = strlen(t), cut = below(2) ? strcspn(line + at, " \t") : 0;
                if (len - cut + tl + 2 < sizeof line) {
                    memmove(line + at + tl + 1, line + at + cut, len - at - cut + 1);
                    memcpy(line + at, t, tl);
                    line[at + tl] = ' ';
                }
            }
            put(&b, line, strlen(line));
            if (l > 0 || below(4)) put(&b, below(10) ? "\n" : "\r\n", below(10) ? 1 : 2);
        }
        if (!below(4)) mutate_bytes(&b);
        if (!below(40)) {                                 /* a line too long, or a NUL in a short one */
            if (below(2)) { for (int j = 0; j < 70000; j++) put(&b, "1", 1); }
            else put(&b, "1 2 3\0 4 5 6 7\n", 15);
        }
        if (write_file(path, b.n ? b.p : (unsigned char *)"", b.n)) { fail("cannot write the input", path); break; }
        sweep_case(path, "sweep");
    }
    free(b.p);
    alarm(0);
    return count;
}

/* ------------------------------------------------------------------ the command line */
static const char *const FLAGS[] = {"--b", "--hq", "--hkv", "--h", "--n", "--m", "--d", "--causal", "--dtype",
    "--scale", "--seqlens", "--seqlen-dist", "--seed", "--inputs", "--warmups", "--runs", "--no-check",
    "--check-budget", "--too-slow", "--kv-block", "--page-size", "--flush", "--variant", "--csv", "--load",
    "--save", "--sweep", "--planner", "--no-time", "--profile", "--list", "--probe", "--pass", "--ceilings",
    "--read-floor", "--quiet", "--no-header", "--help", "-h", "--", "-", "--bogus", "--b=3", "-n", "--fp8-scale",
    "--fp8-hadamard", "--check-sweep", "--warm-ms"};
static const char *const VALUES[] = {"f16", "bf16", "fp8", "e4m3", "normal", "outlier", "sparse-outlier",
    "block", "tensor", "on", "off", "equal", "uniform",
    "longtail", "zipf", "fa", "greedy", "balanced", "auto", "nope", "write", "write+read", "read", "0.5",
    "nan", "inf", "-0.0", "1e-300", "1e308", "1,2,3", "1,,2", "1,", ",", "4096,1", "16384,16384",
    "build/test/fuzz", "/nonexistent", "sweeps/decode.txt", "05b", "zz", "-3", "--n", "1e-40", "3.5e38", "1e-30",
    "60000", "60001", "build/test/fuzz/in.txt", "build/test/fuzz/in.npy", "build/test/fuzz/fifo", "build/test/fuzz/new/dir"};

static int cli_fuzz(int count)
{
    static const rung_cli with_flags = {2, 16, 16, 1024, 1024, 64, planner_names, "auto", 128, "--b 1"};
    static const rung_cli decode = {8, 8, 1, 1, 16384, 128, planner_names, "auto", 128, "--b 32"};
    const rung_cli *owns[3] = {NULL, &with_flags, &decode};
    char path[300], store[18][3100];
    snprintf(path, sizeof path, "%s/args.txt", dir);
    static char err[CLI_ERR_MAX];
    for (int i = 0; i < count; i++) {
        char *argv[18];
        int argc = 0;
        argv[argc++] = "fuzz";
        for (int a = below(14); a > 0 && argc < 17; a--) {
            char *s = store[argc];
            int kind = below(10);
            if (kind < 4) snprintf(s, sizeof store[0], "%s", PICK(FLAGS));
            else if (kind < 6) snprintf(s, sizeof store[0], "%s", PICK(NUMBERS));
            else if (kind < 8) snprintf(s, sizeof store[0], "%s", PICK(VALUES));
            else if (kind == 8) {                       /* random bytes, no NUL (argv strings cannot hold one) */
                int len = 1 + below(24);
                for (int j = 0; j < len; j++) s[j] = (char)(1 + below(255));
                s[len] = 0;
            } else {                                    /* a long list or number */
                int len = 1 + below(3000), list = below(2);
                for (int j = 0; j < len; j++) s[j] = list && j % 2 ? ',' : (char)('1' + below(9));
                s[len] = 0;
            }
            argv[argc++] = s;
        }
        argv[argc] = NULL;
        FILE *f = fopen(path, "w");                     /* the input, kept for a crash */
        if (f) { for (int a = 0; a < argc; a++) fprintf(f, "%s\n", argv[a]); fclose(f); }
        watch("command-line", i, path);
        cli_opts o;
        cli_defaults_for(&o, owns[below(3)]);
        err[0] = 0;
        int rc = cli_parse(argc, argv, &o, err, sizeof err);
        int help = 0;
        for (int a = 1; a < argc; a++) help |= !strcmp(argv[a], "--help") || !strcmp(argv[a], "-h");
        if (help && rc != 1) fail("--help on the line, but no help", err);
        if (rc == 0) {
            char why[512];
            if (shape_validate(&o.shape, why, sizeof why)) fail("command line accepted an invalid shape", why);
            if (!(o.shape.scale >= FLT_MIN && o.shape.scale <= FLT_MAX)) fail("command line", "a scale outside float's normal range");
            /* the paths it named, where they lie in the scratch folder: checked, in one line or not at all */
            const char *paths[5] = {o.save, o.csv, o.load, o.sweep, o.check_sweep};
            int inside = 1;
            for (int p = 0; p < 5; p++) inside &= !paths[p] || !strncmp(paths[p], dir, strlen(dir));
            if (inside) {
                int frc = cli_check_files(&o, why, sizeof why);
                if (frc != 0 && (frc != -1 || !one_line(why, NULL))) fail("cli_check_files refusal", why);
            }
            if (o.seqlens && o.shape.seqlens_k != o.seqlens) fail("command line", "seqlens not the shape's");
            if (o.load && o.shape_flags) fail("command line", "--load accepted with a shape flag");
            if (!(attn_flops(&o.shape) >= 0)) fail("command line", "NaN FLOPs");
            accepted++;
        } else if (rc == 1) {
            if (!strstr(err, "only reads K and V)")) fail("--help cut short", err);
            accepted++;
        } else if (rc != -1 || !one_line(err, NULL)) {
            fail("command line refusal", err);
        } else refused++;
        free(o.seqlens);
    }
    alarm(0);
    return count;
}

/* ------------------------------------------------------------------ issue 21's cases, fixed */
static void check(const char *name, int ok, const char *err)
{
    if (ok) printf("ok fuzz regression: %s\n", name);
    else { printf("FAIL fuzz regression: %s: '%s'\n", name, err); failures++; }
}

static void regressions(void)
{
    char path[300], err[CLI_ERR_MAX];
    bytes b = {0};
    uint16_t *data = NULL;
    int dims[4];
    struct { const char *name, *dict; size_t bytes; const char *want; } npy[] = {
        {"npy: a header claiming (1000, 1000, 1000, 1000) over 4 KiB of data (was a segfault)",
         "{'descr': '<f2', 'fortran_order': False, 'shape': (1000, 1000, 1000, 1000), }", 4096, "data shorter than its shape"},
        {"npy: a shape whose size overflows", "{'descr': '<f2', 'fortran_order': False, 'shape': "
         "(1000000000, 1000000000, 1000000000, 1000000000), }", 16, "holds more elements than memory can"},
        {"npy: a header without its ')' (was accepted)", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2, }",
         8, "no closing ')'"},
        {"npy: trailing bytes after the data (were accepted)", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), }",
         11, "3 bytes after the data"},
    };
    for (size_t i = 0; i < sizeof npy / sizeof npy[0]; i++) {
        snprintf(path, sizeof path, "%s/regression%zu.npy", dir, i);
        snprintf(current, sizeof current, "%s", path);
        npy_file(&b, 1, npy[i].dict, npy[i].bytes);
        err[0] = 0;
        int rc = write_file(path, b.p, b.n) ? 0 : npy_load4(path, ATTN_F16, &data, dims, err, sizeof err);
        check(npy[i].name, rc == -1 && one_line(err, path) && strstr(err, npy[i].want), err);
        if (rc == 0) free(data);
    }
    free(b.p);

    struct { const char *name, *text; size_t len; const char *want; } sw[] = {
        {"sweep: an empty file (was exit 2 with no message)", "", 0, "no shapes in it"},
        {"sweep: a comments-only file (was exit 2 with no message)", "# B Hq Hkv N M d causal\n\n", 25, "no shapes in it"},
        {"sweep: a 14-byte line with a NUL byte (was 'line longer than 65535 characters')", "1 2 3\0 4 5 6 7\n", 15,
         "a NUL byte at column 6"},
        {"sweep: a garbage line, quoted without its newline", "garbage line\n", 13, "sweep line 'garbage line': expected"},
    };
    cli_opts base;
    cli_defaults(&base);
    run_case *cases = NULL;
    int n = 0;
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        snprintf(path, sizeof path, "%s/regression%zu.txt", dir, i);
        err[0] = 0;
        int rc = write_file(path, sw[i].text, sw[i].len) ? 0 : sweep_read(path, &base, &cases, &n, err, sizeof err);
        check(sw[i].name, rc == -1 && one_line(err, path) && strstr(err, sw[i].want), err);
        if (rc == 0) sweep_free(cases, n);
    }
    int rc = sweep_read(dir, &base, &cases, &n, err, sizeof err);
    check("sweep: a directory as --sweep (was exit 2 with no message)", rc == -1 && one_line(err, dir) &&
          strstr(err, "a directory"), err);
    if (rc == 0) sweep_free(cases, n);

    /* issue 35: a FIFO as --sweep or as a .npy blocked forever; a byte-order mark was an invisible
     * character in the message. Each refused at once (watch() ends a hang), naming what it is. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    remove(path);
    if (mkfifo(path, 0600)) check("a FIFO could be made", 0, path);
    watch("regression", 0, path);
    rc = sweep_read(path, &base, &cases, &n, err, sizeof err);
    check("sweep: a FIFO, refused at once (was a hang)", rc == -1 && one_line(err, path) && strstr(err, "a FIFO, not a regular file"), err);
    rc = npy_load4(path, ATTN_F16, &data, dims, err, sizeof err);
    check("npy: a FIFO, refused at once (was a hang)", rc == -1 && one_line(err, path) && strstr(err, "a FIFO, not a regular file"), err);
    alarm(0);
    snprintf(path, sizeof path, "%s/bom.txt", dir);
    rc = write_file(path, "\xef\xbb\xbf" "1 1 1 8 8 64 0\n", 18) ? 0 : sweep_read(path, &base, &cases, &n, err, sizeof err);
    check("sweep: a UTF-8 byte-order mark, named", rc == -1 && one_line(err, path) && strstr(err, ":1: the file starts with a UTF-8 byte-order mark"), err);
    if (rc == 0) sweep_free(cases, n);
    snprintf(path, sizeof path, "%s/bom.npy", dir);
    rc = write_file(path, "\xef\xbb\xbf\x93NUMPY\x01\x00\x02\x00{}", 15) ? 0 : npy_load4(path, ATTN_F16, &data, dims, err, sizeof err);
    check("npy: a UTF-8 byte-order mark, named", rc == -1 && one_line(err, path) && strstr(err, "byte-order mark"), err);
    if (rc == 0) free(data);
    /* paths checked before the GPU: a --save under a file, a --csv that is a folder, --load's FIFO */
    {
        char fifo_dir[280], file[280], under[300];
        snprintf(file, sizeof file, "%.200s/bom.txt", dir);
        snprintf(under, sizeof under, "%s/x", file);
        snprintf(fifo_dir, sizeof fifo_dir, "%.200s/fifoload", dir);
        mkdir(fifo_dir, 0755);
        snprintf(path, sizeof path, "%s/q.npy", fifo_dir);
        remove(path);
        mkfifo(path, 0600);
        struct { const char *name, *flag, *value, *want; } fc[] = {
            {"files: --save under a file (was found after the GPU work)", "--save", under, "is a regular file, not a directory"},
            {"files: --csv a directory (was found after the GPU work)", "--csv", dir, "a directory; give a file name"},
            {"files: --load's q.npy a FIFO, refused at once (was a hang)", "--load", fifo_dir, "q.npy is a FIFO, not a regular file"},
        };
        for (size_t i = 0; i < sizeof fc / sizeof fc[0]; i++) {
            cli_opts o;
            cli_defaults(&o);
            if (!strcmp(fc[i].flag, "--save")) o.save = fc[i].value;
            else if (!strcmp(fc[i].flag, "--csv")) o.csv = fc[i].value;
            else o.load = fc[i].value;
            watch("regression", (int)i, fc[i].value);
            err[0] = 0;
            rc = cli_check_files(&o, err, sizeof err);
            check(fc[i].name, rc == -1 && one_line(err, fc[i].value) && strstr(err, fc[i].want), err);
        }
        alarm(0);
        remove(path);
        rmdir(fifo_dir);
    }

    static const rung_cli decode = {8, 8, 1, 1, 16384, 128, planner_names, "auto", 128, "--b 32"};
    struct { const char *name; const rung_cli *own; const char *args[8]; const char *want; } cl[] = {
        {"cli: --planner nope, a usage error (was exit 3 behind the shape's refusal)", &decode,
         {"--planner", "nope", "--n", "1024", NULL}, "--planner: expected one of fa, greedy, balanced, auto"},
        {"cli: --load with --seqlens, refused as such (was counted against the default --b)", NULL,
         {"--load", "dir", "--seqlens", "5", NULL}, "cannot be given with --load"},
        {"cli: --load with --n, refused (was silently ignored)", NULL, {"--load", "dir", "--n", "5", NULL}, "drop --n"},
        {"cli: --scale 1e-300, refused (was 0)", NULL, {"--scale", "1e-300", NULL}, "outside float's normal range"},
        {"cli: --scale 1e300, refused (was inf)", NULL, {"--scale", "1e300", NULL}, "outside float's normal range"},
        {"cli: --hq 8 --hkv 3 --h 8, refused (was Hkv 8)", NULL, {"--hq", "8", "--hkv", "3", "--h", "8", NULL},
         "--hq 8 --hkv 3: Hq must be a multiple of Hkv"},
        {"cli: --h 8 --hkv 3, refused alike", NULL, {"--h", "8", "--hkv", "3", NULL}, "--h 8 --hkv 3: Hq must be a multiple of Hkv"},
        {"cli: --n 0 --help, the help (was the error)", NULL, {"--n", "0", "--help", NULL}, "only reads K and V)"},
        {"cli: an argument with a newline and an ESC, escaped", NULL, {"--dtype", "a\nb\x1b[31m", NULL}, "got 'a\\x0ab\\x1b[31m'"},
    };
    for (size_t i = 0; i < sizeof cl / sizeof cl[0]; i++) {
        char *argv[10] = {"fuzz"};
        int argc = 1;
        for (int a = 0; cl[i].args[a]; a++) argv[argc++] = (char *)cl[i].args[a];
        cli_opts o;
        cli_defaults_for(&o, cl[i].own);
        err[0] = 0;
        rc = cli_parse(argc, argv, &o, err, sizeof err);
        int help = strstr(cl[i].want, "only reads K and V)") != NULL;
        check(cl[i].name, rc == (help ? 1 : -1) && (help || one_line(err, NULL)) && strstr(err, cl[i].want), help ? "no help" : err);
        free(o.seqlens);
    }
}

/* One reader's run: "ok" when every input passed and both outcomes were reached (a generator that
 * only ever produced refusals, or only acceptances, would test half the reader). */
static int family(const char *name, int (*run)(int), int count, const char *what, const char *yes, const char *no)
{
    int before = failures;
    accepted = refused = 0;
    int k = run(count);
    if (failures == before && accepted && refused)
        printf("ok fuzz %s: %d %s: %d %s, %d %s\n", name, k, what, accepted, yes, refused, no);
    else if (failures == before)
        printf("FAIL fuzz %s: %d %s, but %d %s and %d %s: the generator misses one outcome\n", name, k, what, accepted, yes,
               refused, no), failures++;
    return k;
}

int main(int argc, char **argv)
{
    uint64_t seed = 21;
    int count = 2000;
    for (int a = 1; a < argc; a++) {
        char *end = NULL;
        if (!strcmp(argv[a], "--seed") && a + 1 < argc) seed = strtoull(argv[++a], &end, 10);
        else if (!strcmp(argv[a], "--count") && a + 1 < argc) count = (int)strtol(argv[++a], &end, 10);
        else if (!strcmp(argv[a], "--dir") && a + 1 < argc) snprintf(dir, sizeof dir, "%s", argv[++a]);
        else if (!strcmp(argv[a], "--probe")) { printf("fuzz: ready%s%s\n", SANITIZED[0] ? ", under " : "", SANITIZED); return 0; }
        else {
            fprintf(stderr, "usage: fuzz [--seed S] [--count N] [--dir DIR] [--probe]  (unknown '%s')\n", argv[a]);
            return 2;
        }
        if (end && *end) { fprintf(stderr, "fuzz: %s: expected a number, got '%s'\n", argv[a - 1], argv[a]); return 2; }
    }
    if (count < 1 || count > 10000000) { fprintf(stderr, "fuzz: --count: 1..10000000\n"); return 2; }
    for (char *p = dir + 1; *p; p++)                    /* mkdir -p */
        if (*p == '/') { *p = 0; mkdir(dir, 0755); *p = '/'; }
    mkdir(dir, 0755);
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) { fprintf(stderr, "fuzz: cannot make the folder %s\n", dir); return 2; }
    signal(SIGALRM, on_alarm);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_set_death_callback(on_sanitizer_death);    /* the sanitizers keep their own handlers */
#else
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGABRT, on_signal);
#endif
    rng_state = seed;
    clock_t t0 = clock();
    regressions();
    corpus_read();
    int inputs = 0;
    inputs += family("npy", npy_fuzz, count, "mutated and random .npy files", "loaded whole", "refused in one line naming the file");
    inputs += family("sweep", sweep_fuzz, count, "mutated sweep files", "read", "refused in one line naming the file");
    inputs += family("command line", cli_fuzz, 2 * count, "random argument lists", "parsed to a valid shape (or --help)",
                     "refused in one line");
    for (int i = 0; i < ncorpus; i++) free(corpus[i]);
    free(corpus);
    printf("fuzz: %d inputs (seed %llu)%s%s in %.1f s of CPU; %d failed\n", inputs, (unsigned long long)seed,
           SANITIZED[0] ? " under " : " without sanitizers", SANITIZED, (double)(clock() - t0) / CLOCKS_PER_SEC, failures);
    return failures ? 1 : 0;
}
