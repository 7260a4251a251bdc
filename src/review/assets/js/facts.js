/* review page: facts.js. The facts panel and its checks (Base64 budget, damaged frames, annotations, warnings,
 * links).
 * Reads the shared modules R and state R.shared (see core.js). */
(function (R) {
  'use strict';
  var S = R.shared;
  var $ = R.$, el = R.el, clear = R.clear, num = R.num, fmtS = R.fmtS, fmtInt = R.fmtInt, basename = R.basename, clamp = R.clamp;
  function renderFacts(it, d) {
    var facts = clear($('facts')), checks = clear($('checks'));
    var rowsF = d && Array.isArray(d.facts) ? d.facts : [];
    var t = el('table', { cls: 'facts' });
    var tb = el('tbody');
    rowsF.forEach(function (r) {
      if (!r) return;
      tb.appendChild(el('tr', null, [el('th', { text: String(r[0]) }), el('td', { text: r[1] == null ? '' : String(r[1]) })]));
    });
    if (d && d.decision) {
      tb.appendChild(el('tr', null, [el('th', { text: 'Decision (original)' }), el('td', {
        text: (d.decision.requested != null ? d.decision.requested + ' → ' : '') + 'span frame ' + d.decision.frame +
          (num(d.decision.clip_time_s) ? ' · clip time ' + fmtS(d.decision.clip_time_s) + ' s' : '')
      })]));
    }
    if (d && d.kept && d.span && num(d.kept.start_frame)) {
      tb.appendChild(el('tr', null, [el('th', { text: 'Kept (source frames)' }), el('td', {
        text: R.frameRange(d.kept.start_frame, d.kept.end_frame) + ' of ' + R.frameRange(d.span.start_frame, d.span.end_frame)
      })]));
    }
    if (it.status === 'failed') tb.appendChild(el('tr', { cls: 'bad' }, [el('th', { text: 'Error' }), el('td', { text: it.error || '?' })]));
    t.appendChild(tb);
    if (tb.children.length) facts.appendChild(t);
    else facts.appendChild(el('div', { cls: 'muted', text: d ? 'No facts.' : (S.failedLoad[it.n] ? '' : 'Loading…') }));

    if (!d) return;
    // Base64 size against the budget
    var b = d.base64;
    if (b && num(b.bytes)) {
      var used = num(b.used) ? b.used : num(b.budget) && b.budget ? b.bytes / b.budget : null;
      var over = used != null && used > 1;
      checks.appendChild(el('div', { cls: 'check' }, [
        el('div', { cls: 'check-head' }, [el('span', { text: 'Base64 size' }),
          el('span', { cls: over ? 'bad' : 'good', text: fmtInt(b.bytes) + ' B of ' + fmtInt(b.budget) + ' B' + (used != null ? ' (' + (used * 100).toFixed(1) + '%)' : '') })]),
        el('div', { cls: 'meter' + (over ? ' over' : '') }, [el('span', { style: 'width:' + clamp((used || 0) * 100, 0, 100) + '%' })])
      ]));
    }
    // damaged frames
    var dmg = d.damaged_frames || [];
    checks.appendChild(el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Damaged frames' }),
      el('span', { cls: dmg.length ? 'bad' : 'good', text: dmg.length ? dmg.length + ': ' + dmg.slice(0, 40).join(', ') + (dmg.length > 40 ? ', …' : '') : 'none' })])]));
    // annotated source frames in and outside the clip (the facts panel's counts)
    var a = d.annotations;
    if (a) {
      var outside = (a.before_span | 0) + (a.in_truncated_part | 0) + (a.after_span | 0);
      checks.appendChild(el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Annotated frames' }),
        el('span', { cls: outside ? 'warn' : 'good', text: (a.frames_in_clip | 0) + ' in clip · ' + outside + ' outside' })]),
        el('div', { cls: 'small muted', text: 'before span ' + (a.before_span | 0) + ' · in truncated part ' + (a.in_truncated_part | 0) + ' · after span ' + (a.after_span | 0) })]));
    }
    // warnings
    var w = d.warnings || [];
    var wl = el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Warnings' }),
      el('span', { cls: w.length ? 'warn' : 'good', text: w.length ? String(w.length) : 'none' })])]);
    if (w.length) wl.appendChild(el('ul', { cls: 'warnings' }, w.map(function (x) { return el('li', { text: String(x) }); })));
    checks.appendChild(wl);
    // videos and sidecars
    var links = el('div', { cls: 'check' }, [el('div', { cls: 'check-head' }, [el('span', { text: 'Outputs & sidecars' })])]);
    var ul = el('ul', { cls: 'links' });
    (d.videos || []).forEach(function (v) {
      if (v.path) ul.appendChild(el('li', null, [el('a', { href: v.path, target: '_blank', rel: 'noopener', text: basename(v.path) }), ' ' + (v.kind || '')]));
    });
    (d.sidecars || []).forEach(function (p) {
      ul.appendChild(el('li', null, [el('a', { href: p, target: '_blank', rel: 'noopener', text: basename(p) })]));
    });
    if (ul.children.length) links.appendChild(ul);
    checks.appendChild(links);
  }

  R.renderFacts = renderFacts;
})(R);
