"""Empty inputs at the crowdsourced-FL entry points: no client posterior, no player, no update, no client in the pool,
no seed, no attack. Whatever the container (list, numpy, torch) and the parameter count, each is refused with a
ValueError naming the argument, or has a defined outcome (a round in which nobody reported values nobody)."""
import re
from types import SimpleNamespace
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
from hetfl_explore.crowd import bayesian as B, robust as R, shapley as S, promethee as P, fedondemand as F
from hetfl_explore.engine.protocol import UniformSelector

SET = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
FORMS = st.sampled_from(['list', 'numpy', 'torch'])

def empty(form, *shape):
    "An empty array of `shape` (first dimension 0) as a nested list, a numpy array or a torch tensor."
    a = np.zeros(shape)
    return a.tolist() if form == 'list' else torch.from_numpy(a) if form == 'torch' else a

def rejects(fn, name):
    "fn() raises ValueError whose message names `name`."
    with pytest.raises(ValueError) as e: fn()
    assert re.search(rf'(?<![\w.]){re.escape(name)}(?![\w])', str(e.value)), f'{str(e.value)[:200]!r} does not name {name}'

@SET
@given(form=FORMS, P_=st.integers(1, 6), rule=st.sampled_from(R.RULES))
def test_no_client_posterior(form, P_, rule):
    mus = empty(form, 0, P_)
    if form != 'list':                                                    # a nested empty list has no parameter dimension
        rejects(lambda: B.aggregate_posteriors(mus, empty(form, 0, P_)), 'mus')
        rejects(lambda: B.aggregate_posteriors(mus, empty(form, 0, P_, P_), var0=torch.eye(P_)), 'mus')
        rejects(lambda: R.robust_aggregate(mus, empty(form, 0, P_), rule), 'mus')
        rejects(lambda: R.robust_outliers(mus, rule), 'mus')
        rejects(lambda: R.krum_scores(mus, 0), 'points')
    else:
        rejects(lambda: B.aggregate_posteriors(mus, mus), 'mus')
        rejects(lambda: R.robust_aggregate(mus, mus, rule), 'mus')

@SET
@given(form=FORMS, kappa=st.floats(0, 1), R_=st.floats(0, 100))
def test_no_client_value(form, kappa, R_):
    rejects(lambda: S.payouts(empty(form, 0), R_), 'phi')
    rejects(lambda: S.flag_free_riders(empty(form, 0), kappa), 'phi')
    rejects(lambda: S.round_shapley(empty(form, 0), S.QuadraticGame([1.0]), 3), 'participants')
    rejects(lambda: S.QuadraticGame(empty(form, 0)), 'x')
    rejects(lambda: S.shapley_tmr([(empty(form, 0), S.QuadraticGame([1.0]))], 3, threshold=kappa), 'participants')

@SET
@given(n_perm=st.integers(1, 5), seed=st.integers(0, 100))
def test_no_player(n_perm, seed):
    v = lambda c: float(len(c))
    rejects(lambda: S.shapley_exact(v, 0), 'n_players')
    for t in S.TRUNCATIONS: rejects(lambda: S.shapley_mc(v, 0, n_perm, np.random.default_rng(seed), t, L=1), 'n_players')
    rejects(lambda: S.shapley_subsets(v, 0, n_perm, np.random.default_rng(seed)), 'n_players')
    g = S.QuadraticGame([1.0, 2.0])
    rejects(lambda: S.estimator_error(g, 2, g.closed_form(), seeds=[]), 'seeds')
    rejects(lambda: S.estimator_error(g, 2, g.closed_form(), n_perms=()), 'n_perms')

@SET
@given(n=st.integers(1, 6), delta=st.floats(0, 10), decay=st.floats(0.01, 1), empty_games=st.sampled_from([[], ()]))
def test_no_round(n, delta, decay, empty_games):
    "TMR over no round values every client at 0."
    assert S.shapley_tmr(empty_games, n, threshold=delta, decay=decay).tolist() == [0.0] * n

@SET
@given(form=FORMS, P_=st.integers(1, 4), budget=st.floats(0.1, 10), k=st.integers(1, 5))
def test_no_update_and_no_client_in_the_pool(form, P_, budget, k):
    rejects(lambda: S.fl_utility(np.zeros(P_), empty(form, 0, P_), empty(form, 0), lambda w: 0.0), 'updates')
    rejects(lambda: P.budget_greedy(empty(form, 0), empty(form, 0), budget, k), 'order')
    rejects(lambda: F.cohort_for_samples(empty(form, 0), [10.0, 20.0], 5), 'order')
    rejects(lambda: P.promethee(empty(form, 0, 4), None), 'X')

def test_no_attack_and_no_rule():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    rejects(lambda: R.attack_table(fd, attacks=()), 'attacks')
    rejects(lambda: R.attack_table(fd, rules=[]), 'rules')
    rejects(lambda: B.conjugate_rounds([], [], 1.0), 'Xs')

def test_a_round_without_reports_values_nobody():
    "ShapleyLedger records a zero row for a round in which no client reported (e.g. all dropped out)."
    led = F.ShapleyLedger(UniformSelector()); led.reset(4, 0)
    led.observe(0, SimpleNamespace(ids=np.zeros(0, np.int64)))
    assert led.ledger().tolist() == [[0.0] * 4]

def test_an_exchange_that_accepts_nothing_keeps_the_global_posterior():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    base = B.run_bayesfl(fd, rounds=1, clients_per_round=2, hidden=4, exchange=lambda t, ids, posts, mu: [])
    for none in ({}, []):
        res = B.run_bayesfl(fd, rounds=1, clients_per_round=2, hidden=4, exchange=lambda t, ids, posts, mu: none)
        assert torch.equal(res['mu'], base['mu']) and res['accuracy'] == base['accuracy']
