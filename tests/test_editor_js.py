"""The matrix editor's browser computation (hetfl_explore/widgets/static/hetero.js) run under Node.js and compared with the
Python reference on 1,200 random federations (2-4 classes, 2-4 attributes, empty rows and columns, one-client
federations, counts up to 10^6): triplets and the six metrics within 1e-9, types exact, simplex positions exact from
the same triplets; selection frequencies of uniform, size-proportional and FedDiverse's default rule within 4 standard
errors over 3,000 rounds (the JavaScript has its own random stream); the seven published federations' triplets; balanced,
near-balanced and huge-count clients and federations against exact values (mpmath, 50 digits), in both languages.
One node call holds every federation. Skips when node is missing, fails instead under HETFL_REQUIRE_BROWSER=1 (CI)."""
import json, shutil, subprocess
import mpmath
import numpy as np
import pytest
from conftest import ROOT, browser_required
from hetfl_explore.foundation.hetero import dht, fl_metrics, client_types, simplex_positions, METRICS
from hetfl_explore.foundation.data import FEDERATIONS, federation
from hetfl_explore.feddiverse.simulation import simulate_selection

MODULE = ROOT/'hetfl_explore'/'widgets'/'static'/'hetero.js'
N_FEDERATIONS, SELECTION_FEDERATIONS, ROUNDS, SE_LIMIT = 1200, 40, 3000, 4.0
PY_SELECTORS = {'uniform': 'uniform', 'size-proportional': 'EqW', 'feddiverse': 'feddiverse[sign-invariant]'}

RUNNER = '''import * as H from %s;
import {readFileSync} from 'node:fs';
const job = JSON.parse(readFileSync(0, 'utf8')), out = {feds: [], published: [], selection: []};
for (const rows of job.feds) {
  const s = H.summarize(rows);
  out.feds.push({triplets: s.triplets, types: s.types, metrics: s.metrics, positions: s.positions});
}
out.positionsFromPython = job.pyTriplets.map(ts => ts.map(H.simplexPosition));
out.typesFromPython = job.pyTriplets.map(ts => ts.map(t => H.clientType(t)));
for (const rows of job.published) out.published.push(rows.map(r => H.triplet(r.N)));
out.exact = job.exact.map(N => ({triplet: H.triplet(N), position: H.simplexPosition(H.triplet(N))}));
out.exactFeds = job.exactFeds.map(rows => H.summarize(rows).metrics);
const b = H.summarize(job.balancedGsc);
out.balancedGsc = H.selectionShares(b.clients.T, b.clients.sizes, b.clients.types, 9, job.rounds, 0).feddiverse.typeShares;
for (const sel of job.selection) {
  const s = H.summarize(sel.rows);
  out.selection.push(H.selectionShares(s.clients.T, s.clients.sizes, s.clients.types, sel.k, job.rounds, sel.seed));
}
process.stdout.write(JSON.stringify(out));
'''

mpmath.mp.dps = 50
HUGE = 2 ** 50
# balanced, near-balanced (one count off), independent (rank one) and huge-count clients, 2x2 to 4x3
EXACT_CASES = ([np.full((2, 2), x) for x in range(1, 3000)] + [np.full((3, 4), 7), np.full((4, 3), 10 ** 12)]
               + [np.array([[x + 1, x], [x, x]]) for x in (1, 3, 1000, 10 ** 6, 10 ** 9, 10 ** 12)]
               + [np.array([[x, x, x], [x, x + 1, x]]) for x in (5, 10 ** 9)]
               + [np.outer(u, v) for u, v in (([1, 2], [3, 4]), ([10 ** 6, 3], [7, 10 ** 6]), ([1, 2, 3], [5, 5, 10 ** 8]))]
               + [np.array([[HUGE, 1], [3, HUGE // 2]]), np.array([[HUGE // 4, HUGE // 4], [HUGE // 4, HUGE // 4 + 1]]),
                  np.array([[HUGE, 0], [0, 0]]), np.array([[10 ** 15, 10 ** 15 - 1], [10 ** 15 - 1, 10 ** 15]])])
EXACT_FEDS = [[(3, np.full((2, 2), 4)), (2, np.full((2, 2), 9))],                      # all balanced: every metric 0
              [(1, np.full((2, 2), 4)), (1, np.array([[5, 4], [4, 4]]))],              # near-balanced
              [(2, np.full((3, 2), 10 ** 9)), (1, np.array([[10 ** 9 + 1, 10 ** 9], [10 ** 9] * 2, [10 ** 9] * 2]))]]

def exact_triplet(N):
    "[CI, AI, SC] of integer counts in 50-digit arithmetic from the definitions (Németh et al. 2025, eqs. 2-4)."
    N = [[mpmath.mpf(int(v)) for v in row] for row in np.asarray(N)]
    Y, A = len(N), len(N[0]); n = sum(map(sum, N))
    ny, na = [sum(r) for r in N], [sum(N[y][a] for y in range(Y)) for a in range(A)]
    H = lambda c: -sum(v / n * mpmath.log(v / n) for v in c if v > 0)
    I = sum(N[y][a] / n * mpmath.log(N[y][a] * n / (ny[y] * na[a])) for y in range(Y) for a in range(A) if N[y][a] > 0)
    hy, ha = H(ny), H(na)
    return [1 - hy / mpmath.log(Y), 1 - ha / mpmath.log(A), 2 * I / (hy + ha) if hy + ha > 0 else mpmath.mpf(0)]

def exact_metrics(rows):
    "The six metrics of editor rows [(m, N)] in 50-digit arithmetic: triplet of the sum, and the client-weighted mean triplet."
    G = sum(m * N.astype(object) for m, N in rows); K = sum(m for m, _ in rows)
    mean = [sum(m * exact_triplet(N)[d] for m, N in rows) / K for d in range(3)]
    return dict(zip(METRICS, exact_triplet(G) + mean))

def assert_exact(got, want, what):
    "Exact 0 where the exact value is 0 (balanced, independent); elsewhere within 1e-12 relative."
    for g, w in zip(got, want):
        if w == 0: assert g == 0, (what, got, want)
        else: assert abs(g - float(w)) <= 1e-12 * abs(float(w)), (what, got, [float(x) for x in want])

def balanced_gsc():
    "Spawrious_GSC's editor rows with rows 0, 1 and 2 (two clients each) made perfectly balanced: all 4, all 2, all 6."
    rows = [(m, np.array(N)) for m, N in federation('spawrious_gsc').client_types]
    for i, v in zip((0, 1, 2), (4, 2, 6)): rows[i] = (rows[i][0], np.full((2, 2), v))
    return rows

def node_path():
    "The node binary, or a skip (a failure where browser tools are required)."
    exe = shutil.which('node')
    if exe is None:
        msg = 'Node.js is not installed: the editor JavaScript cannot be checked (apt-get install nodejs)'
        if browser_required(): pytest.fail(msg)
        pytest.skip(msg)
    return exe

def random_rows(rng):
    "Editor rows [(m, N)] of a random federation: 2-4 classes and attributes, some rows or columns empty everywhere, counts up to 1e6."
    Y, A = rng.integers(2, 5, 2); n_rows = 1 if rng.random() < 0.15 else int(rng.integers(1, 7))
    top = int(10 ** rng.uniform(0, 6))
    rows = []
    for _ in range(n_rows):
        N = rng.integers(0, top + 1, (Y, A)) * (rng.random((Y, A)) > 0.25)
        rows.append([1 if n_rows == 1 and rng.random() < 0.5 else int(rng.integers(1, 4)), N])
    if rng.random() < 0.3: (lambda y: [r[1].__setitem__((y, slice(None)), 0) for r in rows])(rng.integers(Y))   # an empty class
    if rng.random() < 0.3: (lambda a: [r[1].__setitem__((slice(None), a), 0) for r in rows])(rng.integers(A))   # an empty attribute
    for _, N in rows:
        if N.sum() == 0: N[rng.integers(Y), rng.integers(A)] = int(rng.integers(1, top + 1))
    if rng.random() < 0.05: rows[0][1][...] = 0; rows[0][1][0, 0] = 10**6   # a one-cell client (zero triplet parts)
    return [(m, N.astype(np.int64)) for m, N in rows]

def as_js(rows): return [{'m': int(m), 'N': N.tolist()} for m, N in rows]

@pytest.fixture(scope='module')
def run():
    "Every federation through the JavaScript in one node call; returns (federations, job, node output)."
    exe, rng = node_path(), np.random.default_rng(20260501)
    feds = [random_rows(rng) for _ in range(N_FEDERATIONS)]
    py_triplets = [dht(np.stack([N for _, N in rows])) for rows in feds]
    sel = [dict(rows=as_js(rows), k=int(rng.integers(1, sum(m for m, _ in rows) + 1)), seed=i)
           for i, rows in enumerate(feds[:SELECTION_FEDERATIONS])]
    published = [as_js([(m, np.array(N)) for m, N in federation(n).client_types]) for n in FEDERATIONS]
    job = dict(feds=[as_js(r) for r in feds], pyTriplets=[t.tolist() for t in py_triplets], published=published,
               selection=sel, rounds=ROUNDS, exact=[N.tolist() for N in EXACT_CASES],
               exactFeds=[as_js(r) for r in EXACT_FEDS], balancedGsc=as_js(balanced_gsc()))
    res = subprocess.run([exe, '--input-type=module', '-e', RUNNER % json.dumps(MODULE.as_uri())], input=json.dumps(job),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return feds, py_triplets, job, json.loads(res.stdout)

def test_triplets_metrics_types_and_positions_match_python(run):
    feds, py_triplets, job, out = run
    worst = 0.0
    for rows, t_py, js in zip(feds, py_triplets, out['feds']):
        expanded = np.repeat(np.stack([N for _, N in rows]), [m for m, _ in rows], axis=0)
        m_py = fl_metrics(expanded)
        worst = max(worst, np.abs(np.array(js['triplets']) - t_py).max(),
                    max(abs(js['metrics'][k] - m_py[k]) for k in METRICS))
        assert js['types'] == list(client_types(t_py)), (rows, js['triplets'], t_py)
        np.testing.assert_allclose(js['positions'], simplex_positions(t_py), rtol=0, atol=1e-9)
    assert worst <= 1e-9, worst
    for t_py, pos, ty in zip(py_triplets, out['positionsFromPython'], out['typesFromPython']):
        assert (np.array(pos) == simplex_positions(t_py)).all() and ty == list(client_types(t_py))   # exact from the same triplets

def test_federations_cover_the_edge_cases(run):
    feds = run[0]
    assert sum(sum(m for m, _ in r) == 1 for r in feds) >= 50 and max(N.max() for r in feds for _, N in r) >= 500_000
    assert any((np.stack([N for _, N in r]).sum((0, 2)) == 0).any() for r in feds)        # an empty class in every client
    assert any((np.stack([N for _, N in r]).sum((0, 1)) == 0).any() for r in feds)        # an empty attribute
    assert {N.shape for r in feds for _, N in r} == {(y, a) for y in (2, 3, 4) for a in (2, 3, 4)}

def test_published_federations_reproduce_their_published_triplets(run):
    for name, js in zip(FEDERATIONS, run[3]['published']):
        pub = np.array(federation(name).published['triplets'], float)
        np.testing.assert_allclose(np.round(js, 2), pub, atol=0.0051, err_msg=name)

def test_selection_frequencies_agree_within_four_standard_errors(run):
    feds, _, job, out = run
    for sel, rows, js in zip(job['selection'], feds, out['selection']):
        N = np.repeat(np.stack([N for _, N in rows]), [m for m, _ in rows], axis=0)
        for name, py_name in PY_SELECTORS.items():
            f_py = simulate_selection(N, py_name, rounds=ROUNDS, k=sel['k'], seed=sel['seed']).frequency
            f_js = np.array(js[name]['frequency']); p = (f_py + f_js) / 2
            se = np.sqrt(2 * p * (1 - p) / ROUNDS)
            assert (np.abs(f_js - f_py) <= SE_LIMIT * se + 1e-12).all(), (name, sel['k'], f_js, f_py)
            assert abs(f_js.sum() - min(sel['k'], len(N))) < 1e-9   # κ distinct clients every round

def test_balanced_and_near_balanced_clients_are_exact_in_both_languages(run):
    "Exact zeros for balanced marginals and independence (a balanced client at the centre), full relative precision otherwise."
    out = run[3]
    for N, js in zip(EXACT_CASES, out['exact']):
        want = exact_triplet(N); s = sum(want)
        assert_exact(dht(N), want, ('python', N.tolist())); assert_exact(js['triplet'], want, ('js', N.tolist()))
        pos = [mpmath.mpf(1) / 3] * 3 if s == 0 else [w / s for w in want]
        assert_exact(js['position'], pos, ('js position', N.tolist()))
        assert_exact(simplex_positions(dht(N)[None])[0], pos, ('python position', N.tolist()))
    centre = simplex_positions(dht(np.stack(EXACT_CASES[:2999])))
    assert (centre == 1 / 3).all() and all(o['position'] == [1 / 3] * 3 for o in out['exact'][:2999])

def test_balanced_federations_metrics_are_exact(run):
    for rows, js in zip(EXACT_FEDS, run[3]['exactFeds']):
        want = exact_metrics(rows)
        expanded = np.repeat(np.stack([N for _, N in rows]), [m for m, _ in rows], axis=0)
        py = fl_metrics(expanded)
        assert_exact([js[k] for k in METRICS], [want[k] for k in METRICS], ('js', rows))
        assert_exact([py[k] for k in METRICS], [want[k] for k in METRICS], ('python', rows))

def test_balanced_clients_get_the_documented_feddiverse_shares(run):
    "Spawrious_GSC with six balanced clients, κ = 9, 3,000 rounds: the rule's shares (CI 28.5, AI 17.9, SC 53.6 %)."
    rows = balanced_gsc()
    N = np.repeat(np.stack([N for _, N in rows]), [m for m, _ in rows], axis=0)
    py = simulate_selection(N, 'feddiverse[sign-invariant]', rounds=ROUNDS, k=9, seed=0).type_shares
    js = run[3]['balancedGsc']
    for d, pct in zip(('CI', 'AI', 'SC'), (28.5, 17.9, 53.6)):
        se = np.sqrt(pct / 100 * (1 - pct / 100) / (9 * ROUNDS))        # a slot's type, 27,000 slots
        assert abs(js[d] - pct / 100) <= SE_LIMIT * se and abs(py[d] - pct / 100) <= SE_LIMIT * se, (d, js, py)

PARSE_CASES = {   # typed text -> the parsed value, or a word of the refusal's true reason
    '+5': 5, '5.0': 5, '5.': 5, '-0': 0, '007': 7, ' 12 ': 12, '+0.000': 0,
    '0x10': 'hexadecimal', '0xE': 'hexadecimal', '0b11': 'binary', '-5': 'negative', '2.5': 'not a whole number',
    '-2.5': 'not a whole number', '.5': 'not a whole number', '1e9': 'scientific', '+5e2': 'scientific', '1,000': 'thousands',
    'abc': 'not a number', '': 'empty', '5000000': 'too large', 'Infinity': 'not a number'}

def test_typed_counts_are_read_or_refused_for_the_true_reason(tmp_path):
    "The editor's parser: unambiguous forms are read, every refusal names its real reason."
    from hetfl_explore.widgets.editor import editor_esm
    exe = node_path(); mod = tmp_path / 'editor.mjs'; mod.write_text(editor_esm(), encoding='utf-8')
    js = f"import {{parseCount}} from {json.dumps(mod.as_uri())}; const cases = {json.dumps(list(PARSE_CASES))};" \
         "process.stdout.write(JSON.stringify(cases.map(c => parseCount(c, 'cell', 0, 1000000))));"
    res = subprocess.run([exe, '--input-type=module', '-e', js], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    for (text, want), got in zip(PARSE_CASES.items(), json.loads(res.stdout)):
        if isinstance(want, int): assert got == {'value': want}, (text, got)
        else: assert 'error' in got and want in got['error'], (text, got)

def test_shares_computed_in_bounded_slices_equal_the_whole_computation():
    "7,500 clients: the sliced shares (what the page runs between edits) equal the one-block result; no slice exceeds its work."
    exe = node_path()
    rows = [(2500, np.array([[90, 10], [10, 90]])), (2500, np.array([[90, 90], [10, 10]])), (2500, np.array([[5, 5], [5, 5]]))]
    js = f"""import * as H from {json.dumps(MODULE.as_uri())};
const s = H.summarize({json.dumps(as_js(rows))}), c = s.clients, work = 50000, k = 9, R = 40;
const whole = H.selectionShares(c.T, c.sizes, c.types, k, R, 3), it = H.selectionSharesSteps(c.T, c.sizes, c.types, k, R, 3, H.SELECTORS, work);
let r = it.next(), slices = 1, last = 0, monotone = true;
while (!r.done) {{ monotone = monotone && r.value > last && r.value <= 1; last = r.value; r = it.next(); slices++; }}
process.stdout.write(JSON.stringify({{same: JSON.stringify(r.value) === JSON.stringify(whole), slices, monotone, K: s.numClients}}));"""
    res = subprocess.run([exe, '--input-type=module', '-e', js], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out['same'] and out['monotone'] and out['K'] == 7500 and out['slices'] == 3 * 40 + 1, out   # 7,500 × 9 > work: one round a slice
