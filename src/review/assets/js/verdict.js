/* review page: verdict.js. The verdict panel: verdict, criteria, note (wireNote).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, items = R.items, criteria = R.criteria;
  function buildCriteria() {
    var box = clear($('criteria'));
    criteria.forEach(function (cr, i) {
      var cb = el('input', { type: 'checkbox', cls: 'criterion', 'data-key': cr.key, id: 'crit-' + cr.key });
      cb.addEventListener('change', function () { setCriterion(cr.key, cb.checked); });
      box.appendChild(el('label', { cls: 'crit', 'for': 'crit-' + cr.key, title: cr.help || '' }, [
        cb, el('kbd', { text: String(i + 1) }), el('span', { cls: 'crit-text' }, [
          el('span', { cls: 'crit-label', text: cr.label || cr.key }), el('span', { cls: 'crit-help', text: cr.help || '' })])
      ]));
    });
  }
  function renderQc() {
    if (S.current < 0) return;
    var it = items[S.current], s = R.stPeek(it) || R.blank();
    var v = s.verdict;
    var pill = $('verdict-pill');
    pill.textContent = v;
    pill.className = 'pill pill-' + v;
    $('accept').classList.toggle('on', v === 'accepted');
    $('reject').classList.toggle('on', v === 'rejected');
    $('accept').setAttribute('aria-pressed', v === 'accepted' ? 'true' : 'false');
    $('reject').setAttribute('aria-pressed', v === 'rejected' ? 'true' : 'false');
    $('detail').dataset.verdict = v;
    var cbs = document.querySelectorAll('input.criterion');
    var unticked = [];
    for (var i = 0; i < cbs.length; i++) {
      var key = cbs[i].getAttribute('data-key');
      cbs[i].checked = !!s.criteria[key];
      if (!s.criteria[key]) unticked.push(key);
    }
    var hint = $('criteria-hint');
    if (v === 'accepted' && unticked.length) {
      hint.hidden = false;
      hint.textContent = 'Accepted although ' + unticked.length + (unticked.length === 1 ? ' criterion is' : ' criteria are') + ' not ticked.';
    } else hint.hidden = true;
    var note = $('note');
    if (document.activeElement !== note || note.value !== s.note) note.value = s.note || '';
  }
  function setVerdict(v) {
    if (S.current < 0) return;
    var it = items[S.current], s = R.st(it);
    // Accepting asserts the item meets every criterion (ViSTR keeps only such items): the
    // boxes are ticked; unticking one afterwards shows a warning. Rejecting keeps them, so
    // the unticked ones say why.
    if (v === 'accepted' && s.verdict !== 'accepted') {
      for (var i = 0; i < criteria.length; i++) s.criteria[criteria[i].key] = true;
    }
    s.verdict = v;
    renderQc();
    R.touched(S.current);
  }
  function setCriterion(key, on) {
    if (S.current < 0) return;
    var it = items[S.current];
    R.st(it).criteria[key] = !!on;
    renderQc();
    R.touched(S.current);
  }
  function toggleCriterion(i) {
    if (S.current < 0 || !criteria[i]) return;
    var s = R.st(items[S.current]);
    setCriterion(criteria[i].key, !s.criteria[criteria[i].key]);
  }
  var noteTimer = null;
  function flushNote() {
    if (noteTimer == null) return;
    clearTimeout(noteTimer);
    noteTimer = null;
    saveNote();
  }
  function saveNote() {
    noteTimer = null;
    if (S.current < 0) return;
    var it = items[S.current], v = $('note').value;
    var s = R.st(it);
    if (s.note === v) return;
    s.note = v;
    R.updateRow(S.current);
    R.save();
  }
  function wireNote() {
    $('note').addEventListener('input', function () {
      if (S.current < 0) return;
      R.st(items[S.current]).note = $('note').value;   // state is current at once (export, decisions())
      clearTimeout(noteTimer);
      noteTimer = setTimeout(function () { noteTimer = null; R.updateRow(S.current); R.save(); }, 250);
    });
    $('note').addEventListener('blur', flushNote);
    window.addEventListener('pagehide', function () { flushNote(); R.save(); });
    document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') { flushNote(); R.save(); } });
  }

  R.buildCriteria = buildCriteria;
  R.flushNote = flushNote;
  R.renderQc = renderQc;
  R.setVerdict = setVerdict;
  R.toggleCriterion = toggleCriterion;
  R.wireNote = wireNote;
})(R);
