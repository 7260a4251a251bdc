/* review page: detail.js. Detail rendering: the head, the preview facts (normPreview), renderDetail (which calls
 * every panel's renderer), and the clip with its video tabs.
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, fmtS = R.fmtS, basename = R.basename, plural = R.plural, items = R.items, clipV = R.clipV, frameV = R.frameV;

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
    $('prev').disabled = R.neighbour(-1) < 0;
    $('next').disabled = R.neighbour(1) < 0;
    var err = $('item-error');
    var msg = it.status === 'failed' ? 'This item failed: ' + (it.error || 'no error message') : '';
    if (!d && S.failedLoad[it.n]) msg = (msg ? msg + '\n' : '') + 'Detail data: ' + S.failedLoad[it.n];
    err.textContent = msg;
    err.hidden = !msg;
    R.renderQc();
  }

  function normPreview(it, d) {
    var p = d && d.preview;
    var N = R.spanFrames(it) || (p && num(p.frames) ? p.frames : null);
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
    var it = items[n], d = S.cache[n] || null;
    S.D = d;
    S.P = normPreview(it, d);
    renderHead(it, d);
    renderVideos(it, d);
    R.renderTimeline(it, d);
    R.renderDecision(true);
    R.renderSamples(it, d);
    R.renderFacts(it, d);
    R.renderModel(it, d);
    R.renderBoxes();
    var det = $('detail');
    det.dataset.id = it.id;
    det.removeAttribute('data-loading');
    // prefetch the neighbours the reviewer is most likely to open next
    var nx = R.neighbour(1), pv = R.neighbour(-1);
    if (nx >= 0) R.loadDetail(nx);
    if (pv >= 0) setTimeout(function () { R.loadDetail(pv); }, 200);
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
    if (S.P && S.P.path) {
      frameV.setAttribute('src', S.P.path);
      $('frame-empty').hidden = true;
    } else {
      R.unsetSrc(frameV);
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
      R.unsetSrc(clipV);
      clipV.hidden = true;
      ce.hidden = false;
      ce.textContent = it && it.status === 'failed' ? 'no clip (failed item)' : 'no video output';
      info.textContent = S.D || !it ? 'No video output for this item.' : '';
      return;
    }
    clipV.hidden = false;
    ce.hidden = true;
    if (clipV.getAttribute('src') !== v.path) {
      R.unsetSrc(clipV);
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
    var needle = S.D && S.D.needle;
    if (i === 0 && needle && num(needle.start)) {
      info.appendChild(el('div', { cls: 'needle-note', text: 'needle inserted at output frames ' + R.frameRange(needle.start, needle.end) +
        (num(v.duration_s) && num(v.frames) && v.frames ? ' (' + fmtS(needle.start * v.duration_s / v.frames, 2) + '–' + fmtS(needle.end * v.duration_s / v.frames, 2) + ' s)' : '') }));
    }
  }

  R.renderDetail = renderDetail;
  R.renderHead = renderHead;
})(R);
