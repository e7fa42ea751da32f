/* A small test harness for the CPU tests: each test_*.c file exports a NULL-terminated table of
 * test_case, listed in test_main.c. A test fails through EXPECT*; the runner prints
 * "ok <name>" or "FAIL <name>: <first failure>" per test. */
#ifndef TEST_H
#define TEST_H

#include <math.h>
#include <stdio.h>

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

void test_fail(const char *file, int line, const char *fmt, ...);

#define EXPECT(cond)                                                                        \
    do {                                                                                    \
        if (!(cond)) test_fail(__FILE__, __LINE__, "%s", #cond);                            \
    } while (0)

#define EXPECT_MSG(cond, ...)                                                               \
    do {                                                                                    \
        if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);                            \
    } while (0)

#define EXPECT_NEAR(a, b, tol)                                                              \
    do {                                                                                    \
        double a_ = (a), b_ = (b);                                                          \
        if (!(fabs(a_ - b_) <= (tol)))                                                      \
            test_fail(__FILE__, __LINE__, "%s = %.9g, expected %.9g (tol %.1e)", #a, a_, b_, (double)(tol)); \
    } while (0)

#endif
