/*
 * devmalloc_ptx.S — embeds devmalloc's PTX (DM_PTX_FILE, set by
 * mk/interpose_image_relink.mk; normally build/devmalloc.ptx) in the shim as
 * dm_devmalloc_ptx[] .. dm_devmalloc_ptx_end, NUL-terminated, hidden, so the
 * re-link looks nothing up at run time; and its SHA-256 (DM_PTX_SHA256, the
 * file's digest as a list of bytes, set by mk/interpose_image_relink.mk) as
 * dm_devmalloc_ptx_sha256[32], so that a process does not hash 300 KB of
 * PTX at its first launch.
 */
    .section .rodata.dm_devmalloc_ptx, "a"
    .balign 16
    .globl dm_devmalloc_ptx
    .hidden dm_devmalloc_ptx
    .type dm_devmalloc_ptx, @object
dm_devmalloc_ptx:
    .incbin DM_PTX_FILE
    .byte 0
    .globl dm_devmalloc_ptx_end
    .hidden dm_devmalloc_ptx_end
dm_devmalloc_ptx_end:
    .size dm_devmalloc_ptx, dm_devmalloc_ptx_end - dm_devmalloc_ptx
    .globl dm_devmalloc_ptx_sha256
    .hidden dm_devmalloc_ptx_sha256
    .type dm_devmalloc_ptx_sha256, @object
dm_devmalloc_ptx_sha256:
    .byte DM_PTX_SHA256
    .size dm_devmalloc_ptx_sha256, 32
    .section .note.GNU-stack, "", @progbits
