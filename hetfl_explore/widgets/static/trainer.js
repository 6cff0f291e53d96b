// The browser trainer of the kernel-free outcome view: federated training of a small MLP on images drawn from a pool
// shipped with the page, with exactly the edited counts (scaled by PRESET.scale), FedAvg (McMahan et al. 2017,
// Algorithm 1: weights n_k / n over the round's clients), and the selectors of hetero.js (uniform, size-proportional,
// FedDiverse's default rule), which the package joins in front of this file (it uses them without importing).
// Metrics per round: average test accuracy and worst-group accuracy min over (class, attribute) groups of the accuracy
// on that group's test images (Németh et al. 2025, Sec. 5, the balanced global test set).
//
// Arithmetic, written so that the Python reference (widgets/browser_trainer.py) reproduces it: parameters, activations,
// probabilities and gradients are float32 (stored in Float32Array, rounded with Math.fround); every sum of products is
// accumulated in float64 and rounded once to float32. A float64 sum of float32 products differs between summation
// orders by ~1e-16 relative, so both sides agree to the last float32 bit except where a value falls on a rounding
// boundary.

export const PRESET = {
  scale: 0.2,        // every edited count × 0.2 (half to even, a non-empty cell keeps >= 1): 200-sample clients train on 40
  hidden: 16,        // MLP d -> 16 (ReLU) -> |Y|: 3.1k parameters on 8 × 8 RGB inputs
  rounds: 20, seeds: 5, lr: 0.5, epochs: 1, batch: 10,
};   // the pool caps the work: clients are disjoint, so a round trains on at most (cells × 400) images

const f32 = Math.fround;

// The pool in memory: per (class, attribute) cell, `train` + `test` images, as float32 feature vectors (n × d) with
// their non-zero entries listed (cmnist images are 2/3 zeros: one colour channel). meta: {classes, attrs, side,
// channels: 1 (a grey digit painted into channel a, colored MNIST) or 3 (RGB), train, test}; bytes: uint8, cell-major.
export function preparePool(meta, bytes) {
  const Y = meta.classes.length, A = meta.attrs.length, per = meta.train + meta.test, px = meta.side * meta.side;
  const d = 3 * px, n = Y * A * per, X = new Float32Array(n * d), nzStart = new Int32Array(n + 1), nzIdx = [];
  let s = 0;
  for (let cell = 0; cell < Y * A; cell++) for (let j = 0; j < per; j++, s++) {
    const off = s * meta.channels * px, a = cell % A, row = X.subarray(s * d, (s + 1) * d);
    if (meta.channels === 1) for (let p = 0; p < px; p++) row[a * px + p] = f32(bytes[off + p] / 255);
    else for (let p = 0; p < d; p++) row[p] = f32(bytes[off + p] / 255);
    for (let i = 0; i < d; i++) if (row[i] !== 0) nzIdx.push(i);
    nzStart[s + 1] = nzIdx.length;
  }
  return {meta, Y, A, per, d, X, nzStart, nzIdx: Int32Array.from(nzIdx)};
}

// Pool index of image j of cell (y, a); train images are j < train, test images the `test` after them.
export const poolIndex = (pool, y, a, j) => (y * pool.A + a) * pool.per + j;

// Why the federation cannot be trained with this pool, or null: rows [{m, N}] (the editor's), κ, the scale.
export function federationProblem(rows, k, pool, scale = PRESET.scale) {
  if (!rows || !rows.length) return 'the federation has no clients';
  const Y = rows[0].N.length, A = rows[0].N[0].length, {classes, attrs} = pool.meta;
  if (Y > pool.Y || A > pool.A)
    return `${Y} classes × ${A} attributes: the ${pool.meta.name} pool shipped with this page has ${pool.Y} × ${pool.A} (${classes.join(', ')} × ${attrs.join(', ')})`;
  const S = rows.map(r => scaleMatrix(r.N, scale)), K = rows.reduce((t, r) => t + r.m, 0);
  const empty = S.findIndex(N => N.every(line => line.every(c => c === 0)));
  if (empty >= 0) return `row r${empty}: a client with no samples cannot train`;
  for (let y = 0; y < Y; y++) for (let a = 0; a < A; a++) {
    const need = rows.reduce((t, r, i) => t + r.m * S[i][y][a], 0);
    if (need > pool.meta.train)
      return `class ${classes[y]}, attribute ${attrs[a]}: ${need.toLocaleString('en')} training images after scaling × ${scale}; the pool shipped with this page holds ${pool.meta.train} per group: lower the counts`;
  }
  for (let y = 0; y < Y; y++) if (rows.every(r => r.N[y].every(c => c === 0)))
    return `class ${classes[y]} has no samples in any client: the model cannot learn it (its worst-group accuracy would be 0 whatever the selector)`;
  if (k > K) return `κ = ${k} clients per round, but the federation has ${K} clients`;
  return null;
}

// One matrix scaled as data.scale_federation: round half to even, a non-empty cell keeps at least one sample.
export function scaleMatrix(N, scale) {
  const half = v => { const f = Math.floor(v), r = v - f; return r > 0.5 || (r === 0.5 && f % 2 === 1) ? f + 1 : f; };
  return N.map(line => line.map(c => (c > 0 ? Math.max(half(c * scale), 1) : 0)));
}

// PyTorch's nn.Linear initialisation: weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); W1 is d × H (input-major)
// and W2 H × C. `u()` gives uniforms in [0, 1).
export function initWeights(d, H, C, u) {
  const w = {W1: new Float32Array(d * H), b1: new Float32Array(H), W2: new Float32Array(H * C), b2: new Float32Array(C)};
  const fill = (a, s) => { for (let i = 0; i < a.length; i++) a[i] = (2 * u() - 1) * s; };
  fill(w.W1, 1 / Math.sqrt(d)); fill(w.b1, 1 / Math.sqrt(d)); fill(w.W2, 1 / Math.sqrt(H)); fill(w.b2, 1 / Math.sqrt(H));
  return w;
}

const copyWeights = w => ({W1: w.W1.slice(), b1: w.b1.slice(), W2: w.W2.slice(), b2: w.b2.slice()});

// Scratch buffers of one model size (reused by every batch).
export function scratch(d, H, C, B) {
  return {h: new Float32Array(B * H), acc: new Float64Array(H), dz: new Float32Array(B * C), dr: new Float32Array(B * H), z: new Float64Array(C),
          gW1: new Float64Array(d * H), gb1: new Float64Array(H), gW2: new Float64Array(H * C), gb2: new Float64Array(C)};
}

// Hidden activations (pre-ReLU, float32) of pool image s into h[o..o+H).
function hidden(pool, w, s, H, h, o, acc) {
  const {X, nzStart, nzIdx, d} = pool, base = s * d;
  acc.fill(0);
  for (let q = nzStart[s]; q < nzStart[s + 1]; q++) {
    const i = nzIdx[q], x = X[base + i], r = i * H;
    for (let j = 0; j < H; j++) acc[j] += x * w.W1[r + j];
  }
  for (let j = 0; j < H; j++) h[o + j] = f32(acc[j] + w.b1[j]);
}

// Logits (float32 values in a Float64Array) of hidden activations h[o..o+H) after ReLU.
function logits(w, h, o, H, C, z) {
  for (let c = 0; c < C; c++) {
    let acc = 0;
    for (let j = 0; j < H; j++) { const r = h[o + j]; if (r > 0) acc += r * w.W2[j * C + c]; }
    z[c] = f32(acc + w.b2[c]);
  }
}

// One SGD step on the cross-entropy of a batch (pool indices `batch`, labels `y` of the pool): w updated in place.
export function sgdStep(pool, w, batch, labels, lr, H, C, t) {
  const m = batch.length, {X, nzStart, nzIdx, d} = pool;
  t.gW1.fill(0); t.gb1.fill(0); t.gW2.fill(0); t.gb2.fill(0);
  for (let b = 0; b < m; b++) {
    const s = batch[b], o = b * H;
    hidden(pool, w, s, H, t.h, o, t.acc); logits(w, t.h, o, H, C, t.z);
    let mx = -Infinity, S = 0;
    for (let c = 0; c < C; c++) mx = Math.max(mx, t.z[c]);
    for (let c = 0; c < C; c++) S += Math.exp(t.z[c] - mx);
    for (let c = 0; c < C; c++) {
      const p = f32(Math.exp(t.z[c] - mx) / S);
      t.dz[b * C + c] = f32((p - (c === labels[s] ? 1 : 0)) / m);
    }
    for (let j = 0; j < H; j++) {
      let acc = 0;
      for (let c = 0; c < C; c++) acc += t.dz[b * C + c] * w.W2[j * C + c];
      t.dr[o + j] = t.h[o + j] > 0 ? f32(acc) : 0;
    }
  }
  for (let b = 0; b < m; b++) {          // gradients: float64 sums over the batch, in batch order
    const s = batch[b], o = b * H, base = s * d;
    for (let c = 0; c < C; c++) t.gb2[c] += t.dz[b * C + c];
    for (let j = 0; j < H; j++) {
      const r = t.h[o + j] > 0 ? t.h[o + j] : 0;
      if (r !== 0) for (let c = 0; c < C; c++) t.gW2[j * C + c] += r * t.dz[b * C + c];
      t.gb1[j] += t.dr[o + j];
    }
    for (let q = nzStart[s]; q < nzStart[s + 1]; q++) {
      const i = nzIdx[q], x = X[base + i], r = i * H;
      for (let j = 0; j < H; j++) t.gW1[r + j] += x * t.dr[o + j];
    }
  }
  const upd = (p, g) => { for (let i = 0; i < p.length; i++) p[i] = p[i] - lr * f32(g[i]); };   // stored as float32
  upd(w.W1, t.gW1); upd(w.b1, t.gb1); upd(w.W2, t.gW2); upd(w.b2, t.gb2);
}

// Test accuracy: overall, and per group g of `groups` (the worst is the minimum over groups with test images).
export function evaluate(pool, w, test, H, C, t) {
  const G = test.G, right = new Float64Array(G), total = new Float64Array(G);
  let ok = 0;
  for (let i = 0; i < test.ids.length; i++) {
    const s = test.ids[i];
    hidden(pool, w, s, H, t.h, 0, t.acc); logits(w, t.h, 0, H, C, t.z);
    let best = 0;
    for (let c = 1; c < C; c++) if (t.z[c] > t.z[best]) best = c;   // ties: the first class
    const hit = best === test.y[i] ? 1 : 0;
    ok += hit; right[test.g[i]] += hit; total[test.g[i]]++;
  }
  let worst = 1;
  for (let g = 0; g < G; g++) if (total[g] > 0) worst = Math.min(worst, right[g] / total[g]);
  return {accuracy: ok / test.ids.length, worst};
}

// FedAvg of client models with weights p_k (float64 sum in client order, rounded once): the new global model.
export function fedavg(models, p) {
  const out = {};
  for (const key of ['W1', 'b1', 'W2', 'b2']) {
    const n = models[0][key].length, acc = new Float64Array(n);
    models.forEach((mdl, k) => { const a = mdl[key]; for (let i = 0; i < n; i++) acc[i] += p[k] * a[i]; });
    out[key] = Float32Array.from(acc);
  }
  return out;
}

// One communication round from `global`: each selected client trains `epochs` epochs of mini-batches (its sample order
// per epoch from `order(client, epoch)`), then FedAvg with weights n_k / n. Returns the new global model.
export function trainRound(pool, global, clients, selected, order, cfg, C, t) {
  const models = [], sizes = [];
  for (const k of selected) {
    const w = copyWeights(global), ids = clients[k];
    for (let e = 0; e < cfg.epochs; e++) {
      const ord = order(k, e);
      for (let s = 0; s < ord.length; s += cfg.batch) {
        const batch = [];
        for (let b = s; b < Math.min(s + cfg.batch, ord.length); b++) batch.push(ids[ord[b]]);
        sgdStep(pool, w, batch, pool.labels, cfg.lr, cfg.hidden, C, t);
      }
    }
    models.push(w); sizes.push(ids.length);
  }
  const n = sizes.reduce((a, b) => a + b, 0);
  return fedavg(models, sizes.map(s => s / n));
}

// A run with everything injected (the equality test's entry point): clients (pool indices), the initial weights, the
// selection of every round and the sample order of every (round, client, epoch). Returns the per-round metrics and
// the final weights.
export function trainInjected(pool, job) {
  const C = job.C, t = scratch(pool.d, job.cfg.hidden, C, job.cfg.batch), test = testSet(pool, job.Y, job.A);
  let w = {W1: Float32Array.from(job.init.W1), b1: Float32Array.from(job.init.b1), W2: Float32Array.from(job.init.W2), b2: Float32Array.from(job.init.b2)};
  const rows = [];
  job.selections.forEach((sel, r) => {
    w = trainRound(pool, w, job.clients, sel, (k, e) => job.orders[r][sel.indexOf(k)][e], job.cfg, C, t);
    rows.push(evaluate(pool, w, test, job.cfg.hidden, C, t));
  });
  return {rows, weights: {W1: Array.from(w.W1), b1: Array.from(w.b1), W2: Array.from(w.W2), b2: Array.from(w.b2)}};
}

// Labels of every pool image (its cell's class), set once.
export function withLabels(pool) {
  pool.labels = new Int32Array(pool.Y * pool.A * pool.per);
  for (let s = 0; s < pool.labels.length; s++) pool.labels[s] = Math.floor(s / (pool.A * pool.per));
  return pool;
}

// The balanced test set of a Y × A federation: every test image of the pool's first Y classes and A attributes.
export function testSet(pool, Y, A) {
  const ids = [], y = [], g = [];
  for (let c = 0; c < Y; c++) for (let a = 0; a < A; a++) for (let j = 0; j < pool.meta.test; j++) {
    ids.push(poolIndex(pool, c, a, pool.meta.train + j)); y.push(c); g.push(c * A + a);
  }
  return {ids, y, g, G: Y * A};
}

// The clients' pool indices for one seed: each cell's training images shuffled (Fisher-Yates with `u`), then handed out
// in client order with the scaled counts: clients are disjoint, as make_federated's partition.
export function drawClients(pool, rows, scale, u) {
  const Y = rows[0].N.length, A = rows[0].N[0].length, next = [], perm = [];
  for (let c = 0; c < Y * A; c++) {
    const p = Int32Array.from({length: pool.meta.train}, (_, i) => i);
    for (let i = p.length - 1; i > 0; i--) { const j = Math.floor(u() * (i + 1)), x = p[i]; p[i] = p[j]; p[j] = x; }
    perm.push(p); next.push(0);
  }
  const clients = [];
  for (const r of rows) {
    const S = scaleMatrix(r.N, scale);
    for (let m = 0; m < r.m; m++) {
      const ids = [];
      for (let y = 0; y < Y; y++) for (let a = 0; a < A; a++) {
        const c = y * A + a;
        for (let j = 0; j < S[y][a]; j++) ids.push(poolIndex(pool, y, a, perm[c][next[c]++]));
      }
      clients.push(Int32Array.from(ids));
    }
  }
  return clients;
}

// A uniform random permutation of 0..n-1 (Fisher-Yates with `u`).
export function permutation(n, u) {
  const p = Int32Array.from({length: n}, (_, i) => i);
  for (let i = n - 1; i > 0; i--) { const j = Math.floor(u() * (i + 1)), x = p[i]; p[i] = p[j]; p[j] = x; }
  return p;
}

// The page's job with its own random streams (mulberry32 of hetero.js): for every seed the data draw and the initial
// weights (shared by the selectors: a paired comparison), for every (seed, selector) the selection and batch streams.
// Runs round-major (every run's round r before any run's round r + 1) and calls post({selector, seed, round,
// accuracy, worst}) after each run's round, so the first point comes after one client round of training.
export function runJob(pool, job, post) {
  const rows = job.rows, Y = rows[0].N.length, A = rows[0].N[0].length, cfg = {...PRESET, ...(job.cfg || {})};
  const s = summarize(rows), K = s.numClients, k = Math.min(job.k, K), test = testSet(pool, Y, A);
  const L = l1Normalise(s.clients.T), t = scratch(pool.d, cfg.hidden, Y, cfg.batch), runs = [];
  for (let seed = 0; seed < cfg.seeds; seed++) {
    const u = makeRng(1000003 * (seed + 1)), clients = drawClients(pool, rows, cfg.scale, u), init = initWeights(pool.d, cfg.hidden, Y, u);
    const sizes = clients.map(c => c.length);
    job.selectors.forEach((name, j) => {
      const sel = makeRng(7919 * (seed + 1) + 104729 * (j + 1)), bat = makeRng(15485863 * (seed + 1) + 31 * (j + 1));
      const ids = Int32Array.from({length: K}, (_, i) => i);
      const pick = name === 'uniform' ? () => uniformRound(K, k, sel, ids) : name === 'size-proportional' ? () => sizeRound(sizes, k, sel)
        : () => feddiverseRound(s.clients.T, k, sel, 1e-9, L);
      runs.push({name, seed, clients, w: init, pick, bat});
    });
  }
  for (let r = 0; r < cfg.rounds; r++) for (const run of runs) {
    const chosen = run.pick();
    run.w = trainRound(pool, run.w, run.clients, chosen, (kk, e) => permutation(run.clients[kk].length, run.bat), cfg, Y, t);
    post({selector: run.name, seed: run.seed, round: r, ...evaluate(pool, run.w, test, cfg.hidden, Y, t)});
  }
}
