"""Bad input never surprises (widgets part, issue 25 additions): malformed arguments raise ValueError/TypeError naming the argument."""
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
