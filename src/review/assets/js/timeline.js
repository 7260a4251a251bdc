/* review page: timeline.js. The timeline and the decision point: frame times, thumbnails, ruler, sample ticks,
 * renderDecision, set/move/reset, and its pointer input (wireTimeline).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, fmtS = R.fmtS, clamp = R.clamp, items = R.items, frameV = R.frameV, tlEl = R.tlEl;
  function frameTime(k) {                   // presentation time of span frame k (k may be N: end)
    if (!S.P || !S.P.times) return null;
    return k >= S.P.N ? S.P.end : S.P.times[k];
  }
  function frameMid(k) {                    // middle of frame k's display interval
    var a = S.P.times[k], b = k + 1 < S.P.N ? S.P.times[k + 1] : S.P.end;
    return (a + b) / 2;
  }

  // clip time of the decision point at span frame k: the builder's value for the original point;
  // otherwise the preview time, shifted by an inserted needle that lies before k
  function clipTimeOf(it, k) {
    if (S.D && S.D.decision && S.D.decision.frame === k && num(S.D.decision.clip_time_s)) return S.D.decision.clip_time_s;
    var t = frameTime(k);
    var nd = S.D && S.D.needle, v = S.D && S.D.videos && S.D.videos[0];
    if (num(t) && nd && num(nd.start) && num(nd.end) && k > nd.start && v && num(v.frames) && v.frames > 0 && num(v.duration_s)) {
      t += (nd.end - nd.start) * v.duration_s / v.frames;
    }
    return t;
  }

  function renderTimeline(it, d) {
    var tl = $('timeline'), thumbs = clear($('tl-thumbs')), ruler = clear($('tl-ruler')), ticks = clear($('tl-samples'));
    var box = $('timeline-box'), empty = $('timeline-empty');
    $('timeline-help').hidden = !S.P;
    if (!S.P) {
      box.hidden = true;
      empty.hidden = false;
      empty.textContent = it.status === 'failed' ? 'No span: the item failed.' : 'No span information for this item.';
      $('timeline-info').textContent = '';
      return;
    }
    box.hidden = false;
    empty.hidden = true;
    var N = S.P.N;
    var info = [N + ' span frames'];
    var span = d && d.span;
    if (span && num(span.start_frame)) info.push('source frames ' + R.frameRange(span.start_frame, span.end_frame));
    if (span && num(span.start_s)) info.push('source ' + fmtS(span.start_s, 2) + '–' + fmtS(span.end_s, 2) + ' s');
    if (S.P.error) info.push('preview: ' + S.P.error);
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
    if (sets.length && S.P.srcStart != null) {
      var tf = document.createDocumentFragment();
      (sets[0].images || []).forEach(function (im, i) {
        var sf = spanFrameOf(im);
        if (sf == null) return;
        tf.appendChild(el('span', { cls: 'tl-sample', style: 'left:' + ((sf + 0.5) / N * 100) + '%',
          title: 'sampled image #' + i + ' · stream frame ' + im.stream_frame + ' · span frame ' + sf }));
      });
      ticks.appendChild(tf);
    }
  }
  function spanFrameOf(im) {
    if (!S.P || S.P.srcStart == null || !im || !num(im.source_frame)) return null;
    if (im.source != null && im.source !== 0) return null;
    var sf = im.source_frame - S.P.srcStart;
    return sf >= 0 && sf < S.P.N ? sf : null;
  }

  // decision point: marker, greyed part, frame view, label
  function renderDecision(seek) {
    if (S.current < 0) return;
    var it = items[S.current];
    var label = $('frame-label'), note = $('frame-note'), marker = $('decision-marker'), trunc = $('tl-truncated'),
      orig = $('decision-original'), reset = $('decision-reset'), empty = $('frame-empty');
    var k = R.effDecision(it);
    var ch = R.changed(it);
    reset.disabled = !ch;
    note.className = 'small muted';
    if (!S.P) {
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
    var N = S.P.N;
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
      S.fv.wantT = null;
      note.textContent = 'Click the span below (or press ← / →) to set a decision point.';
      frameV.hidden = true;
      empty.hidden = false;
      empty.textContent = 'no decision point';
      return;
    }
    frameV.hidden = !S.P.path;
    empty.hidden = !!S.P.path;
    if (!S.P.path) empty.textContent = S.P.error ? 'no preview: ' + S.P.error : 'no preview';
    marker.hidden = false;
    marker.style.left = (k / N * 100) + '%';
    marker.classList.toggle('moved', ch);
    $('decision-flag').textContent = String(k);
    trunc.style.display = k >= N ? 'none' : '';
    trunc.style.left = (k / N * 100) + '%';
    var shown = k >= N ? N - 1 : k;
    var src = S.P.srcStart != null ? S.P.srcStart + k : null;
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
    R.markSamplesAfter(k);
    if (seek !== false && S.P.times && S.P.path) R.seekFrameView(frameMid(shown), S.P.times[shown], shown + 1 < S.P.N ? S.P.times[shown + 1] : S.P.end);
    else if (!S.P.times || !S.P.path) label.dataset.ready = S.P.path ? 'false' : 'true';
  }

  function setDecision(k) {
    if (S.current < 0 || !S.P) return;
    var it = items[S.current];
    k = clamp(Math.round(k), 1, S.P.N);
    if (k === R.effDecision(it)) return;
    var s = R.st(it);
    s.decision = k === it.decision_frame ? null : k;
    renderDecision(true);
    R.touched(S.current);
  }
  function moveDecision(delta) {
    if (S.current < 0 || !S.P) return;
    var k = R.effDecision(items[S.current]);
    if (k == null) k = S.P.N;
    setDecision(k + delta);
  }
  function resetDecision() {
    if (S.current < 0) return;
    var it = items[S.current], s = R.stPeek(it);
    if (!s || s.decision == null) return;
    s.decision = null;
    renderDecision(true);
    R.touched(S.current);
  }

  // timeline pointer input: x in [0, width) -> floor(x / width * N), clamped to [1, N]
  var dragging = false;
  function frameAt(clientX) {
    var r = tlEl.getBoundingClientRect();
    if (!S.P || r.width <= 0) return null;
    return clamp(Math.floor((clientX - r.left) / r.width * S.P.N), 1, S.P.N);
  }
  function endDrag() { dragging = false; }
  function wireTimeline() {
    tlEl.addEventListener('pointerdown', function (e) {
      if (e.button !== 0 || !S.P) return;
      dragging = true;
      try { tlEl.setPointerCapture(e.pointerId); } catch (x) { /* ignore */ }
      var k = frameAt(e.clientX);
      if (k != null) setDecision(k);
      e.preventDefault();
    });
    tlEl.addEventListener('pointermove', function (e) {
      var hover = $('tl-hover');
      if (!S.P) { hover.hidden = true; return; }
      var r = tlEl.getBoundingClientRect();
      var f = clamp(Math.floor((e.clientX - r.left) / r.width * S.P.N), 0, S.P.N - 1);
      hover.hidden = false;
      hover.style.left = (f / S.P.N * 100) + '%';
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

  R.frameMid = frameMid;
  R.moveDecision = moveDecision;
  R.renderDecision = renderDecision;
  R.renderTimeline = renderTimeline;
  R.resetDecision = resetDecision;
  R.spanFrameOf = spanFrameOf;
  R.wireTimeline = wireTimeline;
})(R);
