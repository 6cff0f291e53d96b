"""Bad input never surprises: property tests of foundation, fairness and the widgets, plus the package-wide
coverage test and the "valid forms agree" test.

Each entry of `SPECS` names one public function or class, builds a valid call, and lists, per argument, a hypothesis
strategy of malformed values. `test_malformed_input_gets_a_clear_error` draws one argument and one malformed value and
requires a ValueError/TypeError naming the argument within `CALL_LIMIT_S` seconds (never another exception, never a
normal return, never a hang). Counts per module: `HETFL_PROPERTY_COUNTS=counts.json pytest tests/test_properties.py`.
"""
from __future__ import annotations
import functools, importlib, importlib.util, inspect, json, math, pkgutil, sys, tempfile, warnings
from dataclasses import dataclass, field
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings, HealthCheck, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from properties_support import (reject, bad_int, bad_seed, not_none, bad_float, bad_prob, bad_choice, bad_str, bad_bool, bad_obj, bad_frame,
                                bad_root, bad_matrices, bad_reals, bad_labels, bad_confusion, no_nan, same, MAX_EXAMPLES, NAN, INF)
import hetfl_explore
from hetfl_explore.foundation import core, hetero, data, datasets, loaders
from hetfl_explore.fairness import metrics as fm, experiments as fx
from hetfl_explore.widgets import (editor as we, explorers as wx, stepper as wst, static_figures as wsf, layout as wl, outcome as wo,
                                   privacy_fairness as wp)

warnings.simplefilter('ignore', fm.UndefinedMetricWarning)
PROPERTY_SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])

# ---- cheap valid objects, built once ---------------------------------------------------------------------------------
@functools.cache
def F():
    "Small valid arguments shared by the specs (a namespace dict)."
    fed = data.federation('spawrious_gsc')
    y = np.array([0, 1] * 20); a = np.array([0, 0, 1, 1] * 10)
    fd = data.FederatedData.from_pool(torch.randn(40, 3), y, a, clients=lambda yy, aa, s: data.partition_iid(yy, 4, s), seed=0, test_per_group=2)
    pool = datasets.gaussian_spurious([[6, 6], [6, 6]])
    img = datasets.shapes([[2, 2], [2, 2]], size=8)
    root = Path(tempfile.mkdtemp(prefix='hetfl_props_'))
    wb = loaders.fake_waterbirds(root / 'wb', counts=((1, 1), (1, 1)))
    stats = {'uniform': __import__('hetfl_explore.feddiverse.simulation', fromlist=['x']).simulate_selection(fed, 'uniform', 5, 3)}
    summary = we.federation_summary(we.preset_types('spawrious_gsc'))
    from hetfl_explore.modelhet.mia import AttackResult
    res = AttackResult(np.linspace(0, 1, 20), np.array([0, 1] * 10), np.array([0, 1] * 10), info=dict(loss=np.linspace(1, 0, 20)))
    runs = pd.DataFrame([dict(dataset='celeba_like', level=l, seed=0, acc=80.0, wga=60.0, d_eop=0.1, d_dp=0.1) for l in fx.PRIVACY_LEVELS])
    grid = pd.DataFrame([dict(rho=0.9, n_anti=1, level='random', seed=0, **{m: 0.5 for m in fx.EXPLORER_METRICS})])
    stepper = wst.FedDiverseStepper('spawrious_gsc', k=3)
    row = pd.Series(dict(client_confusions=json.dumps([fm.worked_example().flatten().tolist()])))
    return dict(fed=fed, Ns=fed.matrices, N=fed.matrices[0], y=y, a=a, fd=fd, pool=pool, img=img, root=root, wb=wb, stats=stats,
                summary=summary, res=res, runs=runs, grid=grid, expl=stepper.explanation, frame=stepper.frames[0],
                trip=hetero.dht(fed.matrices), C=fm.worked_example(), row=row, model=torch.nn.Linear(3, 2),
                faces=fx.fairness_split('utkface_like', 0, TINYP),
                cfg=wo.OutcomeConfig(scale=0.1, rounds=1, k=2, test_per_group=2, hidden=4, size=8))

@dataclass
class Spec:
    "One public entry point: how to call it validly, and the malformed values to draw per argument."
    fn: object                      # the callable
    valid: object                   # () -> dict of valid keyword arguments
    bad: dict                       # argument -> strategy of malformed values
    names: dict = field(default_factory=dict)   # argument -> names an error may use instead (e.g. 'FairnessPreset.rounds')

def spec(fn, valid=dict, **bad):
    "A `Spec` of `fn`; `valid` builds the valid keyword arguments lazily (it may read `F()`)."
    return Spec(fn, valid, bad)

def _v(**kw):
    "A lazy valid-arguments builder: values that are strings starting with '@' are looked up in `F()`."
    return lambda: {k: F()[v[1:]] if isinstance(v, str) and v.startswith('@') else v for k, v in kw.items()}

M3, M2 = bad_matrices(3), bad_matrices(2)
LEVEL = bad_choice()

# ---- foundation.core -----------------------------------------------------------------------------------------------
SPECS = {
 'foundation.core.check_int': spec(core.check_int, _v(name='k', lo=1, hi=5, value=3), value=bad_int(1, 5)),
 'foundation.core.check_float': spec(core.check_float, _v(name='lr', lo=0, hi=1, value=0.5), value=bad_float(0, 1)),
 'foundation.core.check_keys': spec(core.check_keys, _v(name='values', allowed=['q', 'p'], values={'q': 1}),
                                     values=st.sampled_from([None, 3, 'q', ['q'], {'qq': 1}, {'q': 1, 'x': 2}])),
 'foundation.core.check_choice': spec(core.check_choice, _v(name='agg', choices=['fedavg'], value='fedavg'), value=bad_choice((np.array([1, 2]),))),
 'foundation.core.check_type': spec(core.check_type, _v(name='x', types=str, value='s'), value=st.sampled_from([None, 3, 1.5, [1], b'x'])),
 'foundation.core.as_array': spec(core.as_array, _v(name='x', value=[1, 2], ndim=1), value=st.sampled_from([None, 'x', [[1, 2], [3]], [1, 'a'], {'a': 1}, [[1, 2]]])),
 'foundation.core.check_array': spec(core.check_array, _v(name='x', value=[0.5], lo=0, hi=1), value=bad_reals(0, 1)),
 'foundation.core.check_tensor': spec(core.check_tensor, _v(name='x', value=[0.5]), value=st.sampled_from([None, 'x', True, [[1, 2], [3]], [NAN], [INF], torch.tensor([NAN])])),
 'foundation.core.all_finite': spec(core.all_finite, _v(t=torch.ones(2)),
                                   t=st.sampled_from([None, [1.0], 'x', np.ones(2)])),
 'foundation.core.torch_threads': spec(core.torch_threads, _v(n=1), n=bad_int(1)),
 'foundation.core.check_count': spec(core.check_count, _v(name='k', value=3, hi=10), value=bad_int(0, 10)),
 'foundation.core.check_count_array': spec(core.check_count_array, _v(name='N', value=[[1, 2], [3, 4]]), value=bad_matrices(2, shapes=False, empty=False)),
 'foundation.core.check_probability': spec(core.check_probability, _v(name='q', value=0.5), value=bad_prob()),
 'foundation.core.check_distribution': spec(core.check_distribution, _v(name='p', value=[1, 2]), value=st.one_of(bad_reals(0, None), st.sampled_from([[0, 0], [-1, 2], 3.0]))),
 'foundation.core.check_ids': spec(core.check_ids, _v(name='ids', value=[0, 1], n=3), value=st.sampled_from([[-1], [3], [0.5], 'x', None, [[0]], [NAN]])),
 'foundation.core.check_rng_seed': spec(core.check_rng_seed, _v(name='seed', value=0), value=bad_seed()),
 'foundation.core.check_columns': spec(core.check_columns, _v(name='runs', value=pd.DataFrame(dict(a=[1])), columns=['a']), value=bad_frame()),
 'foundation.core.check_callable': spec(core.check_callable, _v(name='fn', value=abs), value=st.sampled_from([None, 3, 'f', [abs]])),
 'foundation.core.check_by_name': spec(core.check_by_name, _v(rules={'fn': core.check_callable}, kinds={'fn': 'fn'}),
                                           rules=st.sampled_from([None, 3, [core.check_callable]]), kinds=st.sampled_from([None, 'fn', [('fn', 'fn')]])),
 'foundation.core.default_device': spec(core.default_device, _v(device='cpu'), device=st.sampled_from([3, 'tpu', 1.5, ['cpu'], 'cuda:x'])),
 'foundation.core.seed_everything': spec(core.seed_everything, _v(seed=0), seed=bad_seed()),
 'foundation.core.spawn_seeds': spec(core.spawn_seeds, _v(seed=0, n=2), seed=bad_seed(), n=bad_int(0), key=st.sampled_from([-1, 1.5, None, b'x'])),
 'foundation.core.rng_streams': spec(core.rng_streams, _v(seed=0, n=2), seed=bad_seed(), n=bad_int(0)),
 'foundation.core.torch_generator': spec(core.torch_generator, _v(seed=0), seed=bad_seed(), device=st.sampled_from([3, 'tpu'])),
 'foundation.core.validate_fields': spec(core.validate_fields, lambda: dict(obj=F()['cfg'], rounds=functools.partial(core.check_int, lo=1)),
                                         obj=st.sampled_from([None, 3, 'x'])),
 'foundation.core.outcome_seed': spec(core.outcome_seed, _v(default=0), default=bad_seed()),
 'foundation.core.assert_learned': spec(core.assert_learned, _v(name='demo', value=0.9, bound=0.5), name=bad_str(), bound=bad_float()),
 'foundation.core.results_path': spec(core.results_path, _v(name='x.csv'), name=bad_str()),
 'foundation.core.source_table': spec(core.source_table, _v(name='nemeth2025_table8.csv'), name=bad_str()),
 'foundation.core.paired_differences': spec(core.paired_differences, _v(runs=pd.DataFrame(dict(arm=['x', 'y'], seed=[0, 0], v=[1.0, 2.0])),
                                                                     arm='arm', a='x', b='y', value='v'), runs=bad_frame(), by=st.sampled_from([None, 3, 'g'])),
 'foundation.core.verdict': spec(core.verdict, _v(paper=1.0, mean=1.0, se=0.1), paper=bad_float(), mean=bad_float(), se=bad_float(0)),
 'foundation.core.assert_paired': spec(core.assert_paired, _v(diff=dict(mean=1.0, se=0.1, n=10, text='t'), sign=1),
                                       diff=st.sampled_from([None, 3, 'x', {'mean': 1}]), sign=bad_choice()),
 'foundation.core.assert_not_significant': spec(core.assert_not_significant, _v(diff=dict(mean=0.0, se=0.1, n=10, text='t')),
                                                diff=st.sampled_from([None, 3, 'x', {'mean': 1}])),
}
SPECS['foundation.core.validate_fields'].names = {'obj': ('obj', 'OutcomeConfig')}
for _k, _s in SPECS.items():   # a validator's error names the argument it is told about (its `name`), not 'value'
    if 'value' in _s.bad: _s.names = {'value': (_s.valid()['name'],)}

# ---- foundation.hetero ---------------------------------------------------------------------------------------------
SPECS.update({
 'foundation.hetero.interaction_matrix': spec(hetero.interaction_matrix, _v(y=[0, 1], a=[1, 0], n_classes=2, n_attrs=2),
                                              y=bad_labels(), a=bad_labels(), n_classes=bad_int(1), n_attrs=bad_int(1)),
 'foundation.hetero.marginal_vector': spec(hetero.marginal_vector, _v(N='@Ns'), N=M3),
 'foundation.hetero.as_counts': spec(hetero.as_counts, _v(N='@Ns'), N=M3),
 'foundation.hetero.entropy': spec(hetero.entropy, _v(p=[1, 2]), p=st.one_of(bad_reals(0, None), st.sampled_from([[0, 0], [-1, 2]])), axis=bad_int(-1, 0)),
 'foundation.hetero.mutual_information': spec(hetero.mutual_information, _v(N='@Ns'), N=M3),
 'foundation.hetero.dht': spec(hetero.dht, _v(N='@Ns'), N=M3),
 'foundation.hetero.delta_ci': spec(hetero.delta_ci, _v(N='@Ns'), N=M3),
 'foundation.hetero.delta_ai': spec(hetero.delta_ai, _v(N='@Ns'), N=M3),
 'foundation.hetero.delta_sc': spec(hetero.delta_sc, _v(N='@Ns'), N=M3),
 'foundation.hetero.fl_metrics': spec(hetero.fl_metrics, _v(Ns='@Ns'), Ns=M3),
 'foundation.hetero.client_types': spec(hetero.client_types, _v(triplets='@trip'), triplets=bad_reals(0, 1, (2, 3)), tie=bad_choice(), atol=bad_float(0)),
 'foundation.hetero.hellinger': spec(hetero.hellinger, _v(p=[1, 2], q=[2, 1]), p=st.one_of(bad_reals(0, None, (2,)), st.sampled_from([[0, 0], [-1, 2]])),
                                     q=st.sampled_from([[0, 0], [-1, 2], [NAN, 1], 'x', [1, 2, 3]])),
 'foundation.hetero.js_divergence': spec(hetero.js_divergence, _v(p=[1, 2], q=[2, 1]), p=st.sampled_from([[0, 0], [-1, 2], [INF, 1], None]),
                                         q=st.sampled_from([[0, 0], [-1, 2], [NAN, 1], 'x'])),
 'foundation.hetero.label_skew': spec(hetero.label_skew, _v(Ns='@Ns'), Ns=M3, measure=bad_choice(), over=bad_choice()),
 'foundation.hetero.federation_heatmaps': spec(hetero.federation_heatmaps, _v(Ns='@Ns', max_clients=2), Ns=M3, cols=bad_int(1), max_clients=bad_int(1)),
 'foundation.hetero.simplex_positions': spec(hetero.simplex_positions, _v(triplets='@trip'), triplets=bad_reals(0, 1, (2, 3))),
 'foundation.hetero.ternary_triplets': spec(hetero.ternary_triplets, _v(triplets='@trip'), triplets=bad_reals(0, 1, (2, 3)), tie=bad_choice(),
                                            sizes=st.sampled_from([[1, 2], [-1] * 24, 'x'])),
 'foundation.hetero.label_box': spec(hetero.label_box, _v(x=10, y=10, text='a', pos='top center', r=3), x=bad_float(), y=bad_float(),
                                     text=st.sampled_from([None, 3, ['a']]), pos=bad_choice(('top',)), r=bad_float(0)),
 'foundation.hetero.box_overlap': spec(hetero.box_overlap, _v(a=(0, 0, 1, 1), b=(0, 0, 2, 2)),
                                       a=st.sampled_from([None, 'x', (0, 0, 1), (0, NAN, 1, 1), (0, 0, INF, 1)]), b=st.sampled_from([(1, 2), [[0, 0, 1, 1]]])),
 'foundation.hetero.spread_labels': spec(hetero.spread_labels, lambda: {'fig': hetero.go.Figure()}, fig=st.sampled_from([None, 'x', {'data': []}, 3])),
 'foundation.hetero.metric_bars': spec(hetero.metric_bars, _v(metrics='@Ns'), metrics=M3, published=st.sampled_from([3, 'x', {'GCI': 'x'}, {'GCI': INF}])),
})

# ---- foundation.data -----------------------------------------------------------------------------------------------
def _flwr(data, pid=0):
    "A `FlwrPartitioner` of `data`, asked for partition `pid`."
    return _data_module.FlwrPartitioner(data).load_partition(pid)

_data_module = data
_SPEC_ARGS = lambda: dict(name='x', client_types=((1, [[1, 1], [1, 1]]),), class_names=('a', 'b'), attr_names=('c', 'd'), published={}, derived={})
SPECS.update({
 'foundation.data.FederationSpec': spec(lambda **kw: data.assert_published(data.FederationSpec(**kw)), _SPEC_ARGS,
                                        client_types=st.sampled_from([None, 3])),
 'foundation.data.federation': spec(data.federation, _v(name='spawrious_gsc'), name=bad_choice()),
 'foundation.data.assert_published': spec(data.assert_published, _v(spec='@fed'), spec=bad_obj()),
 'foundation.data.scale_federation': spec(data.scale_federation, _v(spec_or_matrices='@fed', scale=0.5), spec_or_matrices=M3,
                                          scale=st.one_of(bad_float(0, None, lo_open=True), st.just(1e300)), min_nonzero=bad_int(0)),
 'foundation.data.scale_drift': spec(data.scale_drift, _v(spec_or_matrices='@fed', scale=0.5), spec_or_matrices=M3, scale=bad_float(0, None, lo_open=True),
                                     level=bad_choice()),
 'foundation.data.partition_from_matrices': spec(data.partition_from_matrices, lambda: dict(y=F()['y'], a=F()['a'], matrices=[[[1, 1], [1, 1]]] * 2, seed=0),
                                                 y=bad_labels(), a=bad_labels(), matrices=M3, seed=bad_seed()),
 'foundation.data.partition_iid': spec(data.partition_iid, _v(y='@y', num_clients=4, seed=0), y=bad_labels(), num_clients=bad_int(1, 40), seed=bad_seed()),
 'foundation.data.partition_dirichlet': spec(data.partition_dirichlet, _v(y='@y', num_clients=4, alpha=1.0, seed=0), y=bad_labels(), num_clients=bad_int(1),
                                             alpha=bad_float(0, None, lo_open=True), seed=bad_seed(), over=bad_choice(),
                                             min_size=st.one_of(bad_int(0), st.integers(11, 10**6)), max_tries=bad_int(1, data.MAX_TRIES)),
 'foundation.data.partition_shards': spec(data.partition_shards, _v(y='@y', num_clients=4, seed=0), y=bad_labels(), num_clients=bad_int(1, 20),
                                          seed=bad_seed(), shards_per_client=bad_int(1, 10), over=bad_choice()),
 'foundation.data.balanced_split': spec(data.balanced_split, _v(y='@y', a='@a', n_classes=2, n_attrs=2, test_per_group=2, seed=0), y=bad_labels(),
                                        test_per_group=bad_int(0), seed=bad_seed(), reserve=bad_matrices(2, empty=False)),
 'foundation.data.Stacked': spec(lambda **kw: F()['fd'].stacked(**kw), _v(ids=[0, 1]), ids=st.sampled_from([[-1], [4], 'x', None, [0.5], []]),
                                 batch_size=not_none(bad_int(1))),
 'foundation.data.FederatedData': spec(lambda **kw: data.FederatedData.from_pool(torch.randn(40, 3), **kw), lambda: dict(y=F()['y'], a=F()['a'], clients=[[[5, 5], [5, 5]]] * 2, test_per_group=2),
                                       y=bad_labels(), a=bad_labels(), clients=M3, seed=bad_seed(), test_per_group=bad_int(0)),
 'foundation.data.FlwrPartitioner': spec(_flwr, _v(data='@fd'), data=st.sampled_from([None, 3, 'x']), pid=bad_int(0, 3)),
 'foundation.data.dirichlet_size_split': spec(data.dirichlet_size_split, _v(y='@y', num_clients=4), y=bad_labels(), num_clients=bad_int(1),
                                              alpha=bad_float(0, None, lo_open=True), seed=bad_seed(), min_size=st.one_of(bad_int(0), st.integers(11, 10**6)),
                                              max_tries=bad_int(1, data.MAX_TRIES)),
 'foundation.data.digits_federation': spec(data.digits_federation, _v(num_clients=3), num_clients=bad_int(1), alpha=st.sampled_from(['x', 0, -1.0, NAN]), test_size=bad_int(1, 1000), seed=bad_seed()),
 'foundation.data.tiny_digits_federation': spec(data.tiny_digits_federation, _v(num_clients=2, min_size=1), seed=bad_seed(), num_clients=bad_int(1),
                                                alpha=bad_float(0, None, lo_open=True), n_test=bad_int(1, 1700)),
})
SPECS['foundation.hetero.metric_bars'].names = {'metrics': ('metrics', 'Ns')}
SPECS['foundation.data.FederationSpec'].names = {'client_types': ('client_types', 'N', 'spec')}
SPECS['foundation.data.FlwrPartitioner'].names = {'pid': ('partition_id',)}
SPECS['foundation.data.FederatedData'].names = {'clients': ('matrices', 'clients')}

# ---- foundation.datasets -------------------------------------------------------------------------------------------
SPECS.update({
 'foundation.datasets.Pool': spec(lambda **kw: datasets.Pool(**{**dict(x=torch.zeros(2, 1), y=torch.tensor([0, 1]), a=torch.tensor([0, 0]),
                                                                    class_names=['a', 'b'], attr_names=['c']), **kw}), dict,
                                  y=st.sampled_from([torch.tensor([0, 5]), [0, 1], torch.tensor([0.0, 1.0]), None]), a=st.sampled_from([torch.tensor([0, 3]), None])),
 'foundation.datasets.check_counts': spec(datasets.check_counts, _v(counts='@N'), counts=M2, max_total=not_none(bad_int(0))),
 'foundation.datasets.group_labels': spec(datasets.group_labels, _v(N='@N'), N=M2),
 'foundation.datasets.group_grid': spec(datasets.group_grid, _v(pool='@img', per_group=1), pool=bad_obj(), per_group=bad_int(1), seed=bad_seed()),
 'foundation.datasets.colored_mnist': spec(datasets.colored_mnist, _v(counts=[[2, 2], [2, 2]], size=8), counts=M2, seed=bad_seed(), size=bad_int(4, 28)),
 'foundation.datasets.shapes': spec(datasets.shapes, _v(counts=[[2, 2], [2, 2]], size=8), counts=M2, seed=bad_seed(), size=bad_int(8, 256),
                                    rotation=bad_float(0, 180), noise=bad_float(0, 1)),
 'foundation.datasets.probe_accuracy': spec(datasets.probe_accuracy, lambda: dict(features=F()['pool'].x.numpy(), labels=F()['pool'].y.numpy()),
                                            features=bad_reals(None, None, (24, 2)), labels=st.sampled_from([None, 'x', [0] * 24, [[0, 1]] * 12]), seed=bad_seed()),
 'foundation.datasets.render_faces': spec(datasets.render_faces, lambda: dict(levels={t: torch.zeros(1) for t in datasets.FACE_TRAITS},
                                                                             geometry={}, size=8),
                                          levels=st.sampled_from([None, 3, {}, {t: torch.full((1,), 2.0) for t in datasets.FACE_TRAITS}]), size=bad_int(1, 256)),
 'foundation.datasets.faces': spec(datasets.faces, _v(counts=[[1, 1], [1, 1]], size=16), counts=M2, seed=bad_seed(), size=bad_int(16, 256),
                                   target=bad_choice(), protected=bad_choice(), noise=bad_float(0, 1), target_visibility=bad_float(0, 1)),
 'foundation.datasets.gaussian_spurious': spec(datasets.gaussian_spurious, _v(counts=[[2, 2], [2, 2]]), counts=M2, seed=bad_seed(),
                                               core_sep=bad_float(0), attr_sep=bad_float(0), core_dim=bad_int(1), noise_dim=bad_int(0)),
 'foundation.datasets.feature_scatter': spec(datasets.feature_scatter, _v(pool='@pool'), pool=bad_obj(), max_points=bad_int(1), seed=bad_seed(),
                                             dims=st.sampled_from([(0, 99), (-1, 0), ('a', 0), (0.5, 1)])),
 'foundation.datasets.utkface_like_split': spec(datasets.utkface_like_split),
 'foundation.datasets.fairface_like_split': spec(datasets.fairface_like_split),
 'foundation.datasets.celeba_like_split': spec(datasets.celeba_like_split),
 'foundation.datasets.make_federated': spec(datasets.make_federated, _v(dataset='tabular', matrices=[[[3, 3], [3, 3]]] * 2, test_per_group=1),
                                            dataset=bad_choice(), matrices=M3, scale=bad_float(0, None, lo_open=True), seed=bad_seed(),
                                            test_per_group=bad_int(0), by=bad_choice()),
})
SPECS['foundation.datasets.Pool'].names = {'y': ('Pool.y',), 'a': ('Pool.a',)}
SPECS['foundation.datasets.render_faces'].names = {'levels': ('levels', 'levels/geometry', "levels['gender']", "levels['race']")}
SPECS['foundation.datasets.feature_scatter'].names = {'dims': ('dims',)}

# ---- foundation.loaders --------------------------------------------------------------------------------------------
def _missing(): return str(F()['root'] / 'missing')
SPECS.update({
 'foundation.loaders.require': spec(loaders.require, _v(path='@root', what='x'), path=bad_root()),
 'foundation.loaders.find_root': spec(loaders.find_root, _v(root='@root', marker='metadata.csv'), root=bad_root(), marker=bad_str()),
 'foundation.loaders.select_per_group': spec(loaders.select_per_group, _v(y='@y', a='@a', max_per_group=2), y=bad_labels(), a=bad_labels(),
                                             max_per_group=not_none(bad_int(1)), seed=bad_seed()),
 'foundation.loaders.load_images': spec(loaders.load_images, _v(paths=[], size=8), size=bad_int(1, 4096)),
 'foundation.loaders.load_waterbirds': spec(loaders.load_waterbirds, _v(root='@wb', size=8), root=bad_root(), split=bad_choice(), size=bad_int(1, 4096),
                                            max_per_group=not_none(bad_int(1)), seed=bad_seed()),
 'foundation.loaders.fake_waterbirds': spec(loaders.fake_waterbirds, lambda: dict(root=_missing()), root=bad_root(), counts=M2, seed=bad_seed()),
 'foundation.loaders.load_spawrious': spec(loaders.load_spawrious, lambda: dict(root=_missing()), root=bad_root(), breeds=st.sampled_from([('nope',), (3,)]),
                                           locations=st.sampled_from([('nope',), (None,)])),
 'foundation.loaders.fake_spawrious': spec(loaders.fake_spawrious, lambda: dict(root=_missing()), root=bad_root(), per_folder=bad_int(1), seed=bad_seed()),
 'foundation.loaders.read_idx': spec(loaders.read_idx, lambda: dict(path=_missing()), path=bad_root()),
 'foundation.loaders.load_mnist': spec(loaders.load_mnist, lambda: dict(root=_missing()), root=bad_root()),
 'foundation.loaders.write_idx': spec(loaders.write_idx, lambda: dict(path=str(F()['root'] / 'x.idx'), array=np.zeros(3, np.uint8)), path=bad_root(),
                                      array=st.sampled_from([[256], [-1], [0.5], 'x', None, [NAN]])),
 'foundation.loaders.fake_mnist': spec(loaders.fake_mnist, lambda: dict(root=_missing()), root=bad_root(), n_train=bad_int(0, 5000), n_test=bad_int(0, 4940), seed=bad_seed()),
 'foundation.loaders.load_celeba': spec(loaders.load_celeba, lambda: dict(root=_missing()), root=bad_root(), split=bad_choice()),
 'foundation.loaders.fake_celeba': spec(loaders.fake_celeba, lambda: dict(root=_missing()), root=bad_root(), individuals=M2, images_per_identity=bad_int(1), seed=bad_seed()),
 'foundation.loaders.load_utkface': spec(loaders.load_utkface, lambda: dict(root=_missing()), root=bad_root()),
 'foundation.loaders.fake_utkface': spec(loaders.fake_utkface, lambda: dict(root=_missing()), root=bad_root(), counts=M2, seed=bad_seed()),
 'foundation.loaders.load_fairface': spec(loaders.load_fairface, lambda: dict(root=_missing()), root=bad_root(), split=bad_choice()),
 'foundation.loaders.fake_fairface': spec(loaders.fake_fairface, lambda: dict(root=_missing()), root=bad_root(), counts=M2, seed=bad_seed()),
 'foundation.loaders.load_cifar': spec(loaders.load_cifar, lambda: dict(root=_missing()), root=bad_root(), name=bad_choice()),
 'foundation.loaders.load_femnist_leaf': spec(loaders.load_femnist_leaf, lambda: dict(root=_missing()), root=bad_root(), min_samples=bad_int(0)),
})
SPECS['foundation.loaders.fake_celeba'].names = {'individuals': ('individuals', 'counts')}
for _k in ('fake_waterbirds', 'fake_utkface', 'fake_fairface'): SPECS[f'foundation.loaders.{_k}'].names = {'counts': ('counts',)}
SPECS['foundation.loaders.load_spawrious'].names = {'breeds': ('breeds',), 'locations': ('locations',)}

# ---- fairness.metrics ----------------------------------------------------------------------------------------------
_C = lambda **kw: lambda: dict(C=F()['C'], **kw)
_GAPS = dict(pos_label=bad_int(0, 1), how=bad_choice(), ref=bad_int(0, 1), signed=bad_bool())
SPECS.update({
 f'fairness.metrics.{n}': spec(getattr(fm, n), _C(), C=bad_confusion(), **{k: v for k, v in _GAPS.items() if k in inspect.signature(getattr(fm, n)).parameters})
 for n in ('discrimination_index', 'demographic_parity_diff', 'equal_opportunity_diff', 'predictive_equality_diff', 'accuracy_parity_diff',
           'calibration_diff', 'selection_rate', 'true_positive_rate', 'false_positive_rate', 'accuracy_by_group', 'group_accuracy',
           'accuracy', 'worst_group_accuracy', 'worst_group', 'check_confusion', 'predictive_value', 'equalized_odds_diff', 'fairness_report')})
SPECS['fairness.metrics.predictive_value'].bad['y_hat'] = bad_int(0, 1)
SPECS['fairness.metrics.equalized_odds_diff'].bad['agg'] = bad_choice()
SPECS['fairness.metrics.fairness_report'].bad['percent'] = bad_bool()
SPECS.update({
 'fairness.metrics.hard_predictions': spec(fm.hard_predictions, _v(out=torch.zeros(3, 2)), out=st.sampled_from([None, 'x', torch.zeros(2, 2, 2), [[NAN, 1.0]]]),
                                           threshold=bad_prob(), logits=bad_bool()),
 'fairness.metrics.group_confusion': spec(fm.group_confusion, _v(y=[0, 1], a=[0, 1], y_hat=[1, 1]), y=bad_labels(), a=bad_labels(), y_hat=bad_labels(),
                                          n_classes=bad_int(2), n_groups=bad_int(1), weight=st.sampled_from([[-1, 1], [NAN, 1], 'x', [1, 2, 3]])),
 'fairness.metrics.worked_example': spec(fm.worked_example, dict),
 'fairness.metrics.UndefinedMetricWarning': spec(fm.UndefinedMetricWarning, dict),
 'fairness.metrics.gap': spec(fm.gap, _v(rates=[0.1, 0.5]), rates=st.sampled_from(['x', None, [[0.1]], [INF, 0.2]]), how=bad_choice(), ref=bad_int(0, 1), signed=bad_bool()),
 'fairness.metrics.sum_confusions': spec(fm.sum_confusions, _v(confusions=[fm.worked_example()]), confusions=st.sampled_from([None, 3, [], [torch.ones(2, 2)], [-torch.ones(2, 2, 2)]])),
 'fairness.metrics.simpson_example': spec(fm.simpson_example, dict),
 'fairness.metrics.client_table': spec(fm.client_table, _v(confusions=[fm.worked_example()] * 2), confusions=st.sampled_from([None, 3, [], [torch.ones(2, 2)]]),
                                       names=st.sampled_from([['a'], ['a', 'b', 'c']]), weights=st.sampled_from([[-1, 1], [NAN, 1], [0, 0], 'x', [1]])),
 'fairness.metrics.client_accuracy_parity': spec(fm.client_accuracy_parity, _v(confusions=[fm.worked_example()]), confusions=st.sampled_from([None, 3, [torch.ones(2, 2)], [-torch.ones(2, 2, 2)]])),
 'fairness.metrics.model_confusion': spec(fm.model_confusion, lambda: dict(model=F()['model'], x=torch.zeros(2, 3), y=torch.tensor([0, 1]), a=torch.tensor([0, 1]), device='cpu'),
                                          model=bad_obj(), x=st.sampled_from([None, 'x', torch.zeros(5, 3)]), n_classes=bad_int(2), batch_size=bad_int(1)),
 'fairness.metrics.rates_confusion': spec(fm.rates_confusion, _v(n=[10, 10], base_rate=[0.5, 0.5], tpr=[0.9, 0.8], fpr=[0.1, 0.2]),
                                          n=st.sampled_from([[-1, 10], [NAN, 1], 'x', [1, 2, 3]]), base_rate=bad_reals(0, 1, (2,)), tpr=bad_reals(0, 1, (2,)), fpr=bad_reals(0, 1, (2,))),
})
SPECS['fairness.metrics.model_confusion'].names = {'x': ('x', 'x, y, a')}
SPECS['fairness.metrics.rates_confusion'].names = {k: (k, 'n, base_rate, tpr, fpr') for k in ('n', 'base_rate', 'tpr', 'fpr')}
SPECS['fairness.metrics.group_confusion'].names = {k: (k, 'y, a, y_hat') for k in ('y', 'a', 'y_hat')}
SPECS['fairness.metrics.sum_confusions'].names = {'confusions': ('confusions', 'C')}
SPECS['fairness.metrics.client_accuracy_parity'].names = {'confusions': ('confusions', 'C')}
SPECS['fairness.metrics.client_table'].names = {'confusions': ('confusions', 'C')}

# ---- fairness.experiments ------------------------------------------------------------------------------------------
TINYP = fx.FairnessPreset(rounds=1, avg_last=1, scale=0.1, test_per_group=2, test_individuals=4, bias_steps=1, attr_steps=1, image_size=16, hidden=4)
SPECS.update({
 'fairness.experiments.FedRKWeightedSelector': spec(fx.FedRKWeightedSelector, _v(matrices='@Ns'), matrices=M3, floor=bad_float(0, 1)),
 'fairness.experiments.client_metadata': spec(fx.client_metadata, _v(level='feddiverse_predicted', matrix='@N', estimated_triplet=[0.1, 0.2, 0.3]),
                                              level=LEVEL, matrix=M2, estimated_triplet=bad_reals(0, 1, (3,))),
 'fairness.experiments.message_size': spec(fx.message_size, _v(level='fedrk'), level=LEVEL, n_classes=bad_int(2), n_attrs=bad_int(2)),
 'fairness.experiments.privacy_selector': spec(fx.privacy_selector, _v(level='feddiverse_predicted', matrices='@Ns', estimated_triplets='@trip'),
                                               level=LEVEL, matrices=M3, estimated_triplets=bad_reals(0, 1, (24, 3)), variant=bad_choice(), floor=bad_float(0, 1)),
 'fairness.experiments.thesis_summary': spec(fx.thesis_summary, dict),
 'fairness.experiments.chapter_table': spec(fx.chapter_table, lambda: dict(summary=fx.thesis_summary()), summary=bad_frame(), decimals=st.sampled_from([3, {'acc': -1}, {'acc': 'x'}])),
 'fairness.experiments.fairness_headlines': spec(fx.fairness_headlines, lambda: dict(summary=fx.thesis_summary()), summary=bad_frame(), tol=bad_float(0), acc_tol=bad_float(0), rk=bad_choice()),
 'fairness.experiments.FairnessPreset': spec(fx.FairnessPreset, dict, rounds=bad_int(1), lr=bad_float(0, None, lo_open=True), image_size=bad_int(16),
                                             scale=bad_float(0, None, lo_open=True), test_per_group=bad_int(0)),
 'fairness.experiments.fairness_split': spec(fx.fairness_split, _v(dataset='utkface_like', preset=TINYP), dataset=bad_choice(), seed=bad_seed(), preset=not_none(bad_obj())),
 'fairness.experiments.fairness_model_fn': spec(fx.fairness_model_fn, _v(preset=TINYP), preset=not_none(bad_obj())),
 'fairness.experiments.fairness_run_config': spec(fx.fairness_run_config, _v(preset=TINYP, seed=0), preset=bad_obj(), seed=bad_seed()),
 'fairness.experiments.estimate_triplets': spec(fx.estimate_triplets, _v(data='@faces', preset=TINYP), data=st.one_of(bad_obj(), st.builds(lambda: F()['fd'])), seed=bad_seed(), preset=not_none(bad_obj())),
 'fairness.experiments.run_level': spec(fx.run_level, _v(data='@faces', level='random', preset=TINYP), data=st.one_of(bad_obj(), st.builds(lambda: F()['fd'])), level=LEVEL, seed=bad_seed(), preset=not_none(bad_obj())),
 'fairness.experiments.run_fairness_grid': spec(fx.run_fairness_grid, _v(datasets=(), preset=TINYP), datasets=st.sampled_from([('nope',), 3, None]), levels=st.sampled_from([('nope',), 3]),
                                       seeds=st.sampled_from([(-1,), (1.5,), 3]), preset=not_none(bad_obj()), path=st.sampled_from([3, ['x']]), log=st.sampled_from([3, 'x'])),
 'fairness.experiments.summarise': spec(fx.summarise, _v(runs='@runs'), runs=bad_frame()),
 'fairness.experiments.level_differences': spec(fx.level_differences, _v(runs='@runs', a='fedrk', b='random'), runs=bad_frame(),
                                                 a=bad_choice(), b=bad_choice(), metric=bad_choice()),
 'fairness.experiments.fairness_reproduction_table': spec(fx.fairness_reproduction_table, _v(runs='@runs'), runs=bad_frame()),
 'fairness.experiments.resampling_gain': spec(fx.resampling_gain, _v(matrices='@Ns'), matrices=M3),
 'fairness.experiments.minority_cells': spec(fx.minority_cells, _v(matrices='@Ns'), matrices=M3),
 'fairness.experiments.minority_exposure': spec(fx.minority_exposure, _v(matrices='@Ns', level='random', rounds=5, k=3), matrices=M3, level=LEVEL,
                                                rounds=bad_int(1, fx.MAX_ROUNDS), k=bad_int(1, 24), seed=bad_seed()),
 'fairness.experiments.pattern_table': spec(fx.pattern_table, _v(matrices='@Ns', rounds=5, k=3), matrices=M3, rounds=bad_int(1, fx.MAX_ROUNDS), k=bad_int(1, 24), seed=bad_seed()),
 'fairness.experiments.mix_matrices': spec(fx.mix_matrices, dict, rho=bad_float(0.5, 1), n_anti=bad_int(0, 16), cell=bad_int(2)),
 'fairness.experiments.exposure_table': spec(fx.exposure_table, _v(n_antis=(1,), rounds=5), n_antis=st.sampled_from([(-1,), (17,), 3, ('x',)]), rho=bad_float(0.5, 1),
                                             rounds=bad_int(1, fx.MAX_ROUNDS), seed=bad_seed()),
 'fairness.experiments.run_client_table': spec(fx.run_client_table, _v(row='@row'), row=st.sampled_from([None, 3, pd.Series(dict(client_confusions='[1, 2')),
                                                                                                       pd.Series(dict(client_confusions='[[1, 2]]')), pd.Series(dict(x=1))])),
 'fairness.experiments.results_figure': spec(fx.results_figure, lambda: dict(ours=fx.thesis_summary()), ours=bad_frame(), thesis=st.sampled_from([3, pd.DataFrame({'x': [1]})])),
 'fairness.experiments.explore': spec(fx.explore, _v(preset=TINYP), rho=bad_float(0.5, 1), n_anti=bad_int(0, 16), level=LEVEL, seed=bad_seed(), preset=bad_obj()),
 'fairness.experiments.explorer_grid': spec(fx.explorer_grid, _v(rhos=(), preset=TINYP), rhos=st.sampled_from([(2.0,), (NAN,), 3]), n_antis=st.sampled_from([(-1,), 3]),
                                            levels=st.sampled_from([('nope',), 3]), seeds=st.sampled_from([(-1,), 3]), preset=bad_obj(), path=st.sampled_from([3, ['x']])),
 'fairness.experiments.explorer_summary': spec(fx.explorer_summary, _v(grid='@grid'), grid=bad_frame()),
 'fairness.experiments.explorer_figure': spec(fx.explorer_figure, _v(grid='@grid'), grid=bad_frame()),
})
SPECS['fairness.experiments.FairnessPreset'].names = {k: (f'FairnessPreset.{k}',) for k in ('rounds', 'lr', 'image_size', 'scale', 'test_per_group')}
SPECS['fairness.experiments.explorer_grid'].names = {'rhos': ('rhos', 'rho'), 'n_antis': ('n_antis', 'n_anti')}
SPECS['fairness.experiments.exposure_table'].names = {'n_antis': ('n_antis', 'n_anti')}
SPECS['fairness.experiments.run_client_table'].names = {'row': ('row', "row['client_confusions']")}

# ---- widgets -------------------------------------------------------------------------------------------------------
_TYPES = lambda: [(2, np.array([[5, 5], [1, 1]]))]
BAD_TYPES = st.sampled_from([[], None, 3, [(1, [[NAN, 1], [1, 1]])], [(1, [[INF, 1], [1, 1]])], [(0, [[1, 1], [1, 1]])], [(1, [[-1, 1], [1, 1]])],
                             [(1, [[0, 0], [0, 0]])], [(1, [[1.5, 1], [1, 1]])], [(1, [[1, 1], [1, 1]]), (1, [[1, 1, 1], [1, 1, 1]])], [(1,)], ['x'],
                             [(10**6, [[1, 1], [1, 1]])], [(1, [[1e300, 1], [1, 1]])]])
BAD_SELECTORS = st.sampled_from([(), ('nope',), 3, None, ('uniform', 'nope')])
BAD_SOURCE = st.one_of(st.sampled_from(['nope', None, 3]), M3)
SPECS.update({
 'widgets.editor.dirichlet_types': spec(we.dirichlet_types, _v(num_clients=3), num_clients=bad_int(1, we.MAX_CLIENTS), n_classes=bad_int(2, we.EDITOR_MAX_SIDE),
                                           alpha=bad_float(0, None, lo_open=True), size=bad_int(1), seed=bad_seed()),
 'widgets.editor.preset_types': spec(we.preset_types, _v(name='dirichlet_1'), name=bad_choice(), seed=bad_seed()),
 'widgets.editor.expand_types': spec(we.expand_types, lambda: dict(types=_TYPES()), types=BAD_TYPES),
 'widgets.editor.check_types': spec(we.check_types, lambda: dict(types=_TYPES()), types=BAD_TYPES),
 'widgets.editor.federation_summary': spec(we.federation_summary, lambda: dict(types=_TYPES()), types=BAD_TYPES, atol=bad_float(0)),
 'widgets.editor.summary_html': spec(we.summary_html, _v(summary='@summary'), summary=bad_obj(), published=st.sampled_from([3, 'x'])),
 'widgets.editor.triplet_bar_html': spec(we.triplet_bar_html, _v(t=[0.1, 0.2, 0.3]), t=bad_reals(0, 1, (3,)), width=bad_int(1, we.MAX_BAR)),
 'widgets.editor.published_values': spec(we.published_values, _v(name='spawrious_gsc'), name=bad_str()),
 'widgets.editor.types_ternary': spec(we.types_ternary, _v(summary='@summary'), summary=bad_obj()),
 'widgets.editor.MatrixEditor': spec(we.MatrixEditor, dict, preset=bad_choice(), types=BAD_TYPES, max_rows=bad_int(1)),
 'widgets.explorers.check_selectors': spec(wx.check_selectors, _v(selectors=('uniform',)), selectors=BAD_SELECTORS),
 'widgets.explorers.share_table': spec(wx.share_table, _v(stats='@stats'), stats=st.sampled_from([None, {}, {'x': 3}, 3])),
 'widgets.explorers.selection_figures': spec(wx.selection_figures, _v(stats='@stats'), stats=st.sampled_from([None, {}, {'x': 3}]), figs=st.sampled_from([3, 'x'])),
 'widgets.explorers.SelectionExplorer': spec(wx.SelectionExplorer, _v(rounds=5, k=3), source=BAD_SOURCE, selectors=BAD_SELECTORS, k=bad_int(1, 24),
                                             rounds=bad_int(1, wx.EXPLORER_MAX_ROUNDS), seed=bad_seed(), noise=bad_float(0)),
 'widgets.stepper.explain_frames': spec(wst.explain_frames, _v(explanation='@expl'), explanation=st.sampled_from([None, 3, {}, {'steps': 3}])),
 'widgets.stepper.step_figure': spec(wst.step_figure, lambda: dict(triplets=F()['expl']['triplets'], frame=F()['frame']), triplets=bad_reals(0, 1, (24, 3)),
                                       frame=st.sampled_from([None, 3, {}, {'ids': []}])),
 'widgets.static_figures.stepper_figure': spec(wsf.stepper_figure, _v(explanation='@expl'), explanation=st.sampled_from([None, 3, {}, {'steps': []}])),
 'widgets.stepper.FedDiverseStepper': spec(wst.FedDiverseStepper, _v(k=3), source=BAD_SOURCE, k=bad_int(1), variant=bad_choice(), seed=bad_seed()),
 'widgets.explorers.TaxonomyExplorer': spec(wx.TaxonomyExplorer, dict, explorer=not_none(bad_obj())),
 'widgets.static_figures.federations_figure': spec(wsf.federations_figure, _v(names=('spawrious_gsc',)), names=st.sampled_from([(), ('nope',), 3, None])),
 'widgets.static_figures.selection_static_figure': spec(wsf.selection_static_figure, _v(selectors=('uniform',), rounds=3), source=BAD_SOURCE, selectors=BAD_SELECTORS,
                                                   rounds=bad_int(1, wx.EXPLORER_MAX_ROUNDS), k=bad_int(1, 24), seed=bad_seed()),
 'widgets.editor.panel_matrices': spec(we.panel_matrices, _v(source='spawrious_gsc'), source=BAD_SOURCE),
 'widgets.editor.type_group': spec(we.type_group, _v(ty='CI=AI'), ty=bad_str()),
 'widgets.explorers.check_explorer_settings': spec(wx.check_explorer_settings, _v(matrices='@Ns', selectors=('uniform',), k=3, rounds=5, noise=0.0),
                                                   selectors=BAD_SELECTORS, k=bad_int(1, 24), rounds=bad_int(1, wx.EXPLORER_MAX_ROUNDS), noise=bad_float(0)),
 'widgets.layout.place_controls_above': spec(wl.place_controls_above, lambda: dict(fig=wl.go.Figure(layout=dict(height=300))), fig=bad_obj(),
                                             subplot_titles=bad_bool()),
 'widgets.outcome.OutcomeConfig': spec(wo.OutcomeConfig, dict, dataset=bad_choice(), scale=bad_float(0, None, lo_open=True), size=bad_int(4),
                                       rounds=bad_int(1), k=bad_int(1), lr=bad_float(0, None, lo_open=True), aggregator=bad_choice(), seed=bad_seed(),
                                       seeds=bad_int(1, wo.MAX_OUTCOME_SEEDS),
                                       groups=bad_int(1, wo.MAX_OUTCOME_GROUPS)),
 'widgets.outcome.outcome_data': spec(wo.outcome_data, _v(matrices=[[[2, 2], [2, 2]]] * 2, cfg='@cfg'), matrices=M3, cfg=bad_obj()),
 'widgets.outcome.outcome_model': spec(wo.outcome_model, _v(data='@fd', cfg='@cfg'), data=bad_obj(), cfg=bad_obj()),
 'widgets.outcome.outcome_simulation': spec(wo.outcome_simulation, _v(matrices=[[[2, 2], [2, 2]]] * 2, selector='uniform', cfg='@cfg'), matrices=M3,
                                            selector=bad_choice(), cfg=bad_obj()),
 'widgets.outcome.run_outcome': spec(wo.run_outcome, _v(matrices=[[[2, 2], [2, 2]]] * 2, selector='uniform', cfg='@cfg'), matrices=M3, selector=bad_choice(), cfg=bad_obj()),
 'widgets.outcome.curves': spec(wo.curves, _v(histories={}), histories=st.sampled_from([None, 3, {'x': 3}])),
 'widgets.outcome.check_trainable': spec(wo.check_trainable, _v(matrices=[[[2, 2], [2, 2]]] * 2, cfg='@cfg'), matrices=M3, cfg=bad_obj()),
 'widgets.outcome.run_outcome_seeds': spec(wo.run_outcome_seeds, _v(matrices=[[[2, 2], [2, 2]]] * 2, selectors=('uniform',), cfg='@cfg'), matrices=M3,
                                           selectors=BAD_SELECTORS, cfg=bad_obj()),
 'widgets.outcome.seed_band': spec(wo.seed_band, _v(seeds=[]), seeds=st.sampled_from([None, 3, 'x', {'a': 1}])),
 'widgets.outcome.seed_table': spec(wo.seed_table, _v(results={}), results=st.sampled_from([None, 3, 'x', ['a']])),
 'widgets.outcome.OutcomePanel': spec(wo.OutcomePanel, _v(config='@cfg'), source=BAD_SOURCE, selectors=BAD_SELECTORS, config=bad_obj(), store=st.sampled_from([3, ['x']]), follow=bad_bool()),
 'widgets.outcome.outcome_figure': spec(wo.outcome_figure, _v(federations=('cmnist_gsc',), selectors=('uniform',), cfg='@cfg'), federations=st.sampled_from([('nope',), 3, None]), selectors=BAD_SELECTORS, cfg=bad_obj()),
 'widgets.privacy_fairness.threshold_metrics': spec(wp.threshold_metrics, _v(res='@res', nu=0.5), res=bad_obj(), nu=st.sampled_from([NAN, 'x', None, [0.5]])),
 'widgets.privacy_fairness.MIAAnatomy': spec(wp.MIAAnatomy, _v(res='@res', steps=5), res=bad_obj(), steps=bad_int(2)),
 'widgets.privacy_fairness.SubmodelExplorer': spec(wp.SubmodelExplorer, _v(rounds=3), method=bad_choice(), n_small=bad_int(1, 10), num_clients=bad_int(1, we.MAX_CLIENTS),
                                                   u=bad_int(1), rounds=bad_int(1, wx.EXPLORER_MAX_ROUNDS)),
 'widgets.privacy_fairness.TradeoffExplorer': spec(wp.TradeoffExplorer, dict, table=not_none(bad_frame()), privacy=bad_choice(), dataset=bad_str(), n_large=bad_int(0)),
 'widgets.privacy_fairness.fairness_matrices': spec(wp.fairness_matrices, dict, strength=bad_prob(), mix=bad_prob(), num_clients=bad_int(1, we.MAX_CLIENTS), n=bad_int(4)),
 'widgets.privacy_fairness.shortcut_confusions': spec(wp.shortcut_confusions, _v(matrices='@Ns', reliance=0.5), matrices=M3, reliance=bad_prob()),
 'widgets.privacy_fairness.FairnessExplorer': spec(wp.FairnessExplorer, _v(rounds=3), strength=bad_prob(), mix=bad_prob(), reliance=bad_prob(), k=bad_int(1),
                                                   rounds=bad_int(1, wx.EXPLORER_MAX_ROUNDS)),
 'widgets.privacy_fairness.fairness_static_figure': spec(wp.fairness_static_figure, _v(steps=2), strength=bad_prob(), mix=bad_prob(), steps=bad_int(2, wp.MAX_STEPS)),
 'widgets.privacy_fairness.tradeoff_static_figure': spec(wp.tradeoff_static_figure, dict, table=not_none(bad_frame()), privacy=bad_choice(), dataset=bad_str()),
})
SPECS['widgets.editor.MatrixEditor'].names = {'types': ('types',)}
SPECS['widgets.explorers.SelectionExplorer'].names = {'source': ('source', 'N')}
SPECS['widgets.stepper.FedDiverseStepper'].names = {'source': ('source', 'N')}
SPECS['widgets.editor.panel_matrices'].names = {'source': ('source', 'N')}
SPECS['widgets.static_figures.selection_static_figure'].names = {'source': ('source', 'N')}
SPECS['widgets.outcome.OutcomePanel'].names = {'source': ('source', 'N')}
SPECS['widgets.outcome.outcome_figure'].names = {'selectors': ('selectors',)}
SPECS['widgets.stepper.step_figure'].names = {'triplets': ('triplets',)}
SPECS['widgets.static_figures.stepper_figure'].names = {'explanation': ('explanation',)}

COVERED = {f'hetfl_explore.{k}' for k in SPECS}
NO_ARGUMENTS = {k for k, s in SPECS.items() if not s.bad}   # argument-free entry points: their results are checked instead

# ---- the malformed-input property ----------------------------------------------------------------------------------
@pytest.mark.parametrize('name', sorted(k for k in SPECS if SPECS[k].bad))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_malformed_input_gets_a_clear_error(name, data):
    "One malformed argument (the others valid) gets a ValueError/TypeError naming it, quickly; never another exception or a result."
    s = SPECS[name]
    arg = data.draw(st.sampled_from(sorted(s.bad)), label='argument')
    value = data.draw(s.bad[arg], label=arg)
    kw = {**s.valid(), arg: value}
    reject('hetfl_explore.' + name.rsplit('.', 1)[0], lambda: s.fn(**kw), arg, value, s.names.get(arg))

@pytest.mark.parametrize('name', sorted(NO_ARGUMENTS))
def test_argument_free_entry_points_return_clean_results(name):
    "Entry points without arguments return results without NaN (or are warning classes)."
    fn = SPECS[name].fn
    if inspect.isclass(fn) and issubclass(fn, Warning): assert issubclass(fn, UserWarning); return
    out = fn()
    if isinstance(out, pd.DataFrame): out = out.select_dtypes('number').to_numpy()
    assert no_nan(out)

# ---- valid inputs: results without NaN, negative counts or out-of-range ids ----------------------------------------
@st.composite
def matrices(draw, clients=(1, 6), classes=(2, 3), attrs=(2, 3), top=50):
    "Valid client matrices (K, |Y|, |A|): non-negative integer counts, no empty client."
    K, Y, A = (draw(st.integers(*r)) for r in (clients, classes, attrs))
    N = np.array(draw(st.lists(st.integers(0, top), min_size=K * Y * A, max_size=K * Y * A))).reshape(K, Y, A)
    N[:, 0, 0] += N.sum((1, 2)) == 0
    return N

@PROPERTY_SETTINGS
@given(N=matrices(), scale=st.floats(1e-3, 10))
def test_valid_matrices_give_clean_metrics(N, scale):
    "Triplets and metrics of valid matrices are finite and in [0, 1]; scaled federations keep non-negative integer counts."
    t = hetero.dht(N); m = hetero.fl_metrics(N)
    assert no_nan(t) and (t >= 0).all() and (t <= 1).all() and no_nan(m) and all(0 <= v <= 1 for v in m.values())
    S = data.scale_federation(N, scale)
    assert S.dtype == np.int64 and (S >= 0).all() and ((S > 0) == (N > 0)).all()
    assert ((hetero.label_skew(N) >= 0) & (hetero.label_skew(N) <= 1)).all()

@PROPERTY_SETTINGS
@given(p=st.lists(st.floats(0, 1e6), min_size=2, max_size=6), q=st.lists(st.floats(0, 1e6), min_size=2, max_size=6))
def test_valid_weights_give_clean_divergences(p, q):
    "Entropy, Hellinger and Jensen-Shannon of non-negative weights with a positive total are finite and in range; all-zero weights raise."
    n = min(len(p), len(q)); p, q = np.array(p[:n]), np.array(q[:n])
    for w in (p, q):
        if w.sum() == 0: _fail_named(lambda: hetero.entropy(w), 'p'); return
    assert np.isfinite(hetero.entropy(p)) and 0 <= hetero.entropy(p) <= math.log(n) + 1e-9
    assert 0 <= hetero.hellinger(p, q) <= 1 and 0 <= hetero.js_divergence(p, q) <= 1

def _fail_named(fn, name):
    "Assert that `fn()` raises a ValueError/TypeError naming `name`."
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"): fn()

@PROPERTY_SETTINGS
@given(n=st.integers(4, 60), K=st.integers(1, 4), alpha=st.floats(0.05, 10), seed=st.integers(0, 2**63 - 1))
def test_partitions_give_disjoint_ids_in_range(n, K, alpha, seed):
    "Every partition returns disjoint ids within [0, n) (Dirichlet splits cover the pool)."
    y = np.arange(n) % 2
    for parts in (data.partition_iid(y, K, seed), data.partition_dirichlet(y, K, alpha, seed, min_size=0),
                  data.partition_shards(y, K, seed, shards_per_client=1)):
        ids = np.concatenate(parts)
        assert len(parts) == K and len(np.unique(ids)) == len(ids) and (ids >= 0).all() and (ids < n).all()
    assert sum(map(len, data.partition_dirichlet(y, K, alpha, seed, min_size=0))) == n

@PROPERTY_SETTINGS
@given(types=st.lists(st.tuples(st.integers(1, 5), st.lists(st.integers(0, 30), min_size=4, max_size=4)), min_size=1, max_size=4))
def test_editor_rows_give_clean_federations(types):
    "Valid editor rows give non-negative counts, one matrix per client, and finite metrics."
    rows = [(m, np.array(c).reshape(2, 2) + np.array([[1, 0], [0, 0]])) for m, c in types]
    Ns = we.expand_types(rows)
    assert len(Ns) == sum(m for m, _ in rows) and (Ns >= 0).all() and no_nan(we.federation_summary(rows)['metrics'])

# ---- valid forms agree ---------------------------------------------------------------------------------------------
def _forms3():
    "The same client matrices as a FederationSpec, a numpy array, a nested list and a torch tensor."
    fed = data.federation('spawrious_gsc')
    return dict(spec=fed, numpy=fed.matrices, list=fed.matrices.tolist(), torch=torch.tensor(fed.matrices))

def _forms2():
    "One client matrix as numpy, nested list and torch (a FederationSpec holds several clients, so it has no 2-D form)."
    N = np.array([[9, 1], [1, 9]])
    return dict(numpy=N, list=N.tolist(), torch=torch.tensor(N))

def _sel():
    from hetfl_explore.feddiverse import selector as s
    return s

def _sim():
    from hetfl_explore.feddiverse import simulation as s
    return s

FORMS3 = {   # qualified name -> call on one form of the client matrices (results compared with `same`)
 'foundation.hetero.marginal_vector': hetero.marginal_vector, 'foundation.hetero.as_counts': hetero.as_counts,
 'foundation.hetero.mutual_information': hetero.mutual_information, 'foundation.hetero.dht': hetero.dht,
 'foundation.hetero.delta_ci': hetero.delta_ci, 'foundation.hetero.delta_ai': hetero.delta_ai, 'foundation.hetero.delta_sc': hetero.delta_sc,
 'foundation.hetero.fl_metrics': hetero.fl_metrics, 'foundation.hetero.label_skew': hetero.label_skew,
 'foundation.hetero.federation_heatmaps': lambda m: hetero.federation_heatmaps(m, max_clients=2),
 'foundation.hetero.metric_bars': hetero.metric_bars,
 'foundation.data.scale_federation': lambda m: data.scale_federation(m, 0.5), 'foundation.data.scale_drift': lambda m: data.scale_drift(m, 0.5),
 'foundation.data.partition_from_matrices': lambda m: data.partition_from_matrices(*datasets.group_labels(np.asarray(m).sum(0)), m, 0),
 'foundation.datasets.make_federated': lambda m: datasets.make_federated('tabular', m, scale=0.05, test_per_group=1).interaction(),
 'fairness.experiments.FedRKWeightedSelector': lambda m: fx.FedRKWeightedSelector(m).weights,
 'fairness.experiments.privacy_selector': lambda m: fx.privacy_selector('fedrk', m).weights,
 'fairness.experiments.resampling_gain': fx.resampling_gain, 'fairness.experiments.minority_cells': fx.minority_cells,
 'fairness.experiments.minority_exposure': lambda m: fx.minority_exposure(m, 'fedrk', rounds=5, k=3),
 'fairness.experiments.pattern_table': lambda m: fx.pattern_table(m, rounds=5, k=3),
 'widgets.explorers.SelectionExplorer': lambda m: wx.SelectionExplorer(m, selectors=('fedrk',), rounds=5, k=3).selected(),
 'widgets.editor.panel_matrices': we.panel_matrices,
 'widgets.stepper.FedDiverseStepper': lambda m: wst.FedDiverseStepper(m, k=3).explanation['triplets'],
 'widgets.static_figures.selection_static_figure': lambda m: wsf.selection_static_figure(m, selectors=('fedrk',), rounds=3, k=3),
 'widgets.outcome.outcome_data': lambda m: wo.outcome_data(m, F()['cfg']).interaction(),
 'widgets.outcome.outcome_simulation': lambda m: wo.outcome_simulation(m, 'fedrk', F()['cfg']).key,
 'widgets.outcome.OutcomePanel': lambda m: wo.OutcomePanel(m, config=F()['cfg']).matrices,
 'widgets.privacy_fairness.shortcut_confusions': lambda m: wp.shortcut_confusions(m, 0.5),
 'feddiverse.selector.oracle_triplets': lambda m: _sel().oracle_triplets(m), 'feddiverse.selector.fedrk_weights': lambda m: _sel().fedrk_weights(m),
 'feddiverse.selector.mixture_variance': lambda m: _sel().mixture_variance(m, np.full(24, 1 / 24)),
 'feddiverse.selector.FedRKSelector': lambda m: _sel().FedRKSelector(m).weights,
 'feddiverse.simulation.selection_stats': lambda m: _sim().selection_stats(m, np.eye(24, dtype=bool)[:3]).union_triplets,
 'feddiverse.simulation.proxy_losses': lambda m: _sim().proxy_losses(m), 'feddiverse.registry.make_selector': lambda m: __import__('hetfl_explore.feddiverse.registry', fromlist=['x']).make_selector('fedrk', m).weights,
 'feddiverse.simulation.simulate_selection': lambda m: _sim().simulate_selection(m, 'fedrk', 5, 3).selected,
 'feddiverse.simulation.share_selectors': lambda m: {k: {a: v for a, v in vars(x).items() if hasattr(v, 'shape')}
                                                   for k, x in _sim().share_selectors(m, variants=('sign-invariant',)).items()},
}
FORMS2 = {
 'foundation.datasets.check_counts': datasets.check_counts, 'foundation.datasets.group_labels': datasets.group_labels,
 'foundation.datasets.gaussian_spurious': lambda m: datasets.gaussian_spurious(m).x, 'foundation.datasets.shapes': lambda m: datasets.shapes(m, size=8).x,
 'foundation.datasets.colored_mnist': lambda m: datasets.colored_mnist(m, size=8).x, 'foundation.datasets.faces': lambda m: datasets.faces(m, size=16).x,
 'fairness.experiments.client_metadata': lambda m: fx.client_metadata('fedrk', m),
 'feddiverse.estimation.toy_client': lambda m: __import__('hetfl_explore.feddiverse.estimation', fromlist=['x']).toy_client(m)[0],
}
# Entry points outside foundation/fairness/widgets whose forms still disagree or fail on this branch, with the reason;
# they are expected failures (xfail, not skipped), so they stay visible in every run until they are fixed.
FORMS_KNOWN_FAILURES = {}

def _form_params(table, forms):
    for name in sorted(table):
        marks = [pytest.mark.xfail(reason=FORMS_KNOWN_FAILURES[name], strict=False)] if name in FORMS_KNOWN_FAILURES else []
        yield pytest.param(name, forms, id=name, marks=marks)

@pytest.mark.parametrize('name,forms', [*_form_params(FORMS3, _forms3), *_form_params(FORMS2, _forms2)])
def test_valid_forms_agree(name, forms):
    "Every entry point that takes interaction matrices gives the same result for numpy, nested lists, torch and a FederationSpec."
    call = {**FORMS3, **FORMS2}[name]
    results = {k: call(v) for k, v in forms().items()}
    ref = results.pop('numpy')
    bad = [k for k, r in results.items() if not same(ref, r)]
    assert not bad, f"{name}: the {bad} form(s) give a different result than numpy"

# ---- coverage: every public function and class of the package has a property test ----------------------------------
ROOT = Path(__file__).resolve().parents[1]

def public_names() -> set:
    "Qualified names of the functions and classes in each hetfl_explore module's `__all__` that the module defines itself."
    names = set()
    for info in pkgutil.walk_packages(hetfl_explore.__path__, 'hetfl_explore.'):
        mod = importlib.import_module(info.name)
        for n in getattr(mod, '__all__', ()):
            obj = getattr(mod, n, None)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, '__module__', None) == mod.__name__:
                names.add(f'{mod.__name__}.{n}')
    return names

def covered_names() -> set:
    "The union of the `COVERED` sets of every tests/test_properties*.py (imported by path)."
    out = set()
    for path in sorted((ROOT / 'tests').glob('test_properties*.py')):
        if path.resolve() == Path(__file__).resolve(): out |= COVERED; continue
        spec_ = importlib.util.spec_from_file_location(f'_covered_{path.stem}', path)
        mod = importlib.util.module_from_spec(spec_); spec_.loader.exec_module(mod)
        out |= set(getattr(mod, 'COVERED', ()))
    return out

MY_PARTS = ('hetfl_explore.foundation.', 'hetfl_explore.fairness.', 'hetfl_explore.widgets.editor.', 'hetfl_explore.widgets.explorers.',
            'hetfl_explore.widgets.stepper.', 'hetfl_explore.widgets.static_figures.', 'hetfl_explore.widgets.layout.', 'hetfl_explore.widgets.outcome.',
            'hetfl_explore.widgets.privacy_fairness.')

def test_every_public_name_has_a_property_test():
    "Every public function and class of the package is in some test_properties*.py's COVERED set (lists those that are not)."
    missing = sorted(public_names() - covered_names())
    assert not missing, f"{len(missing)} public names without a property test:\n" + '\n'.join(missing)

def test_covered_names_exist():
    "COVERED lists only real public names (no typos that would hide a gap)."
    assert not COVERED - public_names(), sorted(COVERED - public_names())


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([torch.float16, torch.bfloat16, torch.float32, torch.float64]), st.integers(0, 40),
       st.lists(st.sampled_from([0.0, -1.5, 3e38, -3e38, 1e308, NAN, INF, -INF]), max_size=40))
def test_all_finite_agrees_with_an_elementwise_scan(dtype, n, values):
    "`all_finite` (one min-max pass) says what an elementwise `isfinite` says, at every dtype and size."
    t = torch.tensor(values[:n] or [0.0] * n, dtype=torch.float64).to(dtype)   # 1e308 becomes inf below float64
    assert core.all_finite(t) == all(math.isfinite(v) for v in t.double().tolist())
