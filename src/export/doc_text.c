/* SPDX-License-Identifier: MIT */
/*
 * Results tables as text (doc_text.h).
 */
#include "export/doc_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/text_cells.h"
#include "internal.h"

#define NAME_CAP 40 /* display cells of a name, by default */
#define CELL 256
#define LONG_CELL 2048

/* s as the report prints a program's text: control bytes as '?', cut at
 * max cells with "..." (0: whole). */
static void clean(char *dst, size_t len, const char *s, int max) {
  pp_text_clean(dst, len, s, max);
}

/* Print s in width cells, padded on the left (right) or the right. */
static void put_cell(FILE *out, const char *s, int width, int right) {
  int pad = width - pp_text_cols(s);
  if (right)
    for (int i = 0; i < pad; i++)
      fputc(' ', out);
  fputs(s, out);
  if (!right)
    for (int i = 0; i < pad; i++)
      fputc(' ', out);
}

/* Columns [c0, c1) are one group: adjacent, shown, one label. */
static size_t group_end(const pp_table *t, size_t c0, unsigned want_detail) {
  size_t c1 = c0 + 1;
  while (c1 < t->ncols && !(t->cols[c1].flags & PP_COL_JSON_ONLY) &&
         (t->cols[c1].flags & PP_COL_DETAIL) == want_detail &&
         strcmp(t->cols[c1].label, t->cols[c0].label) == 0)
    c1++;
  return c1;
}

static int shown(const pp_col *c, unsigned detail) {
  return !(c->flags & PP_COL_JSON_ONLY) && (c->flags & PP_COL_DETAIL) == detail;
}

/* The text of row r's group [c0, c1): its cells joined by " / "; 0 when
 * it says nothing (every cell a zero, or no value and no text for it). */
static int group_text(const pp_table *t, size_t r, size_t c0, size_t c1,
                      char *out, size_t len, int name_max) {
  int any = 0;
  const char *why = NULL; /* said once, after the group's values */
  out[0] = '\0';
  /* every cell unavailable for one reason: said once */
  int one = 1;
  for (size_t c = c0; c < c1 && one; c++) {
    const pp_cell *v = pp_table_cell(t, r, c);
    one = v->kind == PP_CELL_UNAVAILABLE &&
          strcmp(v->text, pp_table_cell(t, r, c0)->text) == 0;
  }
  if (one && c1 > c0 + 1)
    c1 = c0 + 1;
  for (size_t c = c0; c < c1; c++) {
    char b[LONG_CELL], safe[LONG_CELL];
    const pp_cell *v = pp_table_cell(t, r, c);
    any |= (v->kind == PP_CELL_NUM && v->num != 0) ||
           v->kind == PP_CELL_TEXT || v->kind == PP_CELL_UNAVAILABLE ||
           (v->kind == PP_CELL_NONE && t->cols[c].none);
    if (v->kind == PP_CELL_UNAVAILABLE) {
      snprintf(b, sizeof b, "unavailable");
      if (!why)
        why = v->text;
    } else {
      pp_cell_format(&t->cols[c], v, b, sizeof b);
    }
    clean(safe, sizeof safe, b, t->cols[c].unit == PP_VALUE_TEXT ? name_max : 0);
    size_t n = strlen(out);
    snprintf(out + n, len - n, "%s%s", c > c0 ? " / " : "", safe);
  }
  if (why) {
    char safe[LONG_CELL];
    clean(safe, sizeof safe, why, 0);
    size_t n = strlen(out);
    snprintf(out + n, len - n, " (%s)", safe);
  }
  return any;
}

/* The first group of row r from which every shown cell to the end of the
 * row is unavailable for one reason, when that is two groups or more (a
 * zone SLO whose zone was never recorded): the row says it once there,
 * "unavailable: why", instead of in each cell. ng when none. */
static size_t unavailable_from(const pp_table *t, size_t r, const size_t *g0,
                               const size_t *g1, size_t ng) {
  const char *why = NULL;
  size_t k = ng;
  while (k > 1) {
    int all = 1;
    for (size_t c = g0[k - 1]; c < g1[k - 1] && all; c++) {
      const pp_cell *v = pp_table_cell(t, r, c);
      all = v->kind == PP_CELL_UNAVAILABLE && (!why || !strcmp(why, v->text));
      if (all)
        why = v->text;
    }
    if (!all)
      break;
    k--;
  }
  return ng - k >= 2 ? k : ng;
}

static void lines(FILE *out, const char *prefix, const char *const *list,
                  size_t n) {
  for (size_t i = 0; i < n; i++) {
    char s[1024];
    clean(s, sizeof s, list[i], 0);
    fprintf(out, "%s: %s\n", prefix, s);
  }
}

/* The table's warnings, then its remarks, each on a line of its own. */
static void remarks(FILE *out, const pp_table *t) {
  lines(out, "warning", t->warnings, t->nwarnings);
  lines(out, "note", t->remarks, t->nremarks);
}

/* A table of facts: "  label:  value (note)" lines, the values aligned;
 * no heading when its title is empty. */
static void facts(FILE *out, const pp_table *t) {
  long kl = pp_table_col(t, "label"), kv = pp_table_col(t, "value");
  if (kl < 0 || kv < 0 || !pp_table_rows_shown(t))
    return;
  if (*t->title) {
    fprintf(out, "\n%s", t->title);
    if (t->note)
      fprintf(out, " (%s)", t->note);
    fputc('\n', out);
  }
  int width = 0;
  for (size_t r = 0; r < t->nrows; r++) {
    const pp_cell *l = pp_table_cell(t, r, (size_t)kl);
    if (!pp_table_row_shown(t, r))
      continue;
    int n = l->kind == PP_CELL_TEXT ? pp_text_cols(l->text) : 0;
    width = n > width ? n : width;
  }
  /* values from column 25 at least, as the report's other "label: value"
   * lines */
  width = width > 28 ? 28 : width < 21 ? 21 : width;
  if (t->flush) /* a header: "events:         12" */
    width = 14;
  for (size_t r = 0; r < t->nrows; r++) {
    const pp_cell *l = pp_table_cell(t, r, (size_t)kl);
    if (!pp_table_row_shown(t, r))
      continue;
    char label[CELL], value[LONG_CELL], b[LONG_CELL];
    clean(label, sizeof label, l->kind == PP_CELL_TEXT ? l->text : "", 28);
    strncat(label, ":", sizeof label - strlen(label) - 1);
    clean(value, sizeof value,
          pp_cell_format(&t->cols[kv], pp_table_cell(t, r, (size_t)kv), b,
                         sizeof b),
          0);
    if (!t->flush)
      fputs("  ", out);
    put_cell(out, label, width + 2, 0);
    fputs(value, out);
    if (t->notes[r]) {
      char n[1024];
      clean(n, sizeof n, t->notes[r], 0);
      fprintf(out, " (%s)", n);
    }
    fputc('\n', out);
  }
  remarks(out, t);
}

/* Row r's cells into cells, group g at off[g] (room to off[g + 1]): its
 * text, or from the group where the row is unavailable, "unavailable:
 * WHY" once and nothing after. Returns that group (ng when none). */
static size_t lay_out_row(const pp_table *t, size_t r, const size_t *g0,
                          const size_t *g1, size_t ng, const size_t *off,
                          int name_cap, char *cells) {
  size_t span = unavailable_from(t, r, g0, g1, ng);
  for (size_t g = 0; g < ng; g++) {
    char *s = cells + off[g];
    if (g > span) {
      *s = '\0';
      continue;
    }
    if (g == span) { /* said once, past the columns' widths */
      char why[CELL];
      clean(why, sizeof why, pp_table_cell(t, r, g0[g])->text, 0);
      snprintf(s, off[g + 1] - off[g], "unavailable: %s", why);
      continue;
    }
    group_text(t, r, g0[g], g1[g], s, off[g + 1] - off[g],
               g == 0 ? name_cap : 0);
  }
  return span;
}

void pp_doc_text_table(FILE *out, const pp_table *t, int name_cap) {
  pp_doc_text_table_n(out, t, name_cap, SIZE_MAX);
}

void pp_doc_text_table_n(FILE *out, const pp_table *t, int name_cap,
                         size_t max_rows) {
  if (t && t->why) {
    char s[512];
    clean(s, sizeof s, t->why, 0);
    fprintf(out, "\n%s\nunavailable: %s\n", t->title, s);
    return;
  }
  if (t && t->facts) {
    facts(out, t);
    return;
  }
  size_t shown_rows = pp_table_rows_shown(t);
  if (!t || (!shown_rows && !t->empty))
    return;
  fprintf(out, "\n%s", t->title);
  if (t->note)
    fprintf(out, " (%s)", t->note);
  fputc('\n', out);
  if (!shown_rows) {
    fprintf(out, "%s\n", t->empty);
    remarks(out, t);
    return;
  }
  if (name_cap <= 0)
    name_cap = NAME_CAP;
  /* the groups of the row line and their widths */
  size_t g0[64], g1[64], ng = 0;
  int width[64];
  for (size_t c = 0; c < t->ncols && ng < 64;) {
    if (!shown(&t->cols[c], 0)) {
      c++;
      continue;
    }
    g0[ng] = c;
    g1[ng] = group_end(t, c, 0);
    width[ng] = pp_text_cols(t->cols[c].label);
    c = g1[ng];
    /* a group after the first that no shown row has anything in (no
     * value, no reason, no text for no value: "host", "unbounded") says
     * nothing: left out */
    int any = ng == 0;
    for (size_t r = 0; r < t->nrows && !any; r++)
      for (size_t k = g0[ng]; k < g1[ng] && !any; k++)
        any = pp_table_row_shown(t, r) &&
              (pp_table_cell(t, r, k)->kind != PP_CELL_NONE ||
               (t->cols[k].none && *t->cols[k].none));
    ng += any;
  }
  /* each row's cells: CELL bytes a group, LONG_CELL for a group of words
   * after the first (a recommendation, its evidence), so that neither is
   * cut */
  size_t off[65], row_size = 0;
  for (size_t g = 0; g < ng; g++) {
    off[g] = row_size;
    row_size += g > 0 && t->cols[g0[g]].unit == PP_VALUE_TEXT ? LONG_CELL
                                                              : CELL;
  }
  off[ng] = row_size;
  /* one row's cells at a time, laid out twice (for the columns' widths,
   * then to print): a table of 200,000 rows takes no memory per row */
  char *cells = malloc(row_size);
  if (!cells)
    return;
  size_t seen = 0; /* the shown rows so far: the first max_rows print */
  for (size_t r = 0; r < t->nrows && seen < max_rows; r++) {
    if (!pp_table_row_shown(t, r))
      continue;
    seen++;
    size_t span = lay_out_row(t, r, g0, g1, ng, off, name_cap, cells);
    for (size_t g = 0; g < ng && g < span; g++)
      if (pp_text_cols(cells + off[g]) > width[g])
        width[g] = pp_text_cols(cells + off[g]);
  }
  /* numbers right-aligned, names and words left (the first group, and
   * text columns), with no padding after the last group */
  int right[64];
  for (size_t g = 0; g < ng; g++)
    right[g] = g > 0 && t->cols[g0[g]].unit != PP_VALUE_TEXT;
  for (size_t g = 0; g < ng; g++) {
    fputs(g ? "  " : "", out);
    put_cell(out, t->cols[g0[g]].label, g + 1 < ng || right[g] ? width[g] : 0,
             right[g]);
  }
  fputc('\n', out);
  size_t printed = 0;
  uint32_t group = 0; /* the group of the row printed last */
  for (size_t r = 0; r < t->nrows; r++) {
    if (!pp_table_row_shown(t, r))
      continue;
    if (printed++ >= max_rows)
      break;
    size_t span = lay_out_row(t, r, g0, g1, ng, off, name_cap, cells);
    size_t end = ng; /* no trailing blanks: up to the last non-empty cell */
    while (end > 1 && !cells[off[end - 1]])
      end--;
    /* a group column says its value on the group's first row only */
    uint32_t rg = t->row_info[r].group;
    int same = rg && rg == group;
    group = rg;
    for (size_t g = 0; g < end; g++) {
      fputs(g ? "  " : "", out);
      if (same && (t->cols[g0[g]].flags & PP_COL_GROUP)) {
        put_cell(out, "", g + 1 < end || right[g] ? width[g] : 0, right[g]);
        continue;
      }
      put_cell(out, cells + off[g],
               g == span ? 0 : g + 1 < end || right[g] ? width[g] : 0,
               g == span ? 0 : right[g]);
    }
    fputc('\n', out);
    /* the row's detail groups, then its notes */
    int first = 1;
    for (size_t c = 0; c < t->ncols;) {
      if (!shown(&t->cols[c], PP_COL_DETAIL)) {
        c++;
        continue;
      }
      size_t e = group_end(t, c, PP_COL_DETAIL);
      char s[LONG_CELL];
      if (group_text(t, r, c, e, s, sizeof s, 0)) {
        const char *label = t->cols[c].label;
        fprintf(out, "%s%s%s%s", first ? "  " : "; ", label,
                strchr(label, ':') ? " " : ": ", s);
        first = 0;
      }
      c = e;
    }
    if (!first)
      fputc('\n', out);
    if (t->notes[r]) {
      char s[1024];
      clean(s, sizeof s, t->notes[r], 0);
      fprintf(out, "  note: %s\n", s);
    }
  }
  free(cells);
  if (shown_rows > max_rows)
    fprintf(out, "(%zu more rows: pipeprof export --format json)\n",
            shown_rows - max_rows);
  remarks(out, t);
}
