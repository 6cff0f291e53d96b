"""The browser trainer (hetfl_explore/widgets/static/trainer.js) under Node.js against its Python reference
(hetfl_explore/widgets/browser_trainer.py).

1. Equality: 60 random federations (2 classes, 2-3 colours, 1-5 rows, counts 0-60 before scaling, κ up to K), each
   trained 3 rounds by both sides with the same clients, initial weights, selections and sample orders (injected by
   Python): final weights within 1e-6 (absolute; float32 spacing at 1 is 1.2e-7) and every round's accuracy and
   worst-group accuracy equal within one test image of a group (1/40).
2. The lesson, each side with its own random stream (JavaScript: mulberry32 and the page's selectors; Python: numpy and
   the package's selectors): on cmnist_gsc and spawrious_gsc (the same matrices, both filled from the colored-MNIST
   pool), the final-round worst-group accuracy of FedDiverse minus uniform, mean over 10 seeds (paired within a side),
   has the same sign on both sides and the two means differ by at most 2 standard errors of their difference.
Skips when node is missing, fails instead under HETFL_REQUIRE_BROWSER=1 (CI)."""
import json, subprocess, tempfile
from pathlib import Path
import numpy as np
import pytest
from test_editor_js import node_path
from hetfl_explore.widgets import browser_trainer as bt
from hetfl_explore.widgets.editor import preset_types, rows_json

N_FEDERATIONS, ROUNDS, WEIGHT_ATOL, LESSON_SEEDS, LAST = 60, 3, 1e-6, 20, 5

RUNNER = '''import * as T from %s;
import {readFileSync} from 'node:fs';
const job = JSON.parse(readFileSync(0, 'utf8')), pool = T.withLabels(T.preparePool(job.meta, Uint8Array.from(Buffer.from(job.pool, 'base64'))));
const out = {preset: T.PRESET, injected: job.injected.map(j => T.trainInjected(pool, j)), lesson: {}};
for (const [name, rows] of Object.entries(job.lesson)) {
  const res = {};
  T.runJob(pool, {rows, k: 9, selectors: ['uniform', 'feddiverse'], cfg: {seeds: job.seeds}},
           p => { ((res[p.selector] = res[p.selector] || [])[p.seed] = res[p.selector][p.seed] || [])[p.round] = p.worst; });
  out.lesson[name] = res;
}
const info = {meta: job.meta, Y: 2, A: 3};
out.problems = job.problems.map(([rows, k]) => T.federationProblem(rows, k, info));
out.scaled = job.scaled.map(N => T.scaleMatrix(N, T.PRESET.scale));
process.stdout.write(JSON.stringify(out));
'''

def random_job(rng, meta):
    "A random federation with everything random drawn here: clients, initial weights, selections, sample orders."
    A = int(rng.integers(2, 4))
    rows = []
    for _ in range(int(rng.integers(1, 6))):
        N = rng.integers(0, 61, (2, A)) * (rng.random((2, A)) > 0.3)
        if N.sum() == 0: N[rng.integers(2), rng.integers(A)] = int(rng.integers(1, 61))
        rows.append((int(rng.integers(1, 4)), N.astype(np.int64)))
    clients = bt.draw_clients(meta, rows, bt.BROWSER_PRESET['scale'], rng)
    K, hidden = len(clients), int(rng.choice([4, 16]))
    cfg = dict(hidden=hidden, lr=float(rng.choice([0.1, 0.5])), epochs=int(rng.integers(1, 3)), batch=int(rng.integers(3, 11)))
    init = bt.init_weights(3 * meta['side'] ** 2, hidden, 2, rng.random)
    sels = [[int(i) for i in rng.permutation(K)[:int(rng.integers(1, K + 1))]] for _ in range(ROUNDS)]
    orders = [[[rng.permutation(len(clients[k])).tolist() for _ in range(cfg['epochs'])] for k in sel] for sel in sels]
    return dict(Y=2, A=A, C=2, cfg=cfg, clients=[c.tolist() for c in clients], init={k: v.ravel().tolist() for k, v in init.items()},
                selections=sels, orders=orders)

GSC = preset_types('cmnist_gsc')
PROBLEMS = [   # (rows, κ, the words the page's message must hold; None: trainable)
    (GSC, 9, None),
    ([(2, np.array([[90, 10], [10, 90]])), (1, np.array([[0, 0], [0, 0]]))], 1, 'a client with no samples'),
    ([(3, np.array([[90, 10], [0, 0]]))], 1, 'class digit >= 5 has no samples in any client'),
    ([(15, np.array([[1000, 10], [10, 90]]))], 9, 'the pool shipped with this page holds 400 per group'),
    ([(2, np.array([[90, 10], [10, 90]]))], 3, 'κ = 3 clients per round, but the federation has 2 clients'),
    ([(1, np.zeros((3, 2), np.int64) + 5)], 1, '3 classes × 2 attributes'),
    ([(1, np.zeros((2, 4), np.int64) + 5)], 1, '2 classes × 4 attributes'),
    ([(10000, np.array([[2, 0], [0, 2]]))], 10000, '10,000 training images after scaling'),
]
SCALED = [np.random.default_rng(i).integers(0, 200, (2, 3)) for i in range(200)] + [np.array([[2, 3, 7], [12, 13, 1]])]

def test_bad_federations_are_refused_with_their_reason(run):
    for (rows, k, words), got in zip(PROBLEMS, run[2]['problems']):
        assert (got is None) if words is None else (got is not None and words in got), (words, got)

def test_the_page_scales_counts_as_the_package(run):
    from hetfl_explore.foundation.data import scale_federation
    for N, js in zip(SCALED, run[2]['scaled']):
        assert js == scale_federation(N[None], bt.BROWSER_PRESET['scale'])[0].tolist(), (N, js)

@pytest.fixture(scope='module')
def run():
    "Both checks' JavaScript in one node call; returns (injected jobs, lesson rows, node output)."
    exe, rng = node_path(), np.random.default_rng(20261206)
    meta, data = bt.browser_pool('cmnist')
    jobs = [random_job(rng, meta) for _ in range(N_FEDERATIONS)]
    lesson = {n: rows_json(preset_types(n)) for n in ('cmnist_gsc', 'spawrious_gsc')}
    with tempfile.TemporaryDirectory() as tmp:
        mod = Path(tmp)/'trainer.mjs'; mod.write_text(bt.trainer_module())
        job = dict(problems=[([{'m': m, 'N': np.asarray(N).tolist()} for m, N in r], k) for r, k, _ in PROBLEMS], scaled=[N.tolist() for N in SCALED], meta=meta, pool=__import__('base64').b64encode(data).decode(), injected=jobs, lesson=lesson, seeds=LESSON_SEEDS)
        res = subprocess.run([exe, '--input-type=module', '-e', RUNNER % json.dumps(mod.as_uri())], input=json.dumps(job),
                             capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return jobs, lesson, json.loads(res.stdout)

def test_the_preset_is_the_same_on_both_sides(run):
    assert run[2]['preset'] == bt.BROWSER_PRESET

def test_injected_runs_give_equal_weights_and_accuracies(run):
    jobs, _, out = run
    X, labels = bt.pool_features(*bt.browser_pool('cmnist'))
    meta = bt.browser_pool('cmnist')[0]
    worst_w, worst_acc = 0.0, 0.0
    for job, js in zip(jobs, out['injected']):
        py = bt.train_injected(X, labels, meta, job)
        for k, v in py['weights'].items(): worst_w = max(worst_w, np.abs(np.asarray(js['weights'][k], np.float32) - v).max())
        for a, b in zip(py['rows'], js['rows']):
            worst_acc = max(worst_acc, abs(a['accuracy'] - b['accuracy']), abs(a['worst'] - b['worst']))
    assert worst_w <= WEIGHT_ATOL, worst_w
    assert worst_acc <= 1 / meta['test'] + 1e-12, worst_acc

def test_injected_federations_cover_the_edge_cases(run):
    jobs = run[0]
    assert len(jobs) >= 50 and any(len(j['clients']) == 1 for j in jobs) and any(j['A'] == 3 for j in jobs)
    assert any(len(s) == len(j['clients']) for j in jobs for s in j['selections'])         # κ = K: every client
    assert any(len(c) < j['cfg']['batch'] for j in jobs for c in j['clients'])             # a client smaller than a batch

@pytest.mark.parametrize('name', ['cmnist_gsc', 'spawrious_gsc'])
def test_the_lesson_agrees_with_each_sides_own_random_stream(run, name):
    _, lesson, out = run
    py = bt.reference_outcome(preset_types(name), 9, 'cmnist', seeds=range(LESSON_SEEDS))
    d_py = (py['feddiverse'][:, -LAST:, 1] - py['uniform'][:, -LAST:, 1]).mean(1)
    js = {s: np.array(v)[:, -LAST:].mean(1) for s, v in out['lesson'][name].items()}
    d_js = js['feddiverse'] - js['uniform']
    se = np.sqrt(d_py.var(ddof=1) / len(d_py) + d_js.var(ddof=1) / len(d_js))
    assert np.sign(d_py.mean()) == np.sign(d_js.mean()) != 0, (d_py, d_js)
    assert abs(d_py.mean() - d_js.mean()) <= 2 * se, (d_py.mean(), d_js.mean(), se)
