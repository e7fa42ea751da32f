/* The single main() that every rung links: parse -> pick the variant -> find the device -> hand
 * its state (driver_state.h) over to one job, each in a file of its own (jobs.h):
 *
 *   one shape        run_shape.c    the rung on the command line's shape (or --load's inputs)
 *                    run_grad.c     the same for a backward rung (08: the binary defines rung_grad_own)
 *   --sweep FILE     sweep.c        every shape of a sweep file, smallest first
 *   --read-floor     read_floor.c   instead of the rung, the floor for the shape's K and V
 *   --ceilings       ceilings.c     the copy and GEMM ceilings
 *
 * Everything a user gave is checked before the device is touched: the arguments (cli_parse), the
 * files and folders they name (cli_check_files), --load's arrays and --sweep's lines, read whole.
 *
 * Exit codes (driver_state.h): 0 ok, 1 a check failed, 2 bad arguments (or a shape too big for the
 * device, or a failed write of --save or --csv), 3 the rung refused the shape (unsupported), 4 no
 * CUDA device. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device_env.h"
#include "jobs.h"
#include "variants.h"

/* --load DIR: q.npy, k.npy and v.npy give the inputs, and with them the shape; a backward rung (08)
 * also reads do.npy, dL/dO, shaped as q. A refusal names the files and their shapes, never a flag the
 * user did not give. */
static int load_inputs(driver *D, uint16_t *in[4])
{
    char path[4200], err[1200], msg[1400];
    int dq[4], dk[4], dv[4], dg[4];
    const char *names[4] = {"q.npy", "k.npy", "v.npy", "do.npy"};
    int *dims[4] = {dq, dk, dv, dg};
    const char *dir = D->opt.load;
    for (int t = 0; t < (D->grad ? 4 : 3); t++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[t]);
        if (npy_load4(path, D->opt.shape.dtype, &in[t], dims[t], err, sizeof err)) {
            fprintf(stderr, "error: --load: %s\n", err);
            return -1;
        }
    }
    msg[0] = 0;
    if (dq[0] != dk[0] || dq[3] != dk[3] || memcmp(dk, dv, sizeof dk))
        cli_message(msg, sizeof msg, "--load %s: shapes disagree: q.npy [%d,%d,%d,%d], k.npy [%d,%d,%d,%d], v.npy "
                    "[%d,%d,%d,%d]; need q [B,Hq,N,d], k and v [B,Hkv,M,d]", dir, dq[0], dq[1], dq[2], dq[3],
                    dk[0], dk[1], dk[2], dk[3], dv[0], dv[1], dv[2], dv[3]);
    else if (D->grad && memcmp(dq, dg, sizeof dq))
        cli_message(msg, sizeof msg, "--load %s: do.npy is [%d,%d,%d,%d]; it must be shaped as q.npy [%d,%d,%d,%d]",
                    dir, dg[0], dg[1], dg[2], dg[3], dq[0], dq[1], dq[2], dq[3]);
    else if (dq[1] % dk[1])
        cli_message(msg, sizeof msg, "--load %s: q.npy has %d heads and k.npy %d: the query heads must be a multiple "
                    "of the KV heads (MHA, GQA or MQA)", dir, dq[1], dk[1]);
    if (msg[0]) {
        fprintf(stderr, "error: %s\n", msg);
        return -1;
    }
    attn_shape *s = &D->opt.shape;
    s->B = dq[0]; s->Hq = dq[1]; s->N = dq[2]; s->d = dq[3]; s->Hkv = dk[1]; s->M = dk[2];
    if (!D->opt.have_scale) s->scale = 1.0f / sqrtf((float)s->d);
    if (shape_validate(s, err, sizeof err)) {
        cli_message(msg, sizeof msg, "--load %s: q.npy [%d,%d,%d,%d], k.npy and v.npy [%d,%d,%d,%d]: %s", dir,
                    dq[0], dq[1], dq[2], dq[3], dk[0], dk[1], dk[2], dk[3], err);
        fprintf(stderr, "error: %s\n", msg);
        return -1;
    }
    return 0;
}

/* The job's exit code, or 2 if a --save or --csv write failed (each said once, as it failed). */
static int finish(const driver *D, int rc)
{
    return D->save_failed || D->out.failed ? EXIT_USAGE : rc;
}

/* The rung's own default shape and flags (attn.h), where its .cu defines them; NULL elsewhere. */
extern const rung_cli rung_cli_own __attribute__((weak));

int main(int argc, char **argv)
{
    driver D;
    memset(&D, 0, sizeof D);
    cli_defaults_for(&D.opt, &rung_cli_own ? &rung_cli_own : NULL);
    D.grad = variant_grad();
    D.opt.backward = D.grad != NULL;
    char err[CLI_ERR_MAX];
    int rc = cli_parse(argc, argv, &D.opt, err, sizeof err);
    if (rc > 0) { printf("%s\n", err); return EXIT_OK; }
    if (rc < 0) { fprintf(stderr, "error: %s\n", err); return EXIT_USAGE; }
    /* a full disk or a file-size limit: write() says so (and the run exits 2), not a signal */
    signal(SIGXFSZ, SIG_IGN);

    if (D.opt.pass) {                  /* which sweeps run this binary (tools/ladder.sh, tour.sh) */
        printf("%s\n", D.grad ? "backward" : "forward");
        return EXIT_OK;
    }
    if (D.opt.list) {                  /* the C API's ladder_variants writes the same lines (ladder.c) */
        const rung *r;
        for (int i = 0; (r = variant_at(i, NULL)); i++) printf("%s\t%s\t%s\n", r->id, r->name, r->summary);
        return EXIT_OK;
    }
    if (D.opt.probe) {                 /* which device (tools/, tests/): asks nothing else of the line */
        if (device_open(&D)) printf("%s %d %s\n", D.dev.short_name, D.dev.sm_count, D.dev.name);
        else printf("none\n");
        return EXIT_OK;
    }
    if (cli_check_files(&D.opt, err, sizeof err)) { fprintf(stderr, "error: %s\n", err); return EXIT_USAGE; }
    if (D.opt.check_sweep) {           /* tools/peers.py asks the rungs' own parser about a sweep */
        rc = sweep_check_file(D.opt.check_sweep, &D.opt, stdout, err, sizeof err);
        if (rc < 0) fprintf(stderr, "error: %s\n", err);
        return rc == 0 ? EXIT_OK : EXIT_USAGE;
    }
    D.r = variant_pick(D.opt.variant, D.opt.shape.dtype, &D.r_fp8);
    if (!D.r) {
        char ids[1024];
        variant_ids(ids, sizeof ids);
        cli_message(err, sizeof err, "--variant: expected one of %s (--list says what each is), got '%s'", ids,
                    D.opt.variant);
        fprintf(stderr, "error: %s\n", err);
        return EXIT_USAGE;
    }
    /* what the files hold, before the device: --load's arrays, every line of --sweep */
    uint16_t *loaded[4] = {NULL, NULL, NULL, NULL};
    if (D.opt.load && load_inputs(&D, loaded)) return EXIT_USAGE;
    if (D.opt.sweep && sweep_check(&D)) return EXIT_USAGE;

    D.have_device = device_open(&D);
    if (!D.have_device) nominal_env(&D.env);
    D.env.planner = D.opt.planner;
    D.env.kv_block = D.opt.kv_block;
    D.env.fp8_per_tensor = D.opt.fp8_per_tensor;
    D.env.fp8_no_hadamard = D.opt.fp8_no_hadamard;
    /* rows go to the table (with one header, or none with --no-header) and, on a device, the CSV */
    D.out = (report_out){D.opt.quiet, D.opt.no_header, D.have_device ? D.opt.csv : NULL, &D.dev, 0};

    if (!D.have_device) {
        /* Still answer what needs no GPU: does the rung refuse this shape? */
        if (!D.opt.sweep && !D.opt.ceilings) {
            char why[512];
            if (attn_unsupported(D.r, D.r_fp8, &D.opt.shape, &D.env, why, sizeof why)) {
                printf("unsupported: %s\n", why);
                return EXIT_UNSUPPORTED;
            }
        }
        fprintf(stderr, "no CUDA device found: this machine can build and run the CPU tests, not the rungs\n");
        return EXIT_NO_DEVICE;
    }
    device_start(&D);

    if (D.opt.ceilings) return run_ceilings(&D);
    if (D.opt.sweep) return finish(&D, run_sweep(&D));

    run_case one = {D.opt.shape, D.opt.input_mode, D.opt.seqlens, "", ""};
    snprintf(one.dist, sizeof one.dist, "%s", D.opt.seqlen_dist);
    double first_ms;
    int st = run_one(&D, &one, D.opt.load ? loaded : NULL, &first_ms);
    switch (st) {
    case ST_OK: return finish(&D, EXIT_OK);
    case ST_UNSUPPORTED: return finish(&D, EXIT_UNSUPPORTED);
    case ST_TOO_BIG: return EXIT_USAGE;
    default: return finish(&D, EXIT_FAIL);
    }
}
