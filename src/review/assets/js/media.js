/* review page: media.js. Media: the clip and the frame view's serialised, frame-exact seeks of preview.mp4
 * (pumpSeek ... seekFrameView, wireFrameView), and the frame-exact seeker the box view uses too
 * (frameSeeker).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, clipV = R.clipV, frameV = R.frameV;
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
    unsetSrc($('box-view'));   // boxes.js loads it again (renderBoxes) if its panel is open
    S.fv = newSeekState();
  }

  // Serialised, frame-exact seeking of a preview, proven on screen: a seeker is a video, its
  // label (whose data-ready says the wanted frame is shown) and its state (`st()`: replaced
  // when the video is unloaded), with what to do when the browser lands elsewhere (`missed`).
  // The frame view and the box view (boxes.js) each have one.
  function newSeekState() { return { wantT: null, wantLo: null, wantHi: null, wantSeq: 0, issuedSeq: -1, seeking: false, presentedT: null, framesSinceSeeked: 0, nudges: 0 }; }
  S.fv = newSeekState();
  function pumpSeek(K) {
    var st = K.st(), v = K.v;
    if (st.wantT == null || st.seeking || !v.getAttribute('src')) return;
    if (v.readyState < 1) return;           // loadedmetadata will call again
    if (st.issuedSeq === st.wantSeq) return;
    st.seeking = true;
    st.issuedSeq = st.wantSeq;
    var seq = st.issuedSeq;
    v.currentTime = st.wantT;
    // safety net: a browser that does not fire `seeked` for a no-op seek
    setTimeout(function () {
      if (K.st() === st && st.seeking && st.issuedSeq === seq && !v.seeking && v.readyState >= 2) onSeeked(K);
    }, 1500);
  }
  function onSeeked(K) {
    var st = K.st(), v = K.v;
    if (!st.seeking) return;
    st.seeking = false;
    if (st.issuedSeq !== st.wantSeq) { pumpSeek(K); return; }
    // The frame is only shown if the browser really went there: a server that does not answer
    // range requests lets it seek only inside what it has downloaded (it lands elsewhere).
    if (Math.abs(v.currentTime - st.wantT) > 0.001) { K.missed(K); return; }
    delete $(K.label).dataset.error;
    refreshReady(K);
    // A browser without requestVideoFrameCallback cannot say what is on screen: ready now. One
    // that has it but has not presented a frame of this source yet (or whose frame times are not
    // the preview's) gets a fallback long enough for a loaded machine's compositor.
    if (typeof v.requestVideoFrameCallback !== 'function') { markReady(K); return; }
    var seq = st.issuedSeq;
    st.framesSinceSeeked = 0;
    // Nothing presented yet from this source: a browser that presents no frame for a paused
    // seek; ready after a while.
    setTimeout(function () {
      if (K.st() === st && st.issuedSeq === seq && st.presentedT == null) markReady(K);
    }, 5000);
    // Frames presented since the seek but none of them the wanted one: the preview's frame
    // times are not the ones the browser reports; ready. No frame presented since the seek:
    // the compositor has not shown it yet (a loaded machine), and the screen still holds an
    // earlier frame, so the page must not say ready; the seek is issued again instead.
    setTimeout(function () {
      if (K.st() !== st || st.issuedSeq !== seq || st.seeking) return;
      if (st.framesSinceSeeked > 0) { markReady(K); return; }
      if (st.presentedT == null) return;   // the 5 s rule above
      // (A seek to the same time presents nothing: another time inside the wanted frame.)
      st.nudges++;
      st.wantT = st.wantLo + (st.wantHi - st.wantLo) * (st.nudges % 2 ? 0.3 : 0.5);
      st.wantSeq++;
      pumpSeek(K);
    }, 10000);
  }
  // A view is ready when the seek asked for is done and the frame on screen is the wanted one:
  // `seeked` can come before the compositor presents the new frame, and a frame of an earlier
  // seek can be presented after it (on a loaded machine the page said "frame 30" while frame 31
  // was shown). The presented frame's time comes from requestVideoFrameCallback.
  function seekSettled(K) {
    var st = K.st();
    return st.wantT != null && !st.seeking && st.issuedSeq === st.wantSeq &&
      Math.abs(K.v.currentTime - st.wantT) <= 0.001 && !$(K.label).dataset.error;
  }
  function presentedIsWanted(K) {
    var st = K.st(), t = st.presentedT;
    return t != null && t >= st.wantLo - 0.001 && t < st.wantHi - 0.0001;
  }
  function markReady(K) {
    if (seekSettled(K)) $(K.label).dataset.ready = 'true';
  }
  function refreshReady(K) {
    if (typeof K.v.requestVideoFrameCallback !== 'function') return;
    $(K.label).dataset.ready = seekSettled(K) && presentedIsWanted(K) ? 'true' : 'false';
  }
  // Follows every frame the view presents (a paused video presents one per finished seek).
  function trackPresented(K) {
    var v = K.v;
    if (typeof v.requestVideoFrameCallback !== 'function') return;
    if (K.handle != null && typeof v.cancelVideoFrameCallback === 'function') v.cancelVideoFrameCallback(K.handle);
    var state0 = K.st();
    var onFrame = function (now, md) {
      K.handle = null;
      if (K.st() === state0 && md && typeof md.mediaTime === 'number') {
        state0.presentedT = md.mediaTime;
        state0.framesSinceSeeked++;
        refreshReady(K);
      }
      K.handle = v.requestVideoFrameCallback(onFrame);
    };
    K.handle = v.requestVideoFrameCallback(onFrame);
  }
  // Seeks the view to time t, inside the wanted frame's display interval [lo, hi).
  function seekTo(K, t, lo, hi) {
    var st = K.st();
    st.wantT = t;
    st.wantLo = lo == null ? t : lo;
    st.wantHi = hi == null ? t + 0.001 : hi;
    st.wantSeq++;
    st.nudges = 0;
    $(K.label).dataset.ready = 'false';
    pumpSeek(K);
  }
  // A seeker of video `v` whose label is the element `label` (an id), its state kept by
  // `st()`; `missed(K)` is called when the browser lands elsewhere than asked.
  function frameSeeker(v, label, st, missed) {
    var K = { v: v, label: label, st: st, missed: missed, handle: null };
    v.addEventListener('seeked', function () { onSeeked(K); });
    v.addEventListener('loadedmetadata', function () { trackPresented(K); pumpSeek(K); });
    return { seek: function (t, lo, hi) { seekTo(K, t, lo, hi); } };
  }
  var FV = { v: frameV, label: 'frame-label', st: function () { return S.fv; }, missed: seekMissed, handle: null };

  // A missed seek over http(s): fetch the whole (small) preview once and seek in memory.
  function seekMissed() {
    var src = frameV.getAttribute('src') || '';
    if (!S.fv.blob && /^https?:$/.test(location.protocol) && src.indexOf('blob:') !== 0) {
      S.fv.blob = 'loading';
      var state0 = S.fv;
      fetch(src).then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status + ' for ' + src);
        return r.blob();
      }).then(function (b) {
        if (S.fv !== state0) return;
        S.fv.blob = 'loaded';
        S.fv.issuedSeq = -1;
        frameV.setAttribute('src', URL.createObjectURL(b));   // loadedmetadata seeks again
      }).catch(function (e) { if (S.fv === state0) seekFailed(String(e)); });
      return;
    }
    seekFailed('the browser could not seek to ' + S.fv.wantT.toFixed(3) + ' s (it is at ' + frameV.currentTime.toFixed(3) + ' s)');
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
    frameV.addEventListener('seeked', function () { onSeeked(FV); });
    frameV.addEventListener('loadedmetadata', function () { trackPresented(FV); pumpSeek(FV); });
    frameV.addEventListener('error', function () {
      if (!frameV.getAttribute('src')) return;
      var note = $('frame-note');
      note.textContent = 'The preview could not be played (' + (frameV.error ? 'media error ' + frameV.error.code : 'error') + '): ' + frameV.getAttribute('src');
      note.className = 'small bad';
    });
  }
  // Seeks the frame view to time t, inside the wanted frame's display interval [lo, hi).
  function seekFrameView(t, lo, hi) { seekTo(FV, t, lo, hi); }

  R.seekFrameView = seekFrameView;
  R.frameSeeker = frameSeeker;
  R.newSeekState = newSeekState;
  R.stopMedia = stopMedia;
  R.unsetSrc = unsetSrc;
  R.wireFrameView = wireFrameView;
})(R);
