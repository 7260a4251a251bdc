/* review page: main.js. Start: run info, saved state, the first item (start), window.vidprepReview (exposeApi),
 * and main(), which wires each module's events in order and starts the page (or
 * shows that there is no data). Last in the bundle: it runs main().
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, basename = R.basename, INDEX = R.INDEX, errorsList = R.errorsList, items = R.items, byId = R.byId, reviewId = R.reviewId, storageKey = R.storageKey, tlEl = R.tlEl;
  function start() {
    var ri = $('run-info');
    ri.textContent = INDEX.run_dir || '';
    ri.title = 'run ' + (INDEX.run_dir || '?') + '\nmanifest ' + (INDEX.manifest || '—') + '\nreview id ' + reviewId +
      '\nvidprep ' + (INDEX.vidprep_version || '?');
    document.title = 'vidprep review · ' + basename(INDEX.run_dir || '') ;
    R.loadState();
    R.buildCriteria();
    R.buildRows();
    R.applyList(true);
    if (!items.length) {
      $('detail-empty').textContent = 'This run has no items.';
    } else {
      var want = null;
      var m = /^#item=(.*)$/.exec(location.hash || '');
      if (m) { try { want = byId[decodeURIComponent(m[1])]; } catch (e) { want = null; } }
      R.select(want ? want.n : (S.visible.length ? S.visible[0] : 0));
      S.lastW = tlEl.clientWidth;
    }
  }
  function exposeApi() {
    window.vidprepReview = {
      decisions: R.decisions,
      exportDecisions: R.exportDecisions,
      // the shown item's boxes as the annotation file "Export boxes" writes (null: none to write)
      boxesFile: function () { return S.current >= 0 ? R.boxesFile(items[S.current]) : null; },
      importDecisions: R.importDecisions,
      select: function (x) { var it = typeof x === 'number' ? items[x] : byId[x]; if (it) R.select(it.n); return !!it; },
      current: function () { return S.current >= 0 ? items[S.current].id : null; },
      errors: function () { return errorsList.slice(); },
      storageKey: storageKey
    };
  }
  function main() {
    if (!R.hasData) { R.showNoData(); return; }
    window.vidprepReviewReceive = R.receiveDetail;
    R.wireFrameView();
    R.wireTimeline();
    R.wireNote();
    R.wireOverlays();
    R.wireKeyboard();
    R.wireBoxes();
    R.wireControls();
    start();
    exposeApi();
  }

  // main.js comes last in the bundle: every module has registered itself.
  main();
})(R);
