/* review page: state.js. QC state: state[id] per item (verdict, criteria, note, moved decision point), its
 * localStorage persistence (loadState, save), the decision checks, and decisions.json
 * (decisions, exportDecisions, importDecisions).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, dict = R.dict, own = R.own, el = R.el, num = R.num, plural = R.plural, toast = R.toast, INDEX = R.INDEX, errorsList = R.errorsList, items = R.items, criteria = R.criteria, byId = R.byId, reviewId = R.reviewId, storageKey = R.storageKey;
  // state[id] = {verdict, criteria:{key:bool}, note, decision: span frame k or null (= original),
  //   boxes: [{frame: source frame, track, label, box: [x1, y1, x2, y2] source pixels}] (boxes.js)}
  var state = dict();
  function blank() {
    var c = dict();
    criteria.forEach(function (cr) { c[cr.key] = false; });
    return { verdict: 'unreviewed', criteria: c, note: '', decision: null, boxes: [] };
  }
  function st(it) { return state[it.id] || (state[it.id] = blank()); }
  function stPeek(it) { return state[it.id]; }

  var storageOk = true;
  function loadState() {
    var raw = null;
    try { raw = window.localStorage.getItem(storageKey); } catch (e) { storageOk = false; }
    if (!raw) return;
    try {
      var saved = JSON.parse(raw);
      var src = saved && saved.items || dict();
      for (var id in src) {
        if (!own(src, id) || !byId[id]) continue;
        var s = blank(), v = src[id];
        if (!v || typeof v !== 'object') continue;
        if (v.verdict === 'accepted' || v.verdict === 'rejected') s.verdict = v.verdict;
        if (v.criteria) for (var k in s.criteria) s.criteria[k] = own(v.criteria, k) && !!v.criteria[k];
        s.note = typeof v.note === 'string' ? v.note : '';
        s.decision = validDecision(byId[id], v.decision);
        s.boxes = validBoxes(v.boxes);
        state[id] = s;
      }
    } catch (e) { errorsList.push('could not read saved decisions: ' + e.message); }
  }
  function isDefault(s) {
    if (s.verdict !== 'unreviewed' || s.note || s.decision != null || (s.boxes && s.boxes.length)) return false;
    for (var k in s.criteria) if (s.criteria[k]) return false;
    return true;
  }
  function save() {
    var out = dict();
    for (var id in state) if (!isDefault(state[id])) out[id] = state[id];
    try {
      window.localStorage.setItem(storageKey, JSON.stringify({ version: 1, review_id: reviewId, saved: new Date().toISOString(), items: out }));
    } catch (e) {
      if (storageOk) {
        storageOk = false;
        var b = $('storage-warning');
        b.textContent = 'This browser does not keep the decisions (' + (e.name || 'storage error') + '): export regularly.';
        b.hidden = false;
      }
    }
  }

  function spanFrames(it) { return num(it.span_frames) && it.span_frames > 0 ? it.span_frames : null; }
  function validDecision(it, k) {
    var N = spanFrames(it);
    if (!N || !num(k)) return null;
    k = Math.round(k);
    if (k < 1 || k > N) return null;
    return k === it.decision_frame ? null : k;
  }
  // drawn boxes as saved or imported: the well-formed ones
  function validBoxes(v) {
    if (!Array.isArray(v)) return [];
    return v.filter(function (b) {
      return b && typeof b === 'object' && num(b.frame) && b.frame >= 0 && Math.round(b.frame) === b.frame &&
        Array.isArray(b.box) && b.box.length === 4 && b.box.every(num) && b.box[0] <= b.box[2] && b.box[1] <= b.box[3];
    }).map(function (b) {
      return { frame: b.frame, track: String(b.track == null || b.track === '' ? '1' : b.track),
        label: typeof b.label === 'string' ? b.label : '', box: b.box.slice() };
    });
  }
  function effDecision(it) {
    var s = stPeek(it);
    if (s && s.decision != null) return s.decision;
    return num(it.decision_frame) ? it.decision_frame : null;
  }
  function verdictOf(it) { var s = stPeek(it); return s ? s.verdict : 'unreviewed'; }
  function changed(it) { var s = stPeek(it); return !!(s && s.decision != null && s.decision !== it.decision_frame); }

  // ---------------------------------------------------------------- decisions.json
  function decisions() {
    return {
      vidprep_review_decisions: 1,
      review_id: INDEX.review_id == null ? null : INDEX.review_id,
      run_dir: INDEX.run_dir == null ? null : INDEX.run_dir,
      manifest: INDEX.manifest == null ? null : INDEX.manifest,
      exported: new Date().toISOString(),
      items: items.map(function (it) {
        var s = stPeek(it) || blank();
        var c = dict();
        criteria.forEach(function (cr) { c[cr.key] = !!s.criteria[cr.key]; });
        return {
          id: it.id,
          verdict: s.verdict,
          criteria: c,
          note: s.note || '',
          decision: changed(it) ? { frame: s.decision } : null,
          boxes: (s.boxes || []).map(function (b) { return { frame: b.frame, track: b.track, label: b.label, box: b.box.slice() }; }),
          reviewed: {
            decision_frame: num(it.decision_frame) ? it.decision_frame : null,
            decision_requested: it.decision_requested == null ? null : it.decision_requested,
            span_frames: num(it.span_frames) ? it.span_frames : null
          }
        };
      })
    };
  }
  function exportDecisions() {
    var text = JSON.stringify(decisions(), null, 2) + '\n';
    var blob = new Blob([text], { type: 'application/json' });
    var url = URL.createObjectURL(blob);
    var a = el('a', { href: url, download: 'decisions.json', style: 'display:none' });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
    var c = R.tally();
    toast('Exported decisions.json: ' + c.accepted + ' accepted · ' + c.rejected + ' rejected · ' + c.unreviewed + ' unreviewed');
  }
  function importDecisions(text) {
    var d;
    try { d = JSON.parse(text); } catch (e) { toast('Import failed: not JSON (' + e.message + ')', true); return; }
    if (!d || d.vidprep_review_decisions !== 1 || !Array.isArray(d.items)) {
      toast('Import failed: not a vidprep decisions.json (vidprep_review_decisions: 1)', true); return;
    }
    if (d.review_id && INDEX.review_id && d.review_id !== INDEX.review_id &&
        !window.confirm('These decisions were exported from another run (review_id ' + d.review_id +
          ', run ' + d.run_dir + '). Import the items with matching ids anyway?')) return;
    var done = 0, unknown = 0, dropped = 0;
    d.items.forEach(function (x) {
      var it = x && typeof x.id === 'string' ? byId[x.id] : null;
      if (!it) { unknown++; return; }
      var s = blank();
      if (x.verdict === 'accepted' || x.verdict === 'rejected') s.verdict = x.verdict;
      if (x.criteria) for (var k in s.criteria) s.criteria[k] = own(x.criteria, k) && !!x.criteria[k];
      s.note = typeof x.note === 'string' ? x.note : '';
      if (x.decision && x.decision.frame != null) {
        s.decision = validDecision(it, x.decision.frame);
        if (s.decision == null && x.decision.frame !== it.decision_frame) dropped++;
      }
      s.boxes = validBoxes(x.boxes);
      state[it.id] = s;
      done++;
    });
    save();
    items.forEach(function (it) { R.updateRow(it.n); });
    R.applyList(false);
    if (S.current >= 0) R.renderQc(), R.renderDecision(true), R.renderBoxes();
    toast('Imported ' + plural(done, 'item') + (unknown ? ' · ' + unknown + ' unknown ids skipped' : '') +
      (dropped ? ' · ' + dropped + ' decision points out of range dropped' : ''), !!(unknown || dropped));
  }

  R.blank = blank;
  R.changed = changed;
  R.decisions = decisions;
  R.effDecision = effDecision;
  R.exportDecisions = exportDecisions;
  R.importDecisions = importDecisions;
  R.loadState = loadState;
  R.save = save;
  R.spanFrames = spanFrames;
  R.st = st;
  R.stPeek = stPeek;
  R.verdictOf = verdictOf;
})(R);
