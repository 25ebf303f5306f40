/*
 * devmalloc_sass.S — embeds devmalloc's relocatable SASS (DM_SASS_FILE, set
 * by mk/interpose_image_relink.mk; normally build/devmalloc_sass.fatbin: a fatbin with one
 * relocatable cubin per architecture the shim links without a compile) as
 * dm_devmalloc_sass[] .. dm_devmalloc_sass_end, hidden, and its SHA-256
 * (DM_SASS_SHA256) as dm_devmalloc_sass_sha256[32], for the cache keys.
 */
    .section .rodata.dm_devmalloc_sass, "a"
    .balign 16
    .globl dm_devmalloc_sass
    .hidden dm_devmalloc_sass
    .type dm_devmalloc_sass, @object
dm_devmalloc_sass:
    .incbin DM_SASS_FILE
    .globl dm_devmalloc_sass_end
    .hidden dm_devmalloc_sass_end
dm_devmalloc_sass_end:
    .size dm_devmalloc_sass, dm_devmalloc_sass_end - dm_devmalloc_sass
    .globl dm_devmalloc_sass_sha256
    .hidden dm_devmalloc_sass_sha256
    .type dm_devmalloc_sass_sha256, @object
dm_devmalloc_sass_sha256:
    .byte DM_SASS_SHA256
    .size dm_devmalloc_sass_sha256, 32
    .section .note.GNU-stack, "", @progbits
