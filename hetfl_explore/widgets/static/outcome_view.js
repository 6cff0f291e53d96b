// The kernel-free outcome view (anywidget; joined after hetero.js and trainer.js): accuracy curves of the browser
// trainer, mean over seeds with a min–max band, redrawn round by round as a Web Worker trains. It follows the matrix
// editor above it in the page (the nearest preceding one, else the first): the editor dispatches an `hx-rows` event
// with its rows and κ after every redraw. Every edit terminates the running job and starts the new one on a warm
// worker; an edit the trainer cannot use is refused beside the curves, which stay, greyed.
const OUT_SVG = 'http://www.w3.org/2000/svg';
const CHART = {w: 520, h: 260, l: 40, r: 10, t: 10, b: 30};
const PALETTE = {uniform: '#1f77b4', 'size-proportional': '#2ca02c', feddiverse: '#d62728'};
const SPARE_DELAY_MS = 30;   // a spare worker is started this long after a job starts (not during the edit's redraw)
const OUT_CSS = `
.hx-outcome { font: 13px system-ui, sans-serif; max-width: 560px; }
.hx-outcome .hx-o-head { font-size: 12px; color: #555; margin: 2px 0; }
.hx-outcome .hx-o-message { min-height: 18px; color: #c00; font-size: 12px; }
.hx-outcome .hx-o-status { font-size: 12px; color: #333; min-height: 16px; }
.hx-outcome .hx-o-chart.hx-stale { opacity: 0.35; filter: grayscale(1); }
.hx-outcome .hx-o-legend { font-size: 11px; }
.hx-outcome table { font-family: monospace; font-size: 11px; border-collapse: collapse; }
.hx-outcome th, .hx-outcome td { padding: 0 6px; text-align: left; }
`;

const o_el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const svgEl = (tag, attrs) => { const e = document.createElementNS(OUT_SVG, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); return e; };
const jobKey = (rows, k, selectors) => JSON.stringify([rows.map(r => [r.m, r.N]), k, selectors]);

// Mean, min, max and standard error of the defined entries of `xs`.
function stats(xs) {
  const v = xs.filter(x => x !== undefined), n = v.length;
  if (!n) return null;
  const mean = v.reduce((a, b) => a + b, 0) / n, sd = n > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return {mean, min: Math.min(...v), max: Math.max(...v), se: sd / Math.sqrt(n), n};
}

function render({model, el}) {
  if (!document.getElementById('hx-outcome-css')) { const st = o_el('style'); st.id = 'hx-outcome-css'; st.textContent = OUT_CSS; document.head.appendChild(st); }
  const root = o_el('div', 'hx-outcome hetfl-kernel-free'), meta = model.get('pool_meta'), rounds = PRESET.rounds, seeds = PRESET.seeds;
  el.appendChild(root);
  const poolInfo = {meta, Y: meta.classes.length, A: meta.attrs.length};
  const head = o_el('div', 'hx-o-head', `Training outcome, computed in this page (no kernel): MLP 192 → ${PRESET.hidden} → |Y| on ${meta.side}×${meta.side} colored-MNIST images, `
    + `counts × ${PRESET.scale}, FedAvg, ${rounds} rounds, ${seeds} seeds. Lines: mean over seeds (solid: average accuracy, dashed: worst-group); band: min–max of the worst-group accuracy over seeds.`);
  const controls = o_el('div', 'hx-o-controls'), boxes = {};
  for (const name of SELECTORS) {
    const lab = o_el('label'), box = o_el('input');
    box.type = 'checkbox'; box.checked = model.get('selectors').includes(name); box.dataset.selector = name;
    lab.append(box, ` ${name} `); controls.appendChild(lab); boxes[name] = box;
  }
  const stopBtn = o_el('button', 'hx-o-stop', 'stop');
  controls.appendChild(stopBtn);
  const msg = o_el('div', 'hx-o-message'), status = o_el('div', 'hx-o-status'), chart = o_el('div', 'hx-o-chart');
  const legend = o_el('div', 'hx-o-legend'), table = o_el('div', 'hx-o-table');
  root.append(head, controls, msg, status, chart, legend, table);

  // --- the chart: axes once, then one group of paths per selector
  const svg = svgEl('svg', {width: CHART.w, height: CHART.h}), X = r => CHART.l + (CHART.w - CHART.l - CHART.r) * r / Math.max(rounds - 1, 1);
  const Yp = v => CHART.t + (CHART.h - CHART.t - CHART.b) * (1 - v), plot = svgEl('g', {class: 'hx-o-plot'});
  svg.appendChild(svgEl('rect', {x: CHART.l, y: CHART.t, width: CHART.w - CHART.l - CHART.r, height: CHART.h - CHART.t - CHART.b, fill: '#fafafa', stroke: '#bbb'}));
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    svg.appendChild(svgEl('line', {x1: CHART.l, x2: CHART.w - CHART.r, y1: Yp(v), y2: Yp(v), stroke: '#e4e4e4'}));
    const t = svgEl('text', {x: CHART.l - 4, y: Yp(v) + 4, 'text-anchor': 'end', 'font-size': 10}); t.textContent = v.toFixed(2); svg.appendChild(t);
  }
  for (let r = 0; r < rounds; r += 5) { const t = svgEl('text', {x: X(r), y: CHART.h - CHART.b + 14, 'text-anchor': 'middle', 'font-size': 10}); t.textContent = r + 1; svg.appendChild(t); }
  const xl = svgEl('text', {x: (CHART.w + CHART.l) / 2, y: CHART.h - 2, 'text-anchor': 'middle', 'font-size': 11}); xl.textContent = 'round'; svg.appendChild(xl);
  svg.appendChild(plot); chart.appendChild(svg);

  let selectors = model.get('selectors').slice(), curves = {}, job = 0, frame = 0, points = 0, t0 = 0, shownKey = null, last = null;
  const setState = s => { root.dataset.state = s; };

  // curves[selector][seed][round] = [accuracy, worst]: everything drawn comes from here
  const draw = () => {
    frame = 0;
    const parts = [];
    for (const name of selectors) {
      const runs = Object.values(curves[name] || {}), colour = PALETTE[name];
      if (!runs.length) continue;
      const per = [...Array(rounds).keys()].map(r => [stats(runs.map(x => x[r] && x[r][0])), stats(runs.map(x => x[r] && x[r][1]))]).filter(p => p[0]);
      const idx = [...Array(rounds).keys()].filter(r => runs.some(x => x[r]));
      const line = (i, dash) => svgEl('path', {d: idx.map((r, j) => `${j ? 'L' : 'M'}${X(r).toFixed(1)},${Yp(per[j][i].mean).toFixed(1)}`).join(''),
        fill: 'none', stroke: colour, 'stroke-width': 2, 'stroke-dasharray': dash, class: 'hx-o-line', 'data-selector': name});
      const band = idx.map((r, j) => `${X(r).toFixed(1)},${Yp(per[j][1].max).toFixed(1)}`).concat(idx.slice().reverse().map((r, j) =>
        `${X(r).toFixed(1)},${Yp(per[idx.length - 1 - j][1].min).toFixed(1)}`));
      parts.push(svgEl('polygon', {points: band.join(' '), fill: colour, 'fill-opacity': 0.12, stroke: 'none'}), line(0, ''), line(1, '5,3'));
      for (const [j, r] of idx.entries()) parts.push(svgEl('circle', {cx: X(r).toFixed(1), cy: Yp(per[j][1].mean).toFixed(1), r: 2.2, fill: colour, class: 'hx-o-point'}));
    }
    plot.replaceChildren(...parts);
    legend.innerHTML = selectors.map(n => `<span style="color:${PALETTE[n]}">━ ${n}</span>`).join(' &nbsp; ') + ' &nbsp; (solid: average, dashed: worst group)';
    drawTable();
  };
  const schedule = () => { if (!frame) frame = requestAnimationFrame(draw); };

  // the final round's mean ± SE per selector, and FedDiverse − uniform paired over the seeds both finished
  const drawTable = () => {
    const fin = name => Object.values(curves[name] || {}).filter(x => x[rounds - 1]).map(x => x[rounds - 1]);
    const fmt = s => (s ? `${s.mean.toFixed(3)} ± ${s.se.toFixed(3)}` : '–');
    let html = `<table><tr><th>round ${rounds}</th><th>average</th><th>worst group</th><th>seeds</th></tr>`;
    for (const name of selectors) { const f = fin(name); html += `<tr><th>${name}</th><td>${fmt(stats(f.map(x => x[0])))}</td><td>${fmt(stats(f.map(x => x[1])))}</td><td>${f.length}</td></tr>`; }
    const a = curves.feddiverse || {}, b = curves.uniform || {};
    const d = Object.keys(a).filter(s => b[s] && a[s][rounds - 1] && b[s][rounds - 1]).map(s => a[s][rounds - 1][1] - b[s][rounds - 1][1]);
    if (selectors.includes('feddiverse') && selectors.includes('uniform') && d.length)
      html += `<tr><th>FedDiverse − uniform</th><td></td><td>${fmt(stats(d))}</td><td>${d.filter(x => x > 0).length} of ${d.length} seeds &gt; 0</td></tr>`;
    table.innerHTML = html + '</table><small>mean ± standard error over seeds</small>';
  };

  // --- the worker: a warm spare takes every new job; a busy one is terminated (the job is cancelled)
  const url = URL.createObjectURL(new Blob([model.get('worker_src')], {type: 'text/javascript'}));
  const bytes = Uint8Array.from(atob(model.get('pool')), c => c.charCodeAt(0));
  let active = null, spare = null, spareTimer = 0;
  const spawn = () => { const w = new Worker(url, {type: 'module'}); w.postMessage({type: 'pool', meta, bytes}); return w; };
  const ensureSpare = () => { clearTimeout(spareTimer); spareTimer = setTimeout(() => { if (!spare) spare = spawn(); }, SPARE_DELAY_MS); };
  const cancel = () => { if (active) { active.terminate(); active = null; } };
  const onMessage = w => ({data: m}) => {
    if (m.type === 'ready' || m.id !== job) return;
    if (m.type === 'round') {
      ((curves[m.selector] = curves[m.selector] || {})[m.seed] = curves[m.selector][m.seed] || [])[m.round] = [m.accuracy, m.worst];
      points++; root.dataset.points = String(points);
      status.textContent = `training in this page: ${m.selector}, seed ${m.seed + 1} of ${seeds}, round ${m.round + 1} of ${rounds}`;
      schedule();
    } else if (m.type === 'done') {
      status.textContent = `done in ${((performance.now() - t0) / 1000).toFixed(2)} s (${selectors.length} selectors × ${seeds} seeds × ${rounds} rounds, in this page)`;
      setState('done');
      if (!spare) spare = w; else w.terminate();
      active = null;
    } else if (m.type === 'error') { refuse(`the trainer failed: ${m.message}`); }
  };
  const refuse = text => {
    cancel(); msg.textContent = `⚠ ${text} — the curves below are the last valid federation's`;
    chart.classList.add('hx-stale'); table.classList.add('hx-stale'); setState('refused');
    status.textContent = '';
  };
  const start = (rows, k) => {
    const key = jobKey(rows, k, selectors);
    if (key === shownKey) return;
    shownKey = key; last = {rows, k};
    const problem = selectors.length ? federationProblem(rows, k, poolInfo, PRESET.scale) : 'choose at least one selector';
    if (problem) { refuse(problem); return; }
    cancel();
    msg.textContent = ''; chart.classList.remove('hx-stale'); table.classList.remove('hx-stale');
    job++; curves = {}; points = 0; t0 = performance.now();
    root.dataset.job = String(job); root.dataset.points = '0'; setState('training');
    active = spare || spawn(); spare = null;
    active.onmessage = onMessage(active);
    active.onerror = e => refuse(`the trainer failed: ${e.message || 'worker error'}`);
    active.postMessage({type: 'run', id: job, rows, k, selectors});
    status.textContent = 'training in this page…';
    schedule(); ensureSpare();
  };
  stopBtn.addEventListener('click', () => {
    if (!active) return;
    cancel(); status.textContent = 'stopped: edit the matrices or the selectors to train again'; setState('stopped'); shownKey = null;
  });
  for (const [name, box] of Object.entries(boxes)) box.addEventListener('change', () => {
    selectors = SELECTORS.filter(n => boxes[n].checked);
    if (last) start(last.rows, last.k);
  });

  // --- the editor this view follows: the nearest .hx-editor before it in the page, else the first one
  const editor = () => {
    const eds = [...document.querySelectorAll('.hx-editor')];
    const before = eds.filter(e => e.compareDocumentPosition(root) & Node.DOCUMENT_POSITION_FOLLOWING);
    return before.length ? before[before.length - 1] : eds[0] || null;
  };
  // the editor's note says where outcomes come from: here, this view
  const claimNote = ed => {
    const note = ed && ed.querySelector('.hx-note');
    if (note && !note.dataset.outcome) { note.dataset.outcome = '1'; note.textContent = 'Training outcomes: the curves of the outcome view in this page follow every edit (trained in your browser, no kernel).'; }
    return Boolean(note);
  };
  const onRows = e => {
    const ed = e.target.closest && e.target.closest('.hx-editor');
    if (!ed || ed !== editor()) return;
    claimNote(ed); pending = e.detail;
    if (!startFrame) startFrame = requestAnimationFrame(() => setTimeout(() => { startFrame = 0; start(pending.rows, pending.k); }, 0));
  };
  let pending = null, startFrame = 0;   // the job starts once the editor's redraw is on screen (not inside it)
  document.addEventListener('hx-rows', onRows);
  let tries = 0;   // the editor may render after this view: look for it a few times
  const lookForEditor = () => { if (!claimNote(editor()) && ++tries < 20) setTimeout(lookForEditor, 100); };
  lookForEditor();

  // --- first paint: the saved curves (same preset, trained by the Python reference when the page was made)
  const saved = model.get('saved');
  if (saved && saved.curves) {
    curves = saved.curves; shownKey = jobKey(model.get('rows'), model.get('k'), selectors); last = {rows: model.get('rows'), k: model.get('k')};
    status.textContent = saved.label || 'saved curves'; setState('saved');
  }
  draw();
  ensureSpare();
  return () => { document.removeEventListener('hx-rows', onRows); cancelAnimationFrame(startFrame); cancel(); if (spare) spare.terminate(); clearTimeout(spareTimer); URL.revokeObjectURL(url); };
}

export default {render};
