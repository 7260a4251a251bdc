/* vidprep review page: all behaviour. Owns the item list (filter, sort, search, counts),
 * lazy loading of data/items/NNNNN.js, the detail pane (clip, timeline with the decision
 * point, frame-exact frame view, sampled frames, facts), the QC state (verdicts, criteria,
 * notes, moved decision points) with its localStorage persistence, import/export of
 * decisions.json and the keyboard shortcuts. Plain ES5-ish JavaScript, no dependencies,
 * nothing fetched: data arrives through <script> files (works from file://).
 *
 * One section per job, in this order; each section declares the state it owns, then its
 * functions; nothing runs until main() at the end, which wires each section's events (in
 * this order) and starts the page:
 *   helpers          dict/own (null-prototype maps), el/clear (DOM), number formats, toast
 *   no data          the page without data/index.js (showNoData)
 *   QC state         state[id] per item, localStorage (loadState, save), decision checks
 *   decisions.json   decisions, exportDecisions, importDecisions
 *   list             rows, sort, filter, search, counts, neighbour
 *   detail loading   the data/items/NNNNN.js cache (receiveDetail, loadDetail), select
 *   media            the clip and the frame view's exact seeks (pumpSeek ... wireFrameView)
 *   detail rendering head, videos, timeline and decision point (wireTimeline), samples, facts
 *   verdict panel    verdict, criteria, note (wireNote)
 *   overlays         help and lightbox (wireOverlays)
 *   keyboard         shortcuts (onKey, wireKeyboard)
 *   wiring           buttons, search, filter, sort, import, resize (wireControls)
 *   start            start (run info, saved state, first item), exposeApi, main
 */
(function () {
  'use strict';

  var INDEX = window.VIDPREP_REVIEW_INDEX;
  var $ = function (id) { return document.getElementById(id); };
  var errorsList = window.__vidprepErrors || (window.__vidprepErrors = []);

  // ---------------------------------------------------------------- helpers
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

  // ---------------------------------------------------------------- no data
  function showNoData() {
      $('detail-empty').textContent = 'No review data: data/index.js is missing or invalid. ' +
        'Build this page with `vidprep review OUT_DIR`.';
      $('counts').textContent = '0 items';
      window.vidprepReview = { decisions: function () { return null; }, errors: function () { return errorsList.slice(); } };
  }
  if (!INDEX || !INDEX.items) {
    showNoData();
    return;
  }

  var items = INDEX.items;
  var criteria = INDEX.criteria || [];
  var byId = dict();
  items.forEach(function (it, i) { if (it.n == null) it.n = i; byId[it.id] = it; });
  var reviewId = INDEX.review_id || INDEX.run_dir || 'default';
  var storageKey = 'vidprep-review:' + reviewId;

  // ---------------------------------------------------------------- QC state
  // state[id] = {verdict, criteria:{key:bool}, note, decision: span frame k or null (= original)}
  var state = dict();
  function blank() {
    var c = dict();
    criteria.forEach(function (cr) { c[cr.key] = false; });
    return { verdict: 'unreviewed', criteria: c, note: '', decision: null };
  }
  function st(it) { return state[it.id] || (state[it.id] = blank()); }
  function stPeek(it) { return state[it.id]; }

  var storageOk = true;
  function loadState() {
    var raw = null;
    try { raw = window.localStorage.getItem(storageKey); } catch (e) { storageOk = false; }
    if (!raw) return;
    try {
      var saved = JSON.parse(raw);
      var src = saved && saved.items || dict();
      for (var id in src) {
        if (!own(src, id) || !byId[id]) continue;
        var s = blank(), v = src[id];
        if (!v || typeof v !== 'object') continue;
        if (v.verdict === 'accepted' || v.verdict === 'rejected') s.verdict = v.verdict;
        if (v.criteria) for (var k in s.criteria) s.criteria[k] = own(v.criteria, k) && !!v.criteria[k];
        s.note = typeof v.note === 'string' ? v.note : '';
        s.decision = validDecision(byId[id], v.decision);
        state[id] = s;
      }
    } catch (e) { errorsList.push('could not read saved decisions: ' + e.message); }
  }
  function isDefault(s) {
    if (s.verdict !== 'unreviewed' || s.note || s.decision != null) return false;
    for (var k in s.criteria) if (s.criteria[k]) return false;
    return true;
  }
  function save() {
    var out = dict();
    for (var id in state) if (!isDefault(state[id])) out[id] = state[id];
    try {
      window.localStorage.setItem(storageKey, JSON.stringify({ version: 1, review_id: reviewId, saved: new Date().toISOString(), items: out }));
    } catch (e) {
      if (storageOk) {
        storageOk = false;
        var b = $('storage-warning');
        b.textContent = 'This browser does not keep the decisions (' + (e.name || 'storage error') + '): export regularly.';
        b.hidden = false;
      }
    }
  }

  function spanFrames(it) { return num(it.span_frames) && it.span_frames > 0 ? it.span_frames : null; }
  function validDecision(it, k) {
    var N = spanFrames(it);
    if (!N || !num(k)) return null;
    k = Math.round(k);
    if (k < 1 || k > N) return null;
    return k === it.decision_frame ? null : k;
  }
  function effDecision(it) {
    var s = stPeek(it);
    if (s && s.decision != null) return s.decision;
    return num(it.decision_frame) ? it.decision_frame : null;
  }
  function verdictOf(it) { var s = stPeek(it); return s ? s.verdict : 'unreviewed'; }
  function changed(it) { var s = stPeek(it); return !!(s && s.decision != null && s.decision !== it.decision_frame); }

  // ---------------------------------------------------------------- decisions.json
  function decisions() {
    return {
      vidprep_review_decisions: 1,
      review_id: INDEX.review_id == null ? null : INDEX.review_id,
      run_dir: INDEX.run_dir == null ? null : INDEX.run_dir,
      manifest: INDEX.manifest == null ? null : INDEX.manifest,
      exported: new Date().toISOString(),
      items: items.map(function (it) {
        var s = stPeek(it) || blank();
        var c = dict();
        criteria.forEach(function (cr) { c[cr.key] = !!s.criteria[cr.key]; });
        return {
          id: it.id,
          verdict: s.verdict,
          criteria: c,
          note: s.note || '',
          decision: changed(it) ? { frame: s.decision } : null,
          reviewed: {
            decision_frame: num(it.decision_frame) ? it.decision_frame : null,
            decision_requested: it.decision_requested == null ? null : it.decision_requested,
            span_frames: num(it.span_frames) ? it.span_frames : null
          }
        };
      })
    };
  }
  function exportDecisions() {
    var text = JSON.stringify(decisions(), null, 2) + '\n';
    var blob = new Blob([text], { type: 'application/json' });
    var url = URL.createObjectURL(blob);
    var a = el('a', { href: url, download: 'decisions.json', style: 'display:none' });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
    var c = tally();
    toast('Exported decisions.json: ' + c.accepted + ' accepted · ' + c.rejected + ' rejected · ' + c.unreviewed + ' unreviewed');
  }
  function importDecisions(text) {
    var d;
    try { d = JSON.parse(text); } catch (e) { toast('Import failed: not JSON (' + e.message + ')', true); return; }
    if (!d || d.vidprep_review_decisions !== 1 || !Array.isArray(d.items)) {
      toast('Import failed: not a vidprep decisions.json (vidprep_review_decisions: 1)', true); return;
    }
    if (d.review_id && INDEX.review_id && d.review_id !== INDEX.review_id &&
        !window.confirm('These decisions were exported from another run (review_id ' + d.review_id +
          ', run ' + d.run_dir + '). Import the items with matching ids anyway?')) return;
    var done = 0, unknown = 0, dropped = 0;
    d.items.forEach(function (x) {
      var it = x && typeof x.id === 'string' ? byId[x.id] : null;
      if (!it) { unknown++; return; }
      var s = blank();
      if (x.verdict === 'accepted' || x.verdict === 'rejected') s.verdict = x.verdict;
      if (x.criteria) for (var k in s.criteria) s.criteria[k] = own(x.criteria, k) && !!x.criteria[k];
      s.note = typeof x.note === 'string' ? x.note : '';
      if (x.decision && x.decision.frame != null) {
        s.decision = validDecision(it, x.decision.frame);
        if (s.decision == null && x.decision.frame !== it.decision_frame) dropped++;
      }
      state[it.id] = s;
      done++;
    });
    save();
    items.forEach(function (it) { updateRow(it.n); });
    applyList(false);
    if (current >= 0) renderQc(), renderDecision(true);
    toast('Imported ' + plural(done, 'item') + (unknown ? ' · ' + unknown + ' unknown ids skipped' : '') +
      (dropped ? ' · ' + dropped + ' decision points out of range dropped' : ''), !!(unknown || dropped));
  }

  // ---------------------------------------------------------------- list
  var listEl = $('item-list');
  var rows = [];           // n -> row element
  var sorted = [];         // all n, in sort order
  var visible = [];        // n shown in the list, in order
  var visibleSet = {};
  var current = -1;
  var sortDesc = false;

  function buildRows() {
    items.forEach(function (it, n) {
      var row = document.createElement('div');
      row.className = 'item-row';
      row.setAttribute('role', 'option');
      row.dataset.id = it.id;
      row.dataset.n = String(n);
      row.dataset.status = it.status || 'ok';
      var meta = [];
      if (it.line) meta.push('line ' + it.line);
      if (num(it.duration_s)) meta.push(fmtS(it.duration_s, 2) + ' s');
      if (it.status === 'failed') meta.push('failed');
      row.innerHTML = '<span class="dot"></span><span class="row-main"><span class="row-id"></span>' +
        '<span class="row-meta"></span></span><span class="row-badges"></span>';
      row.children[1].children[0].textContent = it.id;
      row.children[1].children[1].textContent = meta.join(' · ');
      row.title = it.id + (it.error ? '\n' + it.error : '');
      rows[n] = row;
      updateRow(n);
    });
  }
  function updateRow(n) {
    var it = items[n], row = rows[n];
    if (!row) return;
    row.dataset.verdict = verdictOf(it);
    var ch = changed(it);
    row.dataset.changed = ch ? 'true' : 'false';
    var b = '';
    if (it.status === 'failed') b += '<span class="b b-fail" title="failed">failed</span>';
    if (ch) b += '<span class="b b-moved" title="decision point moved">moved</span>';
    if (it.warnings) b += '<span class="b b-warn" title="warnings">⚠ ' + (it.warnings | 0) + '</span>';
    if (it.damaged) b += '<span class="b b-fail" title="damaged frames">dmg ' + (it.damaged | 0) + '</span>';
    var s = stPeek(it);
    if (s && s.note) b += '<span class="b b-note" title="has a note">✎</span>';
    var badges = row.children[2];
    if (badges.innerHTML !== b) badges.innerHTML = b;
  }
  var VERDICT_RANK = { unreviewed: 0, rejected: 1, accepted: 2 };
  function sortKeyFn(mode) {
    switch (mode) {
      case 'id': return function (a, b) { return a.id < b.id ? -1 : a.id > b.id ? 1 : 0; };
      case 'duration': return function (a, b) {
        var x = num(a.duration_s) ? a.duration_s : Infinity, y = num(b.duration_s) ? b.duration_s : Infinity;
        return x - y || 0;
      };
      case 'warnings': return function (a, b) { return ((b.warnings | 0) + (b.damaged | 0)) - ((a.warnings | 0) + (a.damaged | 0)); };
      case 'verdict': return function (a, b) { return VERDICT_RANK[verdictOf(a)] - VERDICT_RANK[verdictOf(b)]; };
      default: return function (a, b) { return (a.line | 0) - (b.line | 0); };
    }
  }
  function computeSorted() {
    var cmp = sortKeyFn($('sort').value);
    var arr = items.slice();
    arr.sort(function (a, b) { return cmp(a, b) || (a.line | 0) - (b.line | 0) || a.n - b.n; });
    if (sortDesc) arr.reverse();
    sorted = arr.map(function (it) { return it.n; });
  }
  function passes(it) {
    var q = $('search').value.trim().toLowerCase();
    if (q && String(it.id).toLowerCase().indexOf(q) < 0) return false;
    switch ($('filter').value) {
      case 'unreviewed': return verdictOf(it) === 'unreviewed';
      case 'accepted': return verdictOf(it) === 'accepted';
      case 'rejected': return verdictOf(it) === 'rejected';
      case 'moved': return changed(it);
      case 'warnings': return (it.warnings | 0) > 0 || (it.damaged | 0) > 0;
      case 'failed': return it.status === 'failed';
      default: return true;
    }
  }
  // resort: recompute the order too (sort change, verdict sort after a verdict change)
  function applyList(resort) {
    if (resort || !sorted.length) computeSorted();
    var next = [];
    sorted.forEach(function (n) { if (passes(items[n])) next.push(n); });
    var same = next.length === visible.length && next.every(function (n, i) { return visible[i] === n; });
    if (!same) {
      visible = next;
      visibleSet = {};
      var frag = document.createDocumentFragment();
      visible.forEach(function (n) { visibleSet[n] = true; frag.appendChild(rows[n]); });
      listEl.textContent = '';
      listEl.appendChild(frag);
      if (!visible.length) listEl.appendChild(el('div', { cls: 'list-empty', text: 'No items match.' }));
    }
    $('shown-count').textContent = visible.length === items.length ? 'showing all ' + plural(items.length, 'item')
      : 'showing ' + visible.length + ' of ' + items.length;
    updateCounts();
  }
  function tally() {
    var c = { accepted: 0, rejected: 0, unreviewed: 0, moved: 0 };
    items.forEach(function (it) { c[verdictOf(it)]++; if (changed(it)) c.moved++; });
    return c;
  }
  function updateCounts() {
    var c = tally();
    $('counts').textContent = plural(items.length, 'item') + ' · ' + c.accepted + ' accepted · ' + c.rejected +
      ' rejected · ' + c.unreviewed + ' unreviewed · ' + c.moved + ' moved';
  }
  // after a state change of item n: row attributes, counts, filter membership
  function touched(n) {
    updateRow(n);
    save();
    applyList(false);   // filter membership and counts; the sort order stays put until the sort changes
  }

  function neighbour(step) {
    if (!sorted.length) return -1;
    var pos = sorted.indexOf(current);
    if (pos < 0) return visible.length ? visible[step > 0 ? 0 : visible.length - 1] : -1;
    for (var i = pos + step; i >= 0 && i < sorted.length; i += step) {
      if (visibleSet[sorted[i]]) return sorted[i];
    }
    return -1;
  }

  // ---------------------------------------------------------------- detail loading
  var cache = {};          // n -> detail data
  var cacheOrder = [];
  var loading = {};        // n -> true
  var failedLoad = {};     // n -> message
  var CACHE_MAX = 120;

  function receiveDetail(n, data) {
    if (!num(n) || !items[n]) { errorsList.push('vidprepReviewReceive: unknown item ' + n); return; }
    cache[n] = data || {};
    cacheOrder = cacheOrder.filter(function (x) { return x !== n; });
    cacheOrder.push(n);
    while (cacheOrder.length > CACHE_MAX) {
      var i = cacheOrder[0] === current ? 1 : 0;
      delete cache[cacheOrder[i]];
      cacheOrder.splice(i, 1);
    }
    if (n === current && $('detail').dataset.id !== items[n].id) renderDetail(n);
  }
  function loadDetail(n) {
    if (cache[n] || loading[n] || n < 0 || !items[n]) return;
    var it = items[n];
    if (!it.detail) { failedLoad[n] = 'the index names no detail file'; return; }
    loading[n] = true;
    var s = document.createElement('script');
    s.src = it.detail;
    s.async = true;
    s.onload = function () {
      delete loading[n]; s.remove();
      if (!cache[n]) { failedLoad[n] = it.detail + ' did not call vidprepReviewReceive(' + n + ', …)'; if (n === current) renderDetail(n); }
    };
    s.onerror = function () {
      delete loading[n]; s.remove();
      failedLoad[n] = 'could not load ' + it.detail;
      if (n === current) renderDetail(n);
    };
    document.head.appendChild(s);
  }

  function select(n, opts) {
    if (n < 0 || !items[n]) return;
    var it = items[n];
    if (n === current && $('detail').dataset.id === it.id) return;
    if (rows[current]) { rows[current].classList.remove('selected'); rows[current].removeAttribute('aria-selected'); }
    flushNote();
    current = n;
    var row = rows[n];
    row.classList.add('selected');
    row.setAttribute('aria-selected', 'true');
    if (!opts || opts.scroll !== false) scrollRowIntoView(row);
    try { history.replaceState(null, '', '#item=' + encodeURIComponent(it.id)); } catch (e) { /* file:// in some browsers */ }
    var det = $('detail');
    det.dataset.id = '';
    det.setAttribute('data-loading', 'true');
    stopMedia();
    delete failedLoad[n];
    if (cache[n]) renderDetail(n);
    else {
      // show what the index knows while the detail file loads
      renderHead(it, null);
      loadDetail(n);
    }
  }
  function scrollRowIntoView(row) {
    if (!row.parentNode) return;
    var top = row.offsetTop, bottom = top + row.offsetHeight;
    if (top < listEl.scrollTop) listEl.scrollTop = top - 4;
    else if (bottom > listEl.scrollTop + listEl.clientHeight) listEl.scrollTop = bottom - listEl.clientHeight + 4;
  }

  // ---------------------------------------------------------------- media
  var clipV = $('clip'), frameV = $('frame-view');
  function unsetSrc(v) {
    var src = v.getAttribute('src');
    if (!src) return;
    try { v.pause(); } catch (e) { /* ignore */ }
    v.removeAttribute('src');
    if (src.indexOf('blob:') === 0) URL.revokeObjectURL(src);
    try { v.load(); } catch (e) { /* ignore */ }
  }
  function stopMedia() {
    unsetSrc(clipV);
    unsetSrc(frameV);
    fv = newSeekState();
  }

  // frame view: serialised, frame-exact seeking of preview.mp4
  function newSeekState() { return { wantT: null, wantSeq: 0, issuedSeq: -1, seeking: false }; }
  var fv = newSeekState();
  function pumpSeek() {
    if (fv.wantT == null || fv.seeking || !frameV.getAttribute('src')) return;
    if (frameV.readyState < 1) return;           // loadedmetadata will call again
    if (fv.issuedSeq === fv.wantSeq) return;
    fv.seeking = true;
    fv.issuedSeq = fv.wantSeq;
    var seq = fv.issuedSeq, state0 = fv;
    frameV.currentTime = fv.wantT;
    // safety net: a browser that does not fire `seeked` for a no-op seek
    setTimeout(function () {
      if (fv === state0 && fv.seeking && fv.issuedSeq === seq && !frameV.seeking && frameV.readyState >= 2) onSeeked();
    }, 1500);
  }
  function onSeeked() {
    if (!fv.seeking) return;
    fv.seeking = false;
    if (fv.issuedSeq !== fv.wantSeq) { pumpSeek(); return; }
    // The frame is only shown if the browser really went there: a server that does not answer
    // range requests lets it seek only inside what it has downloaded (it lands elsewhere).
    if (Math.abs(frameV.currentTime - fv.wantT) > 0.001) { seekMissed(); return; }
    var label = $('frame-label');
    delete label.dataset.error;
    label.dataset.ready = 'true';
  }
  // A missed seek over http(s): fetch the whole (small) preview once and seek in memory.
  function seekMissed() {
    var src = frameV.getAttribute('src') || '';
    if (!fv.blob && /^https?:$/.test(location.protocol) && src.indexOf('blob:') !== 0) {
      fv.blob = 'loading';
      var state0 = fv;
      fetch(src).then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status + ' for ' + src);
        return r.blob();
      }).then(function (b) {
        if (fv !== state0) return;
        fv.blob = 'loaded';
        fv.issuedSeq = -1;
        frameV.setAttribute('src', URL.createObjectURL(b));   // loadedmetadata seeks again
      }).catch(function (e) { if (fv === state0) seekFailed(String(e)); });
      return;
    }
    seekFailed('the browser could not seek to ' + fv.wantT.toFixed(3) + ' s (it is at ' + frameV.currentTime.toFixed(3) + ' s)');
  }
  function seekFailed(why) {
    var label = $('frame-label');
    label.dataset.ready = 'false';
    label.dataset.error = why;
    var note = $('frame-note');
    note.textContent = 'Cannot show this frame: ' + why + '. Open the page from file://, or serve it with a server that answers range requests.';
    note.className = 'small bad';
  }
  function wireFrameView() {
    frameV.addEventListener('seeked', onSeeked);
    frameV.addEventListener('loadedmetadata', pumpSeek);
    frameV.addEventListener('error', function () {
      if (!frameV.getAttribute('src')) return;
      var note = $('frame-note');
      note.textContent = 'The preview could not be played (' + (frameV.error ? 'media error ' + frameV.error.code : 'error') + '): ' + frameV.getAttribute('src');
      note.className = 'small bad';
    });
  }
  function seekFrameView(t) {
    fv.wantT = t;
    fv.wantSeq++;
    $('frame-label').dataset.ready = 'false';
    pumpSeek();
  }

  // ---------------------------------------------------------------- detail rendering
  var D = null;            // detail data of the shown item
  var P = null;            // normalised preview info {N, times, end, srcStart}

  function renderHead(it, d) {
    $('detail-empty').hidden = true;
    $('detail-body').hidden = false;
    $('item-title').textContent = it.id;
    var sub = [];
    if (it.line) sub.push('manifest line ' + it.line);
    sub.push('#' + it.n);
    if (num(it.frames)) sub.push(it.frames + ' frames');
    if (num(it.duration_s)) sub.push(fmtS(it.duration_s) + ' s');
    if (num(it.span_frames)) sub.push('span ' + it.span_frames + ' frames');
    if (it.decision_requested != null) sub.push('decision ' + it.decision_requested);
    $('item-sub').textContent = sub.join(' · ');
    var badges = clear($('item-badges'));
    if (it.status === 'failed') badges.appendChild(el('span', { cls: 'b b-fail', text: 'failed' }));
    if (it.warnings) badges.appendChild(el('span', { cls: 'b b-warn', text: plural(it.warnings | 0, 'warning') }));
    if (it.damaged) badges.appendChild(el('span', { cls: 'b b-fail', text: (it.damaged | 0) + ' damaged' }));
    $('prev').disabled = neighbour(-1) < 0;
    $('next').disabled = neighbour(1) < 0;
    var err = $('item-error');
    var msg = it.status === 'failed' ? 'This item failed: ' + (it.error || 'no error message') : '';
    if (!d && failedLoad[it.n]) msg = (msg ? msg + '\n' : '') + 'Detail data: ' + failedLoad[it.n];
    err.textContent = msg;
    err.hidden = !msg;
    renderQc();
  }

  function normPreview(it, d) {
    var p = d && d.preview;
    var N = spanFrames(it) || (p && num(p.frames) ? p.frames : null);
    if (!N) return null;
    var times = p && Array.isArray(p.times) ? p.times : [];
    var end = p && num(p.end_s) ? p.end_s : null;
    if (times.length < N) {
      // incomplete times: spread the missing ones uniformly (only a fallback)
      var span = d && d.span, dur = end != null ? end : span && num(span.end_s) && num(span.start_s) ? span.end_s - span.start_s : null;
      if (dur != null) {
        times = times.slice();
        for (var k = times.length; k < N; k++) times.push(dur * k / N);
      } else times = null;
    }
    if (times && end == null) end = times[N - 1] + (N > 1 ? times[N - 1] - times[N - 2] : 0.04);
    var srcStart = p && num(p.source_start_frame) ? p.source_start_frame
      : d && d.span && num(d.span.start_frame) ? d.span.start_frame : null;
    return { N: N, times: times, end: end, srcStart: srcStart, path: p && p.path, error: p && p.error };
  }

  function renderDetail(n) {
    var it = items[n], d = cache[n] || null;
    D = d;
    P = normPreview(it, d);
    renderHead(it, d);
    renderVideos(it, d);
    renderTimeline(it, d);
    renderDecision(true);
    renderSamples(it, d);
    renderFacts(it, d);
    var det = $('detail');
    det.dataset.id = it.id;
    det.removeAttribute('data-loading');
    // prefetch the neighbours the reviewer is most likely to open next
    var nx = neighbour(1), pv = neighbour(-1);
    if (nx >= 0) loadDetail(nx);
    if (pv >= 0) setTimeout(function () { loadDetail(pv); }, 200);
  }

  var videoChoice = 0;
  function renderVideos(it, d) {
    var vids = d && Array.isArray(d.videos) ? d.videos : [];
    var tabs = clear($('video-tabs'));
    videoChoice = 0;
    if (vids.length > 1) {
      vids.forEach(function (v, i) {
        var b = el('button', { type: 'button', cls: 'tab' + (i === 0 ? ' active' : ''), text: v.name || v.kind || 'video ' + i, title: v.path });
        b.addEventListener('click', function () { showVideo(vids, i, it); });
        tabs.appendChild(b);
      });
    }
    showVideo(vids, 0, it);
    // frame view source
    if (P && P.path) {
      frameV.setAttribute('src', P.path);
      $('frame-empty').hidden = true;
    } else {
      unsetSrc(frameV);
    }
  }
  function showVideo(vids, i, it) {
    videoChoice = i;
    var tabs = $('video-tabs').children;
    for (var j = 0; j < tabs.length; j++) tabs[j].classList.toggle('active', j === i);
    var v = vids[i];
    var info = clear($('clip-info'));
    var ce = $('clip-empty');
    if (!v || !v.path) {
      unsetSrc(clipV);
      clipV.hidden = true;
      ce.hidden = false;
      ce.textContent = it && it.status === 'failed' ? 'no clip (failed item)' : 'no video output';
      info.textContent = D || !it ? 'No video output for this item.' : '';
      return;
    }
    clipV.hidden = false;
    ce.hidden = true;
    if (clipV.getAttribute('src') !== v.path) {
      unsetSrc(clipV);
      clipV.setAttribute('src', v.path);
    }
    var bits = [];
    if (v.kind) bits.push(v.kind);
    if (num(v.frames)) bits.push(v.frames + ' frames');
    if (num(v.width) && num(v.height)) bits.push(v.width + '×' + v.height);
    if (num(v.duration_s)) bits.push(fmtS(v.duration_s) + ' s');
    info.appendChild(document.createTextNode(bits.join(' · ') + ' · '));
    info.appendChild(el('a', { href: v.path, target: '_blank', rel: 'noopener', text: basename(v.path) }));
    if (v.sidecar) {
      info.appendChild(document.createTextNode(' · '));
      info.appendChild(el('a', { href: v.sidecar, target: '_blank', rel: 'noopener', text: basename(v.sidecar) }));
    }
    var needle = D && D.needle;
    if (i === 0 && needle && num(needle.start)) {
      info.appendChild(el('div', { cls: 'needle-note', text: 'needle inserted at output frames ' + needle.start + '–' + (needle.end - 1) +
        (num(v.duration_s) && num(v.frames) && v.frames ? ' (' + fmtS(needle.start * v.duration_s / v.frames, 2) + '–' + fmtS(needle.end * v.duration_s / v.frames, 2) + ' s)' : '') }));
    }
  }

  function frameTime(k) {                   // presentation time of span frame k (k may be N: end)
    if (!P || !P.times) return null;
    return k >= P.N ? P.end : P.times[k];
  }
  function frameMid(k) {                    // middle of frame k's display interval
    var a = P.times[k], b = k + 1 < P.N ? P.times[k + 1] : P.end;
    return (a + b) / 2;
  }

  // clip time of the decision point at span frame k: the builder's value for the original point;
  // otherwise the preview time, shifted by an inserted needle that lies before k
  function clipTimeOf(it, k) {
    if (D && D.decision && D.decision.frame === k && num(D.decision.clip_time_s)) return D.decision.clip_time_s;
    var t = frameTime(k);
    var nd = D && D.needle, v = D && D.videos && D.videos[0];
    if (num(t) && nd && num(nd.start) && num(nd.end) && k > nd.start && v && num(v.frames) && v.frames > 0 && num(v.duration_s)) {
      t += (nd.end - nd.start) * v.duration_s / v.frames;
    }
    return t;
  }

  function renderTimeline(it, d) {
    var tl = $('timeline'), thumbs = clear($('tl-thumbs')), ruler = clear($('tl-ruler')), ticks = clear($('tl-samples'));
    var box = $('timeline-box'), empty = $('timeline-empty');
    $('timeline-help').hidden = !P;
    if (!P) {
      box.hidden = true;
      empty.hidden = false;
      empty.textContent = it.status === 'failed' ? 'No span: the item failed.' : 'No span information for this item.';
      $('timeline-info').textContent = '';
      return;
    }
    box.hidden = false;
    empty.hidden = true;
    var N = P.N;
    var info = [N + ' span frames'];
    var span = d && d.span;
    if (span && num(span.start_frame)) info.push('source frames ' + span.start_frame + '–' + (span.end_frame - 1));
    if (span && num(span.start_s)) info.push('source ' + fmtS(span.start_s, 2) + '–' + fmtS(span.end_s, 2) + ' s');
    if (P.error) info.push('preview: ' + P.error);
    $('timeline-info').textContent = info.join(' · ');
    // thumbnails: each tile reaches half way to its neighbours (first from 0, last to the end),
    // so a thumbnail sits over the frames it shows
    var th = d && Array.isArray(d.thumbs) ? d.thumbs.slice().filter(function (t) { return t && num(t.frame); }) : [];
    th.sort(function (a, b) { return a.frame - b.frame; });
    var frag = document.createDocumentFragment();
    th.forEach(function (t, i) {
      var f0 = i === 0 ? 0 : clamp((th[i - 1].frame + t.frame + 1) / 2, 0, N);
      var f1 = i + 1 < th.length ? clamp((t.frame + th[i + 1].frame + 1) / 2, 0, N) : N;
      if (f1 <= f0) return;
      var time = num(t.time_s) ? t.time_s : frameTime(t.frame);
      frag.appendChild(el('div', { cls: 'tl-thumb', style: 'left:' + (f0 / N * 100) + '%;width:' + ((f1 - f0) / N * 100) + '%' }, [
        el('img', { src: t.path, loading: 'lazy', decoding: 'async', alt: '', draggable: 'false' }),
        // time and frame on two lines, so a narrow tile still shows both
        el('span', { cls: 'tl-thumb-label', text: (num(time) ? fmtS(time, 2) + 's\n' : '') + 'f' + t.frame })
      ]));
    });
    thumbs.appendChild(frag);
    // ruler: frame numbers and times at round steps
    var steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 25000, 50000, 100000];
    var width = tl.clientWidth || 800;
    var step = steps[steps.length - 1];
    for (var s = 0; s < steps.length; s++) if (width * steps[s] / N >= 70) { step = steps[s]; break; }
    var rf = document.createDocumentFragment();
    for (var f = 0; f <= N; f += step) {
      if (f !== N && f !== 0 && (N - f) / N * width < 150) continue;   // keep clear of the end label
      var t = frameTime(f);
      rf.appendChild(el('span', { cls: 'tick' + (f === N ? ' tick-end' : ''), style: 'left:' + (f / N * 100) + '%' },
        [String(f) + (num(t) ? ' · ' + fmtS(t, 2) + 's' : '')]));
      if (f === N) break;
      if (f + step > N && f !== N) f = N - step;   // always label the end
    }
    ruler.appendChild(rf);
    // sampled frames of the first sample set, mapped onto the span
    var sets = d && Array.isArray(d.samples) ? d.samples : [];
    if (sets.length && P.srcStart != null) {
      var tf = document.createDocumentFragment();
      (sets[0].images || []).forEach(function (im, i) {
        var sf = spanFrameOf(im);
        if (sf == null) return;
        tf.appendChild(el('span', { cls: 'tl-sample', style: 'left:' + ((sf + 0.5) / N * 100) + '%',
          title: 'sampled image ' + (i + 1) + ' · stream frame ' + im.stream_frame + ' · span frame ' + sf }));
      });
      ticks.appendChild(tf);
    }
  }
  function spanFrameOf(im) {
    if (!P || P.srcStart == null || !im || !num(im.source_frame)) return null;
    if (im.source != null && im.source !== 0) return null;
    var sf = im.source_frame - P.srcStart;
    return sf >= 0 && sf < P.N ? sf : null;
  }

  // decision point: marker, greyed part, frame view, label
  function renderDecision(seek) {
    if (current < 0) return;
    var it = items[current];
    var label = $('frame-label'), note = $('frame-note'), marker = $('decision-marker'), trunc = $('tl-truncated'),
      orig = $('decision-original'), reset = $('decision-reset'), empty = $('frame-empty');
    var k = effDecision(it);
    var ch = changed(it);
    reset.disabled = !ch;
    note.className = 'small muted';
    if (!P) {
      label.textContent = it.status === 'failed' ? 'no span (failed item)' : 'no span information';
      label.dataset.frame = k == null ? '' : String(k);
      label.dataset.shownFrame = '';
      label.dataset.ready = 'true';
      note.textContent = '';
      frameV.hidden = true;
      empty.hidden = false;
      empty.textContent = 'no preview';
      return;
    }
    var N = P.N;
    if (num(it.decision_frame) && ch) {
      orig.hidden = false;
      orig.style.left = (it.decision_frame / N * 100) + '%';
      orig.title = 'original decision point: span frame ' + it.decision_frame;
    } else orig.hidden = true;
    if (k == null) {
      marker.hidden = true;
      trunc.style.display = 'none';
      label.textContent = 'no decision point · keeps all ' + N + ' frames';
      label.dataset.frame = '';
      label.dataset.shownFrame = '';
      label.dataset.ready = 'true';
      fv.wantT = null;
      note.textContent = 'Click the span below (or press ← / →) to set a decision point.';
      frameV.hidden = true;
      empty.hidden = false;
      empty.textContent = 'no decision point';
      return;
    }
    frameV.hidden = !P.path;
    empty.hidden = !!P.path;
    if (!P.path) empty.textContent = P.error ? 'no preview: ' + P.error : 'no preview';
    marker.hidden = false;
    marker.style.left = (k / N * 100) + '%';
    marker.classList.toggle('moved', ch);
    $('decision-flag').textContent = String(k);
    trunc.style.display = k >= N ? 'none' : '';
    trunc.style.left = (k / N * 100) + '%';
    var shown = k >= N ? N - 1 : k;
    var src = P.srcStart != null ? P.srcStart + k : null;
    var ct = clipTimeOf(it, k);
    var text = 'decision at span frame ' + k + (src != null ? ' (source frame ' + src + ')' : '') +
      (num(ct) ? ' · clip time ' + fmtS(ct) + ' s' : '') + ' · keeps ' + k + ' of ' + N + ' frames';
    if (k >= N) text += ' · end of span: nothing truncated';
    label.textContent = text;
    label.dataset.frame = String(k);
    label.dataset.shownFrame = String(shown);
    var what = k >= N ? 'Shown: the last span frame (' + shown + '); nothing is truncated.'
      : 'Shown: span frame ' + k + ', the first frame the model does not see.';
    if (ch) what += num(it.decision_frame) ? ' Moved from span frame ' + it.decision_frame + '.' : ' Originally no decision point.';
    else if (it.decision_requested != null) what += ' Original (requested ' + it.decision_requested + ').';
    note.textContent = what;
    // sampled frames that the moved decision point would cut away
    markSamplesAfter(k);
    if (seek !== false && P.times && P.path) seekFrameView(frameMid(shown));
    else if (!P.times || !P.path) label.dataset.ready = P.path ? 'false' : 'true';
  }

  function setDecision(k) {
    if (current < 0 || !P) return;
    var it = items[current];
    k = clamp(Math.round(k), 1, P.N);
    if (k === effDecision(it)) return;
    var s = st(it);
    s.decision = k === it.decision_frame ? null : k;
    renderDecision(true);
    touched(current);
  }
  function moveDecision(delta) {
    if (current < 0 || !P) return;
    var k = effDecision(items[current]);
    if (k == null) k = P.N;
    setDecision(k + delta);
  }
  function resetDecision() {
    if (current < 0) return;
    var it = items[current], s = stPeek(it);
    if (!s || s.decision == null) return;
    s.decision = null;
    renderDecision(true);
    touched(current);
  }

  // timeline pointer input: x in [0, width) -> floor(x / width * N), clamped to [1, N]
  var tlEl = $('timeline'), dragging = false;
  function frameAt(clientX) {
    var r = tlEl.getBoundingClientRect();
    if (!P || r.width <= 0) return null;
    return clamp(Math.floor((clientX - r.left) / r.width * P.N), 1, P.N);
  }
  function endDrag() { dragging = false; }
  function wireTimeline() {
    tlEl.addEventListener('pointerdown', function (e) {
      if (e.button !== 0 || !P) return;
      dragging = true;
      try { tlEl.setPointerCapture(e.pointerId); } catch (x) { /* ignore */ }
      var k = frameAt(e.clientX);
      if (k != null) setDecision(k);
      e.preventDefault();
    });
    tlEl.addEventListener('pointermove', function (e) {
      var hover = $('tl-hover');
      if (!P) { hover.hidden = true; return; }
      var r = tlEl.getBoundingClientRect();
      var f = clamp(Math.floor((e.clientX - r.left) / r.width * P.N), 0, P.N - 1);
      hover.hidden = false;
      hover.style.left = (f / P.N * 100) + '%';
      var t = frameTime(f);
      hover.firstChild.textContent = 'frame ' + f + (num(t) ? ' · ' + fmtS(t, 2) + ' s' : '');
      if (dragging) { var k = frameAt(e.clientX); if (k != null) setDecision(k); }
    });
    tlEl.addEventListener('pointerup', endDrag);
    tlEl.addEventListener('pointercancel', endDrag);
    tlEl.addEventListener('pointerleave', function () { $('tl-hover').hidden = true; });
    // synthetic clicks (no pointerdown) still set the point; a real click repeats the same frame: no-op
    tlEl.addEventListener('click', function (e) { var k = frameAt(e.clientX); if (k != null) setDecision(k); });
  }

  function renderSamples(it, d) {
    var box = clear($('samples'));
    var sets = d && Array.isArray(d.samples) ? d.samples : [];
    if (!sets.length) {
      box.appendChild(el('div', { cls: 'muted', text: d ? 'No frames export for this item.' : '' }));
      return;
    }
    var damaged = {};
    (d.damaged_frames || []).forEach(function (f) { damaged[f] = true; });
    var needle = d.needle && num(d.needle.start) ? d.needle : null;
    sets.forEach(function (set, si) {
      var imgs = set.images || [];
      var head = el('div', { cls: 'samples-head' }, [
        el('strong', { text: set.name || 'frames' }),
        ' · ' + plural(imgs.length, 'image') + (set.sampler ? ' · sampler ' + set.sampler : '') + (set.order ? ' · ' + set.order : '')
      ]);
      if (set.strip) {
        head.appendChild(document.createTextNode(' · '));
        head.appendChild(el('a', { href: set.strip, target: '_blank', rel: 'noopener', text: 'strip' }));
      }
      if (set.order && set.order !== 'ordered') head.appendChild(el('span', { cls: 'b b-warn', text: 'model order ≠ time order' }));
      box.appendChild(head);
      var grid = el('div', { cls: 'samples-grid' });
      imgs.forEach(function (im, i) {
        var cap = '#' + (i + 1) + ' frame ' + (num(im.stream_frame) ? im.stream_frame : '?') + ' · ' + fmtS(im.time_s) + ' s';
        var title = 'position ' + (i + 1) + ' · stream frame ' + im.stream_frame + ' · source ' + im.source +
          ' frame ' + im.source_frame + ' · ' + fmtS(im.time_s) + ' s\n' + im.path;
        var fig = el('figure', { cls: 'sample', 'data-span-frame': spanFrameOf(im) }, [
          el('img', { src: im.path, loading: 'lazy', decoding: 'async', alt: cap }),
          el('figcaption', { text: cap })
        ]);
        fig.title = title;
        if (damaged[im.stream_frame]) fig.appendChild(el('span', { cls: 'b b-fail sample-badge', text: 'damaged' }));
        else if (needle && im.stream_frame >= needle.start && im.stream_frame < needle.end) fig.appendChild(el('span', { cls: 'b b-needle sample-badge', text: 'needle' }));
        fig.addEventListener('click', function () { openLightbox(im.path, (set.name || 'frames') + ' ' + cap + ' · source frame ' + im.source_frame); });
        grid.appendChild(fig);
      });
      box.appendChild(grid);
      if (si === 0) box.appendChild(el('div', { cls: 'small muted', id: 'samples-cut-note' }));
    });
    if (current >= 0) markSamplesAfter(effDecision(it));
  }
  function markSamplesAfter(k) {
    var figs = document.querySelectorAll('#samples figure.sample');
    var cut = 0;
    var moved = current >= 0 && changed(items[current]);
    for (var i = 0; i < figs.length; i++) {
      var sf = figs[i].getAttribute('data-span-frame');
      var after = moved && k != null && sf !== null && sf !== '' && +sf >= k;
      figs[i].classList.toggle('after-decision', after);
      if (after) cut++;
    }
    var note = $('samples-cut-note');
    if (note) note.textContent = cut ? cut + ' of these images lie at or after the moved decision point (shown faded); re-running with the new point re-samples them.' : '';
  }

  function renderFacts(it, d) {
    var facts = clear($('facts')), checks = clear($('checks'));
    var rowsF = d && Array.isArray(d.facts) ? d.facts : [];
    var t = el('table', { cls: 'facts' });
    var tb = el('tbody');
    rowsF.forEach(function (r) {
      if (!r) return;
      tb.appendChild(el('tr', null, [el('th', { text: String(r[0]) }), el('td', { text: r[1] == null ? '' : String(r[1]) })]));
    });
    if (d && d.decision) {
      tb.appendChild(el('tr', null, [el('th', { text: 'Decision (original)' }), el('td', {
        text: (d.decision.requested != null ? d.decision.requested + ' → ' : '') + 'span frame ' + d.decision.frame +
          (num(d.decision.clip_time_s) ? ' · clip time ' + fmtS(d.decision.clip_time_s) + ' s' : '')
      })]));
    }
    if (d && d.kept && d.span && num(d.kept.start_frame)) {
      tb.appendChild(el('tr', null, [el('th', { text: 'Kept (source frames)' }), el('td', {
        text: d.kept.start_frame + '–' + (d.kept.end_frame - 1) + ' of ' + d.span.start_frame + '–' + (d.span.end_frame - 1)
      })]));
    }
    if (it.status === 'failed') tb.appendChild(el('tr', { cls: 'bad' }, [el('th', { text: 'Error' }), el('td', { text: it.error || '?' })]));
    t.appendChild(tb);
    if (tb.children.length) facts.appendChild(t);
    else facts.appendChild(el('div', { cls: 'muted', text: d ? 'No facts.' : (failedLoad[it.n] ? '' : 'Loading…') }));

    if (!d) return;
    // Base64 size against the budget
    var b = d.base64;
    if (b && num(b.bytes)) {
      var used = num(b.used) ? b.used : num(b.budget) && b.budget ? b.bytes / b.budget : null;
      var over = used != null && used > 1;
      checks.appendChild(el('div', { cls: 'check' }, [
        el('div', { cls: 'check-head' }, [el('span', { text: 'Base64 size' }),
          el('span', { cls: over ? 'bad' : 'good', text: fmtInt(b.bytes) + ' B of ' + fmtInt(b.budget) + ' B' + (used != null ? ' (' + (used * 100).toFixed(1) + '%)' : '') })]),
        el('div', { cls: 'meter' + (over ? ' over' : '') }, [el('span', { style: 'width:' + clamp((used || 0) * 100, 0, 100) + '%' })])
      ]));
    }
    // damaged frames
    var dmg = d.damaged_frames || [];
    checks.appendChild(el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Damaged frames' }),
      el('span', { cls: dmg.length ? 'bad' : 'good', text: dmg.length ? dmg.length + ': ' + dmg.slice(0, 40).join(', ') + (dmg.length > 40 ? ', …' : '') : 'none' })])]));
    // annotated source frames in and outside the clip (the facts panel's counts)
    var a = d.annotations;
    if (a) {
      var outside = (a.before_span | 0) + (a.in_truncated_part | 0) + (a.after_span | 0);
      checks.appendChild(el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Annotated frames' }),
        el('span', { cls: outside ? 'warn' : 'good', text: (a.frames_in_clip | 0) + ' in clip · ' + outside + ' outside' })]),
        el('div', { cls: 'small muted', text: 'before span ' + (a.before_span | 0) + ' · in truncated part ' + (a.in_truncated_part | 0) + ' · after span ' + (a.after_span | 0) })]));
    }
    // warnings
    var w = d.warnings || [];
    var wl = el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Warnings' }),
      el('span', { cls: w.length ? 'warn' : 'good', text: w.length ? String(w.length) : 'none' })])]);
    if (w.length) wl.appendChild(el('ul', { cls: 'warnings' }, w.map(function (x) { return el('li', { text: String(x) }); })));
    checks.appendChild(wl);
    // videos and sidecars
    var links = el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Outputs & sidecars' })])]);
    var ul = el('ul', { cls: 'links' });
    (d.videos || []).forEach(function (v) {
      if (v.path) ul.appendChild(el('li', null, [el('a', { href: v.path, target: '_blank', rel: 'noopener', text: basename(v.path) }), ' ' + (v.kind || '')]));
    });
    (d.sidecars || []).forEach(function (p) {
      ul.appendChild(el('li', null, [el('a', { href: p, target: '_blank', rel: 'noopener', text: basename(p) })]));
    });
    if (ul.children.length) links.appendChild(ul);
    checks.appendChild(links);
  }

  // ---------------------------------------------------------------- verdict panel
  function buildCriteria() {
    var box = clear($('criteria'));
    criteria.forEach(function (cr, i) {
      var cb = el('input', { type: 'checkbox', cls: 'criterion', 'data-key': cr.key, id: 'crit-' + cr.key });
      cb.addEventListener('change', function () { setCriterion(cr.key, cb.checked); });
      box.appendChild(el('label', { cls: 'crit', 'for': 'crit-' + cr.key, title: cr.help || '' }, [
        cb, el('kbd', { text: String(i + 1) }), el('span', { cls: 'crit-text' }, [
          el('span', { cls: 'crit-label', text: cr.label || cr.key }), el('span', { cls: 'crit-help', text: cr.help || '' })])
      ]));
    });
  }
  function renderQc() {
    if (current < 0) return;
    var it = items[current], s = stPeek(it) || blank();
    var v = s.verdict;
    var pill = $('verdict-pill');
    pill.textContent = v;
    pill.className = 'pill pill-' + v;
    $('accept').classList.toggle('on', v === 'accepted');
    $('reject').classList.toggle('on', v === 'rejected');
    $('accept').setAttribute('aria-pressed', v === 'accepted' ? 'true' : 'false');
    $('reject').setAttribute('aria-pressed', v === 'rejected' ? 'true' : 'false');
    $('detail').dataset.verdict = v;
    var cbs = document.querySelectorAll('input.criterion');
    var unticked = [];
    for (var i = 0; i < cbs.length; i++) {
      var key = cbs[i].getAttribute('data-key');
      cbs[i].checked = !!s.criteria[key];
      if (!s.criteria[key]) unticked.push(key);
    }
    var hint = $('criteria-hint');
    if (v === 'accepted' && unticked.length) {
      hint.hidden = false;
      hint.textContent = 'Accepted although ' + unticked.length + (unticked.length === 1 ? ' criterion is' : ' criteria are') + ' not ticked.';
    } else hint.hidden = true;
    var note = $('note');
    if (document.activeElement !== note || note.value !== s.note) note.value = s.note || '';
  }
  function setVerdict(v) {
    if (current < 0) return;
    var it = items[current], s = st(it);
    // Accepting asserts the item meets every criterion (ViSTR keeps only such items): the
    // boxes are ticked; unticking one afterwards shows a warning. Rejecting keeps them, so
    // the unticked ones say why.
    if (v === 'accepted' && s.verdict !== 'accepted') {
      for (var i = 0; i < criteria.length; i++) s.criteria[criteria[i].key] = true;
    }
    s.verdict = v;
    renderQc();
    touched(current);
  }
  function setCriterion(key, on) {
    if (current < 0) return;
    var it = items[current];
    st(it).criteria[key] = !!on;
    renderQc();
    touched(current);
  }
  function toggleCriterion(i) {
    if (current < 0 || !criteria[i]) return;
    var s = st(items[current]);
    setCriterion(criteria[i].key, !s.criteria[criteria[i].key]);
  }
  var noteTimer = null;
  function flushNote() {
    if (noteTimer == null) return;
    clearTimeout(noteTimer);
    noteTimer = null;
    saveNote();
  }
  function saveNote() {
    noteTimer = null;
    if (current < 0) return;
    var it = items[current], v = $('note').value;
    var s = st(it);
    if (s.note === v) return;
    s.note = v;
    updateRow(current);
    save();
  }
  function wireNote() {
    $('note').addEventListener('input', function () {
      if (current < 0) return;
      st(items[current]).note = $('note').value;   // state is current at once (export, decisions())
      clearTimeout(noteTimer);
      noteTimer = setTimeout(function () { noteTimer = null; updateRow(current); save(); }, 250);
    });
    $('note').addEventListener('blur', flushNote);
    window.addEventListener('pagehide', function () { flushNote(); save(); });
    document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') { flushNote(); save(); } });
  }

  // ---------------------------------------------------------------- overlays
  function helpOpen() { return !$('help').hidden; }
  function toggleHelp(on) { $('help').hidden = on === undefined ? !$('help').hidden : !on; }
  function openLightbox(src, cap) {
    $('lightbox-img').src = src;
    $('lightbox-cap').textContent = cap;
    $('lightbox').hidden = false;
  }
  function closeLightbox() { $('lightbox').hidden = true; $('lightbox-img').removeAttribute('src'); }
  function wireOverlays() {
    $('help').addEventListener('click', function (e) { if (e.target === $('help')) toggleHelp(false); });
    $('help-close').addEventListener('click', function () { toggleHelp(false); });
    $('help-button').addEventListener('click', function () { toggleHelp(); });
    $('lightbox').addEventListener('click', closeLightbox);
  }

  // ---------------------------------------------------------------- keyboard
  function typingIn(t) {
    if (!t || !t.tagName) return false;
    if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
    if (t.tagName === 'INPUT') return !/^(checkbox|radio|button|submit|reset|file|range|color)$/i.test(t.type);
    return false;
  }
  function togglePlay() {
    if (clipV.hidden || !clipV.getAttribute('src')) return;
    if (clipV.paused || clipV.ended) { var p = clipV.play(); if (p && p.catch) p.catch(function () { /* interrupted */ }); }
    else clipV.pause();
  }
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    var key = e.key;
    if (!$('lightbox').hidden) {
      if (key === 'Escape' || key === ' ' || key === 'Enter') { closeLightbox(); e.preventDefault(); e.stopPropagation(); }
      return;
    }
    if (helpOpen()) {
      if (key === 'Escape' || key === '?') { toggleHelp(false); e.preventDefault(); e.stopPropagation(); }
      return;
    }
    if (typingIn(e.target)) {
      if (key === 'Escape') { e.target.blur(); e.preventDefault(); }
      return;
    }
    var handled = true;
    switch (key) {
      case 'j': case 'ArrowDown': select(neighbour(1)); break;
      case 'k': case 'ArrowUp': select(neighbour(-1)); break;
      case 'a': setVerdict('accepted'); break;
      case 'r': setVerdict('rejected'); break;
      case 'u': setVerdict('unreviewed'); break;
      case '1': case '2': case '3': case '4': toggleCriterion(+key - 1); break;
      case 'ArrowLeft': moveDecision(e.shiftKey ? -10 : -1); break;
      case 'ArrowRight': moveDecision(e.shiftKey ? 10 : 1); break;
      case ' ': case 'Spacebar': togglePlay(); break;
      case 'n': $('note').focus(); break;
      case 'e': exportDecisions(); break;
      case '/': $('search').focus(); $('search').select(); break;
      case '?': toggleHelp(true); break;
      case 'Escape': if (document.activeElement && document.activeElement.blur) document.activeElement.blur(); break;
      default: handled = false;
    }
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  }
  function wireKeyboard() { window.addEventListener('keydown', onKey, true); }

  // ---------------------------------------------------------------- wiring
  var lastW = 0;
  function wireControls() {
    listEl.addEventListener('click', function (e) {
      var row = e.target.closest ? e.target.closest('.item-row') : null;
      if (row) select(+row.dataset.n, { scroll: false });
    });
    $('search').addEventListener('input', function () { applyList(false); });
    $('filter').addEventListener('change', function () { applyList(false); this.blur(); });
    $('sort').addEventListener('change', function () { applyList(true); this.blur(); if (rows[current]) scrollRowIntoView(rows[current]); });
    $('sort-dir').addEventListener('click', function () {
      sortDesc = !sortDesc;
      this.textContent = sortDesc ? '↑' : '↓';
      this.title = sortDesc ? 'Reversed order (click for normal)' : 'Reverse the order';
      applyList(true);
      this.blur();
    });
    $('prev').addEventListener('click', function () { select(neighbour(-1)); });
    $('next').addEventListener('click', function () { select(neighbour(1)); });
    $('accept').addEventListener('click', function () { setVerdict('accepted'); });
    $('reject').addEventListener('click', function () { setVerdict('rejected'); });
    $('unreview').addEventListener('click', function () { setVerdict('unreviewed'); });
    $('decision-reset').addEventListener('click', resetDecision);
    $('export').addEventListener('click', exportDecisions);
    $('import').addEventListener('change', function () {
      var f = this.files && this.files[0];
      if (!f) return;
      var input = this;
      var r = new FileReader();
      r.onload = function () { importDecisions(String(r.result)); input.value = ''; };
      r.onerror = function () { toast('Import failed: could not read the file', true); input.value = ''; };
      r.readAsText(f);
    });
    // re-lay the ruler when the width changes a lot
    window.addEventListener('resize', function () {
      var w = tlEl.clientWidth;
      if (current >= 0 && Math.abs(w - lastW) > 40) { lastW = w; renderTimeline(items[current], cache[current] || null); renderDecision(false); }
    });
  }

  // ---------------------------------------------------------------- start
  function start() {
    var ri = $('run-info');
    ri.textContent = INDEX.run_dir || '';
    ri.title = 'run ' + (INDEX.run_dir || '?') + '\nmanifest ' + (INDEX.manifest || '—') + '\nreview id ' + reviewId +
      '\nvidprep ' + (INDEX.vidprep_version || '?');
    document.title = 'vidprep review · ' + basename(INDEX.run_dir || '') ;
    loadState();
    buildCriteria();
    buildRows();
    applyList(true);
    if (!items.length) {
      $('detail-empty').textContent = 'This run has no items.';
    } else {
      var want = null;
      var m = /^#item=(.*)$/.exec(location.hash || '');
      if (m) { try { want = byId[decodeURIComponent(m[1])]; } catch (e) { want = null; } }
      select(want ? want.n : (visible.length ? visible[0] : 0));
      lastW = tlEl.clientWidth;
    }
  }
  function exposeApi() {
    window.vidprepReview = {
      decisions: decisions,
      exportDecisions: exportDecisions,
      importDecisions: importDecisions,
      select: function (x) { var it = typeof x === 'number' ? items[x] : byId[x]; if (it) select(it.n); return !!it; },
      current: function () { return current >= 0 ? items[current].id : null; },
      errors: function () { return errorsList.slice(); },
      storageKey: storageKey
    };
  }
  function main() {
    window.vidprepReviewReceive = receiveDetail;
    wireFrameView();
    wireTimeline();
    wireNote();
    wireOverlays();
    wireKeyboard();
    wireControls();
    start();
    exposeApi();
  }
  main();
})();
