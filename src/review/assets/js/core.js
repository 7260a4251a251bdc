/* review page: core.js, first in the bundle. The module pattern of every file: each is
 * `(function (R) { ... })(R);` over R, the page's one namespace (created by the bundle's
 * opening lines, see src/review/page.rs): a module reads what it needs from R at the top,
 * defines its functions, and registers those other modules call (`R.select = select`);
 * calls into another module go through R (`R.select(n)`), so a module may call one that
 * comes later in the bundle. Mutable state more than one module reads lives in R.shared
 * (below); state one module owns stays inside it.
 *
 * This module: the page data (data/index.js: INDEX, items, criteria, byId, review id and
 * storage key), the DOM helpers (dict/own null-prototype maps, el/clear, number formats,
 * toast), the shared DOM handles, and the page without data (showNoData).
 */
(function (R) {
  'use strict';

  var INDEX = window.VIDPREP_REVIEW_INDEX;
  var $ = function (id) { return document.getElementById(id); };
  var errorsList = window.__vidprepErrors || (window.__vidprepErrors = []);

  // Maps keyed by ids and criteria keys are null-prototype objects: an id may be any name
  // (`toString`, `constructor`, `__proto__`), and none may read or change Object.prototype.
  function dict() { return Object.create(null); }
  function own(o, k) { return o != null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k); }
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] == null || attrs[k] === false) continue;
        if (k === 'text') e.textContent = attrs[k];
        else if (k === 'cls') e.className = attrs[k];
        else if (k === 'style') e.style.cssText = attrs[k];
        else e.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
      }
    }
    if (kids) {
      for (var i = 0; i < kids.length; i++) {
        var c = kids[i];
        if (c == null || c === false) continue;
        e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
      }
    }
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function num(x) { return typeof x === 'number' && isFinite(x); }
  function fmtS(x, d) { return num(x) ? x.toFixed(d == null ? 3 : d) : '?'; }
  // A frame range as the command line writes it: half-open, 0-based ([10, 70) holds frames
  // 10 to 69), the last frame said beside it.
  function frameRange(start, end) {
    return '[' + start + ', ' + end + ')' + (num(start) && num(end) && end - start > 1 ? ' (' + start + ' to ' + (end - 1) + ')' : '');
  }
  function fmtInt(x) { return num(x) ? Math.round(x).toLocaleString('en-US') : '?'; }
  function basename(p) {
    if (!p) return '';
    var parts = String(p).split('/').filter(function (s) { return s && s !== '.' && s !== '..'; });
    var tail = parts.slice(-2).join('/');
    try { return decodeURIComponent(tail); } catch (e) { return tail; }
  }
  function plural(n, w) { return n + ' ' + w + (n === 1 ? '' : 's'); }
  function clamp(x, lo, hi) { return x < lo ? lo : x > hi ? hi : x; }

  var toastTimer = null;
  function toast(msg, bad) {
    var t = $('toast');
    t.textContent = msg;
    t.className = 'toast' + (bad ? ' toast-bad' : '');
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.hidden = true; }, 3500);
  }


  function showNoData() {
    $('detail-empty').textContent = 'No review data: data/index.js is missing or invalid. ' +
      'Build this page with `vidprep review OUT_DIR`.';
    $('counts').textContent = '0 items';
    window.vidprepReview = { decisions: function () { return null; }, errors: function () { return errorsList.slice(); } };
  }

  var hasData = !!(INDEX && INDEX.items);
  var items = hasData ? INDEX.items : [];
  var criteria = hasData && INDEX.criteria || [];
  var byId = dict();
  items.forEach(function (it, i) { if (it.n == null) it.n = i; byId[it.id] = it; });
  var reviewId = hasData && (INDEX.review_id || INDEX.run_dir) || 'default';

  R.hasData = hasData;
  R.INDEX = INDEX;
  R.items = items;
  R.criteria = criteria;
  R.byId = byId;
  R.reviewId = reviewId;
  R.storageKey = 'vidprep-review:' + reviewId;
  R.errorsList = errorsList;
  R.$ = $;
  R.dict = dict;
  R.own = own;
  R.el = el;
  R.clear = clear;
  R.num = num;
  R.fmtS = fmtS;
  R.frameRange = frameRange;
  R.fmtInt = fmtInt;
  R.basename = basename;
  R.plural = plural;
  R.clamp = clamp;
  R.toast = toast;
  R.showNoData = showNoData;
  // the DOM elements several modules use
  R.listEl = $('item-list');
  R.clipV = $('clip');
  R.frameV = $('frame-view');
  R.tlEl = $('timeline');

  // The page's mutable state that more than one module reads or writes.
  R.shared = {
    current: -1,       // n of the shown item (list, load, every renderer)
    D: null,           // detail data of the shown item (detail, timeline)
    P: null,           // normalised preview info {N, times, end, srcStart, path, error} (detail, timeline)
    fv: null,          // the frame view's seek state (media; reset by stopMedia)
    rows: [],          // n -> list row element (list, load, controls)
    visible: [],       // n shown in the list, in order (list, main)
    sortDesc: false,   // list order reversed (list, controls)
    cache: {},         // n -> detail data (load, detail, controls)
    failedLoad: {},    // n -> why its detail file did not load (load, detail, facts)
    lastW: 0           // timeline width at the last layout (controls, main)
  };
})(R);
