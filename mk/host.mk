# mk/host.mk — the host runtime: build/libdevmalloc.a (PIC, for the shim and
# static links) and build/libdevmalloc.so.

HOST_SRCS := host/heap_runtime.c host/stats_print.c device/layout.c device/check.c
HOST_OBJS := $(patsubst %.c,$(BUILD)/host/%.o,$(notdir $(HOST_SRCS)))
HOST_RT_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) -Idevice

$(BUILD)/host/%.o: host/%.c include/*.h device/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(BUILD)/host/%.o: device/%.c include/*.h device/*.h | $(BUILD)/host/.dir
	$(CC) $(HOST_RT_CFLAGS) -c $< -o $@
$(HOST_LIB): $(HOST_OBJS)
	rm -f $@; ar rcs $@ $^
$(HOST_SO): $(HOST_OBJS)
	$(CC) -shared -Wl,-soname,libdevmalloc.so.0 -o $@ $^ $(LDCUDA)

LIBS += $(HOST_LIB) $(HOST_SO)
