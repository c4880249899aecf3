/* SPDX-License-Identifier: MIT */
/*
 * The trace format's one table (format/events.h, format/records.h): the
 * writer->reader round trip over random event sequences of every type
 * (fuzz/roundtrip.h, shared with fuzz/fuzz_format_roundtrip.c), the
 * table against the ring's predicates, and the bytes of a known event
 * sequence against docs/formats/pptrace.md.
 */
#include "runner.h"

#include "../fuzz/roundtrip.h"

/* xorshift64*: the seeds' bytes */
static uint64_t fmt_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

PP_TEST(format_roundtrip_random_sequences_every_seed) {
  static uint8_t data[16384];
  size_t events = 0, types[256] = {0}, stats_minor[5] = {0}, cuda[6] = {0};
  size_t notes = 0, clocks = 0, drops = 0, ends = 0;
  rt_gen *g = malloc(sizeof *g);
  CHECK(g);
  for (uint64_t seed = 1; seed <= 1000; seed++) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL;
    /* short inputs stop early, long ones fill every table */
    size_t n = 64 + (size_t)(fmt_next(&s) % (sizeof data - 64));
    for (size_t i = 0; i < n; i++)
      data[i] = (uint8_t)(fmt_next(&s) >> 56);
    rt_src src = {data, n, 0};
    memset(g, 0, sizeof *g);
    g->src = &src;
    rt_generate(g);
    char why[256] = "";
    int rc = rt_verify(g, why, sizeof why);
    if (rc != 0)
      PP_FAIL("seed %llu: %s", (unsigned long long)seed,
              rc > 0 ? "out of memory" : why);
    /* what the seeds covered */
    events += g->nev + g->ngpu + g->nnotes;
    for (size_t i = 0; i < g->nev; i++)
      types[g->ev[i].type]++;
    types[PPT_EV_GPU_ZONE] += g->ngpu;
    types[PPT_EV_ZONE] += g->nzone;
    types[PPT_EV_ZONES] += g->nzoneruns;
    for (size_t i = 0; i < g->nnotes; i++)
      types[g->notes[i].e.type]++;
    notes += g->nnotes;
    clocks += g->nclock;
    for (size_t i = 0; i < g->nthreads; i++)
      drops += g->threads[i].dropped != 0;
    ends += g->clean_end;
    if (g->has_stats)
      stats_minor[g->stats_minor]++;
    cuda[0] += g->cuda_nnames;
    cuda[1] += g->nkernels;
    cuda[2] += g->nmemcpys;
    cuda[3] += g->nmemsets;
    cuda[4] += g->nsyncs;
    cuda[5] += g->napis;
    rt_free(g);
  }
  free(g);
  CHECK_GT(events, 10000);
  for (unsigned type = 1; type <= PPT_EV_MAX_; type++)
    if (types[type] == 0)
      PP_FAIL("no event of type %u (%s) in any seed", type,
              ppt_event_infos[type].name);
  for (int m = 2; m <= 4; m++)
    CHECK_GT(stats_minor[m], 0);
  for (int k = 0; k < 6; k++)
    CHECK_GT(cuda[k], 0);
  CHECK_GT(notes, 0);
  CHECK_GT(clocks, 0);
  CHECK_GT(drops, 0);
  CHECK_GT(ends, 0);
}

/* The round trip notices a difference: a generator that lies about one
 * field must fail (else the comparison could be vacuous). */
PP_TEST(format_roundtrip_detects_a_changed_field) {
  static uint8_t data[4096];
  uint64_t s = 42;
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(fmt_next(&s) >> 56);
  rt_src src = {data, sizeof data, 0};
  rt_gen *g = calloc(1, sizeof *g);
  CHECK(g);
  g->src = &src;
  rt_generate(g);
  CHECK(g->nev > 0);
  pp_trace t;
  char err[256] = "", why[256] = "";
  CHECK_EQ(pp_trace_read_mem(g->file.data, g->file.len, &t, err, sizeof err),
           0);
  CHECK_EQ(rt_compare_trace(g, &t, why, sizeof why), 0);
  g->ev[g->nev / 2].v2 ^= 1; /* what the reader should have made */
  CHECK_EQ(rt_compare_trace(g, &t, why, sizeof why), -1);
  CHECK_CONTAINS(why, "event");
  pp_trace_free(&t);
  rt_free(g);
  free(g);
}

/* The ring's predicates (pptrace.h) agree with the table's layouts. */
PP_TEST(format_event_table_matches_ring_predicates) {
  for (unsigned type = 0; type < 256; type++) {
    unsigned layout = ppt_ev_layout(type);
    CHECK_EQ(ppt_type_known(type), layout != PPT_L_NONE);
    CHECK_EQ(ppt_event_infos[type].layout, layout);
    ppt_ev e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.delta = INT64_MIN;
    e.loc = e.value = e.extra = UINT64_MAX;
    e.device = UINT64_MAX;
    e.launch = INT64_MIN;
    e.dur = UINT64_MAX;
    unsigned char buf[PPT_EV_MAX_FIXED + 64];
    /* ppt_buf_ev reserves the bound: no type may write past it */
    CHECK_LE(ppt_ev_put(buf, &e), ppt_ev_bound(&e));
    if (layout != PPT_L_NOTE)
      CHECK_LE(ppt_ev_put_fixed(buf, &e), PPT_EV_MAX_FIXED);
    if (layout == PPT_L_NONE)
      continue;
    CHECK(ppt_event_infos[type].name != NULL);
    CHECK_EQ(ppt_is_note(type), layout == PPT_L_NOTE);
    CHECK_EQ(ppt_is_mem(type), layout == PPT_L_MEM);
    CHECK_EQ(ppt_has_value(type),
             layout == PPT_L_SITE_SV || layout == PPT_L_SITE_F64 ||
                 layout == PPT_L_SITE_UV || layout == PPT_L_SITE_UV2 ||
                 layout == PPT_L_MEM || layout == PPT_L_ZONES);
    CHECK_EQ(ppt_has_extra(type),
             layout == PPT_L_SITE_UV2 || layout == PPT_L_MEM);
    /* 1.0 had types up to 12, 1.1 up to 17, 1.2 up to 27 */
    CHECK_EQ(ppt_event_infos[type].since_minor, type <= 12   ? 0
                                                : type <= 17 ? 1
                                                : type <= 27 ? 2
                                                             : 5);
  }
}

/* The writer's fast paths for zone begins and ends (ppt_ev_put_site) and
 * ZONE events (ppt_ev_put_site_uv) write the bytes the general encoder
 * writes, for every type of their layouts and for deltas, site ids and
 * values at each varint length. */
PP_TEST(format_site_fast_path_matches_table_encoder) {
  static const int64_t deltas[] = {0,         1,         -1,       63,
                                   64,        -65,       8191,     1 << 20,
                                   -(1 << 27), INT64_MAX, INT64_MIN};
  static const uint64_t locs[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX};
  unsigned checked = 0;
  for (unsigned type = 0; type < 256; type++) {
    if (ppt_ev_layout(type) != PPT_L_SITE)
      continue;
    for (size_t d = 0; d < PP__ARRAY_LEN(deltas); d++)
      for (size_t l = 0; l < PP__ARRAY_LEN(locs); l++) {
        ppt_ev e;
        memset(&e, 0, sizeof e);
        e.type = type;
        e.delta = deltas[d];
        e.loc = locs[l];
        unsigned char a[PPT_EV_MAX_FIXED], b[PPT_EV_MAX_FIXED];
        size_t na = ppt_ev_put_fixed(a, &e);
        size_t nb = ppt_ev_put_site(b, type, deltas[d], locs[l]);
        CHECK_EQ(nb, na);
        CHECK(memcmp(a, b, na) == 0);
        checked++;
      }
  }
  /* zone begin, zone end, mark, frame */
  CHECK_EQ(checked, 4 * PP__ARRAY_LEN(deltas) * PP__ARRAY_LEN(locs));
  /* and ppt_ev_put_site_uv (ZONE: a begin and its end) for SITE_UV */
  static const uint64_t values[] = {0, 1, 127, 128, UINT64_MAX};
  checked = 0;
  for (unsigned type = 0; type < 256; type++) {
    if (ppt_ev_layout(type) != PPT_L_SITE_UV)
      continue;
    for (size_t d = 0; d < PP__ARRAY_LEN(deltas); d++)
      for (size_t l = 0; l < PP__ARRAY_LEN(locs); l++)
        for (size_t v = 0; v < PP__ARRAY_LEN(values); v++) {
          ppt_ev e;
          memset(&e, 0, sizeof e);
          e.type = type;
          e.delta = deltas[d];
          e.loc = locs[l];
          e.value = values[v];
          unsigned char a[PPT_EV_MAX_FIXED], b[PPT_EV_MAX_FIXED];
          size_t na = ppt_ev_put_fixed(a, &e);
          size_t nb = ppt_ev_put_site_uv(b, type, deltas[d], locs[l],
                                         values[v]);
          CHECK_EQ(nb, na);
          CHECK(memcmp(a, b, na) == 0);
          checked++;
        }
  }
  /* flow begin, step, end, range begin, end, ZONE */
  CHECK_EQ(checked, 6 * PP__ARRAY_LEN(deltas) * PP__ARRAY_LEN(locs) *
                        PP__ARRAY_LEN(values));
}

/* Bytes of known events, as docs/formats/pptrace.md lays them out: the
 * table must not drift from the spec (a reordered field would still
 * round-trip). */
PP_TEST(format_event_bytes_match_the_spec) {
  unsigned char buf[64];
  ppt_ev e;
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_COUNTER_SET;
  e.delta = -1; /* zigzag 1 */
  e.loc = 3;
  e.value = (uint64_t)-2; /* zigzag 3 */
  CHECK_EQ(ppt_ev_put(buf, &e), 4);
  CHECK(memcmp(buf, "\x03\x01\x03\x03", 4) == 0);
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_MEM_ALLOC; /* pointer, bytes, device */
  e.delta = 1;
  e.loc = 1;
  e.value = 0x80; /* two bytes */
  e.extra = 5;
  e.device = 7;
  CHECK_EQ(ppt_ev_put(buf, &e), 7);
  CHECK(memcmp(buf, "\x19\x02\x01\x80\x01\x05\x07", 7) == 0);
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_GPU_ZONE; /* device, stream, sv launch, duration */
  e.loc = 2;
  e.device = 1;
  e.extra = 9;
  e.launch = -3; /* zigzag 5 */
  e.dur = 100;
  CHECK_EQ(ppt_ev_put(buf, &e), 7);
  CHECK(memcmp(buf, "\x18\x00\x02\x01\x09\x05\x64", 7) == 0);
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_COUNTER_SETF; /* f64, little-endian */
  double one = 1.0;
  memcpy(&e.value, &one, 8);
  CHECK_EQ(ppt_ev_put(buf, &e), 11);
  CHECK(memcmp(buf + 3, "\x00\x00\x00\x00\x00\x00\xf0\x3f", 8) == 0);
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_ZONE; /* site, then the duration in ticks */
  e.delta = 2;          /* zigzag 4 */
  e.loc = 1;
  e.value = 300; /* two bytes */
  CHECK_EQ(ppt_ev_put(buf, &e), 5);
  CHECK(memcmp(buf, "\x1c\x04\x01\xac\x02", 5) == 0);
  /* ZONES: site, n, the first duration, then gap and duration */
  memset(&e, 0, sizeof e);
  e.type = PPT_EV_ZONES;
  e.delta = 1; /* zigzag 2 */
  e.loc = 3;
  e.value = 2;
  size_t n = ppt_ev_put(buf, &e);
  n += ppt_zones_put(buf + n, 1, 0, 40);
  n += ppt_zones_put(buf + n, 0, 5, 200); /* 200: two bytes */
  CHECK_EQ(n, 8);
  CHECK(memcmp(buf, "\x1d\x02\x03\x02\x28\x05\xc8\x01", 8) == 0);
  /* a CLOCK record: uv tick, sv mono, sv real */
  ppt_clock c = {300, -1, 1};
  CHECK_EQ(ppt_clock_enc(buf, &c), 4);
  CHECK(memcmp(buf, "\xac\x02\x01\x02", 4) == 0);
}

/* A value the table bounds makes the record bad when read. */
PP_TEST(format_decoder_refuses_fields_out_of_range) {
  /* MEM_ALLOC with device 256 */
  const unsigned char mem[] = {0x19, 0x00, 0x01, 0x00, 0x00, 0x80, 0x02};
  ppt_cursor c = {mem, mem + sizeof mem, 0};
  ppt_ev e;
  CHECK_EQ(ppt_ev_get(&c, &e), -1);
  /* a type this version does not define */
  const unsigned char unknown[] = {28, 0x00, 0x01};
  c = (ppt_cursor){unknown, unknown + sizeof unknown, 0};
  CHECK_EQ(ppt_ev_get(&c, &e), -1);
  /* a KERNEL whose device passes UINT32_MAX */
  ppt_cuda_kernel k;
  memset(&k, 0, sizeof k);
  k.device = (uint64_t)UINT32_MAX + 1;
  unsigned char buf[256];
  size_t n = ppt_cuda_kernel_enc(buf, &k);
  c = (ppt_cursor){buf, buf + n, 0};
  CHECK_EQ(ppt_cuda_kernel_get(&c, &k), -1);
  /* a cut record */
  k.device = 0;
  n = ppt_cuda_kernel_enc(buf, &k);
  c = (ppt_cursor){buf, buf + n - 1, 0};
  CHECK_EQ(ppt_cuda_kernel_get(&c, &k), -1);
  c = (ppt_cursor){buf, buf + n, 0};
  CHECK_EQ(ppt_cuda_kernel_get(&c, &k), 0);
}
