# mk/core.mk — the allocator core built for the host (test harness) and its tests.

CORE_SRCS := core/counters.c core/check_mode.c core/sem.c core/buddy.c core/blockcache.c core/fresh.c core/sizeclass.c core/reclaim.c core/grow.c core/tree.c core/slab.c core/slab_grow.c core/slab_grant.c core/slab_free.c core/heap.c \
             core/single.c core/layout.c core/check.c core/host_prim.c
CORE_OBJS := $(CORE_SRCS:core/%.c=$(BUILD)/core/%.o)
CORE_TSAN_OBJS := $(CORE_SRCS:core/%.c=$(BUILD)/core-tsan/%.o)
# With the chaos switch (yields at the allocator's racy points), for the chaos tests.
CORE_CHAOS_OBJS := $(CORE_SRCS:core/%.c=$(BUILD)/core-chaos/%.o)
CORE_LIB := $(BUILD)/libdmcore.a
CORE_TSAN_LIB := $(BUILD)/libdmcore-tsan.a
CORE_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) -DDM_DEBUG -Icore

$(BUILD)/core/%.o: core/%.c core/*.h | $(BUILD)/core/.dir
	$(CC) $(CORE_CFLAGS) -c $< -o $@
$(BUILD)/core-tsan/%.o: core/%.c core/*.h | $(BUILD)/core-tsan/.dir
	$(CC) $(CORE_CFLAGS) -O1 -fsanitize=thread -c $< -o $@
$(BUILD)/core-chaos/%.o: core/%.c core/*.h | $(BUILD)/core-chaos/.dir
	$(CC) $(CORE_CFLAGS) -DDM_CHAOS -c $< -o $@
$(CORE_LIB): $(CORE_OBJS)
	ar rcs $@ $^
$(CORE_TSAN_LIB): $(CORE_TSAN_OBJS)
	ar rcs $@ $^

UNIT_FIXTURE := tests/unit/heap_fixture.c
CORE_TESTS := sem buddy blockcache slab_classes slab_grant slab_grow misuse exhaust stress first_contact
CORE_TEST_BINS := $(CORE_TESTS:%=$(BUILD)/tests/test_%)

# The tests compile without a warning (-Werror): `make check` prints none.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(UNIT_FIXTURE) tests/unit/*.h $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -Werror $< $(UNIT_FIXTURE) -o $@ $(CORE_LIB) -lcmocka -lpthread

# The stress test again under ThreadSanitizer.
$(BUILD)/tests/test_stress_tsan: tests/unit/test_stress.c $(UNIT_FIXTURE) $(CORE_TSAN_LIB) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -O1 -fsanitize=thread -DSTRESS_SCALE=8 $< $(UNIT_FIXTURE) -o $@ $(CORE_TSAN_LIB) -lcmocka -lpthread

# The stress test with the chaos switch (yields at the allocator's racy
# points), more threads than cores, an odd heap with 8 arenas and a small
# heap with one arena.
CHAOS_A := -DSTRESS_THREADS=32 -DSTRESS_ARENAS=8 -DSTRESS_HEAP='((48ull<<20)+12345)'
CHAOS_B := -DSTRESS_THREADS=24 -DSTRESS_ARENAS=1 -DSTRESS_HEAP='(4ull<<20)'
$(BUILD)/tests/test_stress_chaos_%: tests/unit/test_stress.c $(UNIT_FIXTURE) $(CORE_CHAOS_OBJS) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -DDM_CHAOS -DSTRESS_SCALE=40 $(CHAOS_$*) $< $(UNIT_FIXTURE) $(CORE_CHAOS_OBJS) -o $@ -lcmocka -lpthread
CHECK_BINS += $(BUILD)/tests/test_stress_chaos_A $(BUILD)/tests/test_stress_chaos_B

# A fresh heap's first requests, with the chaos switch and more threads than cores.
$(BUILD)/tests/test_first_contact_chaos: tests/unit/test_first_contact.c $(UNIT_FIXTURE) $(CORE_CHAOS_OBJS) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -DDM_CHAOS -DFIRST_THREADS=24 -DFIRST_REPS=12 $< $(UNIT_FIXTURE) $(CORE_CHAOS_OBJS) -o $@ -lcmocka -lpthread
CHECK_BINS += $(BUILD)/tests/test_first_contact_chaos

# The layout at its size limits, under UBSan and ASan (layout.c from source).
$(BUILD)/tests/test_layout_bounds: tests/unit/test_layout_bounds.c core/layout.c core/*.h $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(CORE_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all $< core/layout.c -o $@ $(CORE_LIB) -lcmocka

CHECK_BINS += $(CORE_TEST_BINS) $(BUILD)/tests/test_stress_tsan $(BUILD)/tests/test_layout_bounds
