# mk/host_pool.mk — the MAM host pool (host/pool/: the pool and its
# cuMemAlloc hooks), its host tests, GPU test program and benchmark.
#
#   $(BUILD)/libdevmalloc_pool.a   static PIC archive for the shim (needs -ldl -lpthread)
#   $(BUILD)/pool/test_pool_*      host tests (CHECK_BINS; no GPU)
#   $(BUILD)/pool/pool_app         GPU test program (GPU_BINS)
#   $(BUILD)/pool/pool_bench       benchmark, pool vs cudaMalloc vs cudaMallocAsync (GPU_BINS)

POOL_SRCS := host/pool/pool_tree.c host/pool/pool.c host/pool/pool_config.c host/pool/pool_hooks.c
POOL_HDRS := $(wildcard host/pool/*.h) host/options/options.h \
             host/options/options.def host/options/opt_parse.h
POOL_OBJS := $(patsubst %.c,$(BUILD)/pool/%.o,$(notdir $(POOL_SRCS)))
POOL_TSAN_OBJS := $(patsubst %.c,$(BUILD)/pool/tsan/%.o,$(notdir $(POOL_SRCS)))
POOL_TSAN_LIB := $(BUILD)/pool/libdevmalloc_pool_tsan.a
POOL_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) $(SHIM_INC)
POOL_LDLIBS := -lcmocka -lpthread -ldl -lm

vpath %.c host/pool

$(BUILD)/pool/%.o: %.c $(POOL_HDRS) | $(BUILD)/pool/.dir
	$(CC) $(POOL_CFLAGS) -c $< -o $@
$(BUILD)/pool/tsan/%.o: %.c $(POOL_HDRS) | $(BUILD)/pool/tsan/.dir
	$(CC) $(POOL_CFLAGS) -O1 -fsanitize=thread -c $< -o $@
$(POOL_LIB): $(POOL_OBJS)
	rm -f $@ && ar rcs $@ $^
$(POOL_TSAN_LIB): $(POOL_TSAN_OBJS)
	rm -f $@ && ar rcs $@ $^

POOL_TESTS := tree core threads hooks
POOL_TEST_BINS := $(POOL_TESTS:%=$(BUILD)/pool/test_pool_%)

$(POOL_TEST_BINS): $(BUILD)/pool/test_pool_%: tests/unit/test_pool_%.c \
    tests/unit/test_pool_fake.h $(POOL_LIB) | $(BUILD)/pool/.dir
	$(CC) $(POOL_CFLAGS) $< -o $@ $(POOL_LIB) $(POOL_LDLIBS)

# The threads test again under ThreadSanitizer.
$(BUILD)/pool/test_pool_threads_tsan: tests/unit/test_pool_threads.c \
    tests/unit/test_pool_fake.h $(POOL_TSAN_LIB) | $(BUILD)/pool/.dir
	$(CC) $(POOL_CFLAGS) -O1 -fsanitize=thread -DPOOL_THREADS_SCALE=4 $< -o $@ \
	  $(POOL_TSAN_LIB) $(POOL_LDLIBS)

# Pool lifetime against context destruction: under ASan/UBSan (from source)
# and under ThreadSanitizer.
$(BUILD)/pool/test_pool_lifetime_asan: tests/unit/test_pool_lifetime.c $(POOL_SRCS) $(POOL_HDRS) | $(BUILD)/pool/.dir
	$(CC) $(POOL_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all $< \
	  $(POOL_SRCS) -o $@ $(POOL_LDLIBS)
$(BUILD)/pool/test_pool_lifetime_tsan: tests/unit/test_pool_lifetime.c $(POOL_TSAN_LIB) | $(BUILD)/pool/.dir
	$(CC) $(POOL_CFLAGS) -O1 -fsanitize=thread -DLIFETIME_ROUNDS=150 $< -o $@ \
	  $(POOL_TSAN_LIB) $(POOL_LDLIBS)

LIBS += $(POOL_LIB)
CHECK_BINS += $(POOL_TEST_BINS) $(BUILD)/pool/test_pool_threads_tsan \
              $(BUILD)/pool/test_pool_lifetime_asan $(BUILD)/pool/test_pool_lifetime_tsan

# ---- GPU programs (built here with nvcc, run on a GPU machine) ----
POOL_NVCC_FLAGS := $(NVCC_FLAGS) $(SHIM_INC) $(NVCC_GENCODE)

$(BUILD)/pool/pool_app: tests/gpu/progs/pool_app.cu tests/gpu/progs/cuda_ck.h | $(BUILD)/pool/.dir
	$(NVCC) $(POOL_NVCC_FLAGS) $< -o $@ $(LDCUDA) -lpthread

$(BUILD)/pool/pool_bench: bench/pool_bench.cu $(POOL_LIB) | $(BUILD)/pool/.dir
	$(NVCC) $(POOL_NVCC_FLAGS) $< -o $@ $(POOL_LIB) $(LDCUDA) -ldl -lpthread

GPU_BINS += $(BUILD)/pool/pool_app $(BUILD)/pool/pool_bench
