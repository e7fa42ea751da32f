/* Minimal .npy (format 1.0/2.0) reading and writing: little-endian float16 or float32, C order.
 * Enough for a user to hand a rung their own Q, K, V and compare its O and LSE in numpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "half.h"

static int errf(char *err, size_t n, const char *msg, const char *path)
{
    snprintf(err, n, "%s: %s", path, msg);
    return -1;
}

int npy_load4(const char *path, attn_dtype t, uint16_t **data, int dims[4], char *err, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errf(err, n, "cannot open", path);
    unsigned char pre[10];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
        fclose(f);
        return errf(err, n, "not a .npy file", path);
    }
    size_t hlen = pre[8] | (pre[9] << 8);
    if (pre[6] >= 2) {  /* version 2+: 4-byte header length */
        unsigned char ext[2];
        if (fread(ext, 1, 2, f) != 2) { fclose(f); return errf(err, n, "truncated header", path); }
        hlen |= ((size_t)ext[0] << 16) | ((size_t)ext[1] << 24);
    }
    char *h = calloc(hlen + 1, 1);
    if (fread(h, 1, hlen, f) != hlen) { free(h); fclose(f); return errf(err, n, "truncated header", path); }

    int is_f16 = strstr(h, "'<f2'") != NULL, is_f32 = strstr(h, "'<f4'") != NULL;
    if (!is_f16 && !is_f32) { free(h); fclose(f); return errf(err, n, "dtype must be float16 or float32", path); }
    if (strstr(h, "'fortran_order': True")) { free(h); fclose(f); return errf(err, n, "must be C order", path); }
    char *sh = strstr(h, "'shape':");
    char *open = sh ? strchr(sh, '(') : NULL;
    long d[8];
    int nd = 0;
    if (open) {
        char *p = open + 1;
        while (nd < 8) {
            while (*p == ' ' || *p == ',') p++;
            if (*p == ')' || !*p) break;
            char *end;
            d[nd] = strtol(p, &end, 10);
            if (end == p) break;
            nd++;
            p = end;
        }
    }
    free(h);
    if (nd != 4) { fclose(f); return errf(err, n, "must be a 4-D array [B, H, N, d]", path); }
    size_t count = 1;
    for (int i = 0; i < 4; i++) {
        if (d[i] < 1 || d[i] > 1000000000L) { fclose(f); return errf(err, n, "bad dimension", path); }
        dims[i] = (int)d[i];
        count *= (size_t)d[i];
    }
    uint16_t *out = malloc(count * sizeof(uint16_t));
    size_t esz = is_f16 ? 2 : 4, chunk = 1 << 20;
    unsigned char *buf = malloc(chunk * esz);
    size_t done = 0;
    while (done < count) {
        size_t want = count - done < chunk ? count - done : chunk;
        if (fread(buf, esz, want, f) != want) {
            free(buf); free(out); fclose(f);
            return errf(err, n, "data shorter than its shape", path);
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
