"""Fuzz the package's public entry points with malformed inputs and report, per entry-point group, how each is answered.

Every entry point has a valid control call (`CONTROLS`: argument values and a kind per argument). The fuzzer mutates
one argument at a time into the malformed values of its kind (NaN, ±inf, negative and zero sizes, empty inputs, wrong
dtypes and shapes, 1e300, 2**64, 10**400, strings and bools for numbers, mismatched lengths, duplicate and negative
ids, self-containing and self-raising objects) and into equivalent valid forms (numpy scalars, 0-d arrays,
`fractions.Fraction`, torch tensors for arrays). Every call runs in its own forked process with a time limit.

A malformed call is *clear* when the package raises `ValueError`/`TypeError` from its own code with a message that
names the argument, *unclear* for any other exception (or one raised inside numpy/torch), *silent* when it is
accepted, *hang* past the limit. Valid controls and equivalent forms that raise count as *rejected*. Hostile answers
go to `graders.core.grade(id, answer)` for every exercise id; anything but a `Feedback` within the limit is a problem.

Run: `python tools/fuzz.py [--json fuzz.json] [--only crowd.robust engine] [--timeout 20]`.
"""
from __future__ import annotations
import argparse, fractions, glob, importlib, inspect, json, os, pickle, pkgutil, re, sys, time, traceback
from collections import Counter, defaultdict
import numpy as np
import torch

TIMEOUT_S = 20.0        # wall-clock limit of one call
BIG_ANSWER = 10**7      # elements of the huge hostile answer
DEEP = 100_000          # nesting depth of the deeply nested hostile answer
PACKAGE_DIR = os.sep + 'hetfl_explore' + os.sep

class SelfRaising:
    "An object every operation of which raises (a hostile argument)."
    def _boom(self, *a, **k): raise RuntimeError('hostile object')
    __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = __getitem__ = __bool__ = _boom
    __add__ = __radd__ = __mul__ = __rmul__ = __lt__ = __gt__ = __le__ = __ge__ = __eq__ = __hash__ = _boom
    def __repr__(self): return 'SelfRaising()'

class RaisingStr(str):
    "A `str` whose methods raise (a hostile answer or choice: `strip`, comparison, hashing, iteration)."
    def _boom(self, *a, **k): raise RuntimeError('hostile str')
    strip = lower = upper = split = splitlines = encode = startswith = __iter__ = __len__ = __contains__ = _boom
    __eq__ = __ne__ = __hash__ = __lt__ = __format__ = _boom

class RaisingInt(int):
    "An `int` whose conversions, comparisons and arithmetic raise."
    def _boom(self, *a, **k): raise RuntimeError('hostile int')
    __int__ = __index__ = __float__ = __eq__ = __ne__ = __lt__ = __gt__ = __le__ = __ge__ = __hash__ = _boom
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __abs__ = __neg__ = __bool__ = _boom

class RaisingFloat(float):
    "A `float` whose conversions, comparisons and arithmetic raise."
    def _boom(self, *a, **k): raise RuntimeError('hostile float')
    __float__ = __int__ = __eq__ = __ne__ = __lt__ = __gt__ = __le__ = __ge__ = __hash__ = _boom
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __abs__ = __neg__ = __bool__ = _boom

def recursive_list():
    "A list that contains itself."
    xs = [1.0]; xs.append(xs); return xs

def nested(depth:int):
    "A list nested `depth` deep around one number."
    x = 1.0
    for _ in range(depth): x = [x]
    return x

# %% mutants: kind -> (malformed values, equivalent valid forms); both are functions of the valid value
def _real_bad(v): return {'nan': float('nan'), 'inf': float('inf'), '-inf': float('-inf'), '10**400': 10**400, 'str': '1.0', 'bool': True, 'None': None, 'list': [v],
                          'hostile': SelfRaising(), 'float subclass': RaisingFloat(float(v))}
def _real_ok(v): return {'np.float64': np.float64(v), 'np.float32': np.float32(v), '0-d array': np.array(float(v)),
                         'Fraction': fractions.Fraction(v).limit_denominator(10**6)}
def _int_bad(v): return {'1.5': v + 0.5, '1e300': 1e300, 'nan': float('nan'), 'inf': float('inf'), '2**64': 2**64, '10**400': 10**400,
                         '-2**64': -2**64, 'str': str(v), 'bool': True, 'None': None, 'hostile': SelfRaising(),
                         'int subclass': RaisingInt(int(v))}
def _int_ok(v): return {'np.int64': np.int64(v), 'np.int32': np.int32(v), '0-d array': np.array(v)}

def _array_bad(v):
    a = np.asarray(v, dtype=float)
    out = {'empty': np.zeros((0,) + a.shape[1:]), 'None': None, 'str': 'abc', 'strings': np.full(a.shape, 'a'),
           'recursive': recursive_list(), 'hostile': SelfRaising(), 'bool': True}
    if a.size:
        for name, x in (('nan', np.nan), ('inf', np.inf)):
            b = a.copy(); b.flat[0] = x; out[name + ' entry'] = b
        if a.ndim > 1: out['flattened'] = a.ravel()   # a 1-D array may be a legitimate batch of one: no extra-dim mutant
        out['ragged'] = [list(np.atleast_1d(r)) for r in a] + [[1.0] * (a.shape[-1] + 1) if a.ndim > 1 else [1.0, 2.0]]
    return out
def _array_ok(v):
    a = np.asarray(v)
    return {'torch tensor': torch.as_tensor(a), 'list': a.tolist()}

def _as_tensors(muts:dict) -> dict:
    "Array mutants as torch tensors (an entry point that takes tensors only refuses arrays before it reads their entries)."
    return {k: torch.as_tensor(x) if isinstance(x, np.ndarray) and x.dtype.kind in 'biuf' else x for k, x in muts.items()}

def _label_bad(v): return {'label -1': np.r_[-1, np.asarray(v)[1:]], 'label past the end': np.r_[np.asarray(v)[:-1], 10**3],
                           'fractional label': np.asarray(v, float) + 0.5, 'one short': np.asarray(v)[:-1]}

def _hostile_inputs() -> dict:
    "The hostile answers of `hostile_answers` small enough to send to every answer-taking entry point."
    return {k: v for k, v in hostile_answers().items() if k not in ('huge list', 'huge array', 'deep')}

KINDS = {   # kind -> (malformed(v), equivalent(v), extra malformed(v))
    'real': (_real_bad, _real_ok, lambda v: {}),
    'pos': (_real_bad, _real_ok, lambda v: {'0': 0.0, '-1': -1.0}),
    'unit': (_real_bad, _real_ok, lambda v: {'0': 0.0, '-1': -1.0, '1.5': 1.5}),
    'nonneg': (_real_bad, _real_ok, lambda v: {'-1': -1.0}),
    'prob': (_real_bad, _real_ok, lambda v: {'-0.1': -0.1, '1.5': 1.5}),
    'int': (_int_bad, _int_ok, lambda v: {}),
    'count': (_int_bad, _int_ok, lambda v: {'-1': -1}),
    'size': (_int_bad, _int_ok, lambda v: {'-1': -1, '0': 0}),
    'array': (_array_bad, _array_ok, lambda v: {}),
    'nonneg_array': (_array_bad, _array_ok, lambda v: {'negative entry': -np.abs(np.asarray(v, float)) - 1}),
    'linked_array': (_array_bad, _array_ok, lambda v: {'one short': np.asarray(v, float)[:-1]}),
    'nonneg_linked': (_array_bad, _array_ok, lambda v: {'one short': np.asarray(v, float)[:-1],
                                                        'negative entry': -np.abs(np.asarray(v, float)) - 1}),
    'budget_linked': (lambda v: {k: x for k, x in _array_bad(v).items() if k != 'inf entry'}, _array_ok,   # inf: no limit
                      lambda v: {'one short': np.asarray(v, float)[:-1], 'negative entry': -np.abs(np.asarray(v, float)) - 1}),
    'counts': (_array_bad, _array_ok, lambda v: {'negative entry': -np.abs(np.asarray(v, float)) - 1,
                                                 'fractional': np.asarray(v, float) + 0.5}),
    'ids': (_array_bad, _array_ok, lambda v: {'negative id': np.r_[-1, np.asarray(v)[1:]],
                                              'fractional id': np.asarray(v, float) + 0.5,
                                              'id past the end': np.r_[np.asarray(v)[:-1], 10**6]}),
    'unique_ids': (_array_bad, _array_ok, lambda v: {'negative id': np.r_[-1, np.asarray(v)[1:]],
                                                     'fractional id': np.asarray(v, float) + 0.5,
                                                     'duplicate id': np.r_[np.asarray(v)[:1], np.asarray(v)[:-1]]}),
    'cluster_labels': (_array_bad, _array_ok, lambda v: {'fractional label': np.asarray(v, float) + 0.5}),   # any integers name clusters
    'ranked': (lambda v: {k: x for k, x in _array_bad(v).items() if k not in ('nan entry', 'inf entry')}, _array_ok,   # NaN ranks last
               lambda v: {'one short': np.asarray(v, float)[:-1]}),
    'labels': (_array_bad, _array_ok, lambda v: {'label -1': np.r_[-1, np.asarray(v)[1:]],
                                                 'label past the end': np.r_[np.asarray(v)[:-1], 10**3],
                                                 'fractional label': np.asarray(v, float) + 0.5}),
    'tensor': (lambda v: _as_tensors(_array_bad(v)), lambda v: {}, lambda v: {'array': np.asarray(v), 'list': np.asarray(v).tolist()}),
    'tensor_labels': (lambda v: _as_tensors(_array_bad(v)), lambda v: {'int32': torch.as_tensor(v).int()},
                      lambda v: {**_as_tensors(_label_bad(v)), 'array': np.asarray(v)}),
    'device': (lambda v: {'unknown': 'nope', 'absent GPU': 'cuda:99', 'int': 3, 'hostile': SelfRaising(), 'str subclass': RaisingStr(v)},
               lambda v: {'torch.device': torch.device(v)}, lambda v: {}),
    'choice': (lambda v: {'unknown': 'no-such-choice', 'int': 3, 'None': None, 'hostile': SelfRaising(), 'str subclass': RaisingStr(v)},
               lambda v: {}, lambda v: {}),
    'callable': (lambda v: {'int': 3, 'str': 'f'}, lambda v: {}, lambda v: {}),
    'obj': (lambda v: {'int': 3, 'hostile': SelfRaising()}, lambda v: {}, lambda v: {}),
    'fixed': (lambda v: {}, lambda v: {}, lambda v: {}),
    'answer': (lambda v: {}, lambda v: _hostile_inputs(), lambda v: {}),   # anything a student may hand in: feedback, never a raise
    'auto_int': (lambda v: {'1.5': v + 0.5, 'nan': float('nan'), 'str': str(v), '10**400': 10**400, 'hostile': SelfRaising(),
                            'int subclass': RaisingInt(int(v))}, lambda v: {'np.int64': np.int64(v)}, lambda v: {}),
    'auto_real': (lambda v: {'nan': float('nan'), 'str': str(float(v)), '10**400': 10**400, 'hostile': SelfRaising(),
                             'float subclass': RaisingFloat(float(v))}, lambda v: {'np.float64': np.float64(v)}, lambda v: {}),
}

# %% the valid control calls: group -> [(entry point, {argument: (valid value, kind)})]; a bare value is not mutated
def _controls() -> dict:
    "Build the valid arguments of every fuzzed entry point (some build a small federation once)."
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector, make_view
    rng = lambda: np.random.default_rng(0)
    fed = tiny_digits_federation(num_clients=4, min_size=10, n_test=40)
    N = np.array([[3., 1.], [2., 4.]]); Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]]])
    trip = np.array([[.1, .2, .3], [.4, .1, .0], [.2, .2, .2], [.0, .3, .1]])
    C = np.array([[[5., 1.], [2., 6.]], [[4., 2.], [1., 3.]]])
    view = make_view(4, 0, None, np.array([10, 20, 30, 40]))
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0]); a = np.array([0, 0, 1, 1, 0, 1, 1, 0])
    g, u = torch.zeros(3), torch.ones(2, 3)
    base = {
     'engine.config': [('RunConfig', dict(rounds=(2, 'size'), clients_per_round=(2, 'size'), batch_size=(8, 'size'), lr=(0.1, 'pos'),
                                          momentum=(0.0, 'nonneg'), seed=(0, 'count'), device='cpu'))],
     'engine.simulation': [('run_fl', dict(model_fn=(lambda: mlp(64, 8, 10), 'callable'), data=(fed, 'obj'), selector=UniformSelector(),
                                           config=(RunConfig(rounds=1, clients_per_round=2, batch_size=8, device='cpu'), 'obj'),
                                           progress=False))],
     'engine.protocol': [('ClientView', dict(round=(0, 'count'), available=(np.array([0, 1]), 'unique_ids'), n_samples=(np.array([2, 3, 4]), 'counts'))),
                         ('make_view', dict(num_clients=(4, 'size'), t=(0, 'count'), available=(np.array([0, 2]), 'unique_ids'),
                                            n_samples=(np.array([1, 2, 3, 4]), 'counts'))),
                         ('selection_trace', dict(selector=UniformSelector(), num_clients=(4, 'size'), k=(2, 'size'), rounds=(2, 'size'),
                                                  seed=(0, 'count'), availability=(0.9, 'prob'), n_samples=(np.array([5, 6, 7, 8]), 'counts'))),
                         ('validate_selection', dict(sel=(np.array([0, 1]), 'unique_ids'), clients=(view, 'obj')))],
     'engine.aggregation': [('aggregate', dict(global_params=(g, 'array'), updates=(u, 'array'), weights=(np.array([1., 2.]), 'nonneg_linked'),
                                               cfg=(RunConfig(device='cpu'), 'obj'), state={}))],
     'engine.models': [('mlp', dict(in_features=(4, 'size'), hidden=(3, 'size'), n_classes=(2, 'size'))),
                       ('cnn', dict(in_channels=(1, 'size'), n_classes=(2, 'size'), width=(2, 'size'), img_size=(8, 'size'), hidden=(4, 'size')))],
     'engine.backends': [('batch_plan', dict(sizes=(np.array([5, 7]), 'counts'), batch_size=(2, 'size'), rng=rng(), epochs=(1, 'size')))],
     'engine.system': [('SystemProfiles', dict(speed=(np.ones(3), 'nonneg_array'), bandwidth=(np.ones(3), 'budget_linked'),
                                               availability=(np.full(3, .5), 'linked_array'), energy_budget=(np.ones(3), 'budget_linked'),
                                               dropout=(np.zeros(3), 'linked_array')))],
     'foundation.core': [('spawn_seeds', dict(seed=(3, 'count'), n=(2, 'count'))),
                         ('rng_streams', dict(seed=(3, 'count'), n=(2, 'count')))],
     'foundation.data': [('partition_iid', dict(y=(y, 'array'), num_clients=(2, 'size'), seed=(0, 'count'))),
                         ('partition_dirichlet', dict(y=(y, 'array'), num_clients=(2, 'size'), alpha=(0.5, 'pos'), seed=(0, 'count'))),
                         ('dirichlet_size_split', dict(y=(y, 'array'), num_clients=(2, 'size'), alpha=(0.85, 'pos'), seed=(0, 'count'))),
                         ('tiny_digits_federation', dict(seed=(0, 'count'), num_clients=(3, 'size'), alpha=(0.85, 'pos'), min_size=(10, 'size'), n_test=(40, 'size')))],
     'foundation.hetero': [('interaction_matrix', dict(y=(y, 'labels'), a=(a, 'labels'), n_classes=(2, 'size'), n_attrs=(2, 'size'))),
                           ('entropy', dict(p=(np.array([.5, .5]), 'nonneg_array'))),
                           ('mutual_information', dict(N=(N, 'counts'))), ('dht', dict(N=(N, 'counts'))),
                           ('hellinger', dict(p=(np.array([.5, .5]), 'nonneg_array'), q=(np.array([.2, .8]), 'nonneg_linked'))),
                           ('js_divergence', dict(p=(np.array([.5, .5]), 'nonneg_array'), q=(np.array([.2, .8]), 'nonneg_linked'))),
                           ('label_skew', dict(Ns=(Ns, 'counts'), measure=('hellinger', 'choice'))), ('fl_metrics', dict(Ns=(Ns, 'counts'))),
                           ('client_types', dict(triplets=(trip[:, :3], 'array'), atol=(1e-9, 'nonneg')))],
     'foundation.datasets': [('gaussian_spurious', dict(counts=(N, 'counts'), seed=(0, 'count'), core_sep=(1.5, 'real'), core_dim=(2, 'size')))],
     'feddiverse.selector': [('normalise_triplets', dict(triplets=(trip, 'array'), norm=('l1', 'choice'))),
                             ('fedrk_weights', dict(matrices=(Ns, 'nonneg_array'), floor=(0.0, 'nonneg'))),
                             ('mixture_variance', dict(matrices=(Ns, 'nonneg_array'), weights=(np.array([.2, .3, .5]), 'nonneg_linked'))),
                             ('perturb_triplets', dict(triplets=(trip, 'array'), sigma=(0.1, 'nonneg'), seed=(0, 'count'))),
                             ('triplet_error', dict(estimated=(trip, 'array'), true=(trip + .1, 'linked_array'))),
                             ('diversity_round', dict(triplets=(trip, 'array'), k=(2, 'size'), rng=rng(), t=(0, 'count'), available=(np.array([0, 1, 2]), 'unique_ids'))),
                             ('FedDiverseSelector', dict(triplets=(trip, 'array'), variant=('sign-invariant', 'choice'),
                                                         tol=(1e-9, 'nonneg'))),
                             ('diversity_rounds', dict(triplets=(trip, 'array'), k=(2, 'size'), rounds=(2, 'size'),
                                                       rng=rng(), t0=(0, 'count')))],
     'feddiverse.simulation': [('selection_stats', dict(matrices=(Ns, 'counts'), chosen=(np.array([[1, 0, 1], [0, 1, 1]]), 'array'))),
                               ('proxy_losses', dict(matrices=(Ns, 'counts')))],
     'feddiverse.registry': [('make_selector', dict(name=('feddiverse', 'choice'), matrices=(Ns, 'counts'), noise=(0.0, 'nonneg'), seed=(0, 'count')))],
     'fairness.metrics': [('group_confusion', dict(y=(y, 'labels'), a=(a, 'labels'), y_hat=(y[::-1].copy(), 'labels'), n_classes=(2, 'size'), n_groups=(2, 'size'))),
                          ('demographic_parity_diff', dict(C=(C, 'nonneg_array'), pos_label=(1, 'count'), how=('maxmin', 'choice'))),
                          ('worst_group_accuracy', dict(C=(C, 'nonneg_array')))],   # C may hold expected (fractional) counts
     'selection.compare': [('jain_index', dict(counts=(np.array([1., 2., 3.]), 'nonneg_array')))],
     'selection.baselines': [('softmax', dict(v=(np.array([1., 2.]), 'array'), beta=(1.0, 'real'))),
                             ('allocate', dict(capacity=(np.array([3, 3]), 'counts'), weight=(np.array([1., 2.]), 'nonneg_linked'), m=(3, 'count'))),
                             ('top_by', dict(ids=(np.array([0, 1, 2]), 'unique_ids'), values=(np.array([3., 1., 2.]), 'ranked'), m=(2, 'count'), rng=rng())),
                             ('choice_without_replacement', dict(a=(np.array([0, 1, 2]), 'unique_ids'), p=(np.array([.2, .3, .5]), 'nonneg_linked'), size=(2, 'count'), rng=rng()))],
     'crowd.promethee': [('budget_greedy', dict(order=(np.array([0, 1]), 'unique_ids'), cost=(np.array([1., 1.]), 'nonneg_linked'), budget=(2.0, 'nonneg'))),
                         ('preference', dict(d=(np.array([.1, .3]), 'array'), q=(0.05, 'nonneg'), p=(0.5, 'pos')))],
     'crowd.robust': [('krum_scores', dict(points=(torch.eye(5), 'array'), f=(1, 'count'))),
                      ('robust_aggregate', dict(mus=(torch.zeros(3, 2), 'array'), vars=(torch.ones(3, 2), 'nonneg_linked'), rule=('fedavg', 'choice'), f=(1, 'count')))],
     'crowd.bayesian': [('gaussian_kl', dict(mu_q=(torch.zeros(3), 'array'), var_q=(torch.ones(3), 'nonneg_linked'), mu_p=(torch.zeros(3), 'linked_array'), var_p=(torch.ones(3), 'nonneg_linked'))),   # 3: a prior one short of 2 would be a broadcast scalar
                        ('aggregate_posteriors', dict(mus=(torch.zeros(2, 3), 'array'), vars=(torch.ones(2, 3), 'nonneg_linked'), mode=('poe', 'choice'))),
                        ('linear_posterior', dict(X=(torch.eye(3), 'array'), y=(torch.ones(3), 'linked_array'), noise_var=(0.5, 'pos'))),
                        ('expected_calibration_error', dict(probs=(torch.tensor([[.7, .3], [.4, .6]]), 'nonneg_array'), y=(torch.tensor([0, 1]), 'labels'), bins=(5, 'size')))],
     'crowd.shapley': [('shapley_exact', dict(utility=(lambda s: float(len(s)), 'callable'), n_players=(3, 'size')))],
     'clustering.eccentricity': [('eccentricity', dict(p=(np.array([1., 2.]), 'array'), mu=(np.array([0., 0.]), 'linked_array'), var=(1.0, 'pos'), n=(5, 'size'))),
                                 ('chebyshev_threshold', dict(n=(5, 'size'), m=(3.0, 'pos'))),
                                 ('accepts', dict(xi=(0.5, 'nonneg'), n=(5, 'size'), m=(3.0, 'pos'))),
                                 ('cluster_stats', dict(P=(np.eye(3), 'array'), labels=(np.array([0, 0, 1]), 'cluster_labels')))],
     'clustering.profiles': [('total_variation', dict(p=(np.array([.5, .5]), 'nonneg_array'), q=(np.array([.2, .8]), 'nonneg_linked'))),
                             ('laplace_smooth', dict(counts=(np.array([1., 0., 3.]), 'counts'))),
                             ('ordinal_w1', dict(p=(np.array([.5, .5]), 'nonneg_array'), q=(np.array([.2, .8]), 'nonneg_linked')))],
     'clustering.data': [('from_client_arrays', dict(name='toy', Xs=([np.ones((6, 2)), np.zeros((6, 2))], 'obj'), ys=([y[:6], y[2:]], 'obj'),
                                                     n_classes=(2, 'size'), rounds=(2, 'size'), test_frac=(0.2, 'prob'), seed=(0, 'count')))],
     'clustering.contribution': [('kendall_tau_b', dict(x=(np.array([1., 2., 3.]), 'array'), y=(np.array([1., 3., 2.]), 'linked_array'))),
                                 ('minmax_scores', dict(x=(np.array([1., 2., 3.]), 'array')))],
     'scale.sweeps': [('sweep_grid', dict(datasets=(['digits'], 'obj'), selectors=(['uniform'], 'obj'), seeds=([0, 1], 'obj'), rounds=([2], 'obj')))],
     'modelhet.mia': [('roc_auc', dict(scores=(np.array([.1, .9, .4, .6]), 'array'), labels=(np.array([0, 1, 0, 1]), 'labels'))),
                      ('advantage', dict(preds=(np.array([0, 1, 1, 1]), 'labels'), labels=(np.array([0, 1, 0, 1]), 'labels')))],
    }
    parts = [m.controls() for m in control_modules()]
    for more in (_more_controls(Ns), _core_controls(), _entry_controls(fed), _array_controls(Ns), _object_controls(), _study_controls(Ns), _device_controls(Ns), *parts):
        for g, entries in more.items(): base.setdefault(g, []).extend(entries)
    return base

CONTROL_FILES = 'fuzz_controls_*.py'   # one file of controls per part of the package, beside this one

def control_modules() -> list:
    "The modules `tools/fuzz_controls_*.py`: each has `controls()` and may add `KINDS`, `VALID_MUTANTS`, `NONFINITE_OK`, `SIDE_EFFECTS`."
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path: sys.path.insert(0, here)
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(here, CONTROL_FILES)))
    return [importlib.import_module(n) for n in names]

def _more_controls(Ns) -> dict:
    "Controls of the entry points whose hostile inputs once slipped through (a NaN batch, a fractional id, an infinite tolerance)."
    from hetfl_explore.crowd.bayesian import bayes_mlp
    from hetfl_explore.crowd.abac import parse_policy, EXAMPLE_POLICY
    from hetfl_explore.crowd.devices import DevicePool
    D = np.array([[0., 1., 2.], [1., 0., 1.5], [2., 1.5, 0.]])
    return {
     'foundation.data': [('digits_federation', dict(num_clients=(5, 'size'), alpha=(0.5, 'pos'), test_size=(297, 'size'), seed=(0, 'count')))],
     'feddiverse.simulation': [('simulate_selection', dict(fed=Ns, selector=('uniform', 'choice'), rounds=(3, 'size'), k=(2, 'size'), seed=(0, 'count'),
                                                           noise=(0.0, 'nonneg'), loss_noise=(0.05, 'nonneg')))],
     'crowd.shapley': [('free_rider_run', dict(n_benign=(2, 'size'), kinds=['zero'], rounds=(1, 'size'), dim=(3, 'size'), samples=(10, 'size'),
                                               local_steps=(2, 'size'), lr=(0.05, 'pos'), kappa=(0.1, 'nonneg'), seed=(0, 'count')))],
     'crowd.bayesian': [('bayes_mlp', dict(in_features=(4, 'size'), n_classes=(3, 'size'), hidden=(5, 'size'), prior_var=(1.0, 'pos'))),
                        ('neg_elbo', dict(model=bayes_mlp(4, 3, 5), x=(torch.zeros(2, 4), 'array'), y=(torch.tensor([0, 2]), 'labels'),
                                          n_data=(10, 'size'), noise_var=(1.0, 'pos')))],
     'crowd.pki': [('serialise', dict(update=(torch.ones(3), 'array')))],
     'crowd.abac': [('PolicySet', dict(rules=(parse_policy(EXAMPLE_POLICY).rules, 'obj'), combining=('deny-overrides', 'choice')))],
     'crowd.devices': [('processing_capacity', dict(cores=(np.array([2., 4.]), 'nonneg_array'), ghz=(np.array([1., 2.]), 'nonneg_linked'),
                                                    util=(np.array([.5, .2]), 'nonneg_linked'), gpu=(np.array([0., 1.]), 'nonneg_linked')))],
     'crowd.baselines': [('PriceFirst', dict(pool=(DevicePool.sample(4), 'obj'), budget=(5.0, 'pos')))],
     'clustering.gpfl': [('weighted_average', dict(thetas=([np.ones(2), np.zeros(2)], 'obj'), weights=(np.array([1., 3.]), 'nonneg_linked'))),
                         ('weighted_f1', dict(y=(np.array([0, 1, 1]), 'labels'), pred=(np.array([0, 1, 0]), 'labels'), K=(2, 'size')))],
     'clustering.mcl': [('mcl_matrix', dict(A=(np.ones((3, 3)), 'nonneg_array'), expansion=(2, 'size'), inflation=(1.7, 'pos'), loop_value=(1.0, 'nonneg'),
                                            max_iter=(10, 'size'), prune=(1e-3, 'prob'), tol=(1e-8, 'nonneg')))],
     'clustering.profiles': [('class_counts', dict(y=(np.array([0, 1, 1]), 'labels'), n_classes=(2, 'size'))),
                             ('sparsify', dict(S=(np.ones((3, 3)), 'array'), D=(D, 'nonneg_array'), mode=('eps', 'choice'),
                                               eps_q=(0.2, 'prob')))],
     'clustering.data': [('har_like_stream', dict(rounds=(3, 'size'), n_features=(4, 'size'), drift_round=(1, 'size'), seed=(0, 'count'),
                                                  batch_range=((20, 40), 'obj')))],
     'engine.protocol': [('Selection', dict(ids=(np.array([0, 2]), 'unique_ids')))],
     'engine.aggregation': [('fednova_norm', dict(steps=(np.array([3., 5.]), 'nonneg_array'), lr=(np.array([.1, .1]), 'nonneg_linked'),
                                                  momentum=(0.0, 'prob'), prox_mu=(0.1, 'nonneg')))],   # prox_mu = 0: no proximal term
     'selection.efficiency': [('FLCIR', dict(class_counts=(np.eye(3) * 10, 'nonneg_array'), c=(1.5, 'nonneg')))],
    }

def _core_controls() -> dict:
    "Controls of the `check_*` helpers: each is called with name='value', so its message must name the caller's `value`."
    import pandas as pd
    V = 'value'
    return {
     'foundation.core': [('check_int', dict(name=V, value=(3, 'count'), lo=0)), ('check_count', dict(name=V, value=(3, 'count'))),
                         ('check_rng_seed', dict(name=V, value=(3, 'count'))), ('check_probability', dict(name=V, value=(0.3, 'prob'))),
                         ('check_float', dict(name=V, value=(0.5, 'unit'), lo=0, hi=1, lo_open=True)),
                         ('check_array', dict(name=V, value=(np.array([[1., 2.], [3., 4.]]), 'array'), ndim=2, nonempty=True)),
                         ('check_tensor', dict(name=V, value=(torch.ones(2, 3), 'array'), ndim=2)),
                         ('all_finite', dict(t=(torch.ones(2, 3), 'obj'))),
                         ('check_count_array', dict(name=V, value=(np.array([1, 2, 0]), 'counts'))),
                         ('check_distribution', dict(name=V, value=(np.array([1., 3.]), 'nonneg_array'))),
                         ('check_ids', dict(name=V, value=(np.array([0, 2]), 'unique_ids'), n=4, unique=True)),
                         ('check_choice', dict(name=V, value=('a', 'choice'), choices=['a', 'b'])),
                         ('check_type', dict(name=V, value=('x', 'obj'), types=str)),
                         ('check_callable', dict(name=V, value=(len, 'callable'))),
                         ('check_keys', dict(name='values', values=({'a': 1}, 'obj'), allowed=['a', 'b'])),
                         ('check_columns', dict(name=V, value=(pd.DataFrame({'a': [1.]}), 'obj'), columns=['a'])),
                         ('verdict', dict(paper=(0.1, 'real'), mean=(0.12, 'real'), se=(0.01, 'nonneg'), k=(2.0, 'nonneg'))),
                         ('assert_learned', dict(name='fuzz', value=(0.9, 'real'), bound=(0.5, 'real')))],
    }

def _entry_controls(fed) -> dict:
    "Controls of entry points that need built objects (a model, a Bayesian model, a stream) or several linked arrays."
    from hetfl_explore.crowd.bayesian import bayes_mlp
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.clustering.data import from_client_arrays
    g = np.random.default_rng(0)
    stream = from_client_arrays('toy', [g.normal(size=(12, 2)) + i for i in range(4)], [np.arange(12) % 2] * 4, 2, rounds=2, seed=0)
    x6, y6, a6 = torch.randn(6, 4, generator=torch.Generator().manual_seed(0)), torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([0, 1, 0, 1, 0, 1])
    return {
     'engine.models': [('evaluate', dict(model=(mlp(4, 5, 3), 'obj'), x=(x6, 'tensor'), y=(y6, 'tensor_labels'), a=(a6, 'tensor_labels'),
                                         n_classes=(3, 'size'), n_attrs=(2, 'size'), batch_size=(4, 'size')))],
     'crowd.bayesian': [('predictive', dict(model=(bayes_mlp(4, 3, 5), 'obj'), x=(x6, 'tensor'), samples=(3, 'size'), seed=(0, 'count')))],
     'clustering.contribution': [('top_fraction_curves', dict(data=(stream, 'obj'), scores=(np.arange(4.), 'linked_array'),
                                                              fractions=(np.array([0.5, 1.0]), 'array'), rounds=(1, 'size'), seed=(0, 'count')))],
     'selection.baselines': [('stratified_pick', dict(groups=(np.array([0., 0., 1., 1.]), 'array'), available=(np.array([0, 1, 2]), 'unique_ids'),
                                                      m=(2, 'count'), rng=np.random.default_rng(0))),
                             ('flag_opposing', dict(updates=(torch.tensor([[1., 0.], [1., .5], [-1., 0.]]), 'tensor'))),
                             ('sketch', dict(updates=(torch.ones(3, 4), 'array'), dim=(2, 'size'), seed=(0, 'count'))),
                             ('ward_clusters', dict(z=(np.array([[0., 0.], [0., .1], [5., 5.]]), 'array'), n=(2, 'size')))],
     'selection.constraints': [('project_simplex', dict(v=(np.array([.2, .9, -.1]), 'array'))),
                               ('normalised_utility', dict(u=(np.array([1., 3., 2.]), 'array'), clip=(0.95, 'unit'))),
                               ('oort_utility', dict(n_samples=(np.array([10., 20.]), 'nonneg_array'), rms_loss=(np.array([1., 2.]), 'nonneg_linked'),
                                                     times=(np.array([1., 3.]), 'nonneg_linked'), preferred=(2.0, 'pos'), alpha=(2.0, 'nonneg'))),
                               ('qffl_step', dict(global_params=(torch.zeros(3), 'array'), updates=(torch.ones(2, 3), 'array'),
                                                  losses=(np.array([1., 2.]), 'nonneg_linked'), q=(1.0, 'nonneg'), L=(1.0, 'pos'))),
                               ('robust_low_outliers', dict(acc=(np.array([.9, .8, .85, .1]), 'array'), z=(3.0, 'nonneg'), min_gap=(0.05, 'nonneg')))],
     'selection.efficiency': [('round_half_up', dict(x=(2.5, 'real'))),
                              ('pooled_balance', dict(class_counts=(np.array([[3, 1], [1, 3], [2, 2]]), 'counts'), ids=(np.array([0, 1]), 'unique_ids')))],
     'selection.incentives': [('contract_menu', dict(costs=(np.array([1., 3., 2.]), 'nonneg_array'))),
                              ('subjective_reputation', dict(pos=(np.array([3., 0.]), 'nonneg_array'), neg=(np.array([1., 2.]), 'nonneg_linked'),
                                                             W=(2.0, 'pos'), base=(0.5, 'prob')))],
     'fairness.metrics': [('hard_predictions', dict(out=(torch.tensor([[.2, .8], [.9, .1]]), 'array'), threshold=(0.5, 'prob'))),
                          ('gap', dict(rates=(np.array([.2, .5, .4]), 'array'), how=('maxmin', 'choice'))),
                          ('rates_confusion', dict(n=(np.array([10., 20.]), 'nonneg_array'), base_rate=(np.array([.5, .3]), 'linked_array'),
                                                   tpr=(np.array([.8, .7]), 'linked_array'), fpr=(np.array([.1, .2]), 'linked_array')))],
     'fairness.experiments': [('message_size', dict(level=('fedrk', 'choice'), n_classes=(2, 'size'), n_attrs=(3, 'size')))],
     'feddiverse.estimation': [('pivot_class', dict(majority=torch.tensor([True, False, True, False]), y=(torch.tensor([0, 0, 1, 1]), 'tensor_labels'),
                                                    n_classes=(2, 'size'))),
                               ('with_head', dict(model=(mlp(4, 5, 3), 'obj'), n_out=(2, 'size')))],
    }

def _array_controls(Ns) -> dict:
    "Controls of entry points that take arrays and numbers only (profiles, scores, flows, costs, federations)."
    P = np.array([[.5, .5, 0.], [.2, .3, .5], [.1, .8, .1]]); D = np.array([[0., 1., 2.], [1., 0., 1.5], [2., 1.5, 0.]])
    X = np.array([[1., 2., .5, 3.], [2., 1., .7, 1.], [1.5, 1.5, .2, 2.]])
    return {
     'clustering.profiles': [('check_distance_matrix', dict(name='D', D=(D, 'nonneg_array'))),
                             ('ema_update', dict(p_old=(np.array([.5, .5]), 'nonneg_array'), p_new=(np.array([.2, .8]), 'nonneg_linked'), w=(0.5, 'prob'))),
                             ('class_distance_matrix', dict(P=(P, 'nonneg_array'), metric=('tv', 'choice'))),
                             ('semantic_w1', dict(p=(np.array([.5, .5, 0.]), 'nonneg_array'), q=(np.array([.2, .3, .5]), 'nonneg_linked'), ground=(D, 'nonneg_array')))],
     'clustering.mcl': [('kmedoids_cost', dict(D=(D, 'nonneg_array'), medoids=(np.array([0, 2]), 'unique_ids')))],
     'clustering.cafl': [('cmfl_relevance', dict(u=(np.array([1., -2., 3.]), 'array'), u_bar=(np.array([1., 2., 3.]), 'linked_array')))],
     'clustering.gpfl': [('predict_proba', dict(theta=(np.zeros((3, 2)), 'array'), X=(np.ones((4, 2)), 'array')))],
     'clustering.contribution': [('bin_scores', dict(x=(np.array([1., 3., 6.]), 'array'), edges=(np.array([2., 5.]), 'array')))],
     'crowd.devices': [('memory_impact', dict(required_gb=(2.0, 'nonneg'), free_gb=(np.array([1., 4.]), 'nonneg_array')))],
     'crowd.promethee': [('minmax_columns', dict(X=(X, 'array'))),
                         ('uni_flows_sorted', dict(g=(np.array([.1, .5, .3]), 'array'), q=(0.05, 'nonneg'), p=(0.5, 'pos')))],
     'crowd.shapley': [('flag_free_riders', dict(phi=(np.array([.3, .2, .01]), 'array'), kappa=(0.1, 'nonneg'))),
                       ('shapley_tmr', dict(games=([((0, 1), lambda c: float(len(c))), ((1, 2), lambda c: 0.5 * len(c))], 'obj'),
                                           n_clients=(3, 'size'), threshold=(0.0, 'real'), decay=(1.0, 'prob')))],
     'crowd.robust': [('robust_outliers', dict(mus=(torch.eye(5), 'array'), rule=('multi_krum', 'choice'), f=(1, 'count'), ratio=(100.0, 'pos')))],
     'modelhet.mia': [('min_nonmembers', dict(fpr=(0.01, 'unit'))), ('n_known_members', dict(n_members=(100, 'size')))],
     'foundation.data': [('scale_federation', dict(spec_or_matrices=(Ns, 'counts'), scale=(0.5, 'pos'), min_nonzero=(1, 'count'))),
                         ('federation', dict(name=('spawrious_gsc', 'choice')))],
     'foundation.datasets': [('check_counts', dict(counts=(Ns[0], 'counts')))],
     'foundation.loaders': [('select_per_group', dict(y=(np.array([0, 0, 1, 1]), 'counts'), a=(np.array([0, 1, 0, 1]), 'linked_array'),
                                                      max_per_group=(1, 'size'), seed=(0, 'count')))],
     'feddiverse.selector': [('noise_for_error', dict(triplets=(np.array([[.1, .2, .3], [.4, .1, 0.]]), 'array'), target=(0.05, 'nonneg'), seed=(0, 'count')))],
     'fairness.metrics': [('sum_confusions', dict(confusions=([torch.ones(2, 2, 2), torch.ones(2, 2, 2)], 'obj'))),
                          ('client_accuracy_parity', dict(confusions=([torch.ones(2, 2, 2), torch.eye(2).repeat(2, 1, 1)], 'obj')))],
    }

def _object_controls() -> dict:
    "Controls of entry points that take models, rules, tables of labels, mappings or text."
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.aggregation import fedavg_rule
    from hetfl_explore.engine.protocol import make_view
    return {
     'engine.aggregation': [('unit_masks', dict(model=(mlp(4, 5, 3), 'obj'), keep=(0.5, 'unit'), rng=np.random.default_rng(0))),
                            ('aggregation_rule_name', dict(rule=(fedavg_rule, 'callable')))],
     'engine.store': [('run_key', dict(identity=('abc', 'obj'))), ('hook_identity', dict(hook=(len, 'callable')))],
     'feddiverse.own_data': [('matrices_from_arrays', dict(labels=([np.array([0, 1]), np.array([1, 1])], 'obj'),
                                                           attributes=([np.array([1, 0]), np.array([0, 1])], 'obj'), n_classes=(2, 'size'), n_attrs=(2, 'size')))],
     'selection.efficiency': [('q_net', dict(n_in=(4, 'size'), hidden=(3, 'size'), g=torch.Generator().manual_seed(0)))],
     'selection.taxonomy': [('method_card', dict(method=('Oort', 'choice')))],
     'selection.baselines': [('budget', dict(k=(2, 'size'), clients=(make_view(4, 0), 'obj')))],
     'crowd.shapley': [('payouts', dict(phi=(np.array([.3, .2, .5]), 'array'), reward_pool=(10.0, 'nonneg')))],
     'clustering.contribution': [('rank_correlation_matrix', dict(scores=({'a': np.array([1., 2., 3.]), 'b': np.array([3., 1., 2.])}, 'obj')))],
    }

def _study_controls(Ns) -> dict:
    "Controls of the splits, games and multi-criteria flows of the studies (small federations, three players, four criteria)."
    from hetfl_explore.foundation.data import federation
    X = np.array([[1., 2., .5, 3.], [2., 1., .7, 1.], [1.5, 1.5, .2, 2.]]); w = np.full(4, .25)
    y, a = np.array([0, 0, 1, 1, 0, 0, 1, 1]), np.array([0, 1, 0, 1, 0, 1, 0, 1])
    u = lambda s: float(len(s))
    return {
     'foundation.data': [('scale_drift', dict(spec_or_matrices=(Ns, 'counts'), scale=(0.5, 'pos'), min_nonzero=(1, 'count'), level=('clients', 'choice'))),
                         ('balanced_split', dict(y=(y, 'labels'), a=(a, 'labels'), n_classes=(2, 'size'), n_attrs=(2, 'size'),
                                                 test_per_group=(1, 'size'), seed=(0, 'count'))),
                         ('assert_published', dict(spec=(federation('spawrious_gsc'), 'obj')))],
     'clustering.gpfl': [('local_sgd', dict(theta=(np.zeros((3, 2)), 'array'), X=(np.ones((4, 2)), 'array'), y=(np.array([0, 1, 1, 0]), 'labels'),
                                            rng=np.random.default_rng(0), lr=(0.05, 'pos'), epochs=(1, 'size'), batch_size=(2, 'size'), prox_mu=(0.0, 'nonneg')))],
     'crowd.shapley': [('shapley_mc', dict(utility=(u, 'callable'), n_players=(3, 'size'), n_perm=(4, 'size'), rng=np.random.default_rng(0))),
                       ('shapley_subsets', dict(utility=(u, 'callable'), n_players=(3, 'size'), n_samples=(4, 'size'), rng=np.random.default_rng(0))),
                       ('round_shapley', dict(participants=(np.array([0, 2]), 'unique_ids'), utility=(u, 'callable'), n_clients=(3, 'size')))],
     'crowd.promethee': [('check_weights', dict(weights=(w, 'nonneg_array'))), ('check_thresholds', dict(q=(0.05, 'nonneg'), p=(0.5, 'pos'))),
                         ('flows_sorted', dict(X=(X, 'array'), weights=(w, 'nonneg_array'), q=(0.05, 'nonneg'), p=(0.5, 'pos'))),
                         ('flows_pairwise', dict(X=(X, 'array'), weights=(w, 'nonneg_array'), q=(0.05, 'nonneg'), p=(0.5, 'pos'))),
                         ('compute_flows_as_printed', dict(g=(np.array([.1, .5, .3]), 'array'), q=(0.05, 'nonneg'), p=(0.5, 'pos')))],
     'crowd.pki': [('seal', dict(key=(bytes(32), 'obj'), data=(b'update', 'obj')))],
    }

def _device_controls(Ns) -> dict:
    "Controls of entry points that take a device by name, a method's name or a toy client's matrix."
    from hetfl_explore.engine.models import mlp
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    y, a = torch.tensor([0, 1, 0, 1, 1, 0]), torch.tensor([0, 0, 1, 1, 0, 1])
    return {
     'fairness.metrics': [('model_confusion', dict(model=mlp(4, 5, 2), x=x, y=y, a=a, n_classes=2, n_groups=2, device=('cpu', 'device')))],
     'foundation.core': [('default_device', dict(device=('cpu', 'device')))],
     'feddiverse.estimation': [('toy_client', dict(counts=(Ns[0], 'counts'), seed=(0, 'count'), attr_margin=(3.0, 'real'),
                                                   class_margin=(0.6, 'real'), noise_dims=(2, 'count')))],
     'feddiverse.experiments': [('method_label', dict(method=('FedDiverse', 'obj')))],
    }

# %% every public entry point: the hand-written controls above, automatic ones for the rest, and what is not fuzzed here
FLOWER_PARTS = ('hetfl_explore.scale.flower.', 'hetfl_explore.scale.partitions.')   # the Flower adapter's own fuzz and tests cover these
SIDE_EFFECTS = {   # defaults that write result files, start servers or run whole experiment grids: never called blind
    'hetfl_explore.feddiverse.experiments.regenerate_results', 'hetfl_explore.feddiverse.experiments.main',
    'hetfl_explore.feddiverse.experiments.demo', 'hetfl_explore.feddiverse.experiments.measure_overhead',
    'hetfl_explore.modelhet.experiments.run_preset', 'hetfl_explore.fairness.experiments.run_fairness_grid',
    'hetfl_explore.scale.sweeps.start_ray', 'hetfl_explore.foundation.core.seed_everything'}
PROGRESS = False    # print each entry point to stderr as it is fuzzed (--progress)
AUTO_SLOW_S = 5.0   # an automatic control slower than this is run once, without mutants (its defaults are a long experiment)

def public_callables() -> dict:
    "Qualified name -> object of every function and class in a hetfl_explore module's `__all__` that the module defines itself."
    import hetfl_explore
    out = {}
    for info in pkgutil.walk_packages(hetfl_explore.__path__, 'hetfl_explore.'):
        mod = importlib.import_module(info.name)
        for n in getattr(mod, '__all__', ()):
            obj = getattr(mod, n, None)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, '__module__', None) == mod.__name__:
                out[f'{mod.__name__}.{n}'] = obj
    return out

def _required_values() -> dict:
    "Argument name -> a builder of a valid value, for the automatic controls of entry points that need the argument."
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.crowd.devices import DevicePool
    from hetfl_explore.engine.protocol import UniformSelector
    from hetfl_explore.engine.models import mlp
    Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]]])
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    D = np.array([[0., 1., 2.], [1., 0., 1.5], [2., 1.5, 0.]])
    return {'rng': lambda: np.random.default_rng(0), 'matrices': lambda: Ns.copy(), 'Ns': lambda: Ns.copy(),
            'N': lambda: Ns[0].copy(), 'triplets': lambda: np.array([[.1, .2, .3], [.4, .1, .0], [.2, .2, .2], [.0, .3, .1]]),
            'n_classes': lambda: 2, 'num_clients': lambda: 4, 'n_clients': lambda: 4, 'n_players': lambda: 3,
            'utility': lambda: (lambda s: float(len(s))), 'seed': lambda: 0, 'rounds': lambda: 2, 'k': lambda: 2,
            'y': lambda: y.copy(), 'a': lambda: y[::-1].copy(), 'p': lambda: np.array([.5, .5]), 'q': lambda: np.array([.2, .8]),
            'C': lambda: np.array([[[5., 1.], [2., 6.]], [[4., 2.], [1., 3.]]]), 'labels': lambda: np.array([0, 0, 1]),
            'scores': lambda: np.array([.1, .9, .4, .6]), 'counts': lambda: np.array([1., 2., 3.]),
            'weights': lambda: np.array([.2, .3, .5]), 'n': lambda: 3, 'n_attrs': lambda: 2, 'K': lambda: 2, 'm': lambda: 2,
            'data': lambda: tiny_digits_federation(num_clients=4, min_size=10, n_test=40), 'pool': lambda: DevicePool.sample(4),
            'fd': lambda: tiny_digits_federation(num_clients=4, min_size=10, n_test=40), 'selector': lambda: UniformSelector(),
            't': lambda: 0, 'round': lambda: 0, 'ids': lambda: np.array([0, 1]), 'available': lambda: np.array([0, 1]),
            'n_samples': lambda: np.array([10, 20, 30, 40]), 'hidden': lambda: 4, 'in_features': lambda: 4, 'batch_size': lambda: 8,
            'lr': lambda: 0.1, 'n_features': lambda: 4, 'steps': lambda: np.array([3., 5.]), 'values': lambda: np.array([1., 2., 3.]),
            'D': lambda: D.copy(), 'A': lambda: np.ones((3, 3)), 'S': lambda: 1 / (1 + D),
            'model': lambda: mlp(64, 8, 10), 'model_fn': lambda: (lambda: mlp(64, 8, 10)), 'x': lambda: np.array([1., 2., 3.])}

def _auto_kind(p:inspect.Parameter) -> str|None:
    "The automatic family of a parameter from its default: 'auto_int' or 'auto_real' for numbers; None otherwise."
    d, ann = p.default, str(p.annotation)
    if d is p.empty or isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.integer, np.floating)): return None
    return 'auto_int' if isinstance(d, (int, np.integer)) and 'float' not in ann else 'auto_real'

def coverage(manual:dict|None=None) -> dict:
    "Every public callable by how the fuzz covers it: 'manual', 'auto' (built from defaults), 'flower', 'side_effects' or 'gap'."
    manual = _controls() if manual is None else manual
    done = {f'hetfl_explore.{g}.{name}' for g, entries in manual.items() for name, _ in entries}
    req, out = _required_values(), {}
    for q, obj in public_callables().items():
        if q in done: out[q] = 'manual'; continue
        if q.startswith(FLOWER_PARTS): out[q] = 'flower'; continue
        if q in SIDE_EFFECTS or q in AUTO_GAPS: out[q] = 'side_effects' if q in SIDE_EFFECTS else 'gap'; continue
        try: ps = [p for p in inspect.signature(obj).parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        except (TypeError, ValueError): out[q] = 'gap'; continue
        out[q] = 'auto' if all(p.default is not p.empty or p.name in req for p in ps) else 'gap'
    return out

def auto_controls(manual:dict) -> dict:
    "group -> [(entry, spec)] for the 'auto' entry points: required arguments from `_required_values`, numbers mutated."
    req, out = _required_values(), defaultdict(list)
    for q, how in coverage(manual).items():
        if how != 'auto': continue
        obj, (mod, name) = public_callables()[q], q[len('hetfl_explore.'):].rsplit('.', 1)
        spec = {}
        for p in inspect.signature(obj).parameters.values():
            if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY): continue
            if p.default is p.empty: spec[p.name] = req[p.name](); continue
            kind = _auto_kind(p)
            if kind: spec[p.name] = (p.default, kind)
        out[mod].append((name, spec))
    return dict(out)

# automatic controls that need more than their defaults (found by running them): {qualified name: why}; listed in the coverage test
AUTO_GAPS: dict = {
    # found by the automatic run of the tool: the named-argument values (`_required_values`) do not fit these entry points
}

# %% one call in its own forked process
def _describe(e:BaseException) -> dict:
    "Exception type, message and the file of the frame that raised it."
    tb = traceback.extract_tb(e.__traceback__)
    return {'type': type(e).__name__, 'message': str(e)[:300], 'where': tb[-1].filename if tb else '',
            'value_type': isinstance(e, (ValueError, TypeError))}

def nonfinite(x, depth:int=0) -> bool:
    "True if a returned value holds NaN or ±inf: numbers, numpy arrays, tensors, pandas tables, containers and dataclasses."
    import dataclasses, pandas as pd
    if depth > 4: return False
    if isinstance(x, bool): return False
    if isinstance(x, (float, np.floating)): return not np.isfinite(x)
    if isinstance(x, np.ndarray): return x.dtype.kind in 'fc' and not np.isfinite(x).all()
    if isinstance(x, torch.Tensor): return x.is_floating_point() and not bool(torch.isfinite(x.detach()).all())
    if isinstance(x, pd.DataFrame): return nonfinite(x.select_dtypes('number').to_numpy(float), depth + 1)
    if isinstance(x, pd.Series): return x.dtype.kind in 'fc' and nonfinite(x.to_numpy(float), depth + 1)
    if isinstance(x, dict): return any(nonfinite(v, depth + 1) for v in list(x.values())[:1000])
    if isinstance(x, (list, tuple)): return any(nonfinite(v, depth + 1) for v in x[:1000])
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(nonfinite(getattr(x, f.name, None), depth + 1) for f in dataclasses.fields(x))
    return False

def run_forked(fn, timeout:float=TIMEOUT_S) -> dict:
    "Run `fn()` in a forked child; {'outcome': 'ok'|'raised'|'hang'|'crash', ...} with the result's type (and whether it holds NaN/inf) or the exception."
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: run, report, exit without cleanup
        os.close(r)
        import warnings
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                res = fn()
            try: bad = nonfinite(res)
            except Exception: bad = False
            out = {'outcome': 'ok', 'result': type(res).__name__, 'nonfinite': bad, 'warned': bool(caught)}
        except BaseException as e: out = {'outcome': 'raised', **_describe(e)}
        try: os.write(w, pickle.dumps(out))
        finally: os._exit(0)
    os.close(w)
    os.set_blocking(r, False)
    chunks, deadline = [], time.monotonic() + timeout
    while True:
        try:
            b = os.read(r, 1 << 16)
            if not b: break
            chunks.append(b)
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.kill(pid, 9); os.waitpid(pid, 0); os.close(r)
                return {'outcome': 'hang'}
            time.sleep(0.002)
    os.close(r); os.waitpid(pid, 0)
    return pickle.loads(b''.join(chunks)) if chunks else {'outcome': 'crash'}

ALLOWED_WORDS = re.compile(r'\b(expected|expects|must|allowed|one of|at least|at most|needs?)\b')

def names_argument(arg:str, message:str) -> bool:
    "True if `message` names `arg` as a whole word (case-sensitive: `t` is not `T`, `y` is not `y_test`)."
    return re.search(rf'(?<![\w]){re.escape(arg)}(?![\w])', message) is not None

def value_forms(value) -> list|None:
    "Texts any of which shows a scalar mutant's value in a message; None for arrays and objects (the entry is named instead)."
    if value is None or isinstance(value, bool): return [repr(value)]
    if isinstance(value, (RaisingStr, RaisingInt, RaisingFloat)): return [type(value).__name__, 'hostile', 'subclass', 'read']
    if isinstance(value, str): return [value]
    if isinstance(value, int): return [repr(value)[:12]]
    if isinstance(value, float):
        return ['nan', 'NaN'] if value != value else ['inf'] if abs(value) == float('inf') else [repr(value), f'{value:g}']
    return None

def classify(res:dict, arg:str, value=None) -> str:
    "clear / unclear / silent / hang for a malformed call: clear names the argument as a word, the value and what is allowed."
    if res['outcome'] in ('hang', 'ok'): return {'hang': 'hang', 'ok': 'silent'}[res['outcome']]
    if res['outcome'] == 'crash': return 'unclear'
    msg, forms = res['message'], value_forms(value)
    ours = PACKAGE_DIR in res['where']
    shown = forms is None or any(f in msg for f in forms)
    return 'clear' if res['value_type'] and ours and names_argument(arg, msg) and ALLOWED_WORDS.search(msg) and shown else 'unclear'

def accepted(res:dict, entry:str) -> str:
    "accepted / nonfinite / rejected for a valid call: a result holding NaN/inf without a warning is reported."
    if res['outcome'] != 'ok': return 'rejected'
    return 'nonfinite' if res.get('nonfinite') and not res.get('warned') and entry not in NONFINITE_OK else 'accepted'

# entry points whose valid results hold ±inf or NaN by design: {name: why}
NONFINITE_OK = {
    'exposure_table': 'the anti-client pick frequency of a row without anti clients is NaN (undefined), not 0',
    'selection_share_table': "the 'published uniform' rows carry the published shares only; their union columns are NaN",
    'appendix_tables': 'a run that never reaches the target accuracy has T = NaN (the paper prints a dash)',
    'load_results': 'columns a result file does not record are NaN',
    'normalised_utility': 'a client never tried (NaN, or an unbounded inf utility) keeps NaN: it has no place on the [0, 1] scale',
    'oort_utility': 'a client never tried (NaN loss) has NaN utility; Oort explores it instead of ranking it'}

def _call(fn, kwargs): return lambda: fn(**kwargs)

# Mutants that are documented valid inputs of one argument, so they are controls, not malformed calls: no client
# available, and no client left to train (every selected one dropped), are legitimate round states; PROMETHEE thresholds may be given per criterion (a one-element list
# broadcasts over the criteria).
VALID_MUTANTS = {('ClientView', 'available'): {'empty'}, ('make_view', 'available'): {'empty'},
                 ('diversity_round', 'available'): {'empty'}, ('batch_plan', 'sizes'): {'empty'}, ('preference', 'q'): {'list'}, ('preference', 'p'): {'list'},
                 ('preference', 'd'): {'empty'}, ('Selection', 'ids'): {'empty'},   # elementwise, like numpy: no differences give no preferences
                 ('check_tensor', 'value'): {'empty'}, ('check_count_array', 'value'): {'empty'},   # an empty tensor, no counts
                 ('check_ids', 'value'): {'empty'},   # and no ids are values these helpers hand back unchanged
                 ('top_fraction_curves', 'rounds'): {'None'},   # every round the stream offers
                 ('sketch', 'updates'): {'empty'}, ('ward_clusters', 'z'): {'empty'},   # no clients this round: nothing to sketch or cluster
                 ('normalised_utility', 'u'): {'empty', 'nan entry', 'inf entry'},   # NaN: never tried; inf: Oort's unbounded utility
                 ('oort_utility', 'rms_loss'): {'one short', 'nan entry'}, ('oort_utility', 'times'): {'one short', 'inf entry'},   # broadcast; never tried; never returns
                 ('hard_predictions', 'out'): {'empty', 'inf entry', 'flattened'},   # no samples; a sure logit; one logit per sample
                 ('gap', 'rates'): {'nan entry'},   # an undefined group's rate
                 ('stratified_pick', 'available'): {'empty'}, ('flag_opposing', 'updates'): {'empty'},   # no client this round
                 ('predictive', 'x'): {'empty'},   # no rows: no predictions
                 ('class_counts', 'y'): {'empty'},   # no samples: zero counts
                 ('serialise', 'update'): {'ragged'},   # a list of parts of any lengths, as (mu, var)
                 ('digits_federation', 'alpha'): {'None'},   # None: IID
                 ('bin_scores', 'x'): {'empty'}, ('select_per_group', 'max_per_group'): {'None'},   # no scores to bin; None keeps every sample
                 ('uni_flows_sorted', 'q'): {'list'}, ('uni_flows_sorted', 'p'): {'list'},   # a threshold per criterion (one here)
                 **{(f, t): {'list'} for f in ('check_thresholds', 'flows_sorted', 'flows_pairwise', 'compute_flows_as_printed') for t in 'qp'},
                 ('balanced_split', 'test_per_group'): {'0'},   # no test set: every sample trains
                 ('default_device', 'device'): {'str subclass'}, ('model_confusion', 'device'): {'str subclass'}}   # torch reads its characters, 'cpu'

def _merge_part_tables():
    "Add each control file's `KINDS`, `VALID_MUTANTS`, `NONFINITE_OK` and `SIDE_EFFECTS` to this module's."
    for m in control_modules():
        KINDS.update(getattr(m, 'KINDS', {}))
        VALID_MUTANTS.update(getattr(m, 'VALID_MUTANTS', {}))
        NONFINITE_OK.update(getattr(m, 'NONFINITE_OK', {}))
        SIDE_EFFECTS.update(getattr(m, 'SIDE_EFFECTS', set()))

_merge_part_tables()

def fuzz_group(group:str, entries:list, timeout:float, auto:bool=False) -> list:
    "Every control of a group, then its malformed and equivalent mutants; one record per call."
    mod, rows = importlib.import_module(f'hetfl_explore.{group}'), []
    for name, spec in entries:
        if PROGRESS: print(f'{group}.{name}', file=sys.stderr, flush=True)
        fn = getattr(mod, name)
        try: params = inspect.signature(fn).parameters   # a builtin type (a warning class) has no signature
        except ValueError: params = {}
        none_ok = {k for k, p in params.items() if p.default is None}   # None documented as a default
        valid = {k: (v[0] if isinstance(v, tuple) else v) for k, v in spec.items()}
        t0 = time.monotonic(); res = run_forked(_call(fn, valid), timeout); took = time.monotonic() - t0
        rows.append({'group': group, 'entry': name, 'arg': '', 'mutant': 'control', 'role': 'control', 'auto': auto,
                     'outcome': accepted(res, name), 'detail': {**res, 'seconds': round(took, 2)}})
        if auto and (res['outcome'] != 'ok' or took > AUTO_SLOW_S): continue
        for arg, v in spec.items():
            if not isinstance(v, tuple): continue
            value, kind = v
            bad, ok, extra = KINDS[kind]
            valid_here = VALID_MUTANTS.get((name, arg), set())
            for role, muts in (('malformed', {**bad(value), **extra(value)}), ('equivalent', ok(value))):
                for mname, mval in muts.items():
                    if mname == 'None' and arg in none_ok: continue   # a valid call, not a malformed one
                    kind_of = 'equivalent' if mname in valid_here else role
                    res = run_forked(_call(fn, {**valid, arg: mval}), timeout)
                    outcome = classify(res, arg, mval) if kind_of == 'malformed' else accepted(res, name)
                    rows.append({'group': group, 'entry': name, 'arg': arg, 'mutant': mname, 'role': kind_of, 'auto': auto,
                                 'outcome': outcome, 'detail': res})
    return rows

def hostile_answers() -> dict:
    "Answers no grader expects: self-containing, deeply nested, huge, beyond float range, self-raising, wrong types."
    return {'recursive': recursive_list(), 'deep': nested(DEEP), 'huge list': [1.0] * BIG_ANSWER,
            'huge array': np.ones(BIG_ANSWER), '10**400': 10**400, '[10**400]': [10**400, 1], '2**64': 2**64,
            'nan': float('nan'), '-inf': float('-inf'), 'hostile': SelfRaising(), '[hostile]': [SelfRaising()],
            'dict': {'a': 1}, 'bytes': b'\xff', 'bool': True, 'tensor': torch.ones(3), 'set': {1, 2},
            'function': lambda *a: 1 / 0, 'empty': [], 'string': 'zz', 'str subclass': RaisingStr('right'),
            'empty str subclass': RaisingStr(''), '[str subclass]': [RaisingStr('x'), 1.0], 'int subclass': RaisingInt(3),
            'float subclass': RaisingFloat(0.5), '(int, float subclasses)': (RaisingInt(1), RaisingFloat(2.0)),
            '{key: str subclass}': {'k': RaisingStr('v')}}

def fuzz_grade(timeout:float) -> list:
    "Every exercise id against every hostile answer; the outcome is 'feedback' or the problem."
    from hetfl_explore.graders.core import exercises, grade, Feedback
    rows = []
    for eid in exercises():
        for mname, ans in hostile_answers().items():
            def call(eid=eid, ans=ans):
                out = grade(eid, ans)
                if not isinstance(out, Feedback): raise AssertionError(f'grade returned {type(out).__name__}')
                return out
            res = run_forked(call, timeout)
            rows.append({'group': 'graders.grade', 'entry': eid, 'arg': 'answer', 'mutant': mname, 'role': 'answer',
                         'outcome': 'feedback' if res['outcome'] == 'ok' else res['outcome'], 'detail': res})
    return rows

# %% the report
OUTCOMES = ('clear', 'unclear', 'silent', 'hang')

def summary(rows:list) -> dict:
    "Per group and overall: malformed outcomes, valid calls rejected, grade answers without feedback."
    out = defaultdict(lambda: {'malformed': Counter(), 'valid': Counter(), 'answers': Counter()})
    for r in rows:
        for g in (r['group'], 'ALL'):
            part = {'malformed': 'malformed', 'answer': 'answers'}.get(r['role'], 'valid')
            out[g][part][r['outcome']] += 1
    return {g: {k: dict(v) for k, v in d.items()} for g, d in out.items()}

def table(summ:dict) -> str:
    "A text table: one line per group, percentages of the malformed calls."
    head = f"{'group':26} {'malformed':>9} {'clear%':>7} {'unclear':>7} {'silent':>6} {'hang':>4} {'valid':>5} {'rejected':>8} {'nonfinite':>9} {'answers':>7} {'no feedback':>11}"
    lines = [head, '-' * len(head)]
    for g in sorted(summ, key=lambda g: (g == 'ALL', g)):
        m, v, a = (Counter(summ[g][k]) for k in ('malformed', 'valid', 'answers'))
        n = sum(m.values())
        pct = f"{100 * m['clear'] / n:.1f}" if n else '-'
        lines.append(f"{g:26} {n:9} {pct:>7} {m['unclear']:7} {m['silent']:6} {m['hang']:4} {sum(v.values()):5} "
                     f"{v['rejected']:8} {v['nonfinite']:9} {sum(a.values()):7} {sum(a.values()) - a['feedback']:11}")
    return '\n'.join(lines)

def problems(rows:list, limit:int=400) -> list:
    "One line per malformed call not answered clearly, valid call rejected or answer without feedback."
    bad = [r for r in rows if r['outcome'] in ('unclear', 'silent', 'hang', 'rejected', 'nonfinite', 'raised', 'crash')]
    return [f"{r['group']}.{r['entry']}({r['arg']}={r['mutant']}): {r['outcome']} "
            f"{r['detail'].get('type', '')} {r['detail'].get('message', '')[:120]!r}" for r in bad[:limit]]

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--json', help='write every call and the summary here')
    ap.add_argument('--only', nargs='*', help='groups (or prefixes, e.g. crowd) to fuzz; graders.grade for the answers')
    ap.add_argument('--timeout', type=float, default=TIMEOUT_S, help='seconds per call')
    ap.add_argument('--problems', action='store_true', help='list every call that is a problem')
    ap.add_argument('--progress', action='store_true', help='print each entry point to stderr as it is fuzzed')
    ap.add_argument('--auto-only', action='store_true', help='only the automatic controls (and their families)')
    ap.add_argument('--no-auto', action='store_true', help='only the hand-written controls (no automatic families)')
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    global PROGRESS
    PROGRESS = args.progress
    controls = _controls()
    pick = lambda g: not args.only or any(g == o or g.startswith(o + '.') for o in args.only)
    rows = []
    for group, entries in controls.items():
        if pick(group) and not args.auto_only: rows += fuzz_group(group, entries, args.timeout)
    if not args.no_auto:
        for group, entries in auto_controls(controls).items():
            if pick(group): rows += fuzz_group(group, entries, args.timeout, auto=True)
    if pick('graders.grade') and not args.auto_only: rows += fuzz_grade(args.timeout)
    summ = summary(rows)
    print(table(summ))
    cov = Counter(coverage(controls).values())
    print('entry points:', ', '.join(f'{k} {v}' for k, v in sorted(cov.items())), f'(of {sum(cov.values())} public callables)')
    if args.problems: print('\n'.join(problems(rows)))
    if args.json:
        with open(args.json, 'w') as f: json.dump({'summary': summ, 'calls': rows}, f, indent=1, default=str)
    return summ

if __name__ == '__main__': main()
