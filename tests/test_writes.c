/* Every file the harness writes for a user is written whole or not at all (issue 35): --save's sets
 * (npy.c: o.npy + lse.npy, dq/dk/dv.npy) and --csv's rows (report.c). Each failure is made real: a
 * file-size limit (setrlimit RLIMIT_FSIZE in a forked child, SIGXFSZ ignored as the driver ignores
 * it, so that write() fails with EFBIG where a full disk fails with ENOSPC), a directory where a
 * file must go. Then the call must return -1 with one line saying so, and the files that were there
 * must be byte for byte as they were, with nothing left beside them (no temporary file, no copy of
 * an old one). Files go to a fresh mkdtemp folder under /tmp, removed afterwards. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/half.h"

/* ------------------------------------------------------------------ files */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) { char *g = realloc(buf, cap *= 2); if (!g) { free(buf); buf = NULL; } else buf = g; }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* 1 if path holds exactly len bytes of want */
static int same_bytes(const char *path, const char *want, size_t len)
{
    size_t n = 0;
    char *got = read_all(path, &n);
    int same = got && n == len && !memcmp(got, want, len);
    free(got);
    return same;
}

/* The entries of dir (not . and ..), comma-separated into out; their count. */
static int entries(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    int count = 0;
    size_t k = 0;
    out[0] = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        count++;
        if (k < n) k += (size_t)snprintf(out + k, n - k, "%s%s", k ? "," : "", e->d_name);
    }
    closedir(d);
    return count;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) { remove(dir); return; }
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!lstat(path, &st) && S_ISDIR(st.st_mode)) remove_tree(path);
        else remove(path);
    }
    closedir(d);
    rmdir(dir);
}

/* ------------------------------------------------------------------ a call under a file-size limit */

typedef int (*write_call)(void *arg, char *err, size_t n);

/* Runs call(arg) in a child whose files may not grow past `limit` bytes; its return (0 or -1, 99
 * if the child died) and its message come back. */
static int under_limit(write_call call, void *arg, long limit, char *err, size_t n)
{
    int fds[2];
    err[0] = 0;
    if (pipe(fds)) return 99;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) { close(fds[0]); close(fds[1]); return 99; }
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
        if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(98);
        char msg[1200] = "";
        int rc = call(arg, msg, sizeof msg);
        if (write(fds[1], msg, strlen(msg)) < 0) _exit(97);
        _exit(rc == 0 ? 0 : rc == -1 ? 1 : 2);
    }
    close(fds[1]);
    size_t k = 0;
    ssize_t r;
    while (k + 1 < n && (r = read(fds[0], err + k, n - 1 - k)) > 0) k += (size_t)r;
    err[k] = 0;
    close(fds[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 99;
    int code = WEXITSTATUS(status);
    return code == 0 ? 0 : code == 1 ? -1 : 90 + code;
}

/* ------------------------------------------------------------------ --save's sets */

typedef struct save_job {
    const char *dir;
    attn_shape s;
    uint16_t *o, *g[3];
    float *lse;
    int grads;
} save_job;

static int do_save(void *arg, char *err, size_t n)
{
    save_job *j = arg;
    return j->grads ? npy_save_grads(j->dir, &j->s, j->g, err, n) : npy_save_outputs(j->dir, &j->s, j->o, j->lse, err, n);
}

static attn_shape shape_of(int B, int Hq, int Hkv, int N, int M, int d)
{
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = B; s.Hq = Hq; s.Hkv = Hkv; s.N = N; s.M = M; s.d = d;
    s.dtype = ATTN_F16;
    return s;
}

/* O, LSE (and dQ, dK, dV) for shape s, every element `x` */
static void fill_job(save_job *j, const char *dir, attn_shape s, float x)
{
    memset(j, 0, sizeof *j);
    j->dir = dir;
    j->s = s;
    size_t q = attn_q_elems(&s), kv = attn_kv_elems(&s), l = attn_lse_elems(&s);
    j->o = malloc(q * 2);
    j->lse = malloc(l * 4);
    j->g[0] = malloc(q * 2);
    j->g[1] = malloc(kv * 2);
    j->g[2] = malloc(kv * 2);
    for (size_t i = 0; j->o && j->g[0] && i < q; i++) j->o[i] = j->g[0][i] = f32_to_elem(s.dtype, x);
    for (size_t i = 0; j->g[1] && j->g[2] && i < kv; i++) j->g[1][i] = j->g[2][i] = f32_to_elem(s.dtype, x);
    for (size_t i = 0; j->lse && i < l; i++) j->lse[i] = x;
}

static void free_job(save_job *j)
{
    free(j->o);
    free(j->lse);
    for (int w = 0; w < 3; w++) free(j->g[w]);
}

/* The bytes of dir/name now, to compare with after a failed save */
typedef struct kept { char path[256]; char *bytes; size_t len; } kept;
static void keep(kept *k, const char *dir, const char *name)
{
    snprintf(k->path, sizeof k->path, "%s/%s", dir, name);
    k->bytes = read_all(k->path, &k->len);
}
static int intact(const kept *k) { return k->bytes && same_bytes(k->path, k->bytes, k->len); }

static void save_set_under_limit(void)
{
    char dir[] = "/tmp/attn_writes_XXXXXX", err[1200], list[512];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    save_job old, big, tall;
    fill_job(&old, dir, shape_of(1, 1, 1, 8, 8, 64), 1.0f);           /* o.npy 1152 bytes, lse.npy 160 */
    EXPECT_MSG(do_save(&old, err, sizeof err) == 0, "the first save: %s", err);
    kept ko, kl;
    keep(&ko, dir, "o.npy");
    keep(&kl, dir, "lse.npy");
    EXPECT(ko.bytes && kl.bytes && ko.len == 1152 && kl.len == 160);

    /* o.npy (16 KiB of data) past an 8 KiB limit: the first file of the set fails */
    fill_job(&big, dir, shape_of(1, 2, 2, 64, 64, 64), 2.0f);
    int rc = under_limit(do_save, &big, 8192, err, sizeof err);
    EXPECT_MSG(rc == -1, "o.npy past the limit: returned %d (%s)", rc, err);
    EXPECT_MSG(strstr(err, "cannot write o.npy (File too large); o.npy and lse.npy are as they were") && strstr(err, dir) &&
               !strchr(err, '\n'), "message '%s'", err);
    EXPECT_MSG(intact(&ko) && intact(&kl), "o.npy or lse.npy changed after a failed save");
    EXPECT_MSG(entries(dir, list, sizeof list) == 2, "left in the folder: %s", list);

    /* d = 1: o.npy (32 KiB) is written whole, lse.npy (64 KiB) fails: the set is none, not half */
    fill_job(&tall, dir, shape_of(1, 1, 1, 16384, 16, 1), 3.0f);
    rc = under_limit(do_save, &tall, 48 << 10, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "cannot write lse.npy (File too large)"), "lse.npy past the limit: %d '%s'", rc, err);
    EXPECT_MSG(intact(&ko) && intact(&kl), "o.npy or lse.npy changed after the second file failed");
    EXPECT_MSG(entries(dir, list, sizeof list) == 2, "left in the folder: %s", list);

    /* the same save with no limit replaces both, as numpy reads them, with the mode fopen gives */
    mode_t um = umask(022);
    EXPECT_MSG(do_save(&tall, err, sizeof err) == 0, "save without a limit: %s", err);
    umask(um);
    uint16_t *back = NULL;
    int dims[4];
    EXPECT(npy_load4(ko.path, ATTN_F16, &back, dims, err, sizeof err) == 0);
    EXPECT(back && dims[0] == 1 && dims[1] == 1 && dims[2] == 16384 && dims[3] == 1 && back[16383] == f32_to_f16(3.0f));
    free(back);
    struct stat st;
    EXPECT_MSG(!stat(ko.path, &st) && (st.st_mode & 0777) == 0644, "o.npy mode %o, expected 644", (unsigned)(st.st_mode & 0777));
    EXPECT_MSG(!stat(kl.path, &st) && st.st_size == 128 + 16384 * 4, "lse.npy of %ld bytes", (long)st.st_size);
    EXPECT_MSG(entries(dir, list, sizeof list) == 2, "left in the folder: %s", list);

    /* a directory named lse.npy: refused before anything is replaced */
    free(ko.bytes);
    keep(&ko, dir, "o.npy");
    EXPECT(remove(kl.path) == 0 && mkdir(kl.path, 0755) == 0);
    rc = do_save(&big, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "cannot replace lse.npy (Is a directory); o.npy and lse.npy are as they were"),
               "lse.npy a directory: %d '%s'", rc, err);
    EXPECT_MSG(intact(&ko), "o.npy changed though lse.npy could not be replaced");
    EXPECT_MSG(entries(dir, list, sizeof list) == 2, "left in the folder: %s", list);
    rmdir(kl.path);

    /* a folder that is not there yet is made (as --save's check promised) */
    char sub[96];
    snprintf(sub, sizeof sub, "%s/new/sub", dir);
    big.dir = sub;
    EXPECT_MSG(do_save(&big, err, sizeof err) == 0, "save into a new folder: %s", err);
    EXPECT_MSG(entries(sub, list, sizeof list) == 2 && strstr(list, "o.npy") && strstr(list, "lse.npy"), "in %s: %s", sub, list);

    free(ko.bytes);
    free(kl.bytes);
    free_job(&old);
    free_job(&big);
    free_job(&tall);
    remove_tree(dir);
}

static void save_grads_under_limit(void)
{
    char dir[] = "/tmp/attn_writes_XXXXXX", err[1200], list[512];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    save_job old, job;
    fill_job(&old, dir, shape_of(1, 2, 1, 4, 4, 64), 1.0f);
    old.grads = 1;
    EXPECT_MSG(do_save(&old, err, sizeof err) == 0, "the first save: %s", err);
    kept k[3];
    keep(&k[0], dir, "dq.npy");
    keep(&k[1], dir, "dk.npy");
    keep(&k[2], dir, "dv.npy");
    EXPECT(k[0].bytes && k[1].bytes && k[2].bytes);
    /* dQ (2 KiB) fits under 16 KiB, dK (32 KiB) does not: none of the three is replaced */
    fill_job(&job, dir, shape_of(1, 1, 1, 16, 256, 64), 2.0f);
    job.grads = 1;
    int rc = under_limit(do_save, &job, 16 << 10, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "cannot write dk.npy (File too large); dq.npy, dk.npy and dv.npy are as they were"),
               "dk.npy past the limit: %d '%s'", rc, err);
    EXPECT_MSG(intact(&k[0]) && intact(&k[1]) && intact(&k[2]), "a gradient file changed after a failed save");
    EXPECT_MSG(entries(dir, list, sizeof list) == 3, "left in the folder: %s", list);
    /* bfloat16 gradients are widened to float32, which numpy reads */
    job.s.dtype = ATTN_BF16;
    for (size_t i = 0; i < attn_q_elems(&job.s); i++) job.g[0][i] = f32_to_bf16(2.0f);
    EXPECT_MSG(do_save(&job, err, sizeof err) == 0, "bf16 save: %s", err);
    char *h;
    size_t len;
    EXPECT((h = read_all(k[0].path, &len)) && len > 64 && strstr(h + 10, "'descr': '<f4'") != NULL);
    free(h);
    for (int w = 0; w < 3; w++) free(k[w].bytes);
    free_job(&old);
    free_job(&job);
    remove_tree(dir);
}

/* ------------------------------------------------------------------ --csv's rows */

typedef struct csv_job {
    const char *path;
    device_info dev;
    report_row row;
    int emits;                 /* > 0: through report_emit that many times, stderr to `log` */
    const char *log;
} csv_job;

static int do_csv(void *arg, char *err, size_t n)
{
    csv_job *j = arg;
    if (!j->emits) return report_csv_row(j->path, &j->dev, &j->row, err, n);
    FILE *f = fopen(j->log, "w");
    if (!f) return 2;
    dup2(fileno(f), 2);
    report_out out = {1, 0, j->path, &j->dev, 0};
    int rc = 0;
    for (int i = 0; i < j->emits; i++) rc |= report_emit(&out, &j->row);
    fflush(stderr);
    snprintf(err, n, "failed=%d", out.failed);
    return rc;
}

static int make_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static int count_rows(const char *path, const char *prefix)
{
    size_t len = 0, k = strlen(prefix);
    char *s = read_all(path, &len);
    int n = 0;
    for (size_t i = 0; s && i + k <= len; i++)
        if ((i == 0 || s[i - 1] == '\n') && !strncmp(s + i, prefix, k)) n++;
    free(s);
    return n;
}

static void csv_rows_whole(void)
{
    char dir[] = "/tmp/attn_writes_XXXXXX", err[1200], list[512], path[96], log[96];
    if (!mkdtemp(dir)) { EXPECT_MSG(0, "mkdtemp failed"); return; }
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    snprintf(log, sizeof log, "%s/stderr.txt", dir);
    csv_job j;
    memset(&j, 0, sizeof j);
    j.path = path;
    snprintf(j.dev.name, sizeof j.dev.name, "test device");
    j.row.rung = "00";
    j.row.shape = shape_of(1, 2, 2, 8, 8, 64);
    j.row.status = "ok";
    j.row.extra = "checked=all:16/16;";

    /* a new file: its head lines and the row in one; then rows alone */
    EXPECT_MSG(report_csv_row(path, &j.dev, &j.row, err, sizeof err) == 0, "new file: %s", err);
    EXPECT_MSG(report_csv_row(path, &j.dev, &j.row, err, sizeof err) == 0, "second row: %s", err);
    EXPECT(count_rows(path, "# device: test device") == 1 && count_rows(path, "rung,B,Hq,") == 1 && count_rows(path, "00,1,2,2,8,8,64,") == 2);
    kept k;
    keep(&k, dir, "rows.csv");
    EXPECT(k.bytes && k.len > 200);

    /* room for 20 more bytes, not a row: nothing of it stays */
    int rc = under_limit(do_csv, &j, (long)k.len + 20, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "--csv ") && strstr(err, "rows.csv: cannot append a row (File too large); the file is as it was"),
               "a row past the limit: %d '%s'", rc, err);
    EXPECT_MSG(intact(&k), "rows.csv changed after a failed append (a partial row left?)");

    /* through report_emit, as the driver: said once in one line, then no more rows tried */
    j.emits = 3;
    j.log = log;
    rc = under_limit(do_csv, &j, (long)k.len + 20, err, sizeof err);
    EXPECT_MSG(rc == -1 && !strcmp(err, "failed=1"), "report_emit past the limit: %d '%s'", rc, err);
    size_t len = 0;
    char *said = read_all(log, &len);
    EXPECT_MSG(said && count_rows(log, "error: --csv ") == 1 && len > 0 && memchr(said, '\n', len) == said + len - 1,
               "stderr is not one line: '%s'", said ? said : "");
    free(said);
    EXPECT_MSG(intact(&k), "rows.csv changed after report_emit failed");
    remove(log);
    j.emits = 0;

    /* a new file whose head lines do not fit: no file at all afterwards */
    char fresh[96];
    snprintf(fresh, sizeof fresh, "%s/fresh.csv", dir);
    j.path = fresh;
    rc = under_limit(do_csv, &j, 100, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "cannot append a row (File too large)"), "a new file past the limit: %d '%s'", rc, err);
    EXPECT_MSG(access(fresh, F_OK) != 0, "a new CSV was left behind by a failed write");

    /* a directory named as the CSV */
    char sub[96];
    snprintf(sub, sizeof sub, "%s/adir.csv", dir);
    EXPECT(mkdir(sub, 0755) == 0);
    rc = report_csv_row(sub, &j.dev, &j.row, err, sizeof err);
    EXPECT_MSG(rc == -1 && strstr(err, "adir.csv: cannot open for appending (Is a directory)"), "a directory: %d '%s'", rc, err);
    rmdir(sub);

    /* a file whose last line was cut short (by an older writer): the row goes on a line of its own */
    char cut[96];
    snprintf(cut, sizeof cut, "%s/cut.csv", dir);
    EXPECT(make_text(cut, "# device: x\nrung,B\n00,1,2") == 0);
    EXPECT_MSG(report_csv_row(cut, &j.dev, &j.row, err, sizeof err) == 0, "%s", err);
    EXPECT_MSG(count_rows(cut, "00,1,2\n") == 1 && count_rows(cut, "00,1,2,2,8,8,64,") == 1, "the row was glued to a cut line");
    remove(cut);

    /* the ceilings' rows take the same path */
    EXPECT_MSG(report_csv_ceiling(path, &j.dev, "ceiling-copy", 1.0, 0, 3000.0, "bytes=1", err, sizeof err) == 0, "%s", err);
    EXPECT(count_rows(path, "ceiling-copy,") == 1 && count_rows(path, "# device:") == 1);
    EXPECT_MSG(entries(dir, list, sizeof list) == 1, "left in the folder: %s", list);
    free(k.bytes);
    remove_tree(dir);
}

const test_case TESTS_writes[] = {
    {"writes: --save's o.npy + lse.npy past a file-size limit (first or second file): -1, one line, the old pair intact, "
     "nothing left beside it; a directory in the way; a new folder made", save_set_under_limit},
    {"writes: --save's dq/dk/dv.npy past a file-size limit: none replaced; bfloat16 widened to float32", save_grads_under_limit},
    {"writes: a --csv row past a file-size limit: -1, one line (once, through report_emit), the file byte for byte as it "
     "was; a new file that fails is removed; a directory refused", csv_rows_whole},
    {NULL, NULL},
};
