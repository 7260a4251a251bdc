/* review page: list.js. The item list: rows, sort, filter, search, counts, neighbour; touched() after a state
 * change.
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, num = R.num, fmtS = R.fmtS, plural = R.plural, items = R.items, listEl = R.listEl;
  var sorted = [];         // all n, in sort order
  var visibleSet = {};

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
      S.rows[n] = row;
      updateRow(n);
    });
  }
  function updateRow(n) {
    var it = items[n], row = S.rows[n];
    if (!row) return;
    row.dataset.verdict = R.verdictOf(it);
    var ch = R.changed(it);
    row.dataset.changed = ch ? 'true' : 'false';
    var b = '';
    if (it.status === 'failed') b += '<span class="b b-fail" title="failed">failed</span>';
    if (ch) b += '<span class="b b-moved" title="decision point moved">moved</span>';
    if (it.warnings) b += '<span class="b b-warn" title="warnings">⚠ ' + (it.warnings | 0) + '</span>';
    if (it.damaged) b += '<span class="b b-fail" title="damaged frames">dmg ' + (it.damaged | 0) + '</span>';
    var s = R.stPeek(it);
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
      case 'verdict': return function (a, b) { return VERDICT_RANK[R.verdictOf(a)] - VERDICT_RANK[R.verdictOf(b)]; };
      default: return function (a, b) { return (a.line | 0) - (b.line | 0); };
    }
  }
  function computeSorted() {
    var cmp = sortKeyFn($('sort').value);
    var arr = items.slice();
    arr.sort(function (a, b) { return cmp(a, b) || (a.line | 0) - (b.line | 0) || a.n - b.n; });
    if (S.sortDesc) arr.reverse();
    sorted = arr.map(function (it) { return it.n; });
  }
  function passes(it) {
    var q = $('search').value.trim().toLowerCase();
    if (q && String(it.id).toLowerCase().indexOf(q) < 0) return false;
    switch ($('filter').value) {
      case 'unreviewed': return R.verdictOf(it) === 'unreviewed';
      case 'accepted': return R.verdictOf(it) === 'accepted';
      case 'rejected': return R.verdictOf(it) === 'rejected';
      case 'moved': return R.changed(it);
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
    var same = next.length === S.visible.length && next.every(function (n, i) { return S.visible[i] === n; });
    if (!same) {
      S.visible = next;
      visibleSet = {};
      var frag = document.createDocumentFragment();
      S.visible.forEach(function (n) { visibleSet[n] = true; frag.appendChild(S.rows[n]); });
      listEl.textContent = '';
      listEl.appendChild(frag);
      if (!S.visible.length) listEl.appendChild(el('div', { cls: 'list-empty', text: 'No items match.' }));
    }
    $('shown-count').textContent = S.visible.length === items.length ? 'showing all ' + plural(items.length, 'item')
      : 'showing ' + S.visible.length + ' of ' + items.length;
    updateCounts();
  }
  function tally() {
    var c = { accepted: 0, rejected: 0, unreviewed: 0, moved: 0 };
    items.forEach(function (it) { c[R.verdictOf(it)]++; if (R.changed(it)) c.moved++; });
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
    R.save();
    applyList(false);   // filter membership and counts; the sort order stays put until the sort changes
  }

  function neighbour(step) {
    if (!sorted.length) return -1;
    var pos = sorted.indexOf(S.current);
    if (pos < 0) return S.visible.length ? S.visible[step > 0 ? 0 : S.visible.length - 1] : -1;
    for (var i = pos + step; i >= 0 && i < sorted.length; i += step) {
      if (visibleSet[sorted[i]]) return sorted[i];
    }
    return -1;
  }

  R.applyList = applyList;
  R.buildRows = buildRows;
  R.neighbour = neighbour;
  R.tally = tally;
  R.touched = touched;
  R.updateRow = updateRow;
})(R);
