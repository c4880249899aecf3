/* SPDX-License-Identifier: MIT */
/*
 * The pipeprof HTML report's renderer, for the static report and the live
 * dashboard alike (src/export/html_page.c inlines it after the data and
 * the chart library uPlot). A static report embeds a summary JSON document
 * (the application/json script element with id "pp-data"; schema
 * pipeprof.summary, docs/formats/summary-json.md); the live page's
 * configuration (element "pp-config") names a summary URL and a
 * server-sent-events stream instead, and the page re-renders on each
 * snapshot, keeping what the user chose (sort orders, open sections,
 * chart zoom, the timeline's view, the scroll position) and updating
 * charts in place. window.ppRender(doc) renders a document (tests).
 *
 * Names come from the profiled program and are untrusted: data reaches the
 * page only as text nodes (textContent) and attribute values (setAttribute),
 * never as markup; uPlot writes legend labels as text too.
 *
 * Sections the page knows have their own layout; every other top-level
 * member goes through the generic renderer, so sections added to the
 * summary later appear without a change here. Each section is drawn in its
 * own try/catch. At the end the body gets data-rendered="ok" and a hidden
 * element with id "pp-render-ok" when every section succeeded, or
 * data-rendered="error" and an element with id "pp-render-error" holding
 * the errors (the browser tests look for these). Charts say why they are
 * missing ("no data for this chart: ...", "chart unavailable: ...").
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
    'source', 'breakdown', 'providers', 'shapes', 'merged_profiles',
    'schema_minor', 'processes', 'pairing', 'queues', 'pipeline',
    'recommendations', 'alerts', 'gpu_zones', 'device_memory', 'cuda',
    'memory_pools', 'series', 'live', 'profiler', 'zone_slos', 'layout',
    'header', 'zones_by_process', 'stacks',
    'metadata', 'api_version', 'left_out'
  ];
  var MAX_SHAPE_OPS = 32;
  var SAMPLED_PREFIXES = ['sys.', 'proc.', 'perf.', 'power.', 'energy.',
                          'gpu.'];
  var MAX_GENERIC_ROWS = 500;
  var MAX_GENERIC_DEPTH = 6;

  var errors = [];
  var nav = null;
  /* What the user chose, kept across renders (live mode): table sort
   * orders by table id, open <details> by data-id, the selected zone of
   * the histogram, zoomed charts, the timeline's view, the zone filter. */
  var state = {sort: {}, open: {}, select: {}, zoom: {}, tl: null,
               filter: ''};
  var charts = {}, newCharts = {};
  var tlDrag = null;
  var BUILD = null, CONFIG = null;

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

  /* The units module's rules (src/units.h), checked against the same
   * table (tests/fixtures/units.tsv): three significant digits, never an
   * exponent below 1e15, a unit scaled up when the rounded value would
   * read 1000 of it. */

  /* Decimals that give 3 significant digits for a >= 0. */
  function sig3Decimals(a) {
    if (a === 0 || a >= 99.95) return 0;
    if (a >= 9.995) return 1;
    if (a >= 0.9995) return 2;
    var d = 2 - Math.floor(Math.log10(a));
    if (a * Math.pow(10, d) >= 999.5) d--;
    return Math.min(d, 12);
  }

  /* v in units[0], scaled by base while it reaches base (units[0] whole
   * when int0). */
  function scaled(v, base, units, int0) {
    if (!isNum(v)) return '\u2013';
    var a = Math.abs(v), u = 0;
    while (u + 1 < units.length && a >= base) {
      a /= base;
      u++;
    }
    if (a >= 999.5 && u + 1 < units.length && !(u === 0 && int0)) {
      a /= base;
      u++;
    }
    var s = u === 0 && int0 ? a.toFixed(0) : a.toFixed(sig3Decimals(a));
    return (v < 0 ? '-' : '') + s + units[u];
  }

  function fmtSig3(v) {
    if (!isNum(v)) return '\u2013';
    if (Math.abs(v) >= 1e15) return parseFloat(v.toPrecision(3)).toExponential();
    return v.toFixed(sig3Decimals(Math.abs(v)));
  }

  function fmtRate(v) {
    return scaled(v, 1000, ['/s', ' k/s', ' M/s', ' G/s', ' T/s'], false);
  }

  function fmtByteRate(v) {
    return scaled(v, 1024,
      [' B/s', ' KiB/s', ' MiB/s', ' GiB/s', ' TiB/s'], true);
  }

  function fmtJoules(v) {
    if (isNum(v) && v !== 0 && Math.abs(v) < 0.9995)
      return fmtSig3(v * 1000) + ' mJ';
    return scaled(v, 1000, [' J', ' kJ', ' MJ', ' GJ'], false);
  }

  /* "850 ns", "12.3 us", "1.00 ms", "1.50 s" */
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
    return scaled(b, 1024, [' B', ' KiB', ' MiB', ' GiB', ' TiB', ' PiB'],
      true);
  }

  /* three significant digits, at most two decimals: "3.32%", "100%" */
  function fmtPct(p) {
    if (!isNum(p)) return '\u2013';
    var a = Math.abs(p);
    return p.toFixed(a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2) + '%';
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
      case 'rate': return fmtRate(v);
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
    var wrap = add(parent, h('div', 'pp-tablewrap'));
    var t = add(wrap, h('table', 'pp-table'));
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
    var current = null, desc = true, ths = {};
    function sortBy(c, th, toggle, want) {
      if (want !== undefined) desc = want;
      else if (current === c && toggle) desc = !desc;
      else desc = c.num ? true : false;
      current = c;
      if (opts.id && toggle) state.sort[opts.id] = {key: c.key, desc: desc};
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
      ths[c.key] = {th: th, c: c};
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
    var kept = opts.id ? state.sort[opts.id] : null;
    if (opts.id) t.setAttribute('data-table', opts.id);
    if (kept && ths[kept.key])
      sortBy(ths[kept.key].c, ths[kept.key].th, false, kept.desc);
    else if (opts.sorted && ths[opts.sorted] && !current)
      sortBy(ths[opts.sorted].c, ths[opts.sorted].th, false);
    return {table: t, items: items};
  }

  /* ---- charts (uPlot, bundled at build time) ----------------------------
   * chart(parent, id, spec) draws spec = {title, x: [...], xKind: 'time'
   * (seconds from the trace start) or 'ns-log' (latency, log axis), yUnit
   * ('ns', 'bytes', 'pct', 'rate', 'count', or a unit word), yLog, step
   * (histogram steps), series: [{label, values, dash, fill}], empty: why
   * there is nothing to draw}. The wrapper div.pp-chart carries
   * data-chart (id), data-points (finite points handed to uPlot) and, once
   * uPlot has drawn, data-ink: how many coloured pixels the plot area holds
   * (the series; grid and axes are grey), which the browser tests read.
   * Charts are kept by id across renders (live mode) and updated in place
   * with setData, keeping a zoom the user chose. */

  var PALETTE = ['#2f6fb3', '#d9622b', '#3a9c4a', '#b8407a', '#7d5bbf',
                 '#c29a1b', '#2b9ea6', '#8c564b', '#e377c2', '#6b7a8f'];

  function uplotMissing() {
    if (typeof uPlot === 'function') return null;
    var why = isRecord(BUILD) && typeof BUILD.unavailable === 'string'
      ? BUILD.unavailable
      : isRecord(BUILD) && typeof BUILD.uplot === 'string'
        ? 'the bundled uPlot ' + BUILD.uplot + ' did not load'
        : 'no build status in the page';
    return 'chart unavailable: uPlot was not bundled at build time (' + why +
      ')';
  }

  function fmtUnit(unit, v) {
    if (!isNum(v)) return '\u2013';
    switch (unit) {
      case 'ns': return fmtNs(v);
      case 'bytes': return fmtBytes(v);
      case 'pct': return fmtPct(v);
      case 'rate': return fmtRate(v);
      case 'bytes/s': return fmtByteRate(v);
      case 'joules': return fmtJoules(v);
      case 'number': return fmtSig3(v);
      case 'seconds': return fmtNs(v * 1e9);
      case 'ms': return fmtNs(v * 1e6);
      case 'MHz': return fmtSig3(v) + ' MHz';
      case 'W': return fmtSig3(v) + ' W';
      case 'celsius': return fmtSig3(v) + ' \u00b0C';
      case 'fraction': return fmtPct(v * 100); /* a share, 0..1 */
      /* a count exactly, another number as the C side's count column:
       * three significant digits (units.h) */
      case 'count': case '': case undefined:
        return Number.isInteger(v) ? String(v) : fmtSig3(v);
      default: return fmtNum(v) + ' ' + unit;
    }
  }

  function fmtRelS(s) {
    return isNum(s) ? '+' + fmtNs(s * 1e9) : '\u2013';
  }

  function cssVar(name, dflt) {
    var v = getComputedStyle(document.documentElement)
      .getPropertyValue(name);
    return v && v.trim() ? v.trim() : dflt;
  }

  function chartWidth(box) {
    var w = box.clientWidth || (box.parentNode && box.parentNode.clientWidth)
      || 0;
    if (!w) w = Math.min(window.innerWidth || 900, 1200) - 60;
    return Math.max(320, Math.min(w, 1400));
  }

  /* Pixels with colour (channels apart by more than 40) inside the plot
   * area, sampled on a grid of every second pixel. */
  function inkOf(u) {
    try {
      var c = u.ctx, b = u.bbox;
      if (b.width < 1 || b.height < 1) return 0;
      var img = c.getImageData(Math.round(b.left), Math.round(b.top),
                               Math.round(b.width), Math.round(b.height));
      var d = img.data, n = 0, W = img.width;
      for (var y = 0; y < img.height; y += 2)
        for (var x = 0; x < W; x += 2) {
          var i = (y * W + x) * 4;
          if (d[i + 3] < 40) continue;
          var mx = Math.max(d[i], d[i + 1], d[i + 2]);
          var mn = Math.min(d[i], d[i + 1], d[i + 2]);
          if (mx - mn > 40) n++;
        }
      return n;
    } catch (e) {
      return -1;
    }
  }

  function chartNote(box, cls, text) {
    box.setAttribute('data-points', '0');
    add(box, h('p', cls, text));
    return box;
  }

  function chart(parent, id, spec) {
    var box = add(parent, h('div', 'pp-chart'));
    box.setAttribute('data-chart', id);
    if (spec.title) add(box, h('div', 'pp-chart-title', spec.title));
    var series = (spec.series || []).filter(function (s) {
      return Array.isArray(s.values);
    });
    var x = Array.isArray(spec.x) ? spec.x : [];
    var points = 0;
    series.forEach(function (s) {
      s.values.forEach(function (v) { if (isNum(v)) points++; });
    });
    if (spec.empty || !x.length || !points)
      return chartNote(box, 'pp-nodata', 'no data for this chart: ' +
        (spec.empty || 'the summary holds no points for it'));
    var missing = uplotMissing();
    if (missing) return chartNote(box, 'pp-unavail pp-chart-missing',
                                  missing);
    box.setAttribute('data-points', String(points));
    var data = [x].concat(series.map(function (s) { return s.values; }));
    var sig = JSON.stringify([spec.xKind, spec.yUnit, spec.yLog, spec.step,
      series.map(function (s) { return s.label; })]);
    var old = charts[id];
    if (old && old.sig === sig) {
      /* Live update: same layout, new points; keep the user's zoom. */
      box.appendChild(old.holder);
      old.u.setData(data, !state.zoom[id]);
      newCharts[id] = old;
      old.box = box;
      markInk(old);
      return box;
    }
    var holder = add(box, h('div', 'pp-chart-plot'));
    var fg = cssVar('--fg', '#1d2329'), grid = cssVar('--line', '#dde2e7');
    var yFmt = function (v) { return fmtUnit(spec.yUnit, v); };
    var xFmt = spec.xKind === 'ns-log' ? fmtNs
      : spec.xKind === 'num' ? fmtNum : fmtRelS;
    /* The y axis as wide as its longest label ("1.50 GiB/s" needs more
     * than "4"): measured with the axis's font on each layout pass. */
    var yAxisSize = function (u, values, axisIdx, cycleNum) {
      var axis = u.axes[axisIdx];
      if (cycleNum > 1 && axis._size) return axis._size;
      var longest = '';
      (values || []).forEach(function (v) {
        if (v !== null && String(v).length > longest.length) longest = String(v);
      });
      var size = ((axis.ticks && axis.ticks.size) || 10) + (axis.gap || 5) + 8;
      var label = 0;
      if (longest && u.ctx) {
        u.ctx.font = Array.isArray(axis.font) ? axis.font[0] : axis.font;
        label = u.ctx.measureText(longest).width /
          (window.devicePixelRatio || 1);
      }
      size = Math.max(40, Math.ceil(size + label));
      /* what the browser tests read: the axis holds its widest label */
      box.setAttribute('data-y-axis-px', String(size));
      box.setAttribute('data-y-label-px', String(Math.ceil(label)));
      return size;
    };
    /* Axis labels: uPlot passes null for log-axis ticks it leaves bare. */
    var tick = function (f) {
      return function (u, vals) {
        return vals.map(function (v) { return isNum(v) ? f(v) : ''; });
      };
    };
    var opts = {
      width: chartWidth(box),
      height: spec.height || 220,
      legend: {show: true, live: true},
      cursor: {drag: {x: true, y: false}},
      scales: {
        x: spec.xKind === 'ns-log' ? {time: false, distr: 3, log: 10}
          : {time: false},
        y: spec.yLog ? {distr: 3, log: 10} : {}
      },
      axes: [
        {stroke: fg, grid: {stroke: grid, width: 1},
         ticks: {stroke: grid, width: 1},
         values: tick(xFmt), space: 70,
         label: spec.xLabel || (spec.xKind === 'ns-log' ? 'latency'
           : 'time from the trace start'), labelSize: 18, size: 36},
        {stroke: fg, grid: {stroke: grid, width: 1},
         ticks: {stroke: grid, width: 1}, size: yAxisSize, space: 24,
         values: tick(yFmt)}
      ],
      series: [{label: spec.xKind === 'ns-log' ? 'latency'
                  : spec.xKind === 'num' ? (spec.xLabel || 'value') : 'time',
                value: function (u, v) { return xFmt(v); }}]
        .concat(series.map(function (s, i) {
          var col = s.color || PALETTE[i % PALETTE.length];
          var o = {label: String(s.label), stroke: col, width: 1.5,
                   spanGaps: !!spec.spanGaps,
                   points: {show: false},
                   value: function (u, v) { return yFmt(v); }};
          if (s.dash) o.dash = [5, 4];
          if (s.fill) o.fill = col + '33';
          if (spec.step && uPlot.paths && uPlot.paths.stepped)
            o.paths = uPlot.paths.stepped({align: -1});
          return o;
        })),
      hooks: {
        setSelect: [function (u) {
          if (u.select.width > 0) state.zoom[id] = true;
        }],
        draw: [function (u) {
          var c = charts[id] || newCharts[id];
          if (c) markInk(c);
        }]
      }
    };
    var u = new uPlot(opts, data, holder);
    u.over.addEventListener('dblclick', function () {
      delete state.zoom[id];
    });
    var rec = {u: u, sig: sig, holder: holder, box: box};
    newCharts[id] = rec;
    markInk(rec);
    return box;
  }

  function markInk(rec) {
    rec.box.setAttribute('data-ink', String(inkOf(rec.u)));
  }

  /* One x array for several series, each with its own times: the union of
   * their times, and null where a series has no point (drawn as a gap, or
   * spanned with spanGaps). items: [{t: [...], ys: [[...], ...]}]. */
  function alignSeries(items) {
    var all = [];
    items.forEach(function (it) {
      (it.t || []).forEach(function (v) { if (isNum(v)) all.push(v); });
    });
    all.sort(function (a, b) { return a - b; });
    var x = [];
    all.forEach(function (v) { if (!x.length || x[x.length - 1] !== v) x.push(v); });
    var pos = {};
    x.forEach(function (v, i) { pos[v] = i; });
    var out = items.map(function (it) {
      return (it.ys || []).map(function (y) {
        var col = new Array(x.length).fill(null);
        (it.t || []).forEach(function (tv, i) {
          if (isNum(tv) && i < y.length && isNum(y[i])) col[pos[tv]] = y[i];
        });
        return col;
      });
    });
    return {x: x, ys: out};
  }

  /* A series member of the summary: an array, or {"unavailable": why}. */
  function seriesList(d, key) {
    var s = d.series;
    if (!isRecord(s)) return {list: [], why: 'this summary has no time ' +
      'series (a summary written by an older pipeprof)'};
    var v = s[key];
    if (isRecord(v) && typeof v.unavailable === 'string')
      return {list: [], why: v.unavailable};
    if (!Array.isArray(v)) return {list: [], why: 'the summary has no ' +
      'series.' + key};
    if (!v.length) return {list: [], why: 'no ' + key + ' in this trace'};
    return {list: v, why: null};
  }

  function secs(t) {
    return (Array.isArray(t) ? t : []).map(function (v) {
      return isNum(v) ? v / 1e9 : null;
    });
  }

  /* Time series chart from series entries: pick(entry) -> [{label, values,
   * dash}] over entry.t_ns. */
  function seriesChart(parent, id, title, entries, why, yUnit, pick, opts) {
    opts = opts || {};
    if (!entries.length)
      return chart(parent, id, {title: title, empty: why || 'no series'});
    var items = [], labels = [];
    entries.forEach(function (e) {
      var ps = pick(e);
      items.push({t: secs(e.t_ns), ys: ps.map(function (p) { return p.values; })});
      ps.forEach(function (p) { labels.push(p); });
    });
    var al = alignSeries(items), series = [], k = 0;
    al.ys.forEach(function (cols) {
      cols.forEach(function (col) {
        var p = labels[k++];
        series.push({label: p.label, values: col, dash: p.dash,
                     color: p.color});
      });
    });
    var down = entries.some(function (e) { return e.downsampled === true; });
    var box = chart(parent, id, {title: title, x: al.x, xKind: 'time',
      yUnit: yUnit, yLog: opts.yLog, series: series, spanGaps: true,
      height: opts.height});
    if (down && box.getAttribute('data-points') !== '0')
      add(box, h('div', 'pp-chart-note', 'downsampled: each point ' +
        'summarizes a time bucket (mean, and the maximum where shown)'));
    return box;
  }

  /* Latency distribution as a CDF: x the histogram's upper bucket edges
   * (log axis), y the share of values at or below (percent). */
  function cdfChart(parent, id, title, items, why) {
    var withHist = items.filter(function (it) {
      return isRecord(it.hist) && Array.isArray(it.hist.le_ns) &&
        Array.isArray(it.hist.counts) && it.hist.le_ns.length;
    });
    if (!withHist.length)
      return chart(parent, id, {title: title, empty: why ||
        'the summary has no histograms (a summary written by an older ' +
        'pipeprof)'});
    var xs = [];
    withHist.forEach(function (it) {
      it.hist.le_ns.forEach(function (v) { if (isNum(v) && v > 0) xs.push(v); });
    });
    xs.sort(function (a, b) { return a - b; });
    var x = xs.filter(function (v, i) { return i === 0 || xs[i - 1] !== v; });
    var series = withHist.map(function (it) {
      var le = it.hist.le_ns, cn = it.hist.counts, tot = 0;
      cn.forEach(function (c) { if (isNum(c)) tot += c; });
      var cum = 0, j = 0, col = [];
      x.forEach(function (xv) {
        while (j < le.length && le[j] <= xv) {
          cum += isNum(cn[j]) ? cn[j] : 0;
          j++;
        }
        col.push(tot > 0 ? cum / tot * 100 : null);
      });
      return {label: it.name, values: col};
    });
    return chart(parent, id, {title: title, x: x, xKind: 'ns-log',
      yUnit: 'pct', series: series, step: true});
  }

  /* One histogram as steps over its bucket edges (log x axis). */
  function histChart(parent, id, title, name, hist, why) {
    if (!isRecord(hist) || !Array.isArray(hist.le_ns) ||
        !Array.isArray(hist.counts) || !hist.le_ns.length)
      return chart(parent, id, {title: title, empty: why ||
        'the summary has no histogram for it (a summary written by an ' +
        'older pipeprof)'});
    var x = [], y = [];
    hist.le_ns.forEach(function (v, i) {
      if (isNum(v) && v > 0) {
        x.push(v);
        y.push(isNum(hist.counts[i]) ? hist.counts[i] : null);
      }
    });
    /* A step at x[i] spans (x[i-1], x[i]]: the first bucket needs its
     * lower edge, else it is never drawn (a histogram of one bucket drew
     * nothing at all). Buckets are a constant ratio apart; one alone is
     * taken as a power of two wide. */
    if (x.length) {
      x.unshift(x.length > 1 ? x[0] * x[0] / x[1] : x[0] / 2);
      y.unshift(0);
    }
    return chart(parent, id, {title: title, x: x, xKind: 'ns-log',
      yUnit: 'count', step: true,
      series: [{label: name + ' (values per bucket)', values: y,
                fill: true}]});
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
    /* what was profiled and how: the results document's header, with its
     * warnings (events dropped, a damaged file) and remarks */
    var grid = layoutFacts(app, d, 'header', d.header);
    if (!grid) grid = add(app, h('div', 'pp-facts'));
    if (isRecord(d.live))
      fact(grid, 'live', 'a snapshot every ' + fmtNum(d.live.interval_s) +
        ' s' + (isNum(d.live.as_of_ns) ? ', this one as of ' +
        rel(d, d.live.as_of_ns) : ''));
    var o = d.overhead;
    var ovLay = isRecord(d.layout) && isRecord(d.layout.overhead)
      ? d.layout.overhead : null;
    var ovFacts = isRecord(o) && ovLay && Array.isArray(ovLay.facts) &&
      ovLay.facts.length > 0;
    if (isRecord(o) && !ovFacts && typeof o.unavailable === 'string')
      fact(grid, 'profiler overhead', 'unavailable: ' + o.unavailable);
    if (d.generator)
      fact(grid, 'generator', (d.generator.name || '') + ' ' +
        (d.generator.version || ''));
    /* zones that lost their end: the zones table's remarks */
    if (ovFacts) {
      var ov = add(app, h('div', 'pp-overhead'));
      ov.id = 'pp-overhead';
      add(ov, h('h3', null, typeof ovLay.title === 'string' ? ovLay.title
        : 'profiler overhead'));
      layoutFacts(ov, d, 'overhead', o);
    }
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
    var zones = Array.isArray(d.zones) ? d.zones.filter(isRecord) : [];
    var maxTotal = 0;
    zones.forEach(function (z) {
      if (isNum(z.total_ns)) maxTotal = Math.max(maxTotal, z.total_ns);
    });
    var frac = function (k) {
      return function (z) {
        return maxTotal > 0 && isNum(z[k]) ? z[k] / maxTotal : 0;
      };
    };
    if (zones.length) {
      note(s, zones.length + ' zone sites; bars: total (dark) and self ' +
        '(light) time relative to the largest total. Click a column to ' +
        'sort.');
      var filt = add(s, h('div', 'pp-filter'));
      var input = add(filt, h('input'));
      input.setAttribute('type', 'search');
      input.setAttribute('placeholder', 'filter zones by name');
      input.setAttribute('aria-label', 'filter zones by name');
    }
    var t = layoutTable(s, d, 'zones', zones, function (z) {
      return String(z.name);
    }, null, {
      sorted: 'total_ns',
      rowTitle: function (z) { return siteText(z, true) || null; },
      afterFirst: [{key: 'site', label: 'site', cls: 'pp-site',
        text: function (z) { return siteText(z, false); },
        value: function (z) { return siteText(z, true); }}],
      bars: {total_ns: {bar: frac('total_ns'), bar2: frac('self_ns')}}
    });
    if (!t) return;
    t.table.id = 'pp-zone-table';
    /* the filter right above the table, under the layout's notes */
    var wrap = t.table.parentNode;
    wrap.parentNode.insertBefore(filt, wrap);
    var filter = function () {
      var q = input.value.toLowerCase();
      state.filter = input.value;
      t.items.forEach(function (it) {
        it.tr.hidden = q !== '' &&
          String(it.row.name).toLowerCase().indexOf(q) < 0;
      });
    };
    input.addEventListener('input', filter);
    if (state.filter) {
      input.value = state.filter;
      filter();
    }
    zoneCharts(s, d, zones);
  }

  function renderTop(app, d) {
    var top = Array.isArray(d.top_self) ? d.top_self : [];
    if (!top.length) return;
    var lay = isRecord(d.layout) && isRecord(d.layout.top_self) ?
      d.layout.top_self : {};
    var s = section(app, 'pp-top', typeof lay.title === 'string' ?
      lay.title : 'top bottlenecks by self time');
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

  /* A parent table's rows and their nested rows (each nested row with
   * its parent's name in groupKey): the results document's tables, as
   * laid out (analyze/doc_breakdown.c). */
  function nestedRows(parents, list, groupKey, extra) {
    var rows = [];
    parents.forEach(function (p) {
      (Array.isArray(p[list]) ? p[list] : []).filter(isRecord)
        .forEach(function (r) {
          var o = Object.assign({}, r);
          o[groupKey] = p.name;
          rows.push(o);
        });
      if (extra) extra(p, rows);
    });
    return rows;
  }

  /* Where each top-level zone's time goes: the top-level zones, then
   * their nested zones by self time. */
  function renderBreakdown(app, d) {
    var b = d.breakdown;
    if (!isRecord(b) || !Array.isArray(b.stages) || !b.stages.length) return;
    var stages = b.stages.filter(isRecord);
    var s = section(app, 'pp-breakdown', 'inside the top-level zones');
    layoutTable(s, d, 'breakdown_stages', stages, function (r) {
      return String(r.name);
    });
    var lay = isRecord(d.layout) ? d.layout.breakdown_nested : null;
    if (isRecord(lay)) add(s, h('h3', null, String(lay.title)));
    layoutTable(s, d, 'breakdown_nested', nestedRows(stages, 'nested',
      'stage'), function (r) { return r.stage + ' / ' + r.name; });
  }

  /* An imported profile's operators, then their calls by input shape
   * (the shapes not listed in a row of their own). */
  function renderShapes(app, d) {
    var sh = d.shapes;
    if (!isRecord(sh) || !Array.isArray(sh.operators) ||
        !sh.operators.length) return;
    var ops = sh.operators.filter(isRecord);
    var s = section(app, 'pp-shapes', 'operators by input shape');
    layoutTable(s, d, 'shapes_operators', ops, function (r) {
      return String(r.name);
    });
    var lay = isRecord(d.layout) ? d.layout.shapes_by_shape : null;
    if (isRecord(lay)) add(s, h('h3', null, String(lay.title)));
    layoutTable(s, d, 'shapes_by_shape', nestedRows(ops.slice(0,
      MAX_SHAPE_OPS), 'by_shape', 'operator', function (op, rows) {
        var o = op.other_shapes;
        if (isRecord(o) && (o.shapes > 0 || o.untold > 0))
          rows.push({operator: op.name, input_shapes: '(' +
            fmtNum(o.shapes) + ' other shape' + (o.shapes === 1 ? '' : 's') +
            (o.untold > 0 ? ', more untold' : '') + ')', count: o.count,
            total_ns: o.total_ns, self_ns: o.self_ns,
            total_pct: o.total_pct});
      }), function (r) { return r.operator + ' / ' + r.input_shapes; });
    if (ops.length > MAX_SHAPE_OPS)
      note(s, (ops.length - MAX_SHAPE_OPS) + ' more operators’ shapes ' +
        'are not shown (summary JSON “shapes” has them)');
  }

  /* The threads of the profiled programs: in a `pipeprof run`,
   * pipeprof's own are marked and left out, as the text report does. */
  function programThreads(d) {
    return (Array.isArray(d.threads) ? d.threads : []).filter(function (t) {
      return !(isRecord(t) && t.profiler === true);
    });
  }

  /* CPU stack samples (`pipeprof run --stacks`): per zone its top
   * functions, the results document's "stacks" table with its remarks
   * (sample count, rate, lost samples). */
  function renderStacks(app, d) {
    var st = d.stacks;
    if (st === undefined) return;
    var lay = isRecord(d.layout) && isRecord(d.layout.stacks) ?
      d.layout.stacks : null;
    var s = section(app, 'pp-stacks', lay && typeof lay.title === 'string' ?
      lay.title : 'CPU stack samples');
    if (!Array.isArray(st)) {
      unavailable(s, isRecord(st) ? String(st.reason) : 'no stack samples');
      return;
    }
    layoutTable(s, d, 'stacks', st.filter(isRecord), function (r) {
      return String(r.zone) + ': ' + String(r['function']);
    });
    if (lay && Array.isArray(lay.remarks))
      lay.remarks.forEach(function (m) { note(s, String(m)); });
  }

  /* Zone SLOs (--slo NAME=DURATION): target, instances within it,
   * violations and the compliance rate, as the analysis counted them. */
  function renderZoneSlos(app, d) {
    var list = Array.isArray(d.zone_slos) ? d.zone_slos.filter(isRecord) : [];
    if (!list.length) return;
    var s = section(app, 'pp-zone-slos', 'service-level objectives');
    layoutTable(s, d, 'zone_slos', list, function (r) {
      return String(r.zone);
    });
  }

  function renderThreads(app, d) {
    var th = Array.isArray(d.threads) ? d.threads.filter(isRecord) : [];
    if (!th.length) return;
    var s = section(app, 'pp-threads', 'threads');
    layoutTable(s, d, 'threads', th, function (r) {
      return String(r.label || r.name || r.tid);
    });
    /* a run of several processes: each, how it ended, its figures */
    var ps = Array.isArray(d.processes) ? d.processes.filter(isRecord) : [];
    if (ps.length > 1 && isRecord(d.layout) &&
        isRecord(d.layout.process_table)) {
      add(s, h('h3', null, String(d.layout.process_table.title)));
      layoutTable(s, d, 'process_table', ps, function (r) {
        return 'process ' + String(r.pid);
      });
      /* each zone several processes recorded: each process's part */
      var pz = d.zones_by_process;
      var pzl = isRecord(d.layout) ? d.layout.zones_by_process : null;
      if (isRecord(pzl) && (Array.isArray(pz) ? pz.length : isRecord(pz))) {
        add(s, h('h3', null, String(pzl.title)));
        if (Array.isArray(pz)) {
          layoutTable(s, d, 'zones_by_process', pz.filter(isRecord),
                      function (r) {
                        return String(r.zone) + ' in process ' +
                          String(r.pid);
                      });
        } else {
          unavailable(s, String(pz.reason));
        }
      }
    }
  }

  function renderTimeline(app, d) {
    var s = section(app, 'pp-timeline', 'timeline');
    var tl = d.timeline;
    if (!isRecord(tl)) {
      unavailable(s, d.live ? 'a running process sends no zone instances; ' +
        'the report of its trace has the timeline'
        : 'this summary carries no timeline');
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
      fmtNs(wall) + '); hover a bar for its zone and duration. Zoom with ' +
      'the mouse wheel or the buttons, drag to pan.');
    if (tl.omitted > 0)
      note(s, 'showing the ' + tl.kept + ' longest of ' + tl.spans +
        ' top-level zone instances; ' + tl.omitted + ' shorter ones are ' +
        'left out (per thread below).');
    var ctl = add(s, h('div', 'pp-tl-ctl'));
    var bIn = add(ctl, h('button', null, 'zoom in'));
    var bOut = add(ctl, h('button', null, 'zoom out'));
    var bReset = add(ctl, h('button', null, 'show all'));
    var shown = add(ctl, h('span', 'pp-dim'));
    var W = 1000, used = {}, svgs = [];
    var box = add(s, h('div', 'pp-tl'));
    box.setAttribute('data-chart', 'timeline');
    var nrect = 0;
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
          x: (start / wall * W).toFixed(4),
          y: 1,
          width: Math.max(dur / wall * W, 0.02).toFixed(4),
          height: 16,
          fill: zoneColor(zi)
        });
        var title = svg('title');
        title.textContent = (z ? z.name : 'zone #' + zi) + ': ' + fmtNs(dur) +
          ' at +' + fmtNs(start);
        r.appendChild(title);
        g.appendChild(r);
        nrect++;
      });
      track.appendChild(g);
      svgs.push(g);
      if (t.omitted > 0) {
        var om = add(box, h('div', 'pp-dim pp-tl-omitted'));
        om.textContent = t.omitted + ' shorter zones (' +
          fmtNs(t.omitted_ns) + ' in all) not drawn';
      }
    });
    box.setAttribute('data-points', String(nrect));
    var axis = add(s, h('div', 'pp-tl-axis'));
    var view = state.tl && state.tl.wall === wall ? state.tl
      : {x0: 0, x1: wall, wall: wall};
    function apply() {
      var span = Math.max(view.x1 - view.x0, wall / 1e6);
      svgs.forEach(function (g) {
        g.setAttribute('viewBox', (view.x0 / wall * W).toFixed(4) + ' 0 ' +
          (span / wall * W).toFixed(4) + ' 18');
      });
      axis.textContent = '';
      for (var i = 0; i <= 5; i++) {
        var tick = add(axis, h('span', 'pp-tl-tick',
          '+' + fmtNs(view.x0 + span * i / 5)));
        tick.style.left = (i * 20) + '%';
      }
      var all = view.x0 <= 0 && view.x1 >= wall;
      shown.textContent = all ? ' showing the whole run'
        : ' showing +' + fmtNs(view.x0) + ' to +' + fmtNs(view.x1) + ' (' +
          fmtNs(span) + ')';
      box.setAttribute('data-view', Math.round(view.x0) + ' ' +
        Math.round(view.x1));
      state.tl = all ? null : view;
    }
    function zoom(f, at) {
      var span = view.x1 - view.x0;
      if (at === undefined) at = view.x0 + span / 2;
      var ns = Math.min(wall, Math.max(wall / 1e5, span * f));
      var x0 = at - (at - view.x0) * ns / span;
      x0 = Math.max(0, Math.min(wall - ns, x0));
      view = {x0: x0, x1: x0 + ns, wall: wall};
      apply();
    }
    bIn.addEventListener('click', function () { zoom(0.5); });
    bOut.addEventListener('click', function () { zoom(2); });
    bReset.addEventListener('click', function () {
      view = {x0: 0, x1: wall, wall: wall};
      apply();
    });
    function atX(ev) {
      var tr = box.querySelector('.pp-tl-track');
      var rc = tr.getBoundingClientRect();
      var f = Math.max(0, Math.min(1, (ev.clientX - rc.left) / rc.width));
      return {f: f, ns: view.x0 + f * (view.x1 - view.x0), w: rc.width};
    }
    box.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, atX(ev).ns);
    }, {passive: false});
    box.addEventListener('mousedown', function (ev) {
      var x = ev.clientX, v = view, w = atX(ev).w;
      ev.preventDefault();
      tlDrag = function (mv) {
        var span = v.x1 - v.x0;
        var dx = (mv.clientX - x) / w * span;
        var x0 = Math.max(0, Math.min(wall - span, v.x0 - dx));
        view = {x0: x0, x1: x0 + span, wall: wall};
        apply();
      };
    });
    apply();
    var legend = add(s, h('div', 'pp-legend'));
    var nshown = 0;
    zones.forEach(function (z, zi) {
      if (!used[zi] || nshown >= 24) return;
      nshown++;
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
    layoutTable(s, d, 'frames', fr, function (r) {
      return 'frame ' + String(r.name);
    }, frameEnergyCols(fr));
    frameEnergyNote(s, fr);
    frameCharts(s, d, fr);
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
     ['platform_joules_per_frame', 'platform (psys)'],
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

  function counterName(r) { return 'counter ' + String(r.name); }

  function renderCounters(app, d) {
    var cs = Array.isArray(d.counters) ? d.counters : [];
    if (!cs.length) return;
    var s = section(app, 'pp-counters', 'counters');
    var prog = cs.filter(function (c) { return !isSampled(c); });
    var samp = cs.filter(function (c) { return isSampled(c); });
    if (prog.length) layoutTable(s, d, 'counters', prog, counterName);
    else note(s, 'no program counters');
    if (samp.length) {
      var det = add(s, h('details'));
      det.setAttribute('data-id', 'sampled-counters');
      add(det, h('summary', null, 'sampled counters (' + samp.length + ')'));
      layoutTable(det, d, 'sampled_counters', samp, counterName);
    }
    counterCharts(s, d);
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
    /* the results document's facts, tables and rows, laid out */
    layoutFacts(s, d, 'request_facts', r);
    var en = r.energy;
    if (isRecord(en) && typeof en.unavailable === 'string')
      add(s, h('p', 'pp-unavail', 'energy per request: unavailable: ' +
        en.unavailable));
    else if (isRecord(en) && isNum(en.joules_per_request))
      add(s, h('p', null, 'energy per completed request: ' +
        fmtJoules(en.joules_per_request) + (typeof en.sources === 'string'
          ? ' (' + en.sources + ' energy of the whole run / the completed ' +
            'requests)' : '')));
    /* the latency rows of the results document, as members e2e, ttft,
     * tpot and itl */
    var lat = ['e2e', 'ttft', 'tpot', 'itl'].filter(function (k) {
      return isRecord(r[k]);
    }).map(function (k) { return r[k]; });
    if (lat.length) {
      add(s, h('h3', null, 'latency'));
      layoutTable(s, d, 'request_latency', lat, function (x) {
        return String(x.metric);
      });
    }
    add(s, h('h3', null, 'SLO'));
    if (isRecord(r.slo)) layoutFacts(s, d, 'request_slo', r.slo);
    else note(s, 'no SLO set (pipeprof report --slo, or PIPEPROF_SLO)');
    if (isRecord(r.validity)) {
      add(s, h('h3', null, 'validity'));
      layoutFacts(s, d, 'request_validity', r.validity);
    }
    var b = r.batches;
    if (isRecord(b) && b.count > 0) {
      add(s, h('h3', null, 'batches'));
      layoutFacts(s, d, 'request_batches', b);
      if (Array.isArray(b.by_size) && b.by_size.length)
        layoutTable(s, d, 'request_batch_sizes', b.by_size.filter(isRecord),
          function (x) { return String(x.size); });
    }
    /* Fields added later to the requests object. */
    var known = ['available', 'requests', 'completed', 'failed', 'unfinished',
      'warmup_excluded', 'orphan_events', 'output_tokens', 'span_ns',
      'requests_per_s', 'output_tokens_per_s', 'e2e', 'ttft', 'tpot', 'itl',
      'slo', 'validity', 'batches', 'lost', 'energy'];
    var extra = Object.keys(r).filter(function (k) {
      return known.indexOf(k) < 0;
    });
    if (extra.length) {
      add(s, h('h3', null, 'more'));
      renderObject(s, r, 1, known);
    }
  }

  /* ---- system: designed tables and time series ------------------------ */

  /* "cpu_busy_pct" -> label "CPU busy", unit 'pct'. */
  var WORDS = {cpu: 'CPU', psi: 'pressure', mem: 'memory', rss: 'RSS',
               hwm: 'peak RSS (VmHWM)', vsize: 'virtual size', ctxt:
               'context switches', intr: 'interrupts', minflt: 'minor faults',
               majflt: 'major faults', io: 'I/O', numa: 'NUMA', gpu: 'GPU',
               ipc: 'IPC', mhz: 'MHz', vol: 'voluntary', nonvol:
               'involuntary', load1: 'load (1 min)', procs: 'processes'};

  function metricUnit(key) {
    key = String(key);
    if (/_per_s$/.test(key)) return /bytes_per_s$/.test(key) ? 'bytes/s'
      : 'rate';
    if (/_pct$/.test(key)) return 'pct';
    if (/_bytes(_total)?$/.test(key)) return 'bytes';
    if (/_ns$/.test(key)) return 'ns';
    if (/_s$/.test(key)) return 's';
    if (/_mhz$/.test(key)) return 'MHz';
    if (/_j$/.test(key)) return 'J';
    if (/_w$/.test(key)) return 'W';
    if (/_c$/.test(key)) return '\u00b0C';
    return '';
  }

  function metricLabel(key) {
    var k = String(key).replace(/_(per_s|pct|bytes_total|bytes|ns|s|mhz|j|w|c)$/,
                                function (m, u) {
                                  return u === 'bytes_total' ? '_total' : '';
                                });
    return k.split(/[_.]/).map(function (w) {
      return has(WORDS, w) ? WORDS[w] : w;
    }).join(' ');
  }

  function fmtMetric(unit, v) {
    if (unit === 's') return isNum(v) ? fmtNs(v * 1e9) : '\u2013';
    if (unit === 'bytes/s') return fmtByteRate(v);
    return fmtUnit(unit, v);
  }

  function isStats(v) {
    return isRecord(v) && has(v, 'mean') && has(v, 'max') && has(v, 'samples');
  }

  /* A group of the system object: its sampled figures as one table
   * (mean, min, max, last), its totals as facts, its tables as tables. */
  function systemGroup(parent, name, obj) {
    var facts = [], stats = [], arrays = [], objs = [];
    Object.keys(obj).forEach(function (k) {
      var v = obj[k];
      if (k === 'unavailable') return;
      if (isStats(v)) stats.push(k);
      else if (isScalar(v)) facts.push(k);
      else if (Array.isArray(v)) arrays.push(k);
      else objs.push(k);
    });
    if (facts.length) {
      var grid = add(parent, h('div', 'pp-facts'));
      facts.forEach(function (k) {
        var v = obj[k], u = metricUnit(k);
        fact(grid, metricLabel(k), typeof v === 'string' ? v
          : typeof v === 'boolean' ? (v ? 'yes' : 'no')
          : fmtMetric(u, v));
      });
    }
    if (stats.length)
      table(parent, [
        {key: 'label', label: 'measure'},
        {key: 'mean', label: 'mean', num: true, text: function (r) {
          return fmtMetric(r.unit, r.s.mean);
        }, value: function (r) { return r.s.mean; }},
        {key: 'min', label: 'min', num: true, text: function (r) {
          return fmtMetric(r.unit, r.s.min);
        }, value: function (r) { return r.s.min; }},
        {key: 'max', label: 'max', num: true, text: function (r) {
          return fmtMetric(r.unit, r.s.max);
        }, value: function (r) { return r.s.max; }},
        {key: 'last', label: 'last', num: true, text: function (r) {
          return fmtMetric(r.unit, r.s.last);
        }, value: function (r) { return r.s.last; }},
        {key: 'samples', label: 'samples', num: true, text: function (r) {
          return fmtNum(r.s.samples);
        }, value: function (r) { return r.s.samples; }}
      ], stats.map(function (k) {
        return {label: metricLabel(k), unit: metricUnit(k), s: obj[k]};
      }), {id: 'sys-' + name, sortable: false});
    arrays.forEach(function (k) {
      var arr = obj[k].filter(isRecord);
      if (!arr.length) return;
      add(parent, h('h4', null, metricLabel(k)));
      var keys = [];
      arr.forEach(function (o) {
        Object.keys(o).forEach(function (c) {
          if (keys.indexOf(c) < 0) keys.push(c);
        });
      });
      table(parent, keys.map(function (c) {
        var u = metricUnit(c);
        var text = arr.some(function (o) { return typeof o[c] === 'string'; });
        return {key: c, label: metricLabel(c), num: !text,
                text: function (r) {
                  if (typeof r[c] === 'string') return r[c];
                  if (/^(first|last)_seen_s$/.test(c))
                    return fmtRelS(r[c]);
                  return u === '' && isNum(r[c]) && Number.isInteger(r[c])
                    ? String(r[c]) : fmtMetric(u, r[c]);
                }};
      }), arr, {id: 'sys-' + name + '-' + k});
    });
    objs.forEach(function (k) {
      var sub = add(parent, h('div', 'pp-sub'));
      add(sub, h('h4', null, metricLabel(k)));
      var v = obj[k];
      var vals = Object.keys(v);
      if (vals.length && vals.every(function (x) { return isFlat(v[x]); })) {
        /* e.g. perf events {name: {value, running_pct}} */
        var cols = [];
        vals.forEach(function (x) {
          Object.keys(v[x]).forEach(function (c) {
            if (cols.indexOf(c) < 0) cols.push(c);
          });
        });
        table(sub, [{key: 'name', label: 'name'}].concat(cols.map(function (c) {
          return {key: c, label: metricLabel(c), num: true,
                  text: function (r) { return fmtMetric(metricUnit(c), r[c]); }};
        })), vals.map(function (x) {
          var o = Object.assign({}, v[x]);
          o.name = x;
          return o;
        }), {id: 'sys-' + name + '-' + k});
      } else {
        systemGroup(sub, name + '-' + k, v);
      }
    });
  }

  var SYSTEM_TITLES = {
    run: 'the run', host: 'host', process_tree: 'process tree',
    perf: 'hardware counters', energy: 'energy', gpu: 'GPU (NVML)',
    unavailable: 'not measured'
  };

  /* The process tree: the results document's facts, its sampled
   * measures (the members with a label) and the sampler's process and
   * thread tables. */
  function renderTree(s, d, tree) {
    layoutFacts(s, d, 'process_tree', tree);
    var rows = [];
    Object.keys(tree).forEach(function (m) {
      if (isStats(tree[m]) && typeof tree[m].label === 'string')
        rows.push(tree[m]);
    });
    var ml = d.layout.process_tree_measures;
    if (isRecord(ml) && (rows.length || Array.isArray(ml.remarks) &&
        ml.remarks.length)) {
      add(s, h('h4', null, String(ml.title)));
      if (rows.length)
        layoutTable(s, d, 'process_tree_measures', rows, function (r) {
          return String(r.label);
        });
      else ml.remarks.forEach(function (m) { note(s, String(m)); });
    }
    [['tree_processes', 'processes'], ['tree_threads', 'threads']]
      .forEach(function (x) {
        var lay = d.layout[x[0]];
        if (!isRecord(lay) || !Array.isArray(tree[x[1]])) return;
        add(s, h('h4', null, String(lay.title)));
        layoutTable(s, d, x[0], tree[x[1]].filter(isRecord), function (r) {
          return String(r.name);
        });
      });
  }

  function renderSystem(app, d) {
    if (!has(d, 'system')) return;
    var s = section(app, 'pp-system', 'system');
    var sys = d.system;
    var ser = seriesList(d, 'counters');
    var lib = ser.list.filter(function (c) {
      return isSampled(c) && !/^(gpu|cuda)/.test(String(c.name));
    });
    if (sys === null) {
      note(s, 'no system samples in this trace (pipeprof run, or ' +
        'PIPEPROF_SAMPLE_HZ, records them)');
    } else if (!isRecord(sys)) {
      renderValue(s, 'system', sys, 0);
    } else {
      Object.keys(sys).forEach(function (k) {
        if (k === 'unavailable') return;
        var sub = add(s, h('div', 'pp-system-part'));
        sub.setAttribute('data-key', k);
        add(sub, h('h3', null, SYSTEM_TITLES[k] || metricLabel(k)));
        if (k === 'run' && isRecord(sys[k]) && isRecord(d.layout) &&
            isRecord(d.layout.system_run)) {
          layoutFacts(sub, d, 'system_run', sys[k]);
        } else if (k === 'host' && isRecord(sys[k]) && isRecord(d.layout) &&
            isRecord(d.layout.system_host)) {
          /* the machine's measures: the results document's table (its
           * members with a label), the rest as before */
          var host = sys[k], rows = [], rest = {};
          Object.keys(host).forEach(function (m) {
            if (isStats(host[m]) && typeof host[m].label === 'string')
              rows.push(host[m]);
            else rest[m] = host[m];
          });
          layoutTable(sub, d, 'system_host', rows, function (r) {
            return String(r.label);
          });
          if (Array.isArray(d.layout.system_host.remarks) && !rows.length)
            d.layout.system_host.remarks.forEach(function (m) {
              note(sub, String(m));
            });
          delete rest.sampler_hz; /* the table's note says them */
          delete rest.samples;
          /* per core, the machine's facts, temperatures, NUMA nodes: the
           * document's tables (the per-core arrays are the same figures
           * in the summary's older shape) */
          ['cores', 'cpu_busy_max_pct', 'cpu_freq_mean_mhz',
           'cpu_throttle_total', 'temperatures', 'numa_used_max_bytes']
            .forEach(function (m) { delete rest[m]; });
          [['cpu_cores', 'cores', 'cpu'], ['machine'], ['temperatures',
            'temperatures', 'sensor'], ['numa', 'numa_used_max_bytes',
            'node']].forEach(function (x) {
              var lay = d.layout[x[0]];
              if (x[0] === 'machine') { /* the facts, as the text's order */
                if (!isRecord(lay) || !Array.isArray(lay.facts)) return;
                lay.facts.forEach(function (f) {
                  if (isRecord(f)) delete rest[f.key];
                });
                layoutFacts(sub, d, 'machine', host);
                return;
              }
              if (!isRecord(lay) || !Array.isArray(host[x[1]])) return;
              add(sub, h('h4', null, String(lay.title)));
              layoutTable(sub, d, x[0], host[x[1]].filter(isRecord),
                function (r) { return String(r[x[2]]); });
            });
          delete rest.throttle_sampled;
          if (Object.keys(rest).length) systemGroup(sub, k, rest);
        } else if (k === 'perf' && isRecord(sys[k]) && isRecord(d.layout) &&
            isRecord(d.layout.perf)) {
          /* the counted events (named members) and their ratios */
          var ev = isRecord(sys[k].events) ? sys[k].events : {};
          layoutTable(sub, d, 'perf', Object.keys(ev).filter(function (n) {
            return isRecord(ev[n]);
          }).map(function (n) {
            var r = {name: n};
            Object.keys(ev[n]).forEach(function (f) { r[f] = ev[n][f]; });
            return r;
          }), function (r) { return r.name; });
          if (isRecord(d.layout.perf_ratios))
            layoutFacts(sub, d, 'perf_ratios', sys[k]);
        } else if (k === 'energy' && isRecord(sys[k]) &&
            isRecord(d.layout) && isRecord(d.layout.energy)) {
          if (isRecord(d.layout.energy_domains) &&
              Array.isArray(sys[k].domains))
            layoutTable(sub, d, 'energy_domains',
              sys[k].domains.filter(isRecord), function (r) {
                return String(r.name);
              });
          layoutFacts(sub, d, 'energy', sys[k]);
        } else if (k === 'process_tree' && isRecord(sys[k]) &&
            isRecord(d.layout) && isRecord(d.layout.process_tree)) {
          renderTree(sub, d, sys[k]);
        } else if (isRecord(sys[k])) systemGroup(sub, k, sys[k]);
        else renderValue(sub, k, sys[k], 1);
      });
      if (has(sys, 'unavailable')) {
        var sub = add(s, h('div', 'pp-system-part'));
        sub.setAttribute('data-key', 'unavailable');
        add(sub, h('h3', null, SYSTEM_TITLES.unavailable));
        unavailableList(sub, sys.unavailable);
      }
    }
    if (lib.length) {
      add(s, h('h3', null, 'over time'));
      metricCharts(s, 'sys', lib);
    }
  }

  var METRIC_GROUPS = [
    [/^sys\.cpu\d*\./, 'host CPU'], [/^sys\.(mem|swap|numa)/, 'host memory'],
    [/^sys\.psi\./, 'pressure stall (PSI)'], [/^sys\./, 'host'],
    [/^proc\.thread\./, 'threads'], [/^proc\./, 'process tree'],
    [/^perf\./, 'hardware counters'], [/^(power|energy)\./, 'power and energy'],
    [/^gpu/, 'GPU'], [/^cuda/, 'device memory'], [/./, 'other']
  ];

  /* Library metric series as charts: grouped by what they measure, one
   * chart per group and unit (at most 8 series each). */
  function metricCharts(parent, prefix, list) {
    var groups = [], byKey = {};
    list.forEach(function (c) {
      var name = String(c.name), g = 'other';
      for (var i = 0; i < METRIC_GROUPS.length; i++)
        if (METRIC_GROUPS[i][0].test(name)) {
          g = METRIC_GROUPS[i][1];
          break;
        }
      var unit = metricUnit(name.replace(/\./g, '_'));
      var key = g + '|' + unit;
      if (!byKey[key]) {
        byKey[key] = {group: g, unit: unit, items: []};
        groups.push(byKey[key]);
      }
      byKey[key].items.push(c);
    });
    var wrap = add(parent, h('div', 'pp-chart-grid'));
    groups.forEach(function (g, gi) {
      for (var at = 0; at < g.items.length; at += 8) {
        var part = g.items.slice(at, at + 8);
        var title = g.group + (g.unit ? ' (' + (g.unit === 'pct' ? '%'
          : g.unit) + ')' : '') + (g.items.length > 8 ? ' ' + (at / 8 + 1)
          : '');
        seriesChart(wrap, prefix + '-' + g.group + '-' + g.unit + '-' + at,
          title, part, null, g.unit === 'pct' ? 'pct' : g.unit,
          function (e) {
            return [{label: String(e.name), values: e.value}];
          }, {height: 180});
      }
    });
  }

  /* ---- designed sections: pipeline, queues, advice, GPU, memory ------- */

  /* A time of the trace as an offset from its start: "+12.4 s". */
  function rel(d, ns) {
    if (!isNum(ns)) return '\u2013';
    if (!isNum(d.t0_ns)) return fmtNs(ns);
    var off = ns - d.t0_ns;
    return (off < 0 ? '\u2212' : '+') + fmtNs(Math.abs(off));
  }

  function col(key, label, unit, extra) {
    var c = {key: key, label: label, num: unit !== 'text',
             text: function (r) {
               return unit === 'text' ? (r[key] === null ||
                 r[key] === undefined ? '\u2013' : String(r[key]))
                 : fmtUnit(unit, r[key]);
             }};
    Object.keys(extra || {}).forEach(function (k) { c[k] = extra[k]; });
    return c;
  }

  function pctBar(key) {
    return function (r) { return isNum(r[key]) ? r[key] / 100 : null; };
  }

  function renderAdvice(app, d) {
    var recs = Array.isArray(d.recommendations) ? d.recommendations : null;
    if (!recs) return;
    var s = section(app, 'pp-advice', 'recommendations');
    /* the layout's note and empty text: the document's words */
    var lay = isRecord(d.layout) && isRecord(d.layout.recommendations)
      ? d.layout.recommendations : {};
    if (!recs.length) {
      note(s, typeof lay.empty === 'string' ? lay.empty
        : 'no rule fired: nothing stands out in this trace');
      return;
    }
    if (typeof lay.note === 'string') note(s, lay.note);
    var ul = add(s, h('ul', 'pp-recs'));
    recs.forEach(function (r) {
      if (!isRecord(r)) return;
      var li = add(ul, h('li', 'pp-rec'));
      var sev = String(r.severity || 'info');
      var b = add(li, h('span', 'pp-sev pp-sev-' +
        sev.replace(/[^a-z]/g, ''), sev));
      b.setAttribute('title', 'rule ' + String(r.rule || ''));
      add(li, h('span', 'pp-rec-text', ' ' + String(r.text || '')));
      if (r.evidence) add(li, h('div', 'pp-dim pp-rec-ev', 'evidence: ' +
        String(r.evidence)));
    });
  }

  function renderAlerts(app, d) {
    var al = Array.isArray(d.alerts) ? d.alerts : null;
    if (!al) return;
    var s = section(app, 'pp-alerts', 'alerts');
    if (!al.length) {
      note(s, 'no anomaly or resource alert was raised during the run');
      return;
    }
    note(s, 'Raised inside the process by the live statistics, in time ' +
      'order; times from the trace start.');
    table(s, [
      {key: 't_ns', label: 'when', num: true,
       text: function (r) { return rel(d, r.t_ns); }},
      col('type', 'kind', 'text'),
      {key: 'which', label: 'what', text: function (r) {
        return String(r.which || '') + ' ' + String(r.what || '');
      }},
      col('message', 'message', 'text')
    ], al.filter(isRecord), {id: 'alerts'});
  }

  /* Pipeline: the bound, throughput and efficiency, the stages with their
   * busy and waiting time, stalls and the flows' critical paths. */
  function renderPipeline(app, d) {
    var p = d.pipeline;
    if (!isRecord(p)) return;
    var stages = Array.isArray(p.stages) ? p.stages : [];
    var flows = Array.isArray(p.flows) ? p.flows : [];
    if (!stages.length && !flows.length &&
        !(Array.isArray(p.longest_stalls) && p.longest_stalls.length))
      return;
    var s = section(app, 'pp-pipeline', 'pipeline');
    layoutFacts(s, d, 'pipeline_facts', p);

    if (stages.length) {
      add(s, h('h3', null, 'stages'));
      var queues = {};
      (Array.isArray(d.queues) ? d.queues : []).forEach(function (q) {
        if (isRecord(q)) queues[q.name] = q;
      });
      layoutTable(s, d, 'stages', stages.filter(isRecord), function (r) {
        return String(r.name);
      });
      stageBars(s, d, p, stages, queues);
    }
    stallTable(s, d, p);
    if (flows.length) {
      add(s, h('h3', null, 'flows'));
      layoutTable(s, d, 'flows', flows.filter(isRecord), function (r) {
        return String(r.name);
      });
    }
    flows.forEach(function (f, i) { if (isRecord(f)) flowView(s, d, f, i); });
  }

  /* Per stage a bar over the window: busy, waiting for input (recorded
   * waits on its input queue), blocked on output (on its output queue). */
  function stageBars(s, d, p, stages, queues) {
    add(s, h('h3', null, 'where each stage\u2019s time goes'));
    var win = isNum(p.window_start_ns) && isNum(p.window_end_ns)
      ? p.window_end_ns - p.window_start_ns : null;
    var box = add(s, h('div', 'pp-stagebars'));
    box.setAttribute('data-chart', 'stage-bars');
    var drawn = 0;
    stages.forEach(function (st) {
      var row = add(box, h('div', 'pp-sb-row'));
      add(row, h('div', 'pp-sb-label', String(st.name)));
      var track = add(row, h('div', 'pp-sb-track'));
      var workers = isNum(st.workers) && st.workers > 0 ? st.workers : 1;
      var inq = queues[st.in_queue], outq = queues[st.out_queue];
      var parts = [
        ['busy', st.busy_ns, 'pp-sb-busy'],
        ['waiting for input', inq ? inq.consumer_waited_ns : null,
         'pp-sb-in'],
        ['blocked on output', outq ? outq.producer_blocked_ns : null,
         'pp-sb-out']
      ];
      var words = [];
      parts.forEach(function (pt) {
        if (!isNum(pt[1])) return;
        words.push(pt[0] + ' ' + fmtNs(pt[1]));
        if (!win || win <= 0) return;
        var w = Math.max(0, Math.min(1, pt[1] / (win * workers))) * 100;
        var seg = add(track, h('span', 'pp-sb-seg ' + pt[2]));
        seg.style.width = w.toFixed(2) + '%';
        seg.setAttribute('title', st.name + ': ' + pt[0] + ' ' +
          fmtNs(pt[1]));
        if (w > 0) drawn++;
      });
      add(row, h('div', 'pp-sb-words pp-dim', words.join(' \u00b7 ')));
    });
    box.setAttribute('data-points', String(drawn));
    var lg = add(s, h('div', 'pp-legend'));
    [['busy', 'pp-sb-busy'], ['waiting for input (recorded waits on the ' +
      'input queue)', 'pp-sb-in'], ['blocked on output (waits on a full ' +
      'output queue)', 'pp-sb-out']].forEach(function (x) {
      var it = add(lg, h('span'));
      add(it, h('span', 'pp-swatch ' + x[1]));
      add(it, h('span', null, x[0]));
    });
    note(s, 'Bars: each time over workers \u00d7 the pipeline window' +
      (win ? ' (' + fmtNs(win) + ')' : '') + '; the rest is time outside ' +
      'the stage\u2019s zones and recorded waits.');
  }

  function stallTable(s, d, p) {
    var st = Array.isArray(p.longest_stalls) ? p.longest_stalls : [];
    if (!st.length) return;
    add(s, h('h3', null, 'longest stalls'));
    layoutTable(s, d, 'stalls', st.filter(isRecord), function (r) {
      return String(r.queue);
    }, null, {sorted: 'duration_ns'});
  }

  function segText(g) {
    return g.kind === 'wait'
      ? 'queued in ' + (g.name === null || g.name === undefined
        ? '(no queue)' : String(g.name))
      : String(g.name);
  }

  /* A critical path as one bar: zone segments solid, waits hatched. */
  function pathBar(parent, segs, total) {
    var bar = add(parent, h('div', 'pp-path'));
    var n = 0;
    segs.forEach(function (g, i) {
      if (!isRecord(g) || !isNum(g.ns) || !(total > 0)) return;
      var seg = add(bar, h('span', 'pp-path-seg ' + (g.kind === 'wait'
        ? 'pp-path-wait' : 'pp-path-zone')));
      seg.style.width = (g.ns / total * 100).toFixed(3) + '%';
      if (g.kind !== 'wait') seg.style.background = PALETTE[i % PALETTE.length];
      seg.setAttribute('title', segText(g) + ': ' + fmtNs(g.ns));
      n++;
    });
    bar.setAttribute('data-points', String(n));
    return bar;
  }

  function flowView(s, d, f, idx) {
    add(s, h('h3', null, 'flow \u201c' + String(f.name) + '\u201d'));
    var where = Array.isArray(f.where) ? f.where.filter(isRecord) : [];
    if (where.length) {
      add(s, h('h4', null, 'critical path: where the items\u2019 time goes ' +
        '(summed over items)'));
      var sum = 0;
      where.forEach(function (g) { if (isNum(g.ns)) sum += g.ns; });
      var box = pathBar(s, where, sum);
      box.setAttribute('data-chart', 'flow-' + idx + '-where');
      table(s, [
        {key: 'what', label: 'segment', text: segText,
         value: segText},
        {key: 'kind', label: 'kind', text: function (g) {
          return g.kind === 'wait' ? 'waiting' : 'working';
        }},
        col('ns', 'time', 'ns', {bar: function (g) {
          return sum > 0 && isNum(g.ns) ? g.ns / sum : null;
        }})
      ], where, {id: 'flow-' + idx + '-where', sorted: 'ns'});
    }
    ['median', 'slowest'].forEach(function (k) {
      var it = f[k];
      if (!isRecord(it) || !Array.isArray(it.segments)) return;
      add(s, h('h4', null, (k === 'median' ? 'the median item' :
        'the slowest item') + ' (#' + it.id + ', started ' +
        rel(d, it.start_ns) + '): ' + fmtNs(it.total_ns) + ', of which ' +
        fmtNs(it.wait_ns) + ' queued'));
      var b = pathBar(s, it.segments, it.total_ns);
      b.setAttribute('data-chart', 'flow-' + idx + '-' + k);
      add(s, h('p', 'pp-path-words', it.segments.filter(isRecord)
        .map(function (g) {
          return segText(g) + ' ' + fmtNs(g.ns);
        }).join(' \u2192 ')));
    });
  }

  /* A table of the results document (docs/internals/results.md) as the
   * summary's "layout" describes it (and moreCols, the page's own columns
   * of figures that sit beside the table: the energy per frame), laid out as the text report lays it
   * out: the columns that share a label in one cell ("a / b"), a share
   * with its bar, no value as the column's "none" text, an unavailable
   * value as such; each row's notes as a warning after the table. The
   * figures and their text come from the document; nothing is computed
   * here. */
  /* A value of the document as every view shows it (c: its column or
   * fact, with unit, bool and none): "unavailable" (the reason is said
   * once, by the caller), the column's none for no value. */
  function layoutCell(c, v) {
    if (isRecord(v) && typeof v.unavailable === 'string')
      return 'unavailable';
    if (v === null || v === undefined)
      return typeof c.none === 'string' ? c.none : '\u2013';
    if (c.bool || c.unit === 'bool') /* "yes", or the column's none */
      return v === true ? 'yes' : typeof c.none === 'string' ? c.none : 'no';
    if (c.unit === 'text') return String(v);
    /* a count: whole numbers exactly, others as the text report's */
    if (c.unit === 'count')
      return Number.isInteger(v) ? String(v) : fmtSig3(v);
    return fmtUnit(c.unit, v);
  }

  /* A table of facts (the layout's "kind": "facts") as a grid: each
   * fact's label and its value in obj (the object the summary writes its
   * members into), an unavailable one with its reason, notes under it. */
  function layoutFacts(s, d, id, obj) {
    var lay = isRecord(d.layout) && isRecord(d.layout[id]) ? d.layout[id]
      : null;
    if (!lay || lay.kind !== 'facts' || !Array.isArray(lay.facts)) {
      warn(s, 'this summary has no layout for its ' + id + ' (a summary ' +
        'written by an older pipeprof)');
      return null;
    }
    /* the heading is the caller's: the section it draws the facts in */
    if (typeof lay.note === 'string') note(s, lay.note);
    var grid = add(s, h('div', 'pp-facts'));
    grid.setAttribute('data-facts', id);
    lay.facts.filter(isRecord).forEach(function (f) {
      var v = isRecord(obj) ? obj[f.key] : undefined;
      var why = isRecord(v) && typeof v.unavailable === 'string'
        ? v.unavailable : null;
      /* unavailable: the word as the value, the reason under it */
      var el = fact(grid, String(f.label), why !== null ? 'unavailable'
        : layoutCell(f, v));
      el.parentNode.setAttribute('data-k', String(f.key));
      if (why !== null) {
        el.className += ' pp-fact-unavail';
        add(el.parentNode, h('div', 'pp-fact-n', why));
      }
      if (typeof f.notes === 'string' && f.notes)
        add(el.parentNode, h('div', 'pp-fact-n', f.notes));
    });
    (Array.isArray(lay.warnings) ? lay.warnings : []).forEach(function (m) {
      warn(s, String(m));
    });
    (Array.isArray(lay.remarks) ? lay.remarks : []).forEach(function (m) {
      note(s, String(m));
    });
    return grid;
  }

  function layoutTable(s, d, id, rows, rowName, moreCols, opts) {
    opts = opts || {};
    var lay = isRecord(d.layout) && isRecord(d.layout[id]) ? d.layout[id]
      : null;
    if (!lay || !Array.isArray(lay.columns)) {
      warn(s, 'this summary has no layout for its ' + id + ' (a summary ' +
        'written by an older pipeprof)');
      return;
    }
    if (typeof lay.note === 'string') note(s, lay.note);
    if (typeof lay.hidden_by === 'string') /* e.g. the profiler's threads */
      rows = rows.filter(function (r) { return r[lay.hidden_by] !== true; });
    if (!rows.length) {
      if (typeof lay.empty === 'string') note(s, lay.empty);
      return null;
    }
    function get(r, key) {
      var v = r;
      String(key).split('.').forEach(function (k) {
        v = isRecord(v) ? v[k] : undefined;
      });
      return v;
    }
    var cellText = layoutCell;
    function cellOf(c, r) { /* a "row" column: the row says its unit */
      var v = get(r, c.key);
      return c.unit === 'row' ? cellText({unit: String(r.unit || 'number'),
                                          none: c.none}, v)
        : cellText(c, v);
    }
    var groups = [];
    lay.columns.filter(isRecord).forEach(function (c) {
      var g = groups[groups.length - 1];
      if (g && g.label === c.label) g.cols.push(c);
      else groups.push({label: String(c.label), cols: [c]});
    });
    /* a group after the first that no row has anything in (no value, no
     * reason) says nothing, as in the text report; nor does a detail
     * column whose values are all 0 */
    groups = groups.filter(function (g, gi) {
      return gi === 0 || rows.some(function (r) {
        return g.cols.some(function (c) {
          var v = get(r, c.key);
          if (v === null || v === undefined) /* "host", "unbounded" */
            return typeof c.none === 'string' && c.none !== '';
          return !g.cols[0].detail || v !== 0;
        });
      });
    });
    /* a group whose every value is unavailable for one reason (a figure
     * the producer does not keep) is said once, not in every row */
    var said = {}; /* reasons said once in a note, not in the cells */
    function allWhy(c) { /* the one reason of a column unavailable in
                            every row, or null */
      var why = null;
      return rows.every(function (r) {
        var v = get(r, c.key);
        if (!isRecord(v) || typeof v.unavailable !== 'string') return false;
        if (why === null) why = v.unavailable;
        return v.unavailable === why;
      }) ? why : null;
    }
    groups = groups.filter(function (g) {
      var whys = g.cols.map(allWhy);
      var all = whys.every(function (w) { return w !== null; });
      whys.forEach(function (w) {
        if (w !== null && !said[w]) {
          said[w] = true;
          note(s, g.label + ': ' + (all ? '' : 'partly ') + 'unavailable: ' +
            w);
        }
      });
      return !all;
    });
    /* a row unavailable in several columns for one reason (a zone SLO
     * whose zone was never recorded) says it once, under the table */
    var rowWhy = new Map();
    rows.forEach(function (r) {
      var why = null, n = 0, one = true;
      groups.forEach(function (g) {
        g.cols.forEach(function (c) {
          var v = get(r, c.key);
          if (!isRecord(v) || typeof v.unavailable !== 'string') return;
          n++;
          if (why === null) why = v.unavailable;
          else if (why !== v.unavailable) one = false;
        });
      });
      if (n >= 2 && one) rowWhy.set(r, why);
    });
    var made = table(s, groups.map(function (g) {
      var c0 = g.cols[0], num = c0.unit !== 'text';
      return {
        key: c0.key, label: g.label, num: num,
        cls: num ? 'pp-n' : (c0 === groups[0].cols[0] ? 'pp-t pp-name'
          : 'pp-t pp-nw'),
        value: function (r) {
          var v = get(r, c0.key);
          return isNum(v) || typeof v === 'string' ? v : null;
        },
        text: function (r) {
          /* an unavailable value's reason, once after the group's values;
           * a group unavailable for one reason in every cell, once */
          var why = null, cols = g.cols;
          if (cols.length > 1 && cols.every(function (c) {
            var v = get(r, c.key), v0 = get(r, cols[0].key);
            return isRecord(v) && isRecord(v0) &&
              typeof v.unavailable === 'string' &&
              v.unavailable === v0.unavailable;
          })) cols = cols.slice(0, 1);
          return cols.map(function (c) {
            var v = get(r, c.key);
            if (why === null && isRecord(v) &&
                typeof v.unavailable === 'string') why = v.unavailable;
            return cellOf(c, r);
          }).join(' / ') + (why !== null && !said[why] && !rowWhy.has(r)
            ? ' (' + why + ')' : '');
        },
        bar: c0.bar ? function (r) {
          var v = get(r, c0.key);
          return isNum(v) ? v / 100 : null;
        } : opts.bars && opts.bars[c0.key] ? opts.bars[c0.key].bar
          : undefined,
        bar2: opts.bars && opts.bars[c0.key] ? opts.bars[c0.key].bar2
          : undefined
      };
    }).reduce(function (all, c, i) { /* the page's columns after the first */
      all.push(c);
      if (i === 0 && opts.afterFirst) all = all.concat(opts.afterFirst);
      return all;
    }, []).concat(moreCols || []), rows, {id: id, sorted: opts.sorted,
      rowTitle: opts.rowTitle});
    rows.forEach(function (r) {
      if (rowWhy.has(r))
        note(s, rowName(r) + ': unavailable: ' + rowWhy.get(r));
      if (typeof r.notes === 'string' && r.notes)
        note(s, rowName(r) + ': ' + r.notes);
    });
    if (Array.isArray(lay.warnings))
      lay.warnings.forEach(function (m) { warn(s, String(m)); });
    if (Array.isArray(lay.remarks))
      lay.remarks.forEach(function (m) { note(s, String(m)); });
    return made;
  }

  /* What the program said of its run (pp_metadata), as the document's
   * table. */
  function renderMetadata(app, d) {
    if (!Array.isArray(d.metadata) || !d.metadata.length) return;
    var s = section(app, 'pp-metadata', 'metadata');
    layoutTable(s, d, 'metadata', d.metadata.filter(isRecord),
      function (r) { return String(r.key); });
  }

  function renderQueues(app, d) {
    var q = d.queues;
    if (q === undefined || (Array.isArray(q) && !q.length)) return;
    var s = section(app, 'pp-queues', 'queues');
    if (isRecord(q) && q.available === false) {
      unavailable(s, q.reason);
      return;
    }
    if (!Array.isArray(q)) {
      renderValue(s, 'queues', q, 0);
      return;
    }
    var qs = q.filter(isRecord);
    layoutTable(s, d, 'queues', qs, function (r) {
      return 'queue ' + String(r.name);
    });
    var ser = seriesList(d, 'queues');
    seriesChart(s, 'queue-depth', 'queue depth over time', ser.list, ser.why,
      'count', function (e) {
        return [{label: String(e.name), values: e.depth}];
      });
    cdfChart(s, 'queue-wait-cdf', 'wait per item: share of items that ' +
      'waited at most x (log axis)', qs.map(function (r) {
        return {name: r.name, hist: isRecord(r.wait) ? r.wait.hist : null};
      }));
  }

  function renderPools(app, d) {
    var mp = d.memory_pools;
    if (mp === undefined || mp === null ||
        (Array.isArray(mp) && !mp.length)) return;
    var s = section(app, 'pp-pools', 'memory pools');
    if (typeof mp === 'string') {
      add(s, h('p', 'pp-unavail', mp));
      return;
    }
    if (!Array.isArray(mp)) {
      renderValue(s, 'memory_pools', mp, 0);
      return;
    }
    layoutTable(s, d, 'memory_pools', mp.filter(isRecord), function (r) {
      return 'pool ' + String(r.name);
    });
  }

  function renderGpu(app, d) {
    var gz = d.gpu_zones, dm = d.device_memory, cu = d.cuda;
    var ser = seriesList(d, 'counters');
    var gpuSeries = ser.list.filter(function (c) {
      return isSampled(c) && /^(gpu|cuda)/.test(String(c.name));
    });
    if (!isRecord(gz) && !isRecord(dm) && !isRecord(cu) && !gpuSeries.length)
      return;
    var s = section(app, 'pp-gpu', 'GPU');
    if (isRecord(gz)) {
      add(s, h('h3', null, 'GPU zones (device time)'));
      if (typeof gz.unavailable === 'string')
        unavailable(s, gz.unavailable);
      var zs = Array.isArray(gz.zones) ? gz.zones.filter(isRecord) : [];
      if (zs.length)
        layoutTable(s, d, 'gpu_zones', zs, function (z) {
          return String(z.name);
        }, null, {sorted: 'total_ns'});
      var tr = Array.isArray(gz.tracks) ? gz.tracks.filter(isRecord) : [];
      if (tr.length)
        table(s, [col('device', 'device', 'count'),
          col('stream', 'stream', 'text'), col('tid', 'launching thread',
          'text'), col('zones', 'zones', 'count')], tr, {id: 'gpu-tracks'});
      var dr = isRecord(gz.dropped) ? gz.dropped : {};
      var lost = Object.keys(dr).filter(function (k) { return dr[k] > 0; });
      if (lost.length)
        warn(s, 'GPU zones not recorded: ' + lost.map(function (k) {
          return pretty(k) + ' ' + dr[k];
        }).join(', '));
      if (isNum(gz.calib_error_ns))
        note(s, 'GPU times are placed on the CPU clock within ' +
          fmtNs(gz.calib_error_ns));
    }
    if (isRecord(dm)) {
      var dml = isRecord(d.layout) ? d.layout.device_memory : null;
      add(s, h('h3', null, isRecord(dml) ? String(dml.title)
        : 'device memory'));
      if (typeof dm.unavailable === 'string') unavailable(s, dm.unavailable);
      var devs = Array.isArray(dm.devices) ? dm.devices.filter(isRecord) : [];
      if (devs.length)
        layoutTable(s, d, 'device_memory', devs, function (r) {
          return 'CUDA device ' + String(r.device);
        });
    }
    if (isRecord(cu)) cudaView(s, d, cu);
    if (gpuSeries.length) {
      add(s, h('h3', null, 'over time'));
      metricCharts(s, 'gpu', gpuSeries);
    }
  }

  function cudaView(s, d, cu) {
    add(s, h('h3', null, 'CUDA activity (CUPTI)'));
    if (typeof cu.unavailable === 'string') {
      unavailable(s, cu.unavailable);
      return;
    }
    var grid = add(s, h('div', 'pp-facts'));
    fact(grid, 'GPU busy', fmtPct(cu.busy_pct) + ' of ' + fmtNs(cu.wall_ns));
    fact(grid, 'GPU idle', fmtNs(cu.idle_ns));
    var rc = isRecord(cu.records) ? cu.records : {};
    fact(grid, 'kernels / copies', fmtNum(rc.kernels) + ' / ' +
      fmtNum(rc.memcpys));
    if (rc.dropped > 0) warn(s, rc.dropped + ' CUPTI records were lost: ' +
      'the figures below miss them');
    if (cu.not_traced) note(s, 'not traced: ' + cu.not_traced);
    ['launch_latency', 'queued_latency'].forEach(function (k) {
      var l = cu[k];
      if (isRecord(l))
        fact(grid, k === 'launch_latency' ? 'launch latency p50 / p99'
          : 'queued latency p50 / p99', fmtNs(l.p50_ns) + ' / ' +
          fmtNs(l.p99_ns));
    });
    var devs = Array.isArray(cu.devices) ? cu.devices.filter(isRecord) : [];
    if (devs.length)
      table(s, [col('device', 'device', 'count'),
        col('busy_pct', 'busy', 'pct', {bar: pctBar('busy_pct')}),
        col('kernels', 'kernels', 'count'), col('kernel_ns', 'kernel time',
        'ns'), col('copies', 'copies', 'count'), col('copy_ns', 'copy time',
        'ns')], devs, {id: 'cuda-devs'});
    var tr = isRecord(cu.transfers) ? cu.transfers : {};
    var dirs = Object.keys(tr).filter(function (k) { return isRecord(tr[k]); });
    if (dirs.length) {
      add(s, h('h4', null, 'transfers'));
      var names = {h2d: 'host \u2192 device', d2h: 'device \u2192 host',
                   d2d: 'device \u2192 device', other: 'other'};
      table(s, [{key: 'dir', label: 'direction', text: function (r) {
          return names[r.dir] || r.dir;
        }}, col('count', 'copies', 'count'), col('bytes', 'bytes', 'bytes'),
        col('time_ns', 'time', 'ns'), col('bandwidth_bytes_per_s',
        'bandwidth', 'text', {num: true, text: function (r) {
          return isNum(r.bandwidth_bytes_per_s)
            ? fmtBytes(r.bandwidth_bytes_per_s) + '/s' : '\u2013';
        }}), col('pageable_bytes', 'from pageable memory', 'bytes')],
        dirs.map(function (k) {
          var o = Object.assign({}, tr[k]);
          o.dir = k;
          return o;
        }), {id: 'cuda-transfers'});
    }
    var ks = Array.isArray(cu.kernels) ? cu.kernels.filter(isRecord) : [];
    if (ks.length) {
      add(s, h('h4', null, 'kernels'));
      table(s, [col('name', 'kernel', 'text'), col('calls', 'calls', 'count'),
        col('total_ns', 'total', 'ns'), col('mean_ns', 'mean', 'ns'),
        col('p50_ns', 'p50', 'ns'), col('p99_ns', 'p99', 'ns'),
        col('gpu_time_pct', 'share of kernel time', 'pct',
            {bar: pctBar('gpu_time_pct')})], ks,
        {id: 'cuda-kernels', sorted: 'total_ns'});
    }
    var st = Array.isArray(cu.stages) ? cu.stages.filter(isRecord) : [];
    if (st.length) {
      add(s, h('h4', null, 'GPU time per stage'));
      table(s, [{key: 'name', label: 'stage', text: function (r) {
          return r.name === null ? '(outside any zone)' : String(r.name);
        }}, col('wall_ns', 'stage time', 'ns'),
        col('gpu_busy_pct', 'GPU busy during it', 'pct',
            {bar: pctBar('gpu_busy_pct')}),
        col('kernels', 'kernels', 'count'), col('kernel_ns', 'kernel time',
        'ns')], st, {id: 'cuda-stages'});
    }
    var sy = Array.isArray(cu.syncs) ? cu.syncs.filter(isRecord) : [];
    if (sy.length) {
      add(s, h('h4', null, 'synchronization'));
      table(s, [col('type', 'call', 'text'), col('count', 'calls', 'count'),
        col('total_ns', 'time', 'ns')], sy, {id: 'cuda-syncs'});
    }
    var api = Array.isArray(cu.api) ? cu.api.filter(isRecord) : [];
    if (api.length) {
      var det = add(s, h('details'));
      det.setAttribute('data-id', 'cuda-api');
      add(det, h('summary', null, 'CUDA API calls (' + api.length + ')'));
      table(det, [col('name', 'function', 'text'), col('domain', 'API',
        'text'), col('calls', 'calls', 'count'), col('total_ns', 'time',
        'ns')], api, {id: 'cuda-api', sorted: 'total_ns'});
    }
  }

  /* ---- charts of the zones, frames and counters sections -------------- */

  function zoneCharts(s, d, zones) {
    add(s, h('h3', null, 'latency distribution'));
    var top = zones.slice().sort(function (a, b) {
      return (b.total_ns || 0) - (a.total_ns || 0);
    }).slice(0, 8);
    var wrap = add(s, h('div', 'pp-chart-grid'));
    cdfChart(wrap, 'zone-cdf', 'share of calls at most x (log axis), the ' +
      top.length + ' zones with the most time', top);
    var pickBox = add(wrap, h('div'));
    var sel = h('select', 'pp-select');
    sel.setAttribute('aria-label', 'zone whose histogram is drawn');
    zones.forEach(function (z, i) {
      var o = add(sel, h('option', null, String(z.name)));
      o.value = String(i);
    });
    var pick = state.select['zone-hist'];
    if (!(pick >= 0 && pick < zones.length))
      pick = zones.indexOf(top[0]);
    sel.value = String(pick);
    var lab = add(pickBox, h('label', 'pp-pick', 'histogram of '));
    lab.appendChild(sel);
    var holder = add(pickBox, h('div'));
    var draw = function () {
      var z = zones[pick];
      holder.textContent = '';
      histChart(holder, 'zone-hist', 'calls per latency bucket (log axis)',
        String(z.name), z.hist);
    };
    sel.addEventListener('change', function () {
      pick = Number(sel.value);
      state.select['zone-hist'] = pick;
      if (charts['zone-hist']) {
        charts['zone-hist'].u.destroy();
        delete charts['zone-hist'];
      }
      draw();
      charts['zone-hist'] = newCharts['zone-hist'];
    });
    draw();
    var ser = seriesList(d, 'zones');
    add(s, h('h3', null, 'over time'));
    var w2 = add(s, h('div', 'pp-chart-grid'));
    seriesChart(w2, 'zone-p50', 'median latency per interval (log axis)',
      ser.list, ser.why, 'ns', function (e) {
        return [{label: String(e.name), values: e.p50_ns}];
      }, {yLog: true});
    seriesChart(w2, 'zone-count', 'calls ending per interval', ser.list,
      ser.why, 'count', function (e) {
        return [{label: String(e.name), values: e.count}];
      });
  }

  function frameCharts(s, d, fr) {
    var ser = seriesList(d, 'frames');
    var wrap = add(s, h('div', 'pp-chart-grid'));
    seriesChart(wrap, 'frame-time', 'frame time over time (mean per ' +
      'interval, dashed: the longest)', ser.list, ser.why, 'ns',
      function (e) {
        return [{label: String(e.name), values: e.frame_ns},
                {label: String(e.name) + ' (longest)',
                 values: e.frame_max_ns, dash: true}];
      });
    if (fr.length === 1)
      histChart(wrap, 'frame-hist', 'frames per frame-time bucket (log ' +
        'axis)', String(fr[0].name), fr[0].hist);
    else
      cdfChart(wrap, 'frame-cdf', 'share of frames at most x (log axis)',
        fr.map(function (f) { return {name: f.name, hist: f.hist}; }));
  }

  function counterCharts(s, d) {
    var ser = seriesList(d, 'counters');
    var prog = ser.list.filter(function (c) { return !isSampled(c); });
    var wrap = add(s, h('div', 'pp-chart-grid'));
    if (!prog.length) {
      chart(wrap, 'counters', {title: 'program counters over time',
        empty: ser.why || 'no program counter series'});
      return;
    }
    prog.forEach(function (c, i) {
      seriesChart(wrap, 'counter-' + i, String(c.name) + ' over time',
        [c], null, metricUnit(String(c.name).replace(/\./g, '_')),
        function (e) {
          return [{label: String(e.name), values: e.value},
                  {label: 'max', values: e.max, dash: true},
                  {label: 'min', values: e.min, dash: true}];
        }, {height: 170});
    });
  }

  function renderReader(app, d) {
    var r = d.reader;
    if (!isRecord(r)) return;
    var s = section(app, 'pp-reader', 'trace file');
    var grid = add(s, h('div', 'pp-facts'));
    if (isNum(r.file_bytes)) fact(grid, 'file size', fmtBytes(r.file_bytes));
    fact(grid, 'chunks read', fmtNum(r.chunks_ok) + (r.chunks_bad > 0
      ? ' (' + r.chunks_bad + ' damaged)' : ''));
    if (r.bytes_skipped > 0) fact(grid, 'bytes skipped',
                                  fmtBytes(r.bytes_skipped));
    fact(grid, 'events read', fmtNum(r.events_read) +
      (isNum(r.events_kept) && r.events_kept < r.events_read
        ? ' (' + fmtNum(r.events_kept) + ' kept for the details)' : ''));
    if (r.events_bad > 0) fact(grid, 'undecodable events',
                               fmtNum(r.events_bad));
    fact(grid, 'ending', r.truncated ? 'truncated inside a chunk'
      : typeof r.write_error === 'string' ? 'write error: ' + r.write_error
      : r.clean_end === false ? 'no END chunk' : 'complete');
    if (typeof d.clock === 'string') fact(grid, 'clock', d.clock);
    if (isNum(d.t0_ns) && isNum(d.t1_ns))
      fact(grid, 'time span', fmtNs(d.t1_ns - d.t0_ns),
        'first event at ' + d.t0_ns + ' ns, last at ' + d.t1_ns +
        ' ns on that clock');
    fact(grid, 'summary format', String(d.schema || '') + ' ' +
      String(d.schema_version || '') + (isNum(d.schema_minor) ? '.' +
        d.schema_minor : ''));
  }

  function renderOthers(app, d) {
    /* the live document's sites past what the live figures keep: said
     * when there are any (a limit hit is never silent), else nothing */
    if (isRecord(d.left_out) && isNum(d.left_out.sites) &&
        d.left_out.sites > 0)
      warn(add(app, h('section', 'pp-left-out')), d.left_out.sites +
        ' counter, frame and queue sites were left out of the live ' +
        'figures (more than they keep); the report of the trace has them');
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

  function finish() {
    var body = document.body;
    ['pp-render-ok', 'pp-render-error'].forEach(function (id) {
      var e = document.getElementById(id);
      if (e) e.parentNode.removeChild(e);
    });
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

  function readJson(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    return JSON.parse(el.textContent);
  }

  /* ---- pipeprof sweep (docs/cli.md#pipeprof-sweep) -------------------- */

  function sweepSections(app, d) {
    var param = String(d.param || 'value');
    var vals = Array.isArray(d.values) ? d.values : [];
    document.title = 'pipeprof sweep: ' + param;
    add(app, h('h1', null, 'pipeprof sweep: ' + param));
    var s = section(app, 'pp-sweep', 'throughput and latency per ' + param);
    var grid = add(s, h('div', 'pp-facts'));
    fact(grid, 'best ' + param, d.best === null || d.best === undefined
      ? 'none' + (isNum(d.latency_bound_ns) ? ' within the bound' : '')
      : String(d.best));
    fact(grid, 'knee', d.knee === null || d.knee === undefined ? '\u2013'
      : String(d.knee));
    fact(grid, 'p99 bound', isNum(d.latency_bound_ns)
      ? fmtNs(d.latency_bound_ns) : 'none');
    fact(grid, 'runs per value', fmtNum(d.repeat));
    var ok = vals.filter(function (v) { return isNum(v.items_per_s); });
    var numeric = ok.length && ok.every(function (v) {
      return isFinite(Number(v.value));
    });
    var xs = ok.map(function (v, i) {
      return numeric ? Number(v.value) : i;
    });
    var item = ok.length ? String(ok[0].item) : 'item';
    var charts2 = add(s, h('div', 'pp-chart-grid'));
    chart(charts2, 'sweep-throughput', {title: item + 's per second',
      x: xs, xKind: 'num', xLabel: param, yUnit: 'rate',
      series: [{label: 'throughput',
                values: ok.map(function (v) { return v.items_per_s; })}],
      empty: ok.length ? null : 'no value ran'});
    chart(charts2, 'sweep-latency', {title: 'latency (' +
      (ok.length && ok[0].latency_of ? ok[0].latency_of : 'none') + ')',
      x: xs, xKind: 'num', xLabel: param, yUnit: 'ns',
      series: ['p50_ns', 'p90_ns', 'p99_ns'].map(function (k) {
        return {label: k.replace('_ns', ''), values: ok.map(function (v) {
          return isNum(v[k]) ? v[k] : null;
        })};
      }),
      empty: ok.length ? null : 'no value ran'});
    if (!numeric && ok.length)
      note(s, 'The values are not numbers: they are drawn in the order ' +
        'given.');
    table(s, [
      {key: 'value', label: param},
      {key: 'items_per_s', label: item + 's/s', num: true},
      {key: 'p50_ns', label: 'p50', num: true},
      {key: 'p90_ns', label: 'p90', num: true},
      {key: 'p99_ns', label: 'p99', num: true},
      {key: 'energy', label: 'J/' + item, num: true},
      {key: 'peak_rss_bytes', label: 'peak RSS', num: true},
      {key: 'note', label: ''}
    ], vals.map(function (v) {
      return {value: String(v.value),
              items_per_s: v.items_per_s, p50_ns: v.p50_ns,
              p90_ns: v.p90_ns, p99_ns: v.p99_ns,
              energy: isNum(v.joules_per_item)
                ? fmtNum(v.joules_per_item) : '\u2013',
              peak_rss_bytes: v.peak_rss_bytes,
              note: v.failed ? 'failed: ' + v.failed
                : (String(v.value) === String(d.best) ? 'best' : '') +
                  (String(v.value) === String(d.knee)
                    ? (String(v.value) === String(d.best) ? ', ' : '') +
                      'knee' : '')};
    }), {id: 'sweep'});
  }

  function checkDoc(doc) {
    if (!isRecord(doc)) throw new Error('the data is not a JSON object');
    if (doc.schema !== 'pipeprof.summary' && doc.schema !== 'pipeprof.sweep')
      throw new Error('the data is not a pipeprof summary (schema ' +
        JSON.stringify(doc.schema) + ')');
  }

  function sections(app, data) {
    guarded('header', function () { renderHeader(app, data); });
    nav = add(app, h('nav', 'pp-nav'));
    guarded('metadata', function () { renderMetadata(app, data); });
    guarded('recommendations', function () { renderAdvice(app, data); });
    guarded('alerts', function () { renderAlerts(app, data); });
    guarded('zones', function () { renderZones(app, data); });
    guarded('top_self', function () { renderTop(app, data); });
    guarded('breakdown', function () { renderBreakdown(app, data); });
    guarded('stacks', function () { renderStacks(app, data); });
    guarded('shapes', function () { renderShapes(app, data); });
    guarded('threads', function () { renderThreads(app, data); });
    guarded('timeline', function () { renderTimeline(app, data); });
    guarded('pipeline', function () { renderPipeline(app, data); });
    guarded('queues', function () { renderQueues(app, data); });
    guarded('frames', function () { renderFrames(app, data); });
    guarded('requests', function () { renderRequests(app, data); });
    guarded('zone_slos', function () { renderZoneSlos(app, data); });
    guarded('counters', function () { renderCounters(app, data); });
    guarded('system', function () { renderSystem(app, data); });
    guarded('gpu', function () { renderGpu(app, data); });
    guarded('memory_pools', function () { renderPools(app, data); });
    renderOthers(app, data);
    guarded('reader', function () { renderReader(app, data); });
    add(app, h('p', 'pp-foot', 'Generated by pipeprof ' +
      ((data.generator && data.generator.version) || '') +
      (isRecord(BUILD) && BUILD.uplot ? ', charts by uPlot ' + BUILD.uplot
        : '') + '. Figures: docs/formats/summary-json.md' +
      (CONFIG && CONFIG.live ? '.' : '; the data of this page is the JSON ' +
        'in the element with id "pp-data".')));
  }

  /* Draw (or redraw) the page from a summary document. The new page is
   * built beside the old one, so that charts are measured at their width
   * and kept charts move over; then the old one goes. */
  function render(doc) {
    errors = [];
    var app = document.getElementById('pp-app');
    if (!app) {
      app = add(document.body, h('div'));
      app.id = 'pp-app';
    }
    var scroll = window.scrollY || 0;
    Array.prototype.forEach.call(app.querySelectorAll('details[data-id]'),
      function (e) { state.open[e.getAttribute('data-id')] = e.open; });
    var old = Array.prototype.slice.call(app.childNodes);
    var fresh = add(app, h('div', 'pp-page'));
    newCharts = {};
    try {
      checkDoc(doc);
      if (doc.schema === 'pipeprof.sweep')
        sweepSections(fresh, doc);
      else
        sections(fresh, doc);
    } catch (e) {
      errors.push('data: ' + (e && e.message ? e.message : String(e)));
    }
    Object.keys(charts).forEach(function (id) {
      if (newCharts[id] !== charts[id]) charts[id].u.destroy();
    });
    charts = newCharts;
    old.forEach(function (n) { app.removeChild(n); });
    Array.prototype.forEach.call(app.querySelectorAll('details[data-id]'),
      function (e) {
        var id = e.getAttribute('data-id');
        if (has(state.open, id)) e.open = state.open[id];
      });
    /* A grid cell's width is known once its neighbours are there. */
    resizeCharts();
    if (scroll) window.scrollTo(0, scroll);
    finish();
    return document.body.getAttribute('data-rendered');
  }

  /* ---- live mode ------------------------------------------------------- */

  var lastSnapshot = null;

  function liveBar() {
    var bar = document.getElementById('pp-live');
    if (bar) return bar;
    bar = h('div', 'pp-live');
    bar.id = 'pp-live';
    var st = add(bar, h('span', 'pp-live-status', 'live \u00b7 connecting'));
    st.id = 'pp-live-status';
    var ban = add(bar, h('div', 'pp-live-banner'));
    ban.id = 'pp-live-banner';
    ban.hidden = true;
    document.body.insertBefore(bar, document.body.firstChild);
    return bar;
  }

  function liveBanner(text) {
    liveBar();
    var ban = document.getElementById('pp-live-banner');
    ban.hidden = !text;
    ban.textContent = text || '';
    document.body.setAttribute('data-live', text ? 'disconnected'
      : 'connected');
  }

  function liveTick() {
    liveBar();
    var st = document.getElementById('pp-live-status');
    if (lastSnapshot === null) return;
    var ago = Math.max(0, Math.round((Date.now() - lastSnapshot) / 1000));
    st.textContent = 'live \u00b7 updated ' + ago + ' s ago';
  }

  function gotSnapshot(doc) {
    lastSnapshot = Date.now();
    render(doc);
    liveTick();
  }

  function startLive(cfg, haveFirst) {
    liveBar();
    setInterval(liveTick, 1000);
    var url = String(cfg.summary || '');
    if (!haveFirst) fetch(url, {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(gotSnapshot, function (e) {
      liveBanner('could not load ' + url + ': ' +
        (e && e.message ? e.message : String(e)));
    });
    if (!cfg.stream) return;
    if (typeof EventSource !== 'function') {
      liveBanner('this browser has no EventSource: the page will not ' +
        'update; reload it to see newer figures');
      return;
    }
    var es = new EventSource(String(cfg.stream));
    es.addEventListener('snapshot', function (ev) {
      var doc;
      try {
        doc = JSON.parse(ev.data);
      } catch (e) {
        liveBanner('a snapshot from the stream could not be read: ' +
          e.message);
        return;
      }
      liveBanner(null);
      gotSnapshot(doc);
    });
    es.onopen = function () { liveBanner(null); };
    es.onerror = function () {
      liveBanner('disconnected from the live stream (' + cfg.stream +
        '): the figures below are from the last snapshot; reconnecting ' +
        'by itself');
    };
  }

  /* ---- window: resize, print ------------------------------------------- */

  function resizeCharts(width) {
    Object.keys(charts).forEach(function (id) {
      var c = charts[id];
      var w = width || chartWidth(c.box);
      if (Math.abs(w - c.u.width) > 2) c.u.setSize({width: w,
                                                    height: c.u.height});
    });
  }

  var printState = null;

  function beforePrint() {
    printState = [];
    Array.prototype.forEach.call(document.querySelectorAll('details'),
      function (e) {
        printState.push([e, e.open]);
        e.open = true;
      });
    resizeCharts(660);
  }

  function afterPrint() {
    (printState || []).forEach(function (p) { p[0].open = p[1]; });
    printState = null;
    resizeCharts();
  }

  function main() {
    try {
      BUILD = readJson('pp-build');
    } catch (e) {
      BUILD = null;
    }
    try {
      CONFIG = readJson('pp-config') || {};
    } catch (e) {
      CONFIG = {};
    }
    window.ppRender = function (doc) { return render(doc); };
    /* the formatters, for the table test (tests/fixtures/units.tsv) */
    window.ppUnits = {ns: fmtNs, bytes: fmtBytes, sig3: fmtSig3,
      rate: fmtRate, pct: fmtPct, joules: fmtJoules,
      byte_rate: fmtByteRate};
    window.addEventListener('mousemove', function (ev) {
      if (tlDrag) tlDrag(ev);
    });
    window.addEventListener('mouseup', function () { tlDrag = null; });
    var resizeTimer = null;
    window.addEventListener('resize', function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () { resizeCharts(); }, 150);
    });
    window.addEventListener('beforeprint', beforePrint);
    window.addEventListener('afterprint', afterPrint);
    if (isRecord(CONFIG) && isRecord(CONFIG.live)) {
      /* the server may embed the first snapshot: shown at once */
      var first = null;
      try {
        first = readJson('pp-data');
      } catch (e) {
        first = null;
      }
      if (isRecord(first)) gotSnapshot(first);
      startLive(CONFIG.live, isRecord(first));
      return;
    }
    var data;
    try {
      data = readJson('pp-data');
      if (data === null) throw new Error('no element with id pp-data');
    } catch (e) {
      errors.push('data: ' + (e && e.message ? e.message : String(e)));
      finish();
      return;
    }
    render(data);
  }

  main();
}());
