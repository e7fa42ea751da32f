/* cli_parse, shape_validate and sweep_line (cli.c): each class of bad argument is refused with -1
 * and one line naming it; good arguments land in the right fields. Also report_extra (report.c),
 * where what a sweep line or the command line set reaches the CSV's extra field, and the warm-up
 * rule that --warm-ms sets (timing.c's bench_warm_more). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"
#include "../common/harness.h"
#include "../06_split_kv/planner.h"

/* A rung with flags of its own (attn.h's rung_cli) on the driver's default shape: rung 06's planners
 * (planner.c, linked into the tests) and a KV block; and rung 06's own shape, a decode step. */
static const rung_cli with_flags = {2, 16, 16, 1024, 1024, 64, planner_names, "auto", 128, "--b 1"};
static const rung_cli decode_rung = {8, 8, 1, 1, 16384, 128, planner_names, "auto", 128, "--b 32"};

/* Split `line` on spaces into argv (argv[0] = "prog") and parse it over the defaults of `own`. The
 * strings live in a static buffer, since cli_opts keeps pointers into argv. */
static int parse_for(const rung_cli *own, const char *line, cli_opts *o, char *err, size_t n)
{
    static char buf[1024];
    static char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    argv[argc++] = "prog";
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    cli_defaults_for(o, own);
    err[0] = 0;
    return cli_parse(argc, argv, o, err, n);
}

static int parse(const char *line, cli_opts *o, char *err, size_t n) { return parse_for(&with_flags, line, o, err, n); }

static void expect_refused(const char *line, const char *want)
{
    cli_opts o;
    char err[512];
    int rc = parse(line, &o, err, sizeof err);
    EXPECT_MSG(rc == -1, "'%s': returned %d, expected -1 (err '%s')", line, rc, err);
    EXPECT_MSG(strstr(err, want) != NULL, "'%s': message '%s' lacks '%s'", line, err, want);
    EXPECT_MSG(strchr(err, '\n') == NULL, "'%s': message is more than one line: '%s'", line, err);
    free(o.seqlens);
}

static void cli_rejects_nonpositive(void)
{
    expect_refused("--n 0", "--n: 0 is out of range; allowed 1..");
    expect_refused("--b -3", "--b: -3 is out of range");
    expect_refused("--m -1", "--m: -1 is out of range");
    expect_refused("--hq 0", "--hq: 0 is out of range");
    expect_refused("--hkv 0", "--hkv: 0 is out of range");
    expect_refused("--h 0", "--h: 0 is out of range");
    expect_refused("--n 99999999999", "--n:");          /* beyond long-sane sizes */
    expect_refused("--scale 0", "--scale: expected a positive number, got '0'");
    expect_refused("--scale -0.5", "--scale: expected a positive number");
    expect_refused("--scale inf", "--scale: expected a positive number");
}

static void cli_rejects_non_integer(void)
{
    expect_refused("--m 12x", "--m: expected an integer, got '12x'");
    expect_refused("--n 1.5", "--n: expected an integer, got '1.5'");
    expect_refused("--b abc", "--b: expected an integer, got 'abc'");
    expect_refused("--d", "--d: expected an integer, got ''");      /* value missing at the end */
    expect_refused("--seed -1", "--seed: -1 is out of range");
    expect_refused("--warmups x", "--warmups: expected an integer");
    expect_refused("--runs 0", "--runs: 0 is out of range");
}

static void cli_rejects_head_ratio(void)
{
    expect_refused("--hq 6 --hkv 4", "--hq 6 --hkv 4: Hq must be a multiple of Hkv");
    expect_refused("--hq 2 --hkv 4", "Hq must be a multiple of Hkv");
    expect_refused("--hkv 3", "--hq 16 (the default) --hkv 3: Hq must be a multiple of Hkv");   /* default Hq 16 */
}

static void cli_rejects_unknown_flag(void)
{
    expect_refused("--bogus", "unknown argument '--bogus'");
    expect_refused("--n 64 -x", "unknown argument '-x'");
    expect_refused("64", "unknown argument '64'");
    expect_refused("--N 64", "unknown argument '--N'");          /* flags are case-sensitive */
    expect_refused("--csv", "--csv: expected a value");
    expect_refused("--save --quiet", "--save: expected a value");
}

static void cli_rejects_head_dim(void)
{
    expect_refused("--d 4096", "--d: 4096 is out of range; allowed 1..2048");
    expect_refused("--d 2049", "--d: 2049 is out of range");
    expect_refused("--d 0", "--d: 0 is out of range");
    cli_opts o;
    char err[512];
    EXPECT(parse("--d 2048 --n 4 --h 1 --b 1", &o, err, sizeof err) == 0);   /* the top is allowed */
}

static void cli_rejects_bad_enums(void)
{
    expect_refused("--dtype fp8", "--dtype: expected f16, bf16 or e4m3, got 'fp8'");
    expect_refused("--dtype F16", "--dtype: expected f16, bf16 or e4m3");
    expect_refused("--dtype", "--dtype: expected f16, bf16 or e4m3, got ''");
    expect_refused("--inputs zeros", "--inputs: expected " INPUT_NAMES ", got 'zeros'");
    /* the FP8 step's flags: their values, and only with --dtype e4m3 (or a sweep, for its e4m3 lines) */
    expect_refused("--dtype e4m3 --fp8-scale row", "--fp8-scale: expected block or tensor, got 'row'");
    expect_refused("--dtype e4m3 --fp8-hadamard yes", "--fp8-hadamard: expected on or off, got 'yes'");
    expect_refused("--fp8-scale tensor", "--fp8-scale: it sets how --dtype e4m3 quantizes Q, K and V; give --dtype e4m3");
    expect_refused("--dtype bf16 --fp8-hadamard off", "--fp8-hadamard: it sets how --dtype e4m3 quantizes");
    expect_refused("--seqlen-dist zipf", "--seqlen-dist: expected equal, uniform or longtail, got 'zipf'");
}

static void cli_rejects_seqlens(void)
{
    expect_refused("--b 3 --seqlens 4,5", "--seqlens: 2 lengths given for --b 3");
    expect_refused("--seqlens 4,5,6", "--seqlens: 3 lengths given for --b 2");       /* default B 2 */
    expect_refused("--b 1 --m 100 --seqlens 101", "--seqlens: request 0 has length 101; each must be in 1..M (100)");
    expect_refused("--b 2 --m 100 --seqlens 100,101", "request 1 has length 101");
    expect_refused("--b 2 --seqlens 4,0", "--seqlens: expected a comma-separated list of positive integers");
    expect_refused("--b 2 --seqlens 4,,5", "--seqlens: expected a comma-separated list");
    expect_refused("--b 2 --seqlens 4;5", "--seqlens: expected a comma-separated list");
    expect_refused("--b 2 --seqlens", "--seqlens: expected a comma-separated list");
    expect_refused("--b 2 --seqlens 4,5 --seqlen-dist equal", "give one or the other");
}

static void cli_good_arguments(void)
{
    cli_opts o;
    static char err[CLI_ERR_MAX];       /* --help's whole text, below */
    EXPECT(parse("", &o, err, sizeof err) == 0);
    EXPECT(o.shape.B == 2 && o.shape.Hq == 16 && o.shape.Hkv == 16);
    EXPECT(o.shape.N == 1024 && o.shape.M == 1024 && o.shape.d == 64);
    EXPECT(o.shape.causal == 0 && o.shape.dtype == ATTN_F16 && o.shape.seqlens_k == NULL);
    EXPECT(o.shape.scale == 0.125f && o.have_scale == 0);          /* 1/sqrt(64) */
    EXPECT(o.check == 1 && o.warmups == 3 && o.runs == 0 && o.seed == 1234);

    EXPECT(parse("--n 77", &o, err, sizeof err) == 0);             /* N alone: self-attention */
    EXPECT_MSG(o.shape.N == 77 && o.shape.M == 77, "--n 77: N=%d M=%d", o.shape.N, o.shape.M);
    EXPECT(parse("--m 300", &o, err, sizeof err) == 0);            /* M alone keeps N */
    EXPECT_MSG(o.shape.N == 1024 && o.shape.M == 300, "--m 300: N=%d M=%d", o.shape.N, o.shape.M);
    EXPECT(parse("--n 77 --m 300", &o, err, sizeof err) == 0);
    EXPECT(o.shape.N == 77 && o.shape.M == 300);
    EXPECT(parse("--m 300 --n 77", &o, err, sizeof err) == 0);     /* order does not matter */
    EXPECT(o.shape.N == 77 && o.shape.M == 300);

    EXPECT(parse("--h 8", &o, err, sizeof err) == 0);
    EXPECT(o.shape.Hq == 8 && o.shape.Hkv == 8);
    EXPECT(parse("--hq 32 --hkv 8", &o, err, sizeof err) == 0);    /* GQA */
    EXPECT(o.shape.Hq == 32 && o.shape.Hkv == 8);
    EXPECT(parse("--hq 32 --hkv 1", &o, err, sizeof err) == 0);    /* MQA */

    EXPECT(parse("--d 128", &o, err, sizeof err) == 0);
    EXPECT_NEAR(o.shape.scale, 1.0 / sqrt(128.0), 1e-7);
    EXPECT(parse("--scale 0.25 --d 128", &o, err, sizeof err) == 0);
    EXPECT(o.shape.scale == 0.25f && o.have_scale == 1);

    EXPECT(parse("--b 3 --causal --dtype bf16 --seed 42 --inputs outlier --no-check --runs 5 --warmups 0",
                 &o, err, sizeof err) == 0);
    EXPECT(o.shape.B == 3 && o.shape.causal == 1 && o.shape.dtype == ATTN_BF16);
    EXPECT(o.seed == 42 && o.input_mode == INPUT_OUTLIER && o.check == 0 && o.runs == 5 && o.warmups == 0);
    EXPECT(parse("--dtype e4m3 --inputs sparse-outlier", &o, err, sizeof err) == 0);
    EXPECT(o.shape.dtype == ATTN_E4M3 && o.input_mode == INPUT_SPARSE_OUTLIER);
    EXPECT(parse("--inputs nonfinite-k", &o, err, sizeof err) == 0 && o.input_mode == INPUT_NONFINITE_K);
    EXPECT(parse("--inputs nonfinite", &o, err, sizeof err) == -1 && strstr(err, "got 'nonfinite'"));
    EXPECT(o.fp8_per_tensor == 0 && o.fp8_no_hadamard == 0);      /* block scales and the Hadamard map */
    EXPECT(parse("--dtype e4m3 --fp8-scale tensor --fp8-hadamard off", &o, err, sizeof err) == 0);
    EXPECT(o.fp8_per_tensor == 1 && o.fp8_no_hadamard == 1);
    EXPECT(parse("--fp8-scale block --fp8-hadamard on --dtype e4m3", &o, err, sizeof err) == 0);
    EXPECT(o.fp8_per_tensor == 0 && o.fp8_no_hadamard == 0);
    EXPECT(parse("--fp8-hadamard off --sweep sweeps/prefill.txt", &o, err, sizeof err) == 0);   /* for its e4m3 lines */

    EXPECT(parse("--variant 05b --csv out.csv --planner greedy --quiet --no-time", &o, err, sizeof err) == 0);
    EXPECT(o.variant && !strcmp(o.variant, "05b") && o.csv && !strcmp(o.csv, "out.csv"));
    EXPECT(o.planner && !strcmp(o.planner, "greedy") && o.quiet == 1 && o.no_time == 1);
    EXPECT(o.read_floor == 0);
    EXPECT(parse("--read-floor --sweep sweeps/decode.txt", &o, err, sizeof err) == 0);
    EXPECT(o.read_floor == 1 && o.sweep && !strcmp(o.sweep, "sweeps/decode.txt"));

    EXPECT(parse("--b 3 --m 10 --seqlens 4,10,1", &o, err, sizeof err) == 0);
    EXPECT(o.seqlens && o.shape.seqlens_k == o.seqlens);
    EXPECT(o.seqlens && o.seqlens[0] == 4 && o.seqlens[1] == 10 && o.seqlens[2] == 1);
    free(o.seqlens);

    EXPECT(parse("--b 4 --m 50 --seqlen-dist equal", &o, err, sizeof err) == 0);
    EXPECT(o.shape.seqlens_k != NULL);
    for (int b = 0; o.shape.seqlens_k && b < 4; b++) EXPECT(o.shape.seqlens_k[b] == 50);
    free(o.seqlens);
    EXPECT(parse("--b 64 --m 50 --seqlen-dist uniform", &o, err, sizeof err) == 0);
    for (int b = 0; o.shape.seqlens_k && b < 64; b++) EXPECT(o.shape.seqlens_k[b] >= 1 && o.shape.seqlens_k[b] <= 50);
    free(o.seqlens);

    EXPECT(parse("--help", &o, err, sizeof err) == 1);
    EXPECT(strstr(err, "--seqlen-dist") != NULL);
}

static void shape_validate_direct(void)
{
    char err[256];
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = 1; s.Hq = 4; s.Hkv = 2; s.N = 8; s.M = 8; s.d = 64; s.scale = 0.125f;
    EXPECT(shape_validate(&s, err, sizeof err) == 0);
    s.N = 0;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "every size must be >= 1"));
    s.N = 8; s.Hkv = 3;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "Hq must be a multiple of Hkv"));
    s.Hkv = 2; s.d = 4096;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "head dims up to 2048"));
    s.d = 64; s.B = 1000000; s.Hq = 1000; s.Hkv = 1000; s.N = 100000;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "beyond any GPU"));
    int lens[2] = {8, 9};
    s.B = 2; s.Hq = 4; s.Hkv = 2; s.N = 8;
    s.seqlens_k = lens;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "request 1 has length 9"));
    lens[1] = 1;
    EXPECT(shape_validate(&s, err, sizeof err) == 0);
}

static void sweep_lines(void)
{
    cli_opts base;
    char err[512];
    cli_defaults(&base);
    base.input_mode = INPUT_NORMAL;
    run_case c;
    const attn_shape *s = &c.shape;

    EXPECT(sweep_line("", &base, &c, err, sizeof err) == 0);
    EXPECT(sweep_line("   \t\n", &base, &c, err, sizeof err) == 0);
    EXPECT(sweep_line("# B Hq Hkv N M d causal", &base, &c, err, sizeof err) == 0);
    EXPECT(sweep_line("   # indented comment 1 2 3 4 5 6 7", &base, &c, err, sizeof err) == 0);

    int rc = sweep_line("2 8 2 128 256 64 1 dtype=bf16 inputs=outlier", &base, &c, err, sizeof err);
    EXPECT_MSG(rc == 1, "full line: %d (%s)", rc, err);
    EXPECT(s->B == 2 && s->Hq == 8 && s->Hkv == 2 && s->N == 128 && s->M == 256 && s->d == 64 && s->causal == 1);
    EXPECT(s->dtype == ATTN_BF16 && c.input_mode == INPUT_OUTLIER && c.seqlens == NULL && s->seqlens_k == NULL);
    EXPECT(s->scale == 0.125f && c.dist[0] == 0);
    EXPECT(base.shape.B == 2 && base.shape.N == 1024 && base.shape.dtype == ATTN_F16);   /* base untouched */

    rc = sweep_line("1 4 4 1 4096 128 0   # decode row", &base, &c, err, sizeof err);
    EXPECT_MSG(rc == 1, "line with a trailing comment: %d (%s)", rc, err);
    EXPECT(s->N == 1 && s->M == 4096 && s->d == 128 && s->causal == 0 && c.input_mode == INPUT_NORMAL);
    EXPECT(s->dtype == ATTN_F16);

    rc = sweep_line("3 2 1 1 32 64 0 seqlens=5,32,1 expect=ok", &base, &c, err, sizeof err);
    EXPECT_MSG(rc == 1, "seqlens line: %d (%s)", rc, err);
    EXPECT(c.seqlens && s->seqlens_k == c.seqlens && c.seqlens[0] == 5 && c.seqlens[1] == 32 && c.seqlens[2] == 1);
    EXPECT(c.dist[0] == 0);                                       /* given, not drawn */
    free(c.seqlens);

    rc = sweep_line("4 2 2 8 20 32 1 dist=equal", &base, &c, err, sizeof err);
    EXPECT_MSG(rc == 1, "dist line: %d (%s)", rc, err);
    for (int b = 0; c.seqlens && b < 4; b++) EXPECT(c.seqlens[b] == 20);
    EXPECT_MSG(!strcmp(c.dist, "equal"), "dist line: dist '%s', expected 'equal'", c.dist);
    free(c.seqlens);

    /* the base's dtype and input mode carry over unless the line names its own */
    base.shape.dtype = ATTN_BF16;
    base.input_mode = INPUT_OUTLIER;
    rc = sweep_line("1 2 2 8 8 64 0", &base, &c, err, sizeof err);
    EXPECT(rc == 1 && s->dtype == ATTN_BF16 && c.input_mode == INPUT_OUTLIER);
    rc = sweep_line("1 2 2 8 8 64 0 dtype=f16 inputs=normal", &base, &c, err, sizeof err);
    EXPECT(rc == 1 && s->dtype == ATTN_F16 && c.input_mode == INPUT_NORMAL);
    rc = sweep_line("1 2 2 8 8 64 0 dtype=e4m3 inputs=sparse-outlier", &base, &c, err, sizeof err);
    EXPECT(rc == 1 && s->dtype == ATTN_E4M3 && c.input_mode == INPUT_SPARSE_OUTLIER);
    for (int m = INPUT_NONFINITE_Q; m <= INPUT_NONFINITE_V; m++) {
        char line[64];
        snprintf(line, sizeof line, "1 2 2 8 8 64 1 inputs=%s", input_mode_name(m));
        rc = sweep_line(line, &base, &c, err, sizeof err);
        EXPECT_MSG(rc == 1 && c.input_mode == m && input_mode_parse(input_mode_name(m)) == m, "%s: %s", line, err);
    }
    rc = sweep_line("1 2 2 8 8 64 0 dtype=fp8", &base, &c, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "dtype=fp8; expected f16, bf16 or e4m3"));
    base.shape.dtype = ATTN_F16;
    base.input_mode = INPUT_NORMAL;

    /* short lines and bad fields: -1 with a message */
    struct { const char *line, *want; } bad[] = {
        {"1 2 3", "expected B Hq Hkv N M d causal"},
        {"1 2 2 8 8 64", "expected B Hq Hkv N M d causal"},
        {"1 6 4 8 8 64 0", "Hq must be a multiple of Hkv"},
        {"1 2 2 0 8 64 0", "N: 0 is out of range"},
        {"1 2 2 8 8 64 2", "causal: 2 is out of range"},
        {"1 2 2 8 x 64 0", "M: expected an integer"},
        {"1 2 2 8 8 64 0 dtype=fp8", "dtype=fp8"},
        {"1 2 2 8 8 64 0 inputs=zeros", "inputs=zeros"},
        {"1 2 2 8 8 64 0 color=red", "unknown key 'color'"},
        {"1 2 2 8 8 64 0 bf16", "'bf16' is not key=value"},
        {"2 2 2 8 8 64 0 seqlens=5", "1 seqlens for B=2"},
        {"1 2 2 8 8 64 0 seqlens=9", "request 0 has length 9"},
        {"1 2 2 8 8 64 0 dist=zipf", "dist=zipf"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        err[0] = 0;
        rc = sweep_line(bad[t].line, &base, &c, err, sizeof err);
        EXPECT_MSG(rc == -1, "'%s': %d, expected -1", bad[t].line, rc);
        EXPECT_MSG(strstr(err, bad[t].want) != NULL, "'%s': message '%s' lacks '%s'", bad[t].line, err, bad[t].want);
        free(c.seqlens);
    }
}

/* `len` bytes of `text` written to `dir`/`name`, whose path goes to path[256]: 0, or -1 */
static int write_text(const char *dir, const char *name, const char *text, size_t len, char path[256])
{
    snprintf(path, 256, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fwrite(text, 1, len, f);
    fclose(f);
    return 0;
}

/* sweep_read on a file written to `dir`/`name` with `len` bytes of `text`: its return, err and count */
static int read_sweep_text(const char *dir, const char *name, const char *text, size_t len, char *err, size_t n,
                           int *count)
{
    char path[256];
    if (write_text(dir, name, text, len, path)) return -2;
    cli_opts base;
    cli_defaults(&base);
    run_case *cases = NULL;
    *count = 0;
    int rc = sweep_read(path, &base, &cases, count, err, n);
    sweep_free(cases, *count);
    remove(path);
    return rc;
}

/* Issue 21: an empty sweep file, a comments-only one and a directory exited 2 with no message; a
 * short line with a NUL byte was "longer than 65535 characters"; the garbage-line message had the
 * line's '\n' inside its quotes. Each is now one line naming the file (and the line). */
static void sweep_files(void)
{
    char dir[] = "/tmp/attn_sweep_XXXXXX", err[1024];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    struct { const char *name, *text; size_t len; const char *want; } bad[] = {
        {"empty.txt", "", 0, "no shapes in it (the file is empty)"},
        {"comments.txt", "# B Hq Hkv N M d causal\n\n   # nothing\n", 38, "no shapes in it (only blank lines and comments)"},
        {"nul.txt", "1 2 3\0 4 5 6 7\n", 15, "nul.txt:1: a NUL byte at column 6: not a text file"},
        {"garbage.txt", "1 1 1 1 1 64 0\ngarbage line\n", 28, "garbage.txt:2: sweep line 'garbage line': expected B Hq Hkv N M d causal"},
        {"crlf.txt", "1 1 1\r\n", 7, "sweep line '1 1 1': expected"},
        {"ctrl.txt", "a\x01" "b\n", 4, "sweep line 'a\\x01b'"},
        {"field.txt", "1 1 1 1 1 64 0 model=\x7f\n", 23, "model=\\x7f"},
        {"hq.txt", "1 3 2 1 1 64 0\n", 15, "hq.txt:1: Hq 3, Hkv 2: Hq must be a multiple of Hkv"},
        {"dist.txt", "1000000000 1 1 1 1 64 0 dist=uniform\n", 37, "for up to 1048576 requests"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int count;
        int rc = read_sweep_text(dir, bad[i].name, bad[i].text, bad[i].len, err, sizeof err, &count);
        EXPECT_MSG(rc == -1 && count == 0, "%s: returned %d with %d shapes", bad[i].name, rc, count);
        EXPECT_MSG(strstr(err, bad[i].want) != NULL, "%s: message '%s' lacks '%s'", bad[i].name, err, bad[i].want);
        EXPECT_MSG(strchr(err, '\n') == NULL && strstr(err, bad[i].name), "%s: not one line naming the file: '%s'",
                   bad[i].name, err);
    }
    /* a line of 70000 characters: too long, said as such */
    char *lng = malloc(70002);
    if (lng) {
        memset(lng, '1', 70000);
        lng[70000] = '\n';
        int count;
        EXPECT(read_sweep_text(dir, "long.txt", lng, 70001, err, sizeof err, &count) == -1);
        EXPECT_MSG(strstr(err, "long.txt:1: line longer than 65535 characters"), "long line: %s", err);
        free(lng);
    }
    /* good lines, no final newline: every shape, in file order */
    int count;
    EXPECT(read_sweep_text(dir, "good.txt", "# x\n1 2 2 8 8 64 0\n\n2 4 1 1 100 128 0 dist=equal", 48, err,
                           sizeof err, &count) == 0 && count == 2);
    cli_opts base;
    cli_defaults(&base);
    run_case *cases;
    EXPECT(sweep_read(dir, &base, &cases, &count, err, sizeof err) == -1 && strstr(err, "a directory"));
    EXPECT(sweep_read("/nonexistent_attn/s.txt", &base, &cases, &count, err, sizeof err) == -1 &&
           strstr(err, "cannot open"));
    rmdir(dir);
}

/* A line longer than sweep_line's buffer must be parsed whole or refused, never cut short: here a
 * 1024-character line of 199 seqlens whose last one, 49999, would silently become 4999. */
static void sweep_long_line(void)
{
    cli_opts base;
    cli_defaults(&base);
    char line[2048], err[512] = "";
    int n = snprintf(line, sizeof line, "199 1 1 1 50000 64 0 seqlens=");
    for (int b = 0; b < 199; b++) n += snprintf(line + n, sizeof line - n, "%s%d", b ? "," : "", b == 198 ? 49999 : 1000);
    EXPECT(n == 1024);
    run_case c;
    int rc = sweep_line(line, &base, &c, err, sizeof err);
    EXPECT_MSG(rc == -1 || (rc == 1 && c.seqlens && c.seqlens[198] == 49999),
               "a %d-char line returned %d with last seqlen %d (written 49999): the line was truncated",
               n, rc, rc == 1 && c.seqlens ? c.seqlens[198] : -1);
    free(c.seqlens);
}

/* --kv-block: rung 06's keys per KV block, a multiple of 64 in 64..1024; 0 (unset) means the rung's own. */
static void cli_kv_block(void)
{
    cli_opts o;
    char err[512];
    EXPECT(parse("", &o, err, sizeof err) == 0 && o.kv_block == 0);
    EXPECT(parse("--kv-block 64", &o, err, sizeof err) == 0 && o.kv_block == 64);
    EXPECT(parse("--kv-block 128", &o, err, sizeof err) == 0 && o.kv_block == 128);
    EXPECT(parse("--kv-block 1024", &o, err, sizeof err) == 0 && o.kv_block == 1024);
    const char *want = "--kv-block: expected a multiple of 64 from 64 to 1024, got";
    expect_refused("--kv-block 100", want);
    expect_refused("--kv-block 0", want);
    expect_refused("--kv-block 32", want);
    expect_refused("--kv-block 1088", want);
    expect_refused("--kv-block -64", want);
    expect_refused("--kv-block 12x", "got '12x'");
    expect_refused("--kv-block", "got ''");
}

/* --flush: write+read (the default) or write; anything else is refused. */
static void cli_flush(void)
{
    cli_opts o;
    char err[512];
    EXPECT(parse("", &o, err, sizeof err) == 0 && o.flush == FLUSH_WRITE_READ);
    EXPECT(parse("--flush write", &o, err, sizeof err) == 0 && o.flush == FLUSH_WRITE);
    EXPECT(parse("--flush write --flush write+read", &o, err, sizeof err) == 0 && o.flush == FLUSH_WRITE_READ);
    expect_refused("--flush read", "--flush: expected write or write+read, got 'read'");
    expect_refused("--flush Write", "--flush: expected write or write+read");
    expect_refused("--flush", "--flush: expected write or write+read, got ''");
}

/* --warm-ms MS: 0 (off, the default) to 60000; anything else refused in one line. */
static void cli_warm_ms(void)
{
    cli_opts o;
    char err[512];
    EXPECT(parse("", &o, err, sizeof err) == 0 && o.warm_ms == 0);
    EXPECT(parse("--warm-ms 5000", &o, err, sizeof err) == 0 && o.warm_ms == 5000);
    EXPECT(parse("--warm-ms 0", &o, err, sizeof err) == 0 && o.warm_ms == 0);
    EXPECT(parse("--warm-ms 60000 --warmups 0", &o, err, sizeof err) == 0 && o.warm_ms == 60000 && o.warmups == 0);
    expect_refused("--warm-ms -1", "--warm-ms: -1 is out of range; allowed 0..60000");
    expect_refused("--warm-ms 60001", "--warm-ms: 60001 is out of range; allowed 0..60000");
    expect_refused("--warm-ms 5s", "--warm-ms: expected an integer, got '5s'");
    expect_refused("--warm-ms 2.5", "--warm-ms: expected an integer, got '2.5'");
    expect_refused("--warm-ms", "--warm-ms: expected an integer, got ''");
}

/* The warm-up rule, on worked examples: w warm-ups (the first included) have taken `spent` ms. */
static void timing_warm_rule(void)
{
    /* off (0): the count, cut short after a second, as before --warm-ms */
    EXPECT(bench_warm_more(1, 3, 0, 0.5) && bench_warm_more(2, 3, 0, 1.0) && !bench_warm_more(3, 3, 0, 1.5));
    EXPECT(!bench_warm_more(2, 3, 0, 1000.0));       /* two 500 ms launches: enough */
    EXPECT(!bench_warm_more(1, 0, 0, 0.0) && !bench_warm_more(1, 1, 0, 0.0));
    /* --warm-ms 5000 with 10 ms launches: on past the count until 5000 ms, then stop */
    EXPECT(bench_warm_more(3, 3, 5000, 30.0) && bench_warm_more(499, 3, 5000, 4990.0));
    EXPECT(!bench_warm_more(500, 3, 5000, 5000.0));
    /* ... never more than 1000 warm-ups, however short the launches */
    EXPECT(bench_warm_more(999, 3, 5000, 10.0) && !bench_warm_more(1000, 3, 5000, 10.0));
    /* ... and never fewer than the count asks (a warm_ms shorter than 3 launches) */
    EXPECT(bench_warm_more(2, 3, 10, 200.0) && !bench_warm_more(3, 3, 10, 300.0));
    /* ... nor cut short after a second: 600 ms launches with --warm-ms 3000 run 5 */
    EXPECT(bench_warm_more(2, 3, 3000, 1200.0) && bench_warm_more(4, 3, 3000, 2400.0) && !bench_warm_more(5, 3, 3000, 3000.0));
}

/* --page-size: 0 (contiguous, the default) or a multiple of 16 from 16 to 256; a sweep line's page=P
 * the same, over the command line's; shape_validate refuses any other. */
static void cli_page_size(void)
{
    cli_opts o;
    char err[512];
    EXPECT(parse("", &o, err, sizeof err) == 0 && o.shape.page_size == 0);
    EXPECT(parse("--page-size 16", &o, err, sizeof err) == 0 && o.shape.page_size == 16);
    EXPECT(parse("--page-size 48", &o, err, sizeof err) == 0 && o.shape.page_size == 48);
    EXPECT(parse("--page-size 256", &o, err, sizeof err) == 0 && o.shape.page_size == 256);
    EXPECT(parse("--page-size 64 --page-size 0", &o, err, sizeof err) == 0 && o.shape.page_size == 0);
    const char *want = "--page-size: expected 0 (contiguous) or a multiple of 16 from 16 to 256, got";
    expect_refused("--page-size 8", want);
    expect_refused("--page-size 24", want);
    expect_refused("--page-size 272", want);
    expect_refused("--page-size 512", want);
    expect_refused("--page-size -16", want);
    expect_refused("--page-size 16k", "got '16k'");
    expect_refused("--page-size", "got ''");

    cli_opts base;
    cli_defaults(&base);
    run_case c;
    EXPECT(sweep_line("4 8 1 1 1000 128 0 seqlens=1,17,1000,513 page=16", &base, &c, err, sizeof err) == 1);
    EXPECT(c.shape.page_size == 16 && c.seqlens && c.seqlens[1] == 17);
    free(c.seqlens);
    EXPECT(sweep_line("1 8 1 1 1000 128 0", &base, &c, err, sizeof err) == 1 && c.shape.page_size == 0);
    base.shape.page_size = 64;                                /* --page-size 64 --sweep FILE */
    EXPECT(sweep_line("1 8 1 1 1000 128 0", &base, &c, err, sizeof err) == 1 && c.shape.page_size == 64);
    EXPECT(sweep_line("1 8 1 1 1000 128 0 page=256", &base, &c, err, sizeof err) == 1 && c.shape.page_size == 256);
    EXPECT(sweep_line("1 8 1 1 1000 128 0 page=0", &base, &c, err, sizeof err) == 1 && c.shape.page_size == 0);
    const char *bad[] = {"page=8", "page=300", "page=x", "page="};
    for (int i = 0; i < 4; i++) {
        char line[64];
        snprintf(line, sizeof line, "1 8 1 1 1000 128 0 %s", bad[i]);
        err[0] = 0;
        EXPECT_MSG(sweep_line(line, &base, &c, err, sizeof err) == -1, "'%s' accepted", line);
        EXPECT_MSG(strstr(err, bad[i]) && strstr(err, "a multiple of 16 from 16 to 256"), "'%s': message '%s'", line, err);
    }

    attn_shape s = base.shape;
    s.page_size = 40;
    EXPECT(shape_validate(&s, err, sizeof err) != 0 && strstr(err, "page size 40"));
    s.page_size = 32;
    EXPECT(shape_validate(&s, err, sizeof err) == 0);
}

/* --help names the flags a learner may want, with their values. */
static void cli_help_lists_flags(void)
{
    cli_opts o;
    char err[CLI_ERR_MAX + 1];
    EXPECT(parse("--help", &o, err, sizeof err) == 1);
    /* the whole text fits in what main() gives it (a cut one would end mid-word) */
    EXPECT_MSG(strlen(err) < CLI_ERR_MAX - 1, "--help is %zu chars; main() holds %d", strlen(err), CLI_ERR_MAX - 1);
    EXPECT_MSG(strstr(err, "only reads K and V)") != NULL, "--help lost its end: %s", err);
    EXPECT_MSG(strstr(err, "--flush write|write+read") != NULL, "--help lacks --flush: %s", err);
    EXPECT_MSG(strstr(err, "--kv-block K") != NULL, "--help lacks --kv-block: %s", err);
    EXPECT_MSG(strstr(err, "--planner NAME") != NULL, "--help lacks --planner: %s", err);
    EXPECT_MSG(strstr(err, "--page-size P") != NULL, "--help lacks --page-size: %s", err);
    EXPECT_MSG(strstr(err, "--no-header") != NULL, "--help lacks --no-header: %s", err);
    EXPECT_MSG(strstr(err, "--warm-ms MS (0 to 60000; default 0: off)") && strstr(err, "power cap"),
               "--help lacks --warm-ms and why: %s", err);
    /* the defaults, the planner names and the .npy rules (issue 21) */
    EXPECT_MSG(strstr(err, "default --b 2 --hq 16 --hkv 16 --n 1024 --m 1024 --d 64") != NULL, "--help lacks the default shape: %s", err);
    EXPECT_MSG(strstr(err, "fa, greedy, balanced, auto (default auto)") != NULL, "--help lacks the planners: %s", err);
    EXPECT_MSG(strstr(err, "float16 or float32, C order") && strstr(err, "q [B, Hq, N, d], k and v [B, Hkv, M, d]"),
               "--help lacks the .npy rules: %s", err);
    /* a rung's own defaults, whatever came before --help; a rung without flags says so */
    cli_opts o2;
    EXPECT(parse_for(&decode_rung, "--b 3 --help", &o2, err, sizeof err) == 1);
    EXPECT_MSG(strstr(err, "default --b 8 --hq 8 --hkv 1 --n 1 --m 16384 --d 128") && strstr(err, "--n alone keeps --m"),
               "decode rung's --help: %s", err);
    EXPECT(parse_for(NULL, "--help", &o2, err, sizeof err) == 1);
    EXPECT_MSG(strstr(err, "own flags: none") && !strstr(err, "--planner NAME"), "plain rung's --help: %s", err);
}

/* Issue 21: a rung's own flags are checked as usage errors, before any shape or GPU question (an
 * unknown planner was reported "unsupported", exit 3, behind the default shape's refusal); a rung
 * without them refuses them; the rung's default shape is the one cli_parse starts from. */
static void cli_rung_flags(void)
{
    cli_opts o;
    char err[CLI_ERR_MAX];
    for (int i = 0; planner_names[i]; i++) {
        char line[64];
        snprintf(line, sizeof line, "--planner %s", planner_names[i]);
        EXPECT_MSG(parse_for(&decode_rung, line, &o, err, sizeof err) == 0, "%s: %s", line, err);
    }
    expect_refused("--planner nope", "--planner: expected one of fa, greedy, balanced, auto, got 'nope'");
    EXPECT(parse_for(NULL, "--planner fa", &o, err, sizeof err) == -1 && strstr(err, "this rung has no split planner"));
    EXPECT(parse_for(NULL, "--kv-block 128", &o, err, sizeof err) == -1 && strstr(err, "this rung has no KV blocks"));

    EXPECT(parse_for(&decode_rung, "", &o, err, sizeof err) == 0);
    EXPECT(o.shape.B == 8 && o.shape.Hq == 8 && o.shape.Hkv == 1 && o.shape.N == 1 && o.shape.M == 16384 && o.shape.d == 128);
    EXPECT_NEAR(o.shape.scale, 1.0 / sqrt(128.0), 1e-7);
    EXPECT(parse_for(&decode_rung, "--n 4", &o, err, sizeof err) == 0);       /* decode: --n alone keeps M */
    EXPECT_MSG(o.shape.N == 4 && o.shape.M == 16384, "--n 4: N=%d M=%d", o.shape.N, o.shape.M);
    EXPECT(parse_for(&decode_rung, "--b 2 --seqlens 7,16384", &o, err, sizeof err) == 0);
    free(o.seqlens);
}

/* Issue 21: with --load the files give the shape, so shape flags and per-request lengths are refused
 * (--seqlens was counted against the default --b, --n silently ignored), and so is --sweep. */
static void cli_load_conflicts(void)
{
    expect_refused("--load dir --n 5", "--load: the shape comes from q.npy, k.npy and v.npy; drop --n");
    expect_refused("--load dir --causal --hkv 2", "drop --hkv");
    expect_refused("--b 3 --load dir", "drop --b");
    expect_refused("--load dir --seqlens 5", "per-request KV lengths (--seqlens, --seqlen-dist) cannot be given with --load");
    expect_refused("--load dir --seqlen-dist uniform", "cannot be given with --load");
    expect_refused("--load dir --sweep sweeps/decode.txt", "--load and --sweep: give one or the other");
    cli_opts o;
    char err[512];
    EXPECT(parse("--load dir --causal --dtype bf16 --scale 0.5 --no-check", &o, err, sizeof err) == 0);
    EXPECT(o.load && !strcmp(o.load, "dir") && o.shape.causal && o.shape.dtype == ATTN_BF16);
    /* a billion requests' lengths are refused, not drawn */
    expect_refused("--b 1000000000 --seqlen-dist uniform", "per-request KV lengths are for up to 1048576 requests");
}

static void describe_stub(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    (void)s;
    snprintf(buf, len, "planner=%s;block=%d", env->planner ? env->planner : "auto", env->kv_block);
}

/* The row's extra field: what the plots read from it. A batch whose lengths were drawn from a
 * distribution names it (dist=, as on the sweep line); given lengths do not; the sum and max follow;
 * a paged KV cache says page=P. */
static void report_extra_fields(void)
{
    cli_opts base;
    char err[512], extra[1024];
    cli_defaults(&base);
    run_case c;
    EXPECT(sweep_line("4 2 2 1 20 32 0 dist=equal inputs=outlier", &base, &c, err, sizeof err) == 1);
    report_row row;
    memset(&row, 0, sizeof row);
    row.shape = c.shape;
    row.checked = 1;
    row.c.rows_checked = 8;
    row.c.rows_total = 8;
    row.timed = 1;
    row.t.runs = 20;
    row.t.warmups = 3;
    rung r;
    memset(&r, 0, sizeof r);
    r.describe = describe_stub;
    attn_env env;
    memset(&env, 0, sizeof env);
    env.planner = "balanced";
    env.kv_block = 64;
    report_extra(&row, &c, "write+read", &r, &env, extra, sizeof extra);
    const char *want = "checked=all:8/8;rmse=0;runs=20;warmups=3;flush=write+read;inputs=outlier;"
                       "planner=balanced;block=64;dist=equal;seqlens_sum=80;seqlens_max=20;";
    EXPECT_MSG(!strcmp(extra, want), "extra '%s', expected '%s'", extra, want);
    free(c.seqlens);

    /* the command line's --seqlen-dist names it too */
    cli_opts o;
    EXPECT(parse("--b 3 --m 50 --seqlen-dist uniform", &o, err, sizeof err) == 0);
    run_case one = {o.shape, o.input_mode, o.seqlens, "", ""};
    snprintf(one.dist, sizeof one.dist, "%s", o.seqlen_dist);
    memset(&row, 0, sizeof row);
    row.shape = one.shape;
    report_extra(&row, &one, "write", NULL, &env, extra, sizeof extra);
    EXPECT_MSG(!strncmp(extra, "dist=uniform;seqlens_sum=", 25), "extra '%s' lacks dist=uniform first", extra);
    free(o.seqlens);

    /* given lengths: no dist=; equal lengths (no seqlens): neither */
    EXPECT(sweep_line("2 2 2 1 20 32 0 seqlens=5,20", &base, &c, err, sizeof err) == 1);
    row.shape = c.shape;
    row.timed = 1;
    row.t.runs = 20;
    row.t.warmups = 3;
    report_extra(&row, &c, "write", NULL, &env, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "runs=20;warmups=3;flush=write;seqlens_sum=25;seqlens_max=20;"), "extra '%s'", extra);
    /* --warm-ms: warm_ms= after the count of warm-ups it ran to; nothing when off (above) */
    row.t.warmups = 412;
    row.t.warm_ms = 5000;
    report_extra(&row, &c, "write", NULL, &env, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "runs=20;warmups=412;warm_ms=5000;flush=write;seqlens_sum=25;seqlens_max=20;"), "extra '%s'", extra);
    row.t.warmups = 3;
    row.t.warm_ms = 0;
    free(c.seqlens);
    EXPECT(sweep_line("2 2 2 1 20 32 0", &base, &c, err, sizeof err) == 1);
    row.shape = c.shape;
    row.timed = 0;
    report_extra(&row, &c, "write", NULL, &env, extra, sizeof extra);
    EXPECT_MSG(extra[0] == 0, "extra '%s', expected empty", extra);

    /* a paged KV cache: page=P, as on the sweep line, before the rung's facts */
    EXPECT(sweep_line("2 2 2 1 20 32 0 page=16", &base, &c, err, sizeof err) == 1);
    row.shape = c.shape;
    report_extra(&row, &c, "write", &r, &env, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "page=16;planner=balanced;block=64;"), "extra '%s'", extra);

    /* a buffer too small keeps what fits, terminated */
    EXPECT(sweep_line("4 2 2 1 20 32 0 dist=longtail", &base, &c, err, sizeof err) == 1);
    row.shape = c.shape;
    report_extra(&row, &c, "write", &r, &env, extra, 16);
    EXPECT_MSG(strlen(extra) < 16, "extra '%s' overran 16 bytes", extra);
    free(c.seqlens);
}

/* model=NAME on a sweep line: a label the CSV carries (extra field, model=NAME; last), on every row
 * of the line, also one that did not run; names that would break the field are refused. */
static void sweep_model_label(void)
{
    cli_opts base;
    char err[512], extra[1024];
    cli_defaults(&base);
    run_case c;
    EXPECT(sweep_line("4 32 8 4096 4096 128 1 dtype=bf16 model=Llama-3.1-8B", &base, &c, err, sizeof err) == 1);
    EXPECT_MSG(!strcmp(c.model, "Llama-3.1-8B"), "model '%s'", c.model);
    EXPECT(c.shape.dtype == ATTN_BF16 && c.shape.Hq == 32 && c.shape.Hkv == 8);
    EXPECT(sweep_line("1 32 8 1 4096 128 0 model=Llama-3.1-8B+Mistral-7B page=64", &base, &c, err, sizeof err) == 1);
    EXPECT_MSG(!strcmp(c.model, "Llama-3.1-8B+Mistral-7B") && c.shape.page_size == 64, "model '%s'", c.model);
    EXPECT(sweep_line("1 2 2 8 8 64 0", &base, &c, err, sizeof err) == 1 && c.model[0] == 0);
    /* 63 characters fit, 64 do not */
    char line[256], name[80];
    memset(name, 'a', 63);
    name[63] = 0;
    snprintf(line, sizeof line, "1 2 2 8 8 64 0 model=%s", name);
    EXPECT_MSG(sweep_line(line, &base, &c, err, sizeof err) == 1 && strlen(c.model) == 63, "63 chars: %s", err);
    snprintf(line, sizeof line, "1 2 2 8 8 64 0 model=%sa", name);
    EXPECT(sweep_line(line, &base, &c, err, sizeof err) == -1 && strstr(err, "up to 63 characters"));
    const char *bad[] = {"model=", "model=a;b", "model=a,b", "model=Llama 3", "model=x=y", "model=Qwen/2.5"};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        snprintf(line, sizeof line, "1 2 2 8 8 64 0 %s", bad[t]);
        err[0] = 0;
        int rc = sweep_line(line, &base, &c, err, sizeof err);
        EXPECT_MSG(rc == -1, "'%s' accepted", line);
        EXPECT_MSG(strstr(err, "expected a name of letters, digits and . _ - +") != NULL || strstr(err, "not key=value"),
                   "'%s': message '%s'", line, err);
    }

    /* a row that ran: model= last in the extra field, after page= and the rung's facts */
    EXPECT(sweep_line("2 2 2 1 20 32 0 page=16 model=Phi-3-mini", &base, &c, err, sizeof err) == 1);
    report_row row;
    memset(&row, 0, sizeof row);
    row.shape = c.shape;
    row.timed = 1;
    row.t.runs = 20;
    row.t.warmups = 3;
    rung r;
    memset(&r, 0, sizeof r);
    r.describe = describe_stub;
    attn_env env;
    memset(&env, 0, sizeof env);
    env.planner = "balanced";
    env.kv_block = 64;
    report_extra(&row, &c, "write", &r, &env, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "runs=20;warmups=3;flush=write;page=16;planner=balanced;block=64;model=Phi-3-mini;"),
               "extra '%s'", extra);
    /* a row that did not run (refused, skipped, failed): page= and model= still tell its line apart */
    report_label(&c, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "page=16;model=Phi-3-mini;"), "label '%s'", extra);
    EXPECT(sweep_line("2 2 2 1 20 32 0 model=Gemma-2-9B", &base, &c, err, sizeof err) == 1);
    report_label(&c, extra, sizeof extra);
    EXPECT_MSG(!strcmp(extra, "model=Gemma-2-9B;"), "label '%s'", extra);
    EXPECT(sweep_line("2 2 2 1 20 32 0", &base, &c, err, sizeof err) == 1);
    report_label(&c, extra, sizeof extra);
    EXPECT_MSG(extra[0] == 0, "label '%s', expected empty", extra);
    report_label(&c, extra, 0);                                  /* no room: nothing written */
}

/* report_emit (report.c), where every row of the driver goes: the table's header line before the
 * first row and never again, none at all with --no-header (make stage prints one for all its
 * variants), nothing on stdout with --quiet; the CSV gets its metadata and column lines once, then a
 * row per call, whatever the table does. stdout goes to a file for the test. */
static int count_lines(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    int n = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) n += !strncmp(line, prefix, strlen(prefix));
    fclose(f);
    return n;
}

static void report_emit_header_once(void)
{
    char dir[] = "/tmp/attn_emit_XXXXXX", table[64], csv[64], err[512];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    snprintf(table, sizeof table, "%s/table.txt", dir);
    snprintf(csv, sizeof csv, "%s/rows.csv", dir);
    cli_opts o;
    EXPECT(parse("--no-header", &o, err, sizeof err) == 0 && o.no_header == 1);
    EXPECT(parse("", &o, err, sizeof err) == 0 && o.no_header == 0);
    device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "test device");
    report_row row;
    memset(&row, 0, sizeof row);
    row.rung = "00";
    row.shape = o.shape;
    row.status = "unsupported: a test row";
    row.extra = "";
    /* {quiet, header_done, csv}: the driver's, the --no-header one's, the --quiet one's */
    const report_out outs[3] = {{0, 0, csv, &dev, 0}, {0, 1, NULL, &dev, 0}, {1, 0, csv, &dev, 0}};
    const int headers[3] = {1, 0, 0}, rows[3] = {3, 3, 0}, csv_rows[3] = {3, 3, 6};
    fflush(stdout);
    int saved = dup(1);
    for (int k = 0; k < 3; k++) {
        FILE *f = fopen(table, "w");
        if (!f || saved < 0) { EXPECT_MSG(0, "cannot redirect stdout"); break; }
        dup2(fileno(f), 1);
        report_out out = outs[k];
        for (int i = 0; i < 3; i++) report_emit(&out, &row);
        fflush(stdout);
        dup2(saved, 1);
        fclose(f);
        EXPECT_MSG(count_lines(table, "rung ") == headers[k], "case %d: %d header lines, expected %d", k,
                   count_lines(table, "rung "), headers[k]);
        EXPECT_MSG(count_lines(table, "00 ") == rows[k], "case %d: %d rows, expected %d", k, count_lines(table, "00 "),
                   rows[k]);
        EXPECT_MSG(count_lines(csv, "00,") == csv_rows[k], "case %d: %d CSV rows, expected %d", k,
                   count_lines(csv, "00,"), csv_rows[k]);
    }
    if (saved >= 0) close(saved);
    EXPECT_MSG(count_lines(csv, "# device: test device") == 1 && count_lines(csv, "rung,B,Hq,") == 1,
               "the CSV's metadata and column lines are not there once");
    remove(table);
    remove(csv);
    rmdir(dir);
}

/* sweeps/models.txt (run from the repository root, as make test does): every line parses, names
 * its model, and is the prefill (causal, bfloat16, B·N = 16384) or a decode line (N = 1, bfloat16;
 * contiguous or on 64-key pages); each model has one prefill line, and its decode lines
 * both ways. */
static void sweep_models_file(void)
{
    FILE *f = fopen("sweeps/models.txt", "r");
    EXPECT_MSG(f != NULL, "cannot open sweeps/models.txt (run from the repository root)");
    if (!f) return;
    cli_opts base;
    cli_defaults(&base);
    char line[1024], err[512], models[16][RUN_MODEL_MAX];
    int lines = 0, nm = 0, prefill[16] = {0}, decode[16] = {0}, paged[16] = {0}, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        run_case c;
        int rc = sweep_line(line, &base, &c, err, sizeof err);
        EXPECT_MSG(rc >= 0, "sweeps/models.txt:%d: %s", lineno, err);
        free(c.seqlens);
        if (rc != 1) continue;
        lines++;
        const attn_shape *s = &c.shape;
        EXPECT_MSG(c.model[0] != 0, "sweeps/models.txt:%d: no model=", lineno);
        int m = 0;
        while (m < nm && strcmp(models[m], c.model)) m++;
        if (m == nm && nm < 16) snprintf(models[nm++], RUN_MODEL_MAX, "%s", c.model);
        if (m >= 16) continue;
        if (s->N > 1) {
            EXPECT_MSG(s->causal && s->N == s->M && s->B * s->N == 16384 && s->dtype == ATTN_BF16 && !s->page_size,
                       "sweeps/models.txt:%d: a prefill line that is not causal bfloat16 B·N = 16384", lineno);
            prefill[m]++;
        } else if (s->page_size) {
            EXPECT_MSG(s->page_size == 64 && s->dtype == ATTN_BF16, "sweeps/models.txt:%d: a paged line not bfloat16 page=64", lineno);
            paged[m]++;
        } else {
            EXPECT_MSG(s->dtype == ATTN_BF16, "sweeps/models.txt:%d: a contiguous decode line not bfloat16", lineno);
            decode[m]++;
        }
    }
    fclose(f);
    EXPECT_MSG(lines > 0 && nm > 0, "%d lines, %d model labels", lines, nm);
    for (int m = 0; m < nm; m++)
        EXPECT_MSG(prefill[m] == 1 && decode[m] > 0 && paged[m] == decode[m], "%s: %d prefill, %d decode, %d paged "
                   "lines; expected one prefill line, and a paged line for each decode line", models[m], prefill[m],
                   decode[m], paged[m]);
}

/* ---------------------------------------------------------------- issue 35 */

/* --h is the default of --hq and --hkv: an --hq or --hkv anywhere wins, so every order of the same
 * flags gives the same heads (--hq 8 --hkv 3 --h 8 was Hkv = 8, while --h 8 --hkv 3 was refused). */
static void cli_head_flags_any_order(void)
{
    const char *refused[] = {"--hq 8 --hkv 3 --h 8", "--h 8 --hkv 3", "--hkv 3 --h 8", "--hkv 3 --hq 8 --h 8"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        expect_refused(refused[i], "--hkv 3: Hq must be a multiple of Hkv");
        expect_refused(refused[i], " 8 --hkv 3:");
    }
    struct { const char *line; int hq, hkv; } good[] = {
        {"--h 8", 8, 8}, {"--h 4 --h 8", 8, 8}, {"--hkv 4 --h 8", 8, 4}, {"--h 8 --hkv 4", 8, 4},
        {"--hq 16 --h 8", 16, 8}, {"--h 8 --hq 16", 16, 8}, {"--hq 32 --hkv 8 --h 4", 32, 8}, {"--h 4 --hkv 8 --hq 32", 32, 8},
        {"--hkv 8", 16, 8},                                       /* the default Hq 16 */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cli_opts o;
        char err[512];
        int rc = parse(good[i].line, &o, err, sizeof err);
        EXPECT_MSG(rc == 0 && o.shape.Hq == good[i].hq && o.shape.Hkv == good[i].hkv, "'%s': rc %d Hq %d Hkv %d, expected %d %d (%s)",
                   good[i].line, rc, o.shape.Hq, o.shape.Hkv, good[i].hq, good[i].hkv, err);
    }
}

/* --scale in float's normal range, checked on the value the kernels get: 1e-300 became 0, 1e300 inf */
static void cli_scale_in_float_range(void)
{
    const char *bad[] = {"1e-300", "1e300", "1e-40", "3.5e38", "1e39"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "--scale %s", bad[i]);
        expect_refused(line, "is outside float's normal range");
    }
    expect_refused("--scale nan", "--scale: expected a positive number");
    const struct { const char *v; float want; } good[] = {{"0.125", 0.125f}, {"1e-30", 1e-30f}, {"3e38", 3e38f}, {"2e-38", 2e-38f}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cli_opts o;
        char err[512], line[64];
        snprintf(line, sizeof line, "--scale %s", good[i].v);
        EXPECT_MSG(parse(line, &o, err, sizeof err) == 0 && o.shape.scale == good[i].want && o.have_scale, "'%s': %s", line, err);
    }
}

/* --help anywhere wins: also over a bad value before it (--n 0 --help printed the error) */
static void cli_help_wins(void)
{
    static char err[CLI_ERR_MAX];
    const char *lines[] = {"--n 0 --help", "--bogus -h", "--help --d 99999", "--hq 3 --hkv 2 --help", "--csv --help"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        cli_opts o;
        int rc = parse(lines[i], &o, err, sizeof err);
        EXPECT_MSG(rc == 1 && strstr(err, "usage: prog") && strstr(err, "only reads K and V)"), "'%s': %d", lines[i], rc);
    }
    cli_opts o;
    EXPECT(parse("--help", &o, err, sizeof err) == 1);
    EXPECT_MSG(strstr(err, "--check-sweep FILE") && strstr(err, "'ok LINE' or 'bad LINE: reason'") &&
               strstr(err, "an\n          --hq or --hkv wins over it") && strstr(err, "a failed write of --save or --csv"),
               "--help lacks --check-sweep, the --h rule or the write exit");
}

/* A message that echoes an argument escapes its control bytes and stops near 1 KB */
static void cli_messages_escaped_and_capped(void)
{
    cli_opts o;
    char err[4096];
    char *argv[4] = {"prog", "--variant\n\x1b[31mred", NULL, NULL};
    cli_defaults_for(&o, &with_flags);
    EXPECT(cli_parse(2, argv, &o, err, sizeof err) == -1);
    EXPECT_MSG(strstr(err, "unknown argument '--variant\\x0a\\x1b[31mred'") && !strchr(err, '\n') && !strchr(err, 0x1b),
               "message '%s'", err);
    char *big = malloc(100001);
    if (big) {
        memset(big, 'x', 100000);
        big[100000] = 0;
        argv[1] = "--dtype";
        argv[2] = big;
        cli_defaults_for(&o, &with_flags);
        EXPECT(cli_parse(3, argv, &o, err, sizeof err) == -1);
        size_t len = strlen(err);
        EXPECT_MSG(len > 900 && len < 1100 && !strcmp(err + len - 3, "..."), "a 100000-byte value: message of %zu bytes", len);
        free(big);
    }
    EXPECT(cli_message(err, sizeof err, "--variant: got '%s'", "a\nb\x7f") == -1);
    EXPECT_MSG(!strcmp(err, "--variant: got 'a\\x0ab\\x7f'"), "cli_message: '%s'", err);
}

static int make_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* cli_check_files, on a folder of its own: each path flag refused in one line naming it and the
 * path, before any GPU work; what is fine passes, and leaves nothing behind. */
static void cli_files_checked(void)
{
    char dir[] = "/tmp/attn_files_XXXXXX", p[256], q[300], err[1200];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    cli_opts o;
    char file[128], fifo[128], sub[128];
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    EXPECT(make_file(file, "x\n") == 0 && mkfifo(fifo, 0600) == 0 && mkdir(sub, 0755) == 0);
    alarm(10);                                          /* a FIFO opened by mistake ends the run, not the machine */
    struct { const char *flag, *path, *want; } bad[] = {
        {"--save", file, ": a regular file, not a directory"},
        {"--save", NULL, "/file is a regular file, not a directory"},     /* file/x */
        {"--save", fifo, ": a FIFO, not a directory"},
        {"--csv", sub, ": a directory; give a file name"},
        {"--csv", fifo, ": a FIFO, not a regular file"},
        {"--csv", NULL, "its folder"},                                     /* nodir/x.csv */
        {"--csv", NULL, "is a regular file, not a directory"},             /* file/x.csv */
        {"--sweep", fifo, ": a FIFO, not a regular file"},
        {"--sweep", sub, ": a directory; give a sweep file"},
        {"--sweep", NULL, "cannot open (No such file or directory)"},      /* missing */
        {"--check-sweep", fifo, ": a FIFO, not a regular file"},
        {"--load", file, ": a regular file, not a directory"},
        {"--load", NULL, "cannot open (No such file or directory)"},       /* missing */
        {"--load", sub, ": q.npy: cannot open (No such file or directory)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = bad[i].path;
        if (!path) {
            snprintf(p, sizeof p, "%s/%s", dir, i == 1 ? "file/x" : i == 5 ? "nodir/x.csv" : i == 6 ? "file/x.csv" : "missing");
            path = p;
        }
        cli_defaults(&o);
        if (!strcmp(bad[i].flag, "--save")) o.save = path;
        else if (!strcmp(bad[i].flag, "--csv")) o.csv = path;
        else if (!strcmp(bad[i].flag, "--sweep")) o.sweep = path;
        else if (!strcmp(bad[i].flag, "--check-sweep")) o.check_sweep = path;
        else o.load = path;
        err[0] = 0;
        int rc = cli_check_files(&o, err, sizeof err);
        snprintf(q, sizeof q, "%s %s", bad[i].flag, path);
        EXPECT_MSG(rc == -1 && strstr(err, q) == err && strstr(err, bad[i].want) && !strchr(err, '\n'),
                   "%s %s: %d '%s', expected '%s'", bad[i].flag, path, rc, err, bad[i].want);
    }
    /* --load DIR: its .npy files regular; a FIFO named k.npy refused at once; a backward rung's do.npy */
    snprintf(p, sizeof p, "%s/q.npy", sub);
    EXPECT(make_file(p, "") == 0);
    snprintf(p, sizeof p, "%s/k.npy", sub);
    EXPECT(mkfifo(p, 0600) == 0);
    cli_defaults(&o);
    o.load = sub;
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == -1 && strstr(err, "sub: k.npy is a FIFO, not a regular file"), "'%s'", err);
    remove(p);
    EXPECT(make_file(p, "") == 0);
    snprintf(p, sizeof p, "%s/v.npy", sub);
    EXPECT(make_file(p, "") == 0);
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == 0, "q, k, v regular: '%s'", err);
    o.backward = 1;
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == -1 && strstr(err, "do.npy: cannot open"), "backward: '%s'", err);
    /* --save DIR with o.npy a directory (the run would fail after the GPU work) */
    cli_defaults(&o);
    snprintf(p, sizeof p, "%s/o.npy", sub);
    EXPECT(mkdir(p, 0755) == 0);
    o.save = sub;
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == -1 && strstr(err, "o.npy in it is a directory"), "'%s'", err);
    o.backward = 1;                                     /* a backward rung writes dq, dk, dv: o.npy is no matter */
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == 0, "backward, o.npy a directory: '%s'", err);
    rmdir(p);
    /* good paths pass and leave nothing: a missing --save folder is made and removed again; a new
     * --csv file is not made before its first row */
    cli_defaults(&o);
    snprintf(p, sizeof p, "%s/new/a/b", dir);
    snprintf(q, sizeof q, "%s/new.csv", dir);
    o.save = p;
    o.csv = q;
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == 0, "a new --save folder, a new --csv: '%s'", err);
    snprintf(p, sizeof p, "%s/new", dir);
    EXPECT_MSG(access(p, F_OK) != 0 && access(q, F_OK) != 0, "the check left %s or %s behind", p, q);
    o.save = sub;
    o.csv = file;                                       /* an existing file: appended to */
    EXPECT_MSG(cli_check_files(&o, err, sizeof err) == 0, "an existing folder and CSV: '%s'", err);
    /* where this user may not write (root may write anywhere: then skipped) */
    if (geteuid() != 0) {
        snprintf(p, sizeof p, "%s/ro", dir);
        EXPECT(mkdir(p, 0555) == 0);
        cli_defaults(&o);
        o.save = p;
        EXPECT_MSG(cli_check_files(&o, err, sizeof err) == -1 && strstr(err, "cannot write in it"), "read-only --save: '%s'", err);
        snprintf(q, sizeof q, "%s/ro/x.csv", dir);
        cli_defaults(&o);
        o.csv = q;
        EXPECT_MSG(cli_check_files(&o, err, sizeof err) == -1 && strstr(err, "cannot make a file in"), "read-only --csv: '%s'", err);
        rmdir(p);
    }
    alarm(0);
    snprintf(p, sizeof p, "%s/q.npy", sub); remove(p);
    snprintf(p, sizeof p, "%s/k.npy", sub); remove(p);
    snprintf(p, sizeof p, "%s/v.npy", sub); remove(p);
    rmdir(sub);
    remove(file);
    remove(fifo);
    rmdir(dir);
}

/* --check-sweep's lines: what sweep_check_file prints for a file, and its return */
static int check_text(const char *dir, const char *text, size_t len, char *out, size_t n, char *err, size_t en)
{
    char path[256];
    if (write_text(dir, "check.txt", text, len, path)) return -9;
    cli_opts base;
    cli_defaults(&base);
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = open_memstream(&buf, &blen);
    if (!mem) return -9;
    err[0] = 0;
    int rc = sweep_check_file(path, &base, mem, err, en);
    fclose(mem);
    snprintf(out, n, "%s", buf ? buf : "");
    free(buf);
    /* the rungs' own reading agrees: sweep_read takes the file exactly when every line is ok */
    run_case *cases = NULL;
    int count = 0;
    char why[1024];
    int rr = sweep_read(path, &base, &cases, &count, why, sizeof why);
    if (rr == 0) sweep_free(cases, count);
    if ((rr == 0) != (rc == 0)) snprintf(out, n, "DISAGREE: sweep_read %d ('%s'), --check-sweep %d", rr, why, rc);
    remove(path);
    return rc;
}

static void sweep_check_lines(void)
{
    char dir[] = "/tmp/attn_check_XXXXXX", out[4096], err[1024];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    const char text[] = "# B Hq Hkv N M d causal\n1 1 1 8 8 64 0\n1 3 2 8 8 64 0\n\n2 2 2 4 4 64 1 dtype=bf16 # x\n"
                        "garbage\n1 2 3\0 4 5 6 7\n1 1 1 1 1 64 2\n1 8 1 1 100 64 0 page=24\n1 1 1 1 1 64 0 inputs=sparse-outlier";
    int rc = check_text(dir, text, sizeof text - 1, out, sizeof out, err, sizeof err);
    const char *want = "ok 2\nbad 3: Hq 3, Hkv 2: Hq must be a multiple of Hkv (MHA, GQA or MQA)\nok 5\n"
                       "bad 6: sweep line 'garbage': expected B Hq Hkv N M d causal [key=value ...]\n"
                       "bad 7: a NUL byte at column 6: not a text file\nbad 8: causal: 2 is out of range; allowed 0..1\n"
                       "bad 9: sweep line: page=24; expected 0 (contiguous) or a multiple of 16 from 16 to 256\nok 10\n";
    EXPECT_MSG(rc == 1 && !strcmp(out, want), "returned %d, printed:\n%s---\nexpected:\n%s", rc, out, want);
    /* every line ok: 0 */
    const char *good = "# x\n1 1 1 8 8 64 0\n2 4 1 1 100 128 0 dist=equal\r\n";
    rc = check_text(dir, good, strlen(good), out, sizeof out, err, sizeof err);
    EXPECT_MSG(rc == 0 && !strcmp(out, "ok 2\nok 3\n"), "all ok: %d '%s'", rc, out);
    /* a byte-order mark: line 1 bad, saying so; the lines after still checked */
    rc = check_text(dir, "\xef\xbb\xbf" "1 1 1 8 8 64 0\n1 1 1 8 8 64 0\n", 33, out, sizeof out, err, sizeof err);
    EXPECT_MSG(rc == 1 && strstr(out, "bad 1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF)") &&
               strstr(out, "\nok 2\n"), "BOM: %d '%s'", rc, out);
    /* a line too long: bad, and the next line still read as the next line */
    char *lng = malloc(70020);
    if (lng) {
        memset(lng, '1', 70000);
        memcpy(lng + 70000, "\n1 1 1 8 8 64 0\n", 16);
        rc = check_text(dir, lng, 70016, out, sizeof out, err, sizeof err);
        EXPECT_MSG(rc == 1 && !strcmp(out, "bad 1: line longer than 65535 characters\nok 2\n"), "long line: %d '%s'", rc, out);
        free(lng);
    }
    /* no shape at all, or not a file: -1 with one line naming it, nothing printed */
    rc = check_text(dir, "# only\n\n", 8, out, sizeof out, err, sizeof err);
    EXPECT_MSG(rc == -1 && !out[0] && strstr(err, "--check-sweep ") && strstr(err, "no shapes in it (only blank lines and comments)"),
               "comments only: %d '%s' '%s'", rc, out, err);
    cli_opts base;
    cli_defaults(&base);
    EXPECT(sweep_check_file(dir, &base, stdout, err, sizeof err) == -1 && strstr(err, "a directory"));
    /* sweep_read names a byte-order mark too, and a FIFO at once */
    char path[128];
    snprintf(path, sizeof path, "%s/bom.txt", dir);
    EXPECT(make_file(path, "\xef\xbb\xbf" "1 1 1 8 8 64 0\n") == 0);
    run_case *cases = NULL;
    int count = 0;
    EXPECT_MSG(sweep_read(path, &base, &cases, &count, err, sizeof err) == -1 && strstr(err, "bom.txt:1: the file starts with a UTF-8 byte-order mark"),
               "sweep_read of a BOM: '%s'", err);
    remove(path);
    snprintf(path, sizeof path, "%s/fifo.txt", dir);
    EXPECT(mkfifo(path, 0600) == 0);
    alarm(10);
    EXPECT_MSG(sweep_read(path, &base, &cases, &count, err, sizeof err) == -1 && strstr(err, "a FIFO, not a regular file"), "'%s'", err);
    EXPECT(sweep_check_file(path, &base, stdout, err, sizeof err) == -1 && strstr(err, "a FIFO, not a regular file"));
    alarm(0);
    remove(path);
    rmdir(dir);
}

/* Every sweep file the course ships, and the GPU matrix, passes --check-sweep (the peers ask it) */
static void sweep_files_shipped_check(void)
{
    const char *files[] = {"sweeps/prefill.txt", "sweeps/decode.txt", "sweeps/varlen.txt", "sweeps/models.txt",
                           "sweeps/article.txt", "sweeps/tour.txt", "tests/gpu_cases.txt"};
    cli_opts base;
    cli_defaults(&base);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (access(files[i], F_OK)) continue;
        char *buf = NULL, err[1024];
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) continue;
        int rc = sweep_check_file(files[i], &base, mem, err, sizeof err);
        fclose(mem);
        EXPECT_MSG(rc == 0 && buf && !strstr(buf, "bad "), "%s: %d %s", files[i], rc, buf && strstr(buf, "bad ") ? strstr(buf, "bad ") : err);
        free(buf);
    }
}

const test_case TESTS_cli[] = {
    {"cli: sizes <= 0 and a non-positive scale are refused", cli_rejects_nonpositive},
    {"cli: non-integer and missing values are refused", cli_rejects_non_integer},
    {"cli: Hq not a multiple of Hkv is refused", cli_rejects_head_ratio},
    {"cli: unknown flags and missing string values are refused", cli_rejects_unknown_flag},
    {"cli: head dim outside 1..2048 is refused", cli_rejects_head_dim},
    {"cli: bad dtype / inputs / seqlen-dist are refused", cli_rejects_bad_enums},
    {"cli: seqlens count mismatch, seqlen > M, malformed lists are refused", cli_rejects_seqlens},
    {"cli: good arguments parse (--n sets M, --m keeps N, --h sets both, scale 1/sqrt(d))", cli_good_arguments},
    {"cli: shape_validate names what is wrong", shape_validate_direct},
    {"cli: a rung's own flags (--planner, --kv-block) are usage errors; its default shape applies", cli_rung_flags},
    {"cli: --load refuses shape flags, --seqlens and --sweep (the files give the shape)", cli_load_conflicts},
    {"cli: sweep_read: empty, comments-only, a directory, a NUL byte, a long or garbage line -> one line", sweep_files},
    {"cli: sweep_line (blank/comment 0, full line 1 with fields, short/bad line -1)", sweep_lines},
    {"cli: sweep_line refuses or fully parses a line longer than 1023 chars (no silent truncation)", sweep_long_line},
    {"cli: --kv-block takes a multiple of 64 in 64..1024 and refuses the rest", cli_kv_block},
    {"cli: --flush takes write or write+read (default) and refuses the rest", cli_flush},
    {"cli: --page-size (and page=P on a sweep line) takes 0 or a multiple of 16 in 16..256", cli_page_size},
    {"cli: --warm-ms takes 0 (off, the default) to 60000 and refuses the rest", cli_warm_ms},
    {"timing: warm-ups follow the count, and with --warm-ms go on until MS ms (at most 1000)", timing_warm_rule},
    {"cli: --help lists --flush, --kv-block, --planner, --page-size, --no-header and --warm-ms", cli_help_lists_flags},
    {"report: the extra field names dist= for drawn lengths, then seqlens_sum/max; warm_ms= with --warm-ms", report_extra_fields},
    {"report: report_emit prints the table header once (none with --no-header, nothing with --quiet), CSV rows always",
     report_emit_header_once},
    {"cli: model=NAME on a sweep line reaches the extra field, also of a row that did not run", sweep_model_label},
    {"cli: sweeps/models.txt parses: per model a prefill line, decode lines contiguous and paged", sweep_models_file},
    {"cli: --h, --hq, --hkv in any order give the same heads (an --hq or --hkv wins over --h)", cli_head_flags_any_order},
    {"cli: --scale outside float's normal range (1e-300, 1e300, subnormal) is refused", cli_scale_in_float_range},
    {"cli: --help wins over a bad value before or after it; it names --check-sweep and the --h rule", cli_help_wins},
    {"cli: an echoed argument's control bytes are escaped and a 100000-byte one is cut near 1 KB", cli_messages_escaped_and_capped},
    {"cli: cli_check_files refuses --save, --csv, --load, --sweep paths in one line (a FIFO at once) and leaves nothing",
     cli_files_checked},
    {"cli: --check-sweep prints ok/bad per shape line, agrees with sweep_read; a BOM, a long line, a FIFO", sweep_check_lines},
    {"cli: every sweep file in sweeps/ and tests/gpu_cases.txt passes --check-sweep", sweep_files_shipped_check},
    {NULL, NULL},
};
