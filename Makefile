# The FlashAttention ladder.
#
#   make               build every rung (its binary and its library, build/lib/libladder_NN.so: the C API
#                      of common/ladder.h, which python/ladder/ loads); on the GPU, the tour (the ceilings, every rung variant and the
#                      peers on the ladder table's two shapes -> results/<gpu>-tour.csv, the table
#                      printed; tools/tour.sh), or say there is none; then draw plots
#   make stage 3       build and run one rung on its default shape, one it runs (also: make stage N=3)
#   make stage 3 ARGS="--n 8192 --causal"     ARGS split as a shell would, nothing in it run or
#                      expanded: ARGS='--csv "my file.csv"' passes --csv and my file.csv (tools/args.sh)
#   make test          CPU tests and the fuzz test always; the GPU correctness matrix when a device is present
#   make ladder        every rung over the sweeps -> results/<gpu>-<sweep>.csv (needs a GPU; says first
#                      about how long it will take)
#   make profile       every rung variant through Nsight Compute on the table's two shapes
#   make profile 5     -> results/<gpu>-profile.csv and plots/<gpu>-roofline.png (needs ncu and a GPU);
#                      make profile 8 (the backward) -> results/<gpu>-profile-backward.csv
#   make plots         plots/*.png from results/*.csv (needs gnuplot)
#   make train         a small GPT trained on rungs 07 and 08 and on PyTorch's SDPA -> results/<gpu>-train.csv
#                      and plots/<gpu>-train.png (needs PyTorch and a GPU; says so in one line without)
#   make clean
#
# Builds out of tree, under build/. Host code is C11 (gcc), device code CUDA C (nvcc).

NVCC    ?= nvcc
CC      ?= gcc
BUILD   := build

# Build in parallel on every core unless make was given -j: a clean build is mostly nvcc, and
# rung 06's kernels (two storage types x three head-dim tiles, one translation unit each, exact and
# padded, x three merges, paged and contiguous) are the most; --threads 2 compiles each file's two
# architectures side by side.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

NVCC_PATH := $(shell command -v $(NVCC) 2>/dev/null)
ifeq ($(NVCC_PATH),)
  ifneq ($(filter-out clean plots splits,$(or $(MAKECMDGOALS),all)),)
    $(error nvcc not found: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads) and put its bin/ on PATH, or run make NVCC=/path/to/nvcc)
  endif
endif
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(NVCC_PATH)))

# sm_80 (A100) and sm_90 (H100/H200) machine code; no -use_fast_math (see CONTRIBUTING.md).
# A rung folder may hold a file ARCH that names other architectures for its .cu files (below).
ARCH    ?= -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90
# -fPIC everywhere: the same objects link the rung binaries and the shared libraries (below).
NVBASE  := -O3 -lineinfo --threads 2 -std=c++17 -Xcompiler -Wall,-Wextra,-fPIC -MMD -MP
NVFLAGS := $(NVBASE) $(ARCH)
CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -fopenmp -fPIC -MMD -MP \
           -I$(CUDA_HOME)/include
LDLIBS  := -lcublas -Xcompiler -fopenmp -lm

DRIVER_SRC  := common/driver.c common/driver_state.c common/device.c common/run_shape.c common/sweep.c \
               common/read_floor.c common/ceilings.c common/l2flush.cu common/read_floor_kernel.cu \
               common/run_grad.c common/forward_plain.cu
# What names a rung's own lists (rung_variants): linked beside a rung, in its binary and its library,
# never into the CPU tests, which link no rung. The C API (common/ladder.h) goes into the library alone.
VARIANT_SRC := common/variants.c
LIB_SRC     := common/ladder.c
COMMON_SRC  := $(filter-out $(DRIVER_SRC) $(VARIANT_SRC) $(LIB_SRC),$(wildcard common/*.c))
COMMON_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(COMMON_SRC))
DRIVER_OBJ  := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(DRIVER_SRC))) $(BUILD)/obj/common/variants.o
LIB_OBJ     := $(BUILD)/obj/common/ladder.o $(BUILD)/obj/common/variants.o
RUNG_DIRS   := $(sort $(patsubst %/,%,$(dir $(wildcard 0[0-9]_*/*.cu))))
# a rung's .cu files: its folder's and one folder down (06_split_kv/instantiations/)
rung_cu      = $(wildcard $(1)/*.cu $(1)/*/*.cu)
RUNG_BINS   := $(patsubst %,$(BUILD)/bin/%,$(RUNG_DIRS))
# one shared library per rung, named by its number: 07_fa3_wgmma_tma -> build/lib/libladder_07.so
rung_lib     = $(BUILD)/lib/libladder_$(firstword $(subst _, ,$(1))).so
RUNG_LIBS   := $(foreach r,$(RUNG_DIRS),$(call rung_lib,$(r)))
TEST_SRC    := $(wildcard tests/test_*.c)
TEST_BIN    := $(BUILD)/bin/cpu_tests
SIM_BIN     := $(BUILD)/bin/splits_sim
# the fuzz test's two builds (below)
FUZZ_SRC    := tests/fuzz.c common/cli.c common/npy.c common/inputs.c 06_split_kv/planner.c
FUZZ_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -g -Wall -Wextra -Werror -Wno-unknown-pragmas \
               -I$(CUDA_HOME)/include
SANITIZE    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
HAVE_SAN    := $(shell printf 'int main(void) { return 0; }\n' | $(CC) -x c $(SANITIZE) -o /dev/null - 2>/dev/null && echo yes)
FUZZ_BINS   := $(BUILD)/bin/fuzz $(if $(HAVE_SAN),$(BUILD)/bin/fuzz_asan)

.PHONY: all build stage test ladder profile plots clean splits train
.DEFAULT_GOAL := all

all: build
	@tools/tour.sh

build: $(RUNG_BINS) $(RUNG_LIBS) $(TEST_BIN) $(SIM_BIN) $(FUZZ_BINS)

# --- objects -------------------------------------------------------------------------------
# Every object depends on build/flags, which holds the compilers' flags and is rewritten only when
# they change: new flags (as -fPIC, when the libraries came) rebuild the objects instead of linking
# old ones that no longer fit. Its recipe runs on every build and leaves the file alone if the flags
# are the same, so its time, which make reads again after the recipe, does not move.
FLAGS_NOW := $(CC) $(CFLAGS) | $(NVCC) $(NVBASE) $(ARCH)
$(BUILD)/flags: FORCE
	@mkdir -p $(dir $@); [ "$$(cat $@ 2>/dev/null)" = '$(FLAGS_NOW)' ] || printf '%s\n' '$(FLAGS_NOW)' > $@
FORCE:

$(BUILD)/obj/%.o: %.c $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

# A rung whose kernels need machine code other than $(ARCH) says so in a file ARCH in its folder:
# the architectures, separated by blanks, with # comments; its .cu files are then compiled for those
# alone. 07_fa3_wgmma_tma/ARCH holds 90a: wgmma and setmaxnreg exist on sm_90a alone, so fa3.cu gets
# -gencode=arch=compute_90a,code=sm_90a and nothing else (and rung 07 refuses other GPUs). These
# rules name no rung, so a new Hopper rung needs its ARCH file and no Makefile edit
# (tests/new_rung.sh checks this). An edited ARCH file rebuilds its folder's objects; the binary
# still links with $(ARCH), as there is no device link.
gencode   = $(foreach a,$(1),-gencode=arch=compute_$(a),code=sm_$(a))
rung_arch = $(strip $(shell sed 's/\#.*//' $(1)/ARCH))
define rung_arch_rule
$(BUILD)/obj/$(1)/%.o: NVFLAGS = $(NVBASE) $(if $(2),$(call gencode,$(2)),$$(error $(1)/ARCH names no architecture: write one, e.g. 90a, or remove the file))
$(patsubst %.cu,$(BUILD)/obj/%.o,$(call rung_cu,$(1))): $(1)/ARCH
endef
$(foreach r,$(RUNG_DIRS),$(if $(wildcard $(r)/ARCH),$(eval $(call rung_arch_rule,$(r),$(call rung_arch,$(r))))))

# --- one binary per rung: its own .cu/.c files + the driver + common ----------------------
define rung_rule
$(BUILD)/bin/$(1): $(patsubst %.cu,$(BUILD)/obj/%.o,$(call rung_cu,$(1))) \
                   $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard $(1)/*.c)) $(DRIVER_OBJ) $(COMMON_OBJ)
	@mkdir -p $$(dir $$@)
	$$(NVCC) $$(ARCH) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach r,$(RUNG_DIRS),$(eval $(call rung_rule,$(r))))

# --- and one shared library per rung: the same objects, the C API (common/ladder.c) for the driver.
# -z defs: every symbol resolved here, not at load time; the version script exports ladder_* alone
# (common/ladder.map). The CUDA runtime is linked in statically, as in the binaries, so the library
# needs nothing PyTorch does not already load (python/ladder/ loads it with ctypes). ---
define rung_lib_rule
$(call rung_lib,$(1)): $(patsubst %.cu,$(BUILD)/obj/%.o,$(call rung_cu,$(1))) \
                   $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard $(1)/*.c)) $(LIB_OBJ) $(COMMON_OBJ) common/ladder.map
	@mkdir -p $$(dir $$@)
	$$(NVCC) $$(ARCH) -shared -Xlinker -z,defs,--version-script=common/ladder.map -o $$@ \
	    $$(filter %.o,$$^) $$(LDLIBS)
endef
$(foreach r,$(RUNG_DIRS),$(eval $(call rung_lib_rule,$(r))))

# CPU tests link the common code and the plain-C parts of the rungs (e.g. 06's planner).
RUNG_C_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard 0[0-9]_*/*.c))
$(TEST_BIN): $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC)) $(COMMON_OBJ) $(RUNG_C_OBJ)
	@mkdir -p $(dir $@)
	$(NVCC) $(ARCH) -o $@ $^ $(LDLIBS)

# The fuzz test (tests/fuzz.c; make test runs it): the .npy, sweep-file and command-line parsers and
# what they call, plain C built by gcc alone, twice: build/bin/fuzz, and build/bin/fuzz_asan under
# AddressSanitizer and UBSan where this gcc can link their runtime (libasan, libubsan); where it
# cannot, only the first, and tools/run_tests.sh says so.
$(BUILD)/bin/fuzz: $(FUZZ_SRC) $(wildcard common/*.h) 06_split_kv/planner.h
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_CFLAGS) -O2 -o $@ $(FUZZ_SRC) -lm
$(BUILD)/bin/fuzz_asan: $(FUZZ_SRC) $(wildcard common/*.h) 06_split_kv/planner.h
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_CFLAGS) -O1 $(SANITIZE) -o $@ $(FUZZ_SRC) -lm

# Rung 06's split planners on the cost model alone: plain C, no GPU, no nvcc.
$(SIM_BIN): $(BUILD)/obj/tools/splits_sim.o $(BUILD)/obj/06_split_kv/planner.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ -lm

# --- running -------------------------------------------------------------------------------
# What a user gives make for the tools (ARGS, N, SWEEPS, RUNGS, LADDER_ARGS, RUNG_ARGS: on make's
# command line or in the environment) reaches them as it was typed, through the environment: make
# expands nothing in it (a $(shell ...) stays text: $(value)) and no recipe's shell command line
# holds it, so no quote, backtick or $(...) in it is ever run. The tools split ARGS, LADDER_ARGS and
# RUNG_ARGS into arguments as tools/args.sh says (quotes kept, nothing expanded).
N_FROM    := $(origin N)
USER_VARS := ARGS N SWEEPS RUNGS LADDER_ARGS RUNG_ARGS
$(foreach v,$(USER_VARS),$(if $(filter command environment,$(firstword $(origin $(v)))),$(eval override $(v) := $$(value $(v)))$(eval export $(v))))

# "make stage 3", "make profile 3": the words after stage or profile name the rung. Each is a goal
# that does nothing (.DEFAULT: any goal without a rule, whatever its text); tools/stage.sh and
# tools/profile.sh check them (MAKE_RUNG_GOALS, and N: tools/args.sh) and refuse two numbers
# (make stage 5 6), a second one in N (make stage 5 N=6) or a word (make stage abc) in one line.
# Rung N's binary (make stage), or every binary (make profile), is built only for one number that
# N does not contradict: else nothing is built before the script says what it expected. make reads
# a word that starts with - as its own option before this file is read: make stage -1 gets make's
# "invalid option" and its usage, and nothing here runs (after --, make stage -- -1, it is a goal).
no_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
ifneq ($(filter stage profile,$(firstword $(MAKECMDGOALS))),)
  RUNG_GOALS := $(wordlist 2,$(words $(MAKECMDGOALS)),$(MAKECMDGOALS))
  ifneq ($(RUNG_GOALS),)
    .DEFAULT: ; @:
  endif
  export MAKE_RUNG_GOALS  := $(RUNG_GOALS)
  export MAKE_RUNG_N_FROM := $(N_FROM)
  # the goal, else N; nothing when both are given and differ; then one word of digits alone
  RUNG_SAME := $(and $(findstring $(N),$(RUNG_GOALS)),$(findstring $(RUNG_GOALS),$(N)))
  RUNG_TRY  := $(if $(RUNG_GOALS),$(if $(N),$(RUNG_SAME),$(RUNG_GOALS)),$(N))
  RUNG_NUM  := $(if $(filter 1,$(words $(RUNG_TRY))),$(if $(call no_digits,$(RUNG_TRY)),,$(RUNG_TRY)))
  # rung N's folder: N = 3 or 03 -> 03_*; a number no rung has builds nothing
  STAGE_DIR := $(if $(RUNG_NUM),$(firstword $(filter $(RUNG_NUM)_% 0$(RUNG_NUM)_%,$(RUNG_DIRS))))
  # make profile: every rung, or the one named
  PROFILE_OK := $(if $(RUNG_GOALS)$(N),$(STAGE_DIR),all)
endif
stage: $(if $(STAGE_DIR),$(BUILD)/bin/$(STAGE_DIR))
	@tools/stage.sh --make

test: build
	@tools/run_tests.sh

ladder: build
	@tools/ladder.sh

profile: $(if $(PROFILE_OK),build)
	@tools/profile.sh --make

plots:
	@tools/plots.sh

train: build
	@tools/train.sh

splits: $(SIM_BIN)
	$(SIM_BIN) > results/splits-sim.csv.tmp && mv results/splits-sim.csv.tmp results/splits-sim.csv
	@tools/plots.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
