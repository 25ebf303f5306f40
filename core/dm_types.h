/*
 * dm_types.h — every structure of the allocator core and its compile-time
 * knobs. The same layout is used on the GPU and on the host: the host runtime
 * builds a dm_heap_t in host memory holding device addresses and copies it to
 * the device, and the host test harness uses it directly.
 *
 * Memory of a heap (one contiguous allocation of heap_bytes):
 *   [ pool: pool_bytes, a multiple of the buddy leaf ][ metadata ][ dm_heap_t ]
 * The pool comes first so that it keeps the allocation's alignment (2 MiB for
 * cuMemAlloc of large sizes); the metadata arrays follow (dm_layout_t says
 * where). All metadata is zero after formatting except O(tree height) words
 * (heap.c), so creating a heap is a memset plus a few small copies.
 */
#ifndef DM_TYPES_H
#define DM_TYPES_H

#include "dm_platform.h"

/* ---------------------------------------------------------------- knobs --- */
#define DM_LEAF_SHIFT 14u  /* buddy leaf (smallest large block): 16 KiB */
#define DM_CHUNK_SHIFT 17u /* slab chunk: 128 KiB, a buddy block */
#define DM_CHUNK_ORDER (DM_CHUNK_SHIFT - DM_LEAF_SHIFT)
#define DM_CHUNK_BYTES (1ull << DM_CHUNK_SHIFT)
#define DM_SLAB_ALIGN_MAX 1024u /* largest alignment the slab serves (power-of-two classes) */
#define DM_DISPATCH_ALIGN \
  (1u << DM_LEAF_SHIFT)     /* free(): p % 16 KiB == 0 outside slab chunks -> buddy, else slab */
#define DM_SLAB_MAX 8192u   /* largest request served by the slab */
#define DM_NUM_CLASSES 31u  /* slab classes (sizeclass.c); a chunk's tag keeps the class in 5 bits */
#define DM_CLASS_GAP 28u    /* quarter step left out: 5 KiB (would use < 90% of a chunk) */
#define DM_ARENA_CHUNKS 72u /* at most one arena per this many chunks of the heap (layout.c) */
#define DM_CHUNK_WORDS 128u /* bitmap words per chunk (>= max slots / 64) */
#define DM_SIDE_WORDS 8u    /* bitmap words a chunk's descriptor has (chunk.h: chunk_bitmap) */
#define DM_SIDE_CLASS \
  12u /* classes from this one (320 B and up: at most 409 slots) keep their bitmap there */
#define DM_MAX_ORDERS 40u /* buddy orders supported (16 KiB << 39) */
#define DM_MAX_ARENAS 2048u
#define DM_ARENAS_PER_SM 4u /* arenas per SM on the GPU (by warp slot): spreads a bin's atomics */
#define DM_TREE_WAIT_NS \
  20000000u                /* a tree request waits at most this long while blocks are on their way (tree.c) */
#define DM_ADMIT_WAITS 24u /* a tree request waits this often for the requests ahead of it */
#define DM_STEAL_SWEEPS \
  4u /* a slab request of a full tree looks this often for free slots in other arenas (slab_grow.c) */
#define DM_STEAL_WAIT_NS 20000000u /* and waits at most this long for chunks on their way */
#define DM_LIVE_PEND 0x40000000u   /* chunk `live` flag: on its way's re-list stack */
#define DM_LIVE_WAY_SHIFT 24u      /* chunk `live` bits 24..26: the way of its bin that lists it */
#define DM_LIVE_USED 0x00ffffffu   /* chunk `live` bits 0..23: slots claimed or pinned */
#define DM_GROW_TRIES 1024u /* a tree request of a heap that grows asks for more memory at most this often */
#define DM_GROW_RUN_LOG2 3u /* a bin's n-th grow takes 2^min(n, this) chunks in one tree operation */
#define DM_BIN_WAYS 8u      /* most ways of a bin (slab.c, "Ways"); a power of two */
#define DM_WAY_SLOTS 512u   /* warp slots a GPU is taken to have when a heap's ways are picked (layout.c) */
#define DM_HINT_SLOTS \
  1024u /* warp slots (SM x DM_ARENAS_PER_SM, modulo this) with a chunk hint of their own, per class (slab.c) */
#define DM_HINT_BYTES ((uint64_t)DM_HINT_SLOTS * DM_NUM_CLASSES * 4) /* the slot hints' array (layout.c) */
#define DM_HINT_POOL_MIN \
  (DM_HINT_BYTES * 256) /* smallest pool with slot hints: they take at most 1/256 of it */
#define DM_HINT_CLASS_MIN \
  4u /* classes with slot hints, whose missed pins search the descriptors before their way's list: 80 B and up (a chunk of the smaller ones serves 64 warps and more) */
#define DM_PIN_WALK 2u /* chunks of a way's list a pin tries from the hint before a search (slab.c) */
#define DM_SHARE_ARENAS \
  8u /* a small request of a bin without chunks is served by the first bin of this many arenas (slab_grow.c: bin_share) */
#define DM_SHARE_CHUNKS 8u   /* until that bin holds this many chunks */
#define DM_SHARE_LANES 4u    /* requests of at most this many lanes */
#define DM_SHARE_SIZE 512u   /* classes up to this size */
#define DM_ADOPT_SCAN 128u   /* chunks a bin looks at for empty ones to adopt, per grow */
#define DM_ROOM_SCAN 1024u   /* chunk descriptors a warp whose pins missed reads for room (devmalloc.cu) */
#define DM_ROOM_LOADS 4u     /* of them per lane and round */
#define DM_ROOM_TRIES 3u     /* searches a warp makes before the other ways' lists */
#define DM_CACHE_ORDERS 12u  /* large blocks of orders below this (16 KiB .. 32 MiB) are cached when freed */
#define DM_CACHE_SLOTS 4096u /* cached blocks per order: at most this many, but see DM_CACHE_WHOLE */
#define DM_CACHE_WHOLE \
  65536u                 /* an order of more than DM_CACHE_SLOTS blocks, up to this many: a slot for each */
#define DM_MIN_ALIGN 16u /* every block is at least 16-byte aligned */
#define DM_SECTOR_BYTES \
  32u /* an L1 sector: by default no two blocks share one (heap.c: dm_heap_request_size) */
#define DM_HEAP_MAGIC 0x6465766d616c6c63ull /* "devmallc" */
#define DM_CHECK_TAIL 16u /* check mode: canary (8 B) after the block, size word (8 B) at its end */

/* ------------------------------------------------------- bulk semaphore --- */
/* One 64-bit word: E (expected) bits 0..15, R (reserved) 16..31, and C
 * (value, signed) 32..63 — the paper's three counters, updated together by
 * CAS. C sits on top so that a fetch-add can take units (sem.c's fast path):
 * a take that finds too few leaves C negative for a moment and borrows
 * nothing from E or R. */
typedef struct dm_sem {
  uint64_t w;
} dm_sem_t;
static DM_INLINE int32_t dm_semw_c(uint64_t w) { return (int32_t)(uint32_t)(w >> 32); }
static DM_INLINE uint32_t dm_semw_e(uint64_t w) { return (uint32_t)w & 0xffffu; }
static DM_INLINE uint32_t dm_semw_r(uint64_t w) { return ((uint32_t)w >> 16) & 0xffffu; }
static DM_INLINE uint64_t dm_semw_pack(int64_t c, uint32_t e, uint32_t r) {
  return ((uint64_t)(uint32_t)c << 32) | ((uint64_t)r << 16) | e;
}

/* ------------------------------------------------------------ buddy tree --- */
/* Node states. A node is SPLIT when its children carry the state of its
 * memory. */
enum {
  DM_NODE_BUSY = 0u,   /* allocated, or covered by an ancestor that is */
  DM_NODE_AVAIL = 1u,  /* free block of this order */
  DM_NODE_CACHED = 2u, /* freed block kept whole in the block cache (blockcache.c) */
  DM_NODE_SPLIT = 4u   /* split: see the children */
};

typedef struct dm_buddy {
  uint32_t *state;                  /* per node (heap order: root 1, children 2i, 2i+1) */
  uint32_t *lock;                   /* per node spin lock */
  uint64_t *avail;                  /* per order bitmap of AVAIL nodes, then the summaries */
  dm_sem_t *sem;                    /* per order: available nodes */
  uint64_t word_off[DM_MAX_ORDERS]; /* first bitmap word of each order */
  uint64_t sum_off[DM_MAX_ORDERS];  /* first summary word (bit per bitmap word) */
  uint32_t top;                     /* order of the root */
  uint32_t pad;
  char *base; /* pool start */
  uint64_t pool_bytes;
  uint64_t *moving; /* blocks on their way into the tree (merges, releases); in the heap's stats */
} dm_buddy_t;

/* Where the node of rank `rank` within `order` keeps its availability bit,
 * and where that bitmap word keeps its summary bit: indices into avail[]
 * and the bit in that word (used by buddy.c, check.c and layout.c). */
static DM_INLINE uint64_t dm_avail_index(const dm_buddy_t *b, uint32_t order, uint64_t rank, uint64_t *bit) {
  *bit = 1ull << (rank & 63u);
  return b->word_off[order] + (rank >> 6);
}
static DM_INLINE uint64_t dm_summary_index(const dm_buddy_t *b, uint32_t order, uint64_t rank,
                                           uint64_t *bit) {
  *bit = 1ull << ((rank >> 6) & 63u);
  return b->sum_off[order] + (rank >> 12);
}

/* -------------------------------------------------------------- slab ----- */
/* Per chunk descriptor, kept outside the chunk so that it is never freed:
 * one 128-byte line, its first half the counts and links, its second the
 * slot bitmap of the classes that keep it here (chunk.h: chunk_bitmap). */
typedef struct dm_chunk {
  uint64_t live; /* tag << 32 | DM_LIVE_PEND (on its way's re-list stack) | way << DM_LIVE_WAY_SHIFT
                    * | used; tag 0 = not a slab chunk */
  uint32_t prev; /* neighbours in its way's list of non-full chunks, index+1 */
  uint32_t next;
  uint32_t listed;  /* 1 while in the list (under the way's lock) */
  uint32_t pending; /* next chunk on the way's re-list stack, index+1 */
  uint64_t pad[5];
  uint64_t bits[DM_SIDE_WORDS]; /* slot bitmap of a class from DM_SIDE_CLASS (chunk.h) */
} dm_chunk_t;

/* One way of a bin (slab.c, "Ways"): a list of some of the bin's chunks. */
typedef struct dm_way {
  uint32_t lock;    /* protects head, prev/next/listed of the way's chunks */
  uint32_t head;    /* first non-full chunk, index+1 */
  uint32_t hint;    /* chunk to try first, index+1 (read without the lock) */
  uint32_t pending; /* stack of chunks that got room back while maybe off the list, index+1 */
} dm_way_t;

/* Per arena and size class. Way 0 is here; ways 1 .. way_mask are in the
 * heap's `ways` array (only a heap of several ways lays them out). */
typedef struct dm_bin {
  dm_sem_t sem; /* free slots in the bin's chunks, all ways (two-stage accounting) */
  dm_way_t way0;
  uint32_t grows; /* times the bin took chunks since it last held none (sets the run length) */
  uint32_t held;  /* chunks the bin holds now */
} dm_bin_t;

typedef struct dm_class {
  uint32_t size;   /* slot bytes */
  uint16_t off;    /* first slot's offset in a chunk; the bitmap lies below (0: beside the chunk, layout.c) */
  uint16_t pad;    /* nslots at byte 8: at byte 4, malloc's frame grew 56 -> 64 bytes on sm_90 */
  uint32_t nslots; /* slots a chunk lays out and serves */
  uint32_t recip;  /* floor(2^32 / size) + 1: x / size is (x * recip) >> 32 for x < 2^17 */
} dm_class_t;

/* Slot index of byte offset x (< 2^17, past the class's offset) in a chunk of
 * class c, by multiplication: with recip = floor(2^32/size) + 1 the error
 * term x * (recip * size - 2^32) / 2^32 is below 2^17 * 2^13 / 2^32 < 1, so
 * the quotient is exact. A 64-bit division per free was a long call on the
 * GPU. */
static DM_INLINE uint32_t dm_class_div(const dm_class_t *c, uint32_t x) {
  return (uint32_t)(((uint64_t)x * c->recip) >> 32);
}

/* Bitmap words of a chunk of class c (one bit per slot laid out). */
static DM_INLINE uint32_t dm_class_words(const dm_class_t *c) { return (c->nslots + 63u) >> 6; }

/* The bits of bitmap word w past class c's last slot: always set, so that
 * no claim finds them free. */
static DM_INLINE uint64_t dm_class_pad(const dm_class_t *c, uint32_t w) {
  return w == dm_class_words(c) - 1u && (c->nslots & 63u) ? ~0ull << (c->nslots & 63u) : 0;
}

/* Whether class cls keeps its slot bitmap beside its chunks, in the
 * descriptor (from DM_SIDE_CLASS; chunk.h: chunk_bitmap), its first slot at
 * the chunk's first byte. */
static DM_INLINE int dm_class_beside(uint32_t cls) { return cls >= DM_SIDE_CLASS; }

/* Slot bytes of class c: 16, 32, 48, 64, then four steps per power of two,
 * 2^k + j * 2^(k-2) for j = 1..4 (80, 96, 112, 128, 160, ... 7168, 8192),
 * without DM_CLASS_GAP (sizeclass.c says why these sizes). */
static DM_INLINE uint32_t dm_class_size(uint32_t c) {
  if (c < 4u) return 16u * (c + 1u);
  if (c >= DM_CLASS_GAP) c++;
  uint32_t k = 6u + (c - 4u) / 4u, j = (c - 4u) % 4u + 1u;
  return (1u << k) + (j << (k - 2u));
}

/* ---------------------------------------------------------- block cache --- */
/* Per order: a ring of cached blocks' nodes (blockcache.c). Each counter
 * has a 128-byte line of its own: every warp freeing or taking a run of
 * large blocks at once works on them (docs/decisions.md, "Block cache"). */
typedef struct dm_bcache {
  uint32_t items; /* blocks ready to take (read as int32: below 0 for a moment) */
  uint32_t pad0[31];
  uint32_t used; /* slots taken by puts and not yet emptied by takes (rings that hold every block: unused) */
  uint32_t pad1[31];
  uint32_t head; /* ticket of the next take */
  uint32_t pad2[31];
  uint32_t tail; /* ticket of the next put */
  uint32_t pad3[31];
} dm_bcache_t;

/* --------------------------------------------------------- fresh chunks --- */
/* A fixed heap's chunks that nothing has used yet: [next, dm_heap_t.fresh_end)
 * (fresh.c). On a line of its own: every grow of a fresh heap adds to it. */
typedef struct dm_fresh {
  uint64_t next; /* the next chunk to hand out (>= fresh_end: none left) */
  uint64_t pad[15];
} dm_fresh_t;

/* ---------------------------------------------------------------- stats --- */
typedef struct dm_arena_stats {
  uint64_t class_allocs[DM_NUM_CLASSES];
  uint64_t class_frees[DM_NUM_CLASSES]; /* bytes in use follow from these two */
  uint64_t large_allocs;
  uint64_t large_frees;
  uint64_t large_bytes; /* signed: a block may be freed from another arena */
  uint64_t failures;
} dm_arena_stats_t;

typedef struct dm_heap_stats {
  uint64_t double_frees;
  uint64_t foreign_frees;
  uint64_t footprint;        /* pool bytes held by chunks and large blocks */
  uint64_t peak;             /* maximum of footprint */
  uint64_t cached;           /* 1 when a chunk emptied since the last reclaim pass began */
  uint64_t reclaim;          /* reclaim pass: gen << 2 | state (slab.c) */
  uint64_t reclaim_chunks;   /* chunks the pass covers (fixed when it starts) */
  uint64_t reclaim_next;     /* next range of chunks for the pass */
  uint64_t reclaim_done;     /* ranges done */
  uint64_t check_failures;   /* check mode: blocks found written past their end at free */
  uint64_t check_first_bad;  /* the first such block's address (0: none) */
  uint64_t check_first_size; /* and the size that was asked for it */
  uint64_t adopt_next;       /* cursor of the search for empty chunks to adopt (slab_grow.c) */
  uint64_t inflight;         /* bytes of tree requests admitted and not yet settled (tree.c) */
  uint64_t moving;           /* merges and releases in flight: blocks on their way into the tree (buddy.c) */
} dm_heap_stats_t;

/* --------------------------------------------------------------- growth --- */
/* A heap that grows (docs/design.md, "A heap that grows"): the pool is a
 * reserved virtual range of which a prefix [0, mapped) has memory behind it.
 * The tree is formatted fully split above the growth granule with every
 * granule BUSY, "held by the grower"; granules in [0, released) have been
 * given to the tree. Only device code (or the core on the host) touches the
 * tree; the host maps and unmaps memory and writes `mapped`. */
#define DM_GROW_SHIFT 21u /* growth granule: 2 MiB (the VMM granularity) */
#define DM_GROW_ORDER (DM_GROW_SHIFT - DM_LEAF_SHIFT)
#define DM_GROW_BYTES (1ull << DM_GROW_SHIFT)

/* Shared with the host's service thread (host-mapped memory on the GPU).
 * Written by the host: mapped, refused, alive, events. Written by the
 * device: target; a trim (under the growth lock) sets ceiling and
 * trim_result, and the host clears ceiling once it has unmapped. */
typedef struct dm_grow_host {
  uint64_t mapped;      /* pool bytes mapped from the pool's start */
  uint64_t target;      /* pool bytes the device wants mapped */
  uint64_t refused;     /* a target the host could not reach (device full), 0: none */
  uint64_t alive;       /* 1 while a service thread answers targets */
  uint64_t events;      /* host: times it mapped more (for stats) */
  uint64_t ceiling;     /* 0, or 1 + the top a trim took memory back to: nothing above
                      * it is given to the tree until the host has unmapped */
  uint64_t trim_result; /* the trim kernel's answer (the new top) */
  uint64_t pad;
} dm_grow_host_t;

/* Device side (in the metadata, so a copy of it is checked with the rest). */
typedef struct dm_grow {
  uint64_t released; /* pool bytes given to the tree: [0, released) */
  uint64_t asked;    /* largest target stored for the host since the last trim */
  uint32_t lock;     /* growth lock: releases and trims of the tree's top */
  uint32_t poller;   /* 1 while one waiting request reads the host's block for all */
  uint64_t seen;     /* the poller's last reading: mapped, or 1 << 63 | released
                      * when the host refused or stopped there (the other
                      * waiters read this, not host memory) */
  uint64_t waits;    /* requests that waited for the host */
  uint64_t timeouts; /* waits that ended without memory (NULL follows) */
  uint64_t releases; /* times mapped memory was given to the tree */
} dm_grow_t;

/* ----------------------------------------------------------------- heap --- */
typedef struct dm_layout {
  uint64_t pool_bytes;
  uint64_t nodes; /* 2 << top */
  uint64_t state_off, lock_off, avail_off, sem_off;
  uint64_t chunk_off, bin_off, ways_off, shint_off, astats_off, hstats_off, heap_off;
  uint64_t avail_words;
  uint64_t nchunks;
  uint64_t total; /* bytes needed: == heap_bytes */
  uint32_t top, narenas;
  uint64_t grow_off;              /* dm_grow_t (always laid out; used when grows) */
  uint64_t bcache_off, bslot_off; /* block cache rings and their slots */
  uint64_t fresh_off;             /* dm_fresh_t */
  uint32_t bcap[DM_CACHE_ORDERS]; /* slots per order (a power of two, or 0) */
  uint32_t grows;                 /* 1: pool is a reserved range that is mapped as needed */
  uint32_t bwhole;                /* bit o: order o's ring has a slot for every block of the order */
} dm_layout_t;

typedef struct dm_heap {
  uint64_t magic;
  uint64_t heap_bytes;
  dm_buddy_t buddy;
  dm_chunk_t *chunks;
  dm_bin_t *bins; /* narenas * DM_NUM_CLASSES */
  dm_way_t *ways; /* ways 1 .. way_mask of each bin, bin after bin (NULL: one way) */
  uint32_t *
      shints; /* DM_HINT_SLOTS x DM_NUM_CLASSES chunk hints, index+1 (slab.c; NULL: one way, or a pool below DM_HINT_POOL_MIN) */
  dm_arena_stats_t *astats; /* narenas */
  dm_heap_stats_t *hstats;
  uint32_t narenas;
  uint32_t nchunks;
  uint32_t min_block; /* smaller requests are served this many bytes
                                * (0: off; see dm_heap_request_size) */
  uint32_t check;     /* 1: check mode (canaries after blocks, checked at free) */
  uint32_t way_mask;  /* ways of each bin, minus 1 (layout.c: dm_ways_for) */
  uint32_t round;     /* requests are served a multiple of round + 1 bytes: DM_SECTOR_BYTES - 1
                                * (the default: every block has its 32-byte sectors to itself), or
                                * DM_MIN_ALIGN - 1 (dense) */
  dm_class_t classes[DM_NUM_CLASSES];
  dm_bcache_t *bcache; /* DM_CACHE_ORDERS rings */
  uint32_t *bslots;    /* their slots: order o's are bslots[bbase[o] .. + bcap[o]) */
  uint32_t bcap[DM_CACHE_ORDERS];
  uint32_t bbase[DM_CACHE_ORDERS];
  uint32_t bwhole;    /* bit o: order o's ring holds every block of the order (no reservation) */
  dm_fresh_t *fresh;  /* the fresh chunks' counter (fresh.c) */
  uint64_t fresh_end; /* chunks [0, fresh_end) were fresh at format (0: none) */
  /* growth (NULL grow: a fixed heap, everything below unused) */
  dm_grow_t *grow;         /* in the metadata */
  dm_grow_host_t *ghost;   /* shared with the host's service thread */
  uint64_t grow_watermark; /* ask for more when less than this is free in the tree */
  uint64_t grow_step;      /* ask for at least this much more at a time */
  uint64_t grow_wait_ns;   /* longest wait of a request for the host */
} dm_heap_t;

/* Result of stage two of a slab allocation: one word of one chunk's bitmap,
 * the bits claimed in it. Slot i of the chunk is bit i. */
typedef struct dm_grant {
  char *slots;   /* the chunk's first slot (chunk base + class offset) */
  uint32_t word; /* bitmap word index */
  uint32_t size; /* slot size */
  uint64_t bits; /* claimed bits (0: nothing, out of memory) */
} dm_grant_t;

/* A reservation in flight (stage one done, stage two under way). */
typedef struct dm_resv {
  uint32_t arena; /* arena whose bin the units come from */
  uint32_t home;  /* the caller's own arena */
  uint32_t cls;
  uint32_t units;  /* semaphore units not yet pinned to a chunk */
  uint32_t pinned; /* slots pinned in `chunk`, not yet claimed */
  uint32_t chunk;  /* chunk index+1 */
  uint32_t tries;  /* arenas tried when stealing */
  uint32_t cursor; /* where to look for free bits in `chunk` */
  uint32_t drop;   /* units a pin added to `chunk` and still owes back */
} dm_resv_t;

#endif /* DM_TYPES_H */
