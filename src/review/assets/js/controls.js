/* review page: controls.js. Wiring of the buttons, search, filter, sort, import and resize (wireControls).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, toast = R.toast, items = R.items, listEl = R.listEl, tlEl = R.tlEl;
  function wireControls() {
    listEl.addEventListener('click', function (e) {
      var row = e.target.closest ? e.target.closest('.item-row') : null;
      if (row) R.select(+row.dataset.n, { scroll: false });
    });
    $('search').addEventListener('input', function () { R.applyList(false); });
    $('filter').addEventListener('change', function () { R.applyList(false); this.blur(); });
    $('sort').addEventListener('change', function () { R.applyList(true); this.blur(); if (S.rows[S.current]) R.scrollRowIntoView(S.rows[S.current]); });
    $('sort-dir').addEventListener('click', function () {
      S.sortDesc = !S.sortDesc;
      this.textContent = S.sortDesc ? '↑' : '↓';
      this.title = S.sortDesc ? 'Reversed order (click for normal)' : 'Reverse the order';
      R.applyList(true);
      this.blur();
    });
    $('prev').addEventListener('click', function () { R.select(R.neighbour(-1)); });
    $('next').addEventListener('click', function () { R.select(R.neighbour(1)); });
    $('accept').addEventListener('click', function () { R.setVerdict('accepted'); });
    $('reject').addEventListener('click', function () { R.setVerdict('rejected'); });
    $('unreview').addEventListener('click', function () { R.setVerdict('unreviewed'); });
    $('decision-reset').addEventListener('click', R.resetDecision);
    $('export').addEventListener('click', R.exportDecisions);
    $('import').addEventListener('change', function () {
      var f = this.files && this.files[0];
      if (!f) return;
      var input = this;
      var r = new FileReader();
      r.onload = function () { R.importDecisions(String(r.result)); input.value = ''; };
      r.onerror = function () { toast('Import failed: could not read the file', true); input.value = ''; };
      r.readAsText(f);
    });
    // re-lay the ruler when the width changes a lot
    window.addEventListener('resize', function () {
      var w = tlEl.clientWidth;
      if (S.current >= 0 && Math.abs(w - S.lastW) > 40) { S.lastW = w; R.renderTimeline(items[S.current], S.cache[S.current] || null); R.renderDecision(false); }
    });
  }

  R.wireControls = wireControls;
})(R);
