"""Bad input never surprises (the kernel-free browser trainer and the editor's derived values): malformed
arguments raise ValueError/TypeError naming the argument."""
import numpy as np
import pytest
import traitlets
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.widgets.browser_trainer as bt
import hetfl_explore.widgets.editor as we

SMALL = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
P = 'hetfl_explore.widgets.browser_trainer.'
COVERED = {P + n for n in ('BrowserOutcomeView', 'browser_evaluate', 'browser_forward', 'browser_outcome',
                           'browser_round', 'draw_clients', 'init_weights', 'pool_features', 'reference_outcome',
                           'sgd_step', 'test_set', 'train_injected', 'trainer_module')}
COVERED |= {'hetfl_explore.widgets.editor.derived_values'}

META, DATA = bt.browser_pool('cmnist')
X, LABELS = bt.pool_features(META, DATA)
D, H, C = X.shape[1], 4, 2
W = bt.init_weights(D, H, C, np.random.default_rng(0).random)
ROWS = [(2, np.array([[10, 5], [5, 10]]))]
CFG = dict(lr=0.1, epochs=1, batch=5)
CLIENTS = bt.draw_clients(META, ROWS, 0.2, np.random.default_rng(0))
TEST, GROUPS = bt.test_set(META, 2, 2)
ORDER = lambda k, e: np.arange(len(CLIENTS[k]))
BAD_META = [None, 'meta', 3, {}, {'classes': [0, 1]}]
BAD_W = [None, 'w', {}, {'W1': W['W1']}, {**W, 'b1': np.zeros(H + 1, np.float32)}, {**W, 'W2': W['W2'].tolist()}]
BAD_X = [None, 'x', X[:, :5], np.full_like(X[:3], np.nan), X[0], np.full(X[:3].shape, 'a')]   # lists, tensors: valid
BAD_LABELS = [None, 'y', LABELS[:3], LABELS + 0.5, LABELS + 5, LABELS - 1]   # whole floats are labels too

def cases(bads:dict) -> st.SearchStrategy:
    "(argument, bad value) pairs over every argument of `bads`."
    return st.sampled_from([(a, b) for a, vs in bads.items() for b in vs])

def rejects(f, good:dict, case, match=None):
    "Calling `f` with one argument of `good` replaced by a bad value raises an error naming that argument."
    arg, bad = case
    with pytest.raises((TypeError, ValueError), match=match or arg): f(**{**good, arg: bad})

@SMALL
@given(case=cases({'meta': BAD_META, 'data': [None, 'x', DATA[:-1], DATA + b'\0', bytearray(DATA)]}))
def test_pool_features_rejects_bad_arguments(case): rejects(bt.pool_features, dict(meta=META, data=DATA), case)

@SMALL
@given(case=cases({'d': [None, 'x', 0, -1, 1.5], 'H': [None, 0, 2.0], 'C': [None, 0, True], 'u': [None, 3, 'random']}))
def test_init_weights_rejects_bad_arguments(case):
    rejects(bt.init_weights, dict(d=D, H=H, C=C, u=np.random.default_rng(0).random), case)

@SMALL
@given(case=cases({'w': BAD_W, 'x': BAD_X}))
def test_browser_forward_rejects_bad_arguments(case): rejects(bt.browser_forward, dict(w=W, x=X[:4]), case)

@SMALL
@given(case=cases({'w': BAD_W, 'x': BAD_X, 'y': [None, 'y', LABELS[:3], LABELS[:4] + 2, LABELS[:4] + 0.5],
                   'lr': [None, 'x', -0.1, float('nan'), float('inf')]}))
def test_sgd_step_rejects_bad_arguments(case):
    w = {k: v.copy() for k, v in W.items()}
    rejects(bt.sgd_step, dict(w=w, x=X[:4], y=LABELS[:4], lr=0.1), case)
    assert all(np.array_equal(w[k], W[k]) for k in W)   # a refused step leaves the model as it was

ROUND = dict(w=W, X=X, labels=LABELS, clients=CLIENTS, selected=[0], order=ORDER, cfg=CFG)

@SMALL
@given(case=cases({'w': BAD_W, 'X': BAD_X, 'labels': BAD_LABELS, 'clients': [None, 'c', [[-1]], [[len(X)]], [[0.5]]],
                   'selected': [None, [], [5], [-1], [0.5], 'x'], 'order': [None, 3, 'order'],
                   'cfg': [None, {}, {**CFG, 'lr': -1}, {**CFG, 'epochs': 0}, {**CFG, 'batch': 1.5}, {'lr': 0.1}]}))
def test_browser_round_rejects_bad_arguments(case): rejects(bt.browser_round, ROUND, case)

EVAL = dict(w=W, X=X, labels=LABELS, test=TEST, groups=GROUPS)

@SMALL
@given(case=cases({'w': BAD_W, 'X': BAD_X, 'labels': BAD_LABELS, 'test': [None, [], [-1], [len(X)], 'x', [0.5]],
                   'groups': [None, GROUPS[:-1], 'g', GROUPS + 0.5]}))
def test_browser_evaluate_rejects_bad_arguments(case): rejects(bt.browser_evaluate, EVAL, case)

@SMALL
@given(case=cases({'meta': BAD_META, 'Y': [None, 0, 3, 1.5, 'x'], 'A': [None, 0, 99, 2.0]}))
def test_test_set_rejects_bad_arguments(case): rejects(bt.test_set, dict(meta=META, Y=2, A=2), case)

JOB = dict(Y=2, A=2, C=2, cfg={**CFG, 'hidden': H}, clients=[c.tolist() for c in CLIENTS],
           init={k: v.ravel().tolist() for k, v in W.items()}, selections=[[0, 1]],
           orders=[[[list(range(len(c)))] for c in CLIENTS]])

@SMALL
@given(case=cases({'X': BAD_X, 'labels': BAD_LABELS, 'meta': BAD_META,
                   'job': [None, 'job', {}, {**JOB, 'C': 0}, {**JOB, 'Y': 5}, {**JOB, 'clients': [[-1]]},
                           {**JOB, 'cfg': {}}]}))
def test_train_injected_rejects_bad_arguments(case):
    rejects(bt.train_injected, dict(X=X, labels=LABELS, meta=META, job=JOB), case,
            match="job|Y|cfg" if case[0] == 'job' else None)   # a bad entry of `job` is named by its key

def test_train_injected_runs_the_valid_job():
    "The job the refusals start from is valid: it trains one round and reports its metrics."
    out = bt.train_injected(X, LABELS, META, JOB)
    assert len(out['rows']) == 1 and 0 <= out['rows'][0]['worst'] <= out['rows'][0]['accuracy'] <= 1

BAD_ROWS = [None, 'rows', 3, [], [(0, np.ones((2, 2), int))], [(1, -np.ones((2, 2), int))],
            [(1, np.zeros((2, 2), int))]]

@SMALL
@given(case=cases({'meta': BAD_META, 'rows': BAD_ROWS, 'scale': [None, 'x', 0, -0.2, float('nan')],
                   'rng': [None, 0, np.random.RandomState(0)]}))
def test_draw_clients_rejects_bad_arguments(case):
    rejects(bt.draw_clients, dict(meta=META, rows=ROWS, scale=0.2, rng=np.random.default_rng(0)), case)

@SMALL
@given(case=cases({'rows': BAD_ROWS, 'k': [None, 0, 1.5, 'x'], 'dataset': [None, 'mnist', 3],
                   'selectors': [None, 'uniform', ('nope',), 3], 'seeds': [None, 3, [-1], ['x'], [0, 1.5]],
                   'rounds': [None, 0, -1, 1.5]}))
def test_reference_outcome_rejects_bad_arguments(case):
    "Every argument is checked before any training (a bad seed late in `seeds` included)."
    rejects(bt.reference_outcome, dict(rows=ROWS), case)

@SMALL
@given(case=cases({'source': [None, 3, 'nope', ROWS], 'selectors': [None, 'uniform', ('nope',), 3]}))
def test_browser_outcome_rejects_bad_arguments(case):
    rejects(bt.browser_outcome, dict(source='cmnist_gsc'), case)

@SMALL
@given(case=cases({'k': ['x', None, 1.5], 'rows': [None, 3], 'saved': ['x', [1]], 'pool': [3, None],
                   'selectors': [None, 3]}))
def test_browser_outcome_view_rejects_malformed_traits(case):
    "The view's state is traitlets-typed: a malformed value is refused with a TraitError naming the trait."
    arg, bad = case
    view = bt.BrowserOutcomeView()
    with pytest.raises(traitlets.TraitError, match=f"'{arg}' trait"): setattr(view, arg, bad)

def test_trainer_module_is_the_selectors_then_the_trainer():
    "`trainer_module` has no argument to refuse: its contract is the module text, hetero.js then trainer.js, in full."
    src, (first, second) = bt.trainer_module(), [bt._static(n) for n in bt.TRAINER_FILES]
    assert src == first + '\n' + second and 'export function trainInjected' in second and src.index(first) == 0

@SMALL
@given(bad=st.sampled_from([None, 3, 1.5, b'cmnist_gsc', ['cmnist_gsc']]))
def test_derived_values_rejects_a_non_string_name(bad):
    with pytest.raises(TypeError, match='name'): we.derived_values(bad)

@SMALL
@given(name=st.sampled_from(['nope', '', 'dirichlet_0.1', 'CMNIST_GSC']))
def test_derived_values_of_a_name_without_a_federation_is_empty(name):
    "Presets that are no federation (and unknown names) have no derived values: an empty dict, not an error."
    assert we.derived_values(name) == {}
