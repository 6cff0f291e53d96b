"""Fuzz controls of `hetfl_explore.widgets`: the editor's helpers, the browser trainer's numpy reference, the explorers,
the outcome helpers, the figures and the panels (built headless, with few clients and rounds so that each call stays
short).

Read by `tools/fuzz.py` (every `tools/fuzz_controls_*.py`); see its docstring for the kinds and the outcomes."""
from __future__ import annotations
import numpy as np

# documented valid inputs among the mutants: {(entry, argument): {mutant names}}
VALID_MUTANTS = {
    ('published_values', 'name'): {'unknown'},   # a name without a federation has no values: {}
    ('derived_values', 'name'): {'unknown'},
    ('browser_forward', 'x'): {'empty'},   # no rows: no hidden values and no logits
    ('threshold_metrics', 'nu'): {'inf', '-inf'},   # the ROC's end points: everyone, or no one, called a member
}

def _editor_controls() -> dict:
    "Editor rows, their summary, presets and figures."
    from hetfl_explore.widgets.editor import federation_summary, published_values
    types = [(2, np.array([[3, 1], [2, 4]])), (1, np.array([[1, 1], [5, 2]]))]
    summ = federation_summary(types)
    Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]]])
    return {'widgets.editor': [
        ('check_types', dict(types=(types, 'obj'))), ('expand_types', dict(types=(types, 'obj'))),
        ('rows_json', dict(types=(types, 'obj'))),
        ('federation_summary', dict(types=(types, 'obj'), atol=(1e-9, 'nonneg'))),
        ('preset_types', dict(name=('dirichlet_1', 'choice'), seed=(0, 'count'))),
        ('published_values', dict(name=('spawrious_gsc', 'choice'))),
        ('derived_values', dict(name=('spawrious_gsc', 'choice'))),
        ('summary_html', dict(summary=(summ, 'obj'), published=(published_values('spawrious_gsc'), 'obj'),
                              derived=({'CI': 0.1}, 'obj'))),
        ('triplet_bar_html', dict(t=(np.array([.1, .2, .3]), 'nonneg_array'), width=(90, 'size'))),
        ('type_group', dict(ty=('CI=AI', 'choice'))),
        ('types_ternary', dict(summary=(summ, 'obj'))),
        ('panel_matrices', dict(source=(Ns, 'counts')))]}

def _pool():
    "A tiny image pool (2 classes x 2 attributes, 3 training and 2 test images of side 2 per cell) and its bytes."
    meta = dict(name='tiny', classes=['a', 'b'], attrs=['r', 'g'], side=2, channels=1, train=3, test=2)
    return meta, bytes((np.arange(2 * 2 * 5 * 4) * 3 % 256).astype(np.uint8))

def _browser_controls() -> dict:
    "The browser trainer's numpy reference on a tiny pool and a 12-input MLP."
    from hetfl_explore.widgets.browser_trainer import pool_features, init_weights, test_set
    meta, data = _pool()
    X, labels = pool_features(meta, data)
    w = init_weights(X.shape[1], 3, 2, np.random.default_rng(0).random)
    test, groups = test_set(meta, 2, 2)
    clients = [np.array([0, 1, 5]), np.array([10, 11, 15, 16])]
    cfg = dict(lr=0.1, epochs=1, batch=2)
    order = lambda k, e: np.arange(len(clients[k]))
    job = dict(Y=2, A=2, C=2, cfg=dict(cfg, hidden=3), clients=[c.tolist() for c in clients],
               init={k: v.ravel().tolist() for k, v in w.items()}, selections=[[0, 1]],
               orders=[[[[0, 1, 2]], [[0, 1, 2, 3]]]])
    rows = [(1, np.array([[1, 1], [1, 1]])), (1, np.array([[2, 0], [0, 1]]))]
    return {'widgets.browser_trainer': [
        ('pool_features', dict(meta=(meta, 'obj'), data=(data, 'obj'))),
        ('init_weights', dict(d=(12, 'size'), H=(3, 'size'), C=(2, 'size'),
                              u=(np.random.default_rng(0).random, 'callable'))),
        ('browser_forward', dict(w=(w, 'obj'), x=(X[:4], 'array'))),
        ('sgd_step', dict(w=({k: v.copy() for k, v in w.items()}, 'obj'), x=(X[:4], 'array'),
                          y=(labels[:4], 'labels'), lr=(0.1, 'nonneg'))),
        ('browser_round', dict(w=(w, 'obj'), X=(X, 'array'), labels=(labels, 'labels'), clients=(clients, 'obj'),
                               selected=(np.array([0, 1]), 'unique_ids'), order=(order, 'callable'), cfg=(cfg, 'obj'))),
        ('browser_evaluate', dict(w=(w, 'obj'), X=(X, 'array'), labels=(labels, 'labels'), test=(test, 'ids'),
                                  groups=(groups, 'linked_array'))),
        ('test_set', dict(meta=(meta, 'obj'), Y=(2, 'size'), A=(2, 'size'))),
        ('train_injected', dict(X=(X, 'array'), labels=(labels, 'labels'), meta=(meta, 'obj'), job=(job, 'obj'))),
        ('draw_clients', dict(meta=(meta, 'obj'), rows=(rows, 'obj'), scale=(1.0, 'pos'),
                              rng=(np.random.default_rng(0), 'obj'))),
        ('reference_outcome', dict(rows=([(4, np.array([[20, 20], [20, 20]]))], 'obj'), k=(2, 'size'),
                                   dataset=('cmnist', 'choice'), selectors=(('uniform',), 'obj'), seeds=([0], 'obj'),
                                   rounds=(1, 'size')))]}

def _explorer_controls() -> dict:
    "The selection explorer, its settings, share table and figures on four 2 x 2 clients."
    from hetfl_explore.feddiverse.simulation import simulate_selection
    Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]], [[4., 0.], [1., 3.]]])
    stats = {'uniform': simulate_selection(Ns, 'uniform', 5, 2, 0)}
    return {'widgets.explorers': [
        ('check_selectors', dict(selectors=('uniform', 'choice'))),
        ('check_explorer_settings', dict(matrices=(Ns, 'counts'), selectors=('uniform', 'choice'), k=(2, 'size'),
                                         rounds=(5, 'size'), noise=(0.0, 'nonneg'))),
        ('share_table', dict(stats=(stats, 'obj'))),
        ('selection_figures', dict(stats=(stats, 'obj'), show=('uniform', 'choice'))),
        ('SelectionExplorer', dict(source=(Ns, 'counts'), selectors=('uniform', 'choice'), k=(2, 'size'),
                                   rounds=(5, 'size'),
                                   seed=(0, 'count'), noise=(0.0, 'nonneg')))]}

def _rows(acc):
    "Round rows of one seed with the given accuracies (worst group 0.1 below)."
    return [dict(round=i, accuracy=a, worst_group_accuracy=a - 0.1) for i, a in enumerate(acc)]

def _outcome_controls() -> dict:
    "Curves and seed statistics of hand-made round rows; one tiny outcome run (one round, one seed)."
    from hetfl_explore.engine.store import History
    from dataclasses import replace
    from hetfl_explore.widgets.outcome import OutcomeConfig, outcome_figure
    hs = []
    for acc in ([.5, .6], [.55, .7]):
        h = History({}); h.round_rows = _rows(acc); hs.append(h)
    cfg = OutcomeConfig(scale=0.05, size=4, test_per_group=2, hidden=4, rounds=1, k=2, seeds=1)
    Ns = np.array([[[8, 2], [2, 8]], [[2, 8], [8, 2]], [[6, 6], [6, 6]]])
    outcome_figure(('cmnist_gsc',), ('uniform',), replace(cfg, seed=1))   # warms the data generator (seed 1, not 0)
    return {'widgets.outcome': [
        ('seed_band', dict(seeds=([_rows([.5, .6]), _rows([.55, .7])], 'obj'),
                           measure=('worst_group_accuracy', 'choice'))),
        ('curves', dict(histories=({'uniform': [_rows([.5, .6]), _rows([.55, .7])]}, 'obj'), grey=(False, 'obj'))),
        ('seed_table', dict(results=({'uniform': hs, 'fedrk': hs[::-1]}, 'obj'))),
        ('outcome_simulation', dict(matrices=(Ns, 'counts'), selector=('uniform', 'choice'), cfg=(cfg, 'obj'))),
        ('check_trainable', dict(matrices=(Ns, 'counts'), cfg=(cfg, 'obj'))),   # the automatic k=9 exceeds 3 clients
        ('run_outcome', dict(matrices=(Ns, 'counts'), selector=('uniform', 'choice'), cfg=(cfg, 'obj'))),
        ('run_outcome_seeds', dict(matrices=(Ns, 'counts'), selectors=(('uniform',), 'obj'), cfg=(cfg, 'obj'))),
        ('outcome_figure', dict(federations=(('cmnist_gsc',), 'obj'), selectors=(('uniform',), 'obj'),
                                cfg=(cfg, 'obj')))]}

def _figure_controls() -> dict:
    "The layout helper, the stepper's frames and figures, the privacy and fairness helpers, the trust walkthrough."
    import plotly.graph_objects as go
    from hetfl_explore.modelhet.mia import AttackResult
    from hetfl_explore.feddiverse.selector import FedDiverseSelector
    from hetfl_explore.feddiverse.selector import oracle_triplets
    from hetfl_explore.engine.protocol import make_view
    from hetfl_explore.widgets.stepper import explain_frames
    from hetfl_explore.widgets.trust import DEMO_DEVICE
    from hetfl_explore.crowd.abac import EXAMPLE_POLICY
    Ns = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]], [[4., 0.], [1., 3.]]])
    sel = FedDiverseSelector(oracle_triplets(Ns), 'sign-invariant')
    sel.reset(4, 0); sel.select(0, make_view(4), 2, np.random.default_rng(0))
    expl = sel.explain()
    menu = dict(buttons=[dict(label='a', method='update', args=[{}])])
    fig = go.Figure(go.Scatter(y=[1, 2]), layout=dict(height=400, margin=dict(b=40), updatemenus=[menu]))
    res = AttackResult(scores=np.array([.9, .8, .3, .2, .6, .4]), labels=np.array([1, 1, 0, 0, 1, 0]),
                       preds=np.array([1, 1, 0, 0, 1, 0]), info=dict(loss=np.array([.1, .2, .7, .8, .4, .6])))
    return {'widgets.layout': [('place_controls_above', dict(fig=(fig, 'obj'), subplot_titles=(False, 'obj')))],
            'widgets.stepper': [('explain_frames', dict(explanation=(expl, 'obj'))),
                                ('step_figure', dict(triplets=(expl['triplets'], 'array'),
                                                     frame=(explain_frames(expl)[0], 'obj')))],
            'widgets.static_figures': [('stepper_figure', dict(explanation=(expl, 'obj')))],
            'widgets.privacy_fairness': [
                ('threshold_metrics', dict(res=(res, 'obj'), nu=(0.5, 'real'))),
                ('MIAAnatomy', dict(res=(res, 'obj'), steps=(10, 'size'))),
                ('redraw_in_place', dict(fw=(go.FigureWidget(), 'obj'), fig=(go.Figure(go.Bar(y=[1, 2])), 'obj'))),
                ('shortcut_confusions', dict(matrices=(Ns, 'counts'), reliance=(0.5, 'prob')))],
            'widgets.trust': [('walkthrough', dict(policy_text=(EXAMPLE_POLICY, 'obj'),
                                                   attributes=(dict(DEMO_DEVICE), 'obj'),
                                                   attack=('tamper one byte', 'choice'), trust=(0.5, 'prob')))]}

def _panel_controls() -> dict:
    "The panels' error line, the crowd and clustering panels, built headless with few devices, clients and rounds."
    return {'widgets.panel': [('error_html', dict(e=(ValueError('x=1: expected y'), 'obj')))],
            'widgets.crowd': [('PrometheePanel', dict(n=(6, 'size'), seed=(0, 'count'), budget=(25.0, 'pos'),
                                                      top=(5, 'size'))),
                              ('ShapleyPanel', dict(n_benign=(2, 'size'), kinds=(('zero',), 'obj'),
                                                    rounds=(1, 'size')))],
            'widgets.clustering': [('FedCOTradeoff', dict(rounds=(2, 'size'), seed=(0, 'count'))),
                                   ('GPFLPlayer', dict(rounds=(6, 'size'), seed=(0, 'count'))),
                                   ('WhoContributes', dict(rounds=(2, 'size'), seed=(0, 'count')))]}

def controls() -> dict:
    "group -> [(entry, {argument: (valid value, kind)})] of every public entry point of `hetfl_explore.widgets`."
    out = {}
    for part in (_editor_controls, _browser_controls, _explorer_controls, _outcome_controls, _figure_controls,
                 _panel_controls):
        for g, entries in part().items(): out.setdefault(g, []).extend(entries)
    return out
