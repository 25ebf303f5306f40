# mk/install.mk — what `make install` puts under $(PREFIX): the libraries,
# headers, devmalloc.ptx, a pkg-config file and a CMake package.

DM_VERSION := $(shell sed -n 's/^\#define DEVMALLOC_VERSION_STRING "\(.*\)"/\1/p' include/devmalloc.h)

INSTALL_STEPS += install -m 644 $(HOST_LIB) $(DEVICE_LIB) $(DEVICE_LTO_LIB) $(DESTDIR)$(PREFIX)/lib/ ; \
  install -m 755 $(HOST_SO) $(DESTDIR)$(PREFIX)/lib/libdevmalloc.so.0 ; \
  ln -sf libdevmalloc.so.0 $(DESTDIR)$(PREFIX)/lib/libdevmalloc.so ; \
  install -m 644 include/devmalloc.h include/devmalloc_cuda.h $(DESTDIR)$(PREFIX)/include/ ; \
  install -m 644 $(DEVICE_PTX) $(DESTDIR)$(PREFIX)/share/devmalloc/ ; \
  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(DM_VERSION)|g' tools/pkg/devmalloc.pc.in \
    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/devmalloc.pc ; \
  sed -e 's|@VERSION@|$(DM_VERSION)|g' tools/pkg/devmalloc-config.cmake.in \
    > $(DESTDIR)$(PREFIX)/lib/cmake/devmalloc/devmalloc-config.cmake ;

# The relink recipes of the README, checked without a GPU: a program that does
# not know devmalloc, relinked with plain nvcc, with pkg-config and with CMake.
RELINK_CHECK := $(BUILD)/tests/check_relink_products
$(RELINK_CHECK): tests/unit/check_relink_products.sh $(LIBS) $(TOOLS) | $(BUILD)/tests/.dir
	cp $< $@ && chmod +x $@
CHECK_BINS += $(RELINK_CHECK)
