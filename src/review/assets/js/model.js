/* review page: model.js. "What the model sees": for each frames export of the item made with a
 * model profile (frames.json's `profile` block; docs/profiles.md), its frames as that model
 * receives them: in the model's order, each image at its own size (one CSS pixel per image
 * pixel, never scaled), the `<t seconds>` string the profile puts before each group of frames
 * where it has them (qwen3-vl: one per pair), and the profile's size, resampling and visual
 * tokens.
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, fmtS = R.fmtS, fmtInt = R.fmtInt, plural = R.plural;

  function renderModel(it, d) {
    var panel = $('model-panel'), box = clear($('model-view'));
    var sets = d && Array.isArray(d.samples) ? d.samples.filter(function (s) { return s && s.profile; }) : [];
    panel.hidden = !sets.length;
    sets.forEach(function (set) {
      var p = set.profile, imgs = set.images || [];
      var ts = Array.isArray(p.timestamps) ? p.timestamps : [];
      var group = ts.length ? Math.ceil(imgs.length / ts.length) : 0;
      var bits = [plural(imgs.length, 'frame') + ' at ' + p.width + '×' + p.height];
      if (p.mirrors) bits.push('as ' + p.mirrors);
      if (p.resample) bits.push(String(p.resample));
      if (num(p.tokens)) bits.push(fmtInt(p.tokens) + ' visual tokens');
      if (ts.length) bits.push('a time string before each ' + (group === 1 ? 'frame' : group + ' frames'));
      box.appendChild(el('div', { cls: 'samples-head' }, [
        el('strong', { text: String(p.profile) }), ' · ' + (set.name || 'frames') + ' · ' + bits.join(' · ')]));
      var seq = el('div', { cls: 'model-seq', 'data-profile': String(p.profile), 'data-set': set.name || '' });
      imgs.forEach(function (im, i) {
        if (group && i % group === 0 && ts[i / group] != null) {
          seq.appendChild(el('span', { cls: 'model-t', 'data-group': i / group, text: String(ts[i / group]) }));
        }
        var w = num(im.width) ? im.width : p.width, h = num(im.height) ? im.height : p.height;
        seq.appendChild(el('figure', { cls: 'model-frame', 'data-position': i }, [
          el('img', { src: im.path, width: w, height: h, loading: 'lazy', decoding: 'async', alt: 'model frame ' + (i + 1) }),
          el('figcaption', { text: '#' + i + ' · source frame ' + im.source_frame + ' · ' + fmtS(im.time_s) + ' s · ' + w + '×' + h })
        ]));
      });
      box.appendChild(seq);
    });
  }

  R.renderModel = renderModel;
})(R);
