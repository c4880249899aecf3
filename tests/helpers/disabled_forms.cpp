// SPDX-License-Identifier: MIT
// The C++ side of disabled_forms.c (built with PP_DISABLE).
#include "disabled_forms.c"
