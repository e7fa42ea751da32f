/* .npy reading and writing (npy.c): round trips, the header numpy expects, and refusals. Files go
 * to a fresh mkdtemp directory under /tmp, removed afterwards. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/half.h"

static char dir[64];
static char paths[16][128];
static int npaths;

static const char *tmp_path(const char *name)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/attn_npy_XXXXXX");
        if (!mkdtemp(dir)) { dir[0] = 0; return NULL; }
    }
    char *p = paths[npaths < 16 ? npaths++ : 15];
    snprintf(p, 128, "%s/%s", dir, name);
    return p;
}

static void cleanup(void)
{
    for (int i = 0; i < npaths; i++) remove(paths[i]);
    npaths = 0;
    if (dir[0]) rmdir(dir);
    dir[0] = 0;
}

static int write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* A file as numpy itself writes it: magic, version, header length, dict padded with spaces to a
 * multiple of 64 bytes ending in '\n', then the data. `version` 1 or 2. */
static int write_npy_by_hand(const char *path, int version, const char *dict, const void *data, size_t nbytes)
{
    size_t pre = version == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
    unsigned char *buf = malloc(total + nbytes);
    if (!buf) return -1;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version; buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xff); buf[9] = (unsigned char)(hlen >> 8);
    if (version == 2) { buf[10] = 0; buf[11] = 0; }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', total - pre - dl - 1);
    buf[total - 1] = '\n';
    memcpy(buf + total, data, nbytes);
    int rc = write_bytes(path, buf, total + nbytes);
    free(buf);
    return rc;
}

/* 1.2M halves (more than one read chunk of 2^20) cycling through every non-NaN bit pattern. */
static void npy_f16_round_trip(void)
{
    const int dims[4] = {2, 2, 300, 1001};
    size_t n = 2u * 2 * 300 * 1001;
    uint16_t *a = malloc(n * 2), *b = NULL;
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++) {
        while ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) h = (h + 1) & 0xffffu;   /* skip NaN */
        a[i] = (uint16_t)h;
        h = (h + 1) & 0xffffu;
    }
    const char *p = tmp_path("x.npy");
    EXPECT(p != NULL);
    if (!p) { free(a); return; }
    EXPECT(npy_save_f16(p, a, dims, 4) == 0);
    int got[4] = {0, 0, 0, 0};
    char err[256] = "";
    int rc = npy_load4(p, ATTN_F16, &b, got, err, sizeof err);
    EXPECT_MSG(rc == 0, "load: %d (%s)", rc, err);
    EXPECT(got[0] == 2 && got[1] == 2 && got[2] == 300 && got[3] == 1001);
    if (rc == 0) {
        size_t first = n;
        for (size_t i = 0; i < n && first == n; i++) if (a[i] != b[i]) first = i;
        EXPECT_MSG(first == n, "element %zu: saved 0x%04x, loaded 0x%04x", first,
                   first < n ? a[first] : 0, first < n ? b[first] : 0);
    }
    free(b);

    /* the file is exactly header + 2 bytes per element, the header a multiple of 64 bytes */
    FILE *f = fopen(p, "rb");
    unsigned char hdr[256];
    size_t got_n = f ? fread(hdr, 1, sizeof hdr, f) : 0;
    long size = -1;
    if (f) { fseek(f, 0, SEEK_END); size = ftell(f); fclose(f); }
    EXPECT(got_n == sizeof hdr && memcmp(hdr, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = hdr[8] | (hdr[9] << 8);
    EXPECT_MSG((10 + hlen) % 64 == 0, "header of %zu bytes is not 64-aligned", 10 + hlen);
    EXPECT(10 + hlen <= sizeof hdr && hdr[10 + hlen - 1] == '\n');
    EXPECT(size == (long)(10 + hlen + 2 * n));
    char dict[256];
    size_t dl = 10 + hlen <= sizeof hdr ? hlen : 0;
    memcpy(dict, hdr + 10, dl);
    dict[dl] = 0;
    EXPECT_MSG(strstr(dict, "'descr': '<f2'") && strstr(dict, "'fortran_order': False") &&
               strstr(dict, "'shape': (2, 2, 300, 1001)"), "header: %s", dict);
    free(a);
    cleanup();
}

/* float32 data loads into float16 storage as f32_to_f16 of each value (rounded once, to nearest
 * even), and into bfloat16 storage as f32_to_bf16. */
static void npy_f32_into_half(void)
{
    const int dims[4] = {1, 2, 3, 7};
    enum { N = 42 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)((i - 20) * 0.1 + 1e-3 * i * i);
    x[0] = 70000.0f;               /* beyond float16: inf */
    x[1] = 1e-8f;                  /* float16 subnormal range: 0 */
    x[2] = 1.0f + ldexpf(1.0f, -11);   /* a tie */
    x[3] = -3e-5f;                 /* a float16 subnormal */
    const char *p = tmp_path("f.npy");
    EXPECT(p && npy_save_f32(p, x, dims, 4) == 0);
    uint16_t *h = NULL, *bf = NULL;
    int got[4];
    char err[256] = "";
    EXPECT(npy_load4(p, ATTN_F16, &h, got, err, sizeof err) == 0);
    EXPECT(got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 7);
    EXPECT(npy_load4(p, ATTN_BF16, &bf, got, err, sizeof err) == 0);
    int bad = 0;
    for (int i = 0; h && bf && i < N; i++)
        if (h[i] != f32_to_f16(x[i]) || bf[i] != f32_to_bf16(x[i])) bad++;
    EXPECT_MSG(h && bf && bad == 0, "%d elements differ from f32_to_f16 / f32_to_bf16", bad);
    if (h) EXPECT(h[0] == 0x7c00 && h[2] == 0x3c00 && h[3] == f32_to_f16(-3e-5f) && (h[3] & 0x7c00) == 0);
    free(h);
    free(bf);
    cleanup();
}

/* A file written by hand the way numpy writes it (not by npy_save): versions 1.0 and 2.0. */
static void npy_reads_numpy_layout(void)
{
    const uint16_t data[4] = {0x3c00, 0x4000, 0xc200, 0x0001};   /* 1, 2, -3, 2^-24 */
    char err[256];
    int got[4];
    for (int version = 1; version <= 2; version++) {
        const char *p = tmp_path(version == 1 ? "v1.npy" : "v2.npy");
        EXPECT(p && write_npy_by_hand(p, version,
                   "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", data, 8) == 0);
        uint16_t *h = NULL;
        err[0] = 0;
        int rc = npy_load4(p, ATTN_F16, &h, got, err, sizeof err);
        EXPECT_MSG(rc == 0, "version %d: %d (%s)", version, rc, err);
        EXPECT(rc != 0 || (got[0] == 1 && got[1] == 1 && got[2] == 2 && got[3] == 2));
        EXPECT(rc != 0 || memcmp(h, data, 8) == 0);
        free(h);
    }
    cleanup();
}

static void expect_load_fails(const char *path, const char *want)
{
    uint16_t *h = (uint16_t *)0x1;   /* must not be touched on failure */
    int got[4];
    char err[256] = "";
    int rc = npy_load4(path, ATTN_F16, &h, got, err, sizeof err);
    EXPECT_MSG(rc == -1, "%s: returned %d, expected -1", path, rc);
    EXPECT_MSG(strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
    EXPECT(h == (uint16_t *)0x1);
}

static void npy_rejects(void)
{
    const uint16_t data[24] = {0};
    const int dims3[3] = {2, 3, 4}, dims4[4] = {1, 2, 3, 4};

    const char *p3 = tmp_path("three_d.npy");          /* a 3-D array */
    EXPECT(p3 && npy_save_f16(p3, data, dims3, 3) == 0);
    if (p3) expect_load_fails(p3, "must be a 4-D array");

    const char *p1 = tmp_path("one_d.npy");            /* 1-D, written with numpy's "(24,)" */
    const int dims1[1] = {24};
    EXPECT(p1 && npy_save_f16(p1, data, dims1, 1) == 0);
    if (p1) expect_load_fails(p1, "must be a 4-D array");
    if (p1) {                                          /* numpy needs the 1-tuple's comma */
        FILE *f = fopen(p1, "rb");
        char hdr[129] = "";
        size_t n = f ? fread(hdr, 1, 128, f) : 0;
        if (f) fclose(f);
        hdr[n < 128 ? n : 128] = 0;
        EXPECT_MSG(strstr(hdr + 10, "'shape': (24,)") != NULL, "1-D header: %s", hdr + 10);
    }

    const char *pm = tmp_path("magic.npy");            /* a good file with one byte of magic wrong */
    EXPECT(pm && npy_save_f16(pm, data, dims4, 4) == 0);
    if (pm) {
        FILE *f = fopen(pm, "r+b");
        if (f) { fseek(f, 1, SEEK_SET); fputc('n', f); fclose(f); }
        expect_load_fails(pm, "not a .npy file");
    }

    const char *pe = tmp_path("empty.npy");            /* shorter than the magic */
    EXPECT(pe && write_bytes(pe, "\x93NU", 3) == 0);
    if (pe) expect_load_fails(pe, "not a .npy file");

    const char *pt = tmp_path("short.npy");            /* data cut short */
    EXPECT(pt && npy_save_f16(pt, data, dims4, 4) == 0);
    if (pt) {
        FILE *f = fopen(pt, "rb");
        unsigned char buf[256];
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f) fclose(f);
        EXPECT(n > 10 && write_bytes(pt, buf, n - 2) == 0);
        expect_load_fails(pt, "data shorter than its shape");
    }

    const char *pd = tmp_path("f64.npy");              /* float64 */
    EXPECT(pd && write_npy_by_hand(pd, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }",
                                   "\0\0\0\0\0\0\xf0\x3f", 8) == 0);
    if (pd) expect_load_fails(pd, "dtype must be float16 or float32");

    const char *pf = tmp_path("fortran.npy");          /* Fortran order */
    EXPECT(pf && write_npy_by_hand(pf, 1, "{'descr': '<f2', 'fortran_order': True, 'shape': (1, 1, 1, 2), }",
                                   "\0\x3c\0\x3c", 4) == 0);
    if (pf) expect_load_fails(pf, "must be C order");

    const char *pz = tmp_path("zero_dim.npy");         /* a zero-length dimension */
    EXPECT(pz && write_npy_by_hand(pz, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 0, 1, 2), }",
                                   "", 0) == 0);
    if (pz) expect_load_fails(pz, "bad dimension");

    const char *missing = tmp_path("does_not_exist.npy");
    if (missing) expect_load_fails(missing, "cannot open");
    cleanup();

    EXPECT(npy_save_f16("/nonexistent_dir_attn/x.npy", data, dims4, 4) == -1);
}

/* Issue 21's crashes and silent acceptances: a header that claims far more data than the file holds
 * (it used to be allocated and read: a segfault), a shape whose size overflows, a header without its
 * ')' and bytes after the data (both used to be accepted). Each is refused with the file named. */
static void npy_rejects_lying_headers(void)
{
    static const unsigned char four_mib[1 << 12] = {0};   /* (the data need not be 4 MiB to lie) */
    struct { const char *name, *dict; size_t bytes; const char *want; } c[] = {
        {"huge.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1000, 1000, 1000, 1000), }", sizeof four_mib,
         "data shorter than its shape: (1000, 1000, 1000, 1000) of float16 needs 2000000000000 bytes"},
        {"overflow.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000, 1000000000, 1000000000), }",
         16, "holds more elements than memory can"},
        {"big_dim.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 1, 99999999999999999999), }", 2,
         "bad dimension 3 of the shape"},
        {"no_paren.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2, }", 8,
         "malformed header: the shape tuple has no closing ')'"},
        {"trailing.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 11,
         "3 bytes after the data"},
        {"negative.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, -1, 2, 2), }", 8,
         "the shape holds something other than non-negative integers"},
        {"twice.npy", "{'descr': '<f2', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 8,
         "'descr' given twice"},
        {"extra_key.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), 'x': 1, }", 8,
         "unexpected key 'x'"},
        {"no_shape.npy", "{'descr': '<f2', 'fortran_order': False, }", 8, "it lacks 'shape'"},
        {"after_brace.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), } junk", 8,
         "text after the closing '}'"},
        {"big_endian.npy", "{'descr': '>f2', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 8,
         "dtype must be float16 or float32 ('<f2' or '<f4'), not '>f2'"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *p = tmp_path(c[i].name);
        EXPECT(p && write_npy_by_hand(p, 1, c[i].dict, four_mib, c[i].bytes) == 0);
        if (!p) continue;
        expect_load_fails(p, c[i].want);
        expect_load_fails(p, c[i].name);            /* the message names the file */
    }
    cleanup();

    /* a header length beyond the file, and a format version this reader does not know */
    const char *pl = tmp_path("long_header.npy");
    EXPECT(pl && write_bytes(pl, "\x93NUMPY\x01\x00\xff\xff{}", 12) == 0);
    if (pl) expect_load_fails(pl, "longer than the file");
    const char *pv = tmp_path("version.npy");
    EXPECT(pv && write_bytes(pv, "\x93NUMPY\x09\x00\x02\x00{}", 12) == 0);
    if (pv) expect_load_fails(pv, "format version 9.0");
    const char *pn = tmp_path("nul.npy");
    EXPECT(pn && write_bytes(pn, "\x93NUMPY\x01\x00\x02\x00{\0", 12) == 0);
    if (pn) expect_load_fails(pn, "a NUL byte inside it");
    if (dir[0]) expect_load_fails(dir, "not a regular file");     /* a directory */
    cleanup();
}

/* Issue 35: a FIFO named q.npy blocked the reader forever (fopen waits for a writer); a file that a
 * text editor saved with a UTF-8 byte-order mark was "not a .npy file" with no word of why. Both are
 * refused at once, named as what they are. */
static void npy_rejects_fifo_and_bom(void)
{
    const char *pf = tmp_path("fifo.npy");
    EXPECT(pf && mkfifo(pf, 0600) == 0);
    if (pf) {
        alarm(10);                                     /* a hang ends the test run, not the machine */
        expect_load_fails(pf, "a FIFO, not a regular file");
        alarm(0);
    }
    const char *pb = tmp_path("bom.npy");
    EXPECT(pb && write_bytes(pb, "\xef\xbb\xbf\x93NUMPY\x01\x00{}", 15) == 0);
    if (pb) expect_load_fails(pb, "starts with a UTF-8 byte-order mark (bytes EF BB BF)");
    const char *pc = tmp_path("char_dev.npy");         /* a device: a link to /dev/zero */
    EXPECT(pc && symlink("/dev/zero", pc) == 0);
    if (pc) expect_load_fails(pc, "a character device, not a regular file");
    cleanup();
}

const test_case TESTS_npy[] = {
    {"npy: save_f16 -> load4 gives identical bits and dims (1.2M elems, every pattern)", npy_f16_round_trip},
    {"npy: float32 file into f16/bf16 storage equals f32_to_f16/f32_to_bf16", npy_f32_into_half},
    {"npy: reads numpy's own layout, format 1.0 and 2.0", npy_reads_numpy_layout},
    {"npy: 3-D, 1-D, bad magic, truncated, float64, Fortran order, missing file -> -1", npy_rejects},
    {"npy: a huge or overflowing shape, a malformed header, trailing bytes -> -1 naming the file", npy_rejects_lying_headers},
    {"npy: a FIFO (at once, no hang), a device, a UTF-8 byte-order mark -> -1 saying which", npy_rejects_fifo_and_bom},
    {NULL, NULL},
};
