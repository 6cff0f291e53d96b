// The matrix editor's view (anywidget): rows of counts, a readout of the six metrics and the types, the simplex and the
// selection shares, all computed in the page by the functions of hetero.js (the package joins the two files into the
// widget's one ES module, so this file uses them without importing). Edits are checked here, so a refused value never
// leaves the page; accepted rows go to the `rows` trait, which Python mirrors.
const MAX_CELL = 1000000;                 // the largest count typed into a cell (the Python API allows more)
const SVG = 'http://www.w3.org/2000/svg';
const SIMPLEX = {w: 300, h: 270, pad: 24};  // the simplex's box; CI at the top, AI bottom left, SC bottom right
const BAR_PX = 84;                          // a full triplet bar
const MAX_SIZED = 25;                       // a row shared by more clients draws as large as one shared by 25
const MAX_SELECTION_WORK = 2e7;             // rounds × clients × κ above which the page does not recompute the shares
const SLICE_MS = 8;                         // the longest the shares computation holds the page before yielding
const METRIC_NOTES = {                      // each metric's one line, shown on hover over its name in the readout
  GCI: 'global class imbalance: 1 − H(Y)/log|Y| of the pooled data (0: every class equally common)',
  GAI: 'global attribute imbalance: 1 − H(A)/log|A| of the pooled data (0: every attribute equally common)',
  GSC: 'global spurious correlation: 2 I(Y;A)/(H(Y)+H(A)) of the pooled data (0: class and attribute independent)',
  CCI: "client class imbalance: the mean over clients of each client's 1 − H(Y)/log|Y|",
  CAI: "client attribute imbalance: the mean over clients of each client's 1 − H(A)/log|A|",
  CSC: "client spurious correlation: the mean over clients of each client's 2 I(Y;A)/(H(Y)+H(A))"};

const el_ = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const esc = t => String(t).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));   // names from Python, as HTML text
const fmt = v => (Number.isFinite(v) ? v.toFixed(3) : '–');
const clone = rows => rows.map(r => ({m: r.m, N: r.N.map(x => x.slice())}));

// A typed count or multiplicity, checked: {value} or {error}. Decimal digits are a number, with an optional sign and a
// fraction of zeros ("+5", "5.0" and "-0" are 5, 5 and 0); anything else is refused with the true reason: a fraction
// ("2.5"), a negative count, scientific ("1e9"), hexadecimal, octal or binary notation ("0x10"), thousands separators,
// an emptied box or text. Nothing is rewritten.
export function parseCount(text, what, lo, hi) {
  const s = String(text).trim(), range = `a whole number from ${lo} to ${hi.toLocaleString('en')}`;
  if (s === '') return {error: `${what}: empty; type ${range}`};
  const dec = /^([+-]?)(\d+)(?:\.(\d*))?$/.exec(s);
  if (dec) {
    const [, sign, digits, frac = ''] = dec, v = Number(digits);
    if (/[1-9]/.test(frac)) return {error: `${what}: ${s} is not a whole number`};
    if (sign === '-' && v > 0) return {error: `${what}: ${s} is negative; a count is ${range}`};
    if (v < lo) return {error: `${what}: ${s} is below ${lo}`};
    if (v > hi) return {error: `${what}: ${s} is too large (at most ${hi.toLocaleString('en')})`};
    return {value: v};
  }
  if (/^[+-]?0[xob]/i.test(s)) return {error: `${what}: ${s} is not decimal (hexadecimal, octal or binary notation); type decimal digits`};
  if (/^[+-]?(\d+\.?\d*|\.\d+)e[+-]?\d+$/i.test(s)) return {error: `${what}: ${s} is scientific notation; type the digits (at most ${hi.toLocaleString('en')})`};
  if (/^\d{1,3}([,_ ']\d{3})+$/.test(s)) return {error: `${what}: ${s} has thousands separators; type the digits only`};
  if (/^[+-]?\.\d+$/.test(s)) return {error: `${what}: ${s} is not a whole number`};
  return {error: `${what}: "${s}" is not a number`};
}

// Why a set of rows is refused, or null: at least one row, no client without samples, at most `maxClients` clients.
export function rowsProblem(rows, maxClients) {
  if (!rows.length) return 'the federation needs at least one row: the last one cannot be removed';
  const empty = rows.findIndex(r => r.N.every(line => line.every(c => c === 0)));
  if (empty >= 0) return `row r${empty}: every count would be 0; a client needs at least one sample`;
  const K = rows.reduce((a, r) => a + r.m, 0);
  if (K > maxClients) return `${K} clients in all; the editor holds at most ${maxClients.toLocaleString('en')}`;
  return null;
}

const CSS = `
.hx-editor { font: 13px system-ui, sans-serif; max-width: 1000px; }
.hx-editor .hx-top { display: flex; gap: 8px; align-items: center; }
.hx-editor .hx-hint, .hx-editor .hx-note { font-size: 12px; color: #555; margin: 2px 0; }
.hx-editor .hx-message { height: 36px; overflow: hidden; color: #c00; font-size: 12px; }
.hx-editor .hx-message-near { color: #c00; font-size: 12px; margin: 2px 0; } .hx-editor .hx-bad { outline: 2px solid #c00; background: #fff0f0; }
.hx-editor .hx-body { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.hx-editor .hx-row, .hx-editor .hx-columns { display: flex; align-items: center; gap: 4px; border-bottom: 1px solid #eee; font-size: 12px; }
.hx-editor .hx-columns span { font-weight: 600; overflow: hidden; }
.hx-editor .hx-c-label { width: 40px; } .hx-editor .hx-c-mult, .hx-editor .hx-mult { width: 46px; box-sizing: border-box; }
.hx-editor .hx-c-cell { width: 58px; } .hx-editor .hx-c-bars, .hx-editor .hx-bars { width: 150px; } .hx-editor .hx-c-type, .hx-editor .hx-type { width: 58px; }
.hx-editor .hx-grid { display: grid; gap: 2px; }
.hx-editor .hx-cell input { width: 56px; box-sizing: border-box; }
.hx-editor .hx-bar { display: flex; align-items: center; height: 11px; font: 9px monospace; }
.hx-editor .hx-bar span:first-child { width: 16px; }
.hx-editor .hx-type { font-size: 11px; }
.hx-editor .hx-lines { font-size: 11px; color: #555; }
.hx-editor .hx-side { width: 320px; }
.hx-editor .hx-metrics table { font-family: monospace; border-collapse: collapse; }
.hx-editor .hx-metrics th, .hx-editor .hx-metrics td { padding: 0 6px; text-align: left; }
.hx-editor .hx-metrics td, .hx-editor .hx-metrics code { white-space: nowrap; } .hx-editor .hx-metrics { overflow-x: auto; }
.hx-editor .hx-metrics th[title] { cursor: help; text-decoration: underline dotted; }
.hx-editor .hx-legend { font-size: 11px; }
.hx-editor .hx-shares { margin-top: 8px; }
.hx-editor .hx-k, .hx-editor .hx-rounds { width: 60px; }
.hx-editor .hx-share-name { display: inline-block; width: 130px; }
`;

function render({model, el}) {
  if (!document.getElementById('hx-editor-css')) {
    const st = el_('style'); st.id = 'hx-editor-css'; st.textContent = CSS; document.head.appendChild(st);
  }
  const root = el_('div', 'hx-editor hetfl-kernel-free');
  el.appendChild(root);
  // Keys typed in the panel's boxes stay in the panel: JupyterLab's notebook shortcuts (Enter, digits in command mode)
  // would otherwise take them, and Enter would no longer commit a box.
  root.addEventListener('keydown', e => { if (e.target.matches('input, select')) e.stopPropagation(); });
  const colours = model.get('colours'), maxClients = model.get('max_clients');
  let rows = clone(model.get('rows')), inputs = [], sharesTimer = null, sharesFrame = null, sharesJob = 0;
  // Work that must not delay the redraw on screen (the selection shares, telling Python) runs after the next paint:
  // a timeout set from inside an animation frame callback fires once that frame is drawn.
  const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn, 0));

  // --- the parts of the panel
  const top = el_('div', 'hx-top'), presetSel = el_('select', 'hx-preset'), addBtn = el_('button', 'hx-add', '+ add client');
  for (const [name, p] of Object.entries(model.get('presets'))) { const o = el_('option', '', p.label); o.value = name; presetSel.appendChild(o); }
  top.append(el_('span', 'hx-label', 'preset '), presetSel, addBtn);
  const hint = el_('div', 'hx-hint', 'Type a count, then press Enter or Tab. Everything below is computed in this page: no kernel needed.');
  const note = el_('div', 'hx-note');
  note.innerHTML = 'Training outcomes (the outcome panel) need a Python kernel: run <code>make lab</code> and open this notebook.';
  // A live kernel answers the page's hello; then outcomes train here and the note does not apply (a saved page gets no answer).
  model.on('msg:custom', (m) => { if (m && m.kind === 'kernel') note.style.display = 'none'; });
  try { model.send({kind: 'hello'}); } catch (e) { /* no kernel to ask */ }
  const msg = el_('div', 'hx-message');
  const body = el_('div', 'hx-body'), table = el_('div', 'hx-rows'), side = el_('div', 'hx-side');
  const readout = el_('div', 'hx-metrics'), simplex = el_('div', 'hx-simplex'), legend = el_('div', 'hx-legend');
  const shares = el_('div', 'hx-shares');
  side.append(readout, simplex, legend);
  body.append(table, side);
  root.append(top, hint, note, msg, body, shares);
  legend.innerHTML = ['CI: class imbalance', 'AI: attribute imbalance', 'SC: spurious correlation', 'tie: equal top components']
    .map((t, i) => `<span><span style="color:${colours[['CI', 'AI', 'SC', 'tie'][i]]}">●</span> ${t}</span>`).join(' ');

  const near = el_('div', 'hx-message-near');   // the same message beside the refused box (marked), wherever it is on the page
  const say = (text, inp) => {
    msg.textContent = text ? `⚠ ${text} — kept the last valid federation` : ''; msg.title = text || '';
    root.querySelectorAll('.hx-bad').forEach(e => e.classList.remove('hx-bad')); near.remove();
    if (text && inp) { inp.classList.add('hx-bad'); near.textContent = `⚠ ${text}`; (inp.closest('.hx-row') || inp.parentNode).after(near); }
  };
  let saving = false;   // the page's own `rows` update must not come back as a change from Python
  const save = () => {
    saving = true; model.set('rows', clone(rows)); saving = false;
    try { model.save_changes(); } catch (e) { /* a saved page: no kernel to tell */ }
  };

  // --- the simplex: an SVG triangle, one circle per row, sized by its multiplicity
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('width', SIMPLEX.w); svg.setAttribute('height', SIMPLEX.h);
  const corner = {CI: [SIMPLEX.w / 2, SIMPLEX.pad], AI: [SIMPLEX.pad, SIMPLEX.h - SIMPLEX.pad], SC: [SIMPLEX.w - SIMPLEX.pad, SIMPLEX.h - SIMPLEX.pad]};
  const tri = document.createElementNS(SVG, 'polygon');
  tri.setAttribute('points', ['CI', 'AI', 'SC'].map(c => corner[c].join(',')).join(' '));
  tri.setAttribute('fill', '#f7f7f9'); tri.setAttribute('stroke', '#999');
  const dots = document.createElementNS(SVG, 'g');
  svg.append(tri, dots);
  simplex.style.position = 'relative';
  simplex.appendChild(svg);
  for (const [c, [x, y]] of Object.entries(corner)) {   // corner names as HTML, outside the SVG
    const lab = el_('span', 'hx-corner', c);
    Object.assign(lab.style, {position: 'absolute', left: `${x + (c === 'CI' ? 8 : c === 'AI' ? -18 : 2)}px`, top: `${y + (c === 'CI' ? -18 : 2)}px`, fontSize: '11px'});
    simplex.appendChild(lab);
  }
  const drawSimplex = (s) => {
    const circles = [];
    s.positions.forEach((p, i) => {
      const x = p[0] * corner.CI[0] + p[1] * corner.AI[0] + p[2] * corner.SC[0];
      const y = p[0] * corner.CI[1] + p[1] * corner.AI[1] + p[2] * corner.SC[1];
      const c = document.createElementNS(SVG, 'circle'), ty = s.types[i];
      c.setAttribute('cx', x.toFixed(2)); c.setAttribute('cy', y.toFixed(2));
      c.setAttribute('r', (3 + 2 * Math.sqrt(Math.min(rows[i].m, MAX_SIZED))).toFixed(2));   // sized by multiplicity, capped
      c.setAttribute('fill', colours[ty.includes('=') ? 'tie' : ty]); c.setAttribute('fill-opacity', '0.75');
      c.setAttribute('class', 'hx-point');
      const t = document.createElementNS(SVG, 'title');
      t.textContent = `r${i} ×${rows[i].m}: CI ${fmt(s.triplets[i][0])}, AI ${fmt(s.triplets[i][1])}, SC ${fmt(s.triplets[i][2])} (${ty})`;
      c.appendChild(t); circles.push(c);
    });
    dots.replaceChildren(...circles);
  };

  // --- the readout: six metrics (beside them: printed by the source, derived from its matrices), clients, types, global matrix
  const drawReadout = (s) => {
    const refs = [['published', model.get('published') || {}], ['derived', model.get('derived') || {}]].filter(([, d]) => Object.keys(d).length);
    const head = `<tr><th>metric</th><th>edited</th>${refs.map(([name]) => `<th>${name}</th>`).join('')}</tr>`;
    const body = METRICS.map(k => `<tr><th title="${METRIC_NOTES[k]}">${k}</th><td>${fmt(s.metrics[k])}</td>${refs.map(([, d]) => `<td>${k in d ? fmt(d[k]) : '–'}</td>`).join('')}</tr>`).join('');
    const counts = Object.entries(s.typeCounts).sort().map(([k, v]) => `${k}: ${v}`).join(', ');
    const G = rows[0].N.map((line, y) => line.map((_, a) => rows.reduce((t, r) => t + r.m * r.N[y][a], 0)).join(' ')).join(' | ');
    readout.innerHTML = `<table>${head}${body}</table><div>${s.numClients} clients, ${s.nSamples} samples; types: ${counts}</div>`
      + `<div>global matrix (rows = classes): <code>${G}</code></div>`;
  };

  // --- the selection shares: type shares of uniform, size-proportional and FedDiverse over R rounds of κ clients
  const kIn = el_('input', 'hx-k'), rIn = el_('input', 'hx-rounds'), sharesOut = el_('div', 'hx-share-bars');
  kIn.value = model.get('k'); rIn.value = model.get('rounds');
  const controls = el_('div', 'hx-share-controls');
  controls.append(el_('b', '', 'Whom each selector picks '), el_('span', '', 'κ '), kIn, el_('span', '', ' clients per round, '), rIn, el_('span', '', ' rounds'));
  shares.append(controls, sharesOut);
  const drawShares = (s) => {
    const k = model.get('k'), R = model.get('rounds'), seed = model.get('seed');
    kIn.classList.toggle('hx-bad', k > s.numClients);   // clients removed since κ was set: say so beside the box
    kIn.title = k > s.numClients ? `κ = ${k} is more than the ${s.numClients} clients: each round picks all ${s.numClients}` : '';
    if (R * s.numClients * Math.min(k, s.numClients) > MAX_SELECTION_WORK) {
      sharesOut.textContent = `${R} rounds × ${s.numClients} clients × κ = ${k} is too much to redraw on every edit: lower the rounds or κ.`;
      return;
    }
    const job = sharesJob, steps = selectionSharesSteps(s.clients.T, s.clients.sizes, s.clients.types, k, R, seed);
    const slice = () => {                       // one slice per task: typing and edits run between slices
      if (job !== sharesJob) return;            // a newer edit started its own shares
      const t0 = performance.now();
      let r = steps.next();
      while (!r.done && performance.now() - t0 < SLICE_MS) r = steps.next();
      if (r.done) showShares(r.value, s, k, R, seed);
      else { sharesOut.dataset.progress = r.value.toFixed(2); sharesTimer = setTimeout(slice, 0); }
    };
    slice();
  };
  const showShares = (res, s, k, R, seed) => {
    delete sharesOut.dataset.progress;
    sharesOut.innerHTML = Object.entries(res).map(([name, r]) =>
      `<div class="hx-share" data-selector="${name}"><span class="hx-share-name">${name}</span>`
      + TYPES.map(d => `<span class="hx-share-bar" title="${d} ${(100 * r.typeShares[d]).toFixed(1)} %" style="display:inline-block;height:10px;width:${(2 * 100 * r.typeShares[d]).toFixed(1)}px;background:${colours[d]}"></span>`).join('')
      + `<small> ${TYPES.map(d => `${d} ${(100 * r.typeShares[d]).toFixed(1)}%`).join(' · ')}</small></div>`).join('')
      + (k > s.numClients ? `<div class="hx-message-near">⚠ ${kIn.title}</div>` : '')
      + `<small>share of selected slots by client type (ties count as their first type), ${Math.min(k, s.numClients)} of ${s.numClients} clients, ${R} rounds, seed ${seed}</small>`;
    root.dataset.sharesDrawn = String(Number(root.dataset.sharesDrawn || 0) + 1);
  };

  // --- the rows: multiplicity, cells, triplet bars, type, remove
  const names = () => model.get('names');
  const buildRows = () => {
    const shown = rows.slice(0, model.get('max_rows')), {classes, attrs} = names();
    const head = el_('div', 'hx-columns');
    head.innerHTML = `<span class="hx-c-label">row</span><span class="hx-c-mult">clients</span>${attrs.map(a => `<span class="hx-c-cell">${esc(a)}</span>`).join('')}<span class="hx-c-bars">CI · AI · SC</span><span class="hx-c-type">type</span>`;
    const lines = el_('div', 'hx-lines', `cell lines = classes (${classes.join(', ')}); columns = attributes`);
    inputs = shown.map((r, i) => {
      const line = el_('div', 'hx-row'), mult = el_('input', 'hx-mult'), cells = [];
      mult.value = r.m; mult.setAttribute('aria-label', `clients sharing row r${i}`);
      mult.addEventListener('change', () => edit(mult, i, null, null));
      const grid = el_('div', 'hx-grid');
      grid.style.gridTemplateColumns = `repeat(${attrs.length}, 58px)`;
      r.N.forEach((cls, y) => cls.forEach((c, a) => {
        const box = el_('div', 'hx-cell'), inp = el_('input');
        inp.value = c; inp.setAttribute('aria-label', `row r${i}, ${classes[y]}, ${attrs[a]}`);
        inp.addEventListener('change', () => edit(inp, i, y, a));
        box.appendChild(inp); grid.appendChild(box); (cells[y] = cells[y] || [])[a] = inp;
      }));
      const bars = el_('div', 'hx-bars'), type = el_('span', 'hx-type'), rm = el_('button', 'hx-remove', 'del');
      rm.title = `remove row r${i}`; rm.addEventListener('click', () => remove(i));
      line.append(el_('b', 'hx-c-label', `r${i} ×`), mult, grid, bars, type, rm);
      table.appendChild(line);
      return {mult, cells, bars, type, line};
    });
    table.prepend(lines, head);
    const hidden = rows.length - shown.length;
    if (hidden > 0) table.appendChild(el_('small', 'hx-more', `${hidden} more rows (API only)`));
  };
  const rebuild = () => { table.replaceChildren(); buildRows(); };
  const syncInputs = () => inputs.forEach((w, i) => {
    w.mult.value = rows[i].m; w.cells.forEach((line, y) => line.forEach((inp, a) => { inp.value = rows[i].N[y][a]; }));
  });

  const drawRowParts = (s) => inputs.forEach((w, i) => {
    w.bars.innerHTML = TYPES.map((d, j) => `<div class="hx-bar" title="${d} ${fmt(s.triplets[i][j])}"><span>${d}</span><span style="display:inline-block;height:8px;width:${Math.round(BAR_PX * s.triplets[i][j])}px;background:${colours[d]}"></span><span> ${s.triplets[i][j].toFixed(2)}</span></div>`).join('');
    w.type.textContent = s.types[i]; w.type.style.color = colours[s.types[i].includes('=') ? 'tie' : s.types[i]];
  });

  // Everything after a change: readout, row bars and simplex now; the selection shares once these have painted.
  const draw = () => {
    const s = summarize(rows);
    drawReadout(s); drawRowParts(s); drawSimplex(s);
    root.dispatchEvent(new CustomEvent('hx-rows', {bubbles: true, detail: {rows: clone(rows), k: model.get('k')}}));   // outcome views follow
    cancelAnimationFrame(sharesFrame); clearTimeout(sharesTimer); sharesJob++;
    sharesFrame = requestAnimationFrame(() => { sharesTimer = setTimeout(() => drawShares(s), 0); });
  };
  const accept = (next, shapeChanged) => {
    const problem = rowsProblem(next, maxClients);
    if (problem) { say(problem); syncInputs(); return false; }
    rows = next; say('');
    if (shapeChanged) rebuild(); else syncInputs();
    draw(); afterPaint(save); return true;
  };
  const edit = (inp, i, y, a) => {
    const isCell = y !== null, what = isCell ? `row r${i}, ${names().classes[y]}, ${names().attrs[a]}` : `clients of row r${i}`;
    const p = isCell ? parseCount(inp.value, what, 0, MAX_CELL) : parseCount(inp.value, what, 1, maxClients);
    if (p.error) { say(p.error, inp); syncInputs(); return; }
    const next = clone(rows);
    if (isCell) next[i].N[y][a] = p.value; else next[i].m = p.value;
    accept(next, false);
  };
  const remove = (i) => accept(rows.filter((_, j) => j !== i), true);
  addBtn.addEventListener('click', () => { const next = clone(rows); next.push({m: 1, N: next[next.length - 1].N.map(x => x.slice())}); accept(next, true); });
  presetSel.addEventListener('change', () => {
    const p = model.get('presets')[presetSel.value];
    model.set('preset', presetSel.value); model.set('published', p.published); model.set('derived', p.derived || {}); model.set('names', {classes: p.classes, attrs: p.attrs});
    accept(clone(p.rows), true);
  });
  const setting = (inp, key, lo, hi, what) => inp.addEventListener('change', () => {
    const p = parseCount(inp.value, what, lo, typeof hi === 'function' ? hi() : hi);
    if (p.error) { say(p.error, inp); inp.value = model.get(key); return; }
    say(''); model.set(key, p.value); try { model.save_changes(); } catch (e) { /* a saved page */ }
    draw();
  });
  setting(kIn, 'k', 1, () => Math.min(maxClients, rows.reduce((t, r) => t + r.m, 0)), 'κ (clients per round)');
  setting(rIn, 'rounds', 1, model.get('max_rounds'), 'rounds');

  // Changes made from Python (presets, set_cell, a refused API edit): take them as the page's state.
  model.on('change:rows', () => {
    if (saving) return;
    const next = clone(model.get('rows')), same = next.length === rows.length && next.every((r, i) => r.N.length === rows[i].N.length && r.N[0].length === rows[i].N[0].length);
    rows = next; if (same) syncInputs(); else rebuild(); draw();
  });
  model.on('change:preset', () => { presetSel.value = model.get('preset'); });
  model.on('change:message', () => say(model.get('message')));
  model.on('change:names', rebuild);
  model.on('change:published', draw); model.on('change:derived', draw);
  presetSel.value = model.get('preset');
  say(model.get('message'));
  rebuild(); draw();
  return () => { cancelAnimationFrame(sharesFrame); clearTimeout(sharesTimer); sharesJob++; };
}

export default {render};
