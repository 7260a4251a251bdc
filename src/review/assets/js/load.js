/* review page: load.js. Detail loading: the data/items/NNNNN.js cache (receiveDetail, loadDetail) and select().
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, num = R.num, errorsList = R.errorsList, items = R.items, listEl = R.listEl;
  var cacheOrder = [];
  var loading = {};        // n -> true
  var CACHE_MAX = 120;

  function receiveDetail(n, data) {
    if (!num(n) || !items[n]) { errorsList.push('vidprepReviewReceive: unknown item ' + n); return; }
    S.cache[n] = data || {};
    cacheOrder = cacheOrder.filter(function (x) { return x !== n; });
    cacheOrder.push(n);
    while (cacheOrder.length > CACHE_MAX) {
      var i = cacheOrder[0] === S.current ? 1 : 0;
      delete S.cache[cacheOrder[i]];
      cacheOrder.splice(i, 1);
    }
    if (n === S.current && $('detail').dataset.id !== items[n].id) R.renderDetail(n);
  }
  function loadDetail(n) {
    if (S.cache[n] || loading[n] || n < 0 || !items[n]) return;
    var it = items[n];
    if (!it.detail) { S.failedLoad[n] = 'the index names no detail file'; return; }
    loading[n] = true;
    var s = document.createElement('script');
    s.src = it.detail;
    s.async = true;
    s.onload = function () {
      delete loading[n]; s.remove();
      if (!S.cache[n]) { S.failedLoad[n] = it.detail + ' did not call vidprepReviewReceive(' + n + ', …)'; if (n === S.current) R.renderDetail(n); }
    };
    s.onerror = function () {
      delete loading[n]; s.remove();
      S.failedLoad[n] = 'could not load ' + it.detail;
      if (n === S.current) R.renderDetail(n);
    };
    document.head.appendChild(s);
  }

  function select(n, opts) {
    if (n < 0 || !items[n]) return;
    var it = items[n];
    if (n === S.current && $('detail').dataset.id === it.id) return;
    if (S.rows[S.current]) { S.rows[S.current].classList.remove('selected'); S.rows[S.current].removeAttribute('aria-selected'); }
    R.flushNote();
    S.current = n;
    var row = S.rows[n];
    row.classList.add('selected');
    row.setAttribute('aria-selected', 'true');
    if (!opts || opts.scroll !== false) scrollRowIntoView(row);
    try { history.replaceState(null, '', '#item=' + encodeURIComponent(it.id)); } catch (e) { /* file:// in some browsers */ }
    var det = $('detail');
    det.dataset.id = '';
    det.setAttribute('data-loading', 'true');
    R.stopMedia();
    delete S.failedLoad[n];
    if (S.cache[n]) R.renderDetail(n);
    else {
      // show what the index knows while the detail file loads
      R.renderHead(it, null);
      loadDetail(n);
    }
  }
  function scrollRowIntoView(row) {
    if (!row.parentNode) return;
    var top = row.offsetTop, bottom = top + row.offsetHeight;
    if (top < listEl.scrollTop) listEl.scrollTop = top - 4;
    else if (bottom > listEl.scrollTop + listEl.clientHeight) listEl.scrollTop = bottom - listEl.clientHeight + 4;
  }

  R.loadDetail = loadDetail;
  R.receiveDetail = receiveDetail;
  R.scrollRowIntoView = scrollRowIntoView;
  R.select = select;
})(R);
