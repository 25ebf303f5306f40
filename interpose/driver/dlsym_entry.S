/*
 * dlsym_entry.S — the exported dlsym: a tail jump, so that the function that
 * finally answers sees the application's return address.
 *
 * glibc's dlsym resolves RTLD_NEXT (and RTLD_DEFAULT from an RTLD_LOCAL
 * object) relative to its caller's return address. A C wrapper that calls the
 * real dlsym would make every RTLD_NEXT lookup relative to the shim instead
 * (a sanitizer runtime or a malloc wrapper preloaded before the shim would
 * then find itself again). So this entry never calls, it jumps:
 *   - a name that does not start with "cu" (and a NULL name) jumps to the
 *     real dlsym (dm_dlsym_real_fn, resolved by dm_dlsym_resolve on first
 *     use): no loader work, no locks, no stdio, whatever the process state;
 *   - a "cu" name jumps to dm_dlsym_cu (dlsym.c), which still sees the
 *     application's return address.
 * Only the very first non-cu call, before the real pointer is known, makes a
 * call (to dm_dlsym_resolve) and then jumps.
 *
 * Locking: dm_dlsym_real_fn is written once (same value by every writer) and
 * read with a plain aligned load.
 */
        .hidden dm_dlsym_cu
        .hidden dm_dlsym_resolve
        .hidden dm_dlsym_real_fn
#if defined(__x86_64__)
        .text
        .globl  dlsym
        .type   dlsym, @function
dlsym:
        .cfi_startproc
        testq   %rsi, %rsi
        jz      .Lreal
        cmpb    $0x63, (%rsi)           /* 'c' */
        jne     .Lreal
        cmpb    $0x75, 1(%rsi)          /* 'u' */
        jne     .Lreal
        jmp     dm_dlsym_cu
.Lreal:
        movq    dm_dlsym_real_fn(%rip), %rax
        testq   %rax, %rax
        jz      .Lresolve
        jmp     *%rax
.Lresolve:
        pushq   %rdi
        .cfi_adjust_cfa_offset 8
        pushq   %rsi
        .cfi_adjust_cfa_offset 8
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        call    dm_dlsym_resolve
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %rsi
        .cfi_adjust_cfa_offset -8
        popq    %rdi
        .cfi_adjust_cfa_offset -8
        testq   %rax, %rax
        jz      .Lnone
        jmp     *%rax
.Lnone:
        ret
        .cfi_endproc
        .size   dlsym, .-dlsym
#elif defined(__aarch64__)
        .text
        .globl  dlsym
        .type   dlsym, %function
dlsym:
        .cfi_startproc
        cbz     x1, .Lreal
        ldrb    w2, [x1]
        cmp     w2, #0x63               /* 'c' */
        b.ne    .Lreal
        ldrb    w2, [x1, #1]
        cmp     w2, #0x75               /* 'u' */
        b.ne    .Lreal
        b       dm_dlsym_cu
.Lreal:
        adrp    x2, dm_dlsym_real_fn
        ldr     x2, [x2, :lo12:dm_dlsym_real_fn]
        cbz     x2, .Lresolve
        br      x2
.Lresolve:
        stp     x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset 29, -32
        .cfi_offset 30, -24
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        bl      dm_dlsym_resolve
        mov     x2, x0
        ldp     x0, x1, [sp, #16]
        ldp     x29, x30, [sp], #32
        .cfi_def_cfa_offset 0
        .cfi_restore 29
        .cfi_restore 30
        cbz     x2, .Lnone
        br      x2
.Lnone:
        mov     x0, #0
        ret
        .cfi_endproc
        .size   dlsym, .-dlsym
#else
#error "dlsym_entry.S: only x86-64 and aarch64 are supported"
#endif
        .section .note.GNU-stack, "", @progbits
