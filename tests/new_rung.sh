#!/usr/bin/env bash
# CONTRIBUTING.md's "Adding a rung", done (issue 23). In a copy of the repository (the files git
# knows and the new ones it does not ignore; build/ is not copied), a throwaway rung is added the way
# that page says, with nothing else touched, under the largest free rung number N; then, in its
# place, a throwaway Hopper rung:
#   - the plain rung: a folder with a README.md and a NOTES.md, a .cu that defines two variants and the list
#     rung_variants (common/attn.h), and a .c of plain host code that the .cu calls;
#   - the Hopper rung: a README.md, a .cu that issues wgmma.fence (common/hopper.cuh), an
#     instruction of sm_90a alone, and a file ARCH holding 90a, as 07_fa3_wgmma_tma/ARCH does.
# make builds each binary (and only what it needs) and each lists its variants in lesson order. The
# plain rung's .cu is built for the usual sm_80 and sm_90, its .c goes into the CPU tests,
# tools/stage.sh finds it by its number, and it refuses a paged KV cache as tests/cli.sh asks of
# every rung but 06. The Hopper rung's .cu is built for sm_90a and nothing else, with the Makefile as
# it is. Last, a check that the test can fail: the Hopper rung without its ARCH file does not build.
# Prints "ok NAME" or "FAIL NAME: why" per check.  Usage: tests/new_rung.sh
. "$(dirname "$0")/lib.sh"
w=$tmp/repo
mkdir -p "$w"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # tracked files that still exist, and untracked ones that are not ignored
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$w"
else
  tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$w"
fi
[ -f "$w/Makefile" ] || { echo "FAIL copy: no Makefile in the copy of the repository"; exit 1; }
# N: the largest rung number not taken (the files below say @N@ for it)
N=$(for n in 9 8 7 6 5 4 3 2 1 0; do ls -d "$w/0${n}"_* >/dev/null 2>&1 || { echo "0$n"; break; }; done)
[ -n "$N" ] || { echo "FAIL copy: rungs 00 to 09 are all taken: no number for a new rung"; exit 1; }
number() { sed -i "s/@N@/$N/g" "$@"; }

# make in the copy. The MAKEFLAGS and MAKELEVEL of a make test above would hand it a job server it
# cannot reach: they are dropped, and -j given here.
jobs=$(nproc 2>/dev/null || echo 2)
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory -C "$w" "$@"; }
# gencodes LOG FILE: the -gencode flags of the nvcc line in LOG that compiles FILE
gencodes() { grep -E "^[^ ]*nvcc .* -c $2 " "$1" | tr ' ' '\n' | grep '^-gencode=' | paste -sd' '; }
# built NAME LOG RC: one check that make succeeded, with the errors when it did not
built() {
  check "$1" "$3" 0
  [ "$3" -eq 0 ] || grep -E ' error|fatal|\*\*\*' "$2" | head -n 8 | sed 's/^/    /'
}

# ---- the plain rung: README.md, NOTES.md, the kernel (.cu) and plain host code (.c) ----
r=${N}_new_idea
mkdir -p "$w/$r"
cat > "$w/$r/README.md" <<'EOF'
# Rung @N@ — a throwaway (tests/new_rung.sh)

A real rung's lesson has six parts (CONTRIBUTING.md, "The lesson format"); this one has none.
EOF
printf '# Rung @N@ — lab notebook\n\nThe lesson is README.md.\n' > "$w/$r/NOTES.md"
cat > "$w/$r/plan.h" <<'EOF'
/* The plain host code of this throwaway rung (plan.c), callable from C and CUDA. */
#ifndef NEW_PLAN_H
#define NEW_PLAN_H
#ifdef __cplusplus
extern "C" {
#endif
int new_threads(int d);
#ifdef __cplusplus
}
#endif
#endif
EOF
cat > "$w/$r/plan.c" <<'EOF'
/* Threads per block for head dim d: plain C, so the CPU tests could check it without a GPU. */
#include "plan.h"

int new_threads(int d)
{
    return d <= 64 ? 64 : 128;
}
EOF
cat > "$w/$r/new_idea.cu" <<'EOF'
/* Rung @N@, a throwaway of tests/new_rung.sh: the rung interface of common/attn.h and nothing more.
 * grid = enough blocks of new_threads(d) threads (plan.c) for the LSE entries; each thread writes
 * one LSE (-inf) and nothing else, so the driver's check would fail it: no test runs it on a GPU. */
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "plan.h"

__global__ void new_lse(float *lse, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) lse[i] = -INFINITY;
}

static int new_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    (void)env;
    if (attn_refuse_paged(s, why, n)) return 1;
    if (s->d != 64 && s->d != 128) {
        snprintf(why, n, "this rung runs d = 64 and 128, not d = %d", s->d);
        return 1;
    }
    return 0;
}

static size_t new_workspace(const attn_shape *s, const attn_env *env)
{
    (void)s;
    (void)env;
    return 0;
}

static const char *new_run(const attn_args *a, cudaStream_t st)
{
    const size_t n = attn_lse_elems(&a->shape);
    const int threads = new_threads(a->shape.d);
    new_lse<<<(unsigned)((n + threads - 1) / threads), threads, 0, st>>>(a->lse, n);
    RUNG_LAUNCHED(new_lse);
    return NULL;
}

static const rung new_a = {
    "@N@a", "first step", "the step before the idea",
    new_unsupported, new_workspace, new_run, NULL, NULL,
};
static const rung new_own = {
    "@N@", "new idea", "the idea, against @N@a",
    new_unsupported, new_workspace, new_run, NULL, NULL,
};

extern "C" const rung *const rung_variants[] = {&new_a, &new_own, NULL};
EOF
number "$w/$r"/*

mk -j"$jobs" "build/bin/$r" > "$tmp/make-$r.log" 2>&1; rc=$?
built "make builds build/bin/$r (exit 0)" "$tmp/make-$r.log" "$rc"
check "$r: its .cu compiled for \$(ARCH), sm_80 and sm_90" "$(gencodes "$tmp/make-$r.log" "$r/new_idea.cu")" \
  "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90"
if [ -x "$w/build/bin/$r" ]; then
  check "$r --list: its variants in lesson order, its own last" "$("$w/build/bin/$r" --list)" \
    "$(printf '%sa\tfirst step\tthe step before the idea\n%s\tnew idea\tthe idea, against %sa' "$N" "$N" "$N")"
  out=$("$w/build/bin/$r" --variant "${N}a" --page-size 16 --d 128 --no-time 2>&1); rc=$?
  check "$r refuses a paged KV cache with a reason (exit 3), as tests/cli.sh asks" \
    "$rc:$(printf '%s' "$out" | grep -c 'unsupported: .*paged KV cache')" "3:1"
  if [ "$("$w/build/bin/$r" --probe 2>/dev/null || echo none)" = none ]; then
    out=$(cd "$w" && tools/stage.sh "$N" 2>&1); rc=$?
    check "make stage $((10#$N)) finds $r by its folder and reaches the device check (exit 4)" \
      "$rc:$(printf '%s' "$out" | grep -c 'no CUDA device found')" "4:1"
  else
    echo "skip make stage $((10#$N)): a GPU is here, and this rung's kernel does not compute attention"
  fi
else
  echo "FAIL $r: no binary to list"
fi
contains "$r: its .c is linked into the CPU tests" "$(mk -n build/bin/cpu_tests 2>&1 | grep -E ' -o build/bin/cpu_tests ')" \
  "build/obj/$r/plan.o"

# ---- the Hopper rung, in the plain rung's place: its kernels need sm_90a, and ARCH says so ----
rm -rf "${w:?}/$r"
h=${N}_new_hopper
mkdir -p "$w/$h"
printf '# Rung @N@: a throwaway Hopper rung (tests/new_rung.sh)\n' > "$w/$h/README.md"
printf '90a\n' > "$w/$h/ARCH"
cat > "$w/$h/hopper_rung.cu" <<'EOF'
/* Rung @N@, a throwaway of tests/new_rung.sh: a Hopper rung. wgmma.fence exists on sm_90a alone:
 * built for sm_80 or sm_90, ptxas refuses this file. */
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/hopper.cuh"

__global__ void hop_lse(float *lse, size_t n)
{
    wgmma_fence();
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) lse[i] = -INFINITY;
}

static int hop_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (env->cc_major != 9) {
        snprintf(why, n, "rung @N@ needs a Hopper GPU (sm_90a: wgmma); this one is sm_%d%d", env->cc_major,
                 env->cc_minor);
        return 1;
    }
    return 0;
}

static size_t hop_workspace(const attn_shape *s, const attn_env *env)
{
    (void)s;
    (void)env;
    return 0;
}

static const char *hop_run(const attn_args *a, cudaStream_t st)
{
    const size_t n = attn_lse_elems(&a->shape);
    hop_lse<<<(unsigned)((n + 127) / 128), 128, 0, st>>>(a->lse, n);
    RUNG_LAUNCHED(hop_lse);
    return NULL;
}

static const rung hop_own = {
    "@N@", "new Hopper idea", "wgmma on sm_90a",
    hop_unsupported, hop_workspace, hop_run, NULL, NULL,
};

extern "C" const rung *const rung_variants[] = {&hop_own, NULL};
EOF
number "$w/$h"/*

mk -j"$jobs" "build/bin/$h" > "$tmp/make-$h.log" 2>&1; rc=$?
built "make builds build/bin/$h (exit 0)" "$tmp/make-$h.log" "$rc"
check "$h: its .cu compiled for sm_90a alone, as its ARCH file says (no Makefile edit)" \
  "$(gencodes "$tmp/make-$h.log" "$h/hopper_rung.cu")" "-gencode=arch=compute_90a,code=sm_90a"
if [ -x "$w/build/bin/$h" ]; then
  check "$h --list: its variant" "$("$w/build/bin/$h" --list)" "$(printf '%s\tnew Hopper idea\twgmma on sm_90a' "$N")"
else
  echo "FAIL $h: no binary to list"
fi
if ! command -v cuobjdump >/dev/null 2>&1; then
  echo "skip $h: the architectures inside its object (no cuobjdump here)"
elif [ -f "$w/build/obj/$h/hopper_rung.o" ]; then
  check "$h: its object holds sm_90a code and no other" \
    "$(cuobjdump --list-elf "$w/build/obj/$h/hopper_rung.o" 2>&1 | grep -o 'sm_[0-9]*a\?' | sort -u | paste -sd' ')" sm_90a
fi

# ---- the test can fail: without its ARCH file the Hopper rung gets $(ARCH), and ptxas refuses ----
rm -f "$w/$h/ARCH"
rm -rf "$w/build/obj/$h" "$w/build/bin/$h"
mk -j"$jobs" "build/bin/$h" > "$tmp/make-noarch.log" 2>&1; rc=$?
if [ "$rc" -eq 0 ]; then
  echo "FAIL self-check: without its ARCH file $h built: the test cannot tell sm_90a from the rest"
elif ! grep -q 'wgmma' "$tmp/make-noarch.log"; then
  echo "FAIL self-check: without its ARCH file $h failed (exit $rc), but not on wgmma.fence:" \
       "$(grep -E ' error|fatal' "$tmp/make-noarch.log" | head -n 2)"
else
  echo "ok self-check: without its ARCH file $h does not build (wgmma.fence refused for sm_80/sm_90)"
fi
