/* review page: samples.js. The sampled frames panel (renderSamples) and the fading of images past a moved
 * decision point (markSamplesAfter).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, fmtS = R.fmtS, plural = R.plural, items = R.items;
  function renderSamples(it, d) {
    var box = clear($('samples'));
    var sets = d && Array.isArray(d.samples) ? d.samples : [];
    if (!sets.length) {
      box.appendChild(el('div', { cls: 'muted', text: d ? 'No frames export for this item.' : '' }));
      return;
    }
    var damaged = {};
    (d.damaged_frames || []).forEach(function (f) { damaged[f] = true; });
    var needle = d.needle && num(d.needle.start) ? d.needle : null;
    sets.forEach(function (set, si) {
      var imgs = set.images || [];
      var head = el('div', { cls: 'samples-head' }, [
        el('strong', { text: set.name || 'frames' }),
        ' · ' + plural(imgs.length, 'image') + (set.sampler ? ' · sampler ' + set.sampler : '') + (set.order ? ' · ' + set.order : '')
      ]);
      if (set.strip) {
        head.appendChild(document.createTextNode(' · '));
        head.appendChild(el('a', { href: set.strip, target: '_blank', rel: 'noopener', text: 'strip' }));
      }
      if (set.order && set.order !== 'ordered') head.appendChild(el('span', { cls: 'b b-warn', text: 'model order ≠ time order' }));
      box.appendChild(head);
      var grid = el('div', { cls: 'samples-grid' });
      imgs.forEach(function (im, i) {
        var cap = '#' + i + ' frame ' + (num(im.stream_frame) ? im.stream_frame : '?') + ' · ' + fmtS(im.time_s) + ' s';
        var title = 'position ' + i + ' · stream frame ' + im.stream_frame + ' · source ' + im.source +
          ' frame ' + im.source_frame + ' · ' + fmtS(im.time_s) + ' s\n' + im.path;
        var fig = el('figure', { cls: 'sample', 'data-span-frame': R.spanFrameOf(im) }, [
          el('img', { src: im.path, loading: 'lazy', decoding: 'async', alt: cap }),
          el('figcaption', { text: cap })
        ]);
        fig.title = title;
        if (damaged[im.stream_frame]) fig.appendChild(el('span', { cls: 'b b-fail sample-badge', text: 'damaged' }));
        else if (needle && im.stream_frame >= needle.start && im.stream_frame < needle.end) fig.appendChild(el('span', { cls: 'b b-needle sample-badge', text: 'needle' }));
        fig.addEventListener('click', function () { R.openLightbox(im.path, (set.name || 'frames') + ' ' + cap + ' · source frame ' + im.source_frame); });
        grid.appendChild(fig);
      });
      box.appendChild(grid);
      if (si === 0) box.appendChild(el('div', { cls: 'small muted', id: 'samples-cut-note' }));
    });
    if (S.current >= 0) markSamplesAfter(R.effDecision(it));
  }
  function markSamplesAfter(k) {
    var figs = document.querySelectorAll('#samples figure.sample');
    var cut = 0;
    var moved = S.current >= 0 && R.changed(items[S.current]);
    for (var i = 0; i < figs.length; i++) {
      var sf = figs[i].getAttribute('data-span-frame');
      var after = moved && k != null && sf !== null && sf !== '' && +sf >= k;
      figs[i].classList.toggle('after-decision', after);
      if (after) cut++;
    }
    var note = $('samples-cut-note');
    if (note) note.textContent = cut ? cut + ' of these images lie at or after the moved decision point (shown faded); re-running with the new point re-samples them.' : '';
  }

  R.markSamplesAfter = markSamplesAfter;
  R.renderSamples = renderSamples;
})(R);
