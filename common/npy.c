/* Minimal .npy (format 1.0/2.0/3.0) reading and writing: little-endian float16 or float32, C order.
 * Enough for a user to hand a rung their own Q, K, V and compare its O and LSE in numpy. The reader
 * trusts nothing in the file: the header is parsed strictly, the shape's size is checked against
 * overflow and against the bytes the file holds before anything is allocated (tests/fuzz.c feeds it
 * mutated and random files). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "half.h"

/* Every refusal names the file: "<path>: <what is wrong>", on one line: what it quotes from the file
 * (a key, a dtype) may hold any byte, so control bytes are written as \xNN; near 1 KB it stops. */
static int errf(char *err, size_t n, const char *path, const char *fmt, ...)
{
    char raw[1024];
    int k = snprintf(raw, sizeof raw, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < sizeof raw && vsnprintf(raw + k, sizeof raw - k, fmt, ap) >= (int)(sizeof raw - k))
        k = (int)sizeof raw;
    va_end(ap);
    if (k >= (int)sizeof raw) memcpy(raw + sizeof raw - 4, "...", 4);     /* cut near 1 KB, and said so */
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p && w + 5 < n; p++) {
        if (*p < 0x20 || *p == 0x7f) w += snprintf(err + w, n - w, "\\x%02x", *p);
        else err[w++] = (char)*p;
    }
    if (n) err[w < n ? w : n - 1] = 0;
    return -1;
}

/* numpy writes headers of a few hundred bytes; anything near this is not a .npy file numpy wrote */
#define NPY_HEADER_MAX 65536
#define NPY_DIM_MAX 1000000000L      /* as the command line's sizes: beyond this is not a shape */
#define NPY_NDIM_MAX 32              /* numpy's own limit on dimensions */

/* The header is a Python dict literal, exactly as numpy writes it:
 *     {'descr': '<f2', 'fortran_order': False, 'shape': (2, 16, 1024, 64), }
 * padded with spaces and ended by '\n'. Read strictly: each of the three keys once, nothing else,
 * nothing after the closing brace but the padding. */
typedef struct npy_header {
    char descr[16];
    int fortran, nd;
    long dims[NPY_NDIM_MAX];
    int have_descr, have_fortran, have_shape;
} npy_header;

static const char *skip_ws(const char *p) { while (*p == ' ' || *p == '\t') p++; return p; }

/* A quoted string ('x' or "x") into out; NULL if malformed or longer than out holds. */
static const char *quoted(const char *p, char *out, size_t len)
{
    char q = *p;
    if (q != '\'' && q != '"') return NULL;
    size_t k = 0;
    for (p++; *p && *p != q; p++) {
        if (k + 1 >= len) return NULL;
        out[k++] = *p;
    }
    if (*p != q) return NULL;
    out[k] = 0;
    return p + 1;
}

/* 0, or -1 with the reason in why */
static int parse_header(const char *h, npy_header *H, char *why, size_t n)
{
    memset(H, 0, sizeof *H);
    const char *p = skip_ws(h);
    if (*p++ != '{') return snprintf(why, n, "malformed header: it does not start with '{'"), -1;
    for (;;) {
        p = skip_ws(p);
        if (*p == '}') { p++; break; }
        char key[32];
        p = quoted(p, key, sizeof key);
        if (!p) return snprintf(why, n, "malformed header: expected a quoted key or '}'"), -1;
        p = skip_ws(p);
        if (*p++ != ':') return snprintf(why, n, "malformed header: expected ':' after '%s'", key), -1;
        p = skip_ws(p);
        if (!strcmp(key, "descr") && !H->have_descr) {
            p = quoted(p, H->descr, sizeof H->descr);
            if (!p) return snprintf(why, n, "malformed header: 'descr' is not a short quoted string"), -1;
            H->have_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !H->have_fortran) {
            if (!strncmp(p, "False", 5)) { H->fortran = 0; p += 5; }
            else if (!strncmp(p, "True", 4)) { H->fortran = 1; p += 4; }
            else return snprintf(why, n, "malformed header: 'fortran_order' is not True or False"), -1;
            H->have_fortran = 1;
        } else if (!strcmp(key, "shape") && !H->have_shape) {
            if (*p++ != '(') return snprintf(why, n, "malformed header: 'shape' is not a tuple '(...)'"), -1;
            for (;;) {
                p = skip_ws(p);
                if (*p == ')') { p++; break; }
                if (*p == '}' || *p == 0)
                    return snprintf(why, n, "malformed header: the shape tuple has no closing ')'"), -1;
                if (*p < '0' || *p > '9')
                    return snprintf(why, n, "malformed header: the shape holds something other than "
                                    "non-negative integers"), -1;
                long x = 0;
                for (; *p >= '0' && *p <= '9'; p++)
                    if ((x = x * 10 + (*p - '0')) > NPY_DIM_MAX) x = NPY_DIM_MAX + 1;   /* saturate */
                if (H->nd == NPY_NDIM_MAX)
                    return snprintf(why, n, "malformed header: more than %d dimensions", NPY_NDIM_MAX), -1;
                H->dims[H->nd++] = x;
                p = skip_ws(p);
                if (*p == ',') p++;
                else if (*p != ')')
                    return snprintf(why, n, "malformed header: expected ',' or ')' in the shape tuple"), -1;
            }
            H->have_shape = 1;
        } else if (!strcmp(key, "descr") || !strcmp(key, "fortran_order") || !strcmp(key, "shape")) {
            return snprintf(why, n, "malformed header: '%s' given twice", key), -1;
        } else {
            return snprintf(why, n, "malformed header: unexpected key '%s' (a .npy header has descr, "
                            "fortran_order and shape)", key), -1;
        }
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != '}') return snprintf(why, n, "malformed header: expected ',' or '}' after '%s'", key), -1;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p) return snprintf(why, n, "malformed header: text after the closing '}'"), -1;
    if (!H->have_descr || !H->have_fortran || !H->have_shape)
        return snprintf(why, n, "malformed header: it lacks '%s'", !H->have_descr ? "descr"
                        : !H->have_fortran ? "fortran_order" : "shape"), -1;
    return 0;
}

static const char *file_kind(mode_t m)
{
    return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
         : "not a regular file or directory";
}

int npy_load4(const char *path, attn_dtype t, uint16_t **data, int dims[4], char *err, size_t n)
{
    /* opened without blocking: a FIFO or a device named q.npy would block a plain open() forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return errf(err, n, path, "cannot open (%s)", strerror(errno));
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return errf(err, n, path, "%s, not a regular file", file_kind(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return errf(err, n, path, "cannot open (%s)", strerror(errno));
    }
    size_t size = (size_t)st.st_size;
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    if (got >= 3 && pre[0] == 0xef && pre[1] == 0xbb && pre[2] == 0xbf) {
        fclose(f);
        return errf(err, n, path, "starts with a UTF-8 byte-order mark (bytes EF BB BF): a text file, not a .npy "
                    "file (which starts with \\x93NUMPY); save the array with np.save");
    }
    if (got != 10 || memcmp(pre, "\x93NUMPY", 6)) {
        fclose(f);
        return errf(err, n, path, "not a .npy file (no \\x93NUMPY magic)");
    }
    if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0) {
        fclose(f);
        return errf(err, n, path, "format version %d.%d; this reader takes 1.0, 2.0 and 3.0", pre[6], pre[7]);
    }
    size_t hlen = pre[8] | ((size_t)pre[9] << 8), hstart = 10;
    if (pre[6] >= 2) {  /* version 2+: 4-byte header length */
        if (fread(pre + 10, 1, 2, f) != 2) { fclose(f); return errf(err, n, path, "truncated header"); }
        hlen |= ((size_t)pre[10] << 16) | ((size_t)pre[11] << 24);
        hstart = 12;
    }
    if (hlen > NPY_HEADER_MAX || hstart + hlen > size) {
        fclose(f);
        return errf(err, n, path, "header of %zu bytes: %s", hlen,
                    hlen > NPY_HEADER_MAX ? "longer than any numpy writes" : "longer than the file (truncated header)");
    }
    char *h = calloc(hlen + 1, 1);
    if (!h || fread(h, 1, hlen, f) != hlen) { free(h); fclose(f); return errf(err, n, path, "truncated header"); }
    if (strlen(h) != hlen) { free(h); fclose(f); return errf(err, n, path, "malformed header: a NUL byte inside it"); }

    npy_header H;
    char why[256];
    int bad = parse_header(h, &H, why, sizeof why);
    free(h);
    if (bad) { fclose(f); return errf(err, n, path, "%s", why); }
    int is_f16 = !strcmp(H.descr, "<f2"), is_f32 = !strcmp(H.descr, "<f4");
    if (!is_f16 && !is_f32) {
        fclose(f);
        return errf(err, n, path, "dtype must be float16 or float32 ('<f2' or '<f4'), not '%s'", H.descr);
    }
    if (H.fortran) { fclose(f); return errf(err, n, path, "must be C order (fortran_order False), as numpy saves by default"); }
    if (H.nd != 4) { fclose(f); return errf(err, n, path, "must be a 4-D array [B, H, N, d], not %d-D", H.nd); }
    size_t esz = is_f16 ? 2 : 4, count = 1;
    for (int i = 0; i < 4; i++) {
        if (H.dims[i] < 1 || H.dims[i] > NPY_DIM_MAX) {
            fclose(f);
            return errf(err, n, path, "bad dimension %d of the shape: each must be in 1..%ld", i, NPY_DIM_MAX);
        }
        /* the product, and the bytes it needs, must not overflow size_t */
        if (count > SIZE_MAX / 4 / (size_t)H.dims[i]) {
            fclose(f);
            return errf(err, n, path, "shape (%ld, %ld, %ld, %ld) holds more elements than memory can",
                        H.dims[0], H.dims[1], H.dims[2], H.dims[3]);
        }
        count *= (size_t)H.dims[i];
    }
    size_t have = size - hstart - hlen, need = count * esz;
    if (have != need) {
        fclose(f);
        if (have < need)
            return errf(err, n, path, "data shorter than its shape: (%ld, %ld, %ld, %ld) of %s needs %zu bytes, "
                        "the file holds %zu after its header", H.dims[0], H.dims[1], H.dims[2], H.dims[3],
                        is_f16 ? "float16" : "float32", need, have);
        return errf(err, n, path, "%zu bytes after the data: a .npy file holds one array, exactly the bytes of "
                    "its shape", have - need);
    }
    uint16_t *out = malloc(count * sizeof(uint16_t));
    size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk * esz);
    if (!out || !buf) {
        free(out); free(buf); fclose(f);
        return errf(err, n, path, "cannot allocate %zu bytes for its data", count * sizeof(uint16_t));
    }
    size_t done = 0;
    while (done < count) {
        size_t want = count - done < chunk ? count - done : chunk;
        if (fread(buf, esz, want, f) != want) {
            free(buf); free(out); fclose(f);
            return errf(err, n, path, "data shorter than its shape (the file shrank while read)");
        }
        for (size_t i = 0; i < want; i++) {
            float x;
            if (is_f16) { uint16_t u; memcpy(&u, buf + 2 * i, 2); x = f16_to_f32(u); }
            else memcpy(&x, buf + 4 * i, 4);
            out[done + i] = f32_to_elem(t, x);
        }
        done += want;
    }
    free(buf);
    fclose(f);
    for (int i = 0; i < 4; i++) dims[i] = (int)H.dims[i];
    *data = out;
    return 0;
}

/* ---------------------------------------------------------------- writing, whole or not at all
 *
 * A set of files (o.npy and lse.npy; dq, dk and dv.npy) is written all or none:
 *   1. each file to a temporary one beside it (".o.npy.XXXXXX" in the same folder), flushed to
 *      the disk (fsync), closed, every step checked;
 *   2. each old file kept under a second name (a hard link, ".o.npy.old.XXXXXX"; where the file
 *      system has none, the old file is moved there);
 *   3. each temporary file renamed over its name (rename is atomic within a folder).
 * A failure at any step undoes the steps before it: the temporary files removed, the old files put
 * back as they were. A file-size limit or a full disk mid-write thus leaves the old files whole. */

/* mkdir -p dir: 0, or -1 with errno */
static int make_dirs(const char *dir)
{
    char buf[4096];
    struct stat st;
    if ((size_t)snprintf(buf, sizeof buf, "%s", dir) >= sizeof buf) { errno = ENAMETOOLONG; return -1; }
    for (size_t i = 1, len = strlen(buf); i <= len; i++) {
        if (i < len && buf[i] != '/') continue;
        char keep = buf[i];
        buf[i] = 0;
        if (stat(buf, &st)) {
            if (errno != ENOENT || (mkdir(buf, 0777) && errno != EEXIST)) return -1;
        } else if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        buf[i] = keep;
    }
    return 0;
}

/* all of n bytes to fd: 0, or -1 with errno (a short write with no errno: ENOSPC) */
static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The .npy header for an array: magic, version 1.0, length, the dict padded with spaces so that the
 * data starts at a multiple of 64 bytes, '\n'. Its length, or 0 if it does not fit. */
static size_t npy_header_bytes(const npy_array *a, char *out, size_t cap)
{
    char shape[256] = "", dict[512];
    size_t len = 0;
    for (int i = 0; i < a->ndim && len < sizeof shape; i++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%d%s", a->dims[i],
                                a->ndim == 1 ? "," : (i + 1 < a->ndim ? ", " : ""));
    int hl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                      a->f32 ? "<f4" : "<f2", shape);
    size_t total = (10 + (size_t)hl + 1 + 63) / 64 * 64;
    if (hl < 0 || total > cap || total - 10 > 65535) return 0;
    memset(out, ' ', total);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)((total - 10) & 0xff);
    out[9] = (char)((total - 10) >> 8);
    memcpy(out + 10, dict, (size_t)hl);
    out[total - 1] = '\n';
    return total;
}

static size_t npy_data_bytes(const npy_array *a)
{
    size_t count = 1;
    for (int i = 0; i < a->ndim; i++) count *= (size_t)a->dims[i];
    return count * (a->f32 ? 4 : 2);
}

/* One array into a new temporary file beside its name (path filled in tmp): 0, or -1 with errno. */
static int write_temp(const char *dir, const npy_array *a, char *tmp, size_t tn)
{
    char hdr[1024];
    size_t hb = npy_header_bytes(a, hdr, sizeof hdr);
    if (!hb) { errno = EINVAL; return -1; }
    if ((size_t)snprintf(tmp, tn, "%s/.%s.XXXXXX", dir, a->name) >= tn) { errno = ENAMETOOLONG; tmp[0] = 0; return -1; }
    int fd = mkstemp(tmp);
    if (fd < 0) { tmp[0] = 0; return -1; }
    mode_t um = umask(0);                  /* mkstemp makes it 0600; give it what fopen would */
    umask(um);
    int bad = fchmod(fd, 0666 & ~um) || write_all(fd, hdr, hb) || write_all(fd, a->data, npy_data_bytes(a)) ||
              fsync(fd);
    int e = errno;
    if (close(fd) && !bad) { bad = 1; e = errno; }
    errno = e;
    return bad ? -1 : 0;
}

#define NPY_SET_MAX 8
typedef struct npy_slot {
    char target[4200], tmp[4200], old[4200];
    int kept;                  /* 0 no old file, 1 old file hard-linked at `old`, 2 old file moved to `old` */
    int placed;                /* the new file renamed over target */
} npy_slot;

/* Keep target's old file (if any) under slot->old: 0, or -1 with errno (a directory: EISDIR). */
static int keep_old(const char *dir, const char *name, npy_slot *sl)
{
    struct stat st;
    if (lstat(sl->target, &st)) return errno == ENOENT ? 0 : -1;
    if (S_ISDIR(st.st_mode)) { errno = EISDIR; return -1; }
    if ((size_t)snprintf(sl->old, sizeof sl->old, "%s/.%s.old.XXXXXX", dir, name) >= sizeof sl->old) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(sl->old);                      /* a fresh name, then the old file under it */
    if (fd < 0) return -1;
    close(fd);
    unlink(sl->old);
    if (!link(sl->target, sl->old)) { sl->kept = 1; return 0; }
    if (!rename(sl->target, sl->old)) { sl->kept = 2; return 0; }
    return -1;
}

/* Undo: the new files taken away, the old ones put back, the temporary files removed. */
static void undo(npy_slot *sl, int count)
{
    for (int i = count - 1; i >= 0; i--) {
        if (sl[i].placed) {
            if (sl[i].kept) rename(sl[i].old, sl[i].target);
            else unlink(sl[i].target);
        } else if (sl[i].kept == 1) {
            unlink(sl[i].old);
        } else if (sl[i].kept == 2) {
            rename(sl[i].old, sl[i].target);
        }
        if (sl[i].tmp[0] && !sl[i].placed) unlink(sl[i].tmp);
    }
}

/* "o.npy and lse.npy", "dq.npy, dk.npy and dv.npy" */
static const char *set_names(const npy_array *a, int count, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < count && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i == 0 ? "" : i + 1 == count ? " and " : ", ", a[i].name);
    return out;
}

int npy_save_set(const char *dir, const npy_array *a, int count, char *err, size_t n)
{
    char names[256];
    set_names(a, count, names, sizeof names);
    if (count < 1 || count > NPY_SET_MAX) return errf(err, n, dir, "cannot write %d files as one set", count);
    npy_slot *sl = calloc((size_t)count, sizeof *sl);
    if (!sl) return errf(err, n, dir, "out of memory; %s not written", names);
    int i;
    const char *what = "";
    for (i = 0; i < count; i++) {
        if ((size_t)snprintf(sl[i].target, sizeof sl[i].target, "%s/%s", dir, a[i].name) >= sizeof sl[i].target) {
            errno = ENAMETOOLONG;
            break;
        }
    }
    if (i < count) { what = "cannot name"; goto failed; }
    for (i = 0; i < count; i++)
        if (write_temp(dir, &a[i], sl[i].tmp, sizeof sl[i].tmp)) { what = "cannot write"; goto failed; }
    for (i = 0; i < count; i++)
        if (keep_old(dir, a[i].name, &sl[i])) {
            what = errno == EISDIR ? "cannot replace" : "cannot keep the old";
            goto failed;
        }
    for (i = 0; i < count; i++) {
        if (rename(sl[i].tmp, sl[i].target)) { what = "cannot replace"; goto failed; }
        sl[i].placed = 1;
    }
    for (i = 0; i < count; i++)
        if (sl[i].kept) unlink(sl[i].old);
    free(sl);
    return 0;

failed:;
    int e = errno;
    undo(sl, count);
    free(sl);
    return errf(err, n, dir, "%s %s (%s); %s %s as %s were", what, a[i].name, strerror(e), names,
                count > 1 ? "are" : "is", count > 1 ? "they" : "it");
}

/* One file on its own: a set of one, named by its path. */
static int npy_save(const char *path, const void *data, int f32, const int *dims, int ndim)
{
    char dir[4096], err[512];
    const char *slash = strrchr(path, '/');
    if (ndim < 1 || ndim > 4) return -1;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if ((size_t)(slash - path) >= sizeof dir) return -1;
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    npy_array a = {slash ? slash + 1 : path, data, f32, ndim, {0, 0, 0, 0}};
    memcpy(a.dims, dims, sizeof(int) * (size_t)ndim);
    return npy_save_set(dir, &a, 1, err, sizeof err);
}

int npy_save_f16(const char *path, const uint16_t *data, const int *dims, int ndim)
{
    return npy_save(path, data, 0, dims, ndim);
}

int npy_save_f32(const char *path, const float *data, const int *dims, int ndim)
{
    return npy_save(path, data, 1, dims, ndim);
}

/* bfloat16 as float32 (numpy has no bfloat16): a malloc'd copy, or NULL */
static float *widened(attn_dtype t, const uint16_t *x, size_t count)
{
    float *f = malloc(sizeof(float) * (count ? count : 1));
    for (size_t i = 0; f && i < count; i++) f[i] = elem_to_f32(t, x[i]);
    return f;
}

int npy_save_outputs(const char *dir, const attn_shape *s, const uint16_t *o, const float *lse, char *err, size_t n)
{
    if (make_dirs(dir))
        return errf(err, n, dir, "cannot make the folder (%s); o.npy and lse.npy not written", strerror(errno));
    npy_array a[2] = {{"o.npy", o, 0, 4, {s->B, s->Hq, s->N, s->d}}, {"lse.npy", lse, 1, 3, {s->B, s->Hq, s->N, 0}}};
    float *of = NULL;
    if (s->dtype == ATTN_BF16) {
        if (!(of = widened(s->dtype, o, attn_q_elems(s))))
            return errf(err, n, dir, "out of memory; o.npy and lse.npy not written");
        a[0].data = of;
        a[0].f32 = 1;
    }
    int rc = npy_save_set(dir, a, 2, err, n);
    free(of);
    return rc;
}

int npy_save_grads(const char *dir, const attn_shape *s, uint16_t *const g[3], char *err, size_t n)
{
    npy_array a[3] = {{"dq.npy", g[0], 0, 4, {s->B, s->Hq, s->N, s->d}},
                      {"dk.npy", g[1], 0, 4, {s->B, s->Hkv, s->M, s->d}},
                      {"dv.npy", g[2], 0, 4, {s->B, s->Hkv, s->M, s->d}}};
    float *wide[3] = {NULL, NULL, NULL};
    int rc = 0;
    if (make_dirs(dir))
        return errf(err, n, dir, "cannot make the folder (%s); dq.npy, dk.npy and dv.npy not written", strerror(errno));
    if (s->dtype != ATTN_F16)
        for (int w = 0; w < 3 && !rc; w++) {
            size_t count = (size_t)a[w].dims[0] * a[w].dims[1] * a[w].dims[2] * a[w].dims[3];
            if (!(wide[w] = widened(s->dtype, g[w], count)))
                rc = errf(err, n, dir, "out of memory; dq.npy, dk.npy and dv.npy not written");
            a[w].data = wide[w];
            a[w].f32 = 1;
        }
    if (!rc) rc = npy_save_set(dir, a, 3, err, n);
    for (int w = 0; w < 3; w++) free(wide[w]);
    return rc;
}
