# mk/host_heap.mk — the host runtime (host/heap/): build/libdevmalloc.a (PIC,
# for the shim and static links) and build/libdevmalloc.so, with heaps that grow: the host's
# service thread and trim (host/heap/grower.c, growth.c) and the trim kernel,
# tested for real against an mprotect fake driver (tests/unit/test_grow.c, also
# under ThreadSanitizer and the chaos switch) and end to end against a fake
# VMM driver (tests/unit/test_growth_fake.c); the service thread's idle backoff
# rule alone in tests/unit/test_grow_backoff.c.

GROWER_SRCS := host/heap/grower.c
GROWER_HDRS := host/heap/growth.h host/heap/grow_backoff.h
GROWTH_HOST_SRCS := host/heap/growth.c host/heap/grower.c $(BUILD)/host/trim_fatbin.c

# The shared library's name carries the ABI: while the version is 0.x, the
# minor version (devmalloc_stats_t grows between them).
HOST_SONAME := libdevmalloc.so.$(shell sed -n 's/^\#define DEVMALLOC_VERSION_STRING "\([0-9]*\.[0-9]*\).*/\1/p' include/devmalloc.h)

HOST_SRCS := host/heap/heap_runtime.c host/heap/stats_print.c core/layout.c core/check.c
HOST_SRCS += $(GROWTH_HOST_SRCS)
HOST_OBJS = $(patsubst %.c,$(BUILD)/host/%.o,$(notdir $(HOST_SRCS)))
HOST_RT_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) -Icore -Ihost/heap

$(BUILD)/host/%.o: host/heap/%.c include/*.h core/*.h host/heap/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(BUILD)/host/%.o: core/%.c include/*.h core/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(HOST_LIB): $(HOST_OBJS)
	rm -f $@; ar rcs $@ $^
$(HOST_SO): $(HOST_OBJS)
	$(CC) -shared -Wl,-soname,$(HOST_SONAME) -o $@ $^ $(LDCUDA)

LIBS += $(HOST_LIB) $(HOST_SO)

# Heap creation at its size limits against a fake driver (no GPU, no libcuda).
$(BUILD)/tests/test_heap_sizes: tests/unit/test_heap_sizes.c $(HOST_LIB) $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(HOST_RT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all $< \
	  -o $@ $(HOST_LIB) $(CORE_LIB) -lcmocka
CHECK_BINS += $(BUILD)/tests/test_heap_sizes


# The trim kernel (host/heap/trim_kernel.cu: dm_grow_trim as a kernel), a fatbin
# embedded in the host runtime as a C array and loaded per context at the
# first trim.
$(BUILD)/host/trim_kernel.fatbin: host/heap/trim_kernel.cu $(DEVICE_CORE_SRCS) core/*.h | $(BUILD)/host/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude -Icore -fatbin $(NVCC_GENCODE) $< -o $@
$(BUILD)/host/trim_fatbin.c: $(BUILD)/host/trim_kernel.fatbin
	{ echo '/* generated from host/heap/trim_kernel.cu by mk/host_heap.mk */'; \
	  echo 'const unsigned char dm_trim_fatbin[] __attribute__((aligned(8))) = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '};'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/host/trim_fatbin.o: $(BUILD)/host/trim_fatbin.c
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(BUILD)/tests/test_grow: tests/unit/test_grow.c $(GROWER_SRCS) $(GROWER_HDRS) $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -Ihost/heap $< $(GROWER_SRCS) -o $@ $(CORE_LIB) -lcmocka -lpthread
$(BUILD)/tests/test_grow_tsan: tests/unit/test_grow.c $(GROWER_SRCS) $(GROWER_HDRS) $(CORE_TSAN_LIB) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -O1 -fsanitize=thread -Ihost/heap $< $(GROWER_SRCS) -o $@ $(CORE_TSAN_LIB) -lcmocka -lpthread
CHECK_BINS += $(BUILD)/tests/test_grow $(BUILD)/tests/test_grow_tsan

# The service thread's idle backoff rule alone (a pure function, no thread).
$(BUILD)/tests/test_grow_backoff: tests/unit/test_grow_backoff.c $(GROWER_HDRS) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -Ihost/heap $< -o $@ -lcmocka
CHECK_BINS += $(BUILD)/tests/test_grow_backoff

# The runtime's heaps that grow end to end against a fake driver backed by
# host memory (tests/unit/test_growth_fake.c), under ASan and UBSan.
$(BUILD)/tests/test_growth_fake: tests/unit/test_growth_fake.c $(HOST_LIB) $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(HOST_RT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all $< \
	  -o $@ $(HOST_LIB) $(CORE_LIB) -lcmocka -lpthread
CHECK_BINS += $(BUILD)/tests/test_growth_fake

# test_grow again with the chaos switch (yields at the allocator's racy points)
$(BUILD)/tests/test_grow_chaos: tests/unit/test_grow.c $(GROWER_SRCS) $(GROWER_HDRS) $(CORE_CHAOS_OBJS) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -DDM_CHAOS -Ihost/heap $< $(GROWER_SRCS) $(CORE_CHAOS_OBJS) -o $@ -lcmocka -lpthread
CHECK_BINS += $(BUILD)/tests/test_grow_chaos
