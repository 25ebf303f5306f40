/*
 * devmalloc_ptx.S — embeds devmalloc's PTX (DM_PTX_FILE, set by
 * mk/relink.mk; normally build/devmalloc.ptx) in the shim as
 * dm_devmalloc_ptx[] .. dm_devmalloc_ptx_end, NUL-terminated, hidden, so the
 * re-link looks nothing up at run time.
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
    .section .note.GNU-stack, "", @progbits
