"""Panels of the heterogeneity lab driven through their Python API (no browser): editor, explorer, stepper, taxonomy, outcome."""
import time
import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given, settings, strategies as st
from hetfl_explore.foundation.data import federation
from hetfl_explore.widgets.editor import MatrixEditor, check_types, expand_types, federation_summary, preset_types, EDITOR_PRESETS
from hetfl_explore.widgets.explorers import SelectionExplorer, TaxonomyExplorer
from hetfl_explore.widgets.stepper import FedDiverseStepper
from hetfl_explore.feddiverse.selector import oracle_triplets
from hetfl_explore.feddiverse.selector import diversity_rounds
from hetfl_explore.feddiverse.simulation import simulate_selection
from hetfl_explore.feddiverse.registry import SELECTORS
from hetfl_explore.foundation.hetero import fl_metrics

def test_editor_cell_edit_in_the_page_changes_metrics_and_tells_listeners():
    ed = MatrixEditor(preset='spawrious_gsc'); seen = []; ed.on_change(lambda e: seen.append(e.metrics()))
    rows = [dict(r, N=[line[:] for line in r['N']]) for r in ed.view.rows]
    rows[0]['N'][0][0] = 0; ed.view.rows = rows                 # what the page sends after the first .hx-cell is edited
    assert ed.matrices[0, 0, 0] == 0 and len(seen) == 1 and seen[0] == pytest.approx(fl_metrics(ed.matrices))
    assert ed.metrics() == pytest.approx(fl_metrics(ed.matrices)) and ed.view.message == ''
    for cls in ('hx-editor', 'hx-cell', 'hx-metrics', 'hx-simplex', 'hx-shares', 'hx-message', 'hetfl-kernel-free'):
        assert cls in ed.view._esm

@pytest.mark.parametrize('bad', [(0, 0, 0, -1), (0, 5, 0, 3), (99, 0, 0, 3), (0, 0, 0, 1.5)])
def test_editor_rejects_invalid_edits_and_keeps_state(bad):
    ed = MatrixEditor(preset='waterbirds_dist'); keep, rows = ed.matrices, ed.view.rows
    assert not ed.set_cell(*bad) and ed.message and (ed.matrices == keep).all() and ed.view.message == ed.message
    assert ed.view.rows == rows

@pytest.mark.parametrize('rows', [[{'m': 1, 'N': [[0, 0], [0, 0]]}], [], [{'m': 1, 'N': [[-3, 1], [1, 1]]}],
                                  [{'m': 0, 'N': [[1, 1], [1, 1]]}], [{'m': 1, 'N': [[2.5, 1], [1, 1]]}], [{'N': [[1, 1], [1, 1]]}]])
def test_editor_refuses_bad_rows_from_the_page_and_restores_them(rows):
    "Rows the page should never send (its own checks refuse them) are refused again by Python, and the page gets the valid rows back."
    ed = MatrixEditor(preset='spawrious_gsc'); keep, valid, seen = ed.matrices, ed.view.rows, []
    ed.on_change(lambda e: seen.append(1))
    ed.view.rows = rows
    assert ed.view.rows == valid and (ed.matrices == keep).all() and ed.view.message and not seen

def test_editor_empty_client_and_multiplicity():
    ed = MatrixEditor(preset='spawrious_gsc'); keep = ed.matrices
    for y in range(2):
        for a in range(2): ed.set_cell(5, y, a, 0)
    assert ed.matrices[-1].sum() > 0 and 'empty client' in ed.message            # the last zero is refused
    assert not ed.set_multiplicity(0, 0) and ed.matrices.shape == keep.shape
    assert ed.set_multiplicity(0, 5) and len(ed.matrices) == 27

def test_presets_all_load():
    ed = MatrixEditor(preset='spawrious_gsc')
    for name in EDITOR_PRESETS:
        assert ed.load_preset(name) and len(ed.matrices) == sum(m for m, _ in preset_types(name))

@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.lists(st.integers(0, 50), min_size=4, max_size=4)), min_size=1, max_size=6))
def test_summary_matches_library_or_is_rejected(rows):
    types = [(m, np.array(v).reshape(2, 2)) for m, v in rows]
    if any(N.sum() == 0 for _, N in types):
        with pytest.raises(ValueError, match='empty client'): check_types(types)
        return
    s = federation_summary(types)
    assert s['metrics'] == pytest.approx(fl_metrics(expand_types(types)))
    assert sum(s['type_counts'].values()) == sum(m for m, _ in types)

def test_fast_feddiverse_rounds_are_distinct_and_balanced():
    t = oracle_triplets(federation('spawrious_gci_100').matrices)
    ids = diversity_rounds(t, 12, 200, np.random.default_rng(0))
    assert ids.shape == (200, 12) and all(len(set(r)) == 12 for r in ids)

def test_explorer_follows_editor_and_rejects_bad_settings():
    ed = MatrixEditor(preset='spawrious_gsc'); ex = SelectionExplorer(ed, selectors=('uniform', 'feddiverse[sign-invariant]'), k=6, rounds=50)
    old = ex.type_shares().copy()
    ed.load_preset('spawrious_gci'); assert not ex.type_shares().equals(old) and ex.selected().shape == (50, 24)
    assert not ex.set(selectors=('nope',)) and ex.selectors == ('uniform', 'feddiverse[sign-invariant]')
    assert not ex.set(k=25) and ex.k == 6
    assert ex.set(selectors=('pow-d', 'fedrk'), rounds=30) and list(ex.type_shares().index) == ['pow-d', 'fedrk']

def test_every_explorer_selector_runs_on_4_classes():
    N = np.stack([N for _, N in preset_types('dirichlet4_1')])
    for name in SELECTORS: assert simulate_selection(N, name, 10, 6).selected.sum() == 60   # k = 6: no overselection

def test_stepper_and_taxonomy():
    st_ = FedDiverseStepper('spawrious_gsc', k=6)
    assert [f['kind'] for f in st_.frames] == list('pcrpcr') and st_.prev()['kind'] == 'p'
    tx = TaxonomyExplorer(); assert 'pow-d' in tx.set_filter(message='loss') and tx.run_w.disabled   # no explorer linked
    with pytest.raises(ValueError, match='no SelectionExplorer'): tx.run_in_explorer('pow-d')

from hetfl_explore.widgets.outcome import DEBOUNCE_S
SMALL_RUN = dict(rounds=4, seeds=2)   # outcome runs of the tests: a few rounds, two seeds (the properties do not depend on size)

def _small(**kw):
    from hetfl_explore.widgets.outcome import TEACHING_PRESET
    from dataclasses import replace
    return replace(TEACHING_PRESET, **{**SMALL_RUN, **kw})

def test_outcome_panel_short_training_and_cache():
    from hetfl_explore.widgets.outcome import OutcomePanel
    p = OutcomePanel('cmnist_gsc', selectors=('uniform',), config=_small(rounds=3))
    r = p.run(background=False)
    assert [len(h) for h in r['uniform']] == [3, 3] and 0 <= p.table().loc['uniform', 'worst_group_accuracy'] <= 1
    rounds = []; p.on_round(lambda t, rows: rounds.append(t))
    again = p.run(background=False)                                       # cached: the same Histories, no round trained
    assert all(a is b for a, b in zip(again['uniform'], r['uniform'])) and rounds == [2, 2]   # finished curves: the first seed's, then all
    assert not p.set(aggregator='nope') and p.config.aggregator == 'fedavg'

def test_outcome_runs_bound_torch_threads_and_restore_them():
    import torch
    from hetfl_explore.widgets.outcome import run_outcome_seeds, run_outcome
    from hetfl_explore.foundation.core import PANEL_TORCH_THREADS
    before = torch.get_num_threads(); torch.set_num_threads(2); inside = []
    try:
        run_outcome_seeds(federation('cmnist_gsc').matrices, ('uniform',), _small(seed=900), on_round=lambda rows: inside.append(torch.get_num_threads()))
        run_outcome(federation('cmnist_gsc').matrices, 'fedrk', _small(seed=901), callbacks=[lambda sim, row: inside.append(torch.get_num_threads())])
        assert set(inside) == {PANEL_TORCH_THREADS} and len(inside) == 5 + 4 and torch.get_num_threads() == 2
    finally: torch.set_num_threads(before)

def test_outcome_seeds_count_band_and_table():
    from hetfl_explore.widgets.outcome import run_outcome_seeds, seed_band, seed_table, curves
    res = run_outcome_seeds(federation('cmnist_gsc').matrices, ('uniform', 'fedrk'), _small(seed=910, seeds=3))
    assert [len(v) for v in res.values()] == [3, 3] and [h.config['seed'] for h in res['uniform']] == [910, 911, 912]
    w = np.array([[r['worst_group_accuracy'] for r in h.round_rows] for h in res['fedrk']])
    r, m, se = seed_band(res['fedrk'])
    assert list(r) == [0, 1, 2, 3] and np.allclose(m, w.mean(0)) and np.allclose(se, w.std(0, ddof=1) / np.sqrt(3))
    band = curves(res).data[6]; n = len(r)                                 # fedrk's worst-group band
    assert np.allclose(band.y[:n], m + se) and np.allclose(band.y[n:][::-1], m - se)
    t = seed_table(res); d = w[:, -1] - np.array([h.round_rows[-1]['worst_group_accuracy'] for h in res['uniform']])
    assert t.loc['fedrk', 'worst group − first'] == pytest.approx(d.mean()) and t.loc['fedrk', 'seeds'] == 3
    assert t.loc['fedrk', 'sign holds'] == f'{int((np.sign(d) == np.sign(d.mean())).sum())}/3'

def _follower(editor, **kw):
    from hetfl_explore.widgets.outcome import OutcomePanel
    p = OutcomePanel(editor, selectors=('uniform',), config=_small(**kw)); p.wait(60)
    return p

def test_outcome_panel_follows_an_edit_and_a_stale_run_never_draws():
    ed = MatrixEditor('cmnist_gsc')
    p = _follower(ed, rounds=12, seed=920); drawn, edited = [], []
    g0 = p.generation
    def at_round(t, rows):
        drawn.append((p.generation, t))
        if t == 2 and p.generation == g0 + 1 and not edited:             # a second edit while the first one's run is at round 2
            edited.append(t); ed.set_cell(0, 0, 0, int(ed.types[0][1][0, 0]) + 4)
    p.on_round(at_round)
    ed.set_cell(0, 0, 0, int(ed.types[0][1][0, 0]) + 4)                   # the first edit: generation g0 + 1 trains at once
    p.wait(120); time.sleep(2 * DEBOUNCE_S); p.wait(120)                  # (a debounced follow-up starts within DEBOUNCE_S)
    g1 = p.generation
    assert g1 > g0 + 1 and edited == [2] and 'done' in p.status
    assert [t for g, t in drawn if g == g0 + 1] == [0, 0, 1, 2]            # the stale generation stopped after the edit's round
    assert [t for g, t in drawn if g == g1] == [0, *range(12)] and drawn[-1] == (g1, 11)   # round 0: first seed, then all
    assert p.matrices[0, 0, 0] == ed.matrices[0, 0, 0] and all(h.round_rows for h in p.results['uniform'])

def test_outcome_panel_with_follow_off_waits_for_run():
    ed = MatrixEditor('cmnist_gsc')
    from hetfl_explore.widgets.outcome import OutcomePanel
    p = OutcomePanel(ed, selectors=('uniform',), config=_small(seed=930), follow=False)
    assert not p.running and p.generation == 0
    ed.set_cell(0, 0, 0, int(ed.types[0][1][0, 0]) + 2)
    assert p.generation == 0 and not p.running and 'press run' in p.status

@pytest.mark.parametrize('edit, says', [
    (lambda N: N[:, 1].__setitem__(Ellipsis, 0), 'no client holds class 1'),
    (lambda N: N[0, 0].__setitem__(0, 100_000), 'needs'),
    (lambda N: N[3].__setitem__(Ellipsis, 0), 'client 3'),
])
def test_outcome_panel_refuses_untrainable_federations_beside_grey_curves(edit, says):
    from hetfl_explore.widgets.outcome import OutcomePanel, GREY
    p = OutcomePanel('cmnist_gsc', selectors=('uniform',), config=_small(seed=940))
    p.run(background=False); drawn = {t.line.color for t in p.fig.data}
    N = p.matrices.copy(); edit(N); p.source = N
    p.run(); p.wait(60)
    assert not p.running and says in p.status and p.status.startswith('⚠') and {t.line.color for t in p.fig.data} == {GREY} != drawn

def test_outcome_panel_refuses_more_clients_per_round_than_clients():
    from hetfl_explore.widgets.outcome import OutcomePanel
    p = OutcomePanel(federation('cmnist_gsc').matrices[:5], selectors=('uniform',), config=_small(seed=950))
    assert p.run(background=False) == {} and 'k=9' in p.status

def test_privacy_fairness_panels():
    from hetfl_explore.widgets.privacy_fairness import FairnessExplorer, shortcut_confusions, fairness_matrices, threshold_metrics, MIAAnatomy
    from hetfl_explore.modelhet.mia import AttackResult
    fe = FairnessExplorer(strength=0.8, mix=0.75, reliance=0.0)
    assert abs(fe.fairness().loc['federation (Σ C_k)', 'd_dp']) < 0.61 and fe.fairness().loc['federation (Σ C_k)', 'acc'] == 100
    assert not fe.set(mix=2) and fe.mix == 0.75
    assert not fe.set(mixx=0.5) and "unknown ['mixx']" in __import__('html').unescape(fe.msg_w.value) and fe.mix == 0.75   # a typo is refused, not ignored
    C = shortcut_confusions(fairness_matrices(0.5, 1.0), 1.0)
    assert all(float(c.sum()) == 100 for c in C)
    res = AttackResult(scores=-np.r_[np.full(5, 0.1), np.full(5, 1.0)], labels=np.r_[np.ones(5), np.zeros(5)].astype(int), preds=np.zeros(10, int))
    m = threshold_metrics(res, 0.5); assert (m['tpr'], m['fpr'], m['advantage']) == (1.0, 0.0, 1.0)
    assert MIAAnatomy(res).set_threshold(2.0)['fpr'] == 1.0

def test_tradeoff_explorer_on_user_runs():
    "The trade-off panel accepts a table of the user's own runs and refuses a number of large clients it lacks."
    import pandas as pd
    from hetfl_explore.modelhet.experiments import appendix_tables
    from hetfl_explore.widgets.privacy_fairness import TradeoffExplorer
    mine = appendix_tables().query("dataset == 'CIFAR-100'").drop(columns='dataset')
    panel = TradeoffExplorer(mine, n_large=5, privacy='auc_yeom')
    pts = panel.points().set_index('method')
    assert len(pts) == 11 and pts.privacy.between(40, 70).all()
    with pytest.raises(ValueError, match='n_large=4'): panel.set(n_large=4)
    assert panel.n_large == 5

# ---------------------------------------------------------------- bad input never surprises (regression tests)
def test_check_types_refuses_infinite_and_huge_counts():
    "An infinite count is refused with the row named, never cast to -9223372036854775808."
    with pytest.raises(ValueError, match=r'types: row 0: entry \(0, 0\) = inf is infinite'): check_types([(1, [[np.inf, 1], [1, 1]])])
    with pytest.raises(ValueError, match=r'types: row 0: entry \(0, 0\) = 1e\+300 is above MAX_COUNT'): check_types([(1, [[1e300, 1], [1, 1]])])

@pytest.mark.parametrize('kw,name', [(dict(k=0), 'k=0'), (dict(rounds=0), 'rounds=0'), (dict(noise=-1), 'noise=-1'),
                                     (dict(source='nope'), "source='nope'"), (dict(selectors=('nope',)), "selectors='nope'")])
def test_selection_explorer_bad_arguments_fail_at_construction(kw, name):
    "Bad constructor arguments raise a clear ValueError naming the argument at once."
    with pytest.raises(ValueError, match=name): SelectionExplorer(**kw)

def test_selection_explorer_bad_edit_shows_message():
    "On an edit, an invalid setting shows the message in the panel and keeps the last valid state."
    ex = SelectionExplorer(rounds=20); k = ex.k
    for kw in (dict(k=0), dict(rounds=0), dict(noise=-1)):
        assert not ex.set(**kw) and next(iter(kw)) in ex.msg_w.value and ex.k == k
    ex.k_w.max = 30; ex.k_w.value = 30                                             # from the slider: above K = 24
    assert 'k=30' in ex.msg_w.value and ex.k == k

def test_matrix_editor_refuses_empty_types():
    "MatrixEditor(types=[]) raises at construction, not later when .matrices is read."
    with pytest.raises(ValueError, match='types: the federation needs at least one client'): MatrixEditor(types=[])

def test_submodel_and_tradeoff_explorers_redraw_their_figures_in_place():
    "The figure widgets are built once and show exactly the figure of the current settings after every change."
    import json
    from hetfl_explore.widgets.privacy_fairness import SubmodelExplorer, TradeoffExplorer, redraw_in_place
    from hetfl_explore.modelhet.submodels import coverage_heatmap, schedule_timeline
    same = lambda fw, fig: json.dumps(fw.to_dict(), sort_keys=True, default=str) == json.dumps(fig.to_dict(), sort_keys=True, default=str)
    sub = SubmodelExplorer('GFR', n_small=4); ws = sub.fig_ws
    for kw in (dict(method='OFM'), dict(method='USR', n_small=6), dict(t=5)):
        sub.set(**kw)
        assert sub.fig_ws is ws and same(ws[0], coverage_heatmap(sub.schedule, sub.round)) and same(ws[1], schedule_timeline(sub.schedule, sub.rounds))
    trade = TradeoffExplorer(); w = trade.fig_w
    for kw in (dict(n_large=8), dict(privacy='auc_lira'), dict(n_large=2, privacy='auc_avg')):
        fig = trade.set(**kw); assert trade.fig_w is w and same(w, fig)
    import plotly.graph_objects as go
    fw = redraw_in_place(go.FigureWidget(go.Figure(go.Bar(x=[1], y=[2]), layout=dict(title='a'))), go.Figure(go.Scatter(x=[3], y=[4])))
    assert [t.type for t in fw.data] == ['scatter'] and list(fw.data[0].x) == [3] and fw.layout.title.text is None   # replaced; title removed

def test_mia_slider_follows_the_threshold_and_heatmap_choice_is_set():
    "The ν slider shows the threshold set in code (the nearest grid value), and the heatmap dropdown starts on a selector."
    from hetfl_explore.widgets.privacy_fairness import MIAAnatomy
    from hetfl_explore.modelhet.mia import AttackResult
    r = np.random.default_rng(0)
    res = AttackResult(scores=-r.lognormal(-1, 1, 200), labels=np.r_[np.ones(100), np.zeros(100)].astype(int), preds=np.zeros(200, int), attack='t')
    res.info['loss'] = -res.scores
    p = MIAAnatomy(res)
    assert p.slider.value == p.nu
    p.set_threshold(p.grid[7]); assert p.slider.value == p.grid[7]
    p.set_threshold(p.grid[3] + 1e-9); assert p.slider.value == p.grid[3] and p.nu == p.grid[3] + 1e-9
    p.slider.value = p.grid[10]; assert p.nu == p.grid[10]
    ex = SelectionExplorer(MatrixEditor(preset='spawrious_gsc'), selectors=('uniform', 'feddiverse[sign-invariant]'), k=9, rounds=20)
    assert ex.show_w.value == 'uniform'

def test_editor_page_carries_presets_names_and_published_values():
    "The page holds every preset (so choosing one needs no kernel), the current names and published metrics, and κ, rounds."
    import hetfl_explore.widgets.editor as wx
    ed = MatrixEditor(preset='spawrious_gsc')
    for preset in wx.EDITOR_PRESETS:
        entry = ed.view.presets[preset]
        assert entry['rows'] == wx.rows_json(preset_types(preset)) and entry['label'] == wx.EDITOR_PRESETS[preset]
        assert ed.load_preset(preset) and ed.view.preset == preset and ed.view.names['attrs'] == entry['attrs']
        assert ed.view.published == {k: v for k, v in wx.published_values(preset).items() if v is not None}
    ed.view.preset = 'waterbirds_dist'; ed.view.rows = ed.view.presets['waterbirds_dist']['rows']   # chosen in the page
    assert ed.preset == 'waterbirds_dist' and ed.published == wx.published_values('waterbirds_dist')
    assert (ed.view.k, ed.view.rounds) == (wx.EDITOR_K, wx.EDITOR_ROUNDS)

def _figures(w):
    "Every FigureWidget inside a widget tree."
    import plotly.graph_objects as go
    return [w] if isinstance(w, go.FigureWidget) else [f for c in getattr(w, 'children', ()) for f in _figures(c)]

def test_panel_figures_fit_a_lab_output_at_1280():
    "Figures side by side fit JupyterLab's output at 1280 px with the file browser open, and their rows wrap."
    import hetfl_explore.widgets.layout as wx
    from hetfl_explore.widgets.clustering import GPFLPlayer
    ex = SelectionExplorer('spawrious_gsc', selectors=('uniform',), k=6, rounds=10)
    rows = [b for b in ex.box.children if _figures(b) and b.layout.flex_flow == 'row wrap']
    assert len(rows) == 2 and all(sum(f.layout.width + 4 for f in _figures(r)) <= wx.LAB_OUTPUT_PX for r in rows)
    assert all(f.layout.width <= wx.PANEL_FIGURE_PX for f in _figures(GPFLPlayer(rounds=6).box))

def test_every_figure_widget_of_the_package_shares_plotly():
    "Panels and live curves draw with `SharedFigureWidget` (plotly's module evaluated once per page), never a plain FigureWidget."
    import re
    import plotly.graph_objects as go
    from hetfl_explore.foundation.figure_widget import SharedFigureWidget, SHARED_PLOTLY_ESM
    from hetfl_explore.widgets.privacy_fairness import SubmodelExplorer, TradeoffExplorer
    from hetfl_explore.engine.simulation import LivePlot
    plain = [f'{p.relative_to(ROOT)}:{i + 1}' for p in (ROOT/'hetfl_explore').rglob('*.py')
             for i, line in enumerate(p.read_text().splitlines()) if re.search(r'\bgo\.FigureWidget\(', line)]
    assert plain == [], plain
    assert all(isinstance(f, SharedFigureWidget) for f in SubmodelExplorer('GFR', n_small=4).fig_ws)   # (plotly subclasses per figure)
    assert isinstance(TradeoffExplorer().fig_w, SharedFigureWidget)
    live = LivePlot().widget
    assert isinstance(live, SharedFigureWidget) and live._esm == SHARED_PLOTLY_ESM and isinstance(live, go.FigureWidget)

def test_editor_labels_derived_values_as_derived_and_rounds_once():
    "spawrious_4: the paper prints only GCI, GAI, GSC; CAI is the package's own value, under 'derived', exact until shown."
    import hetfl_explore.widgets.editor as wx
    from hetfl_explore.foundation.data import federation
    from hetfl_explore.foundation.hetero import fl_metrics
    ed = wx.MatrixEditor('spawrious_4')
    assert set(ed.view.published) == {'GCI', 'GAI', 'GSC'} and 'CAI' not in ed.view.published
    cai = float(fl_metrics(federation('spawrious_4').matrices)['CAI'])
    assert ed.view.derived['CAI'] == cai and f'{cai:.3f}' == '0.044'
    page = wx._preset_entries()['spawrious_4']
    assert 'CAI' not in page['published'] and page['derived']['CAI'] == cai
    html = wx.summary_html(ed.summary(), wx.published_values('spawrious_4'), wx.derived_values('spawrious_4'))
    assert '0.045' not in html and html.count('0.044') == 2          # edited and derived CAI: the same value, rounded once
