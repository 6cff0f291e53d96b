"""PROMETHEE II for crowdsourced FL (Tahir, 2025, ch. 5): the three flow implementations, the pymcdm oracle, Algorithm 1's
budget pass and the selector; the device simulator it ranks. Hand-computed cases against the thesis' formulas."""
import numpy as np, pandas as pd, pytest
from pymcdm.methods import PROMETHEE_II
from hetfl_explore.crowd import promethee as P
from hetfl_explore.crowd.devices import DevicePool, TaskRequirements, tier_cost, memory_impact, processing_capacity, FLOPS_PER_CYCLE
from hetfl_explore.engine.protocol import make_view, synthetic_reports

QP = [(0.0, 0.1), (0.01, 0.3), (0.05, 0.5), (0.0, 1.0), (0.3, 0.6)]

@pytest.mark.parametrize('q,p', QP)
def test_sorted_equals_pairwise_with_ties(q, p):
    X = np.round(np.random.default_rng(7).random((257, 4)), 2)
    for a, b in zip(P.flows_sorted(X, [0.1, 0.2, 0.3, 0.4], q, p), P.flows_pairwise(X, [0.1, 0.2, 0.3, 0.4], q, p)):
        assert np.abs(a - b).max() < 1e-12

@pytest.mark.parametrize('q,p', QP)
def test_net_flows_match_pymcdm_vshape_2(q, p):
    X, w = np.random.default_rng(3).random((60, 4)), np.array([0.4, 0.3, 0.2, 0.1])
    oracle = PROMETHEE_II('vshape_2', p=np.full(4, p), q=np.full(4, q))(X, w, np.ones(4))
    mine = P.promethee(X, w, q, p, normalise=False)['phi'].to_numpy()
    assert np.abs(oracle - mine).max() < 1e-12

def test_hand_computed_flows():
    plus, minus = P.flows_pairwise(np.array([[0.0], [0.3], [1.0]]), [1.0], 0.1, 0.5)
    np.testing.assert_allclose(plus, [0, 0.25, 1]); np.testing.assert_allclose(minus, [0.75, 0.5, 0])
    np.testing.assert_allclose(P.preference([0.05, 0.275, 0.6], 0.05, 0.5), [0, 0.5, 1])

def test_invariants_and_weighted_sum_equivalence():
    X = np.random.default_rng(1).random((80, 4)); w = P.check_weights(P.REFERENCE_CONFIG['weights'])
    t = P.promethee(X, w, 0.05, 0.5)
    assert abs(t['phi'].sum()) < 1e-12 and t['phi'].abs().max() <= 1
    Xn = P.minmax_columns(X)
    np.testing.assert_allclose(P.promethee(X, w, 0.0, 1.0)['phi'], 80 / 79 * (Xn - Xn.mean(0)) @ w, atol=1e-12)

def test_single_criterion_monotone():
    g = np.random.default_rng(2).random(100)
    phi = P.promethee(g[:, None], [1.0], 0.05, 0.3, normalise=False)['phi'].to_numpy()
    assert np.all(np.diff(phi[np.argsort(g)]) >= -1e-12)

def test_as_printed_wrong_when_p_below_range_and_right_when_not():
    g = np.random.default_rng(1).random((200, 1))
    ex, pr = P.flows_sorted(g, [1.0], 0.02, 0.3)[0], P.flows_as_printed(g, [1.0], 0.02, 0.3)[0]
    assert np.abs(ex - pr).max() > 0.5
    start = np.searchsorted(np.sort(g[:, 0]), g[:, 0] - 0.3, 'left')
    np.testing.assert_allclose(pr + start / 199, ex, atol=1e-12)
    assert np.abs(P.flows_sorted(g, [1.0], 0.0, 1.0)[0] - P.flows_as_printed(g, [1.0], 0.0, 1.0)[0]).max() < 1e-12

def test_budget_greedy_skips_and_never_exceeds():
    assert P.budget_greedy([4, 2, 7, 1], [3.0, 5.0, 1.0, 1.0], 5.0).tolist() == [4, 7, 1]
    r = np.random.default_rng(0)
    for _ in range(20):
        c = r.uniform(1, 10, 30); b = r.uniform(c.min(), 60)
        assert c[P.budget_greedy(np.arange(30), c, b)].sum() <= b

@pytest.mark.parametrize('call,match', [
    (lambda: P.check_weights([0.5, 0.2, 0.2, 0.2]), 'weights=.*summing to one'),
    (lambda: P.check_weights(dict(H=0.5, Speed=0.5)), 'unknown criteria'),
    (lambda: P.check_thresholds(-0.1, 0.5), 'q=-0.1'),
    (lambda: P.check_thresholds(0.6, 0.5), 'q=0.6 > p=0.5'),
    (lambda: P.budget_greedy([0, 1], [3.0, 4.0], 2.0), "budget=2.0: below every client's cost"),
    (lambda: P.budget_greedy([], [], 2.0), 'empty population'),
    (lambda: P.promethee(np.zeros((0, 4)), [0.25] * 4), r'X: shape \(0, 4\): expected a non-empty'),
    (lambda: P.promethee(np.ones((3, 4)), [0.25] * 4, method='fast'), 'method'),
    (lambda: P.PrometheeSelector(DevicePool.sample(4), weights=dict(H=0.3, N=0.3)), 'weights'),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match): call()

def test_selector_budget_rotation_and_observe():
    pool = DevicePool.sample(40, seed=4); sel = P.PrometheeSelector(pool, budget=25.0); sel.reset(40, 0)
    sizes = np.random.default_rng(0).integers(10, 300, 40); seen = set()
    for t in range(8):
        ids = sel.select(t, make_view(40, t=t, n_samples=sizes), 10, np.random.default_rng(t)).ids
        assert pool.cost[ids].sum() <= 25.0; seen |= set(ids.tolist())
        sel.observe(t, synthetic_reports(t, ids, sizes, np.random.default_rng(t)))
    assert len(seen) > len(ids) and np.isfinite(sel.loss).sum() >= len(seen)
    with pytest.raises(ValueError, match='num_clients=39'): sel.reset(39, 0)

def test_selector_weights_pick_the_criterion():
    pool = DevicePool.sample(30, seed=1); sizes = np.random.default_rng(1).integers(10, 300, 30)
    sel = P.PrometheeSelector(pool, weights=dict(H=1.0), q=0.0, p=0.0); sel.reset(30, 0)
    ids = sel.select(0, make_view(30, n_samples=sizes), 5, np.random.default_rng(0)).ids
    assert set(ids) == set(np.argsort(-pool.scores(0)['H'].to_numpy(), kind='stable')[:5])

def test_devices_time_cost_and_profiles():
    pool = DevicePool.sample(12, seed=0); s = pool.state(3).iloc[5]
    ct = pool.client_times(3, [5], 2e10, 1e6, memory_gb=2.0)
    np.testing.assert_allclose(ct['train_s'], 2e10 / (s['cores'] * s['ghz'] * 1e9 * FLOPS_PER_CYCLE * (1 - s['util']) * (10 if s['gpu'] else 1)) * max(1, 2.0 / s['free_ram_gb']))
    np.testing.assert_allclose(ct['net_s'], 2 * (1e6 * 8 / (s['bandwidth_mbps'] * 1e6) + s['latency_ms'] / 1e3))
    assert pool.round_time(3, [1, 5, 7], 2e10, 1e6, mode='sum') >= pool.round_time(3, [1, 5, 7], 2e10, 1e6)
    np.testing.assert_allclose(tier_cost([0, 3], [0, 3]), [1, 10])
    prof = pool.to_profiles(1e5, rounds=3); assert prof.num_clients == 12 and np.all(prof.speed > 0)
    np.testing.assert_allclose(memory_impact(1.0, np.array([0.25, 2.0])), [4.0, 1.0])
    assert DevicePool.sample(5, seed=2, redraw=False).state(4).equals(DevicePool.sample(5, seed=2, redraw=False).state(0))

def test_budget_greedy_refuses_duplicate_negative_and_fractional_ids():
    for order, match in (([0, 0], 'more than once'), ([-1, 2], 'order'), ([0.5, 1], 'order')):
        with pytest.raises((ValueError, TypeError), match=match): P.budget_greedy(order, [1.0, 1.0], 2.0)

def test_selector_honours_k_under_a_budget_and_reports_a_shortfall():
    pool = DevicePool.sample(30, seed=0); view = make_view(30, n_samples=np.full(30, 40))
    for k in (2, 7, 50):
        sel = P.PrometheeSelector(pool, budget=1e6, n_required=205); sel.reset(30, 0)
        ids = sel.select(0, view, k, np.random.default_rng(0)).ids
        assert len(ids) == min(k, 30)
        assert bool(sel.round_info()) == (40 * len(ids) < 205)
