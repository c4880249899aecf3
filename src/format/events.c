/* SPDX-License-Identifier: MIT */
/*
 * The event table of events.h as data, for code that asks about a type
 * byte at run time (tests, tools, docs).
 */
#include "events.h"

const ppt_event_info ppt_event_infos[256] = {
#define PPT__INFO(name, code, since, layout)                                   \
  [code] = {PPT_L_##layout, since, #name},
    PPT_EVENT_TABLE(PPT__INFO)
#undef PPT__INFO
};

/* enum ppt_event_type keeps its comments in pptrace.h; it must give every
 * type the number of the table. */
#define PPT__SAME(name, code, since, layout)                                   \
  _Static_assert(PPT_EV_##name == code, "PPT_EV_" #name " != table");
PPT_EVENT_TABLE(PPT__SAME)
#undef PPT__SAME
