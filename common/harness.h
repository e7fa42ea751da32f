/* The host side of the harness that every rung links: inputs, the float64 reference, the checker,
 * the command line, .npy files, timing and the report. Plain C11; the driver (driver.c and the
 * files jobs.h lists) ties them together. Nothing here is specific to a rung. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include "attn.h"

/* ---------------------------------------------------------------- inputs.c */

/* Counter-based normal random numbers: value i of stream `stream` depends only on (seed, stream,
 * i), so inputs are the same whatever the thread count, and any element can be regenerated alone. */
double rng_normal(uint64_t seed, uint64_t stream, uint64_t i);
double rng_uniform(uint64_t seed, uint64_t stream, uint64_t i);   /* in [0, 1) */

/* The same generator as a sequence, for code that wants "the next number" (tests, simulators). */
typedef struct rng_stream { uint64_t seed, stream, i; } rng_stream;
uint64_t rng_next(rng_stream *r);

enum { INPUT_NORMAL = 0, INPUT_OUTLIER = 1, INPUT_SPARSE_OUTLIER = 2, INPUT_NONFINITE_Q = 3, INPUT_NONFINITE_K = 4,
       INPUT_NONFINITE_V = 5, INPUT_MODES = 6 };

/* The modes' names as --inputs and a sweep line's inputs= take them ("normal", "outlier", ...):
 * input_mode_parse returns the mode or -1; INPUT_NAMES lists them for a message. */
int input_mode_parse(const char *name);
const char *input_mode_name(int mode);
#define INPUT_NAMES "normal, outlier, sparse-outlier, nonfinite-q, nonfinite-k or nonfinite-v"

/* Fill n elements of `t` with sigma * N(0,1) from stream `stream`. */
void fill_normal(uint16_t *dst, size_t n, attn_dtype t, uint64_t seed, uint64_t stream, double sigma);

/* Q, K, V for a shape: N(0,1) entries; `outlier` draws Q and K with sigma 10, so that scaled
 * scores reach the hundreds and exp() overflows even in float32 without the max subtracted;
 * `sparse-outlier` draws 0.1% of the entries of Q, K and V (each independently) with sigma 10, the
 * rest N(0,1): FlashAttention-3's test of FP8 quantization. `nonfinite-q|k|v`: normal, then a NaN
 * and an infinity planted in Q, K or V (inputs.c says where): how NaN and Inf propagate. */
void make_inputs(const attn_shape *s, uint64_t seed, int mode, uint16_t *q, uint16_t *k, uint16_t *v);

/* dO for the backward pass (rung 08): N(0,1) entries, [B,Hq,N,d], a stream of its own. */
void make_grad_input(const attn_shape *s, uint64_t seed, uint16_t *dout);

/* Per-request KV lengths in [1, M] for `dist`: "equal" (all M), "uniform" (uniform in [1, M]),
 * "longtail" (most short, a few near M). Returns 0, or -1 for an unknown name. */
int make_seqlens(const char *dist, int B, int M, uint64_t seed, int *out);

/* ---------------------------------------------------------------- pages.c */

/* A paged KV cache (shape.page_size = P > 0; the layout is in attn.h). Request b's len_b keys take
 * ceil(len_b / P) pages; the pages of all requests are numbered in request order, then laid out in
 * the pool in a random order (a seeded permutation), so that a request's pages are scattered as
 * they are in a serving engine's cache after many requests came and went. */
typedef struct page_table {
    int P;                 /* keys per page */
    int B, max_pages;      /* the table is [B][max_pages]; max_pages = ceil(M / P) */
    int num_pages;         /* pages in the pool: the sum over b of ceil(len_b / P) */
    int *table;            /* [B][max_pages]: logical page -> physical page; -1 past a request's pages */
} page_table;

/* The table for shape s (s->page_size > 0): depends on the lengths, P and seed only. 0, or -1 if
 * s->page_size < 1. pages_free releases it. */
int pages_build(const attn_shape *s, uint64_t seed, page_table *pt);
void pages_free(page_table *pt);
/* Elements of one pool (K or V): num_pages * P * Hkv * d. */
size_t pages_pool_elems(const attn_shape *s, const page_table *pt);
/* Contiguous kv [B,Hkv,M,d] -> pool: key t < len_b of request b goes to its page's position t % P.
 * Every other position (the tail of a request's last page) gets 0xffff, a NaN in float16 and
 * bfloat16: a kernel that reads a key past a request's length gets NaN in O and fails the check. */
void pages_scatter(const attn_shape *s, const page_table *pt, const uint16_t *kv, uint16_t *pool);
/* The inverse, pool -> kv, for keys t < len_b (the others are left as they are). */
void pages_gather(const attn_shape *s, const page_table *pt, const uint16_t *pool, uint16_t *kv);

/* ---------------------------------------------------------------- ref.c */

/* Build the conversion table; call once before ref_row runs on several threads. */
void ref_init(void);

/* float64 reference for one query row (b, h, i): writes out[0..d) and returns the LSE (natural log
 * of the softmax denominator, scale included), -inf for a row that sees no key (out = 0).
 * `scratch` must hold M doubles. */
double ref_row(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
               int b, int h, int i, double *out, double *scratch);

/* ---------------------------------------------------------------- ref_bwd.c */

/* The backward pass in float64 (rung 08; the formulas are at the top of ref_bwd.c): for one
 * (b, KV head) group, its G = Hq/Hkv query heads' N rows each and its M keys, the forward recomputed
 * (O, LSE) and the gradients of L = sum(dO o O): dQ, and dK, dV summed over the group's heads.
 * A row that sees no key gets O = 0, LSE = -inf and dQ = 0 and adds nothing to dK, dV; a key past
 * the request's length gets dK = dV = 0. */
typedef struct ref_bwd_out {
    double *o, *dq;        /* [G][N][d]: the group's query heads in order */
    double *lse;           /* [G][N] */
    double *dk, *dv;       /* [M][d] */
} ref_bwd_out;

/* The same on float64 arrays (q, dout, o, dq [G][N][d]; k, v, dk, dv [M][d]; lse [G][N]) with mk
 * keys of M visible (attn_kv_len), shape s giving N, M, d, scale and causal. */
void ref_bwd_f64(const attn_shape *s, int mk, int G, const double *q, const double *k, const double *v,
                 const double *dout, double *o, double *lse, double *dq, double *dk, double *dv);
/* Buffers for one group of shape s: 0, or -1 (nothing allocated). ref_bwd_free releases them. */
int ref_bwd_alloc(const attn_shape *s, ref_bwd_out *r);
void ref_bwd_free(ref_bwd_out *r);
/* Group (b, kvh) from storage-type tensors (q, dout [B,Hq,N,d]; k, v [B,Hkv,M,d]): 0, or -1 out of
 * host memory. */
int ref_bwd_group(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  const uint16_t *dout, int b, int kvh, ref_bwd_out *r);
/* Multiply-adds one group costs (the check's budget counts in these). */
double ref_bwd_group_cost(const attn_shape *s);

/* ---------------------------------------------------------------- check.c */

typedef struct check_result {
    int pass;
    double rel_err;        /* ||O - ref|| / ||ref|| over the checked rows */
    double max_abs_err;    /* over the checked rows */
    double lse_err;        /* max |LSE - ref| over the checked rows with a finite reference */
    double lse_rms;        /* the root mean square of |LSE - ref| over the same rows */
    double rmse;           /* sqrt(mean (O - ref)^2) over the checked elements (the FP8 accuracy table's) */
    long rows_checked, rows_total;
    int sampled;           /* 1 if only a sample of rows was compared with the reference */
    long bad_elems;        /* NaN/Inf (or unwritten) elements of O and LSE, over ALL rows */
    char why[256];         /* for a failure: the first thing that went wrong */
} check_result;

/* Tolerance on rel_err for the storage type: 2e-3 float16, 1e-2 bfloat16 (the course's pass rule),
 * CHECK_E4M3_TOLERANCE for float8 e4m3 compute (07_fa3_wgmma_tma/NOTES.md argues it). */
double check_tolerance(attn_dtype t);
#define LSE_TOLERANCE 1e-3
/* ... and on every row's |LSE - ref|: LSE_TOLERANCE, but for e4m3 CHECK_E4M3_LSE_MAX, with the
 * root mean square over the rows within CHECK_E4M3_LSE_RMS as well: a row's LSE is about its largest
 * logits, each off by up to 2^-4 of its largest products in e4m3, so single rows stray far more than
 * the mean (tests/test_fp8_step.c models it). */
double check_lse_tolerance(attn_dtype t);
#define CHECK_E4M3_TOLERANCE 0.12
#define CHECK_E4M3_LSE_MAX 1.0
#define CHECK_E4M3_LSE_RMS 0.05

/* Compare O and LSE (host copies) with the reference. Rows whose reference costs more than
 * `budget` multiply-adds in total are sampled: every row of the first and last few queries of the
 * first and last (b, h) pair, plus random rows; the scan for NaN/Inf/unwritten covers every row. */
void check_output(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  const uint16_t *o, const float *lse, double budget, uint64_t seed,
                  check_result *r);

/* Whether Q, K or V hold a NaN or an infinity: the checks then ask for NaN or Inf in exactly the
 * elements where the float64 reference has them, on every row (check.c). */
int inputs_nonfinite(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v);
/* Whether Q, K or V hold an infinity (a NaN alone does not count): float8 e4m3 has none, so an FP8
 * step refuses such inputs (run_shape.c). */
int inputs_infinite(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v);

/* ---------------------------------------------------------------- check_bwd.c */

/* Compare a backward rung's dQ, dK, dV (host copies, storage type) with ref_bwd.c's, under the
 * forward's tolerance on each; every element scanned for NaN/Inf (the driver poisons them), dQ of a
 * row that sees no key must be 0. Whole (b, KV head) groups are compared, as many as `budget`
 * multiply-adds allow, never fewer than one; r->rows_checked counts the query rows of those groups.
 * rel[0..2]: the rel-L2 errors of dQ, dK, dV; r->rel_err is the largest, r->lse_err is left 0. */
void check_grads(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                 const uint16_t *dout, const uint16_t *dq, const uint16_t *dk, const uint16_t *dv,
                 double budget, uint64_t seed, check_result *r, double rel[3]);

/* ---------------------------------------------------------------- cli.c */

enum { FLUSH_WRITE_READ = 0, FLUSH_WRITE = 1 };   /* --flush: see l2flush.cu */

typedef struct cli_opts {
    attn_shape shape;
    int have_scale;
    int *seqlens;              /* explicit --seqlens list (B entries), or NULL */
    char seqlen_dist[16];      /* --seqlen-dist, "" if none */
    uint64_t seed;
    int input_mode;            /* INPUT_NORMAL, ... (input_mode_parse) */
    int warmups;               /* 3 */
    int warm_ms;               /* --warm-ms: warm up for this many ms of launches first; 0 (default): off */
    int runs;                  /* 0: automatic (>= 20, fewer only for slow runs, never < 3) */
    int check;                 /* 1: compare with the reference */
    double check_budget;       /* multiply-adds the reference may spend per shape */
    double too_slow_s;         /* sweep: a run slower than this skips larger shapes */
    const char *variant, *csv, *load, *save, *sweep, *planner;
    const char *check_sweep;   /* --check-sweep FILE: check each line, run nothing */
    int kv_block;              /* --kv-block (rung 06's keys per KV block), 0 for the rung's own */
    int fp8_per_tensor;        /* --fp8-scale tensor (attn_env's field of the same name) */
    int fp8_no_hadamard;       /* --fp8-hadamard off */
    int flush;                 /* --flush: FLUSH_WRITE_READ (default) or FLUSH_WRITE */
    int no_time;               /* tests: run twice (check + same-bits), no timing */
    int profile;               /* make profile: as no_time, the second launch between cudaProfilerStart/Stop */
    int list, probe, ceilings, quiet;
    int no_header;             /* --no-header: table rows without the header line (make stage prints one) */
    int pass;                  /* --pass: print forward or backward (the binary's kind) and exit */
    int read_floor;            /* time a bare read of K and V instead of the rung */
    const rung_cli *own;       /* the rung's own default shape and flags (attn.h), or NULL */
    int shape_flags;           /* which of --b --hq --hkv --h --n --m --d were given (--load refuses them) */
    int backward;              /* the binary is a backward rung (08): --help says what --load and --save
                                  read and write then; set by the driver before cli_parse */
} cli_opts;

/* The driver's defaults; with `own` (may be NULL), the rung's own default shape and flags. */
void cli_defaults(cli_opts *o);
void cli_defaults_for(cli_opts *o, const rung_cli *own);
#define CLI_ERR_MAX 8192       /* err bytes cli_parse may need: the --help text is the longest */
/* 0 on success; 1 for --help (usage in err); -1 with one line in err naming the argument and
 * what is allowed. Never exits, never touches a GPU: tests/fuzz.c calls it with random argv. */
int cli_parse(int argc, char **argv, cli_opts *o, char *err, size_t err_len);
/* After cli_parse, before any GPU work: the files and folders the run will read and write. --save
 * DIR a directory (or one that can be made: made and removed again) where a file can be made, its
 * o.npy/lse.npy (dq/dk/dv.npy) not directories; --csv FILE a regular file that opens for appending,
 * or new in a folder that exists; --load DIR a directory whose q, k, v (and do) .npy are regular
 * files; --sweep and --check-sweep FILE regular files (a FIFO is refused at once, never opened).
 * 0, or -1 with one line in err naming the flag and the path. */
int cli_check_files(const cli_opts *o, char *err, size_t err_len);
/* One line of a message into out as cli_parse writes its own: control bytes as \xNN, cut near 1 KB
 * (ending in "...") -- for a message that echoes what a user typed or a file held. Returns -1. */
int cli_message(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The --help text for o's defaults and rung (cli_defaults_for), `prog` the binary's name. */
void cli_usage(const cli_opts *o, const char *prog, char *out, size_t n);
/* 0 if the shape is well formed (sizes > 0, Hq % Hkv == 0, seqlens in [1, M], ...). */
int shape_validate(const attn_shape *s, char *err, size_t err_len);

/* A sweep line's model=NAME: letters, digits and . _ - +, up to RUN_MODEL_MAX - 1 of them ('+' joins
 * the names of models that share one attention shape: Llama-3.1-8B+Mistral-7B). */
#define RUN_MODEL_MAX 64

/* One shape to run, as a sweep line (or the command line) gives it. */
typedef struct run_case {
    attn_shape shape;
    int input_mode;            /* INPUT_NORMAL, ... (input_mode_parse) */
    int *seqlens;              /* per-request KV lengths (shape.seqlens_k points here), or NULL */
    char dist[16];             /* the distribution they were drawn from (dist=, --seqlen-dist), or "" */
    char model[RUN_MODEL_MAX]; /* the model(s) whose attention shape this is (model=), or "" */
} run_case;

#define SWEEP_LINE_MAX 65536
/* Parse one sweep/matrix line "B Hq Hkv N M d causal [key=value ...]" over a copy of `base`.
 * Returns 1 for a shape, 0 for a blank/comment line, -1 on error (message in err). The line's
 * seqlens (if any) are malloc'd into c->seqlens, which the caller frees, also after an error. */
int sweep_line(const char *line, const cli_opts *base, run_case *c, char *err, size_t err_len);
/* Every shape of the sweep file `path`, in file order: 0 with *count >= 1 cases malloc'd into *cases
 * (sweep_free releases them), or -1 with one line in err naming the file (and the line) for a file
 * that cannot be read, a directory, a file with no shape, or a bad line (too long, a NUL byte, a
 * field sweep_line refuses). */
int sweep_read(const char *path, const cli_opts *base, run_case **cases, int *count, char *err, size_t err_len);
void sweep_free(run_case *cases, int count);
/* --check-sweep FILE: every line of the file through the parser sweep_read uses, nothing run; for
 * each line that is not blank or a comment, one line to out: "ok LINE_NO" or "bad LINE_NO: reason"
 * (a UTF-8 byte-order mark makes line 1 bad). 0 if every line is ok, 1 if one is bad; -1 with one
 * line in err for a file that cannot be read (missing, a directory, a FIFO) or holds no shape. */
int sweep_check_file(const char *path, const cli_opts *base, FILE *out, char *err, size_t err_len);

/* ---------------------------------------------------------------- npy.c */

/* Read a 4-D float16 or float32 .npy into float16/bfloat16 storage `t` (malloc'd into *data).
 * dims[4] receives the shape. Returns 0, or -1 with a message in err. */
int npy_load4(const char *path, attn_dtype t, uint16_t **data, int dims[4], char *err, size_t err_len);
/* Writing is whole or not at all (npy.c says how): a set of files goes to temporary files beside
 * their names, then is renamed into place, all or none; on any failure the old files are as they
 * were and no temporary file is left. One array of a set: */
typedef struct npy_array {
    const char *name;          /* its file name in the folder: "o.npy" */
    const void *data;          /* float16 bits (uint16_t) or float */
    int f32;                   /* 1: float32 ('<f4'), 0: float16 ('<f2') */
    int ndim;                  /* 1..4 */
    int dims[4];
} npy_array;
/* The set into folder dir: 0, or -1 with one line in err naming the folder, the
 * file that failed and why, and saying the set is as it was. */
int npy_save_set(const char *dir, const npy_array *arrays, int count, char *err, size_t err_len);
/* --save DIR (made if missing) of a forward rung: o.npy [B, Hq, N, d] (float16, or bfloat16 widened to float32, which
 * numpy reads) and lse.npy [B, Hq, N] (float32), one set. */
int npy_save_outputs(const char *dir, const attn_shape *s, const uint16_t *o, const float *lse, char *err, size_t err_len);
/* --save DIR of a backward rung: dq.npy, dk.npy, dv.npy (float16, or widened to float32), one set. */
int npy_save_grads(const char *dir, const attn_shape *s, uint16_t *const g[3], char *err, size_t err_len);
/* One file alone (a set of one, its folder taken from the path), float16 ('<f2') or float32 ('<f4')
 * arrays of `ndim` (1..4) dims. 0 or -1. */
int npy_save_f16(const char *path, const uint16_t *data, const int *dims, int ndim);
int npy_save_f32(const char *path, const float *data, const int *dims, int ndim);

/* ---------------------------------------------------------------- timing.c */

typedef struct bench_result {
    double ms_median, ms_min, ms_max;
    int runs, warmups;
    int warm_ms;               /* the --warm-ms the warm-ups ran to, 0 for none */
} bench_result;

/* The timed thing: prepare() runs before every launch, untimed (poison outputs, flush L2);
 * launch() is what the events bracket. Both return NULL or an error message. */
typedef struct bench_job {
    const char *(*prepare)(void *ctx, cudaStream_t st);
    const char *(*launch)(void *ctx, cudaStream_t st);
    void *ctx;
} bench_job;

/* Warm-ups (up to `warmups`, fewer once they have taken a second; with warm_ms > 0, more until
 * they have taken warm_ms milliseconds of launches, never more than BENCH_WARMUPS_MAX in all), then
 * timed runs: `runs` if nonzero, else at least 20 (more for short launches, up to 200); launches
 * over 150 ms get about 3 s of timed runs, never fewer than 3. first_ms is the time of one launch
 * already seen (the first warm-up; it sizes the runs). */
#define BENCH_WARMUPS_MAX 1000
#define BENCH_WARM_MS_MAX 60000    /* --warm-ms: a minute of warm-up at most */
const char *bench_time(const bench_job *job, cudaStream_t st, int warmups, int warm_ms, int runs,
                       double first_ms, bench_result *out);
/* bench_time's rule: whether another warm-up follows w of them (the first included) that took
 * spent ms of launches. No GPU: the CPU tests check it. */
int bench_warm_more(int w, int warmups, int warm_ms, double spent);

/* Time one launch with events (after prepare). */
const char *bench_once(const bench_job *job, cudaStream_t st, double *ms);

/* One launch (after prepare, untimed) between cudaProfilerStart and cudaProfilerStop: a profiler
 * started with profiling off (ncu --profile-from-start off) sees its kernels and nothing else. */
const char *bench_profiled(const bench_job *job, cudaStream_t st);

/* The two ceilings, measured with the same clock: device-to-device copy (bytes read + written
 * per second) and a large float16 cuBLAS GEMM with float32 accumulation. */
const char *measure_copy_gbps(cudaStream_t st, double *gbps, double *ms);
const char *measure_gemm_tflops(cublasHandle_t h, cudaStream_t st, int n, double *tflops, double *ms);

/* ---------------------------------------------------------------- l2flush.cu */

/* Before every timed launch: write `bytes` (twice the L2) and, for FLUSH_WRITE_READ, read them
 * back so the L2 is left clean (see l2flush.cu for why). */
const char *l2_flush(void *buf, size_t bytes, int mode, cudaStream_t st);
const char *l2_flush_name(int mode);      /* "write+read" or "write", for the report */

/* ---------------------------------------------------------------- forward_plain.cu */

/* The forward pass a backward rung (rung 08) needs as its input, made by the driver outside the
 * timed region: O (storage type) and LSE (float32) for shape s (head dims up to 256), one warp per
 * query row, float32. NULL or an error message. */
const char *forward_plain(const attn_shape *s, const void *q, const void *k, const void *v, void *o,
                          float *lse, const int *seqlens_k, cudaStream_t st);

/* ---------------------------------------------------------------- read_floor_kernel.cu */

/* One kernel that reads a then b (plain loads, all SMs): the fastest a launch can move these
 * bytes, the floor a memory-bound rung is measured against. */
const char *read_floor_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes, cudaStream_t st);

/* ---------------------------------------------------------------- report.c */

typedef struct device_info {
    char name[256];
    char short_name[32];     /* "h100", "h200", ...: the prefix of results/<gpu>-*.csv */
    int sm_count;
    int driver_version, runtime_version;
    size_t l2_bytes;
} device_info;

typedef struct report_row {
    const char *rung;
    attn_shape shape;
    const char *status;      /* "ok", "FAIL: ...", "unsupported: ...", "skipped: ..." */
    bench_result t;
    int timed;               /* t holds numbers */
    bench_result t_prep;     /* the rung's prepare() alone, and prepare() + run() (timed_prep) */
    bench_result t_total;
    int timed_prep;
    int bytes_only;          /* a read, not attention: no TFLOP/s */
    check_result c;
    int checked;
    size_t workspace_bytes;
    const char *extra;       /* key=value;... (sample size, planner, seqlens, ...) */
    int backward;            /* rung 08: TFLOP/s and GB/s by attn_bwd_flops and attn_bwd_bytes */
} report_row;

void report_table_header(FILE *f);
void report_table_row(FILE *f, const report_row *r);
/* Where a run's rows go: the table on stdout unless quiet, its header before the first row unless
 * header_done (set from the start by --no-header), and the CSV file csv (NULL: none). */
typedef struct report_out {
    int quiet, header_done;
    const char *csv;
    const device_info *dev;    /* the CSV's metadata lines and device column */
    int failed;                /* a CSV row could not be written: said once, no more rows tried */
} report_out;
/* Every row of the driver goes out here: to the table and to the CSV, as o says. 0, or -1 once a
 * CSV row could not be appended (one line on stderr naming the file, the first time; o->failed set:
 * the driver then exits 2). */
int report_emit(report_out *o, const report_row *r);
/* Appends one CSV row, whole or not at all (a failed or short write is cut off again: no partial
 * row, an existing file as it was, a new one removed); the metadata lines and the column line go
 * first, in the same write, if the file is new or empty. 0, or -1 with one line in err. */
int report_csv_row(const char *path, const device_info *dev, const report_row *r, char *err, size_t err_len);
/* A ceiling row (rung "ceiling-copy" / "ceiling-gemm"): the rate in gbps or tflops, the time in ms. */
int report_csv_ceiling(const char *path, const device_info *dev, const char *name, double ms,
                       double tflops, double gbps, const char *extra, char *err, size_t err_len);
/* The commit the numbers come from: $ATTN_COMMIT, else "unknown". */
const char *report_commit(void);
/* A rung's row's extra field, key=value;...: which rows were checked; runs, warm-ups and `flush`
 * (l2_flush_name) if timed; quant_ms and total_ms (medians) for a rung with prepare(); outlier inputs; page=P for a paged KV cache; the rung's describe() (r
 * may be NULL); the distribution the KV lengths were drawn from (c->dist) and their sum and max;
 * last, model=NAME (c->model). */
void report_extra(const report_row *row, const run_case *c, const char *flush, const rung *r,
                  const attn_env *env, char *out, size_t n);
/* The extra field of a row that did not run to the end (refused, too big, skipped as too slow,
 * failed): what tells its sweep line apart, page=P; and model=NAME; ("" if neither). */
void report_label(const run_case *c, char *out, size_t n);

#endif
