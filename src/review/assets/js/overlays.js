/* review page: overlays.js. Overlays: the help and the lightbox (wireOverlays).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var $ = R.$;
  function helpOpen() { return !$('help').hidden; }
  function toggleHelp(on) { $('help').hidden = on === undefined ? !$('help').hidden : !on; }
  function openLightbox(src, cap) {
    $('lightbox-img').src = src;
    $('lightbox-cap').textContent = cap;
    $('lightbox').hidden = false;
  }
  function closeLightbox() { $('lightbox').hidden = true; $('lightbox-img').removeAttribute('src'); }
  function wireOverlays() {
    $('help').addEventListener('click', function (e) { if (e.target === $('help')) toggleHelp(false); });
    $('help-close').addEventListener('click', function () { toggleHelp(false); });
    $('help-button').addEventListener('click', function () { toggleHelp(); });
    $('lightbox').addEventListener('click', closeLightbox);
  }

  R.closeLightbox = closeLightbox;
  R.helpOpen = helpOpen;
  R.openLightbox = openLightbox;
  R.toggleHelp = toggleHelp;
  R.wireOverlays = wireOverlays;
})(R);
