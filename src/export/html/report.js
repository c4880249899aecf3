/* SPDX-License-Identifier: MIT */
/*
 * The pipeprof HTML report's renderer (src/export/html.c inlines it after
 * the data). It reads the summary JSON embedded in the page (the
 * application/json script element with id "pp-data"; schema
 * pipeprof.summary, docs/formats/summary-json.md) and draws it with plain DOM calls, no
 * framework and nothing loaded from elsewhere.
 *
 * Names come from the profiled program and are untrusted: data reaches the
 * page only as text nodes (textContent) and attribute values (setAttribute),
 * never as markup.
 *
 * Sections the page knows have their own layout; every other top-level
 * member (and what a known section holds beyond the fields listed in the
 * spec) goes through the generic renderer, so sections added to the summary
 * later appear without a change here. Each section is drawn in its own
 * try/catch. At the end the body gets data-rendered="ok" and a hidden
 * element with id "pp-render-ok" when every section succeeded, or
 * data-rendered="error" and an element with id "pp-render-error" holding
 * the errors (the browser tests look for these).
 */
(function () {
  'use strict';

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var SCHEMA_VERSION = 1;
  /* Top-level members with a layout of their own (the header shows the
   * scalars and dropped/overhead/reader). */
  var KNOWN = [
    'schema', 'schema_version', 'generator', 'process', 'mode', 'clock',
    't0_ns', 't1_ns', 'wall_ns', 'events', 'dropped', 'unclosed_zones',
    'unmatched_zone_ends', 'zones', 'top_self', 'threads', 'frames',
    'counters', 'requests', 'overhead', 'reader', 'system', 'timeline',
    'source', 'breakdown', 'providers', 'shapes', 'merged_profiles'
  ];
  var MAX_SHAPE_OPS = 32;
  var SAMPLED_PREFIXES = ['sys.', 'proc.', 'perf.', 'power.', 'energy.',
                          'gpu.'];
  var MAX_GENERIC_ROWS = 500;
  var MAX_GENERIC_DEPTH = 6;

  var errors = [];
  var nav = null;

  /* ---- DOM helpers ----------------------------------------------------- */

  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function add(parent, child) {
    parent.appendChild(child);
    return child;
  }

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (k) {
      e.setAttribute(k, String(attrs[k]));
    });
    return e;
  }

  function has(o, k) {
    return o !== null && typeof o === 'object' &&
      Object.prototype.hasOwnProperty.call(o, k);
  }

  function isScalar(v) {
    return v === null || typeof v !== 'object';
  }

  function isRecord(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  }

  /* A non-empty object whose values are all scalars. */
  function isFlat(v) {
    if (!isRecord(v)) return false;
    var ks = Object.keys(v);
    return ks.length > 0 && ks.every(function (k) { return isScalar(v[k]); });
  }

  /* ---- formatting ------------------------------------------------------ */

  function isNum(v) {
    return typeof v === 'number' && isFinite(v);
  }

  /* Adaptive unit, three significant digits, as the text report:
   * "850 ns", "12.3 us", "612 ms", "1.50 s". */
  function fmtNs(ns) {
    if (!isNum(ns)) return '\u2013';
    var units = [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']];
    var a = Math.abs(ns), u = 0;
    while (u + 1 < units.length && a >= units[u + 1][0]) u++;
    var v = a / units[u][0];
    if (v >= 999.5 && u + 1 < units.length) {
      u++;
      v = a / units[u][0];
    }
    var d = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
    if (u === 0 && v === Math.floor(v)) d = 0;
    return (ns < 0 ? '-' : '') + v.toFixed(d) + ' ' + units[u][1];
  }

  function fmtBytes(b) {
    if (!isNum(b)) return '\u2013';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    var a = Math.abs(b), u = 0;
    while (u + 1 < units.length && a >= 1024) {
      a /= 1024;
      u++;
    }
    var s = u === 0 ? String(Math.round(a))
      : a.toFixed(a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2);
    return (b < 0 ? '-' : '') + s + ' ' + units[u];
  }

  function fmtPct(p) {
    if (!isNum(p)) return '\u2013';
    return p.toFixed(Math.abs(p) >= 9.995 ? 1 : 2) + '%';
  }

  function fmtNum(v) {
    if (!isNum(v)) return '\u2013';
    if (Number.isInteger(v)) return String(v);
    if (Math.abs(v) >= 1e4) return v.toFixed(0);
    var s = v.toPrecision(4);
    if (s.indexOf('e') < 0 && s.indexOf('.') >= 0)
      s = s.replace(/0+$/, '').replace(/\.$/, '');
    return s;
  }

  /* The unit a member's name announces (docs/formats/summary-json.md:
   * _ns nanoseconds, _s seconds, _bytes and _bytes_total, _pct percent,
   * _per_s rates). */
  function unitOf(key) {
    key = String(key);
    if (/_per_s$/.test(key)) return 'rate';
    if (/(^|_)ns$/.test(key)) return 'ns';
    if (/(^|_)s$/.test(key) || key === 'seconds') return 's';
    if (/(^|_)bytes(_total)?$/.test(key)) return 'bytes';
    if (/(^|_)pct$/.test(key)) return 'pct';
    if (/^(count|samples|frames|events|zones|dropped|tid|pid|line)$/.test(key))
      return 'int';
    return '';
  }

  function fmtBy(unit, v) {
    if (v === null || v === undefined) return '\u2013';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'string') return v;
    if (typeof v !== 'number') return JSON.stringify(v);
    switch (unit) {
      case 'ns': return fmtNs(v);
      case 's': return fmtNs(v * 1e9);
      case 'bytes': return fmtBytes(v);
      case 'pct': return fmtPct(v);
      case 'rate': return fmtNum(v) + '/s';
      default: return fmtNum(v);
    }
  }

  function pretty(key) {
    return String(key).replace(/_/g, ' ');
  }

  /* Golden-angle hues: neighbouring zone indexes get distant colours. */
  function zoneColor(i) {
    return 'hsl(' + ((i * 137.508) % 360).toFixed(1) + ', 58%, 56%)';
  }

  /* ---- page structure -------------------------------------------------- */

  function section(app, id, title) {
    var s = add(app, h('section', 'pp-section'));
    s.id = id;
    add(s, h('h2', null, title));
    if (nav) {
      var a = add(nav, h('a', null, title));
      a.setAttribute('href', '#' + id);
    }
    return s;
  }

  function unavailable(parent, reason) {
    return add(parent, h('p', 'pp-unavail', 'unavailable: ' +
      (reason === undefined || reason === null || reason === ''
        ? 'no reason given' : String(reason))));
  }

  function note(parent, text) {
    return add(parent, h('p', 'pp-dim', text));
  }

  function warn(parent, text) {
    return add(parent, h('p', 'pp-warn', text));
  }

  function fact(grid, label, value, title) {
    var d = add(grid, h('div', 'pp-fact'));
    add(d, h('div', 'pp-fact-k', label));
    var v = add(d, h('div', 'pp-fact-v', value));
    if (title) d.setAttribute('title', title);
    return v;
  }

  /* ---- sortable tables ------------------------------------------------- *
   * cols: [{key, label, num, text(row), value(row), bar(row) -> 0..1,
   *         bar2(row), cls, title}]; rows: data objects. Numeric columns
   * sort descending first. Each cell carries class pp-n (numbers) or pp-t
   * (text) and data-k = the column key. */
  function table(parent, cols, rows, opts) {
    opts = opts || {};
    var t = add(parent, h('table', 'pp-table'));
    var thead = add(t, h('thead'));
    var hr = add(thead, h('tr'));
    var tbody = add(t, h('tbody'));
    var items = rows.map(function (r, i) {
      var tr = h('tr');
      if (opts.rowTitle) {
        var rt = opts.rowTitle(r);
        if (rt) tr.setAttribute('title', rt);
      }
      cols.forEach(function (c) {
        var td = add(tr, h('td', c.cls || (c.num ? 'pp-n' : 'pp-t')));
        td.setAttribute('data-k', c.key);
        var text = c.text ? c.text(r) : fmtBy(unitOf(c.key), r[c.key]);
        var b = c.bar ? c.bar(r) : null;
        if (isNum(b)) {
          td.classList.add('pp-barcell');
          if (c.bar2) {
            var b2 = add(td, h('span', 'pp-bar pp-bar2'));
            b2.style.width = (Math.max(0, Math.min(1, c.bar2(r) || 0)) *
              100).toFixed(2) + '%';
          }
          var bar = add(td, h('span', 'pp-bar'));
          bar.style.width = (Math.max(0, Math.min(1, b)) * 100).toFixed(2) +
            '%';
          add(td, h('span', 'pp-val', text));
        } else {
          td.textContent = text;
        }
      });
      return {row: r, tr: tr, order: i};
    });
    function fill() {
      items.forEach(function (it) { tbody.appendChild(it.tr); });
    }
    var current = null, desc = true;
    function sortBy(c, th, toggle) {
      if (current === c && toggle) desc = !desc;
      else desc = c.num ? true : false;
      current = c;
      var val = c.value || function (r) { return r[c.key]; };
      items.sort(function (a, b) {
        var x = val(a.row), y = val(b.row), d = 0;
        var xn = x === null || x === undefined, yn = y === null ||
          y === undefined;
        if (xn || yn) return xn === yn ? a.order - b.order : xn ? 1 : -1;
        if (typeof x === 'number' && typeof y === 'number') d = x - y;
        else d = String(x).localeCompare(String(y));
        if (desc) d = -d;
        return d !== 0 ? d : a.order - b.order;
      });
      Array.prototype.forEach.call(hr.children, function (e) {
        e.removeAttribute('aria-sort');
      });
      th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
      fill();
    }
    cols.forEach(function (c) {
      var th = add(hr, h('th', c.num ? 'pp-n' : null, c.label || c.key));
      if (c.title) th.setAttribute('title', c.title);
      if (opts.sortable === false) return;
      th.classList.add('pp-sortable');
      th.setAttribute('tabindex', '0');
      th.addEventListener('click', function () { sortBy(c, th, true); });
      th.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          sortBy(c, th, true);
        }
      });
      if (opts.sorted === c.key) {
        th.setAttribute('aria-sort', c.num ? 'descending' : 'ascending');
        current = c;
        desc = !!c.num;
      }
    });
    fill();
    return {table: t, items: items};
  }

  /* ---- generic rendering ------------------------------------------------
   * Any JSON value as tables: scalars as key/value rows, objects of scalars
   * (like {mean, min, max, last, samples}) as one table with a row each,
   * arrays of such objects as a table with a column per key, deeper values
   * as sub-headings. "unavailable" and {"available": false, "reason"} are
   * shown as "unavailable: <reason>". */

  var COUNT_COLS = /^(count|samples|frames|events|zones|dropped|cpu|node|size|batches|index|gpu|tid|pid)$/;

  function cellText(rowKey, col, v) {
    if (col === 'unavailable' && typeof v === 'string')
      return 'unavailable: ' + v;
    var u = unitOf(col);
    if (u === '' && !COUNT_COLS.test(col) && rowKey !== null) u = unitOf(rowKey);
    return fmtBy(u, v);
  }

  function unavailableList(parent, v) {
    if (typeof v === 'string') {
      unavailable(parent, v);
      return;
    }
    if (!isRecord(v)) {
      unavailable(parent, JSON.stringify(v));
      return;
    }
    var keys = Object.keys(v);
    if (!keys.length) return;
    var ul = add(parent, h('ul', 'pp-unavail-list'));
    keys.forEach(function (k) {
      var li = add(ul, h('li', 'pp-unavail'));
      li.textContent = pretty(k) + ': unavailable: ' +
        (typeof v[k] === 'string' ? v[k] : JSON.stringify(v[k]));
    });
  }

  function kvTable(parent, obj, keys) {
    return table(parent, [
      {key: 'key', label: 'field'},
      {key: 'value', label: 'value', cls: 'pp-t',
       text: function (r) { return cellText(null, r.key, r.value); }}
    ], keys.map(function (k) { return {key: k, value: obj[k]}; }),
    {sortable: false});
  }

  /* Rows are members of obj that are flat objects; columns the union of
   * their keys. */
  function recordTable(parent, obj, keys) {
    var cols = [], seen = {};
    keys.forEach(function (k) {
      Object.keys(obj[k]).forEach(function (c) {
        if (!seen[c]) {
          seen[c] = true;
          cols.push(c);
        }
      });
    });
    var tcols = [{key: '(name)', label: 'name',
                  text: function (r) { return r.name; },
                  value: function (r) { return r.name; }}];
    cols.forEach(function (c) {
      tcols.push({key: c, label: c, num: true,
        text: function (r) { return cellText(r.name, c, r.rec[c]); },
        value: function (r) {
          var v = r.rec[c];
          return v === undefined ? null : v;
        }});
    });
    return table(parent, tcols, keys.map(function (k) {
      return {name: k, rec: obj[k]};
    }));
  }

  function arrayTable(parent, arr) {
    var cols = [], seen = {};
    arr.forEach(function (o) {
      Object.keys(o).forEach(function (c) {
        if (!seen[c]) {
          seen[c] = true;
          cols.push(c);
        }
      });
    });
    return table(parent, cols.map(function (c) {
      var numeric = arr.some(function (o) { return typeof o[c] === 'number'; });
      return {key: c, label: c, num: numeric,
        text: function (r) { return cellText(null, c, r[c]); },
        value: function (r) { return r[c] === undefined ? null : r[c]; }};
    }), arr);
  }

  function renderArray(parent, key, arr, depth) {
    if (!arr.length) {
      note(parent, 'none');
      return;
    }
    var shown = arr.length > MAX_GENERIC_ROWS ? arr.slice(0, MAX_GENERIC_ROWS)
      : arr;
    if (shown.every(isScalar)) {
      add(parent, h('p', 'pp-mono', shown.map(function (v) {
        return fmtBy(unitOf(key), v);
      }).join(', ')));
    } else if (shown.every(isFlat)) {
      arrayTable(parent, shown);
    } else {
      shown.forEach(function (v, i) {
        var sub = add(parent, h('div', 'pp-sub'));
        add(sub, h('h4', null, pretty(key) + ' #' + (i + 1)));
        renderValue(sub, key, v, depth + 1);
      });
    }
    if (shown.length < arr.length)
      note(parent, (arr.length - shown.length) + ' more entries not shown');
  }

  function renderObject(parent, obj, depth, skip) {
    if (obj.available === false) {
      unavailable(parent, obj.reason);
      return;
    }
    var scalars = [], records = [], rest = [], unav = null;
    Object.keys(obj).forEach(function (k) {
      if (skip && skip.indexOf(k) >= 0) return;
      var v = obj[k];
      if (k === 'unavailable') unav = v;
      else if (k === 'available' && v === true) return;
      else if (isScalar(v)) scalars.push(k);
      else if (isFlat(v)) records.push(k);
      else rest.push(k);
    });
    if (scalars.length) kvTable(parent, obj, scalars);
    if (records.length) recordTable(parent, obj, records);
    rest.forEach(function (k) {
      var sub = add(parent, h('div', 'pp-sub'));
      sub.setAttribute('data-key', k);
      add(sub, h('h4', null, pretty(k)));
      renderValue(sub, k, obj[k], depth + 1);
    });
    if (unav !== null) unavailableList(parent, unav);
  }

  function renderValue(parent, key, v, depth) {
    if (depth > MAX_GENERIC_DEPTH) {
      add(parent, h('pre', null, JSON.stringify(v, null, 1)));
    } else if (isScalar(v)) {
      add(parent, h('p', null, fmtBy(unitOf(key), v)));
    } else if (Array.isArray(v)) {
      renderArray(parent, key, v, depth);
    } else {
      renderObject(parent, v, depth);
    }
  }

  /* ---- sections -------------------------------------------------------- */

  function renderHeader(app, d) {
    var proc = d.process || {};
    var name = typeof proc.name === 'string' && proc.name ? proc.name
      : '(unnamed process)';
    document.title = 'pipeprof: ' + name;
    add(app, h('h1', null, 'pipeprof report: ' + name));
    if (typeof d.schema_version === 'number' &&
        d.schema_version > SCHEMA_VERSION)
      warn(app, 'this summary has schema version ' + d.schema_version +
        ', newer than this page knows (' + SCHEMA_VERSION +
        '): some figures may be shown generically or not at all');
    var grid = add(app, h('div', 'pp-facts'));
    fact(grid, 'program', name);
    if (has(proc, 'pid')) fact(grid, 'pid', String(proc.pid));
    fact(grid, 'mode', d.mode || 'unknown');
    if (typeof d.source === 'string' && d.source !== 'pipeprof')
      fact(grid, 'imported from', d.source);
    (Array.isArray(d.merged_profiles) ? d.merged_profiles : [])
      .forEach(function (m) {
        if (isRecord(m))
          fact(grid, 'merged with', String(m.file) + ' (' +
               String(m.source) + ')', 'aligned by ' + String(m.aligned_by));
      });
    if (isRecord(d.providers))
      fact(grid, 'provider transitions', fmtNum(d.providers.transitions) +
        ' (' + fmtNum(d.providers.copies) + ' copies, ' +
        fmtNs(d.providers.copy_ns) + ')');
    fact(grid, 'wall time', fmtNs(d.wall_ns));
    fact(grid, 'events', fmtNum(d.events));
    if (Array.isArray(d.threads)) fact(grid, 'threads', d.threads.length);
    var dropped = d.dropped && isNum(d.dropped.total) ? d.dropped.total : null;
    fact(grid, 'dropped events', dropped === null ? '\u2013' : dropped);
    var o = d.overhead;
    if (isRecord(o)) {
      if (isNum(o.run_profiler_cpu_ns) &&
          isNum(o.run_profiler_pct_of_tree_cpu))
        /* pipeprof run: pipeprof's own CPU over the profiled tree's */
        fact(grid, 'profiler overhead',
          fmtPct(isNum(o.run_total_pct_of_tree_cpu)
            ? o.run_total_pct_of_tree_cpu : o.run_profiler_pct_of_tree_cpu) +
            ' of the profiled programs\u2019 CPU',
          'pipeprof\u2019s own CPU ' + fmtNs(o.run_profiler_cpu_ns) +
            ' / the programs\u2019 CPU ' + fmtNs(o.run_tree_cpu_ns) +
            (isNum(o.run_in_program_ns) ? '; inside the programs ' +
              fmtNs(o.run_in_program_ns) : ''));
      else if (has(o, 'unavailable'))
        fact(grid, 'profiler overhead', 'unavailable: ' + o.unavailable);
      else if (isNum(o.total_ns))
        fact(grid, 'profiler overhead',
          fmtNs(o.total_ns) + (isNum(o.total_pct_of_process_cpu)
            ? ' (' + fmtPct(o.total_pct_of_process_cpu) + ' of process CPU)'
            : ''),
          'writer thread ' + fmtNs(o.writer_cpu_ns) +
            (isNum(o.sampler_cpu_ns) ? ', sampler thread ' +
              fmtNs(o.sampler_cpu_ns) : '') + ' measured; recording ' +
            fmtNs(o.estimated_ns) + ' estimated');
      else
        fact(grid, 'profiler overhead (estimate)',
          fmtNs(o.estimated_ns) + (isNum(o.estimated_pct)
            ? ' (' + fmtPct(o.estimated_pct) + ' of busy time)' : ''),
          isNum(o.event_cost_ns) ? 'events \u00d7 ' + fmtNs(o.event_cost_ns) +
            ' per event' : null);
    }
    if (d.generator)
      fact(grid, 'generator', (d.generator.name || '') + ' ' +
        (d.generator.version || ''));

    if (dropped) {
      var by = (d.dropped.by_thread || []).filter(function (x) {
        return x.dropped > 0;
      }).map(function (x) { return 'tid ' + x.tid + ': ' + x.dropped; });
      warn(app, dropped + ' events were dropped (thread buffers full)' +
        (by.length ? ': ' + by.join(', ') : ''));
    }
    var r = d.reader;
    if (isRecord(r)) {
      if (r.chunks_bad > 0 || r.bytes_skipped > 0)
        warn(app, 'trace damaged: ' + r.chunks_bad + ' bad chunks, ' +
          r.bytes_skipped + ' bytes skipped (intact chunks were recovered)');
      if (r.events_bad > 0)
        warn(app, r.events_bad + ' undecodable events ignored');
      if (r.truncated) warn(app, 'trace truncated inside a chunk');
      if (typeof r.write_error === 'string')
        warn(app, (typeof r.events_lost === 'number' ?
          r.events_lost + ' events lost: ' : '') + r.write_error);
      else if (r.clean_end === false)
        warn(app, 'trace ended without END chunk (process killed?)');
      if (typeof r.events_kept === 'number' &&
          typeof r.events_read === 'number' && r.events_kept < r.events_read)
        warn(app, 'the statistics count all ' + r.events_read +
          ' events; the timeline and flows cover the first ' +
          fmtNs(r.details_complete_until_ns) + ' (' + r.events_kept +
          ' events, every thread; pipeprof export --details N keeps more)');
      if (r.events_late > 0)
        warn(app, r.events_late + ' events reached the figures out of ' +
          'time order (the reader\'s reorder buffer was full): frame times ' +
          'and counters written from several threads may be off by them');
    }
    if (d.unclosed_zones > 0)
      warn(app, d.unclosed_zones + ' zones lost their end (closed at the ' +
        'end of the trace or of an enclosing zone)');
    if (d.unmatched_zone_ends > 0)
      warn(app, d.unmatched_zone_ends + ' zone ends had no begin (ignored)');
  }

  /* "function \u00b7 file:line"; the cell shows the file's last path
   * component, the row's tooltip the whole path. */
  function siteText(z, full) {
    var s = z.function || '';
    var f = String(z.file || '');
    if (!full) f = f.replace(/^.*\//, '');
    if (f) s += (s ? ' \u00b7 ' : '') + f + (z.line ? ':' + z.line : '');
    return s;
  }

  function renderZones(app, d) {
    var s = section(app, 'pp-zones', 'zones');
    var zones = Array.isArray(d.zones) ? d.zones : [];
    if (!zones.length) {
      note(s, 'no zones recorded');
      return;
    }
    var maxTotal = 0;
    zones.forEach(function (z) { maxTotal = Math.max(maxTotal, z.total_ns || 0); });
    var frac = function (k) {
      return function (z) { return maxTotal > 0 ? (z[k] || 0) / maxTotal : 0; };
    };
    note(s, zones.length + ' zone sites; bars: total (dark) and self (light) ' +
      'time relative to the largest total. Click a column to sort. % wall ' +
      'can exceed 100% when several threads run a zone at once.');
    var filt = add(s, h('div', 'pp-filter'));
    var input = add(filt, h('input'));
    input.setAttribute('type', 'search');
    input.setAttribute('placeholder', 'filter zones by name');
    input.setAttribute('aria-label', 'filter zones by name');
    var ns = function (k, label) {
      return {key: k, label: label, num: true,
              text: function (z) { return fmtNs(z[k]); }};
    };
    var t = table(s, [
      {key: 'name', label: 'zone'},
      {key: 'site', label: 'site', cls: 'pp-site',
       text: function (z) { return siteText(z, false); },
       value: function (z) { return siteText(z, true); }},
      {key: 'count', label: 'count', num: true,
       text: function (z) { return String(z.count); }},
      {key: 'total_ns', label: 'total', num: true,
       text: function (z) { return fmtNs(z.total_ns); },
       bar: frac('total_ns'), bar2: frac('self_ns')},
      {key: 'self_ns', label: 'self', num: true,
       text: function (z) { return fmtNs(z.self_ns); }},
      ns('mean_ns', 'mean'), ns('p50_ns', 'p50'), ns('p90_ns', 'p90'),
      ns('p99_ns', 'p99'), ns('p999_ns', 'p99.9'), ns('max_ns', 'max'),
      {key: 'wall_pct', label: '% wall', num: true,
       text: function (z) { return fmtPct(z.wall_pct); }}
    ], zones, {sorted: 'total_ns', rowTitle: function (z) {
      return siteText(z, true) || null;
    }});
    t.table.id = 'pp-zone-table';
    input.addEventListener('input', function () {
      var q = input.value.toLowerCase();
      t.items.forEach(function (it) {
        it.tr.hidden = q !== '' &&
          String(it.row.name).toLowerCase().indexOf(q) < 0;
      });
    });
  }

  function renderTop(app, d) {
    var top = Array.isArray(d.top_self) ? d.top_self : [];
    if (!top.length) return;
    var s = section(app, 'pp-top', 'top bottlenecks (self time)');
    var ol = add(s, h('ol', 'pp-top'));
    top.forEach(function (z) {
      var li = add(ol, h('li'));
      add(li, h('strong', null, z.name));
      add(li, h('span', null, ' \u2014 ' + fmtNs(z.self_ns) + ' self' +
        (isNum(z.share_pct) ? ', ' + fmtPct(z.share_pct) +
          ' of the time inside zones' : '')));
      var site = siteText(z, false);
      if (site) add(li, h('span', 'pp-dim', ' (' + site + ')'));
    });
  }

  /* Where each top-level zone's time goes: a table per stage, its nested
   * zones by self time with their share of the stage's time. */
  function renderBreakdown(app, d) {
    var b = d.breakdown;
    if (!isRecord(b) || !Array.isArray(b.stages) || !b.stages.length) return;
    var s = section(app, 'pp-breakdown', 'inside the top-level zones');
    note(s, 'Zones nested in each top-level zone, by self time, with their ' +
      'share of the top-level zone\u2019s time (from the events kept for ' +
      'the details).');
    b.stages.forEach(function (st) {
      add(s, h('h3', null, st.name + ' \u2014 ' + fmtNum(st.count) +
        ' \u00d7, ' + fmtNs(st.total_ns)));
      var rows = (Array.isArray(st.nested) ? st.nested : []).slice();
      rows.push({name: '(in the zone itself)', count: null,
                 total_ns: null, self_ns: st.self_ns,
                 self_pct: st.self_pct});
      table(s, [
        {key: 'name', label: 'nested zone'},
        {key: 'count', label: 'calls', num: true,
         text: function (r) { return r.count === null ? '' : fmtNum(r.count); }},
        {key: 'self_ns', label: 'self', num: true,
         text: function (r) { return fmtNs(r.self_ns); }},
        {key: 'self_pct', label: 'share of the zone', num: true,
         text: function (r) { return fmtPct(r.self_pct); },
         bar: function (r) {
           return isNum(r.self_pct) ? r.self_pct / 100 : null;
         }},
        {key: 'total_ns', label: 'total', num: true,
         text: function (r) {
           return r.total_ns === null ? '' : fmtNs(r.total_ns);
         }}
      ], rows, {sorted: 'self_ns'});
      if (st.nested_more > 0)
        note(s, st.nested_more + ' more nested zones are not listed');
    });
    if (b.stages_more > 0)
      note(s, b.stages_more + ' more top-level zones are not listed');
  }

  /* An imported profile's operators by input shape: a table per
   * operator, its shapes by total time with their share of the
   * operator's time, and its other shapes summed. */
  function renderShapes(app, d) {
    var sh = d.shapes;
    if (!isRecord(sh) || !Array.isArray(sh.operators) ||
        !sh.operators.length) return;
    var s = section(app, 'pp-shapes', 'operators by input shape');
    note(s, 'Each operator\u2019s calls grouped by the shapes of their ' +
      'inputs, as the profile recorded them (every event of the ' +
      'profile), by total time.');
    sh.operators.slice(0, MAX_SHAPE_OPS).forEach(function (op) {
      add(s, h('h3', null, op.name + ' \u2014 ' + fmtNum(op.count) +
        ' \u00d7, ' + fmtNs(op.total_ns)));
      var rows = (Array.isArray(op.by_shape) ? op.by_shape : []).slice();
      var o = op.other_shapes;
      if (isRecord(o) && (o.shapes > 0 || o.untold > 0))
        rows.push({input_shapes: '(' + fmtNum(o.shapes) + ' other shape' +
                     (o.shapes === 1 ? '' : 's') +
                     (o.untold > 0 ? ', more untold' : '') + ')',
                   count: o.count, total_ns: o.total_ns,
                   self_ns: o.self_ns, total_pct: o.total_pct});
      table(s, [
        {key: 'input_shapes', label: 'input shapes'},
        {key: 'count', label: 'calls', num: true,
         text: function (r) { return fmtNum(r.count); }},
        {key: 'total_ns', label: 'total', num: true,
         text: function (r) { return fmtNs(r.total_ns); }},
        {key: 'total_pct', label: 'share of the operator', num: true,
         text: function (r) { return fmtPct(r.total_pct); },
         bar: function (r) {
           return isNum(r.total_pct) ? r.total_pct / 100 : null;
         }},
        {key: 'self_ns', label: 'self', num: true,
         text: function (r) { return fmtNs(r.self_ns); }}
      ], rows, {sorted: 'total_ns'});
    });
    var more = Math.max(0, sh.operators.length - MAX_SHAPE_OPS) +
      (isNum(sh.operators_more) ? sh.operators_more : 0);
    if (more > 0)
      note(s, more + ' more operators with shapes are not shown (summary ' +
        'JSON \u201cshapes\u201d lists up to 256)');
  }

  function renderThreads(app, d) {
    var th = Array.isArray(d.threads) ? d.threads : [];
    if (!th.length) return;
    var s = section(app, 'pp-threads', 'threads');
    note(s, 'busy: time covered by top-level zones');
    table(s, [
      {key: 'name', label: 'thread',
       text: function (r) { return r.name || '(unnamed)'; }},
      {key: 'tid', label: 'tid', num: true},
      {key: 'busy_ns', label: 'busy', num: true},
      {key: 'busy_pct', label: 'busy %', num: true,
       bar: function (r) { return isNum(r.busy_pct) ? r.busy_pct / 100 : null; }},
      {key: 'zones', label: 'zones', num: true},
      {key: 'events', label: 'events', num: true},
      {key: 'dropped', label: 'dropped', num: true}
    ], th);
  }

  function renderTimeline(app, d) {
    var s = section(app, 'pp-timeline', 'timeline');
    var tl = d.timeline;
    if (!isRecord(tl)) {
      unavailable(s, 'this summary carries no timeline');
      return;
    }
    if (tl.available === false) {
      unavailable(s, tl.reason);
      return;
    }
    var zones = Array.isArray(d.zones) ? d.zones : [];
    var wall = d.wall_ns;
    var rows = (tl.threads || []).filter(function (t) {
      return (t.spans && t.spans.length) || t.omitted > 0;
    });
    if (!isNum(wall) || wall <= 0 || !rows.length) {
      note(s, 'no top-level zones recorded');
      return;
    }
    note(s, 'top-level zones per thread over the wall time (' +
      fmtNs(wall) + '); hover a bar for its zone and duration.');
    if (tl.omitted > 0)
      note(s, 'showing the ' + tl.kept + ' longest of ' + tl.spans +
        ' top-level zone instances; ' + tl.omitted + ' shorter ones are ' +
        'left out (per thread below).');
    var W = 1000, used = {};
    var box = add(s, h('div', 'pp-tl'));
    rows.forEach(function (t) {
      var row = add(box, h('div', 'pp-tl-row'));
      var label = (t.name || '(unnamed)') + ' (' + t.tid + ')';
      var lab = add(row, h('div', 'pp-tl-label', label));
      lab.setAttribute('title', label);
      var track = add(row, h('div', 'pp-tl-track'));
      var g = svg('svg', {viewBox: '0 0 ' + W + ' 18',
                          preserveAspectRatio: 'none'});
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', 'timeline of ' + label);
      (t.spans || []).forEach(function (sp) {
        var start = sp[0], dur = sp[1], zi = sp[2];
        var z = zones[zi];
        used[zi] = true;
        var r = svg('rect', {
          x: (start / wall * W).toFixed(3),
          y: 1,
          width: Math.max(dur / wall * W, 0.4).toFixed(3),
          height: 16,
          fill: zoneColor(zi)
        });
        var title = svg('title');
        title.textContent = (z ? z.name : 'zone #' + zi) + ': ' + fmtNs(dur) +
          ' at +' + fmtNs(start);
        r.appendChild(title);
        g.appendChild(r);
      });
      track.appendChild(g);
      if (t.omitted > 0) {
        var om = add(box, h('div', 'pp-dim'));
        om.style.marginLeft = '11rem';
        om.style.fontSize = '0.8rem';
        om.textContent = t.omitted + ' shorter zones (' +
          fmtNs(t.omitted_ns) + ' in all) not drawn';
      }
    });
    var axis = add(s, h('div', 'pp-tl-axis'));
    for (var i = 0; i <= 5; i++) {
      var tick = add(axis, h('span', 'pp-tl-tick', fmtNs(wall * i / 5)));
      tick.style.left = (i * 20) + '%';
    }
    var legend = add(s, h('div', 'pp-legend'));
    var shown = 0;
    zones.forEach(function (z, zi) {
      if (!used[zi] || shown >= 24) return;
      shown++;
      var item = add(legend, h('span'));
      var sw = add(item, h('span', 'pp-swatch'));
      sw.style.background = zoneColor(zi);
      add(item, h('span', null, z.name));
    });
  }

  function renderFrames(app, d) {
    var fr = Array.isArray(d.frames) ? d.frames : [];
    if (!fr.length) return;
    var s = section(app, 'pp-frames', 'frames');
    note(s, 'frame time: the gap between consecutive frame marks');
    table(s, [
      {key: 'name', label: 'frame mark'},
      {key: 'frames', label: 'frames', num: true},
      {key: 'fps', label: 'FPS', num: true,
       text: function (r) { return isNum(r.fps) ? r.fps.toFixed(1) : '\u2013'; }},
      {key: 'mean_ns', label: 'mean', num: true},
      {key: 'p50_ns', label: 'p50', num: true},
      {key: 'p90_ns', label: 'p90', num: true},
      {key: 'p99_ns', label: 'p99', num: true},
      {key: 'max_ns', label: 'max', num: true},
      {key: 'jitter_ns', label: 'jitter', num: true},
      {key: 'std_ns', label: 'std dev', num: true}
    ].concat(frameEnergyCols(fr)), fr);
    frameEnergyNote(s, fr);
  }

  /* Energy per frame (frames[].energy, schema_minor 5): the whole run's
   * energy over the stream's marks, with its CPU package and GPU parts. */
  function frameEnergy(r, k) {
    var e = isRecord(r.energy) ? r.energy : null;
    return e && isNum(e[k]) ? e[k] : null;
  }

  /* "GPU", or "all GPUs" when the figure had to use all GPUs' energy. */
  function gpuLabel(e) {
    return isRecord(e) && e.gpu_counter === 'gpu.energy_j' ? 'all GPUs'
      : 'GPU';
  }

  function frameEnergyCols(fr) {
    var cols = [];
    [['joules_per_frame', 'energy/frame'],
     ['cpu_package_joules_per_frame', 'CPU package'],
     ['gpu_joules_per_frame', gpuLabel(fr[0].energy)]].forEach(function (c) {
      var k = c[0];
      if (!fr.some(function (r) { return frameEnergy(r, k) !== null; }))
        return;
      cols.push({key: k, label: c[1], num: true,
                 value: function (r) { return frameEnergy(r, k); },
                 text: function (r) {
                   var v = frameEnergy(r, k);
                   return v === null ? '\u2013' : fmtNum(v) + ' J';
                 }});
    });
    return cols;
  }

  function frameEnergyNote(s, fr) {
    var e = fr.map(function (r) { return r.energy; }).filter(isRecord);
    var ok = e.filter(function (x) { return isNum(x.joules_per_frame); });
    if (ok.length) {
      note(s, 'energy per frame: energy of the whole run (' +
        String(ok[0].sources).replace('GPU', gpuLabel(ok[0])) +
        '), warm-up and idle included, / the stream\'s marks');
    } else if (e.length && typeof e[0].unavailable === 'string') {
      add(s, h('p', 'pp-unavail', 'energy per frame: unavailable: ' +
        e[0].unavailable));
    }
  }

  /* A series the library sampled: the summary says so (library_metric),
   * so that a program's counter named like one stays the program's; older
   * summaries only have the name to go by. */
  function isSampled(c) {
    if (typeof c.library_metric === 'boolean') return c.library_metric;
    var name = String(c.name);
    return SAMPLED_PREFIXES.some(function (p) { return name.indexOf(p) === 0; });
  }

  function counterTable(parent, rows) {
    var v = function (k) {
      return {key: k, label: k, num: true,
              text: function (r) { return fmtNum(r[k]); }};
    };
    table(parent, [
      {key: 'name', label: 'counter'},
      {key: 'type', label: 'type'},
      {key: 'samples', label: 'samples', num: true},
      v('min'), v('max'), v('mean'), v('last')
    ], rows);
  }

  function renderCounters(app, d) {
    var cs = Array.isArray(d.counters) ? d.counters : [];
    if (!cs.length) return;
    var s = section(app, 'pp-counters', 'counters');
    var prog = cs.filter(function (c) { return !isSampled(c); });
    var samp = cs.filter(function (c) { return isSampled(c); });
    if (prog.length) counterTable(s, prog);
    else note(s, 'no program counters');
    if (samp.length) {
      var det = add(s, h('details'));
      add(det, h('summary', null, 'sampled counters (' + samp.length +
        '): system, process, hardware, power and GPU samples'));
      counterTable(det, samp);
    }
  }

  function renderRequests(app, d) {
    var r = d.requests;
    if (r === undefined || r === null) return;
    var s = section(app, 'pp-requests', 'requests');
    if (!isRecord(r)) {
      renderValue(s, 'requests', r, 0);
      return;
    }
    if (r.available === false) {
      unavailable(s, r.reason);
      return;
    }
    var grid = add(s, h('div', 'pp-facts'));
    ['requests', 'completed', 'failed', 'unfinished', 'warmup_excluded',
     'orphan_events', 'output_tokens'].forEach(function (k) {
      if (has(r, k)) fact(grid, pretty(k), fmtNum(r[k]));
    });
    if (has(r, 'span_ns')) fact(grid, 'span', fmtNs(r.span_ns));
    if (has(r, 'requests_per_s'))
      fact(grid, 'requests/s', fmtNum(r.requests_per_s));
    if (has(r, 'output_tokens_per_s'))
      fact(grid, 'output tokens/s', fmtNum(r.output_tokens_per_s));
    var lat = ['e2e', 'ttft', 'tpot', 'itl'].filter(function (k) {
      return isRecord(r[k]);
    });
    if (lat.length) {
      add(s, h('h3', null, 'latency'));
      var ns = function (k, label) {
        return {key: k, label: label, num: true,
                text: function (x) { return fmtNs(x[k]); }};
      };
      table(s, [
        {key: 'metric', label: 'metric',
         text: function (x) { return x.metric.toUpperCase(); }},
        {key: 'count', label: 'count', num: true},
        ns('mean_ns', 'mean'), ns('min_ns', 'min'), ns('p50_ns', 'p50'),
        ns('p90_ns', 'p90'), ns('p95_ns', 'p95'), ns('p99_ns', 'p99'),
        ns('p999_ns', 'p99.9'), ns('max_ns', 'max')
      ], lat.map(function (k) {
        var o = Object.assign({}, r[k]);
        o.metric = k;
        return o;
      }), {sortable: false});
    }
    add(s, h('h3', null, 'SLO'));
    if (isRecord(r.slo)) {
      var sl = r.slo, lim = [];
      ['ttft_ns', 'tpot_ns', 'e2e_ns'].forEach(function (k) {
        if (sl[k] > 0) lim.push(k.replace('_ns', '').toUpperCase() + ' \u2264 ' +
          fmtNs(sl[k]));
      });
      add(s, h('p', null, 'limits: ' + (lim.join(', ') || 'none') +
        '; good requests: ' + fmtNum(sl.good) + '; goodput: ' +
        fmtNum(sl.goodput_per_s) + '/s; compliance: ' +
        (isNum(sl.compliance) ? fmtPct(sl.compliance * 100) : '\u2013')));
    } else {
      note(s, 'no SLO set (pipeprof report --slo, or PIPEPROF_SLO)');
    }
    var v = r.validity;
    if (isRecord(v)) {
      var short90 = Math.max(0, (v.min_requests_p90 || 0) - (r.completed || 0));
      var short99 = Math.max(0, (v.min_requests_p99 || 0) - (r.completed || 0));
      add(s, h('p', null, 'validity (confidence ' + v.confidence + '): p90 ' +
        'needs ' + v.min_requests_p90 + ' requests' +
        (short90 ? ' (need ' + short90 + ' more)' : ' (met)') + ', p99 needs ' +
        v.min_requests_p99 + (short99 ? ' (need ' + short99 + ' more)'
          : ' (met)') + '; over latency: ' + v.over_latency));
    }
    var b = r.batches;
    if (isRecord(b) && b.count > 0) {
      add(s, h('h3', null, 'batches'));
      add(s, h('p', null, b.count + ' batches, ' + b.items + ' items, mean ' +
        'size ' + fmtNum(b.mean_size) + ', padding waste ' +
        (isNum(b.padding_waste) ? fmtPct(b.padding_waste * 100) : '\u2013')));
      if (Array.isArray(b.by_size) && b.by_size.length)
        arrayTable(s, b.by_size);
    }
    /* Fields added later to the requests object. */
    var known = ['available', 'requests', 'completed', 'failed', 'unfinished',
      'warmup_excluded', 'orphan_events', 'output_tokens', 'span_ns',
      'requests_per_s', 'output_tokens_per_s', 'e2e', 'ttft', 'tpot', 'itl',
      'slo', 'validity', 'batches'];
    var extra = Object.keys(r).filter(function (k) {
      return known.indexOf(k) < 0;
    });
    if (extra.length) {
      add(s, h('h3', null, 'more'));
      renderObject(s, r, 1, known);
    }
  }

  var SYSTEM_TITLES = {
    run: 'run', host: 'host', process_tree: 'process tree',
    perf: 'hardware counters', energy: 'energy', gpu: 'GPU',
    unavailable: 'not measured'
  };

  function renderSystem(app, d) {
    if (!has(d, 'system')) return;
    var s = section(app, 'pp-system', 'system');
    var sys = d.system;
    if (sys === null) {
      note(s, 'no system samples in this trace (pipeprof run, or ' +
        'PIPEPROF_SAMPLE_HZ, records them)');
      return;
    }
    if (!isRecord(sys)) {
      renderValue(s, 'system', sys, 0);
      return;
    }
    Object.keys(sys).forEach(function (k) {
      var sub = add(s, h('div', 'pp-system-part'));
      sub.setAttribute('data-key', k);
      add(sub, h('h3', null, SYSTEM_TITLES[k] || pretty(k)));
      if (k === 'unavailable') unavailableList(sub, sys[k]);
      else renderValue(sub, k, sys[k], 1);
    });
  }

  function renderReader(app, d) {
    if (!isRecord(d.reader)) return;
    var s = section(app, 'pp-reader', 'trace file');
    renderObject(s, d.reader, 1);
    var other = {};
    ['clock', 't0_ns', 't1_ns', 'schema', 'schema_version'].forEach(
      function (k) { if (has(d, k)) other[k] = d[k]; });
    var ks = Object.keys(other);
    if (ks.length) kvTable(s, other, ks);
  }

  function renderOthers(app, d) {
    var scalars = [];
    Object.keys(d).forEach(function (k) {
      if (KNOWN.indexOf(k) >= 0) return;
      if (isScalar(d[k])) {
        scalars.push(k);
        return;
      }
      guarded(k, function () {
        var s = section(app, 'pp-sec-' + k.replace(/[^A-Za-z0-9_-]/g, '_'),
                        pretty(k));
        s.classList.add('pp-generic');
        s.setAttribute('data-key', k);
        renderValue(s, k, d[k], 0);
      });
    });
    if (scalars.length) {
      var s = section(app, 'pp-sec-other', 'other');
      s.classList.add('pp-generic');
      kvTable(s, d, scalars);
    }
  }

  /* ---- driver ---------------------------------------------------------- */

  function guarded(what, fn) {
    try {
      fn();
    } catch (e) {
      errors.push(what + ': ' + (e && e.stack ? e.stack : String(e)));
    }
  }

  function finish(app) {
    var body = document.body;
    if (errors.length) {
      body.setAttribute('data-rendered', 'error');
      var box = h('div', 'pp-error');
      box.id = 'pp-render-error';
      box.textContent = 'report rendering failed:\n' + errors.join('\n');
      body.insertBefore(box, body.firstChild);
    } else {
      body.setAttribute('data-rendered', 'ok');
      var ok = add(body, h('div'));
      ok.id = 'pp-render-ok';
      ok.hidden = true;
    }
  }

  function main() {
    var app = document.getElementById('pp-app');
    if (!app) {
      app = add(document.body, h('div'));
      app.id = 'pp-app';
    }
    var data;
    try {
      var el = document.getElementById('pp-data');
      if (!el) throw new Error('no element with id pp-data');
      data = JSON.parse(el.textContent);
      if (!isRecord(data)) throw new Error('the data is not a JSON object');
      if (data.schema !== 'pipeprof.summary')
        throw new Error('the data is not a pipeprof summary (schema ' +
          JSON.stringify(data.schema) + ')');
    } catch (e) {
      errors.push('data: ' + (e && e.message ? e.message : String(e)));
      finish(app);
      return;
    }
    guarded('header', function () { renderHeader(app, data); });
    nav = add(app, h('nav', 'pp-nav'));
    guarded('zones', function () { renderZones(app, data); });
    guarded('top_self', function () { renderTop(app, data); });
    guarded('breakdown', function () { renderBreakdown(app, data); });
    guarded('shapes', function () { renderShapes(app, data); });
    guarded('threads', function () { renderThreads(app, data); });
    guarded('timeline', function () { renderTimeline(app, data); });
    guarded('frames', function () { renderFrames(app, data); });
    guarded('counters', function () { renderCounters(app, data); });
    guarded('requests', function () { renderRequests(app, data); });
    guarded('system', function () { renderSystem(app, data); });
    renderOthers(app, data);
    guarded('reader', function () { renderReader(app, data); });
    add(app, h('p', 'pp-foot', 'Generated by pipeprof ' +
      ((data.generator && data.generator.version) || '') +
      '. Figures: docs/formats/summary-json.md; the data of this page is ' +
      'the JSON in the element with id "pp-data".'));
    finish(app);
  }

  main();
}());
