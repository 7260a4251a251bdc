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
  function newSeekState() { return { wantT: null, wantSeq: 0, issuedSeq: -1, seeking: false }; }
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
    // Ready once the frame is on screen: `seeked` can come before the compositor shows the new
    // frame (on a loaded machine the previous one was still there); a seek that lands on the
    // frame already shown presents nothing new, hence the fallback, which is long enough for a
    // loaded machine's compositor (1 s was not: in a clean root under two test suites the
    // previous frame was still shown when it fired).
    var seq = S.fv.issuedSeq, state0 = S.fv, done = false;
    var ready = function () {
      if (done) return;
      done = true;
      if (S.fv === state0 && !S.fv.seeking && S.fv.issuedSeq === seq && S.fv.wantSeq === seq) {
        label.dataset.ready = 'true';
      }
    };
    if (typeof frameV.requestVideoFrameCallback === 'function') {
      frameV.requestVideoFrameCallback(ready);
      setTimeout(ready, 5000);
    } else {
      ready();
    }
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
    frameV.addEventListener('loadedmetadata', pumpSeek);
    frameV.addEventListener('error', function () {
      if (!frameV.getAttribute('src')) return;
      var note = $('frame-note');
      note.textContent = 'The preview could not be played (' + (frameV.error ? 'media error ' + frameV.error.code : 'error') + '): ' + frameV.getAttribute('src');
      note.className = 'small bad';
    });
  }
  function seekFrameView(t) {
    S.fv.wantT = t;
    S.fv.wantSeq++;
    $('frame-label').dataset.ready = 'false';
    pumpSeek();
  }

  R.seekFrameView = seekFrameView;
  R.stopMedia = stopMedia;
  R.unsetSrc = unsetSrc;
  R.wireFrameView = wireFrameView;
})(R);
