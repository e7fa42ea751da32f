/* Reports: one aligned row for people, one CSV row for machines (and the plots). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"

const char *report_commit(void)
{
    const char *c = getenv("ATTN_COMMIT");
    return c && *c ? c : "unknown";
}

/* Appends to out (n bytes, k used so far); a full buffer keeps what fits, and k never passes n - 1. */
static void add(char *out, size_t n, size_t *k, const char *fmt, ...)
{
    if (*k + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + *k, n - *k, fmt, ap);
    va_end(ap);
    *k += strlen(out + *k);
}

void report_extra(const report_row *row, const run_case *c, const char *flush, const rung *r,
                  const attn_env *env, char *out, size_t n)
{
    const attn_shape *s = &c->shape;
    size_t k = 0;
    if (n == 0) return;
    out[0] = 0;
    if (row->checked)
        add(out, n, &k, "checked=%s%ld/%ld;rmse=%.3g;", row->c.sampled ? "sample:" : "all:", row->c.rows_checked,
            row->c.rows_total, row->c.rmse);
    if (row->checked && s->dtype == ATTN_E4M3) add(out, n, &k, "lse_rms=%.3g;", row->c.lse_rms);   /* FP8's LSE check */
    if (row->timed) add(out, n, &k, "runs=%d;warmups=%d;", row->t.runs, row->t.warmups);
    if (row->timed && row->t.warm_ms) add(out, n, &k, "warm_ms=%d;", row->t.warm_ms);   /* --warm-ms */
    if (row->timed) add(out, n, &k, "flush=%s;", flush);
    /* a rung with prepare() (07g's quantize): ms is the attention kernel's; these the rest */
    if (row->timed && row->timed_prep)
        add(out, n, &k, "quant_ms=%.6f;total_ms=%.6f;", row->t_prep.ms_median, row->t_total.ms_median);
    if (c->input_mode != INPUT_NORMAL) add(out, n, &k, "inputs=%s;", input_mode_name(c->input_mode));
    if (s->page_size) add(out, n, &k, "page=%d;", s->page_size);   /* a paged KV cache, as on the sweep line */
    if (r && r->describe && k + 1 < n) {
        r->describe(s, env, out + k, n - k);
        k = strlen(out);
        if (k && out[k - 1] != ';') add(out, n, &k, ";");
    }
    /* dist= names the batch as its sweep line does, so the plots can label it */
    if (s->seqlens_k && c->dist[0]) add(out, n, &k, "dist=%s;", c->dist);
    if (s->seqlens_k) {
        long sum = 0;
        int mx = 0;
        for (int b = 0; b < s->B; b++) { sum += s->seqlens_k[b]; if (s->seqlens_k[b] > mx) mx = s->seqlens_k[b]; }
        add(out, n, &k, "seqlens_sum=%ld;seqlens_max=%d;", sum, mx);
    }
    /* model= last: the label of the sweep line (sweeps/models.txt), which the models table reads */
    if (c->model[0]) add(out, n, &k, "model=%s;", c->model);
}

void report_label(const run_case *c, char *out, size_t n)
{
    size_t k = 0;
    if (n == 0) return;
    out[0] = 0;
    if (c->shape.page_size) add(out, n, &k, "page=%d;", c->shape.page_size);
    if (c->model[0]) add(out, n, &k, "model=%s;", c->model);
}

/* The FLOPs and bytes a row's rate counts: the forward's, or the backward's (attn.h) */
static double row_flops(const report_row *r) { return r->backward ? attn_bwd_flops(&r->shape) : attn_flops(&r->shape); }
static double row_bytes(const report_row *r) { return r->backward ? attn_bwd_bytes(&r->shape) : attn_bytes(&r->shape); }

static const char *dtype_name(attn_dtype t) { return t == ATTN_E4M3 ? "e4m3" : t == ATTN_BF16 ? "bf16" : "f16"; }

void report_table_header(FILE *f)
{
    fprintf(f, "%-5s %4s %4s %4s %6s %6s %5s %1s %9s %9s %9s %8s %7s %9s %9s  %s\n",
            "rung", "B", "Hq", "Hkv", "N", "M", "d", "c", "ms_med", "ms_min", "ms_max",
            "TFLOP/s", "GB/s", "rel_err", "lse_err", "status");
}

void report_table_row(FILE *f, const report_row *r)
{
    const attn_shape *s = &r->shape;
    fprintf(f, "%-5s %4d %4d %4d %6d %6d %5d %1d ", r->rung, s->B, s->Hq, s->Hkv, s->N, s->M, s->d, s->causal);
    if (r->timed) {
        double sec = r->t.ms_median * 1e-3;
        fprintf(f, "%9.4f %9.4f %9.4f ", r->t.ms_median, r->t.ms_min, r->t.ms_max);
        if (r->bytes_only) fprintf(f, "%8s ", "-");
        else fprintf(f, "%8.2f ", row_flops(r) / sec * 1e-12);
        fprintf(f, "%7.0f ", row_bytes(r) / sec * 1e-9);
    } else {
        fprintf(f, "%9s %9s %9s %8s %7s ", "-", "-", "-", "-", "-");
    }
    if (r->checked) fprintf(f, "%9.2e %9.2e  ", r->c.rel_err, r->c.lse_err);
    else fprintf(f, "%9s %9s  ", "-", "-");
    fprintf(f, "%s", r->status);
    if (r->checked && r->c.sampled) fprintf(f, " (checked %ld of %ld rows)", r->c.rows_checked, r->c.rows_total);
    fputc('\n', f);
    fflush(f);
}

/* CSV fields never contain commas or quotes: the status text is cleaned, so awk and gnuplot can
 * split on ',' alone. */
static void clean(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; src && *src && k + 1 < n; src++) dst[k++] = (*src == ',' || *src == '"' || *src == '\n') ? ';' : *src;
    dst[k] = 0;
}

/* The metadata lines and the column line that start a new CSV file. */
static void csv_head(const device_info *dev, char *out, size_t n)
{
    char date[64];
    size_t k = 0;
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    const char *drv = getenv("ATTN_DRIVER");
    add(out, n, &k, "# device: %s\n# sms: %d\n# l2_bytes: %zu\n", dev->name, dev->sm_count, dev->l2_bytes);
    add(out, n, &k, "# driver: %s (CUDA driver API %d.%d)\n", drv && *drv ? drv : "unknown",
        dev->driver_version / 1000, dev->driver_version % 1000 / 10);
    add(out, n, &k, "# cuda_runtime: %d.%d\n", dev->runtime_version / 1000, dev->runtime_version % 1000 / 10);
    add(out, n, &k, "# commit: %s\n# date: %s\n", report_commit(), date);
    add(out, n, &k, "rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,ms_min,ms_max,tflops,gbps,"
                    "rel_err,max_abs_err,lse_err,workspace_bytes,device,commit,extra\n");
}

#define CSV_LINE_MAX 8192

/* Appends `row` (whole lines) to the CSV at path, after the head lines if the file is new or empty
 * (and on a line of its own if the file does not end in one),
 * whole or not at all: the bytes go out in one write() on a file opened for appending (a short one
 * is followed by a second, whose error says why), and a failed write (a full disk, a file-size
 * limit) is cut off again (ftruncate to the old size; a file this call made is removed), so no
 * partial row is ever left. 0, or -1 with one line in err. */
static int csv_append(const char *path, const device_info *dev, const char *row, char *err, size_t n)
{
    static char buf[2 * CSV_LINE_MAX];
    int made = 0;
    int fd = open(path, O_RDWR | O_APPEND | O_NONBLOCK);             /* read: its last byte */
    if (fd < 0 && errno == EACCES) fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CREAT | O_EXCL, 0666);
        made = fd >= 0;
    }
    if (fd < 0) return cli_message(err, n, "--csv %s: cannot open for appending (%s)", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return cli_message(err, n, "--csv %s: not a regular file; no row written", path);
    }
    size_t k = 0;
    char last = '\n';
    buf[0] = 0;
    if (st.st_size == 0) csv_head(dev, buf, sizeof buf);
    else if (pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') buf[k++] = '\n', buf[k] = 0;   /* a row of its own */
    k = strlen(buf);
    add(buf, sizeof buf, &k, "%s", row);
    if (k + 1 >= sizeof buf || k == 0 || buf[k - 1] != '\n') {
        close(fd);
        if (made) unlink(path);
        return cli_message(err, n, "--csv %s: a row of %zu bytes is longer than a CSV line may be; no row written",
                           path, k);
    }
    const off_t before = st.st_size;
    size_t done = 0;
    int e = 0;
    while (done < k) {                       /* one write() but for a short one: then the rest says why */
        ssize_t w = write(fd, buf + done, k - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { e = w < 0 ? errno : ENOSPC; break; }
        done += (size_t)w;
    }
    int bad = done != k;
    if (bad && done > 0 && ftruncate(fd, before)) e = errno;   /* a partial row is cut off again */
    if (close(fd) && !bad) {
        bad = 1;
        e = errno;
        if (truncate(path, before)) e = errno;
    }
    if (!bad) return 0;
    if (made) unlink(path);
    return cli_message(err, n, "--csv %s: cannot append a row (%s); the file is as it was", path, strerror(e));
}

int report_csv_ceiling(const char *path, const device_info *dev, const char *name, double ms,
                       double tflops, double gbps, const char *extra, char *err, size_t n)
{
    char row[CSV_LINE_MAX], devname[256], ex[1024];
    size_t k = 0;
    clean(devname, sizeof devname, dev->name);
    clean(ex, sizeof ex, extra);
    add(row, sizeof row, &k, "%s,,,,,,,,f16,ok,%.6f,,,", name, ms);
    if (tflops > 0) add(row, sizeof row, &k, "%.3f,", tflops); else add(row, sizeof row, &k, ",");
    if (gbps > 0) add(row, sizeof row, &k, "%.1f,", gbps); else add(row, sizeof row, &k, ",");
    add(row, sizeof row, &k, ",,,,%s,%s,%s\n", devname, report_commit(), ex);
    return csv_append(path, dev, row, err, n);
}

int report_csv_row(const char *path, const device_info *dev, const report_row *r, char *err, size_t n)
{
    const attn_shape *s = &r->shape;
    char row[CSV_LINE_MAX], status[512], extra[1024], devname[256];
    size_t k = 0;
    clean(status, sizeof status, r->status);
    clean(extra, sizeof extra, r->extra);
    clean(devname, sizeof devname, dev->name);
    add(row, sizeof row, &k, "%s,%d,%d,%d,%d,%d,%d,%d,%s,%s,", r->rung, s->B, s->Hq, s->Hkv, s->N, s->M, s->d,
        s->causal, dtype_name(s->dtype), status);
    if (r->timed) {
        double sec = r->t.ms_median * 1e-3;
        add(row, sizeof row, &k, "%.6f,%.6f,%.6f,", r->t.ms_median, r->t.ms_min, r->t.ms_max);
        if (r->bytes_only) add(row, sizeof row, &k, ",");
        else add(row, sizeof row, &k, "%.3f,", row_flops(r) / sec * 1e-12);
        add(row, sizeof row, &k, "%.1f,", row_bytes(r) / sec * 1e-9);
    } else {
        add(row, sizeof row, &k, ",,,,,");
    }
    if (r->checked) add(row, sizeof row, &k, "%.3e,%.3e,%.3e,", r->c.rel_err, r->c.max_abs_err, r->c.lse_err);
    else add(row, sizeof row, &k, ",,,");
    add(row, sizeof row, &k, "%zu,%s,%s,%s\n", r->workspace_bytes, devname, report_commit(), extra);
    return csv_append(path, dev, row, err, n);
}

int report_emit(report_out *o, const report_row *r)
{
    if (!o->quiet) {
        if (!o->header_done) report_table_header(stdout);
        o->header_done = 1;
        report_table_row(stdout, r);
    }
    if (!o->csv || o->failed) return o->failed ? -1 : 0;
    char err[1200];
    if (report_csv_row(o->csv, o->dev, r, err, sizeof err)) {
        fflush(stdout);
        fprintf(stderr, "error: %s\n", err);
        o->failed = 1;
        return -1;
    }
    return 0;
}
