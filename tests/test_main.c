/* Runs every CPU test table; exit status 1 if any test failed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"

extern const test_case TESTS_md[], TESTS_ref[], TESTS_cli[], TESTS_npy[], TESTS_half[],
    TESTS_check[], TESTS_planner[], TESTS_combine[], TESTS_pages[], TESTS_fp8[], TESTS_hadamard[],
    TESTS_ref_bwd[], TESTS_fp8_step[], TESTS_writes[];

static const test_case *const groups[] = {TESTS_half, TESTS_md, TESTS_ref, TESTS_ref_bwd, TESTS_cli, TESTS_npy,
                                          TESTS_check, TESTS_planner, TESTS_combine, TESTS_pages,
                                          TESTS_fp8, TESTS_hadamard, TESTS_fp8_step, TESTS_writes, NULL};

static int failed_now;
static char first_failure[512];

void test_fail(const char *file, int line, const char *fmt, ...)
{
    if (!failed_now) {
        int k = snprintf(first_failure, sizeof first_failure, "%s:%d: ", file, line);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(first_failure + k, sizeof first_failure - k, fmt, ap);
        va_end(ap);
    }
    failed_now++;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    /* no arguments: every test; --help says so; anything else is refused, not ignored */
    if (argc > 1) {
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            printf("usage: cpu_tests\n  runs every CPU test (tests/test_*.c) from the repository root, printing 'ok NAME' or\n"
                   "  'FAIL NAME: why' for each, then a count; exit 0, or 1 if one failed. make test runs it.\n");
            return 0;
        }
        char msg[1200];
        cli_message(msg, sizeof msg, "cpu_tests: unknown argument '%s' (it takes none; --help shows its usage)", argv[1]);
        fprintf(stderr, "%s\n", msg);
        return 2;
    }
    for (int g = 0; groups[g]; g++) {
        for (const test_case *t = groups[g]; t->name; t++) {
            failed_now = 0;
            first_failure[0] = 0;
            t->fn();
            if (failed_now) {
                printf("FAIL %s: %s%s\n", t->name, first_failure,
                       failed_now > 1 ? " (and more)" : "");
                failed++;
            } else {
                printf("ok %s\n", t->name);
                passed++;
            }
        }
    }
    printf("cpu tests: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
