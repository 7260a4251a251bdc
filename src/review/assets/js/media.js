/* review page: media.js. Media: the clip and the frame view's serialised, frame-exact seeks of preview.mp4
 * (pumpSeek ... seekFrameView, wireFrameView).
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

  // frame view: serialised, frame-exact seeking of preview.mp4
  function newSeekState() { return { wantT: null, wantLo: null, wantHi: null, wantSeq: 0, issuedSeq: -1, seeking: false, presentedT: null, framesSinceSeeked: 0, nudges: 0 }; }
  S.fv = newSeekState();
  function pumpSeek() {
    if (S.fv.wantT == null || S.fv.seeking || !frameV.getAttribute('src')) return;
    if (frameV.readyState < 1) return;           // loadedmetadata will call again
    if (S.fv.issuedSeq === S.fv.wantSeq) return;
    S.fv.seeking = true;
    S.fv.issuedSeq = S.fv.wantSeq;
    var seq = S.fv.issuedSeq, state0 = S.fv;
    frameV.currentTime = S.fv.wantT;
    // safety net: a browser that does not fire `seeked` for a no-op seek
    setTimeout(function () {
      if (S.fv === state0 && S.fv.seeking && S.fv.issuedSeq === seq && !frameV.seeking && frameV.readyState >= 2) onSeeked();
    }, 1500);
  }
  function onSeeked() {
    if (!S.fv.seeking) return;
    S.fv.seeking = false;
    if (S.fv.issuedSeq !== S.fv.wantSeq) { pumpSeek(); return; }
    // The frame is only shown if the browser really went there: a server that does not answer
    // range requests lets it seek only inside what it has downloaded (it lands elsewhere).
    if (Math.abs(frameV.currentTime - S.fv.wantT) > 0.001) { seekMissed(); return; }
    var label = $('frame-label');
    delete label.dataset.error;
    refreshReady();
    // A browser without requestVideoFrameCallback cannot say what is on screen: ready now. One
    // that has it but has not presented a frame of this source yet (or whose frame times are not
    // the preview's) gets a fallback long enough for a loaded machine's compositor.
    if (typeof frameV.requestVideoFrameCallback !== 'function') { markReady(); return; }
    var seq = S.fv.issuedSeq, state0 = S.fv;
    S.fv.framesSinceSeeked = 0;
    // Nothing presented yet from this source: a browser that presents no frame for a paused
    // seek; ready after a while.
    setTimeout(function () {
      if (S.fv === state0 && S.fv.issuedSeq === seq && S.fv.presentedT == null) markReady();
    }, 5000);
    // Frames presented since the seek but none of them the wanted one: the preview's frame
    // times are not the ones the browser reports; ready. No frame presented since the seek:
    // the compositor has not shown it yet (a loaded machine), and the screen still holds an
    // earlier frame, so the page must not say ready; the seek is issued again instead.
    setTimeout(function () {
      if (S.fv !== state0 || S.fv.issuedSeq !== seq || S.fv.seeking) return;
      if (S.fv.framesSinceSeeked > 0) { markReady(); return; }
      if (S.fv.presentedT == null) return;   // the 5 s rule above
      // (A seek to the same time presents nothing: another time inside the wanted frame.)
      S.fv.nudges++;
      S.fv.wantT = S.fv.wantLo + (S.fv.wantHi - S.fv.wantLo) * (S.fv.nudges % 2 ? 0.3 : 0.5);
      S.fv.wantSeq++;
      pumpSeek();
    }, 10000);
  }
  // The frame view is ready when the seek asked for is done and the frame on screen is the
  // wanted one: `seeked` can come before the compositor presents the new frame, and a frame of an
  // earlier seek can be presented after it (on a loaded machine the page said "frame 30" while
  // frame 31 was shown). The presented frame's time comes from requestVideoFrameCallback.
  function seekSettled() {
    return S.fv.wantT != null && !S.fv.seeking && S.fv.issuedSeq === S.fv.wantSeq &&
      Math.abs(frameV.currentTime - S.fv.wantT) <= 0.001 && !$('frame-label').dataset.error;
  }
  function presentedIsWanted() {
    var t = S.fv.presentedT;
    return t != null && t >= S.fv.wantLo - 0.001 && t < S.fv.wantHi - 0.0001;
  }
  function markReady() {
    if (seekSettled()) $('frame-label').dataset.ready = 'true';
  }
  function refreshReady() {
    if (typeof frameV.requestVideoFrameCallback !== 'function') return;
    $('frame-label').dataset.ready = seekSettled() && presentedIsWanted() ? 'true' : 'false';
  }
  // Follows every frame the frame view presents (a paused video presents one per finished seek).
  var trackHandle = null;
  function trackPresented() {
    if (typeof frameV.requestVideoFrameCallback !== 'function') return;
    if (trackHandle != null && typeof frameV.cancelVideoFrameCallback === 'function') frameV.cancelVideoFrameCallback(trackHandle);
    var state0 = S.fv;
    var onFrame = function (now, md) {
      trackHandle = null;
      if (S.fv === state0 && md && typeof md.mediaTime === 'number') {
        S.fv.presentedT = md.mediaTime;
        S.fv.framesSinceSeeked++;
        refreshReady();
      }
      trackHandle = frameV.requestVideoFrameCallback(onFrame);
    };
    trackHandle = frameV.requestVideoFrameCallback(onFrame);
  }
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
    frameV.addEventListener('seeked', onSeeked);
    frameV.addEventListener('loadedmetadata', function () { trackPresented(); pumpSeek(); });
    frameV.addEventListener('error', function () {
      if (!frameV.getAttribute('src')) return;
      var note = $('frame-note');
      note.textContent = 'The preview could not be played (' + (frameV.error ? 'media error ' + frameV.error.code : 'error') + '): ' + frameV.getAttribute('src');
      note.className = 'small bad';
    });
  }
  // Seeks the frame view to time t, inside the wanted frame's display interval [lo, hi).
  function seekFrameView(t, lo, hi) {
    S.fv.wantT = t;
    S.fv.wantLo = lo == null ? t : lo;
    S.fv.wantHi = hi == null ? t + 0.001 : hi;
    S.fv.wantSeq++;
    S.fv.nudges = 0;
    $('frame-label').dataset.ready = 'false';
    pumpSeek();
  }

  R.seekFrameView = seekFrameView;
  R.stopMedia = stopMedia;
  R.unsetSrc = unsetSrc;
  R.wireFrameView = wireFrameView;
})(R);
