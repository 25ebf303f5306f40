/*
 * dm_internal.h — prototypes of the allocator core, grouped by the file that
 * defines them. Include this (it includes dm_types.h and dm_platform.h).
 * Error convention: allocation functions return 0/NULL on failure and never
 * block indefinitely; free paths report misuse through dm_free_status_t.
 */
#ifndef DM_INTERNAL_H
#define DM_INTERNAL_H

#include "dm_types.h"

enum { DM_SEM_OK = 0, DM_SEM_GROW = -1 };
#define DM_SEM_EXPECT_MAX 0xffffu /* a semaphore's expected (and reserved) units are 16 bits */
/* DM_FREE_NOT_SLAB: dm_slab_locate's answer for a chunk that is no slab
 * chunk; dm_slab_outside then says DM_FREE_LARGE (a large block's pointer)
 * or the misuse class. Neither is counted as misuse. */
typedef enum {
  DM_FREE_OK = 0,
  DM_FREE_FOREIGN = 1,
  DM_FREE_DOUBLE = 2,
  DM_FREE_NOT_SLAB = 3,
  DM_FREE_LARGE = 4
} dm_free_status_t;

#ifdef __cplusplus
extern "C" {
#endif

/* sem.c */
DM_FN void dm_sem_init(dm_sem_t *s, uint32_t count);
DM_FN int dm_sem_wait(dm_sem_t *s, uint32_t n, uint32_t b);
DM_HOT int dm_sem_take_fast(dm_sem_t *s, uint32_t n, int polite);
DM_FN void dm_sem_signal(dm_sem_t *s, uint32_t n, uint32_t b);
DM_FN int dm_sem_try_wait(dm_sem_t *s, uint32_t n);
DM_FN uint32_t dm_sem_try_take(dm_sem_t *s, uint32_t n, int partial);
DM_FN uint32_t dm_sem_value(const dm_sem_t *s);
DM_FN uint32_t dm_sem_expected(const dm_sem_t *s);
DM_FN uint32_t dm_sem_reserved(const dm_sem_t *s);

/* counters.c (calls nothing in the core; every file may count) */
DM_FN uint32_t dm_heap_arena(const dm_heap_t *h);
DM_FN void dm_heap_note_failure(dm_heap_t *h, uint32_t arena, uint32_t count);
DM_FN void dm_heap_note_misuse(dm_heap_t *h, int why);
DM_FN void dm_heap_note_misuses(dm_heap_t *h, int why, uint32_t n);
DM_FN void dm_heap_note_slab(dm_heap_t *h, uint32_t arena, uint32_t cls, uint32_t count);
DM_FN void dm_heap_hold(dm_heap_t *h, uint64_t bytes);
DM_FN void dm_heap_note_free(dm_heap_t *h, uint32_t arena, uint32_t cls, uint32_t count);
/* `bytes` of the pool are no longer held (before they can be reused): the one
 * place the footprint is lowered, as dm_heap_hold is the one it is raised. */
static DM_INLINE void dm_heap_unhold(dm_heap_t *h, uint64_t bytes) {
  dm_add64(&h->hstats->footprint, (uint64_t)0 - bytes);
}

/* check_mode.c (DEVMALLOC_CHECK; calls nothing in the core) */
DM_FN void dm_check_arm(char *p, uint64_t size, uint64_t bytes);
DM_FN int dm_check_intact(const char *p, uint64_t bytes);
DM_FN void dm_heap_check_free(dm_heap_t *h, const char *p, uint64_t bytes);

/* buddy.c */
DM_FN uint64_t dm_buddy_alloc(dm_buddy_t *b, uint32_t order);
DM_FN uint64_t dm_buddy_alloc_run(dm_buddy_t *b, uint32_t order, uint32_t k);
DM_FN int dm_buddy_exhausted(dm_buddy_t *b, uint32_t order);
DM_FN void dm_buddy_move_begin(dm_buddy_t *b);
DM_FN void dm_buddy_move_end(dm_buddy_t *b);
DM_FN int dm_buddy_settled_empty(dm_buddy_t *b, uint32_t order);
DM_FN void dm_buddy_free(dm_buddy_t *b, uint64_t node);
DM_FN uint64_t dm_buddy_claim(dm_buddy_t *b, uint32_t order);
DM_FN uint64_t dm_buddy_lookup(const dm_buddy_t *b, uint64_t off, int *why);
DM_FN void dm_buddy_free_run(dm_buddy_t *b, uint64_t y, uint32_t j);
DM_FN void dm_buddy_join_stores(dm_buddy_t *b, uint64_t y, uint32_t j);
/* Node r (0 .. 2^j - 2) of those above a run of 2^j blocks under node y,
 * which a run's join marks BUSY (dm_buddy_join_stores; a warp's lanes one
 * each, devmalloc.cu): depth d = log2(r + 1) under y, the (r + 1 - 2^d)-th
 * node there. */
static DM_INLINE uint64_t dm_buddy_run_node(uint64_t y, uint32_t r) {
  uint32_t d = 63u - (uint32_t)dm_clz64(r + 1u);
  return (y << d) + (r + 1u - (1u << d));
}
DM_FN uint64_t dm_buddy_run_from(dm_buddy_t *b, uint64_t y, uint32_t order, uint32_t k);
DM_FN uint64_t dm_buddy_node_offset(const dm_buddy_t *b, uint64_t node);
DM_FN uint64_t dm_buddy_node_at(const dm_buddy_t *b, uint32_t order, uint64_t off);
DM_FN uint32_t dm_buddy_order(const dm_buddy_t *b, uint64_t node);
DM_FN int dm_buddy_classify(const dm_buddy_t *b, uint64_t off);
DM_FN char *dm_buddy_addr(const dm_buddy_t *b, uint64_t node);
DM_FN uint64_t dm_buddy_claim_at(dm_buddy_t *b, uint32_t order, uint64_t off);

/* blockcache.c */
/* Whether order's ring counts reservations (`used`): every ring but those
 * with a slot for every block of their order (`bwhole`, blockcache.c). */
static DM_INLINE int dm_bcache_reserves(const dm_heap_t *h, uint32_t order) {
  return !(h->bwhole >> order & 1u);
}
DM_FN int dm_bcache_put(dm_heap_t *h, uint64_t y);
DM_FN uint64_t dm_bcache_take(dm_heap_t *h, uint32_t order);
DM_FN uint32_t dm_bcache_flush(dm_heap_t *h);
DM_FN uint32_t dm_bcache_count(const dm_heap_t *h, uint32_t order);

/* fresh.c */
DM_FN uint32_t dm_fresh_take(dm_heap_t *h, uint32_t k, uint32_t *first);
DM_FN int dm_fresh_release(dm_heap_t *h);
/* Fresh chunks left (inline: check.c links without the core). */
static DM_INLINE uint64_t dm_fresh_count(const dm_heap_t *h) {
  uint64_t end = h->fresh_end, next = end ? dm_load64(&h->fresh->next) : 0;
  return next < end ? end - next : 0;
}

/* sizeclass.c (dm_classes_compute: layout.c, host only) */
DM_FN int dm_class_of(uint64_t size, uint64_t align);
DM_FN uint32_t dm_order_of(uint64_t bytes);
void dm_classes_compute(dm_class_t out[DM_NUM_CLASSES]);

/* slab.c */
DM_FN void dm_resv_init(dm_resv_t *rv, uint32_t arena, uint32_t cls);
DM_FN char *dm_grant_slot(dm_grant_t g, int k);
/* slab.c, for slab_grow.c and slab_grant.c (DM_PART_*: the slab's own) */
DM_PART_COLD dm_grant_t chunk_format(dm_heap_t *h, uint32_t idx, uint32_t arena, uint32_t cls, uint32_t way,
                                     uint32_t take);
DM_PART_INLINE uint32_t chunk_pin(dm_heap_t *h, uint32_t idx, uint32_t tag, uint32_t cap, uint32_t want,
                                  uint32_t *before, uint32_t *over);
DM_PART_INLINE int resv_pin_at(dm_heap_t *h, dm_resv_t *rv, uint32_t tag, uint32_t cap, uint32_t c);
DM_PART_INLINE int way_pin_chain(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap,
                                 uint32_t c, uint32_t hint, int stack);
DM_PART_INLINE uint32_t way_pin(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap);
DM_PART_INLINE void resv_pin(dm_heap_t *h, dm_resv_t *rv);
DM_PART_INLINE dm_grant_t resv_claim(dm_heap_t *h, dm_resv_t *rv, uint32_t n);
DM_FN uint32_t dm_chunk_class(const dm_heap_t *h, uint32_t chunk);

/* slab_grow.c, for slab_grant.c (DM_PART_*: the slab's own) */
DM_PART_COLD int resv_grow(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t expected,
                           dm_grant_t *g);
DM_PART_INLINE uint32_t grow_run(const dm_heap_t *h, dm_bin_t *b, uint32_t cap, uint32_t n);
DM_PART_COLD uint32_t resv_steal(dm_heap_t *h, dm_resv_t *rv, uint32_t n);
DM_PART_INLINE dm_bin_t *bin_share(dm_heap_t *h, dm_resv_t *rv, uint32_t m, dm_bin_t *b);

/* slab_grant.c */
DM_FN dm_grant_t dm_slab_grant(dm_heap_t *h, dm_resv_t *rv, uint32_t n);
DM_HOT dm_grant_t dm_slab_grant_fast(dm_heap_t *h, dm_resv_t *rv, uint32_t n);
DM_FN int dm_slab_pin_way(dm_heap_t *h, dm_resv_t *rv);
DM_FN uint32_t dm_slab_room(const dm_heap_t *h, uint32_t idx, uint32_t tag, uint32_t cap);
DM_FN int dm_slab_pin_found(dm_heap_t *h, dm_resv_t *rv, uint32_t idx);

/* slab_free.c */
DM_HOT int dm_slab_locate(const dm_heap_t *h, uint64_t off, uint32_t *chunk, uint32_t *slot, uint32_t *tag);
DM_FN int dm_slab_outside(const dm_heap_t *h, uint64_t off);
DM_FN uint64_t dm_slab_free_bits(dm_heap_t *h, uint32_t chunk, uint32_t tag, uint32_t word, uint64_t bits);
DM_HOT void dm_slab_free_commit(dm_heap_t *h, uint32_t chunk, uint32_t tag, uint32_t count);

/* reclaim.c */
DM_FN uint32_t dm_reclaim_chunks(dm_heap_t *h);
DM_FN uint64_t dm_reclaim_span(const dm_heap_t *h);

/* tree.c */
DM_FN uint64_t dm_tree_alloc(dm_heap_t *h, uint32_t order, uint32_t k);
DM_FN int dm_tree_no_room(dm_heap_t *h, uint32_t order);
DM_FN uint32_t dm_tree_take_chunks(dm_heap_t *h, uint32_t k, uint32_t *idx);

/* heap.c (a request's size, large blocks) */
DM_FN void *dm_heap_malloc_large(dm_heap_t *h, uint64_t size, uint64_t align, uint32_t arena);
DM_FN uint32_t dm_heap_large_order(const dm_heap_t *h, uint64_t size, uint64_t align);
DM_FN char *dm_heap_malloc_run(dm_heap_t *h, uint32_t order, uint32_t k, uint32_t arena);
DM_FN int dm_heap_free_large(dm_heap_t *h, uint64_t off, uint32_t arena);
DM_FN uint64_t dm_heap_large_lookup(dm_heap_t *h, uint64_t off, int *why);
DM_FN void dm_heap_free_nodes(dm_heap_t *h, uint64_t y, uint32_t j, uint32_t arena);
/* A small request's size rounded to the heap's granule (round + 1 bytes:
 * a 32-byte sector by default; see dm_heap_request_size). */
static DM_INLINE uint64_t dm_heap_round(const dm_heap_t *h, uint64_t size) {
  return (size + h->round) & ~(uint64_t)h->round;
}
DM_FN uint64_t dm_heap_request_size(const dm_heap_t *h, uint64_t size);
DM_FN uint64_t dm_heap_node_bytes(const dm_heap_t *h, uint64_t node);

/* grow.c (a heap that grows; h->grow == NULL: fixed heap, all return at once) */
DM_FN int dm_grow_more(dm_heap_t *h, uint32_t order);
DM_FN void dm_grow_ahead(dm_heap_t *h);
DM_FN uint64_t dm_grow_trim(dm_heap_t *h, uint64_t floor, uint64_t unit);
DM_FN uint64_t dm_grow_released(const dm_heap_t *h);

/* single.c */
DM_FN void *dm_malloc(dm_heap_t *h, uint64_t size, uint64_t align);
DM_FN int dm_free(dm_heap_t *h, void *p);

/* layout.c (host only: plans and formats a heap in any memory) */
typedef void (*dm_write_fn)(void *ctx, uint64_t off, const void *src, uint64_t n);
typedef void (*dm_fill32_fn)(void *ctx, uint64_t off, uint32_t value, uint64_t count);
int dm_layout_compute_grow(uint64_t max_pool, uint32_t narenas, dm_layout_t *L);
void dm_heap_format_grow(const dm_layout_t *L, const dm_heap_t *h, dm_write_fn write, dm_fill32_fn fill32,
                         void *ctx);
int dm_layout_compute(uint64_t heap_bytes, uint32_t narenas, dm_layout_t *L);
uint64_t dm_layout_max_bytes(void);
uint32_t dm_arenas_for(uint64_t heap_bytes, uint32_t sms);
uint32_t dm_ways_for(uint32_t narenas);
void dm_heap_build(const dm_layout_t *L, uint64_t base, uint64_t heap_bytes, dm_heap_t *out);
void dm_heap_format(const dm_layout_t *L, const dm_heap_t *h, dm_write_fn write, dm_fill32_fn fill32,
                    void *ctx, int fresh);
struct devmalloc_stats;
void dm_heap_read_stats(const dm_heap_t *h, const dm_arena_stats_t *astats, const dm_heap_stats_t *hs,
                        struct devmalloc_stats *out);

/* check.c (host only) */
int dm_heap_check(const dm_heap_t *h, char *why, size_t whylen);
int dm_heap_is_whole(const dm_heap_t *h);
int dm_heap_whole(const dm_heap_t *h, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif /* DM_INTERNAL_H */
