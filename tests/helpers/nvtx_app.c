/* SPDX-License-Identifier: MIT */
/*
 * A program that uses NVTX (header-only, nvtx3) the ways real frameworks
 * do, for tests/test-nvtx.c: push/pop with ASCII, wide and registered
 * messages, attribute structs with categories and payloads, marks,
 * start/end ranges that end on another thread, domains, thread naming (by
 * pthread, by the thread itself and by another thread), and a shared
 * library (nvtx_lib.c) with NVTX state of its own. It prints the values
 * NVTX returned as "key v1 v2 ..." lines and "done" at the end; the test
 * checks them and the trace. It must run the same without any tool.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

void nvtx_lib_work(int out[4]);

static pthread_barrier_t bar;
static nvtxRangeId_t shared_id;
static pid_t named_tid;

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

static nvtxEventAttributes_t attr_ascii(const char *msg) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = msg;
  return a;
}

/* Named with pthread_setname_np; ends a range main started and starts one
 * main ends. */
static void *worker_pthread(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "pworker");
  nvtxRangePushA("in_pworker");
  nvtxRangePop();
  pthread_barrier_wait(&bar); /* 1: main started "async_req" */
  usleep(2000);
  nvtxRangeEnd(shared_id);
  shared_id = nvtxRangeStartW(L"async_w");
  pthread_barrier_wait(&bar); /* 2: main ends "async_w" */
  return NULL;
}

/* Names itself through NVTX. */
static void *worker_self_named(void *arg) {
  (void)arg;
  nvtxNameOsThreadA(my_tid(), "nvtx_self");
  nvtxRangePushA("in_nvtx_self");
  usleep(500);
  nvtxRangePop();
  return NULL;
}

/* Named by main through NVTX, by its Linux tid, after its first event. */
static void *worker_named_by_main(void *arg) {
  (void)arg;
  nvtxRangePushA("t3_work");
  nvtxRangePop();
  named_tid = (pid_t)my_tid();
  pthread_barrier_wait(&bar); /* 3: main names us */
  pthread_barrier_wait(&bar); /* 4: named */
  nvtxRangePushA("t3_after");
  nvtxRangePop();
  return NULL;
}

int main(void) {
  pthread_barrier_init(&bar, NULL, 2);

  /* push/pop, default domain: ASCII, wide, attributes with a category and
   * a payload */
  nvtxNameCategoryA(7, "io");
  int d0 = nvtxRangePushA("outer");
  int d1 = nvtxRangePushW(L"wide_\u00e9\u4e2d");
  nvtxEventAttributes_t a = attr_ascii("inner");
  a.category = 7;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = 42;
  int d2 = nvtxRangePushEx(&a);
  usleep(1000);
  int p2 = nvtxRangePop();
  int p1 = nvtxRangePop();
  int p0 = nvtxRangePop();
  int pe = nvtxRangePop(); /* nothing left */
  printf("push %d %d %d\n", d0, d1, d2);
  printf("pop %d %d %d %d\n", p2, p1, p0, pe);

  /* registered strings, default domain and a named one; levels are per
   * domain */
  nvtxStringHandle_t reg_def = nvtxDomainRegisterStringA(NULL, "reg_default");
  nvtxStringHandle_t reg_def2 = nvtxDomainRegisterStringA(NULL, "reg_default");
  nvtxDomainHandle_t dom = nvtxDomainCreateA("dom");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "reg_msg");
  printf("dedup %d\n", reg_def == reg_def2);
  nvtxEventAttributes_t r = attr_ascii(NULL);
  r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r.message.registered = reg_def;
  int r0 = nvtxRangePushEx(&r);
  r.message.registered = reg;
  int r1 = nvtxDomainRangePushEx(dom, &r); /* dom level 0 */
  nvtxEventAttributes_t s = attr_ascii("second");
  int r2 = nvtxDomainRangePushEx(dom, &s); /* dom level 1 */
  int r3 = nvtxRangePushA("plain_in_dom"); /* default level 1 */
  int q3 = nvtxRangePop();
  int q2 = nvtxDomainRangePop(dom);
  int q1 = nvtxDomainRangePop(dom);
  int q0 = nvtxRangePop();
  /* a wide registered string, used several times */
  nvtxStringHandle_t regw = nvtxDomainRegisterStringW(dom, L"reg_wide");
  r.message.registered = regw;
  for (int i = 0; i < 3; i++) {
    nvtxDomainRangePushEx(dom, &r);
    nvtxDomainRangePop(dom);
  }
  printf("dompush %d %d %d %d\n", r0, r1, r2, r3);
  printf("dompop %d %d %d %d\n", q3, q2, q1, q0);

  /* wide domain, domain category, wide message, float payload */
  nvtxDomainHandle_t wdom = nvtxDomainCreateW(L"wdom");
  nvtxDomainNameCategoryA(wdom, 3, "cat3");
  nvtxEventAttributes_t w = attr_ascii(NULL);
  w.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  w.message.unicode = L"wmsg";
  w.category = 3;
  w.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
  w.payload.fValue = 1.5f;
  nvtxDomainRangePushEx(wdom, &w);
  nvtxDomainRangePop(wdom);
  /* a category of the default domain named through the domain API */
  nvtxDomainNameCategoryW(NULL, 9, L"nine");
  nvtxEventAttributes_t n = attr_ascii("cat_nine");
  n.category = 9;
  nvtxRangePushEx(&n);
  nvtxRangePop();

  /* marks */
  nvtxMarkA("markA");
  nvtxMarkW(L"markW");
  nvtxEventAttributes_t m = attr_ascii("markEx");
  m.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  m.payload.dValue = 2.5;
  nvtxMarkEx(&m);
  nvtxEventAttributes_t dm = attr_ascii("dmark");
  nvtxDomainMarkEx(dom, &dm);

  /* start/end: in a domain, and across threads */
  nvtxEventAttributes_t ds = attr_ascii("dstart");
  ds.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  ds.payload.uiValue = 7;
  nvtxRangeId_t did = nvtxDomainRangeStartEx(dom, &ds);
  usleep(500);
  nvtxDomainRangeEnd(dom, did);

  pthread_t th;
  pthread_create(&th, NULL, worker_pthread, NULL);
  shared_id = nvtxRangeStartA("async_req");
  printf("start_id_nonzero %d\n", shared_id != 0);
  pthread_barrier_wait(&bar); /* 1 */
  pthread_barrier_wait(&bar); /* 2 */
  usleep(1000);
  nvtxRangeEnd(shared_id);
  pthread_join(th, NULL);

  pthread_create(&th, NULL, worker_self_named, NULL);
  pthread_join(th, NULL);

  pthread_create(&th, NULL, worker_named_by_main, NULL);
  pthread_barrier_wait(&bar); /* 3 */
  nvtxNameOsThreadA((uint32_t)named_tid, "named_by_main");
  pthread_barrier_wait(&bar); /* 4 */
  pthread_join(th, NULL);

  /* the library's NVTX calls go through its own module state */
  int lib[4];
  nvtx_lib_work(lib);
  printf("lib %d %d %d %d\n", lib[0], lib[1], lib[2], lib[3]);

  nvtxDomainDestroy(wdom);
  pthread_barrier_destroy(&bar);
  printf("done\n");
  return 0;
}
