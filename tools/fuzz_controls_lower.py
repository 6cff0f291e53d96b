"""Fuzz controls of the lower parts of the package: `foundation`, `engine`, `selection`, `feddiverse`, `fairness`.

Each control is a valid call `(entry, {argument: (valid value, kind)})`; `tools/fuzz.py` mutates one argument at a time
by its kind. Loaders read small files in their real formats, written to a temporary folder here (nothing downloads).
"""
from __future__ import annotations
import numpy as np

# documented valid inputs of one argument: {(entry, argument): {mutant names}}
VALID_MUTANTS = {
    **{('Reports', a): {'nan entry'}   # NaN: not measured
       for a in ('loss', 'loss_before', 'update_norm', 'time', 'energy')},
    ('as_float_array', 'x'): {'empty'},   # no entries: an empty float array
    **{('FederatedData', a): {'array', 'list'} if a.startswith('x') else {'array'}   # read as the tensors they hold
       for a in ('x', 'y', 'a', 'x_test', 'y_test', 'a_test')},
    ('estimate_matrix', 'pivot'): {'None'},   # no pivot class found: the CI-only fallback of the chapter
    ('level_count', 'given'): {'None'},   # None: the count is inferred from the labels
    ('fake_mnist', 'n_train'): {'0'},   # an IDX file of no items is a valid file (as `write_idx` writes)
    ('fake_mnist', 'n_test'): {'0'},
    ('make_federated', 'test_per_group'): {'0'},   # no held-out test set carved (0 is allowed by design)
    ('as_array', 'value'): {'empty', 'nan entry', 'inf entry'},   # the reader converts; `check_array` judges entries
    ('participation_figure', 'trace'): {'empty', 'nan entry'},   # no rounds yet; a round not recorded
    ('as_labels', 'values'): {'empty', 'label past the end'},   # no rows; labels have no upper bound until counted
    ('parse_characteristics', 'text'): {'str subclass'},   # read by its characters, as a str
    ('placement', 'client'): {'str subclass'},   # parsed text, read as a str
    ('placement', 'interpretation'): {'str subclass'},
    ('round_estimates', 'ids'): {'empty'},   # no client to estimate
    ('round_draws', 'available'): {'empty', 'None'},   # nobody available: no picks, as in `diversity_round`; None: all
    ('check_finite', 'value'): {'empty', 'flattened'},   # no entries: none is NaN; any shape is scanned
    ('gather_rows', 'x'): {'nan entry', 'inf entry', 'flattened'},
      # a gather copies values without judging them; 1-D pools
    ('gather_rows', 'rows'): {'one short'},   # any number of rows
    ('write_idx', 'array'): {'empty'},   # an IDX file of no items is valid: `fake_mnist(n_test=0)` writes one
    ('curves_figure', 'metric'): {'str subclass'},   # a column name, read by its characters, as a str
}

# entry points whose valid results hold NaN or inf by design: {name: why}
NONFINITE_OK = {
    'Reports': "a client's loss, loss before training, update norm, time or energy may be NaN: not measured",
    'as_array': 'the reader returns the numbers it was given; NaN and inf are judged by `check_array`',
    'gather_rows': 'a gather returns the rows it was asked for, NaN rows included',
    'compare_selectors': 'a run that never reaches the target accuracy has its time to target NaN (not reached)',
    'history_metrics': 'a run that never reaches the target accuracy has its time to target NaN (not reached)',
}

SIDE_EFFECTS = set()


def _loader_files() -> dict:
    "Small datasets in their real formats, written to a temporary folder: what the loaders read (nothing downloads)."
    import atexit, json, os, pickle, shutil, tempfile
    from hetfl_explore.foundation import loaders as L
    tmp = tempfile.mkdtemp(prefix='hetfl_fuzz_loaders_')
    atexit.register(shutil.rmtree, tmp, True)   # the parent removes it; forked calls exit without cleanup
    roots = {n: os.path.join(tmp, n) for n in ('mnist', 'celeba', 'fairface', 'utkface', 'waterbirds', 'spawrious',
                                               'cifar', 'leaf')}
    L.fake_mnist(roots['mnist'], n_train=12,
                 n_test=6); L.fake_celeba(roots['celeba']); L.fake_fairface(roots['fairface'])
    L.fake_utkface(roots['utkface']); L.fake_waterbirds(roots['waterbirds']); L.fake_spawrious(roots['spawrious'])
    g = np.random.default_rng(0)
    cifar = os.path.join(roots['cifar'], 'cifar-10-batches-py'); os.makedirs(cifar)
    for f in [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']:
        with open(os.path.join(cifar, f), 'wb') as fh:
            pickle.dump({b'data': g.integers(0, 256, (2, 3072), dtype=np.uint8), b'labels': [0, 1]}, fh)
    for split in ('train', 'test'):
        os.makedirs(os.path.join(roots['leaf'], split))
        users = {f'w{i}': {'x': g.random((2, 784)).round(3).tolist(), 'y': [i, i + 1]} for i in range(2)}
        with open(os.path.join(roots['leaf'], split, 'all_data_0.json'), 'w') as fh:
            json.dump({'users': list(users), 'num_samples': [2, 2], 'user_data': users}, fh)
    png = sorted(p for p in __import__('pathlib').Path(roots['waterbirds']).rglob('*.jpg'))[:2]
    return dict(tmp=tmp, png=[str(p) for p in png], **roots)


def _foundation() -> dict:
    "Controls of `foundation`: core helpers, federations, generated datasets, figures and the dataset loaders."
    import os, pathlib, torch, pandas as pd
    from hetfl_explore.foundation.core import check_int, paired_differences
    from hetfl_explore.foundation.data import tiny_digits_federation, federation, Stacked
    from hetfl_explore.foundation.datasets import gaussian_spurious, shapes, FACE_TRAITS
    from hetfl_explore.foundation.loaders import fake_mnist
    import plotly.graph_objects as go
    from dataclasses import dataclass
    f = _loader_files()
    fed = tiny_digits_federation(num_clients=4, min_size=10, n_test=40)
    spec = federation('spawrious_gsc')
    N = np.array([[3., 1.], [2., 4.]]); Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]],
                                                       [[2., 2.], [2., 2.]]])
    feats = gaussian_spurious(N * 5, seed=0)
    imgs = shapes(N * 2, seed=0, size=8)
    runs = pd.DataFrame([dict(arm=arm, seed=s,
                              v=s + (0.5 if arm == 'a' else 0.0) + 0.01 * (s % 3)) for s in range(10) for arm in 'ab'])
    diff = paired_differences(runs, 'arm', 'a', 'b', 'v').iloc[0]
    same = paired_differences(runs.assign(v=runs.seed * 0.1 + np.where(runs.arm == 'a', 0.001, 0) * (-1) ** runs.seed),
                              'arm', 'a', 'b', 'v').iloc[0]
    @dataclass
    class Box:
        size: int = 3
    y, a = np.arange(40) % 2, (np.arange(40) // 2) % 2
    levels = {k: torch.tensor([.2, .8]) for k in FACE_TRAITS}
    geometry = dict(cx=torch.full((2, 1, 1), 8.), cy=torch.full((2, 1, 1), 8.), rx=torch.full((2, 1, 1), 5.),
                    ry=torch.full((2, 1, 1), 6.), bg=torch.full((2, 3), .5), hair=torch.full((2, 3), .2))
    fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 2], mode='markers+text', text=['a', 'b', 'c']))
    fig.update_layout(width=300, height=200)
    fed_args = dict(x=(fed.x, 'tensor'), y=(fed.y, 'tensor_labels'), a=(fed.a, 'tensor_labels'),
                    client_idx=(fed.client_idx, 'obj'),
                    x_test=(fed.x_test, 'tensor'), y_test=(fed.y_test, 'tensor_labels'),
                    a_test=(fed.a_test, 'tensor_labels'),
                    n_classes=(fed.n_classes, 'size'), n_attrs=(fed.n_attrs, 'size'))
    return {
     'foundation.core': [('as_array', dict(name='value', value=(np.array([1., 2.]), 'array'), ndim=1)),
                         ('assert_not_significant', dict(diff=(same, 'obj'), name=('same', 'obj'))),
                         ('assert_paired', dict(diff=(diff, 'obj'), sign=(1, 'choice'), name=('a beats b', 'obj'))),
                         ('check_by_name', dict(rules=({'count': lambda n, v: check_int(n, v, lo=0)}, 'obj'),
                                                kinds=({'k': 'count'}, 'obj'),
                                                k=(2, 'count'))),
                         ('paired_differences', dict(runs=(runs, 'obj'), arm=('arm', 'choice'), a=('a', 'choice'),
                                                     b=('b', 'choice'),
                                                     value=('v', 'choice'), by=((), 'obj'), seed=('seed', 'choice'))),
                         ('results_path', dict(name=('fuzz.csv', 'obj'))),
                         ('source_table', dict(name=('nemeth2025_table8.csv', 'obj'))),
                         ('validate_fields', dict(obj=(Box(), 'obj'), size=lambda n, v: check_int(n, v, lo=1)))],
     'foundation.data': [('FederatedData', fed_args),
                         ('FederationSpec', dict(name=(spec.name, 'obj'), client_types=(spec.client_types, 'obj'),
                                                 class_names=(spec.class_names, 'obj'),
                                                 attr_names=(spec.attr_names, 'obj'),
                                                 published=(spec.published, 'obj'), derived=(spec.derived, 'obj'),
                                                 kappa=(spec.kappa, 'size'), source=(spec.source, 'obj'))),
                         ('Stacked', dict(x=(torch.zeros(2, 3, 4), 'fixed'),
                                          y=(torch.zeros(2, 3, dtype=torch.long), 'fixed'),
                                          a=(torch.zeros(2, 3, dtype=torch.long), 'fixed'),
                                          mask=(torch.ones(2, 3, dtype=torch.bool), 'fixed'),
                                          sizes=(torch.tensor([3, 3]), 'fixed'))),
                         ('partition_from_matrices', dict(y=(y, 'labels'), a=(a, 'labels'), matrices=(Ns, 'counts'),
                                                          seed=(0, 'count')))],
     'foundation.datasets': [('Pool', dict(x=(feats.x, 'tensor'), y=(feats.y, 'tensor_labels'),
                                           a=(feats.a, 'tensor_labels'),
                                           class_names=(feats.class_names, 'obj'),
                                           attr_names=(feats.attr_names, 'obj'))),
                             ('colored_mnist', dict(counts=(N, 'counts'), seed=(0, 'count'), size=(12, 'size'))),
                             ('faces', dict(counts=(N, 'counts'), seed=(0, 'count'), size=(16, 'size'),
                                            target=('gender', 'choice'),
                                            protected=('race', 'choice'), images_per_identity=(1, 'size'),
                                            target_visibility=(1.0, 'prob'),
                                            protected_visibility=(1.0, 'prob'), noise=(0.03, 'nonneg'))),
                             ('feature_scatter', dict(pool=(feats, 'obj'), dims=((0, 2), 'obj'),
                                                      max_points=(50, 'size'), seed=(0, 'count'))),
                             ('group_grid', dict(pool=(imgs, 'obj'), per_group=(2, 'size'), seed=(0, 'count'),
                                                 pixel=(2, 'size'),
                                                 title=('groups', 'obj'))),
                             ('make_federated', dict(dataset=('tabular', 'choice'), matrices=(Ns, 'counts'),
                                                     scale=(1.0, 'pos'),
                                                     seed=(0, 'count'), test_per_group=(2, 'size'))),
                             ('probe_accuracy', dict(features=(np.random.default_rng(0).normal(size=(20, 2)), 'array'),
                                                     labels=(np.arange(20) % 2, 'cluster_labels'), seed=(0, 'count'))),
                             ('render_faces', dict(levels=(levels, 'obj'), geometry=(geometry, 'obj'),
                                                   size=(16, 'size'))),
                             ('shapes', dict(counts=(N, 'counts'), seed=(0, 'count'), size=(12, 'size'),
                                             rotation=(30.0, 'nonneg'),
                                             noise=(0.03, 'nonneg')))],
     'foundation.hetero': [('box_overlap', dict(a=((0., 0., 4., 3.), 'nonneg_array'), b=((1., 1., 6., 5.), 'array'))),
                           ('label_box', dict(x=(10., 'real'), y=(20., 'real'), text=('abc', 'obj'),
                                              pos=('top center', 'choice'),
                                              r=(4., 'nonneg'))),
                           ('metric_bars', dict(metrics=(Ns, 'counts'), published=({'GCI': 0.2}, 'obj'),
                                                title=('m', 'obj'))),
                           ('spread_labels', dict(fig=(fig, 'obj')))],
     'foundation.loaders': [('fake_celeba', dict(root=(os.path.join(f['tmp'], 'c2'), 'obj'),
                                                 images_per_identity=(2, 'size'), seed=(0, 'count'))),
                            ('fake_fairface', dict(root=(os.path.join(f['tmp'], 'f2'), 'obj'), seed=(0, 'count'))),
                            ('fake_mnist', dict(root=(os.path.join(f['tmp'], 'm2'), 'obj'), n_train=(6, 'size'),
                                                n_test=(4, 'size'),
                                                seed=(0, 'count'))),
                            ('fake_spawrious', dict(root=(os.path.join(f['tmp'], 's2'), 'obj'), per_folder=(1, 'size'),
                                                    seed=(0, 'count'))),
                            ('fake_utkface', dict(root=(os.path.join(f['tmp'], 'u2'), 'obj'), seed=(0, 'count'))),
                            ('fake_waterbirds', dict(root=(os.path.join(f['tmp'], 'w2'), 'obj'), seed=(0, 'count'))),
                            ('find_root', dict(root=(f['mnist'], 'obj'), marker=('raw', 'obj'),
                                               subdirs=(('MNIST',), 'obj'))),
                            ('load_celeba', dict(root=(f['celeba'], 'obj'), split=('train', 'choice'),
                                                 size=(8, 'size'), seed=(0, 'count'))),
                            ('load_cifar', dict(root=(f['cifar'], 'obj'), name=('cifar10', 'choice'))),
                            ('load_fairface', dict(root=(f['fairface'], 'obj'), split=('train', 'choice'),
                                                   size=(8, 'size'), seed=(0, 'count'))),
                            ('load_femnist_leaf', dict(root=(f['leaf'], 'obj'), min_samples=(0, 'count'))),
                            ('load_images', dict(paths=(f['png'], 'obj'), size=(8, 'size'))),
                            ('load_mnist', dict(root=(f['mnist'], 'obj'), train=(True, 'obj'))),
                            ('load_spawrious', dict(root=(f['spawrious'], 'obj'), size=(8, 'size'), seed=(0, 'count'))),
                            ('load_utkface', dict(root=(f['utkface'], 'obj'), size=(8, 'size'), seed=(0, 'count'))),
                            ('load_waterbirds', dict(root=(f['waterbirds'], 'obj'), split=('train', 'choice'),
                                                     size=(8, 'size'), seed=(0, 'count'))),
                            ('read_idx',
                             dict(path=(pathlib.Path(f['mnist']) / 'MNIST' / 'raw' / 'train-labels-idx1-ubyte',
                                        'obj'))),
                            ('require', dict(path=(pathlib.Path(f['mnist']), 'obj'), what=('the MNIST folder', 'obj'))),
                            ('write_idx', dict(path=(pathlib.Path(f['tmp']) / 'out-idx1-ubyte', 'obj'),
                                               array=(np.arange(4, dtype=np.uint8), 'counts')))],
    }


def _selection() -> dict:
    "Controls of `selection`: comparisons, constraint stacks, efficiency and incentive helpers, the taxonomy."
    import torch
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector, make_view
    from hetfl_explore.engine.simulation import Simulation
    from hetfl_explore.selection.baselines import EqRep
    from hetfl_explore.selection.compare import compare_selectors
    from hetfl_explore.selection.constraints import FedCS, Oort
    from hetfl_explore.selection.efficiency import toy_reports
    from hetfl_explore.selection.taxonomy import TABLE4, placement
    fed = tiny_digits_federation(num_clients=4, min_size=10, n_test=40)
    cfg = RunConfig(rounds=2, clients_per_round=2, batch_size=8, device='cpu')
    model_fn = lambda: mlp(64, 8, 10)
    result = compare_selectors([UniformSelector()], fed, model_fn, cfg)
    sim = Simulation(model_fn, fed, UniformSelector(), cfg); sim.run(progress=False)
    ids, upd, target = np.array([0, 2]), torch.tensor([[1., 0.], [0., 1.]]), torch.tensor([1., 1.])
    reports = toy_reports(0, ids, upd, target)
    view = make_view(4, 0, None, np.array([10, 20, 30, 40]))
    row = dict(placement('pow-d', 'Efficiency', '¬V D ¬S R T', ('theta', 'data_size', 'loss'), 'Loss-based',
                         'Ranking',
                         'Reach accuracy', 'Efficiency'))
    return {
     'selection.compare': [('compare_selectors', dict(selectors=([UniformSelector()], 'obj'), data=(fed, 'obj'),
                                                      model_fn=(model_fn, 'callable'),
                                                      config=(cfg, 'obj'), seeds=((0,), 'obj'), target=(0.5, 'prob'))),
                           ('curves_figure', dict(result=(result, 'obj'), metric=('accuracy', 'choice'),
                                                  x=('round', 'choice'),
                                                  title=('t', 'obj'))),
                           ('history_metrics', dict(h=(result.attrs['histories'][('uniform', 0)], 'obj'),
                                                    target=(0.5, 'prob'))),
                           ('poison_labels', dict(data=(fed, 'obj'), clients=([1], 'obj'))),
                           ('run_strategy', dict(selector=(UniformSelector(), 'obj'), data=(fed, 'obj'),
                                                 model_fn=(model_fn, 'callable'),
                                                 config=(cfg, 'obj'), seed=(0, 'count'))),
                           ('selection_heatmaps', dict(result=(result, 'obj'), seed=(0, 'count'), cols=(2, 'size'))),
                           ('simulation_client_accuracies', dict(sim=(sim, 'obj'))),
                           ('summary', dict(result=(result, 'obj'),
                                            columns=(('final_accuracy', 'jain_index'), 'obj')))],
     'selection.constraints': [('PolicyStack', dict(filter=(FedCS(), 'obj'), scorer=(Oort(), 'obj'),
                                                    sampler=('ranking', 'choice'))),
                               ('round_estimates', dict(clients=(view, 'obj'), ids=(np.array([0, 2]), 'ids'),
                                                        epochs=(1.0, 'pos'),
                                                        model_bytes=(0.0, 'nonneg')))],
     'selection.efficiency': [('KFed', dict(centroids=([np.ones((2, 2)), np.zeros((1, 2))], 'obj'),
                                            n_global=(2, 'size'), n_groups=(2, 'size'))),
                              ('coalition_utility', dict(reports=(reports, 'obj'), metric=(0, 'choice'))),
                              ('observed_losses', dict(reports=(reports, 'obj'))),
                              ('toy_reports', dict(t=(0, 'count'), ids=(ids, 'unique_ids'), updates=(upd, 'tensor'),
                                                   target=(target, 'tensor'),
                                                   n_samples=(np.array([10, 20]), 'counts')))],
     'selection.incentives': [('update_is_good', dict(reports=(reports, 'obj')))],
     'selection.taxonomy': [('MethodCard', dict(row=(row, 'obj'))),
                            ('characteristics_text',
                             dict(flags=(dict(V=True, D=False, S=True, R=False, T=True), 'obj'))),
                            ('parse_characteristics', dict(text=('V ¬D ¬S R T', 'choice'))),
                            ('placement', dict(method=('pow-d', 'obj'), policy=('Efficiency', 'choice'),
                                               client=('¬V D ¬S R T', 'choice'),
                                               message=(('theta', 'loss'), 'obj'), generation=('Loss-based', 'choice'),
                                               interpretation=('Ranking', 'choice'),
                                               termination=('Reach accuracy', 'choice'))),
                            ('placement_mismatches', dict(declared=(row, 'obj'))),
                            ('placement_table', dict(selectors=([EqRep], 'obj')))],
    }


def _feddiverse() -> dict:
    "Controls of `feddiverse`: selector helpers, estimation, experiments (tiny presets), own data, simulations."
    import atexit, dataclasses, os, shutil, tempfile, torch, pandas as pd
    from hetfl_explore.foundation.core import results_path
    from hetfl_explore.engine.protocol import UniformSelector
    from hetfl_explore.engine.simulation import run_fl
    from hetfl_explore.feddiverse import estimation as E, experiments as X
    from hetfl_explore.feddiverse.simulation import selection_stats
    tmp = tempfile.mkdtemp(prefix='hetfl_fuzz_fd_')
    atexit.register(shutil.rmtree, tmp, True)
    Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]]])
    w = np.array([[1., 2., 3.], [0., 1., 1.]])
    gen = torch.Generator().manual_seed(0)
    x, y, a = E.toy_client(np.array([[6, 2], [2, 6]]), seed=0, noise_dims=2)
    model = E.toy_model(4, 2, 8)
    cfg = E.EstimationConfig(bias_steps=2, attr_steps=2, batch_size=8)
    biased = E.train_biased(model, x, y, 2, steps=2, batch_size=8)
    maj = E.majority_mask(biased, x, y)
    preset = dataclasses.replace(X.PRESETS['teaching'], rounds=1, kappa=2, scale=0.05, img_size=8, width=8, seeds=(0,),
                                 estimation=cfg, test_per_group=4)
    data = X.build_data('CMNIST_GSC', preset, 0)
    est = E.estimate_federation(preset.model_fn(data.n_classes), data, cfg,
                                X.diversity_run_config(preset, 'FedAvgM', 0), 0)
    runs = pd.read_csv(results_path('feddiverse_teaching.csv'))
    demo_runs = pd.read_csv(results_path('feddiverse_cmnist.csv'))
    hist = run_fl(preset.model_fn(data.n_classes), data, UniformSelector(),
                  X.diversity_run_config(preset, 'FedAvgM', 0))
    types = np.array(['CI', 'AI', 'SC', 'CI'] * 8)[:data.num_clients]
    stats = selection_stats(Ns, np.array([[1, 0, 1], [0, 1, 1]]))
    share = pd.DataFrame(dict(federation=['f', 'f'], method=['uniform', 'feddiverse'], CI=[.3, .4], AI=[.3, .3],
                              SC=[.4, .3]))
    csv = os.path.join(tmp, 'clients.csv')
    frame = pd.DataFrame(dict(client=[0, 0, 1, 1, 1], label=[0, 1, 0, 1, 1], attribute=[0, 1, 1, 0, 1]))
    frame.to_csv(csv, index=False)
    return {
     'feddiverse.selector': [('draw_by_weight', dict(w=(w, 'nonneg_array'), u=(np.array([.3, .6]), 'linked_array'))),
                             ('as_float_array', dict(x=(np.array([1., 2.]), 'array'), name='x')),
                             ('pick_best', dict(scores=(w, 'array'), left=(w > 0, 'obj'), best=('min', 'choice'),
                                                u=(np.array([.3, .6]), 'linked_array'),
                                                ties=('random', 'choice'), tol=(1e-9, 'nonneg'))),
                             ('round_draws', dict(K=(4, 'size'), k=(2, 'size'), rounds=(2, 'size'),
                                                  rng=np.random.default_rng(0),
                                                  available=(np.array([0, 1, 3]), 'unique_ids'),
                                                  options=(dict(remainder='truncate', lead='random'), 'obj'))),
                             ('check_client_types', dict(name='types', types=(np.array(['CI', 'AI', 'SC']), 'obj'),
                                                         K=(3, 'size')))],
     'feddiverse.own_data': [('as_labels', dict(name='values', values=(np.array([0, 1, 2, 1]), 'labels'))),
                             ('client_order', dict(ids=(pd.Series(['b', 'a', 'b']), 'obj'), clients=None)),
                             ('level_count', dict(name='n_classes',
                                                  labels=([np.array([0, 1]), np.array([2, 1])], 'obj'),
                                                  given=(3, 'size'),
                                                  what='labels')),
                             ('load_client_csv', dict(path=(csv, 'obj'), client=('client', 'choice'),
                                                      label=('label', 'choice'),
                                                      attribute=('attribute', 'choice'), n_classes=(2, 'size'),
                                                      n_attrs=(2, 'size'))),
                             ('matrices_from_frame', dict(df=(frame, 'obj'), client=('client', 'choice'),
                                                          label=('label', 'choice'),
                                                          attribute=('attribute', 'choice'), n_classes=(2, 'size'),
                                                          n_attrs=(2, 'size')))],
     'feddiverse.estimation': [('gce_loss', dict(logits=(torch.randn(4, 3, generator=gen), 'tensor'),
                                                 target=(torch.tensor([0, 1, 2, 1]), 'tensor_labels'), q=(0.3, 'unit'),
                                                 reduction=('mean', 'choice'))),
                               ('EstimationResult', dict(est_matrices=(est.est_matrices, 'counts'),
                                                         true_matrices=(est.true_matrices, 'counts'),
                                                         est_triplets=(est.est_triplets, 'nonneg_array'),
                                                         true_triplets=(est.true_triplets, 'nonneg_array'),
                                                         pivots=(est.pivots, 'obj'),
                                                         client_seconds=(est.client_seconds, 'nonneg_array'),
                                                         pretrain_seconds=(est.pretrain_seconds, 'nonneg'),
                                                         n_params=(est.n_params, 'size'))),
                               ('estimate_client', dict(model=(model, 'obj'), x=(x, 'tensor'), y=(y, 'tensor_labels'),
                                                        n_classes=(2, 'size'),
                                                        cfg=(cfg, 'obj'), seed=(0, 'count'))),
                               ('estimate_federation', dict(model_fn=(preset.model_fn(data.n_classes), 'callable'),
                                                            data=(data, 'obj'),
                                                            cfg=(cfg, 'obj'), seed=(0, 'count'))),
                               ('estimate_matrix', dict(majority=(maj, 'obj'), y=(y, 'tensor_labels'),
                                                        n_classes=(2, 'size'), pivot=(0, 'count'),
                                                        attribute_pred=(a, 'tensor_labels'))),
                               ('majority_mask', dict(biased=(biased, 'obj'), x=(x, 'tensor'), y=(y, 'tensor_labels'),
                                                      batch_size=(8, 'size'))),
                               ('matrix_comparison_figure', dict(result=(est, 'obj'), clients=([0, 1], 'obj'))),
                               ('train_attribute_classifier', dict(biased=(biased[0], 'obj'), x=(x, 'tensor'),
                                                                   pseudo=(a, 'tensor_labels'),
                                                                   steps=(2, 'count'), lr=(0.05, 'pos'),
                                                                   batch_size=(8, 'size'),
                                                                   init=('biased', 'choice'), seed=(0, 'count'))),
                               ('train_biased', dict(model=(model, 'obj'), x=(x, 'tensor'), y=(y, 'tensor_labels'),
                                                     n_classes=(2, 'size'),
                                                     steps=(2, 'count'), q=(0.3, 'unit'), lr=(0.05, 'pos'),
                                                     batch_size=(8, 'size'),
                                                     seed=(0, 'count'))),
                               ('triplet_scatter_figure', dict(result=(est, 'obj')))],
     'feddiverse.experiments': [('DiversityPreset',
                                 {f.name: (getattr(preset, f.name),
                                           {int: 'size', float: 'nonneg'}.get(type(getattr(preset, f.name)), 'obj'))
                                                     for f in dataclasses.fields(preset)}),
                                ('build_data', dict(dataset=('CMNIST_GSC', 'choice'), preset=(preset, 'obj'),
                                                    seed=(0, 'count'))),
                                ('check_names', dict(name='values', values=(('a', 'b'), 'obj'),
                                                     choices=(('a', 'b', 'c'), 'obj'))),
                                ('check_runs', dict(runs=(runs, 'obj'))),
                                ('demo_report', dict(runs=(demo_runs, 'obj'), summary=(X.table1(demo_runs), 'obj'),
                                                     preset=(preset, 'obj'), est=(est, 'obj'),
                                                     wall=(1.0, 'nonneg'))),
                                ('diversity_run_config', dict(preset=(preset, 'obj'), fl=('FedAvgM', 'choice'),
                                                              seed=(0, 'count'))),
                                ('estimation_errors', dict(preset=(preset, 'obj'), datasets=(('CMNIST_GSC',), 'obj'),
                                                           seeds=((0,), 'obj'))),
                                ('gain_table', dict(runs=(runs, 'obj'), fl=('FedAvgM', 'choice'))),
                                ('paired_gain', dict(runs=(runs, 'obj'), a=('FedDiverse', 'choice'),
                                                     b=('Uniform', 'choice'), value=('wga', 'choice'))),
                                ('paper_grid', dict(preset=(preset, 'obj'), out=(os.path.join(tmp, 'grid.csv'), 'obj'),
                                                    datasets=(('CMNIST_GSC',), 'obj'),
                                                    seeds=((0,), 'obj'), methods=(('Uniform',), 'obj'), log=None)),
                                ('reproduction_table', dict(runs=(runs, 'obj'))),
                                ('run_diversity', dict(dataset=('CMNIST_GSC', 'choice'), method=('Uniform', 'choice'),
                                                       fl=('FedAvgM', 'choice'),
                                                       preset=(preset, 'obj'), seed=(0, 'count'), data=(data, 'obj'))),
                                ('run_diversity_grid', dict(preset=(preset, 'obj'), datasets=(('CMNIST_GSC',), 'obj'),
                                                            methods=(('Uniform',), 'obj'),
                                                            fls=(('FedAvgM',), 'obj'), seeds=((0,), 'obj'), log=None)),
                                ('selected_type_shares', dict(history=(hist, 'obj'), types=(types, 'obj'))),
                                ('share_figure', dict(runs=(runs, 'obj'), dataset=('Spawrious_GSC', 'choice'))),
                                ('table1', dict(runs=(runs, 'obj'), fl=('FedAvgM', 'choice'))),
                                ('table1_selector', dict(method=('FedDiverse', 'choice'), data=(data, 'obj'),
                                                         estimated=(est.est_triplets, 'nonneg_array'))),
                                ('table3', dict(runs=(runs, 'obj'))),
                                ('wga_curve_figure', dict(runs=(runs, 'obj'), dataset=('Spawrious_GSC', 'choice'),
                                                          fl=('FedAvgM', 'choice')))],
     'feddiverse.simulation': [('SelectionStats', dict(type_shares=(stats.type_shares, 'obj'),
                                                       frequency=(stats.frequency, 'nonneg_array'),
                                                       selected=(stats.selected, 'obj'),
                                                       union_triplets=(stats.union_triplets, 'nonneg_array'),
                                                       types=(stats.types, 'obj'))),
                               ('frequency_figure', dict(stats=(stats, 'obj'), title=('f', 'obj'))),
                               ('selection_share_table', dict(federations=(('spawrious_gsc',), 'obj'),
                                                              rounds=(5, 'size'), seed=(0, 'count'))),
                               ('type_share_figure', dict(table=(share, 'obj'), federation=('f', 'choice')))],
     'engine.backends': [('gather_rows', dict(x=(torch.arange(12.).reshape(4, 3), 'tensor'),
                                              rows=(torch.tensor([0, 2, 3]), 'tensor_labels')))],
    }


def _fairness() -> dict:
    "Controls of `fairness`: the experiment helpers on a tiny preset and on the committed result tables."
    import dataclasses, torch, pandas as pd
    from hetfl_explore.foundation.core import results_path
    from hetfl_explore.fairness import experiments as F, metrics as M
    p = dataclasses.replace(F.FAIRNESS_TINY, rounds=1, clients_per_round=2, image_size=16, hidden=8, test_per_group=4,
                            test_individuals=4,
                            avg_last=1, bias_steps=1, attr_steps=1)
    grid = pd.read_csv(results_path('fairness_grid.csv')); explorer = pd.read_csv(results_path('fairness_explorer.csv'))
    summary = F.summarise(grid)
    data = F.fairness_split('celeba_like', 0, p)
    Ns = np.asarray(data.interaction(), float)
    C = torch.tensor([[[5., 1.], [2., 6.]], [[4., 2.], [1., 3.]]])
    return {
     'fairness.experiments': [('chapter_table', dict(summary=(summary, 'obj'), decimals=({'acc': 1}, 'obj'))),
                              ('client_metadata', dict(level=('fedrk', 'choice'), matrix=(Ns[0], 'counts'))),
                              ('estimate_triplets', dict(data=(data, 'obj'), seed=(0, 'count'), preset=(p, 'obj'))),
                              ('explore', dict(rho=(0.9, 'prob'), n_anti=(1, 'count'), level=('random', 'choice'),
                                               seed=(0, 'count'), preset=(p, 'obj'))),
                              ('explorer_figure', dict(grid=(explorer, 'obj'))),
                              ('explorer_grid', dict(rhos=((0.9,), 'obj'), n_antis=((1,), 'obj'),
                                                     levels=(('random',), 'obj'), seeds=((0,), 'obj'),
                                                     preset=(p, 'obj'))),
                              ('explorer_summary', dict(grid=(explorer, 'obj'))),
                              ('fairness_headlines', dict(summary=(summary, 'obj'), tol=(0.0, 'nonneg'),
                                                          acc_tol=(1.0, 'nonneg'), rk=('fedrk', 'choice'))),
                              ('fairness_reproduction_table', dict(runs=(grid, 'obj'))),
                              ('fairness_run_config', dict(preset=(p, 'obj'), seed=(0, 'count'))),
                              ('fairness_split', dict(dataset=('celeba_like', 'choice'), seed=(0, 'count'),
                                                      preset=(p, 'obj'))),
                              ('level_differences', dict(runs=(grid, 'obj'), a=('fedrk', 'choice'),
                                                         b=('random', 'choice'), metric=('wga', 'choice'))),
                              ('minority_exposure', dict(matrices=(Ns, 'counts'), level=('fedrk', 'choice'),
                                                         rounds=(5, 'size'), k=(3, 'size'),
                                                         seed=(0, 'count'))),
                              ('pattern_table', dict(matrices=(Ns, 'counts'), rounds=(5, 'size'), k=(3, 'size'),
                                                     seed=(0, 'count'))),
                              ('privacy_selector', dict(level=('fedrk', 'choice'), matrices=(Ns, 'counts'),
                                                        variant=('sign-invariant', 'choice'),
                                                        floor=(1e-3, 'prob'))),
                              ('results_figure', dict(ours=(summary, 'obj'))),
                              ('run_client_table', dict(row=(grid.iloc[0], 'obj'))),
                              ('run_level', dict(data=(data, 'obj'), level=('random', 'choice'), seed=(0, 'count'),
                                                 preset=(p, 'obj'))),
                              ('summarise', dict(runs=(grid, 'obj')))],
     'fairness.metrics': [('UndefinedMetricWarning', dict()),   # a warning class: nothing to check
                          ('client_table', dict(confusions=([C, C + 1], 'obj'), names=(['a', 'b'], 'obj'),
                                                weights=([1., 2.], 'obj')))],
    }


def _engine() -> dict:
    "Controls of `engine`: aggregation inputs and rules, backends, work, reports, plans, runs and stores."
    import atexit, os, shutil, tempfile, torch
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.aggregation import AggregationInput
    from hetfl_explore.engine.backends import model_profile, batch_plan
    from hetfl_explore.engine.config import RunConfig, LocalWork
    from hetfl_explore.engine.models import mlp, ParamLayout
    from hetfl_explore.engine.protocol import UniformSelector, Selection
    from hetfl_explore.engine.store import History
    from hetfl_explore.engine.simulation import Simulation
    cpu, cfg = torch.device('cpu'), RunConfig(rounds=1, clients_per_round=2, batch_size=4, device='cpu')
    fed = tiny_digits_federation(num_clients=4, min_size=10, n_test=40)
    net = mlp(4, 3, 2); layout = ParamLayout(net); P = layout.size
    g, u, w = torch.zeros(P), torch.ones(2, P) * .1, np.array([.25, .75])
    inp = AggregationInput(g, u, w, steps=np.array([2., 3.]), lr=np.array([.1, .1]), config=cfg)
    masked = AggregationInput(g, u, w, masks=torch.ones(2, P))
    x, y = torch.randn(12, 4, generator=torch.Generator().manual_seed(0)), torch.arange(12) % 2
    local, valid, steps = batch_plan(np.array([5, 7]), 4, np.random.default_rng(0), 1)
    idx = torch.from_numpy(local + np.array([0, 5])[:, None, None])
    work = LocalWork(net, layout, g, x, y, idx, torch.from_numpy(valid), steps, np.array([.1, .1]), cfg)
    prof = model_profile(net, x[0])
    sel = Selection(np.array([0, 2]))
    tmp = tempfile.mkdtemp(prefix='hetfl_fuzz_')
    atexit.register(shutil.rmtree, tmp, True)
    model_fn = lambda: mlp(64, 8, 10)
    return {
     'engine.aggregation': [('AggregationInput', dict(global_params=(g, 'array'), updates=(u, 'array'),
                                                      weights=(w, 'nonneg_linked'),
                                                      steps=(np.array([2., 3.]), 'nonneg_linked'),
                                                      lr=(np.array([.1, .1]), 'nonneg_linked'))),
                            ('fedavg_rule', dict(inp=(inp, 'obj'))), ('fednova_rule', dict(inp=(inp, 'obj'))),
                            ('masked_average', dict(inp=(masked, 'obj'))),
                            ('resolve_aggregation_rule', dict(aggregation=(None, 'callable'),
                                                              selector=(UniformSelector(), 'obj'),
                                                              config=(cfg, 'obj')))],
     'engine.backends': [('block_size', dict(profile=(prof, 'obj'), batch_size=(4, 'size'), device=(cpu, 'obj'),
                                             budget_bytes=(1e6, 'pos'))),
                         ('choose_backend', dict(profile=(prof, 'obj'), batch_size=(4, 'size'), device=(cpu, 'obj'))),
                         ('model_profile', dict(model=(net, 'obj'), sample=(x[0], 'tensor'))),
                         ('resolve_backend', dict(backend=('auto', 'choice'), model=(net, 'obj'), x=(x, 'tensor'),
                                                  client_loss=None,
                                                  device=(cpu, 'obj'), profile=(prof, 'obj'), batch_size=(4, 'size'))),
                         ('local_train', dict(model=(net, 'obj'), params=(g, 'tensor'), x=(x, 'tensor'),
                                              y=(y, 'tensor_labels'),
                                              config=(cfg, 'obj'), generator=np.random.default_rng(0))),
                         ('train_batched', dict(work=(work, 'obj'))), ('train_sequential', dict(work=(work, 'obj')))],
     'engine.fused': [('fused_dims', dict(model=(net, 'obj'), x=(x, 'tensor'), client_loss=None, device=(cpu, 'obj'))),
                      ('train_fused', dict(work=(work, 'obj')))],
     'engine.config': [('LocalWork', dict(model=(net, 'obj'), layout=(layout, 'obj'), w0=(g, 'tensor'),
                                          x=(x, 'tensor'), y=(y, 'tensor_labels'),
                                          idx=(idx, 'tensor'), mask=(torch.from_numpy(valid), 'obj'),
                                          steps=(steps, 'counts'),
                                          lr=(np.array([.1, .1]), 'nonneg_linked'), cfg=(cfg, 'obj'))),
                       ('check_pool', dict(x=(x, 'tensor'), y=(y, 'tensor_labels'), model=(net, 'obj'), x_name='x',
                                           y_name='y')),
                       ('check_start', dict(name='value', value=(g, 'tensor'), size=(P, 'size'))),
                       ('check_finite', dict(name='value', value=(x, 'tensor')))],
     'engine.models': [('mobilenet_v2_gn', dict(n_classes=(3, 'size'), width_mult=(0.25, 'pos'), groups=(4, 'size'),
                                                dropout=(0.1, 'prob')))],
     'engine.protocol': [('Reports', dict(round=(0, 'count'), ids=(np.array([0, 2]), 'unique_ids'),
                                          n_samples=(np.array([5, 7]), 'counts'),
                                          loss=(np.array([.5, .4]), 'nonneg_linked'),
                                          loss_before=(np.array([.6, .5]), 'nonneg_linked'),
                                          steps=(np.array([2, 2]), 'counts'),
                                          update_norm=(np.array([.1, .2]), 'nonneg_linked'),
                                          time=(np.array([1., 2.]), 'nonneg_linked'),
                                          energy=(np.array([1., 1.]), 'nonneg_linked'),
                                          updates=(u, 'tensor'), global_params=(g, 'tensor'))),
                         ('participation_figure', dict(trace=(np.array([[1, 0, 1], [0, 1, 1]]), 'array'),
                                                       title=('who', 'obj')))],
     'engine.simulation': [('RoundPlan', dict(t=(0, 'count'), sel=(sel, 'obj'),
                                              dropped=(np.array([False, False]), 'obj'),
                                              done_frac=(np.ones(2), 'nonneg_linked'), masks=None,
                                              local=(local, 'obj'), valid=(valid, 'obj'),
                                              steps=(steps, 'counts'), t0=(0.0, 'nonneg'))),
                           ('Simulation', dict(model_fn=(model_fn, 'callable'), data=(fed, 'obj'),
                                               selector=(UniformSelector(), 'obj'),
                                               config=(cfg, 'obj')))],
     'engine.store': [('History', dict(config=({'rounds': 1}, 'obj'), meta=({'backend': 'batched'}, 'obj'))),
                      ('RunStore', dict(path=(os.path.join(tmp, 'runs.sqlite'), 'obj'))),
                      ('run_identity', dict(config=(cfg, 'obj'), backend=('batched', 'choice'), device=(cpu, 'obj'),
                                            data=(fed, 'obj'),
                                            model=(net, 'obj'), selector=(UniformSelector(), 'obj'),
                                            stored=(False, 'obj')))],
    }


def controls() -> dict:
    "group -> [(entry, spec)] for every control of this file."
    out = {}
    for part in (_foundation(), _selection(), _feddiverse(), _engine(), _fairness()):
        for g, entries in part.items(): out.setdefault(g, []).extend(entries)
    return out
