/* SPDX-License-Identifier: MIT */
/*
 * A shared library that uses NVTX on its own, for tests/test-nvtx.c: NVTX
 * keeps separate state per module, so the injection is initialised once
 * for the program and once more for this library. nvtx_lib_work() pushes
 * "lib_outer", then "libdom::lib_inner" in its own domain, and reports the
 * levels NVTX returned in out[0..3] (push, push, pop, pop).
 */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) void nvtx_lib_work(int out[4]);

void nvtx_lib_work(int out[4]) {
  nvtxDomainHandle_t dom = nvtxDomainCreateA("libdom");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "lib_inner";
  out[0] = nvtxRangePushA("lib_outer");
  out[1] = nvtxDomainRangePushEx(dom, &a);
  out[2] = nvtxDomainRangePop(dom);
  out[3] = nvtxRangePop();
}
