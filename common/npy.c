/* Minimal .npy (format 1.0/2.0/3.0) reading and writing: little-endian float16 or float32, C order.
 * Enough for a user to hand a rung their own Q, K, V and compare its O and LSE in numpy. The reader
 * trusts nothing in the file: the header is parsed strictly, the shape's size is checked against
 * overflow and against the bytes the file holds before anything is allocated (tests/fuzz.c feeds it
 * mutated and random files). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "harness.h"
#include "half.h"

/* Every refusal names the file: "<path>: <what is wrong>", on one line: what it quotes from the file
 * (a key, a dtype) may hold any byte, so control bytes are written as \xNN. */
static int errf(char *err, size_t n, const char *path, const char *fmt, ...)
{
    char raw[1024];
    int k = snprintf(raw, sizeof raw, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < sizeof raw) vsnprintf(raw + k, sizeof raw - k, fmt, ap);
    va_end(ap);
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

int npy_load4(const char *path, attn_dtype t, uint16_t **data, int dims[4], char *err, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errf(err, n, path, "cannot open (%s)", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return errf(err, n, path, "not a regular file");
    }
    size_t size = (size_t)st.st_size;
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
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

static int npy_save(const char *path, const void *data, size_t esz, const char *descr, const int *dims, int ndim)
{
    char shape[256] = "", hdr[512];
    size_t count = 1, len = 0;
    for (int i = 0; i < ndim; i++) {
        len += snprintf(shape + len, sizeof shape - len, "%d%s", dims[i], ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
        count *= (size_t)dims[i];
    }
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    /* pad so that magic (6) + version (2) + length (2) + header is a multiple of 64, ending in \n */
    int total = 10 + hl + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    int hlen = hl + pad + 1;
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, hl, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t w = fwrite(data, esz, count, f);
    return (fclose(f) == 0 && w == count) ? 0 : -1;
}

int npy_save_f16(const char *path, const uint16_t *data, const int *dims, int ndim)
{
    return npy_save(path, data, 2, "<f2", dims, ndim);
}

int npy_save_f32(const char *path, const float *data, const int *dims, int ndim)
{
    return npy_save(path, data, 4, "<f4", dims, ndim);
}
