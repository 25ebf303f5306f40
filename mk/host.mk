# mk/host.mk — the host runtime (host/heap/): build/libdevmalloc.a (PIC, for the shim and
# static links) and build/libdevmalloc.so.

HOST_SRCS := host/heap/heap_runtime.c host/heap/stats_print.c device/layout.c device/check.c
# heaps that grow (mk/growth.mk): the runtime part and the core it runs on a
# copy of the metadata when trimming
HOST_SRCS += $(GROWTH_HOST_SRCS)
HOST_OBJS = $(patsubst %.c,$(BUILD)/host/%.o,$(notdir $(HOST_SRCS)))
HOST_RT_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) -Idevice -Ihost/heap

$(BUILD)/host/%.o: host/heap/%.c include/*.h device/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(BUILD)/host/%.o: device/%.c include/*.h device/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(HOST_LIB): $(HOST_OBJS)
	rm -f $@; ar rcs $@ $^
$(HOST_SO): $(HOST_OBJS)
	$(CC) -shared -Wl,-soname,libdevmalloc.so.0 -o $@ $^ $(LDCUDA)

LIBS += $(HOST_LIB) $(HOST_SO)

# Heap creation at its size limits against a fake driver (no GPU, no libcuda).
$(BUILD)/tests/test_heap_sizes: tests/unit/test_heap_sizes.c $(HOST_LIB) $(CORE_LIB) | $(BUILD)/tests/.dir
	$(CC) $(HOST_RT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all $< \
	  -o $@ $(HOST_LIB) $(CORE_LIB) -lcmocka
CHECK_BINS += $(BUILD)/tests/test_heap_sizes
