"""Bad input never surprises: property tests of every public name of hetfl_explore.feddiverse.* and .modelhet.*.

Each entry point gets one malformed argument at a time (the others valid) and must answer with a ValueError or
TypeError whose message names that argument, quickly; entry points that take interaction matrices must agree on
the numpy / nested-list / torch / `FederationSpec` forms. Constants are covered by a check of their documented
type and content. `COVERED` lists every public name checked here (the coverage test gathers these sets).
"""
from __future__ import annotations
import functools, importlib, re, signal
from contextlib import contextmanager
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn
from hypothesis import HealthCheck, given, settings, strategies as st

from hetfl_explore.foundation.data import federation, tiny_digits_federation
from hetfl_explore.feddiverse import (selector as fs, registry as freg, simulation as fsim, estimation as fe,
                                      experiments as fx)
from hetfl_explore.modelhet import submodels as ms, mia as mm, experiments as mx

MODULES = {'feddiverse.selector': fs, 'feddiverse.registry': freg, 'feddiverse.simulation': fsim,
           'feddiverse.estimation': fe, 'feddiverse.experiments': fx,
           'modelhet.submodels': ms, 'modelhet.mia': mm, 'modelhet.experiments': mx}
CALL_LIMIT_S = 20
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
NAN, INF = float('nan'), float('inf')
JUNK = [None, 'x', {'a': 1}, object()]
INT = JUNK + [1.5, NAN, True, -1]             # for non-negative integers (bool is not an int)
POS = INT + [0]                               # for positive integers
FLOAT = JUNK + [NAN, INF, -INF, [0.5]]        # any real
PROB = FLOAT + [-0.1, 1.5]                    # a probability
CHOICE = [None, 'nope', 3, 1.5, ('a',)]
FRAME = [None, 3, 'x', {'a': [1]}, pd.DataFrame({'zzz': [1.0]})]
OBJ = [None, 3, 'x', 1.5, [1, 2], {'a': 1}]
MATS = ['x', {'a': 1}, [[[1, 2], [3]]], np.full((3, 2, 2), NAN), -np.ones((3, 2, 2)), np.ones((3, 2)), np.ones((3, 2, 2)) * INF]
TRIPS = ['x', {'a': 1}, np.full((4, 3), NAN), -np.ones((4, 3)), np.ones((4, 2)), [[0.1, 0.2], [0.3]], np.ones((4, 3)) * INF]
TENS = [None, 'x', 3, [[1, 'a']]]
STR = [None, 3, 1.5, ['x'], b'x']


class Hang(Exception): "A call ran past `CALL_LIMIT_S`."

@contextmanager
def time_limit(seconds=CALL_LIMIT_S):
    "Raise `Hang` in the main thread when the block runs longer than `seconds`."
    def handler(signum, frame): raise Hang(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, handler); signal.alarm(seconds)
    try: yield
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)

def names(message, arg):
    "Whether `message` names the argument `arg` (not inside a longer word)."
    return re.search(rf"(?<![\w]){re.escape(arg)}(?![\w])", message) is not None

def assert_clear(fn, arg, value, aliases=()):
    "`fn()` must raise ValueError/TypeError naming `arg` (or an alias) within the time limit."
    try:
        with time_limit(): fn()
    except Hang as e: pytest.fail(f"{arg}={value!r:.80}: {e}")
    except (ValueError, TypeError) as e:
        assert any(names(str(e), a) for a in (arg, *aliases)), f"{arg}={value!r:.80}: message does not name it: {e}"
    except Exception as e: pytest.fail(f"{arg}={value!r:.80}: {type(e).__name__}: {e}")
    else: pytest.fail(f"{arg}={value!r:.80}: no error")


# ---- small valid objects, built once ----------------------------------------------------------------------------
@functools.cache
def V():
    "Valid arguments shared by the specs."
    torch.manual_seed(0)
    gsc = federation('spawrious_gsc'); T = fs.oracle_triplets(gsc)
    x, y = torch.randn(40, 1, 8, 8), torch.randint(0, 10, (40,))
    split = mm.mia_split(x[:20], y[:20], x[20:], y[20:], n_known=3)
    res = mm.AttackResult(np.r_[1., 2, 3, 4], np.r_[1, 0, 1, 0], np.r_[1, 0, 1, 0])
    cnn = ms.WidthCNN(8, 1, 10)
    xt, yt, _ = fe.toy_client([[20, 5], [5, 20]])
    tiny = mx.appendix_tables().query("dataset == 'CIFAR-10'")
    runs = pd.DataFrame([dict(dataset=d, method=m, fl='FedAvgM', seed=s, wga=50.0 + s, wga_curve='0.1 0.2',
                              share_CI=0.3, share_AI=0.3, share_SC=0.4)
                         for d in ('CMNIST_GSC',) for m in ('Uniform', 'FedDiverse') for s in range(2)])
    H = ms.hidden_sizes(8)
    fd = tiny_digits_federation(0)
    est = fe.EstimationResult(np.ones((2, 2, 2)), np.ones((2, 2, 2)), np.zeros((2, 3)), np.zeros((2, 3)), [None, None], np.zeros(2), 0.0, 10)
    return dict(fd=fd, est=est, gsc=gsc, N=np.asarray(gsc), T=T, x=x, y=y, split=split, res=res, cnn=cnn, xt=xt, yt=yt, tiny=tiny,
                runs=runs, H=H, rng=np.random.default_rng(0), sched=ms.ChannelSchedule('GFM', H, [0, 1, 2]),
                state=cnn.state_dict(), fset=ms.full_set(H), stats=fsim.simulate_selection(gsc, 'uniform', 3, 3),
                shares=pd.DataFrame(dict(federation=['a'], method=['uniform'], CI=[1.0], AI=[1.0], SC=[1.0])),
                per_client=pd.DataFrame(dict(target=['client'] * 4, client=[0, 1, 0, 1], size=[10, 100, 10, 100],
                                             small=[True, False] * 2, attack=['yeom'] * 4, auc=[.5, .6, .55, .6],
                                             advantage=[0, .1, .05, .1], tpr_1pct=[0, 0, 0, 0], client_acc=[.9] * 4,
                                             method=['OFM'] * 4, n_large=[2] * 4, seed=[0, 0, 1, 1], server_acc=[.9] * 4)))

def _v(**kw):
    "Lazy valid kwargs: '@name' strings are looked up in `V()`."
    return lambda: {k: V()[v[1:]] if isinstance(v, str) and v.startswith('@') else v for k, v in kw.items()}

def spec(fn, valid=dict, aliases=None, **bad): return (fn, valid, bad, aliases or {})

PRESET_F = fx.PRESETS['teaching']
SPECS = {
 # ---- feddiverse.selector
 'feddiverse.selector.selection_options': spec(fs.selection_options, variant=CHOICE),
 'feddiverse.selector.normalise_triplets': spec(fs.normalise_triplets, _v(triplets='@T'), triplets=TRIPS, norm=CHOICE),
 'feddiverse.selector.check_triplets': spec(fs.check_triplets, _v(triplets='@T'), triplets=TRIPS),
 'feddiverse.selector.check_available': spec(fs.check_available, _v(available=[0], K=4), available=[[-1], [4], [1.5], 'x'], K=POS),
 'feddiverse.selector.check_client_types': spec(fs.check_client_types, _v(name='types', types=['CI', 'SC'], K=2),
                                               types=[None, 'x', 3, ['XX', 'CI'], ['CI'], [['CI', 'SC']], [1, 2]]),
 'feddiverse.selector.diversity_rounds': spec(fs.diversity_rounds, _v(triplets='@T', k=3, rounds=2, rng='@rng'),
                                              triplets=TRIPS, k=POS, rounds=POS, rng=OBJ, available=[[-1], [99]],
                                              tol=FLOAT + [-1.0], compiled=['yes', 1]),
 'feddiverse.selector.diversity_round': spec(fs.diversity_round, _v(triplets='@T', k=3, rng='@rng'), triplets=TRIPS, k=POS,
                                              rng=OBJ, available=[[-1], [99]], tol=FLOAT + [-1.0]),
 'feddiverse.selector.selector_name': spec(fs.selector_name, variant=CHOICE),
 'feddiverse.selector.FedDiverseSelector': spec(fs.FedDiverseSelector, _v(triplets='@T'), triplets=TRIPS, variant=CHOICE, tol=FLOAT + [-1.0]),
 'feddiverse.selector.algorithm5_round': spec(fs.algorithm5_round, _v(triplets='@T', k=3, rng='@rng'), triplets=TRIPS, k=POS,
                                               rng=OBJ, t=INT, available=[[-1], [99]], tol=FLOAT + [-1.0]),
 'feddiverse.selector.LiteralFedDiverseSelector': spec(fs.LiteralFedDiverseSelector, _v(triplets='@T'), triplets=TRIPS, tol=FLOAT + [-1.0]),
 'feddiverse.selector.oracle_triplets': spec(fs.oracle_triplets, _v(matrices='@N'), matrices=MATS),
 'feddiverse.selector.perturb_triplets': spec(fs.perturb_triplets, _v(triplets='@T', sigma=0.1), triplets=TRIPS, sigma=FLOAT + [-1.0], seed=INT),
 'feddiverse.selector.triplet_error': spec(fs.triplet_error, _v(estimated='@T', true='@T'), estimated=TRIPS, true=TRIPS),
 'feddiverse.selector.noise_for_error': spec(fs.noise_for_error, _v(triplets='@T', target=0.1), triplets=TRIPS, target=FLOAT + [0.0]),
 'feddiverse.selector.nonnegative_matrices': spec(fs.nonnegative_matrices, _v(matrices='@N'), matrices=MATS),
 'feddiverse.selector.fedrk_weights': spec(fs.fedrk_weights, _v(matrices='@N'), matrices=MATS, floor=PROB),
 'feddiverse.selector.mixture_variance': spec(fs.mixture_variance, lambda: dict(matrices=V()['N'], weights=np.full(24, 1 / 24)),
                                               matrices=MATS, weights=['x', [1, 2], np.full(24, NAN)]),
 'feddiverse.selector.FedRKSelector': spec(fs.FedRKSelector, _v(matrices='@N'), matrices=MATS, floor=PROB,
                                            weights=['x', np.ones(3), np.full(24, NAN), -np.ones(24)]),
 'feddiverse.simulation.selection_stats': spec(fsim.selection_stats, lambda: dict(matrices=V()['N'], chosen=np.zeros((2, 24), int)),
                                              matrices=MATS, chosen=['x', np.zeros((2, 5), int), np.full((2, 24), 2)]),
 'feddiverse.simulation.proxy_losses': spec(fsim.proxy_losses, _v(matrices='@N'), matrices=MATS),
 'feddiverse.registry.make_selector': spec(freg.make_selector, _v(name='uniform', matrices='@N'), name=CHOICE, matrices=MATS, noise=FLOAT + [-1.0]),
 'feddiverse.simulation.simulate_selection': spec(fsim.simulate_selection, _v(fed='@N', selector='uniform', rounds=2, k=3), fed=MATS + [3],
                                                 selector=CHOICE, rounds=POS, k=POS, noise=FLOAT + [-1.0], available=[[-1], [99]]),
 'feddiverse.simulation.share_selectors': spec(fsim.share_selectors, _v(matrices='@N'), matrices=MATS, variants=[('nope',), 3]),
 'feddiverse.simulation.selection_share_table': spec(fsim.selection_share_table, _v(federations=('spawrious_gsc',), rounds=2),
                                                    federations=[('nope',), 3], rounds=POS),
 'feddiverse.simulation.type_share_figure': spec(fsim.type_share_figure, _v(table='@shares', federation='a'), table=FRAME, federation=STR),
 'feddiverse.simulation.frequency_figure': spec(fsim.frequency_figure, _v(stats='@stats'), stats=OBJ, title=[3, None]),
 # ---- feddiverse.estimation
 'feddiverse.estimation.gce_loss': spec(fe.gce_loss, lambda: dict(logits=torch.zeros(4, 2), target=torch.zeros(4, dtype=torch.long)),
                                        logits=TENS, target=TENS, q=PROB + [0.0], reduction=CHOICE),
 'feddiverse.estimation.gce_figure': spec(fe.gce_figure, qs=[(0.0,), (2.0,), ('x',), 3]),
 'feddiverse.estimation.toy_client': spec(fe.toy_client, _v(counts=[[5, 5], [5, 5]]), counts=MATS[:5] + [[[0, 0], [0, 0]]], seed=INT,
                                          noise_dims=INT),
 'feddiverse.estimation.toy_model': spec(fe.toy_model, in_features=POS, n_classes=POS, hidden=POS),
 'feddiverse.estimation.with_head': spec(fe.with_head, lambda: dict(model=fe.toy_model(), n_out=2), model=OBJ, n_out=POS),
 'feddiverse.estimation.split_head': spec(fe.split_head, lambda: dict(model=fe.toy_model()), model=OBJ + [nn.ReLU()]),
 'feddiverse.estimation.train_biased': spec(fe.train_biased, lambda: dict(model=fe.toy_model(), x=V()['xt'], y=V()['yt'], n_classes=2, steps=1),
                                            model=OBJ, x=TENS, y=TENS, n_classes=POS, steps=INT, q=PROB, lr=FLOAT + [0.0], batch_size=POS),
 'feddiverse.estimation.majority_mask': spec(fe.majority_mask, lambda: dict(biased=[fe.toy_model()], x=V()['xt'], y=V()['yt']),
                                             biased=OBJ + [[]], x=TENS, y=TENS, batch_size=POS),
 'feddiverse.estimation.pivot_class': spec(fe.pivot_class, lambda: dict(majority=V()['yt'] == 0, y=V()['yt'], n_classes=2),
                                           majority=TENS, y=TENS, n_classes=POS),
 'feddiverse.estimation.train_attribute_classifier': spec(fe.train_attribute_classifier,
                                           lambda: dict(biased=fe.toy_model(), x=V()['xt'], pseudo=V()['yt'], steps=1),
                                           biased=OBJ, x=TENS, pseudo=TENS, steps=INT, lr=FLOAT + [0.0], batch_size=POS, init=CHOICE),
 'feddiverse.estimation.estimate_matrix': spec(fe.estimate_matrix, lambda: dict(majority=V()['yt'] == 0, y=V()['yt'], n_classes=2, pivot=None,
                                           attribute_pred=None), majority=TENS, y=TENS, n_classes=POS, pivot=[-1, 5, 'x', 1.5]),
 'feddiverse.estimation.EstimationConfig': spec(fe.EstimationConfig, pretrain_rounds=INT, bias_steps=INT, attr_steps=INT, q=PROB + [0.0],
                                                lr=FLOAT + [0.0], batch_size=POS, init=CHOICE, participation=['x', -1, None]),
 'feddiverse.estimation.estimate_client': spec(fe.estimate_client, lambda: dict(model=fe.toy_model(), x=V()['xt'], y=V()['yt'], n_classes=2,
                                           cfg=fe.EstimationConfig(bias_steps=1, attr_steps=1)), model=OBJ, x=TENS, y=TENS, n_classes=POS,
                                           cfg=OBJ[1:], seed=INT),
 'feddiverse.estimation.pretrain': spec(fe.pretrain, _v(model_fn=fe.toy_model, data='@fd'), model_fn=OBJ, data=OBJ,
                                        rounds=INT, participation=['x', -1, None]),
 'feddiverse.estimation.estimate_federation': spec(fe.estimate_federation, _v(model_fn=fe.toy_model, data='@fd'),
                                                   model_fn=OBJ, data=OBJ, cfg=OBJ[1:], seed=INT),
 'feddiverse.estimation.matrix_comparison_figure': spec(fe.matrix_comparison_figure, dict, result=OBJ),
 'feddiverse.estimation.triplet_scatter_figure': spec(fe.triplet_scatter_figure, dict, result=OBJ),
 # ---- feddiverse.experiments
 'feddiverse.experiments.method_label': spec(fx.method_label, _v(method='Uniform'), method=STR),
 'feddiverse.experiments.build_data': spec(fx.build_data, _v(dataset='CMNIST_GSC', preset=PRESET_F), dataset=CHOICE, preset=OBJ, seed=INT),
 'feddiverse.experiments.diversity_run_config': spec(fx.diversity_run_config, _v(preset=PRESET_F, fl='FedAvg'), preset=OBJ, fl=CHOICE, seed=INT),
 'feddiverse.experiments.table1_selector': spec(fx.table1_selector, _v(method='Uniform', data=None), method=CHOICE),
 'feddiverse.experiments.selected_type_shares': spec(fx.selected_type_shares, _v(types=np.array(['CI'])), history=OBJ),
 'feddiverse.experiments.run_diversity': spec(fx.run_diversity, _v(dataset='CMNIST_GSC', method='Uniform', fl='FedAvg', preset=PRESET_F),
                                        dataset=CHOICE, method=CHOICE, fl=CHOICE, preset=OBJ, seed=INT),
 'feddiverse.experiments.run_diversity_grid': spec(fx.run_diversity_grid, _v(preset=PRESET_F, log=None), preset=OBJ, datasets=[('nope',), 3],
                                         methods=[('nope',), 3], fls=[('nope',), 3], seeds=[(-1,), 3]),
 'feddiverse.experiments.paper_grid': spec(fx.paper_grid, _v(preset=PRESET_F, out='/nonexistent/x.csv', log=None), preset=OBJ, out=[3, None]),
 'feddiverse.experiments.estimation_errors': spec(fx.estimation_errors, _v(preset=PRESET_F), preset=OBJ, datasets=[('nope',), 3], seeds=[(-1,), 3]),
 'feddiverse.experiments.table1': spec(fx.table1, _v(runs='@runs'), runs=FRAME, fl=CHOICE),
 'feddiverse.experiments.table3': spec(fx.table3, _v(runs='@runs'), runs=FRAME),
 'feddiverse.experiments.gain_table': spec(fx.gain_table, _v(runs='@runs'), runs=FRAME, fl=CHOICE),
 'feddiverse.experiments.paired_gain': spec(fx.paired_gain, _v(runs='@runs'), runs=FRAME, a=CHOICE, b=CHOICE),
 'feddiverse.experiments.reproduction_table': spec(fx.reproduction_table, _v(runs='@runs'), runs=FRAME),
 'feddiverse.experiments.wga_curve_figure': spec(fx.wga_curve_figure, _v(runs='@runs'), runs=FRAME, dataset=[3, 'nope'], fl=[3, 'nope']),
 'feddiverse.experiments.share_figure': spec(fx.share_figure, _v(runs='@runs'), runs=FRAME, dataset=[3, 'nope']),
 'feddiverse.experiments.regenerate_results': spec(lambda names=('x',), check=False: fx.regenerate_results(*names, check=check),
                                                   aliases={'names': ('name', 'names')}, names=[(), (3,)], check=['yes', 2]),   # an unknown target: the tool's own error
 'feddiverse.experiments.measure_overhead': spec(fx.measure_overhead, dataset=CHOICE, preset=[3, 'x'], seed=INT, selection_rounds=POS),
 'feddiverse.experiments.demo_report': spec(fx.demo_report, lambda: dict(runs=V()['runs'], summary=V()['runs'], preset=PRESET_F, est=V()['est'], wall=1.0),
                                            runs=FRAME, summary=FRAME[:4], preset=OBJ, wall=FLOAT),
 'feddiverse.experiments.demo': spec(fx.demo, _v(out='/nonexistent/demo.html', log=None), rounds=POS[1:], seeds=[(-1,), 3], out=[3, None]),
 'feddiverse.experiments.main': spec(fx.main, _v(argv=['--help-not']), argv=[3, [3], 'x']),
 'feddiverse.experiments.DiversityPreset': spec(lambda **kw: fx.dataclasses.replace(PRESET_F, **kw), rounds=POS, kappa=POS, scale=FLOAT + [0.0],
                                       img_size=POS, lr=FLOAT + [0.0], batch_size=POS, local_epochs=POS),
 # ---- modelhet.submodels
 'modelhet.submodels.hidden_sizes': spec(ms.hidden_sizes, _v(u=8), u=POS, rate=PROB + [0.0]),
 'modelhet.submodels.Scaler': spec(ms.Scaler, rate=PROB + [0.0]),
 'modelhet.submodels.make_norm': spec(ms.make_norm, _v(norm='static', channels=4), norm=CHOICE, channels=POS),
 'modelhet.submodels.WidthCNN': spec(ms.WidthCNN, _v(u=4, in_channels=1), u=POS, in_channels=POS, n_classes=POS, rate=PROB + [0.0], norm=CHOICE),
 'modelhet.submodels.count_params': spec(ms.count_params, dict, model=OBJ),
 'modelhet.submodels.ChannelSet': spec(ms.ChannelSet, lambda: dict(outs=(torch.arange(2),), ins=(torch.arange(1),)),
                                       outs=[None, 3, 'x'], ins=[None, 3, 'x'], rate=PROB + [0.0], label=[3, None]),
 'modelhet.submodels.full_set': spec(ms.full_set, _v(hidden='@H'), hidden=[None, 'x', [0], [-1, 2], [1.5]]),
 'modelhet.submodels.random_set': spec(ms.random_set, _v(hidden='@H', rate=0.5, rng='@rng'), hidden=[None, 'x', [0], [-1]], rate=PROB + [0.0],
                                       rng=OBJ, coupling=CHOICE),
 'modelhet.submodels.submatrix_set': spec(ms.submatrix_set, _v(hidden='@H', block=(0, 0)), hidden=[None, 'x', [0]], block=[(5, 0), (0,), 'x', None],
                                          rate=PROB + [0.0]),
 'modelhet.submodels.quadrant_sets': spec(ms.quadrant_sets, _v(hidden='@H'), hidden=[None, 'x', [0]], rate=PROB + [0.0]),
 'modelhet.submodels.param_index': spec(ms.param_index, _v(name='fc.weight', cs='@fset'), name=[None, 3, 'nope'], cs=OBJ),
 'modelhet.submodels.extract_state': spec(ms.extract_state, _v(global_state='@state', cs='@fset'), global_state=OBJ, cs=OBJ),
 'modelhet.submodels.extract_submodel': spec(ms.extract_submodel, _v(global_model='@cnn', cs='@fset'), global_model=OBJ, cs=OBJ),
 'modelhet.submodels.aggregate_submodels': spec(ms.aggregate_submodels, lambda: dict(global_state=V()['state'], client_states=[V()['state']],
                                                sets=[V()['fset']], weights=[1.0]), global_state=OBJ, client_states=[None, 3, []],
                                                sets=[None, 3, []], weights=[[NAN], [-1.0], ['x'], None]),
 'modelhet.submodels.coverage': spec(ms.coverage, lambda: dict(global_state=V()['state'], sets=[V()['fset']]), global_state=OBJ, sets=[None, 3, [3]]),
 'modelhet.submodels.ChannelSchedule': spec(ms.ChannelSchedule, _v(method='GFM', hidden='@H', small=[0, 1]), method=CHOICE,
                                            hidden=[None, 'x', [0]], small=[None, 'x', [-1]], rate=PROB + [0.0], n_groups=POS, seed=INT),
 'modelhet.submodels.coverage_heatmap': spec(ms.coverage_heatmap, _v(schedule='@sched'), schedule=OBJ, t=INT, layer=[-1, 99, 'x', None]),
 'modelhet.submodels.schedule_timeline': spec(ms.schedule_timeline, _v(schedule='@sched'), schedule=OBJ, rounds=POS),
 'modelhet.submodels.small_clients': spec(ms.small_clients, _v(sizes=np.r_[5, 3, 9], n_large=1), sizes=[None, 'x', [NAN, 1]], n_large=INT + [9]),
 'modelhet.submodels.run_submodels': spec(ms.run_submodels, _v(method='GFM', data=None, n_large=2, config=None), method=CHOICE),
 'modelhet.submodels.submodel_client_accuracies': spec(ms.submodel_client_accuracies, _v(data=None), run=OBJ),
 # ---- modelhet.mia
 'modelhet.mia.AttackResult': spec(mm.AttackResult, lambda: dict(scores=[1., 2], labels=[1, 0], preds=[1, 0]),
                                   scores=['x', [NAN, 1.0], [1.0]], labels=[[2, 0], 'x', [1]], preds=['x', [1]]),
 'modelhet.mia.roc_auc': spec(mm.roc_auc, _v(scores=[1., 2], labels=[1, 0]), scores=['x', [NAN, 1.0], [1.0]], labels=[[1, 1], [2, 0], 'x', [1]]),
 'modelhet.mia.roc_curve': spec(mm.roc_curve, _v(scores=[1., 2], labels=[1, 0]), scores=['x', [NAN, 1.0], [1.0]], labels=[[1, 1], [2, 0], 'x']),
 'modelhet.mia.min_nonmembers': spec(mm.min_nonmembers, _v(fpr=0.1), fpr=PROB + [0.0]),
 'modelhet.mia.tpr_at_fpr': spec(mm.tpr_at_fpr, _v(scores=[1., 2, 3, 4], labels=[1, 0, 1, 0], strict_resolution=False),
                                 scores=['x', [NAN, 1, 2, 3]], labels=[[1, 1, 1, 1], 'x', [2, 0, 1, 0]], fpr=PROB + [0.0]),
 'modelhet.mia.advantage': spec(mm.advantage, _v(preds=[1, 0], labels=[1, 0]), preds=['x', [2, 0], [1]], labels=[[1, 1], 'x', [2, 0]]),
 'modelhet.mia.best_advantage': spec(mm.best_advantage, _v(scores=[1., 2], labels=[1, 0]), scores=['x', [NAN, 1.0]], labels=[[1, 1], 'x']),
 'modelhet.mia.bootstrap_ci': spec(mm.bootstrap_ci, lambda: dict(metric=mm.MIA_METRICS['auc'], res=V()['res'], n_boot=10),
                                   metric=[None, 3, 'x'], res=OBJ, n_boot=POS, level=PROB + [0.0], seed=INT),
 'modelhet.mia.attack_metrics': spec(mm.attack_metrics, _v(res='@res'), res=OBJ, n_boot=INT, seed=INT),
 'modelhet.mia.model_outputs': spec(mm.model_outputs, _v(model='@cnn', x='@x', y='@y'), model=OBJ, x=TENS, y=TENS, batch_size=POS, seed=INT),
 'modelhet.mia.MIASplit': spec(mm.MIASplit, lambda: {k: getattr(V()['split'], k) for k in ('x', 'y', 'labels', 'x_known', 'y_known', 'member_idx', 'nonmember_idx')},
                               x=TENS, y=TENS, labels=['x', [2, 0]]),
 'modelhet.mia.n_known_members': spec(mm.n_known_members, _v(n_members=10), n_members=POS),
 'modelhet.mia.mia_split': spec(mm.mia_split, lambda: dict(x_members=V()['x'][:20], y_members=V()['y'][:20], x_pool=V()['x'][20:], y_pool=V()['y'][20:]),
                                 x_members=TENS, y_members=TENS, x_pool=TENS, y_pool=TENS, cap=POS, n_known=INT[1:] + [99], seed=INT,
                                 strata=['x', 3, (np.zeros(20),), (np.zeros(20), np.zeros(3)), (-np.ones(20), np.zeros(20)),
                                         (np.full(20, 0.5), np.zeros(20)), (np.zeros(20), np.full(20, NAN)), (np.ones(20), np.zeros(20))]),
 'modelhet.mia.fit_classifier': spec(mm.fit_classifier, lambda: dict(model=ms.WidthCNN(4, 1, 10), x=V()['x'], y=V()['y'], epochs=1),
                                     model=OBJ, x=TENS, y=TENS, epochs=INT, lr=FLOAT + [0.0], batch_size=POS, seed=INT),
 'modelhet.mia.yeom_attack': spec(mm.yeom_attack, _v(model='@cnn', split='@split'), model=OBJ, split=OBJ, batch_size=POS, seed=INT),
 'modelhet.mia.Shadows': spec(mm.Shadows, lambda: dict(models=[V()['cnn']] * 2, in_pool=np.zeros((2, 3), bool)), models=[None, 3, 'x'],
                              in_pool=['x', np.zeros((3, 3), bool), None]),
 'modelhet.mia.train_shadows': spec(mm.train_shadows, lambda: dict(model_fn=lambda: ms.WidthCNN(4, 1, 10), x_pool=V()['x'], y_pool=V()['y'], n_shadows=2,
                                    train_fn=lambda m, x, y, s: m), model_fn=OBJ, x_pool=TENS, y_pool=TENS, n_shadows=POS, p_in=PROB + [0.0],
                                    train_fn=[3, 'x'], seed=INT),
 'modelhet.mia.lira_offline': spec(mm.lira_offline, lambda: dict(model=V()['cnn'], split=V()['split'], shadows=mm.Shadows([V()['cnn']] * 2, np.zeros((2, 1), bool))),
                                   model=OBJ, split=OBJ, shadows=OBJ, in_mask=['x', np.ones((2, 34), bool), np.ones((3, 3), bool)], batch_size=POS, seed=INT),
 'modelhet.mia.disjoint_pool': spec(mm.disjoint_pool, _v(x_pool='@x', y_pool='@y', x_exclude='@x'), x_pool=TENS, y_pool=TENS, x_exclude=TENS),
 'modelhet.mia.lira_population': spec(mm.lira_population, lambda: dict(model=V()['cnn'], split=V()['split'], model_fn=lambda: ms.WidthCNN(4, 1, 10),
                                      x_pool=V()['x'][:0], y_pool=V()['y'][:0], n_shadows=2, train_fn=lambda m, x, y, s: m),
                                      model=OBJ, split=OBJ, model_fn=OBJ, x_pool=TENS, y_pool=TENS, n_shadows=POS + [3], seed=INT),
 'modelhet.mia.distill_trajectory': spec(mm.distill_trajectory, lambda: dict(teacher=V()['cnn'], model_fn=lambda: ms.WidthCNN(4, 1, 10), x_dl=V()['x'],
                                         x=V()['x'], y=V()['y'], epochs=1), teacher=OBJ, model_fn=OBJ, x_dl=TENS, x=TENS, y=TENS, epochs=INT,
                                         lr=FLOAT + [0.0], batch_size=POS, seed=INT),
 'modelhet.mia.tmia_attack': spec(mm.tmia_attack, lambda: dict(model=V()['cnn'], split=V()['split'], model_fn=lambda: ms.WidthCNN(4, 1, 10),
                                  x_aux=V()['x'], y_aux=V()['y'], distill_epochs=1, train_fn=lambda m, x, y, s: m, mlp_epochs=1),
                                  model=OBJ, split=OBJ, model_fn=OBJ, x_aux=TENS, y_aux=TENS, distill_epochs=INT, mlp_epochs=POS, seed=INT),
 'modelhet.mia.metrics_table': spec(mm.metrics_table, lambda: dict(results=[V()['res']]), results=[None, 3, [3]], n_boot=INT),
 'modelhet.mia.mia_anatomy': spec(mm.mia_anatomy, _v(res='@res'), res=OBJ, threshold=['x', NAN], bins=POS),
 # ---- modelhet.experiments
 'modelhet.experiments.spread_table': spec(mx.spread_table, _v(df='@tiny'), df=FRAME, metrics=[('nope',), 3]),
 'modelhet.experiments.frequency_spearman': spec(mx.frequency_spearman, _v(df='@tiny'), df=FRAME, metrics=[3]),
 'modelhet.experiments.taxonomy_T': spec(mx.taxonomy_T, _v(method='GFM'), method=CHOICE),
 'modelhet.experiments.tradeoff_scatter': spec(mx.tradeoff_scatter, _v(df='@tiny'), df=FRAME, n_large=INT + [99], privacy=CHOICE),
 'modelhet.experiments.modelhet_headlines': spec(mx.modelhet_headlines, _v(df='@tiny'), df=FRAME, auc=CHOICE),
 'modelhet.experiments.ModelHetPreset': spec(mx.ModelHetPreset, rounds=POS, local_epochs=POS, batch_size=POS, lr=FLOAT + [0.0], u=POS, rate=PROB + [0.0],
                                     attacks=[('nope',), 3], n_shadows=POS, weighting=CHOICE),
 'modelhet.experiments.client_mia_split': spec(mx.client_mia_split, _v(data='@fd', k=0), data=OBJ, k=INT + [99], cap=POS, seed=INT),
 'modelhet.experiments.attack_clients': spec(mx.attack_clients, _v(run=None, data=None), preset=OBJ, seed=INT),
 'modelhet.experiments.run_modelhet': spec(mx.run_modelhet, _v(method='GFM', data=None, n_large=2), method=CHOICE, preset=OBJ, n_large=INT),
 'modelhet.experiments.run_preset': spec(mx.run_preset, _v(path=None, progress=False), preset=OBJ, methods=[('nope',), 3], path=[3]),
 'modelhet.experiments.summarize': spec(mx.summarize, _v(per_client='@per_client'), per_client=FRAME, who=CHOICE, target=CHOICE),
 'modelhet.experiments.real_federation': spec(mx.real_federation, _v(root='/nonexistent'), root=STR, name=CHOICE, seed=INT,
                                              num_clients=POS, alpha=FLOAT + [0.0]),
 'modelhet.experiments.lira_comparison': spec(mx.lira_comparison, _v(per_client='@per_client'), per_client=FRAME),
 'modelhet.experiments.load_results': spec(mx.load_results, path=[3, ['x']]),   # a missing file is a FileNotFoundError saying what to run
 'modelhet.experiments.compare_to_thesis': spec(mx.compare_to_thesis, lambda: dict(summary=mx.summarize(V()['per_client'])), summary=FRAME,
                                                dataset=CHOICE, attack=CHOICE),
 'modelhet.experiments.size_leakage_correlation': spec(mx.size_leakage_correlation, _v(per_client='@per_client'), per_client=FRAME,
                                                       metric=CHOICE, attack=CHOICE),
 # ---- the validators themselves
 'feddiverse.selector.check_rng': spec(fs.check_rng, _v(rng='@rng'), rng=OBJ),
 'feddiverse.selector.as_float_array': spec(fs.as_float_array, _v(x=[1.0], name='v'), aliases={'x': ('v',)}, x=['x', {'a': 1}, [[1], [2, 3]]]),
 'feddiverse.selector.client_matrices': spec(fs.client_matrices, _v(matrices='@N'), matrices=MATS),
 'feddiverse.estimation.check_estimation_arguments': spec(fe.check_estimation_arguments, _v(model=fe.toy_model()), model=OBJ, x=TENS, n_classes=POS + [1], lr=FLOAT + [0.0]),
 'feddiverse.experiments.check_runs': spec(fx.check_runs, _v(runs='@runs'), runs=FRAME),
 'feddiverse.experiments.check_names': spec(fx.check_names, _v(name='datasets', values=('CMNIST_GSC',), choices=fx.DIVERSITY_DATASETS),
                                            aliases={'values': ('datasets',)}, values=[3, ('nope',), None]),
 'modelhet.mia.check_mia_arguments': spec(mm.check_mia_arguments, _v(model='@cnn'), model=OBJ, x=TENS, seed=INT, split=OBJ),
 'modelhet.mia.check_scores': spec(mm.check_scores, _v(scores=[1.0]), scores=['x', [NAN], [], [[1.0]]]),
 'modelhet.mia.check_labels': spec(mm.check_labels, _v(labels=[1, 0]), labels=['x', [2], [[1]]]),
 'modelhet.submodels.check_hidden': spec(ms.check_hidden, _v(hidden=[4, 8]), hidden=[None, 'x', [0], [1.5], 3]),
 'modelhet.submodels.check_state': spec(ms.check_state, _v(name='global_state', state='@state'), aliases={'state': ('global_state',)},
                                        state=OBJ),
 'modelhet.experiments.check_frame': spec(mx.check_frame, _v(name='df', df='@tiny', columns=('method',)), aliases={'df': ('df',)}, df=FRAME[:4]),
 'modelhet.experiments.check_choice_all': spec(mx.check_choice_all, _v(name='metrics', values=('a',), choices=('a', 'b')),
                                               aliases={'values': ('metrics',)}, values=[3, ('c',), None]),
}
SPECS['feddiverse.experiments.DiversityPreset'][3].update({k: (f'DiversityPreset.{k}',) for k in ('rounds', 'kappa', 'scale', 'img_size', 'lr', 'batch_size', 'local_epochs')})
SPECS['modelhet.experiments.ModelHetPreset'][3].update({k: (f'ModelHetPreset.{k}',) for k in ('rounds', 'local_epochs', 'batch_size', 'lr', 'u', 'rate', 'n_shadows', 'weighting')})

# argument-free entry points and result containers: checked by calling them / building them validly
NO_ARGUMENTS = {'modelhet.experiments.appendix_tables', 'modelhet.experiments.table6', 'modelhet.experiments.table7',
                'modelhet.experiments.table8', 'modelhet.experiments.table10', 'modelhet.submodels.taxonomy_table',
                'feddiverse.experiments.load_teaching'}
CONTAINERS = {'feddiverse.simulation.SelectionStats', 'feddiverse.estimation.EstimationResult', 'modelhet.submodels.SubmodelRun'}

@pytest.mark.parametrize('name', sorted(SPECS))
@SETTINGS
@given(data=st.data())
def test_malformed_input_gets_a_clear_error(name, data):
    "One malformed argument (the others valid) gets a ValueError/TypeError naming it, quickly."
    fn, valid, bad, aliases = SPECS[name]
    arg = data.draw(st.sampled_from(sorted(bad)), label='argument')
    value = data.draw(st.sampled_from(bad[arg]), label=arg)
    kw = {**valid(), arg: value}
    assert_clear(lambda: fn(**kw), arg, value, aliases.get(arg, ()))

@pytest.mark.parametrize('name', sorted(NO_ARGUMENTS))
def test_argument_free_entry_points_return_clean_tables(name):
    "Entry points without arguments return tables with no missing cells where values are published."
    out = getattr(MODULES[name.rsplit('.', 1)[0]], name.rsplit('.', 1)[1])()
    assert isinstance(out, pd.DataFrame) and len(out) and np.isfinite(out.select_dtypes('number').to_numpy()[:, :1]).all()

def test_result_containers_hold_what_they_say():
    "The dataclasses that carry results build from valid parts and expose their fields."
    st_ = V()['stats']; assert isinstance(st_, fsim.SelectionStats) and st_.selected.shape == (3, 24)
    r = fe.EstimationResult(np.ones((2, 2, 2)), np.ones((2, 2, 2)), np.zeros((2, 3)), np.zeros((2, 3)), [None, None], np.zeros(2), 0.0, 10)
    assert r.error()['euclid_mean'] == 0
    run = ms.SubmodelRun('GFM', [0], [V()['fset']], V()['state'], [V()['state']], pd.DataFrame(), dict(u=8, in_channels=1, n_classes=10))
    assert isinstance(run.global_model(), ms.WidthCNN)

CONSTANTS = {n for m, mod in MODULES.items() for n in (f'{m}.{k}' for k in mod.__all__) if not callable(getattr(mod, n.rsplit('.', 1)[1]))}

def test_constants_are_immutable_data():
    "Public constants are numbers, strings, tuples, dicts or presets: data, never callables with hidden state."
    for n in CONSTANTS:
        v = getattr(MODULES[n.rsplit('.', 1)[0]], n.rsplit('.', 1)[1])
        assert isinstance(v, (int, float, str, tuple, dict, mx.ModelHetPreset)), n

# ---- the four forms of interaction matrices agree ------------------------------------------------------------------
MATRIX_FUNCTIONS = {'feddiverse.selector.oracle_triplets': fs.oracle_triplets, 'feddiverse.selector.fedrk_weights': fs.fedrk_weights,
                    'feddiverse.simulation.proxy_losses': fsim.proxy_losses, 'feddiverse.selector.nonnegative_matrices': fs.nonnegative_matrices,
                    'feddiverse.selector.check_triplets': lambda N: fs.check_triplets(fs.oracle_triplets(N)),
                    'feddiverse.selector.FedRKSelector': lambda N: fs.FedRKSelector(N).weights,
                    'feddiverse.selector.mixture_variance': lambda N: fs.mixture_variance(N, np.full(len(np.asarray(N)), 0.1)),
                    'feddiverse.simulation.selection_stats': lambda N: fsim.selection_stats(N, np.eye(len(np.asarray(N)), dtype=int)[:3]).union_triplets,
                    'feddiverse.simulation.simulate_selection': lambda N: fsim.simulate_selection(N, 'feddiverse[sign-invariant]', 5, 3).selected,
                    'feddiverse.registry.make_selector': lambda N: freg.make_selector('feddiverse[paper-literal]', N).triplets,
                    'feddiverse.simulation.share_selectors': lambda N: fsim.share_selectors(N)['fedrk'].weights}

@pytest.mark.parametrize('name', sorted(MATRIX_FUNCTIONS))
@settings(max_examples=5, deadline=None, derandomize=True)
@given(fed=st.sampled_from(['waterbirds_dist', 'spawrious_gai', 'spawrious_4']))
def test_matrix_forms_agree(name, fed):
    "FederationSpec, numpy, nested list and torch tensor give the same result."
    spec_ = federation(fed); N = np.asarray(spec_)
    outs = [np.asarray(MATRIX_FUNCTIONS[name](x), float) for x in (spec_, N, N.tolist(), torch.as_tensor(N))]
    for o in outs[1:]: np.testing.assert_allclose(o, outs[0])

# numeric helpers the one-round and the many-round selection share, and the plain one-round reference: their malformed
# arguments are the fuzz table's (`tools/fuzz_controls_lower.py`); `diversity_round` and `diversity_rounds` are
# asserted equal to them
HELPERS = {'feddiverse.selector.reference_round', 'feddiverse.selector.draw_by_weight', 'feddiverse.selector.pick_best',
           'feddiverse.selector.round_draws'}
COVERED = ({f'hetfl_explore.{k}' for k in SPECS} | {f'hetfl_explore.{k}' for k in NO_ARGUMENTS | CONTAINERS | CONSTANTS | HELPERS})

def test_every_public_name_is_covered():
    "Every name in the `__all__` of the six modules is in `COVERED`."
    public = {f'hetfl_explore.{m}.{n}' for m, mod in MODULES.items() for n in mod.__all__}
    assert public - COVERED == set()


# ---- hostile-input families of the modelhet entry points ----------------------------------------------------------
X_, Y_ = torch.zeros(10, 1, 8, 8), torch.zeros(10, dtype=torch.long)
# (name, call with a bad labels tensor paired with 10 inputs, argument named): lengths, negative, float and NaN inputs
PAIRED_CASES = [
    ('model_outputs', lambda y: mm.model_outputs(ms.WidthCNN(4, 1, 10), X_, y), 'y'),
    ('mia_split.members', lambda y: mm.mia_split(X_, y, X_, Y_), 'y_members'),
    ('mia_split.pool', lambda y: mm.mia_split(X_, Y_, X_, y), 'y_pool'),
    ('fit_classifier', lambda y: mm.fit_classifier(ms.WidthCNN(4, 1, 10), X_, y, epochs=1), 'y'),
    ('train_shadows', lambda y: mm.train_shadows(lambda: ms.WidthCNN(4, 1, 10), X_, y, 2, train_fn=lambda m, x, yy, s: m), 'y_pool'),
    ('disjoint_pool', lambda y: mm.disjoint_pool(X_, y, X_[:1]), 'y_pool'),
]
BAD_LABELS = st.one_of(st.integers(0, 9).filter(lambda n: n != 10).map(lambda n: torch.zeros(n, dtype=torch.long)),   # too few
                       st.integers(11, 14).map(lambda n: torch.zeros(n, dtype=torch.long)),                           # too many
                       st.integers(-5, -1).map(lambda v: torch.full((10,), v)),                                       # negative
                       st.just(torch.full((10,), 0.5)))                                                               # not integers

@pytest.mark.parametrize('name,call,arg', PAIRED_CASES, ids=[c[0] for c in PAIRED_CASES])
@SETTINGS
@given(y=BAD_LABELS)
def test_labels_must_pair_with_their_inputs(name, call, arg, y):
    "Labels of the wrong length, negative or fractional are refused naming the labels' argument."
    assert_clear(lambda: call(y), arg, y)

@SETTINGS
@given(bad=st.sampled_from([float('nan'), float('inf'), -float('inf')]), where=st.integers(0, 9))
def test_inputs_must_be_finite(bad, where):
    x = X_.clone(); x.view(10, -1)[where, 0] = bad
    assert_clear(lambda: mm.model_outputs(ms.WidthCNN(4, 1, 10), x, Y_), 'x', bad)

@SETTINGS
@given(label=st.integers(10, 50))
def test_labels_beyond_the_models_classes_are_refused(label):
    assert_clear(lambda: mm.model_outputs(ms.WidthCNN(4, 1, 10), X_, torch.full((10,), label)), 'y', label)

@SETTINGS
@given(k=st.sampled_from([-1, 10, 99, 1.5, True, None, 'x', float('nan')]))
def test_client_ids_of_the_per_client_split(k):
    assert_clear(lambda: mx.client_mia_split(V()['fd'], k), 'k', k)

@SETTINGS
@given(small=st.one_of(st.lists(st.integers(0, 9), min_size=1, max_size=3).map(lambda l: l + l[:1]),
                       st.lists(st.integers(0, 9), max_size=2).map(lambda l: l + [-1]), st.just([0.5])))
def test_small_client_ids_refuse_repeats_negatives_and_fractions(small):
    assert_clear(lambda: ms.ChannelSchedule('GFM', V()['H'], small), 'small', small, aliases=('small[0]', 'small[1]', 'small[2]', 'small[3]'))

@SETTINGS
@given(sizes=st.sampled_from([[-5, 3, 9], [5.5, 3, 9], [np.nan, 3, 9], 'abc']))
def test_client_sizes_are_counts(sizes):
    assert_clear(lambda: ms.small_clients(sizes, 1), 'sizes', sizes)

def _preset_numbers():
    import dataclasses
    return [(f.name, f.default) for f in dataclasses.fields(mx.ModelHetPreset) if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)]

@pytest.mark.parametrize('field,default', _preset_numbers())
@SETTINGS
@given(bad=st.sampled_from(['x', True, None, float('nan'), -float('inf'), [1]]))
def test_preset_numbers_take_numpy_scalars_and_refuse_junk(field, default, bad):
    "Every numeric field of ModelHetPreset: a numpy scalar of its default is accepted, junk refused naming the field."
    mx.ModelHetPreset(**{field: np.float64(default) if isinstance(default, float) else np.int64(default)})
    assert_clear(lambda: mx.ModelHetPreset(**{field: bad}), field, bad, aliases=(f'ModelHetPreset.{field}',))
