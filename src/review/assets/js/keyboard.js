/* review page: keyboard.js. Keyboard shortcuts (onKey, wireKeyboard).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var $ = R.$, clipV = R.clipV;
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
      if (key === 'Escape' || key === ' ' || key === 'Enter') { R.closeLightbox(); e.preventDefault(); e.stopPropagation(); }
      return;
    }
    if (R.helpOpen()) {
      if (key === 'Escape' || key === '?') { R.toggleHelp(false); e.preventDefault(); e.stopPropagation(); }
      return;
    }
    if (typingIn(e.target)) {
      if (key === 'Escape') { e.target.blur(); e.preventDefault(); }
      return;
    }
    var handled = true;
    switch (key) {
      case 'j': case 'ArrowDown': R.select(R.neighbour(1)); break;
      case 'k': case 'ArrowUp': R.select(R.neighbour(-1)); break;
      case 'a': R.setVerdict('accepted'); break;
      case 'r': R.setVerdict('rejected'); break;
      case 'u': R.setVerdict('unreviewed'); break;
      case '1': case '2': case '3': case '4': R.toggleCriterion(+key - 1); break;
      case 'ArrowLeft': R.moveDecision(e.shiftKey ? -10 : -1); break;
      case 'ArrowRight': R.moveDecision(e.shiftKey ? 10 : 1); break;
      case ' ': case 'Spacebar': togglePlay(); break;
      case 'n': $('note').focus(); break;
      case 'e': R.exportDecisions(); break;
      case '/': $('search').focus(); $('search').select(); break;
      case '?': R.toggleHelp(true); break;
      case 'Delete': R.deleteSelectedBox(); break;
      case 'Escape': if (document.activeElement && document.activeElement.blur) document.activeElement.blur(); break;
      default: handled = false;
    }
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  }
  function wireKeyboard() { window.addEventListener('keydown', onKey, true); }

  R.wireKeyboard = wireKeyboard;
})(R);
