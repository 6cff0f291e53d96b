"""Every panel stands on `widgets.panel.Panel`: one exception-safe re-entrance guard, written once.

For every panel class a library call made inside one of its handlers is planted to raise once (a `RuntimeError`, a
bug, and a `ValueError`, a refused value); the user's edit that hits it must leave the guard released, and the next edit
must be heard and change what the panel shows. A source scan fails on a flag-style guard (an attribute set to `True`
and to `False`) written anywhere in `hetfl_explore/widgets/` outside the base class."""
from __future__ import annotations
import ast, json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
import numpy as np
import pytest
from conftest import ROOT
import hetfl_explore.widgets.clustering as wc
import hetfl_explore.widgets.crowd as wcr
import hetfl_explore.widgets.editor as we
import hetfl_explore.widgets.explorers as wx
import hetfl_explore.widgets.outcome as wo
import hetfl_explore.widgets.panel as wp
import hetfl_explore.widgets.privacy_fairness as wpf
import hetfl_explore.widgets.stepper as ws
import hetfl_explore.widgets.trust as wt
from hetfl_explore.modelhet.mia import AttackResult

WIDGETS = ROOT / 'hetfl_explore' / 'widgets'

@dataclass
class Case:
    "A panel, the library call one of its handlers makes, a user's edit `i` that reaches it, and what the panel shows."
    make: Callable        # () -> a panel built small
    module: object        # where the handler looks the call up
    call: str             # the name of the call in `module`
    edit: Callable        # (panel, i) -> None: the user's i-th edit (0: hits the planted error, 1: the next one)
    shown: Callable       # panel -> what the panel shows (compared before and after)

def _toy_attack() -> AttackResult:
    r = np.random.default_rng(0)
    return AttackResult(scores=-r.lognormal(-1, 1, 60), labels=np.r_[np.ones(30), np.zeros(30)].astype(int),
                        preds=np.zeros(60, int), attack='toy')

def _rows(i):
    "Editor rows as the page sends them: two client types whose first count depends on `i`."
    return [{'m': 2, 'N': [[40 + 5 * i, 10], [10, 40]]}, {'m': 1, 'N': [[10, 40], [40, 10 + i]]}]

def _click(panel, i, **values):
    "Set controls as the user would, then press the panel's run button."
    for k, v in values.items(): panel.w[k].value = v
    panel.run_w.click()

POLICY_CATEGORIES = list(wx.DIMENSIONS['policy']['categories'])
FIGURE = lambda p: repr(p.fig.data) + p.status.value

CASES = {
    'MatrixEditor': Case(lambda: we.MatrixEditor(types=[(1, np.array([[5, 1], [1, 5]]))]), we, 'federation_summary',
                         lambda p, i: setattr(p.view, 'rows', _rows(i)), lambda p: p.matrices.tolist()),
    'SelectionExplorer': Case(lambda: wx.SelectionExplorer('spawrious_gsc', selectors=('uniform',), k=3, rounds=20),
                              wx, 'simulate_selection', lambda p, i: setattr(p.k_w, 'value', 4 + i),
                              lambda p: (p.k, p.table_w.value)),
    'TaxonomyExplorer': Case(wx.TaxonomyExplorer, wx, 'methods_where',
                             lambda p, i: setattr(p.filter_w['policy'], 'value', POLICY_CATEGORIES[i]),
                             lambda p: p.list_w.options),
    'FedDiverseStepper': Case(lambda: ws.FedDiverseStepper('waterbirds_dist', k=3), ws, 'explain_frames',
                              lambda p, i: setattr(p.variant_w, 'value', ('paper-literal', 'official-code')[i]),
                              lambda p: p.selector.variant),
    'OutcomePanel': Case(lambda: wo.OutcomePanel('cmnist_gsc', follow=False), wo, 'check_selectors',
                         lambda p, i: setattr(p.rounds_w, 'value', 3 + i), lambda p: p.config.rounds),
    'MIAAnatomy': Case(lambda: wpf.MIAAnatomy(_toy_attack(), steps=10), wpf, 'threshold_metrics',
                       lambda p, i: setattr(p.slider, 'value', float(p.grid[2 + i])), lambda p: p.text_w.value),
    'SubmodelExplorer': Case(lambda: wpf.SubmodelExplorer('GFR', n_small=4, rounds=4), wpf, 'ChannelSchedule',
                             lambda p, i: setattr(p.small_w, 'value', 5 + i), lambda p: list(p.schedule.small)),
    'TradeoffExplorer': Case(wpf.TradeoffExplorer, wpf, 'tradeoff_scatter',
                             lambda p, i: setattr(p.privacy_w, 'value', ('auc_yeom', 'auc_lira')[i]),
                             lambda p: p.points().to_json()),
    'FairnessExplorer': Case(lambda: wpf.FairnessExplorer(rounds=5), wpf, 'client_table',
                             lambda p, i: setattr(p.w['strength'], 'value', (0.5, 0.3)[i]), lambda p: p.table_w.value),
    'PrometheePanel': Case(lambda: wcr.PrometheePanel(n=10), wcr, 'PrometheeSelector',
                           lambda p, i: setattr(p.w['q'], 'value', (0.1, 0.2)[i]), lambda p: p.table.to_json()),
    'RacePanel': Case(lambda: wcr.RacePanel(devices=10, rounds=1, racers=('Random',)), wcr, 'selection_race',
                      lambda p, i: _click(p, i, rounds=1 + i), lambda p: p.table is not None and p.table.to_json()),
    'ShapleyPanel': Case(lambda: wcr.ShapleyPanel(n_benign=2, kinds=('zero',), rounds=1), wcr, 'free_rider_run',
                         lambda p, i: setattr(p.w['rounds'], 'value', 2 + i), lambda p: p.table.to_json()),
    'AggregationPlayground': Case(wt.AggregationPlayground, wt, 'playground_figure',
                                  lambda p, i: setattr(p.w['rounds'], 'value', 2 + i), lambda p: p.figure.to_json()),
    'TrustWalkthrough': Case(wt.TrustWalkthrough, wt, 'walkthrough',
                             lambda p, i: _click(p, i, attack=('expired', 'revoked')[i]), lambda p: p.report.value),
    'ProfileLab': Case(wc.ProfileLab, wc, 'class_distance_matrix',
                       lambda p, i: setattr(p.w['distance'], 'value', ('w1_ordinal', 'semantic')[i]), FIGURE),
    'EccentricityPanel': Case(wc.EccentricityPanel, wc, 'cluster_stats',
                              lambda p, i: setattr(p.w['drift'], 'value', (0.6, 0.9)[i]), FIGURE),
    'GPFLPlayer': Case(lambda: wc.GPFLPlayer(rounds=6), wc, 'make_subplots',
                       lambda p, i: setattr(p.w['t'], 'value', 3 + i), FIGURE),
    'FedCOTradeoff': Case(lambda: wc.FedCOTradeoff(rounds=2), wc, 'FedCO',
                          lambda p, i: setattr(p.w['k'], 'value', 3 + i), FIGURE),
    'WhoContributes': Case(lambda: wc.WhoContributes(rounds=2), wc, 'contribution_study',
                           lambda p, i: setattr(p.w['drifting'], 'value', 1 - i), FIGURE),
}

def panel_classes() -> set[str]:
    "Every class of `hetfl_explore.widgets` that subclasses `Panel`, the chapter's `FigurePanel` base excepted."
    mods = (wc, wcr, we, wx, wo, wpf, ws, wt)
    return {n for m in mods for n, c in vars(m).items() if isinstance(c, type) and issubclass(c, wp.Panel)
            and c.__module__ == m.__name__ and c is not wc.FigurePanel}

def test_every_panel_class_has_a_planted_error_case():
    assert panel_classes() == set(CASES)

def plant(monkeypatch, module, name, exc) -> dict:
    "Make `module.name` raise `exc` on its next call only; counts the calls."
    real, calls = getattr(module, name), dict(raised=0, after=0)
    def once(*args, **kwargs):
        if not calls['raised']:
            calls['raised'] += 1
            raise exc(f'{name}: planted failure')
        calls['after'] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, once)
    return calls

@pytest.mark.parametrize('exc', [RuntimeError, ValueError])
@pytest.mark.parametrize('name', sorted(CASES))
def test_a_handler_that_raises_leaves_the_panel_answering(name, exc, monkeypatch):
    case = CASES[name]
    panel = case.make()
    assert isinstance(panel, wp.Panel) and not panel.busy
    before = case.shown(panel)
    calls = plant(monkeypatch, case.module, case.call, exc)
    try: case.edit(panel, 0)                     # the planted error raises inside the handler ...
    except exc as e: assert 'planted failure' in str(e)   # ... propagates (a bug), or is shown (a refused value)
    assert calls['raised'] == 1, f'{name}: the edit did not reach {case.call}'
    assert not panel.busy, f'{name}: the guard stayed held after the handler raised'
    case.edit(panel, 1)                          # the next edit is heard
    assert calls['after'] >= 1, f'{name}: the next edit was not heard'
    assert case.shown(panel) != before, f'{name}: the next edit changed nothing on screen'
    assert not panel.busy

# ---- the source scan: no flag-style guard outside the base class -----------------------------------------------------

def _bool_flags(node) -> list[tuple[str, bool, int]]:
    "(attribute, value, line) of every `x.attr = True/False` (tuple assignments too) and `setattr(x, 'attr', b)`."
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                both = isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple)
                pairs = zip(t.elts, n.value.elts) if both else [(t, n.value)]
                out += [(a.attr, v.value, n.lineno) for a, v in pairs
                        if isinstance(a, ast.Attribute) and isinstance(v, ast.Constant) and isinstance(v.value, bool)]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == 'setattr' and len(n.args) == 3:
            a, v = n.args[1], n.args[2]
            if isinstance(a, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, bool):
                out.append((a.value, v.value, n.lineno))
    return out

def hand_written_guards(source:str, where:str='') -> list[str]:
    "Attributes one module sets both to True and to False (a hand-written re-entrance flag), outside class `Panel`."
    tree = ast.parse(source)
    base = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == 'Panel']
    skip = {id(n) for b in base for n in ast.walk(b)}
    seen: dict[str, dict[bool, int]] = {}
    for n in tree.body:
        if id(n) in skip: continue
        for attr, value, line in _bool_flags(n): seen.setdefault(attr, {}).setdefault(value, line)
    return [f'{where}:{v[True]} sets .{a} = True, line {v[False]} sets it False'
            for a, v in seen.items() if len(v) == 2]

def test_no_hand_written_guard_outside_the_panel_base():
    bad = [g for f in sorted(WIDGETS.glob('*.py')) for g in hand_written_guards(f.read_text(), f.name)]
    assert not bad, 'use Panel.quiet (or heard/sync/listen) instead of a flag:\n' + '\n'.join(bad)

OLD_GUARD = '''
class SubmodelExplorer:
    def __init__(self):
        self._busy = False
    def set(self, method):
        self._busy = True
        self.method_w.value = method
        self._busy = False
'''
OLD_HELPER = '''
def _sync(widgets, values, owner):
    owner._busy = True
    try: widgets.update(values)
    finally: owner._busy = False
'''
QUIET = '''
class Panel:
    def quiet(self):
        self._on = True
        self._on = False
class SubmodelExplorer(Panel):
    def set(self, method):
        with self.quiet(): self.method_w.value = method
'''

def test_the_scan_finds_the_old_guards_and_passes_the_base():
    assert hand_written_guards(OLD_GUARD, 'x.py') == ['x.py:6 sets ._busy = True, line 4 sets it False']
    assert len(hand_written_guards(OLD_HELPER)) == 1
    assert len(hand_written_guards('def f(o):\n    setattr(o, "_syncing", True)\n    o._syncing = False\n')) == 1
    assert hand_written_guards('def f(o):\n    o.a, o.b = True, 1\n    o.a, o.b = 1, False\n') == []
    assert hand_written_guards(QUIET) == []      # the base may hold its own flag; its users write none
    assert not (WIDGETS / 'panel.py').read_text().count('_busy')

def test_the_guard_nests_and_is_released_by_any_exception():
    p = wp.Panel()
    with p.quiet():
        with p.quiet(): assert p.busy
        assert p.busy
    assert not p.busy
    for exc in (RuntimeError, KeyError, KeyboardInterrupt):
        with pytest.raises(exc):
            with p.quiet(): raise exc('inside')
        assert not p.busy

def test_sync_is_not_heard_and_set_keeps_the_last_good_state():
    import ipywidgets as W
    class Half(wp.Panel):
        def __init__(self):
            self.w, self.msg_w, self.calls = dict(x=W.IntSlider(4, min=-10, max=10)), W.HTML(), 0
            self.listen()
            self.set(x=4)
        def compute(self, x):
            self.calls += 1
            if x % 2: raise ValueError(f'x={x}: expected an even number')
            return x // 2
        def draw(self, result): self.shown = result
    h = Half()
    assert (h.shown, h.calls, h.values(), h.settings) == (2, 1, {'x': 4}, {'x': 4})
    h.w['x'].value = 8
    assert (h.shown, h.calls) == (4, 2)                    # one computation per edit
    assert h.set(x=-6) and h.w['x'].value == -6 and h.calls == 3   # `set` moves the slider and is not heard again
    assert not h.set(x=3) and h.error == 'x=3: expected an even number' and 'hx-error' in h.msg_w.value
    assert (h.shown, h.settings, h.w['x'].value) == (-3, {'x': -6}, -6)
    assert not h.set(y=1) and "unknown ['y']" in h.error
    assert h.set(x=2) and h.error is None and h.msg_w.value == ''
