"""Bad input never surprises (widgets part: the privacy/fairness panels and figure redraws): malformed arguments raise ValueError/TypeError naming the argument."""
import pytest
import plotly.graph_objects as go
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.widgets.privacy_fairness as wp

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
NOT_FIGURE_WIDGET = st.sampled_from([None, 'fig', 3, {'data': []}, go.Figure()])
NOT_FIGURE = st.sampled_from([None, 'fig', 3, {'data': []}, [go.Scatter()]])

COVERED = {'hetfl_explore.widgets.privacy_fairness.redraw_in_place'}

@SETTINGS
@given(bad=NOT_FIGURE_WIDGET)
def test_redraw_in_place_rejects_a_non_widget(bad):
    with pytest.raises((TypeError, ValueError), match='fw'): wp.redraw_in_place(bad, go.Figure())

@SETTINGS
@given(bad=NOT_FIGURE)
def test_redraw_in_place_rejects_a_non_figure(bad):
    with pytest.raises((TypeError, ValueError), match='fig'): wp.redraw_in_place(go.FigureWidget(), bad)

import numpy as np
import hetfl_explore.widgets.static_figures as wx
COVERED |= {'hetfl_explore.widgets.static_figures.dirichlet_metrics_figure', 'hetfl_explore.widgets.static_figures.selection_k_figure'}
SMALL = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

DIRICHLET_BAD = {'alphas': [None, 'x', 3, [], [0.5, -1.0], [float('nan')]], 'num_clients': [None, 'x', -1, 0, 1.5],
                 'n_classes': [None, 'x', 0, 3, 1.5], 'seed': [None, 'x', -1, 1.5]}

@SMALL
@given(case=st.sampled_from([(a, b) for a, bads in DIRICHLET_BAD.items() for b in bads]))
def test_dirichlet_metrics_figure_rejects_bad_arguments(case):
    arg, bad = case
    with pytest.raises((TypeError, ValueError), match=arg): wx.dirichlet_metrics_figure(**{arg: bad})

SELECTION_BAD = {'source': [None, 'nope', -1, np.zeros((2, 2))], 'selectors': [None, 'nope', (), 3], 'ks': [None, (), (3, 0), (3, 999), 1.5],
                 'rounds': [None, 0, -1, 1.5], 'seed': [None, 'x', -1]}

@SMALL
@given(case=st.sampled_from([(a, b) for a, bads in SELECTION_BAD.items() for b in bads]))
def test_selection_k_figure_rejects_bad_arguments(case):
    arg, bad = case
    with pytest.raises((TypeError, ValueError), match='k' if arg == 'ks' else arg):
        wx.selection_k_figure(**{'rounds': 3, arg: bad})

def test_kernel_free_figures_agree_across_matrix_forms():
    "numpy, nested-list and FederationSpec sources give the same frames."
    import torch
    from hetfl_explore.foundation.data import federation
    fs = federation('spawrious_gsc')
    ys = [[list(tr.y) for fr in wx.selection_k_figure(src, ks=(3,), rounds=5).frames for tr in fr.data]
          for src in (fs.matrices, fs.matrices.tolist(), torch.as_tensor(fs.matrices), fs)]
    assert all(y == ys[0] for y in ys)

import hetfl_explore.widgets.layout as wl
COVERED |= {'hetfl_explore.widgets.layout.figure_row'}

@SMALL
@given(bad=st.sampled_from([None, 'fig', 3, go.Figure(), [go.FigureWidget()]]))
def test_figure_row_rejects_a_non_widget(bad):
    with pytest.raises(TypeError, match='widgets'): wl.figure_row(go.FigureWidget(), bad)

import hetfl_explore.widgets.editor as we
COVERED |= {'hetfl_explore.widgets.editor.rows_json', 'hetfl_explore.widgets.editor.EditorView', 'hetfl_explore.widgets.editor.editor_esm'}
BAD_TYPES = st.sampled_from([None, 'x', 3, [(1, 'x')], [(-1, np.ones((2, 2)))], [(1, -np.ones((2, 2)))], [(1, np.full((2, 2), 0.5))], []])
BAD_PAGE_ROWS = st.sampled_from([[{'m': 1, 'N': [[-1, 2], [3, 4]]}], [{'m': 0, 'N': [[1, 2], [3, 4]]}], [{'x': 1}], [],
                                 [{'m': 1, 'N': [[1.5, 2], [3, 4]]}], [{'m': 1, 'N': [[0, 0], [0, 0]]}], ['row'], [{'m': 'two', 'N': [[1]]}]])

@SMALL
@given(bad=BAD_TYPES)
def test_rows_json_rejects_malformed_rows(bad):
    with pytest.raises((TypeError, ValueError), match='types'): we.rows_json(bad)

@SMALL
@given(bad=BAD_PAGE_ROWS)
def test_editor_view_rows_from_the_page_that_are_malformed_are_refused_and_the_last_valid_rows_come_back(bad):
    ed = we.MatrixEditor('spawrious_gsc'); before = ed.matrices.copy()
    ed.view.rows = bad
    assert ed.view.message and np.array_equal(ed.matrices, before) and ed.view.rows == we.rows_json(ed._types)

def test_editor_esm_is_the_computation_then_the_view_and_exports_render():
    esm = we.editor_esm()
    assert esm.index('export function') < esm.index('function render') and 'export default' in esm and esm == we.EditorView._esm

from hetfl_explore.foundation.figure_widget import SharedFigureWidget, plotly_widget_esm, SHARED_PLOTLY_ESM
COVERED |= {'hetfl_explore.foundation.figure_widget.SharedFigureWidget', 'hetfl_explore.foundation.figure_widget.plotly_widget_esm'}

@SMALL
@given(ys=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), title=st.text(max_size=20))
def test_shared_figure_widget_holds_the_figure_plotly_would_and_a_small_loader(ys, title):
    "The same figure as plotly's own `Figure`; anywidget gets the small loader, plotly's module travels as data."
    fw, fig = SharedFigureWidget([go.Bar(y=ys)], layout=dict(title=title)), go.Figure([go.Bar(y=ys)], layout=dict(title=title))
    plain = lambda d: {**d, 'data': [{k: v for k, v in t.items() if k != 'uid'} for t in d['data']]}   # a widget's traces get uids
    assert plain(fw.to_dict()) == fig.to_dict() and fw._esm == SHARED_PLOTLY_ESM and fw._plotly_esm == plotly_widget_esm()

@SMALL
@given(bad=st.sampled_from(['x', 3, [{'type': 'no-such-trace'}], {'data': 'x'}]))
def test_shared_figure_widget_rejects_what_plotly_rejects(bad):
    with pytest.raises((TypeError, ValueError)): go.FigureWidget(bad)
    with pytest.raises((TypeError, ValueError)): SharedFigureWidget(bad)

def test_plotly_widget_esm_is_plotlys_module():
    esm = plotly_widget_esm()
    assert esm == plotly_widget_esm() and len(esm) > 1_000_000 and 'export{' in esm.replace(' ', '')
