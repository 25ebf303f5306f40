# mk/install.mk — what `make install` puts under $(PREFIX): the libraries,
# headers, devmalloc.ptx, devmalloc-inspect, the -dlto nvcc helper
# (bin/devmalloc-nvcc-dlto), a pkg-config file and a CMake package with its
# version file; and what `make uninstall` removes again. (The shim and the
# CLI are installed by mk/interpose_driver.mk.) The benchmark needs the source tree:
# `devmalloc bench` says so when installed.

DM_VERSION := $(shell sed -n 's/^\#define DEVMALLOC_VERSION_STRING "\(.*\)"/\1/p' include/devmalloc.h)

INSTALL_STEPS += install -m 644 $(HOST_LIB) $(DEVICE_LIB) $(DEVICE_LTO_LIB) $(DESTDIR)$(PREFIX)/lib/ ; \
  install -m 755 $(HOST_SO) $(DESTDIR)$(PREFIX)/lib/$(HOST_SONAME) ; \
  ln -sf $(HOST_SONAME) $(DESTDIR)$(PREFIX)/lib/libdevmalloc.so ; \
  install -m 644 include/devmalloc.h include/devmalloc_cuda.h $(DESTDIR)$(PREFIX)/include/ ; \
  install -m 644 $(DEVICE_PTX) $(DESTDIR)$(PREFIX)/share/devmalloc/ ; \
  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(DM_VERSION)|g' tools/pkg/devmalloc.pc.in \
    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/devmalloc.pc ; \
  sed -e 's|@VERSION@|$(DM_VERSION)|g' tools/pkg/devmalloc-config.cmake.in \
    > $(DESTDIR)$(PREFIX)/lib/cmake/devmalloc/devmalloc-config.cmake ; \
  sed -e 's|@VERSION@|$(DM_VERSION)|g' tools/pkg/devmalloc-config-version.cmake.in \
    > $(DESTDIR)$(PREFIX)/lib/cmake/devmalloc/devmalloc-config-version.cmake ; \
  install -m 755 $(BUILD)/devmalloc-inspect tools/devmalloc-nvcc-dlto $(DESTDIR)$(PREFIX)/bin/ ; \
  install -m 755 tools/cuda-dlto-toolkit.sh $(DESTDIR)$(PREFIX)/share/devmalloc/ ;

# The directories install puts files in, parents first. Those it has to make
# (the prefix itself included) are listed in share/devmalloc/created-dirs,
# kept across installs, so that uninstall removes them again when empty.
INSTALL_DIR_LIST := . bin include lib lib/pkgconfig lib/cmake lib/cmake/devmalloc share share/devmalloc
CREATED_DIRS := share/devmalloc/created-dirs
INSTALL_DIRS_STEP = d='$(DESTDIR)$(PREFIX)'; made=; \
  for p in $(INSTALL_DIR_LIST); do [ -d "$$d/$$p" ] || made="$$made $$p"; done; \
  install -d $(addprefix "$$d"/,$(INSTALL_DIR_LIST)) && \
  { cat "$$d/$(CREATED_DIRS)" 2>/dev/null; for p in $$made; do echo $$p; done; } | sort -u >"$$d/$(CREATED_DIRS).new" && \
  mv "$$d/$(CREATED_DIRS).new" "$$d/$(CREATED_DIRS)"

# Everything install puts there (files, then the directories of our own).
INSTALLED_FILES := lib/libdevmalloc.a lib/libdevmalloc_device.a lib/libdevmalloc_device_lto.a \
  lib/libdevmalloc.so lib/$(HOST_SONAME) lib/libdevmalloc_preload.so \
  include/devmalloc.h include/devmalloc_cuda.h lib/pkgconfig/devmalloc.pc \
  lib/cmake/devmalloc/devmalloc-config.cmake lib/cmake/devmalloc/devmalloc-config-version.cmake \
  share/devmalloc/devmalloc.ptx share/devmalloc/cuda-dlto-toolkit.sh \
  bin/devmalloc bin/devmalloc-check-env bin/devmalloc-inspect bin/devmalloc-nvcc-dlto
INSTALLED_DIRS := lib/cmake/devmalloc share/devmalloc
# The created directories, deepest first, each removed only when empty.
UNINSTALL_STEPS = d='$(DESTDIR)$(PREFIX)'; made=$$(sort -r "$$d/$(CREATED_DIRS)" 2>/dev/null); \
  rm -f $(addprefix "$$d"/,$(INSTALLED_FILES) $(CREATED_DIRS)) ; \
  for p in $(INSTALLED_DIRS) $$made; do [ "$$p" != . ] || p=; rmdir "$$d/$$p" 2>/dev/null; done; true

# The relink recipes of the README, checked without a GPU: a program that does
# not know devmalloc, relinked with plain nvcc, with pkg-config and with CMake.
RELINK_CHECK := $(BUILD)/tests/check_relink_products
$(RELINK_CHECK): tests/unit/check_relink_products.sh $(LIBS) $(TOOLS) | $(BUILD)/tests/.dir
	cp $< $@ && chmod +x $@
CHECK_BINS += $(RELINK_CHECK)
