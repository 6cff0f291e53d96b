// The heterogeneity computations of the matrix editor, in the browser: a port of the package's Python reference
// implementations (foundation/hetero.py for the triplet, the six metrics, client types and simplex positions;
// feddiverse/selector.py `reference_round` for FedDiverse's default selection rule; engine UniformSelector and
// selection EqW for the uniform and size-proportional baselines). The Python stays the reference;
// tests/test_editor_js.py runs this module under Node.js and compares it with the Python on random federations.
//
// Sources: the triplet and the six metrics are Németh et al. (2025), "Diversity-Driven Learning: Tackling Spurious
// Correlations and Data Heterogeneity in Federated Models", Sec. 3 eqs. 2-4 (centralised metrics, after Yang et al.,
// ICML 2023, "Change is Hard") and eqs. 5-10 (GCI, GAI, GSC, CCI, CAI, CSC); the selection rule is its Algorithms 5-6
// with the package's default choices (SC leads, rotation per triplet SC -> CI -> AI, per-client L1 normalisation, every
// selected client excluded, |cross product| score, ties at random).
//
// Random streams: this module has its own seeded generator (mulberry32), so its draws differ from numpy's; only the
// distributions agree, which the equality test checks within 4 standard errors.

export const TYPES = ['CI', 'AI', 'SC'];            // the order of a triplet's components
export const METRICS = ['GCI', 'GAI', 'GSC', 'CCI', 'CAI', 'CSC'];
const ZERO = 1e-12;                                  // a sum of weights below this counts as zero (as selector.ZERO)
const SERIES_BELOW = 0.1, SERIES_TERMS = 20;         // g(x) as a power series below this |x| (as hetero.SERIES_BELOW)

// g(x) = (1+x) log(1+x) - x (>= 0 for x >= -1) to full relative precision: a power series near 0 (as hetero._excess).
function excess(x) {
  if (Math.abs(x) >= SERIES_BELOW) return x === -1 ? 1 : (1 + x) * Math.log1p(x) - x;
  let acc = 0;
  for (let j = SERIES_TERMS; j >= 0; j--) acc = acc * -x + 1 / ((j + 1) * (j + 2));
  return x * x * acc;
}

// a·b - c·d of non-negative integers, exact (BigInt when a product passes 2^53), rounded once to a double.
function crossDiff(a, b, c, d) {
  const p = a * b, q = c * d;
  if (p <= Number.MAX_SAFE_INTEGER && q <= Number.MAX_SAFE_INTEGER) return p - q;
  return Number(BigInt(a) * BigInt(b) - BigInt(c) * BigInt(d));
}

// H in nats of counts summing to n: sum (c/n) log(n/c), every term >= 0, so no cancellation.
function entropyOfCounts(counts, n) {
  let h = 0;
  for (const c of counts) if (c > 0) h += c / n * Math.log1p((n - c) / c);
  return h;
}

// 1 - H/log k of counts m summing to n: KL(p || uniform)/log k = mean_i g(x_i)/log k, x_i = (k m_i - n)/n exactly.
function imbalance(m, n) {
  let s = 0;
  for (const c of m) s += excess(crossDiff(m.length, c, n, 1) / n);
  return s / m.length / Math.log(m.length);
}

// The triplet [CI, AI, SC] of one interaction matrix N (rows = classes, columns = attributes; counts, not all 0):
// CI = 1 - H(Y)/log|Y|, AI = 1 - H(A)/log|A|, SC = 2 I(Y;A) / (H(Y) + H(A)) (Németh et al. 2025, eqs. 2-4); SC = 0
// when H(Y) + H(A) = 0; each clipped to [0, 1]. Computed as hetero._triplet: from exact integer differences, so a
// balanced marginal or an independent matrix gives exactly 0 and tiny values keep their relative precision.
export function triplet(N) {
  const Y = N.length, A = N[0].length, rows = new Array(Y).fill(0), cols = new Array(A).fill(0);
  let n = 0;
  for (let y = 0; y < Y; y++) for (let a = 0; a < A; a++) { const c = N[y][a]; rows[y] += c; cols[a] += c; n += c; }
  let mi = 0;                 // I(Y;A) = sum_ya P(y)P(a) g(n N_ya / (N_y N_a) - 1)
  for (let y = 0; y < Y; y++) for (let a = 0; a < A; a++) {
    const e = rows[y] * cols[a];
    if (e > 0) mi += e / (n * n) * excess(crossDiff(n, N[y][a], rows[y], cols[a]) / e);
  }
  const denom = entropyOfCounts(rows, n) + entropyOfCounts(cols, n), clip = v => Math.min(1, Math.max(0, v));
  return [clip(imbalance(rows, n)), clip(imbalance(cols, n)), clip(denom > 0 ? 2 * mi / denom : 0)];
}

// The six federation metrics of editor rows [{m, N}] (m clients share matrix N): the triplet of the global matrix
// (GCI, GAI, GSC; eqs. 5-7) and the unweighted mean triplet over the clients (CCI, CAI, CSC; eqs. 8-10).
export function flMetrics(rows, triplets = rows.map(r => triplet(r.N))) {
  const Y = rows[0].N.length, A = rows[0].N[0].length, G = [];
  for (let y = 0; y < Y; y++) { G.push(new Array(A).fill(0)); for (const r of rows) for (let a = 0; a < A; a++) G[y][a] += r.m * r.N[y][a]; }
  const g = triplet(G), mean = [0, 0, 0];
  let K = 0;
  rows.forEach((r, i) => { K += r.m; for (let d = 0; d < 3; d++) mean[d] += r.m * triplets[i][d]; });
  const out = {};
  METRICS.forEach((name, i) => { out[name] = i < 3 ? g[i] : mean[i - 3] / K; });
  return out;
}

// The type of a client: the argmax of its triplet; components within `atol` of the maximum tie. tie = 'join' names
// every tied component ('CI=AI'); tie = 'first' takes the first in the order CI, AI, SC (as hetero.client_types).
export function clientType(t, tie = 'join', atol = 1e-9) {
  const top = Math.max(t[0], t[1], t[2]), tied = TYPES.filter((_, d) => t[d] >= top - atol);
  return tie === 'first' ? tied[0] : tied.join('=');
}

// Where a triplet sits on the CI/AI/SC simplex: the triplet L1-normalised; the zero triplet at the centre.
export function simplexPosition(t) {
  const s = t[0] + t[1] + t[2];
  return s > 0 ? [t[0] / s, t[1] / s, t[2] / s] : [1 / 3, 1 / 3, 1 / 3];
}

// A seeded uniform generator in [0, 1): mulberry32 (T. Ettinger, public domain), 32 bits per draw.
export function makeRng(seed) {
  let s = (seed >>> 0) ^ 0x9e3779b9;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

// k distinct clients of K, uniformly (partial Fisher-Yates shuffle), as engine.protocol.UniformSelector. `ids` is a
// reusable Int32Array of length K (any permutation of 0..K-1: a shuffle of a permutation stays uniform).
export function uniformRound(K, k, rng, ids = Int32Array.from({length: K}, (_, i) => i)) {
  const n = Math.min(k, K);
  for (let i = 0; i < n; i++) { const j = i + Math.floor(rng() * (K - i)), t = ids[i]; ids[i] = ids[j]; ids[j] = t; }
  return Array.from(ids.subarray(0, n));
}

// k distinct clients drawn one after the other with probability proportional to their data size among those left
// (successive sampling, the distribution of numpy's choice(replace=False, p=...)), as selection.baselines.EqW.
export function sizeRound(sizes, k, rng) {
  const left = Float64Array.from(sizes), picks = [], n = Math.min(k, sizes.length);
  let total = 0;
  for (let i = 0; i < left.length; i++) total += left[i];
  for (let i = 0; i < n; i++) {
    const j = drawByWeight(left, rng(), total); picks.push(j); total -= left[j]; left[j] = 0;
  }
  return picks;
}

// Inverse-CDF draw: the first index whose cumulative weight exceeds u × total (weights with a positive total).
function drawByWeight(w, u, total) {
  const target = u * total;
  let c = 0, last = -1;
  for (let i = 0; i < w.length; i++) { if (w[i] <= 0) continue; last = i; c += w[i]; if (c > target) return i; }
  return last;   // u within round-off of 1: the last client with weight
}

// Each triplet divided by the sum of its components (the zero triplet stays zero): what steps 2 and 3 compare.
export function l1Normalise(T) {
  return T.map(t => { const s = Math.max(t[0] + t[1] + t[2], ZERO); return [t[0] / s, t[1] / s, t[2] / s]; });
}

// Triplets as one flat Float64Array [t0_CI, t0_AI, t0_SC, t1_CI, ...]: the round loops below read it without indirection.
const flat = T => { const f = new Float64Array(3 * T.length); T.forEach((t, i) => f.set(t, 3 * i)); return f; };

// One round of FedDiverse's default rule (Németh et al. 2025, Algorithms 5-6), a port of selector.reference_round:
// 1. probabilistic: draw k_p among those left with probability proportional to the leading component (uniformly if
//    all are 0); 2. complementary: k_c = argmin of <L_kp, L_k> (L = L1-normalised triplets); 3. orthogonal:
//    k_r = argmax |<L_kp x L_kc, L_k>|; repeated, the leading component rotating SC -> CI -> AI per triplet. Scores
//    within `tol` of the best tie, broken uniformly. Plain loops over flat typed arrays: no allocation per client.
export function feddiverseRound(T, k, rng, tol = 1e-9, L = l1Normalise(T), Tf = flat(T), Lf = flat(L)) {
  const K = T.length, n = Math.min(k, K), left = new Uint8Array(K).fill(1), w = new Float64Array(K), score = new Float64Array(K);
  const picks = [], take = i => { picks.push(i); left[i] = 0; return picks.length === n; };
  const best = sign => {   // a client left whose sign * score is within tol of the largest, the ⌊u·n⌋-th of the n tied
    let b = -Infinity, c = 0;
    for (let i = 0; i < K; i++) if (left[i] && sign * score[i] > b) b = sign * score[i];
    for (let i = 0; i < K; i++) if (left[i] && b - sign * score[i] <= tol) c++;
    let j = Math.floor(rng() * c);
    for (let i = 0; i < K; i++) if (left[i] && b - sign * score[i] <= tol && j-- === 0) return i;
  };
  const dot = (x, y, z) => { for (let i = 0, o = 0; i < K; i++, o += 3) score[i] = Lf[o] * x + Lf[o + 1] * y + Lf[o + 2] * z; };
  for (let step = 0; ; step++) {
    const lead = [2, 0, 1][step % 3];
    let total = 0;
    for (let i = 0; i < K; i++) { w[i] = left[i] ? Tf[3 * i + lead] : 0; total += w[i]; }
    if (total <= ZERO) { total = 0; for (let i = 0; i < K; i++) { w[i] = left[i]; total += w[i]; } }   // an exhausted dimension: uniform
    const kp = drawByWeight(w, rng(), total);
    if (take(kp)) break;
    const p = L[kp];
    dot(p[0], p[1], p[2]);
    const kc = best(-1), q = L[kc];
    if (take(kc)) break;
    dot(p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]);
    for (let i = 0; i < K; i++) score[i] = Math.abs(score[i]);
    if (take(best(1))) break;
  }
  return picks;
}

export const SELECTORS = ['uniform', 'size-proportional', 'feddiverse'];

const SLICE_WORK = 2e5;                 // client visits (κ × clients per round) in one slice of selectionSharesSteps

// Selection over `rounds` rounds of κ = k clients per round for each selector of SELECTORS, in slices: a generator
// that yields its progress in [0, 1] after about `work` client visits and returns, per selector, the per-client
// frequency (fraction of rounds selected) and the share of all selected slots by client type (types with
// tie = 'first', as feddiverse.simulation.selection_stats). `T`: the clients' triplets, `sizes` their data sizes,
// `types` their types. The editor runs one slice per task, so an edit typed meanwhile is never kept waiting.
export function* selectionSharesSteps(T, sizes, types, k, rounds, seed = 0, selectors = SELECTORS, work = SLICE_WORK) {
  const out = {}, K = T.length, L = l1Normalise(T), Tf = flat(T), Lf = flat(L), ids = Int32Array.from({length: K}, (_, i) => i);
  const perRound = Math.max(1, K * Math.min(k, K)), all = selectors.length * rounds;
  let budget = work, done = 0;
  for (const [s, name] of selectors.entries()) {
    const rng = makeRng(seed * 7919 + s), count = new Array(K).fill(0), slots = {CI: 0, AI: 0, SC: 0};
    let total = 0;
    for (let r = 0; r < rounds; r++) {
      const chosen = name === 'uniform' ? uniformRound(K, k, rng, ids) : name === 'size-proportional' ? sizeRound(sizes, k, rng)
        : feddiverseRound(T, k, rng, 1e-9, L, Tf, Lf);
      for (const i of chosen) { count[i]++; slots[types[i]]++; total++; }
      done++; budget -= perRound;
      if (budget <= 0) { budget = work; yield done / all; }
    }
    out[name] = {frequency: count.map(c => c / rounds), typeShares: Object.fromEntries(TYPES.map(d => [d, slots[d] / Math.max(total, 1)]))};
  }
  return out;
}

// selectionSharesSteps run to the end at once.
export function selectionShares(T, sizes, types, k, rounds, seed = 0, selectors = SELECTORS) {
  const steps = selectionSharesSteps(T, sizes, types, k, rounds, seed, selectors);
  for (;;) { const r = steps.next(); if (r.done) return r.value; }
}

// Everything the editor shows for rows [{m, N}]: per-row triplets, types and simplex positions, the six metrics,
// type counts over clients, the global matrix, and the expanded clients (triplet, size, first-tie type) for selection.
export function summarize(rows, atol = 1e-9) {
  const triplets = rows.map(r => triplet(r.N)), types = triplets.map(t => clientType(t, 'join', atol));
  const counts = {};
  rows.forEach((r, i) => { counts[types[i]] = (counts[types[i]] || 0) + r.m; });
  const clients = {T: [], sizes: [], types: []};
  rows.forEach((r, i) => {
    const n = r.N.flat().reduce((a, b) => a + b, 0), first = clientType(triplets[i], 'first', atol);
    for (let j = 0; j < r.m; j++) { clients.T.push(triplets[i]); clients.sizes.push(n); clients.types.push(first); }
  });
  return {triplets, types, positions: triplets.map(simplexPosition), metrics: flMetrics(rows, triplets), typeCounts: counts,
          numClients: clients.T.length, nSamples: clients.sizes.reduce((a, b) => a + b, 0), clients};
}
