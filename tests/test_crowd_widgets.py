"""The crowdsourced-FL panels (widgets.crowd): they call the library, and bad input shows the library's message."""
import html
import numpy as np, pytest
from hetfl_explore.widgets.crowd import PrometheePanel, RacePanel, ShapleyPanel
from hetfl_explore.widgets.panel import error_html
from hetfl_explore.crowd.promethee import promethee, minmax_columns

def test_promethee_panel_ranks_like_the_library_and_reports_errors():
    p = PrometheePanel(n=20, seed=1, budget=30.0)
    t = p.ranking()
    assert list(t['rank']) == list(range(1, 21)) and p.pool.cost[p.selected()].sum() <= 30.0
    assert p.set(H=1.0, N=0.0, Q=0.0, T=0.0, q=0.0, p=0.0)           # only hardware counts: rank by g_H this round
    h = p.pool.scores(0)['H'].to_numpy()
    assert p.ranking()['client'].iloc[0] == int(np.argmax(h))
    for bad, text in [(dict(normalise=False, H=0.7), 'summing to one'), (dict(q=0.6, p=0.5), 'q=0.6 &gt; p=0.5'),
                      (dict(budget=0.5), 'budget=0.5: below every client'), (dict(H=0.0, N=0.0, Q=0.0, T=0.0), 'all zero')]:
        before = p.ranking()
        assert not p.set(**bad) and text in p.msg_w.value
        assert p.ranking().equals(before)                               # the last valid state is kept

def test_race_panel_runs_and_reports_errors():
    r = RacePanel(devices=10, rounds=2, racers=('Price-first', 'FedPROM'))
    assert r.set() and list(r.table.index) == ['Price-first', 'FedPROM'] and (r.race['money'] <= 40.0).all()
    assert not r.set(budget=0.5) and 'budget=0.5' in r.msg_w.value
    assert not r.set(racers=()) and 'racers' in r.msg_w.value

def test_shapley_panel_payouts_and_errors():
    s = ShapleyPanel(n_benign=4, rounds=4)
    assert abs(s.table['reward'].sum() - 100.0) < 1e-9 and (s.table['reward'] >= 0).all()
    np.testing.assert_allclose(s.table['profit'], s.table['reward'] - 1.0 * (s.table['kind'] == 'benign'))
    assert not s.set(n_benign=14) and 'n_players=18' in s.msg_w.value
    assert not s.set(negative='error') and 'negative' in s.msg_w.value
    assert s.set(method='prefix', L=2, n_perm=5)

@pytest.mark.parametrize('call,arg', [(lambda: PrometheePanel(n=1), 'n'), (lambda: RacePanel(devices=5), 'devices'),
                                      (lambda: ShapleyPanel(kinds=('sleepy',)), 'kinds'), (lambda: error_html('x'), 'e')])
def test_panel_constructors_reject_bad_input(call, arg):
    with pytest.raises((ValueError, TypeError), match=arg): call()

@pytest.mark.parametrize('make', [lambda: PrometheePanel(n=10, seed=1), lambda: RacePanel(devices=10, rounds=2, racers=('FedPROM',)),
                                  lambda: ShapleyPanel(n_benign=4, rounds=4)])
def test_an_unknown_setting_is_refused_with_its_name_not_ignored(make):
    panel = make()
    assert not panel.set(budgett=3.0) and "unknown ['budgett']" in html.unescape(panel.msg_w.value)
