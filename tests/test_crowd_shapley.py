"""Shapley incentives for crowdsourced FL (Tahir, 2025, ch. 8): exact values against shapiq and the closed form of the
quadratic game (8.5), the three Monte-Carlo estimators, payouts (Algorithm 5), free riders and bad input."""
import numpy as np, pytest
import shapiq
from hetfl_explore.crowd import shapley as S

def shapiq_values(game, n):
    "shapiq's exact Shapley values of `game` (a coalition-tuple utility) over n players."
    def f(C):
        C = np.atleast_2d(np.asarray(C, bool))
        return np.array([game(tuple(np.flatnonzero(row).tolist())) for row in C])
    r = shapiq.ExactComputer(f, n_players=n)('SV')
    return np.array([r[(i,)] for i in range(n)])

@pytest.mark.parametrize('seed', [0, 1, 2])
def test_exact_matches_shapiq_and_closed_form(seed):
    r = np.random.default_rng(seed); x = r.uniform(0, 3, 7); g = S.QuadraticGame(x, alpha=r.uniform(0, 1))
    mine = S.shapley_exact(g, 7)
    np.testing.assert_allclose(mine, g.closed_form(), atol=1e-10)
    np.testing.assert_allclose(mine, shapiq_values(g, 7), atol=1e-10)

def test_exact_on_fl_utility_matches_shapiq_and_is_efficient():
    r = np.random.default_rng(4); U = r.normal(size=(6, 5))
    v = S.fl_utility(np.zeros(5), U, r.uniform(1, 3, 6), lambda w: -float(((w - 0.5) ** 2).sum()))
    mine = S.shapley_exact(v, 6)
    np.testing.assert_allclose(mine, shapiq_values(v, 6), atol=1e-10)
    assert abs(mine.sum() - (v(tuple(range(6))) - v(()))) < 1e-10

def test_thesis_worked_numbers_and_counts():
    g = S.QuadraticGame([1, 3, 2, 0.5, 0.01], 0.5)
    np.testing.assert_allclose(S.shapley_exact(g, 5), [2.3775, 5.6325, 4.255, 1.25125, 0.02625], atol=1e-12)
    cu = S.CountingUtility(g); S.shapley_exact(cu, 5); assert cu.calls == 32
    cu = S.CountingUtility(g); S.shapley_mc(cu, 5, 3, np.random.default_rng(0), 'prefix', L=2); assert cu.calls == 1 + 3 * 2

def test_permutation_mc_unbiased_and_prefix_L1_gives_x_over_n():
    g = S.QuadraticGame([1.0, 2.0, 0.5, 3.0], 0.4)
    np.testing.assert_allclose(S.shapley_mc(g, 4, 6000, np.random.default_rng(0)), g.closed_form(), atol=0.08)
    np.testing.assert_allclose(S.shapley_mc(g, 4, 6000, np.random.default_rng(1), 'prefix', L=1), g.x / 4, atol=0.08)
    a = S.shapley_mc(g, 4, 25, np.random.default_rng(5), 'prefix', L=4); b = S.shapley_mc(g, 4, 25, np.random.default_rng(5))
    np.testing.assert_allclose(a, b, atol=1e-12)

def test_tolerance_truncation_saves_evaluations_on_saturating_game():
    v = lambda C: min(len(C), 3) / 3.0             # saturates after 3 players: later marginals are 0
    cu = S.CountingUtility(v); est = S.shapley_mc(cu, 12, 20, np.random.default_rng(0), 'tolerance', tol=0.0, patience=1)
    assert cu.calls < 2 + 20 * 12 and abs(est.sum() - 1.0) < 1e-12

def test_round_values_and_payouts():
    x = np.array([1.0, 3.0, 2.0, 0.5, 0.01])
    tot = sum(S.round_shapley(P, S.QuadraticGame(x[P], 0.5), 5) for P in ([0, 1, 2], [1, 3, 4]))
    assert tot[0] > 0 and tot[3] > 0 and tot[1] == pytest.approx(S.QuadraticGame(x[[0, 1, 2]], .5).closed_form()[1] + S.QuadraticGame(x[[1, 3, 4]], .5).closed_form()[0])
    p = S.payouts(tot, 100.0, x=x, beta=0.5)
    assert p['reward'].sum() == pytest.approx(100.0) and np.allclose(p['profit'], p['reward'] - 0.5 * x ** 2)
    np.testing.assert_allclose(S.payouts(np.array([2.0, -1.0, 1.0]), 30.0)['reward'], [20, 0, 10])
    np.testing.assert_allclose(S.payouts(np.array([2.0, -1.0, 1.0]), 30.0, negative='shift')['reward'], [18, 0, 12])
    np.testing.assert_allclose(S.payouts(np.array([-2.0, -1.0]), 30.0)['reward'], [0, 0])

def test_free_rider_generators_and_flagging():
    r, g, prev, old = np.random.default_rng(0), np.ones(4), np.zeros(4), np.full(4, 2.0)
    assert not S.free_rider_update('zero', g, r).any()
    assert np.abs(S.free_rider_update('noise', g, r, noise_sd=1e-3)).max() < 0.01
    np.testing.assert_allclose(S.free_rider_update('stale_global', g, r, global_prev=prev), -np.ones(4))
    np.testing.assert_allclose(S.free_rider_update('scaled_replay', g, r, replay=old, scale=0.5), np.ones(4))
    assert S.flag_free_riders(np.array([1.0, 1.2, 0.9, 0.01, -0.5]), 0.1).tolist() == [False, False, False, True, True]

@pytest.mark.learned
def test_free_riders_detected():
    from hetfl_explore.foundation.core import assert_learned, outcome_seed
    s = outcome_seed(0)
    c = S.free_rider_run(seed=s, rounds=8).groupby(['client', 'kind'])['phi'].sum().reset_index()
    f, fr = S.flag_free_riders(c['phi'].to_numpy(), 0.3), (c['kind'] != 'benign').to_numpy()
    assert_learned('crowd: free riders flagged (unit)', f[fr].mean(), 0.6)
    assert_learned('crowd: benign not flagged (unit)', -f[~fr].mean(), -0.2)

@pytest.mark.parametrize('call,match', [
    (lambda: S.shapley_exact(S.QuadraticGame(np.ones(17)), 17), 'n_players=17: exact Shapley'),
    (lambda: S.shapley_exact(S.QuadraticGame([1.0]), 0), 'n_players=0'),
    (lambda: S.shapley_mc(S.QuadraticGame([1.0, 2]), 2, 5, np.random.default_rng(0), 'prefix'), 'L=None'),
    (lambda: S.shapley_mc(S.QuadraticGame([1.0, 2]), 2, 5, np.random.default_rng(0), 'cut'), 'truncation'),
    (lambda: S.shapley_mc(S.QuadraticGame([1.0, 2]), 2, 0, np.random.default_rng(0)), 'n_perm=0'),
    (lambda: S.QuadraticGame([]), 'x: shape'),
    (lambda: S.payouts(np.array([1.0, -1.0]), 10.0, negative='error'), 'negative'),
    (lambda: S.payouts(np.array([1.0]), -1.0), 'reward_pool=-1.0'),
    (lambda: S.round_shapley([0, 0], S.QuadraticGame([1.0, 1.0]), 3), 'participants'),
    (lambda: S.free_rider_update('sleepy', np.ones(2), np.random.default_rng(0)), 'kind'),
    (lambda: S.free_rider_update('stale_global', np.ones(2), np.random.default_rng(0)), 'global_prev'),
    (lambda: S.flag_free_riders(np.ones(3), kappa=-1), 'kappa=-1'),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match): call()

def test_a_client_that_never_played_earns_nothing_under_every_policy():
    for policy in ('clip', 'shift'):
        np.testing.assert_allclose(S.payouts(np.array([1.0, -0.5, 0.0]), 100.0, negative=policy)['reward'], [100, 0, 0])
    np.testing.assert_allclose(S.payouts(np.array([1.0, -0.5, 0.0]), 100.0, negative='shift', played=[True, True, True])['reward'], [75, 0, 25])
    with pytest.raises(ValueError, match='did not play'): S.payouts(np.array([1.0, 2.0]), 10.0, played=[True, False])

def test_utilities_returning_nan_and_negative_coalition_ids_are_refused():
    for bad in (float('nan'), float('inf'), 'high', None):
        with pytest.raises(ValueError, match='utility returned'): S.shapley_exact(lambda c, b=bad: b if len(c) == 2 else 1.0, 3)
        with pytest.raises(ValueError, match='utility returned'): S.shapley_mc(lambda c, b=bad: b if len(c) == 2 else 1.0, 3, 2, np.random.default_rng(0))
    v = S.fl_utility(np.zeros(2), np.ones((3, 2)), np.ones(3), lambda w: float(w.sum()))
    for coalition in ((-1,), (3,), (0, 0), (0.5,)):
        with pytest.raises((ValueError, TypeError), match='coalition'): v(coalition)
        with pytest.raises((ValueError, TypeError), match='coalition'): S.QuadraticGame([1.0, 2.0, 3.0])(coalition)
    assert S.shapley_exact(lambda c: np.float32(len(c)), 3).tolist() == [1.0, 1.0, 1.0]        # numpy numbers are numbers

def test_k_subset_estimator_is_unbiased_and_costs_2n_per_draw():
    g = S.QuadraticGame([1.0, 3.0, 2.0, 0.5, 0.01], alpha=0.5)
    ests = np.array([S.shapley_subsets(g, 5, 200, np.random.default_rng(s)) for s in range(10)])
    np.testing.assert_allclose(ests.mean(0), g.closed_form(), atol=0.15)
    cu = S.CountingUtility(g); S.shapley_subsets(cu, 5, 4, np.random.default_rng(0)); assert cu.calls == 40
    err = S.estimator_error(g, 5, g.closed_form(), n_perms=(5,), seeds=(0,))
    assert 'k-subset' in set(err.method)

@pytest.mark.parametrize('penalty', [0.05, 0.1, 0.2])
def test_free_rider_flags_cost_the_penalty_per_flagged_round(penalty):
    from hetfl_explore.crowd.abac import TrustStore, client_name
    store = TrustStore(penalties=dict(free_rider=penalty))
    run = S.free_rider_run(rounds=5, kinds=('zero', 'noise'), n_benign=4, seed=1, trust=store)
    flagged = run.groupby('client')['flagged'].sum().to_numpy()
    assert np.allclose(store.vector([client_name(c) for c in range(6)]), np.maximum(0, 0.9 - penalty * flagged))
    assert flagged[4:].min() > 0 and (run['flagged'] == S.free_rider_run(rounds=5, kinds=('zero', 'noise'), n_benign=4, seed=1)['flagged']).all()
    with pytest.raises(TypeError, match='trust'): S.free_rider_run(rounds=1, trust={'a': 1.0})

def _two_rounds():
    "Round 0: clients 0, 1 with x = (1, 2); round 1: clients 1, 2 with x = (0.1, 0.2); alpha = 0.5 (gains 4 and 0.31)."
    return [([0, 1], S.QuadraticGame([1.0, 2.0], 0.5)), ([1, 2], S.QuadraticGame([0.1, 0.2], 0.5))]

def test_tmr_hand_computed_two_rounds_one_truncated():
    np.testing.assert_allclose(S.shapley_tmr(_two_rounds(), 3, threshold=0.5), [1.5, 2.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(S.shapley_tmr(_two_rounds(), 3, decay=0.5), [1.5, 2.5525, 0.1025], atol=1e-12)
    np.testing.assert_allclose(S.shapley_tmr(_two_rounds(), 3), sum(S.round_shapley(p, g, 3) for p, g in _two_rounds()), atol=1e-12)
    counted = [(p, S.CountingUtility(g)) for p, g in _two_rounds()]; S.shapley_tmr(counted, 3, threshold=0.5)
    assert [cu.calls for _, cu in counted] == [4, 2]          # a kept round: 2^2 coalitions once each; a truncated one: its gain

@pytest.mark.parametrize('seed', range(10))
def test_tmr_is_exact_minus_the_truncated_rounds_and_costs_less(seed):
    r = np.random.default_rng(seed); N, T = 6, 6
    games = [(sorted(r.choice(N, r.integers(1, 5), replace=False).tolist()), None) for _ in range(T)]
    games = [(p, S.QuadraticGame(r.uniform(0, 2, len(p)) * 0.5 ** t, r.uniform(0, 1))) for t, (p, _) in enumerate(games)]
    gains = np.array([g(tuple(range(len(p)))) - g(()) for p, g in games]); delta = float(np.median(gains))
    per_round = [S.round_shapley(p, g, N) for p, g in games]
    want = sum(phi for phi, gain in zip(per_round, gains) if gain >= delta)
    np.testing.assert_allclose(S.shapley_tmr(games, N, threshold=delta), want, atol=1e-12)
    counted = [(p, S.CountingUtility(g)) for p, g in games]; S.shapley_tmr(counted, N, threshold=delta)
    full = [(p, S.CountingUtility(g)) for p, g in games]; S.shapley_tmr(full, N)
    assert sum(cu.calls for _, cu in counted) < sum(cu.calls for _, cu in full) == sum(2 ** len(p) for p, _ in games)
    assert (S.shapley_tmr(games, N, threshold=delta) <= S.shapley_tmr(games, N) + 1e-12).all()    # under-estimates

def test_tmr_output_moves_with_threshold_and_decay():
    games = [(list(range(4)), S.QuadraticGame(np.array([1.0, 2.0, 0.5, 1.5]) * 0.6 ** t, 0.3)) for t in range(8)]
    by_delta = [S.shapley_tmr(games, 4, threshold=d) for d in (0.0, 0.5, 2.0, 100.0)]
    assert all((a.sum() > b.sum()) for a, b in zip(by_delta, by_delta[1:]))   # a higher threshold drops more rounds
    np.testing.assert_allclose(by_delta[-1], 0.0)                              # every round truncated: no value
    by_decay = [S.shapley_tmr(games, 4, decay=lam) for lam in (1.0, 0.8, 0.5, 0.1)]
    assert all((a > b).all() for a, b in zip(by_decay, by_decay[1:]))          # every client's value falls with lambda
    np.testing.assert_allclose(S.shapley_tmr(games[:1], 4, decay=0.1), S.shapley_tmr(games[:1], 4))   # round 0 weighs 1

def test_tmr_keeps_a_zero_gain_round_at_threshold_zero():
    hidden = [([0, 1], lambda c: {(): 0.0, (0,): 1.0, (1,): -1.0, (0, 1): 0.0}[c])]
    np.testing.assert_allclose(S.shapley_tmr(hidden, 2), [1.0, -1.0])
    np.testing.assert_allclose(S.shapley_tmr(hidden, 2, threshold=1e-9), [0.0, 0.0])

@pytest.mark.parametrize('call, match', [
    (lambda: S.shapley_tmr(_two_rounds(), 3, threshold=-0.1), 'threshold=-0.1'),
    (lambda: S.shapley_tmr(_two_rounds(), 3, threshold=float('nan')), 'threshold'),
    (lambda: S.shapley_tmr(_two_rounds(), 3, decay=0.0), 'decay=0.0'),
    (lambda: S.shapley_tmr(_two_rounds(), 3, decay=1.5), 'decay=1.5'),
    (lambda: S.shapley_tmr(_two_rounds(), 2), 'participants'),
    (lambda: S.shapley_tmr([([0], 'v')], 2), r'games\[0\]'),
    (lambda: S.shapley_tmr([[0, 1]], 2), r'games\[0\]'),
    (lambda: S.shapley_tmr('rounds', 2), 'games'),
])
def test_tmr_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match): call()
