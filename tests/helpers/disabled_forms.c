/* SPDX-License-Identifier: MIT */
/*
 * Compile-only check (built with PP_DISABLE, in C here and in C++ by
 * disabled_forms.cpp): the disabled GPU zone and memory pool macros take
 * the same arguments as the enabled ones and leave no unused-variable
 * warnings.
 */
#include <pipeprof.h>

void pp_disabled_forms_c(void *stream);
void pp_disabled_forms_c(void *stream) {
  static char buf[64];
  PP_GPU_ZONE_BEGIN(z, stream, "infer");
  PP_GPU_ZONE_END(z);
  PP_MEM_RESERVE("arena", 4096, 0);
  PP_MEM_ALLOC(buf, sizeof buf, "arena", 0);
  PP_MEM_FREE(buf, "arena", 0);
}
