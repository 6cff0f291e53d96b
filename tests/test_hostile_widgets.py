"""Hostile input to the widgets' public entry points: each is refused with a message that names the caller's argument,
shows the value and says what is allowed, and equivalent valid forms (lists, tensors, 0-d arrays) are accepted."""
import numpy as np
import pytest
import torch
from hetfl_explore.widgets import browser_trainer as bt, editor as we, explorers as wx, outcome as wo
from hetfl_explore.widgets import stepper as ws, trust as wt
from hetfl_explore.widgets.crowd import PrometheePanel, ShapleyPanel
from hetfl_explore.feddiverse.simulation import simulate_selection
from hetfl_explore.feddiverse.selector import FedDiverseSelector, oracle_triplets
from hetfl_explore.engine.protocol import make_view
from hetfl_explore.crowd.abac import EXAMPLE_POLICY

NS = np.array([[[3., 1.], [2., 4.]], [[1., 1.], [5., 2.]], [[2., 2.], [2., 2.]], [[4., 0.], [1., 3.]]])

class UnhashableStr(str):
    "A `str` whose hashing and comparison raise (a hostile name)."
    def _boom(self, *a, **k): raise RuntimeError('hostile str')
    __hash__ = __eq__ = __ne__ = _boom

# %% the editor's helpers
def test_type_group_refuses_a_label_that_is_no_type_nor_tie():
    with pytest.raises(ValueError, match=r"ty='XX': expected one of 'CI=AI=SC'"): we.type_group('XX')
    types = ('CI', 'AI', 'SC', 'CI=AI', 'AI=SC', 'CI=AI=SC')
    assert [we.type_group(t) for t in types] == ['CI', 'AI', 'SC'] + ['tie'] * 3

@pytest.mark.parametrize('fn', [we.published_values, we.derived_values])
def test_federation_values_refuse_a_name_that_cannot_be_compared(fn):
    with pytest.raises(TypeError, match=r"name='spawrious_gsc': expected a str that can be compared .*UnhashableStr"):
        fn(UnhashableStr('spawrious_gsc'))
    assert fn('nope') == {}   # a name without a federation has no values (the documented contract)

# %% the browser trainer's numpy reference
def _tiny():
    "A tiny pool (2 x 2 cells, 5 images of side 2 each), its features, an MLP and the balanced test set."
    meta = dict(name='tiny', classes=['a', 'b'], attrs=['r', 'g'], side=2, channels=1, train=3, test=2)
    X, y = bt.pool_features(meta, bytes((np.arange(80) * 3 % 256).astype(np.uint8)))
    w = bt.init_weights(X.shape[1], 3, 2, np.random.default_rng(0).random)
    return meta, X, y, w, *bt.test_set(meta, 2, 2)

def test_browser_reference_takes_lists_and_tensors_as_it_takes_arrays():
    meta, X, y, w, test, groups = _tiny()
    ref = bt.browser_forward(w, X[:4])
    for x in (X[:4].tolist(), torch.as_tensor(X[:4])):
        assert all(np.array_equal(a, b) for a, b in zip(bt.browser_forward(w, x), ref))
    w1, w2 = ({k: v.copy() for k, v in w.items()} for _ in range(2))
    bt.sgd_step(w1, X[:4], y[:4], 0.1); bt.sgd_step(w2, torch.as_tensor(X[:4]), y[:4].tolist(), 0.1)
    assert all(np.array_equal(w1[k], w2[k]) for k in w)
    got = bt.browser_evaluate(w, torch.as_tensor(X), y.tolist(), torch.as_tensor(test), groups.tolist())
    assert got == bt.browser_evaluate(w, X, y, test, groups)

def test_sgd_step_refuses_an_empty_batch():
    "The mean loss of no sample is 0/0: the step would turn every weight into NaN."
    meta, X, y, w, *_ = _tiny()
    with pytest.raises(ValueError, match=r'^x: shape \(0, 12\): expected a non-empty array'):
        bt.sgd_step(w, X[:0], y[:0], 0.1)
    assert all(np.isfinite(v).all() for v in w.values())

def test_browser_round_refuses_a_client_selected_twice():
    meta, X, y, w, *_ = _tiny()
    clients, cfg = [np.array([0, 1, 5]), np.array([10, 11])], dict(lr=0.1, epochs=1, batch=2)
    with pytest.raises(ValueError, match=r'selected: .*expected distinct indices'):
        bt.browser_round(w, X, y, clients, np.array([1, 1]), lambda k, e: np.arange(len(clients[k])), cfg)

def test_browser_evaluate_refuses_groups_that_are_no_integers():
    meta, X, y, w, test, groups = _tiny()
    bad = groups.astype(float); bad[0] = np.nan
    with pytest.raises(ValueError, match=r'groups: shape \(8,\), dtype float64: expected \(8,\) integer group ids'):
        bt.browser_evaluate(w, X, y, test, bad)

def test_an_empty_pool_is_named_as_the_features():
    meta, X, y, w, test, groups = _tiny()
    with pytest.raises(ValueError, match=r'^X: shape \(0, 12\): expected a non-empty array'):
        bt.browser_evaluate(w, X[:0], y, test, groups)

# %% the explorers
@pytest.mark.parametrize('bad, err', [(None, TypeError), (np.zeros((0, 2, 2)), ValueError), (NS[0], ValueError)])
def test_explorer_settings_name_bad_matrices(bad, err):
    with pytest.raises(err, match=r'^matrices'): wx.check_explorer_settings(bad, 'uniform', 2, 5, 0.0)

def test_selection_figures_refuse_a_selector_without_results():
    stats = {'uniform': simulate_selection(NS, 'uniform', 5, 2, 0)}
    with pytest.raises(ValueError, match=r"show='fedrk': expected one of 'uniform'"):
        wx.selection_figures(stats, 'fedrk')
    assert wx.selection_figures(stats)['heatmap'].layout.title.text == 'who uniform picks'

def test_the_explorer_draws_the_first_selector_when_the_shown_one_is_removed():
    ex = wx.SelectionExplorer(NS, ('uniform', 'round_robin'), k=2, rounds=5)
    ex.show_w.value = 'round_robin'
    assert ex.set(selectors=('uniform',)) and ex.figs['heatmap'].layout.title.text == 'who uniform picks'

# %% the outcome helpers, the stepper, the walkthrough and the panels
def test_seed_band_refuses_a_measure_that_is_no_column():
    rows = [dict(round=0, accuracy=.5, worst_group_accuracy=.4)]
    with pytest.raises(ValueError, match=r"measure='acc': expected one of 'round', 'accuracy'"):
        wo.seed_band([rows], 'acc')
    assert wo.seed_band([rows], 'accuracy')[1].tolist() == [.5]

def _explanation():
    sel = FedDiverseSelector(oracle_triplets(NS), 'sign-invariant')
    sel.reset(4, 0); sel.select(0, make_view(4), 2, np.random.default_rng(0))
    return sel.explain()

def test_explain_frames_shows_the_value_it_refuses():
    with pytest.raises(TypeError, match=r'^explanation=3: expected the dict'): ws.explain_frames(3)

def test_step_figure_refuses_triplets_of_another_round():
    expl = _explanation(); frame = ws.explain_frames(expl)[0]
    with pytest.raises(ValueError, match=r"^triplets: shape \(1, 3\): 1 clients, but the frame names client \d"):
        ws.step_figure(expl['triplets'][:1], frame)

def test_walkthrough_names_its_own_arguments():
    with pytest.raises(TypeError, match=r'^policy_text=3: expected an instance of str'):
        wt.walkthrough(3, dict(wt.DEMO_DEVICE))
    with pytest.raises(ValueError, match=r'^trust=1.5: expected a finite number in \[0, 1\]'):
        wt.walkthrough(EXAMPLE_POLICY, dict(wt.DEMO_DEVICE), trust=1.5)

def test_shapley_panel_names_kinds_that_are_not_a_list():
    with pytest.raises(TypeError, match=r'^kinds=3: expected an instance of list or tuple'): ShapleyPanel(kinds=3)

def test_promethee_panel_takes_a_seed_given_as_a_0d_array():
    a, b = PrometheePanel(n=6, seed=np.array(3), top=5), PrometheePanel(n=6, seed=3, top=5)
    assert np.array_equal(a.sizes, b.sizes) and np.array_equal(a.losses, b.losses)

def test_train_injected_names_initial_weights_that_do_not_fit_the_features():
    meta, X, y, w, *_ = _tiny()
    job = dict(Y=2, A=2, C=2, cfg=dict(lr=0.1, epochs=1, batch=2, hidden=3), clients=[[0, 1], [10, 11]],
               init={k: v.ravel().tolist() for k, v in w.items()}, selections=[[0, 1]], orders=[[[[0, 1]], [[0, 1]]]])
    with pytest.raises(ValueError, match=r"job\['init'\]\['W1'\]: 36 values; expected 15 for the 5 features of X"):
        bt.train_injected(X[:, :5], y, meta, job)
    assert len(bt.train_injected(X, y, meta, job)['rows']) == 1
