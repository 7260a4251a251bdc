/* review page: boxes.js. The boxes panel: a reviewer draws a box on any span frame of the item
 * (drag on the frame), adjusts it (drag its body, corners or edges), gives it a track id and
 * a label, deletes it (its ✗, or Delete), and exports the item's boxes as a vidprep
 * annotation file (exportBoxes) that `overlay --boxes`, `--fill track` and a manifest's
 * `boxes` take. The frame on screen is span frame k of the preview (every frame of the span,
 * the frames the cut uses), seeked frame-exactly like the frame view; a box is kept in the
 * source's pixels (the displayed, upright frame the annotation files use: the page data's
 * frame_size) and on the source's frame number (the preview's first source frame + k), so
 * the export needs no conversion. Boxes are part of the item's QC state (state.js): saved
 * with the decisions in localStorage and in decisions.json. The preview is loaded only while
 * the panel is open.
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, clamp = R.clamp, toast = R.toast, dict = R.dict, items = R.items;
  var boxV = $('box-view'), layer = $('box-layer'), stage = $('box-stage'), panel = $('boxes-panel');
  var HANDLES = ['nw', 'n', 'ne', 'e', 'se', 's', 'sw', 'w'];
  // the panel's view of the shown item: span frame k on screen, the selected box, a drag in
  // progress, the track id and label new boxes get, and the serialised seek of the preview
  var bx = { k: 0, sel: -1, drag: null, track: '1', label: '', seek: R.newSeekState() };
  // the box view's frame-exact seeker (media.js): ready only once the wanted frame is shown
  var seeker = null;

  // {sw, sh: the source's displayed size (box coordinates); pw, ph: the preview's}, or null
  function geometry() {
    var d = S.D, p = d && d.preview, fs = d && d.frame_size;
    if (!S.P || S.P.srcStart == null || !p || !p.path || !Array.isArray(fs) || !num(fs[0]) || !num(fs[1]) ||
      !num(p.width) || !num(p.height) || fs[0] <= 0 || fs[1] <= 0) return null;
    return { sw: fs[0], sh: fs[1], pw: p.width, ph: p.height };
  }
  function boxesOf(it) { var s = it && R.stPeek(it); return s && s.boxes ? s.boxes : []; }
  function srcFrame(k) { return S.P.srcStart + k; }
  function shown() { return S.current >= 0 ? items[S.current] : null; }
  function round2(x) { return Math.round(x * 100) / 100; }

  function renderBoxes() {
    bx.sel = -1;
    bx.drag = null;
    bx.k = 0;
    unload();
    var g = geometry();
    $('box-main').hidden = !g;
    $('box-empty').hidden = !!g;
    $('export-boxes').disabled = !g;
    if (!g) {
      $('box-empty').textContent = 'No preview of this item: boxes cannot be drawn here.';
      clear(layer);
      clear($('box-list'));
      return;
    }
    // the preview at its own size: one CSS pixel per preview pixel
    stage.style.width = g.pw + 'px';
    stage.style.height = g.ph + 'px';
    $('box-frame').max = String(S.P.N - 1);
    if (panel.open) load();
    showFrame(0);
  }
  function load() {
    if (!boxV.getAttribute('src') && S.P && S.P.path) {
      bx.seek = R.newSeekState();
      boxV.setAttribute('src', S.P.path);
    }
  }
  function unload() { R.unsetSrc(boxV); bx.seek = R.newSeekState(); }

  function showFrame(k) {
    var g = geometry();
    if (!g) return;
    k = clamp(Math.round(num(k) ? k : 0), 0, S.P.N - 1);
    bx.k = k;
    $('box-frame').value = String(k);
    var lab = $('box-label'), t = S.P.times ? S.P.times[k] : null;
    lab.dataset.frame = String(k);
    lab.dataset.sourceFrame = String(srcFrame(k));
    lab.textContent = 'span frame ' + k + ' · source frame ' + srcFrame(k) + (num(t) ? ' · ' + R.fmtS(t) + ' s' : '') +
      ' · boxes in source pixels of ' + g.sw + '×' + g.sh;
    drawBoxes();
    if (panel.open && S.P.times && seeker) {
      seeker.seek(R.frameMid(k), S.P.times[k], k + 1 < S.P.N ? S.P.times[k + 1] : S.P.end);
    } else lab.dataset.ready = 'false';
  }

  function drawBoxes() {
    clear(layer);
    var it = shown(), g = geometry();
    if (!it || !g) return;
    var f = srcFrame(bx.k);
    boxesOf(it).forEach(function (b, i) {
      if (b.frame !== f) return;
      var e = el('div', {
        cls: 'dbox' + (i === bx.sel ? ' sel' : ''), 'data-i': i,
        style: 'left:' + (b.box[0] / g.sw * 100) + '%;top:' + (b.box[1] / g.sh * 100) + '%;width:' +
          ((b.box[2] - b.box[0]) / g.sw * 100) + '%;height:' + ((b.box[3] - b.box[1]) / g.sh * 100) + '%'
      }, [el('span', { cls: 'dbox-tag', text: b.track + (b.label ? ' ' + b.label : '') })]);
      HANDLES.forEach(function (h) { e.appendChild(el('span', { cls: 'hd hd-' + h, 'data-h': h })); });
      layer.appendChild(e);
    });
    renderList();
  }

  function renderList() {
    var list = clear($('box-list'));
    var it = shown();
    if (!it) return;
    var bs = boxesOf(it);
    if (!bs.length) {
      list.appendChild(el('div', { cls: 'muted small', text: 'No boxes: drag on the frame to draw one.' }));
      return;
    }
    var order = bs.map(function (b, i) { return i; });
    order.sort(function (a, b) { return bs[a].frame - bs[b].frame || a - b; });
    order.forEach(function (i) {
      var b = bs[i];
      var go = el('button', { type: 'button', cls: 'btn btn-ghost btn-small box-go', text: 'frame ' + b.frame, title: 'Show this source frame' });
      go.addEventListener('click', function () { bx.sel = i; showFrame(b.frame - S.P.srcStart); });
      var track = el('input', { type: 'text', cls: 'box-track', value: b.track, size: 4, title: 'Track id', spellcheck: 'false' });
      track.addEventListener('change', function () { b.track = track.value.trim() || '1'; bx.track = b.track; commit(); });
      var label = el('input', { type: 'text', cls: 'box-label-input', value: b.label || '', size: 10, placeholder: 'label', title: 'Label', spellcheck: 'false' });
      label.addEventListener('change', function () { b.label = label.value.trim(); bx.label = b.label; commit(); });
      var del = el('button', { type: 'button', cls: 'btn btn-ghost btn-small box-delete', text: '✗', title: 'Delete this box' });
      del.addEventListener('click', function () { deleteBox(i); });
      list.appendChild(el('div', { cls: 'box-row' + (i === bx.sel ? ' sel' : ''), 'data-i': i, 'data-frame': b.frame }, [
        go, track, label, el('span', { cls: 'small muted box-coords', text: b.box.join(', ') }), del]));
    });
  }

  function commit() {
    R.updateRow(S.current);
    R.save();
    drawBoxes();
  }
  function deleteBox(i) {
    var it = shown(), bs = boxesOf(it);
    if (!bs[i]) return;
    bs.splice(i, 1);
    bx.sel = -1;
    commit();
  }
  function deleteSelectedBox() { if (bx.sel >= 0 && !bx.drag) deleteBox(bx.sel); }

  // pointer input on the frame: source pixels under the pointer, clamped to the frame
  function pointAt(e, g) {
    var r = layer.getBoundingClientRect();
    return [clamp((e.clientX - r.left) / r.width * g.sw, 0, g.sw), clamp((e.clientY - r.top) / r.height * g.sh, 0, g.sh)];
  }
  function onDown(e) {
    var it = shown(), g = geometry();
    if (e.button !== 0 || !it || !g) return;
    var p = pointAt(e, g), t = e.target;
    var s = R.st(it);
    if (!s.boxes) s.boxes = [];
    var boxEl = t && t.closest ? t.closest('.dbox') : null;
    if (boxEl) {
      var i = +boxEl.getAttribute('data-i');
      bx.sel = i;
      bx.drag = { i: i, mode: t.getAttribute('data-h') || 'move', start: p, orig: s.boxes[i].box.slice() };
    } else {
      s.boxes.push({ frame: srcFrame(bx.k), track: bx.track, label: bx.label, box: [p[0], p[1], p[0], p[1]] });
      bx.sel = s.boxes.length - 1;
      bx.drag = { i: bx.sel, mode: 'se', start: p, orig: [p[0], p[1], p[0], p[1]], fresh: true };
    }
    try { layer.setPointerCapture(e.pointerId); } catch (x) { /* ignore */ }
    drawBoxes();
    e.preventDefault();
  }
  function onMove(e) {
    var dr = bx.drag, it = shown(), g = geometry();
    if (!dr || !it || !g) return;
    var b = boxesOf(it)[dr.i];
    if (!b) return;
    var p = pointAt(e, g), dx = p[0] - dr.start[0], dy = p[1] - dr.start[1], o = dr.orig;
    var x1 = o[0], y1 = o[1], x2 = o[2], y2 = o[3];
    if (dr.mode === 'move') {
      dx = clamp(dx, -x1, g.sw - x2);
      dy = clamp(dy, -y1, g.sh - y2);
      x1 += dx; x2 += dx; y1 += dy; y2 += dy;
    } else {
      if (dr.mode.indexOf('w') >= 0) x1 += dx;
      if (dr.mode.indexOf('e') >= 0) x2 += dx;
      if (dr.mode.indexOf('n') >= 0) y1 += dy;
      if (dr.mode.indexOf('s') >= 0) y2 += dy;
    }
    b.box = [clamp(x1, 0, g.sw), clamp(y1, 0, g.sh), clamp(x2, 0, g.sw), clamp(y2, 0, g.sh)];
    drawBoxes();
  }
  function onUp() {
    var dr = bx.drag, it = shown();
    bx.drag = null;
    if (!dr || !it) return;
    var bs = boxesOf(it), b = bs[dr.i];
    if (!b) return;
    var x = b.box;
    b.box = [round2(Math.min(x[0], x[2])), round2(Math.min(x[1], x[3])), round2(Math.max(x[0], x[2])), round2(Math.max(x[1], x[3]))];
    if (b.box[2] - b.box[0] < 2 || b.box[3] - b.box[1] < 2) {
      if (dr.fresh) { bs.splice(dr.i, 1); bx.sel = -1; }   // a click, not a box
      else b.box = dr.orig;
    }
    commit();
  }

  // The item's boxes as a vidprep annotation file (docs/annotations.md): one track per track
  // id, its keys on the source's frame numbers, in the source's pixels. null (with a message)
  // when a track has two boxes on one frame.
  function boxesFile(it) {
    var g = geometry(), bs = boxesOf(it);
    var tracks = dict(), order = [];
    for (var i = 0; i < bs.length; i++) {
      var b = bs[i], id = String(b.track || '1');
      if (!tracks[id]) { tracks[id] = { id: id, keys: [], frames: dict() }; order.push(id); }
      var tr = tracks[id];
      if (tr.frames[b.frame]) {
        return { error: 'track ' + id + ' has two boxes on source frame ' + b.frame + ': give one another track id' };
      }
      tr.frames[b.frame] = true;
      if (b.label && !tr.label) tr.label = b.label;
      tr.keys.push({ frame: b.frame, box: b.box.slice() });
    }
    var meta = { source_format: 'vidprep' };
    if (S.D && typeof S.D.source === 'string') meta.source_path = S.D.source;
    if (g) meta.frame_size = [g.sw, g.sh];
    meta.fields = { drawn_in: 'vidprep review', item: it.id };
    return {
      file: {
        vidprep_annotations: 1,
        coords: 'pixels',
        meta: meta,
        tracks: order.map(function (id) {
          var tr = tracks[id], out = { id: id };
          if (tr.label) out.label = tr.label;
          tr.keys.sort(function (a, b) { return a.frame - b.frame; });
          out.keys = tr.keys;
          return out;
        })
      }
    };
  }
  function exportBoxes() {
    var it = shown();
    if (!it) return;
    if (!boxesOf(it).length) { toast('No boxes to export: drag on the frame to draw one', true); return; }
    var made = boxesFile(it);
    if (made.error) { toast('Export failed: ' + made.error, true); return; }
    var name = String(it.id).replace(/[^\w.-]+/g, '_') + '.boxes.json';
    var blob = new Blob([JSON.stringify(made.file, null, 2) + '\n'], { type: 'application/json' });
    var url = URL.createObjectURL(blob);
    var a = el('a', { href: url, download: name, style: 'display:none' });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
    toast('Exported ' + name + ': ' + boxesOf(it).length + ' boxes in ' + made.file.tracks.length + ' tracks');
  }

  function wireBoxes() {
    seeker = R.frameSeeker(boxV, 'box-label', function () { return bx.seek; }, function () {
      $('box-label').dataset.ready = 'false';
    });
    layer.addEventListener('pointerdown', onDown);
    layer.addEventListener('pointermove', onMove);
    layer.addEventListener('pointerup', onUp);
    layer.addEventListener('pointercancel', onUp);
    panel.addEventListener('toggle', function () {
      if (panel.open) { load(); showFrame(bx.k); } else unload();
    });
    $('box-prev').addEventListener('click', function () { showFrame(bx.k - 1); });
    $('box-next').addEventListener('click', function () { showFrame(bx.k + 1); });
    $('box-frame').addEventListener('change', function () { showFrame(+this.value); });
    $('export-boxes').addEventListener('click', exportBoxes);
  }

  R.renderBoxes = renderBoxes;
  R.deleteSelectedBox = deleteSelectedBox;
  R.exportBoxes = exportBoxes;
  R.boxesFile = function (it) { var m = boxesFile(it); return m.error ? null : m.file; };
  R.wireBoxes = wireBoxes;
})(R);
