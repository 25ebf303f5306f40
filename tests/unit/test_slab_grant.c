/* test_slab_grant.c — a small request's grant: the fast grant and the chunk
 * after a full hint, pins from a way's re-list stack, a bin's ways, slot
 * hints, the room search and a bin's bookkeeping. */
#include "test_common.h"
#include "chunk.h"
#include "slab_test.h"
#include <pthread.h>
#include <unistd.h>

#define MiB (1ull << 20)

/* The calling thread's way of bin b (as slab.c picks it). */
static dm_way_t *my_way(const dm_heap_t *h, dm_bin_t *b) { return bin_way(h, b, bin_way_index(h)); }

/* The fast grant passes a full hint for the chunk after it in the list, as
 * the full grant does, and moves the hint there: a bin whose chunks a few
 * warps fill (1 KiB: 4 warps a chunk) sent every warp that met a full hint
 * down the long path. One way (300 arenas), so that the list is the bin's. */
static void test_grant_fast_next(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 300);
  dm_heap_t *h = f.h;
  assert_int_equal(h->way_mask, 0);
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  uint32_t arena = dm_heap_arena(h); /* this thread's */
  dm_bin_t *b = bin_at(h, arena, cls);
  void *p[128];
  uint32_t n = 0;
  for (; n < cap; n++) p[n] = dm_malloc(h, 4096, 16); /* chunk A, full */
  p[n++] = dm_malloc(h, 4096, 16);                    /* a run of two: B (1 taken, the hint), C */
  uint32_t bchunk = b->way0.hint - 1, cchunk = h->chunks[bchunk].next - 1;
  assert_int_not_equal(h->chunks[bchunk].next, 0);
  for (uint32_t i = 1; i < cap; i++) p[n++] = dm_malloc(h, 4096, 16); /* B full */
  assert_int_equal(b->way0.hint, bchunk + 1);
  assert_int_equal(live_used(h->chunks[bchunk].live), cap);
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  dm_grant_t g = dm_slab_grant_fast(h, &rv, 1);
  assert_int_equal(dm_popc64(g.bits), 1);
  assert_ptr_equal(g.slots, chunk_base(h, cchunk) + h->classes[cls].off);
  assert_int_equal(b->way0.hint, cchunk + 1);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  p[n++] = dm_grant_slot(g, dm_ctz64(g.bits));
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_heap_fini_whole(&f);
}

/* While another caller searches a way (its lock is taken), a pin that finds
 * the hint and the chunk after it full takes a chunk with room from the
 * way's re-list stack instead of waiting for that search: after a free
 * kernel the chunks that got room back are all there. Before, the caller
 * waited for the lock (here it would wait for good: alarm). One way (300
 * arenas), so that the list is the bin's. */
static void test_pin_from_stack_while_searched(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 300);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *b = bin_at(h, dm_heap_arena(h), cls);
  dm_way_t *w = &b->way0;
  void *p[7 * 64];
  uint32_t n = 0;
  for (; n < 7 * cap; n++) p[n] = dm_malloc(h, 4096, 16); /* runs of 1, 2 and 4 chunks, full */
  assert_int_equal(b->held, 7);
  assert_int_equal(dm_sem_value(&b->sem), 0);
  uint32_t a = chunk_of(h, p[0]);
  uint32_t hint = w->hint, after = h->chunks[hint - 1].next;
  assert_int_equal(live_used(h->chunks[hint - 1].live), cap); /* the walk meets full chunks */
  assert_true(after == 0 || live_used(h->chunks[after - 1].live) == cap);
  assert_int_not_equal(after, a + 1);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK); /* room in the first chunk: queued */
  assert_int_equal(w->pending, a + 1);
  alarm(30);
  way_lock(w); /* another caller searches */
  p[0] = dm_malloc(h, 4096, 16);
  way_unlock(w);
  alarm(0);
  assert_non_null(p[0]);
  assert_int_equal(chunk_of(h, p[0]), a);
  assert_int_equal(w->hint, a + 1);    /* the way's next warps start there */
  assert_int_equal(w->pending, a + 1); /* still queued: the next search lists it */
  assert_int_equal(b->held, 7);        /* no new chunk */
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_heap_fini_whole(&f);
}

/* Ways: a heap of one arena has DM_BIN_WAYS of them. A thread of another
 * way than the chunk's pins the bin's units where they are (no grow while
 * the bin has room) and its way's hint follows; the bin's grows give their
 * chunks to the ways in turn; a chunk that gets room back is re-listed in
 * the way that lists it, whoever frees. */
typedef struct {
  dm_heap_t *h;
  void **p;
  uint32_t n, way;
  void *then_free; /* freed after the allocations (NULL: none) */
} ways_job_t;
static void *ways_job(void *arg) {
  ways_job_t *j = arg;
  j->way = bin_way_index(j->h);
  for (uint32_t i = 0; i < j->n; i++) j->p[i] = dm_malloc(j->h, 4096, 16);
  if (j->then_free) assert_int_equal(dm_free(j->h, j->then_free), DM_FREE_OK);
  return NULL;
}
/* Run j in a new thread whose way is not `not`: threads get their index in
 * turn, so empty threads go first until the next one's way differs. */
static void ways_other(ways_job_t *j, uint32_t not ) {
  ways_job_t probe = {j->h, NULL, 0, 0, NULL};
  pthread_t t;
  do {
    assert_int_equal(pthread_create(&t, NULL, ways_job, &probe), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
  } while (((probe.way + 1) & j->h->way_mask) == not );
  assert_int_equal(pthread_create(&t, NULL, ways_job, j), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_not_equal(j->way, not );
}
static void test_ways(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  assert_int_equal(h->way_mask + 1, DM_BIN_WAYS);
  assert_int_equal(dm_ways_for(455), 1);
  assert_int_equal(dm_ways_for(113), 4);
  assert_int_equal(dm_ways_for(7), DM_BIN_WAYS);
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *p0 = dm_malloc(h, 4096, 16), *q[128], *r[1];
  uint32_t c1 = chunk_of(h, p0); /* the bin's first grow: way 0 */
  assert_int_equal(live_way(h->chunks[c1].live), 0);
  assert_int_equal(bin_way(h, bin, 0)->hint, c1 + 1);
  ways_job_t j = {h, q, cap - 1, 0, NULL};
  ways_other(&j, 0);
  assert_int_equal(h->hstats->footprint, DM_CHUNK_BYTES); /* no grow: it pinned in c1 */
  for (uint32_t i = 0; i < cap - 1; i++) assert_int_equal(chunk_of(h, q[i]), c1);
  assert_int_equal(bin_way(h, bin, j.way)->hint, c1 + 1); /* its way followed */
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  /* the bin is full: its second grow, a run of two, to ways 1 and 2; then
   * that thread frees a slot of c1, which was full: c1 is re-listed on way
   * 0's stack */
  ways_job_t g = {h, r, 1, 0, q[0]};
  ways_other(&g, 0);
  uint32_t c2 = chunk_of(h, r[0]);
  assert_int_not_equal(c2, c1);
  assert_int_equal(live_way(h->chunks[c2].live), 1);
  assert_int_equal(bin_way(h, bin, 1)->hint, c2 + 1);
  assert_int_equal(live_used(h->chunks[bin_way(h, bin, 2)->hint - 1].live), 0);
  assert_int_equal(live_way(h->chunks[bin_way(h, bin, 2)->hint - 1].live), 2);
  assert_int_equal(bin_way(h, bin, 0)->pending, c1 + 1);
  assert_int_equal(bin_way(h, bin, g.way)->pending, 0);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(h, r[0]), DM_FREE_OK);
  assert_int_equal(dm_free(h, p0), DM_FREE_OK);
  for (uint32_t i = 1; i < cap - 1; i++) assert_int_equal(dm_free(h, q[i]), DM_FREE_OK);
  fixture_heap_fini_whole(&f);
}

/* Slot hints: in a heap with several ways and room for them
 * (DM_HINT_POOL_MIN), a thread (a warp slot on the GPU) tries its own last
 * chunk of a class before its way's hint, so that a kernel that runs again
 * finds its slots where the last run found them; a stale one (a chunk of
 * another class now) is passed over and replaced. A smaller heap keeps none. */
typedef struct {
  dm_heap_t *h;
  void **p;
  uint32_t n;
} hint_job_t;
static void *hint_job(void *arg) {
  hint_job_t *j = arg;
  for (uint32_t i = 0; i < j->n; i++) j->p[i] = dm_malloc(j->h, 4096, 16);
  return NULL;
}
static void test_slot_hints(void **st) {
  fixture_heap_t small;
  fixture_heap_init(&small, 4 * MiB, 1);
  assert_true(small.h->way_mask > 0);
  assert_null(small.h->shints);
  fixture_heap_fini(&small);
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 1);
  dm_heap_t *h = f.h;
  assert_non_null(h->shints);
  /* 16 .. 64 B keep none (a chunk serves 64 warps and more), 80 B and up do */
  assert_null(slot_hint(h, (uint32_t)dm_class_of(64, 16)));
  assert_non_null(slot_hint(h, (uint32_t)dm_class_of(80, 16)));
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *a = dm_malloc(h, 4096, 16), *q[64], *mine, *again;
  uint32_t ca = chunk_of(h, a);
  assert_int_equal(*slot_hint(h, cls), ca + 1);
  /* another thread fills ca and starts a second chunk */
  hint_job_t j = {h, q, cap};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, hint_job, &j), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  uint32_t c2 = chunk_of(h, q[cap - 1]), k = 0;
  assert_int_not_equal(c2, ca);
  while (chunk_of(h, q[k]) != ca) k++;
  assert_int_equal(dm_free(h, q[k]), DM_FREE_OK); /* one slot of ca free again */
  /* this thread's way points at c2, which has room; its own chunk wins */
  dm_store32(&bin_way(h, bin, bin_way_index(h))->hint, c2 + 1);
  assert_non_null(mine = dm_malloc(h, 4096, 16));
  assert_int_equal(chunk_of(h, mine), ca);
  assert_ptr_equal(mine, q[k]);
  /* a stale hint: a chunk of another class */
  void *small16 = dm_malloc(h, 16, 16);
  dm_store32(slot_hint(h, cls), chunk_of(h, small16) + 1);
  assert_non_null(again = dm_malloc(h, 4096, 16));
  assert_int_equal(dm_chunk_class(h, chunk_of(h, again)), cls);
  assert_int_equal(*slot_hint(h, cls), chunk_of(h, again) + 1);
  fixture_assert_consistent(&f);
  for (uint32_t i = 0; i < cap; i++)
    if (i != k) assert_int_equal(dm_free(h, q[i]), DM_FREE_OK);
  assert_int_equal(dm_free(h, a), DM_FREE_OK);
  assert_int_equal(dm_free(h, mine), DM_FREE_OK);
  assert_int_equal(dm_free(h, again), DM_FREE_OK);
  assert_int_equal(dm_free(h, small16), DM_FREE_OK);
  fixture_heap_fini_whole(&f);
}

/* The pieces of a warp's room search (devmalloc.cu; the warp's parallel
 * reads need a GPU): dm_slab_room sees the free slots of the caller's bin's
 * chunks only; dm_slab_pin_found gives back what the fast path's pin took
 * beyond room, pins what fits, makes the chunk the slot's hint, and the
 * grant then serves exactly the freed slots; a chunk whose room is gone is
 * refused with nothing changed; dm_slab_pin_way pins from the caller's
 * way. */
static void test_room_search(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(1024, 16), cap = h->classes[cls].nslots;
  uint32_t arena = dm_heap_arena(h);
  dm_bin_t *bin = bin_at(h, arena, cls);
  void *p[128] = {NULL};
  assert_int_equal(cap, 128);
  for (uint32_t i = 0; i < cap; i++) assert_non_null(p[i] = dm_malloc(h, 1024, 16));
  uint32_t a = chunk_of(h, p[0]);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(chunk_of(h, p[i]), a);
  void *x = dm_malloc(h, 2048, 16);
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  uint32_t tag = make_tag(arena, cls);
  assert_int_equal(dm_slab_room(h, a, tag, cap), 0);              /* full */
  assert_int_equal(dm_slab_room(h, chunk_of(h, x), tag, cap), 0); /* another class's */
  for (uint32_t i = 10; i < 15; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_slab_room(h, a, tag, cap), 5);
  assert_int_equal(dm_slab_room(h, a, make_tag(arena + 1, cls), cap), 0); /* another arena's bin */
  /* 3 units, and an over-pin of 2 on chunk a that the fast path left */
  assert_true(dm_sem_take_fast(&bin->sem, 3, 0));
  rv.units = 3;
  dm_add64(&h->chunks[a].live, 2);
  rv.chunk = a + 1;
  rv.drop = 2;
  assert_int_equal(dm_slab_pin_found(h, &rv, a), 1);
  assert_int_equal(rv.drop, 0);
  assert_int_equal(rv.pinned, 3);
  assert_int_equal(rv.units, 0);
  assert_int_equal(live_used(h->chunks[a].live), cap - 2);
  assert_int_equal(*slot_hint(h, cls), a + 1);
  dm_grant_t g = dm_slab_grant(h, &rv, 3);
  assert_int_equal(dm_popc64(g.bits), 3);
  for (int k = 0; k < 3; k++) {
    char *s = dm_grant_slot(g, dm_ctz64(g.bits));
    g.bits &= g.bits - 1;
    assert_int_equal(chunk_of(h, s), a);
    assert_true(s >= (char *)p[10] && s <= (char *)p[14]);
  }
  /* two slots left in a; a reservation of 3 pins 2 there, then none */
  dm_resv_t r2;
  dm_resv_init(&r2, arena, cls);
  assert_true(dm_sem_take_fast(&bin->sem, 2, 0));
  r2.units = 2;
  assert_int_equal(dm_slab_pin_found(h, &r2, a), 1);
  assert_int_equal(r2.pinned, 2);
  dm_resv_t r3;
  dm_resv_init(&r3, arena, cls);
  r3.units = 1; /* borrowed: given back below */
  assert_int_equal(dm_slab_pin_found(h, &r3, a), 0);
  assert_int_equal(r3.units, 1);
  assert_int_equal(r3.pinned, 0);
  assert_int_equal(live_used(h->chunks[a].live), cap);
  g = dm_slab_grant(h, &r2, 2);
  assert_int_equal(dm_popc64(g.bits), 2);
  /* the caller's way: its hint has room after a free */
  assert_int_equal(dm_free(h, p[20]), DM_FREE_OK);
  assert_true(dm_sem_take_fast(&bin->sem, 1, 0));
  dm_store32(&my_way(h, bin)->hint, a + 1);
  assert_int_equal(dm_slab_pin_way(h, &r3), 1);
  assert_int_equal(r3.chunk, a + 1);
  g = dm_slab_grant(h, &r3, 1);
  assert_ptr_equal(dm_grant_slot(g, dm_ctz64(g.bits)), p[20]);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(h, x), DM_FREE_OK);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_heap_fini_whole(&f);
}

/* One chunk per bin until it is full; a full chunk leaves the list (lazily,
 * when a search meets it) and comes back when a slot is freed; empty chunks
 * stay with the bin until a reclaim pass (the tree runs short) takes them
 * back. */
static void test_bin_bookkeeping(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *p[128];
  for (uint32_t i = 0; i < cap; i++) p[i] = dm_malloc(h, 4096, 16);
  assert_int_equal(h->hstats->footprint, DM_CHUNK_BYTES);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  uint32_t chunk1 = my_way(h, bin)->hint - 1;
  assert_int_equal(live_used(h->chunks[chunk1].live), cap);
  bin->grows = 0; /* one chunk per grow here (runs: test_grow_runs) */
  for (uint32_t i = cap; i < 2 * cap; i++) p[i] = dm_malloc(h, 4096, 16); /* second chunk */
  assert_int_equal(bin->held, 2);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES);
  uint32_t chunk2 = my_way(h, bin)->hint - 1;
  assert_int_not_equal(chunk1, chunk2);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK); /* room in chunk 1 */
  assert_int_equal(dm_sem_value(&bin->sem), 1);
  /* the full hint (chunk 2) is passed for the next chunk of the list,
   * chunk 1, without a search: chunk 2 stays listed until one drops it */
  p[0] = dm_malloc(h, 4096, 16);
  assert_int_equal(my_way(h, bin)->hint - 1, chunk1);
  assert_true(h->chunks[chunk2].listed);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* no new chunk */
  assert_int_equal(dm_free(h, p[cap]), DM_FREE_OK);           /* chunk 2 has room: queued, no lock taken */
  assert_int_equal(my_way(h, bin)->pending, chunk2 + 1);
  assert_true((uint32_t)h->chunks[chunk2].live & DM_LIVE_PEND);
  assert_int_equal(dm_free(h, p[cap + 1]), DM_FREE_OK);    /* queued once */
  assert_int_equal(h->chunks[chunk2].pending, chunk1 + 1); /* chunk 1, queued when it got room */
  p[cap] = dm_malloc(h, 4096, 16); /* chunk 1 is full: the search lists chunk 2 and uses it */
  p[cap + 1] = dm_malloc(h, 4096, 16);
  assert_true(h->chunks[chunk2].listed);
  assert_int_equal(my_way(h, bin)->pending, 0);
  assert_false((uint32_t)h->chunks[chunk2].live & DM_LIVE_PEND);
  assert_int_equal(live_used(h->chunks[chunk2].live), cap);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* no new chunk */
  for (uint32_t i = 0; i < 2 * cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* both kept */
  assert_int_equal(h->hstats->peak, 2 * DM_CHUNK_BYTES);
  assert_int_equal(dm_sem_value(&bin->sem), 2 * cap);
  assert_int_equal(h->hstats->cached, 1);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));                                 /* every block free; two chunks kept */
  for (uint32_t i = 0; i < cap; i++) p[i] = dm_malloc(h, 4096, 16); /* served by a kept chunk */
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_reclaim_chunks(h), 1);
  assert_int_equal(dm_reclaim_chunks(h), 0); /* nothing marked since */
  assert_int_equal(h->hstats->footprint, 0);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  fixture_heap_fini_whole(&f);
}

/* The fast grant (the GPU malloc's common path) and dm_slab_grant going on
 * from what it leaves. It takes nothing when the bin has too few units,
 * when a waiter is reserved on the semaphore, or for more slots than a chunk
 * holds. On a hint chunk with less room than asked it pins what fits, and
 * the full grant gives the rest back and pins it on another chunk. Every slot
 * is handed out once; the heap is consistent, and whole after the frees. */
static void test_grant_fast(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *b = bin_at(h, 0, cls);
  char *got[96];
  uint32_t n = 0;
  dm_resv_t rv;
#define TAKE(g)                                            \
  for (uint64_t bits = (g).bits; bits; bits &= bits - 1) { \
    assert_true(n < 96);                                   \
    got[n++] = dm_grant_slot((g), dm_ctz64(bits));         \
  }
  /* a fresh bin: no units, nothing taken; the full grant grows chunk A */
  dm_resv_init(&rv, 0, cls);
  dm_grant_t g = dm_slab_grant_fast(h, &rv, 20);
  assert_int_equal(g.bits, 0);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  assert_int_equal(dm_sem_value(&b->sem), 0);
  for (uint32_t want = 20; want;) {
    g = dm_slab_grant(h, &rv, want);
    assert_true(g.bits != 0);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  /* A has cap - 20 left: too few for 20 */
  assert_int_equal(dm_sem_value(&b->sem), cap - 20);
  dm_resv_init(&rv, 0, cls);
  assert_int_equal(dm_slab_grant_fast(h, &rv, 20).bits, 0);
  assert_int_equal(rv.units, 0);
  /* the second grow is a run of two: B (20 kept, the hint) and C */
  for (uint32_t want = 20; want;) {
    g = dm_slab_grant(h, &rv, want);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  uint32_t units = dm_sem_value(&b->sem);
  assert_int_equal(units, 3 * cap - 40);
  /* more than a chunk holds, or a waiter reserved: nothing taken */
  dm_resv_init(&rv, 0, cls);
  assert_int_equal(dm_slab_grant_fast(h, &rv, cap + 1).bits, 0);
  uint64_t w = b->sem.w;
  b->sem.w = dm_semw_pack(dm_semw_c(w), dm_semw_e(w), 1);
  assert_int_equal(dm_slab_grant_fast(h, &rv, 1).bits, 0);
  b->sem.w = w;
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  assert_int_equal(dm_sem_value(&b->sem), units);
  /* the hint (B) has cap - 20 slots for 20: those are pinned and claimed,
   * the rest is owed back to B and pinned elsewhere */
  g = dm_slab_grant_fast(h, &rv, 20);
  assert_int_equal(dm_popc64(g.bits), cap - 20);
  assert_int_equal(rv.drop, 40 - cap);
  assert_int_equal(rv.units, 40 - cap);
  assert_int_equal(rv.pinned, 0);
  TAKE(g);
  for (uint32_t want = 40 - cap; want;) {
    g = dm_slab_grant(h, &rv, want);
    assert_true(g.bits != 0);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  assert_int_equal(rv.drop, 0);
  assert_int_equal(n, 60);
  assert_int_equal(dm_sem_value(&b->sem), units - 20);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < i; j++) assert_ptr_not_equal(got[i], got[j]);
  fixture_assert_consistent(&f);
  /* the common case: every slot from one word, nothing left over */
  dm_resv_init(&rv, 0, (uint32_t)dm_class_of(16, 16));
  char *small[4];
  uint32_t k = 0;
  for (uint32_t want = 4; want;) {
    g = dm_slab_grant(h, &rv, want);
    want -= (uint32_t)dm_popc64(g.bits);
    for (uint64_t bits = g.bits; bits; bits &= bits - 1) small[k++] = dm_grant_slot(g, dm_ctz64(bits));
  }
  dm_resv_init(&rv, 0, (uint32_t)dm_class_of(16, 16));
  g = dm_slab_grant_fast(h, &rv, 4);
  assert_int_equal(dm_popc64(g.bits), 4);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  for (uint64_t bits = g.bits; bits; bits &= bits - 1)
    assert_int_equal(dm_free(h, dm_grant_slot(g, dm_ctz64(bits))), DM_FREE_OK);
  for (uint32_t i = 0; i < 4; i++) assert_int_equal(dm_free(h, small[i]), DM_FREE_OK);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, got[i]), DM_FREE_OK);
#undef TAKE
  fixture_heap_fini_whole(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bin_bookkeeping),
      cmocka_unit_test(test_pin_from_stack_while_searched),
      cmocka_unit_test(test_grant_fast),
      cmocka_unit_test(test_grant_fast_next),
      cmocka_unit_test(test_ways),
      cmocka_unit_test(test_slot_hints),
      cmocka_unit_test(test_room_search),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
