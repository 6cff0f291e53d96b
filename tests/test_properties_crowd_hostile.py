"""Hostile input families for the crowdsourced-FL part: numpy scalars where a number is meant (accepted), impossible
variances and covariances, duplicate / negative / fractional ids, utilities that return no number, mismatched lengths,
malformed signed updates, operators outside the ABAC grammar and self-declared trust. Each is answered with a
ValueError/TypeError naming the argument, or with a defined outcome (a rejection reason, an unchanged decision)."""
import re
from datetime import datetime, timezone
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
from hetfl_explore.crowd import abac as A, pki as K, authenticated as AU, bayesian as B, robust as R
from hetfl_explore.crowd import shapley as S, promethee as P, fedondemand as F

COVERED = {'hetfl_explore.crowd.abac.TrustStore'}
SET = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
NAN, INF = float('nan'), float('inf')
NP_INTS, NP_FLOATS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32), (np.float16, np.float32, np.float64)
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
GOOD = dict(ram_gb=6, disk_gb=20, full_disk_encryption=True, protocols=['TLS'], encryption=['AES-256'], os_patch_age_days=[0])

def rejects(fn, *names):
    "fn() raises ValueError/TypeError whose message names one of `names`."
    with pytest.raises((ValueError, TypeError)) as e: fn()
    assert any(re.search(rf'(?<![\w.]){re.escape(n)}(?![\w])', str(e.value)) for n in names), f'{str(e.value)[:200]!r} does not name {names}'

@SET
@given(i=st.sampled_from(NP_INTS), f=st.sampled_from(NP_FLOATS), n=st.integers(2, 5))
def test_numpy_scalars_are_numbers(i, f, n):
    "Every number-valued argument takes numpy integers and floats and gives the Python number's result."
    g = S.QuadraticGame([1.0, 2.0, 0.5])
    assert S.payouts(np.array([1.0, 2.0]), f(10)).equals(S.payouts(np.array([1.0, 2.0]), 10.0))
    assert P.budget_greedy([0, 1, 2], [1.0, 1.0, 1.0], f(2), i(2)).tolist() == [0, 1]
    np.testing.assert_allclose(S.shapley_mc(g, i(3), i(n), np.random.default_rng(0)), S.shapley_mc(g, 3, n, np.random.default_rng(0)))
    np.testing.assert_allclose(S.round_shapley(np.array([0, 2], dtype=i), S.QuadraticGame([1.0, 2.0]), i(n + 1)), S.round_shapley([0, 2], S.QuadraticGame([1.0, 2.0]), n + 1))
    assert A.TrustStore(f(0.5)).initial == 0.5
    m, v = torch.rand(3, 2), torch.rand(3, 2) + 0.1
    for rule in R.RULES: torch.testing.assert_close(R.robust_aggregate(m, v, rule, i(0), f(1)), R.robust_aggregate(m, v, rule, 0, 1.0))
    assert B.expected_calibration_error(np.array([[0.25, 0.75]]), np.array([1], dtype=i), i(n)) == B.expected_calibration_error([[0.25, 0.75]], [1], n)
    assert F.pac_bayes_gap(i(n), f(1), f(0.5)) == pytest.approx(F.pac_bayes_gap(n, 1.0, float(f(0.5))))

@SET
@given(ram=st.integers(0, 100), t=st.sampled_from(NP_INTS + NP_FLOATS))
def test_abac_numpy_attributes_decide_like_python_ones(ram, t):
    pol = A.parse_policy(A.EXAMPLE_POLICY)
    py, npy = pol.decide(A.Request({**GOOD, 'ram_gb': ram}, 'register')), pol.decide(A.Request({**GOOD, 'ram_gb': t(ram)}, 'register'))
    assert py.permit == npy.permit == (ram >= 4)
    assert pol.decide(A.Request({**GOOD, 'full_disk_encryption': np.bool_(True)}, 'register')).permit

@SET
@given(op=st.text(min_size=1, max_size=4).filter(lambda s: s not in A.OPERATORS))
def test_abac_operators_outside_the_grammar_are_refused(op):
    rejects(lambda: A.Condition('subject.trust', op, 0.9), 'op')

@SET
@given(v=st.recursive(st.integers() | st.text(max_size=3), lambda c: st.lists(c, max_size=3), max_leaves=6))
def test_abac_any_attribute_value_gets_a_decision(v):
    "Nested lists, numbers or strings in any attribute: a decision with a trace, never an exception."
    pol = A.parse_policy(A.EXAMPLE_POLICY)
    for key in ('ram_gb', 'protocols', 'full_disk_encryption', 'os_patch_age_days'):
        d = pol.decide(A.Request({**GOOD, key: v}, 'register'))
        assert isinstance(d.permit, bool) and d.explain()

def _bad_variances():
    return st.sampled_from([-1.0, 0.0, NAN, INF, -INF, 1e-300]).map(lambda x: torch.full((3, 2), x)) | \
           st.integers(0, 5).map(lambda i: torch.ones(3, 2).index_put_((torch.tensor(i // 2), torch.tensor(i % 2)), torch.tensor(-1.0)))

@SET
@given(var=_bad_variances())
def test_impossible_variances_are_refused(var):
    for rule in R.RULES: rejects(lambda: R.robust_aggregate(torch.zeros(3, 2), var, rule), 'vars', 'mus')
    for mode in B.MODES: rejects(lambda: B.aggregate_posteriors(torch.zeros(3, 2), var, mode=mode), 'vars')

@SET
@given(neg=st.floats(-10, -1e-3), seed=st.integers(0, 100))
def test_covariances_that_are_not_positive_definite_are_refused(neg, seed):
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    bad = q @ torch.diag(torch.tensor([1.0, 2.0, neg], dtype=torch.float64)) @ q.T
    rejects(lambda: B.aggregate_posteriors(torch.zeros(2, 3, dtype=torch.float64), torch.stack([torch.eye(3, dtype=torch.float64), bad])), 'vars')
    rejects(lambda: B.aggregate_posteriors(torch.zeros(2, 3, dtype=torch.float64), torch.eye(3, dtype=torch.float64).expand(2, 3, 3), var0=bad), 'var0')
    rejects(lambda: B.linear_posterior(torch.ones(4, 3), torch.ones(4), 1.0, var0=bad), 'var0')

@SET
@given(p=st.sampled_from([[[1.5, -0.5]], [[NAN, 1.0]], [[0.5, 2.0]], [[-1e-3, 1.0]]]))
def test_calibration_needs_probabilities(p):
    rejects(lambda: B.expected_calibration_error(torch.tensor(p), [0]), 'probs')

BAD_IDS = st.sampled_from([[0, 0], [-1], [1, -2], [0.5], [1.5, 0], [2**70], ['a'], [NAN], [INF]])

@SET
@given(ids=BAD_IDS)
def test_duplicate_negative_and_fractional_ids_are_refused(ids):
    rejects(lambda: P.budget_greedy(ids, [1.0] * len(ids), 5.0), 'order')
    rejects(lambda: S.round_shapley(ids, S.QuadraticGame([1.0] * len(ids)), 3), 'participants')
    rejects(lambda: S.shapley_tmr([(ids, S.QuadraticGame([1.0] * len(ids)))], 3), 'participants')
    rejects(lambda: S.QuadraticGame([1.0, 2.0, 3.0])(tuple(ids)), 'coalition')
    rejects(lambda: S.fl_utility(np.zeros(2), np.ones((3, 2)), np.ones(3), lambda w: 0.0)(tuple(ids)), 'coalition')
    rejects(lambda: F.cohort_for_samples(ids, [5, 5, 5], 8), 'order')
    rejects(lambda: R.attack_exchange('random_weights', ids), 'attackers')

@SET
@given(bad=st.sampled_from([NAN, INF, -INF, None, 'x', [1.0], True, torch.tensor([1.0, 2.0])]), at=st.integers(0, 3))
def test_utilities_that_return_no_number_are_refused(bad, at):
    u = lambda c: bad if len(c) == at else float(len(c))
    rejects(lambda: S.shapley_exact(u, 3), 'utility')
    rejects(lambda: S.shapley_mc(u, 3, 4, np.random.default_rng(0)), 'utility')
    rejects(lambda: S.shapley_tmr([([0, 1, 2], u)], 3), 'utility')

@SET
@given(n=st.integers(1, 4), m=st.integers(1, 4))
def test_mismatched_lengths_are_refused(n, m):
    if n == m: return
    rejects(lambda: S.payouts(np.ones(n), 10.0, x=np.ones(m)), 'x')
    rejects(lambda: S.payouts(np.ones(n), 10.0, played=np.ones(m, bool)), 'played')
    rejects(lambda: P.budget_greedy(list(range(n)), np.ones(m), 10.0), 'cost')
    rejects(lambda: B.expected_calibration_error(np.full((n, 2), 0.5), np.zeros(m, int)), 'y')
    rejects(lambda: R.robust_aggregate(torch.ones(n, 2), torch.ones(m, 2)), 'vars')

@SET
@given(phi=st.lists(st.floats(-5, 5), min_size=2, max_size=6), policy=st.sampled_from(['clip', 'shift']), absent=st.integers(0, 5))
def test_a_client_absent_from_every_round_earns_nothing(phi, policy, absent):
    phi = np.array(phi); absent %= len(phi); phi[absent] = 0.0
    played = np.ones(len(phi), bool); played[absent] = False
    pay = S.payouts(phi, 100.0, negative=policy, played=played)
    assert pay['reward'][absent] == 0 and pay['reward'].sum() == pytest.approx(100.0 if pay['share'].sum() > 0 else 0.0)

@pytest.fixture(scope='module')
def world():
    pol = A.parse_policy(A.EXAMPLE_POLICY); ca = K.CertificateAuthority(policy=pol, now=T0); ids = {}
    for name in ('alice', 'bob'):
        k = K.new_key(); ids[name] = (k, ca.enrol(K.make_csr(k, name, GOOD), now=T0)[0])
    return pol, ca, ids

JUNK = st.sampled_from([None, 3, 1.5, 'text', b'bytes', [1], True, object()])

@SET
@given(field=st.sampled_from(['task_id', 'round', 'client_id', 'payload', 'nonce', 'signature', 'certificate']), junk=JUNK, rnd=st.integers(0, 10**6))
def test_a_malformed_update_is_rejected_and_the_others_kept(world, field, junk, rnd):
    pol, ca, ids = world
    good = K.sign_update(*ids['alice'], 't', rnd, b'\x00' * 8)
    if (field in ('task_id', 'client_id') and isinstance(junk, str)) or (field in ('payload', 'nonce', 'signature') and isinstance(junk, bytes)) \
       or (field == 'round' and isinstance(junk, int) and not isinstance(junk, bool)): return      # a well-typed value: not malformed
    bad = K.SignedUpdate(**{**good.__dict__, field: junk})
    srv = AU.AuthenticatedServer(ca, 't', pol, dict(min_trust=0.8))
    assert srv.screen([bad, K.sign_update(*ids['bob'], 't', rnd, b'\x00' * 8)], rnd, T0) == [K.REASONS['malformed'], None]

@SET
@given(copies=st.integers(1, 6), declared=st.floats(0, 1))
def test_one_update_per_client_per_round_and_trust_is_never_declared(copies, declared):
    pol = A.parse_policy(A.EXAMPLE_POLICY); ca = K.CertificateAuthority(policy=pol, now=T0); k = K.new_key()
    cert = ca.enrol(K.make_csr(k, 'eve', {**GOOD, 'trust': declared}), now=T0)[0]
    assert 'trust' not in K.attributes_of(cert) and ca.trust.score('eve') == A.TRUST_INITIAL
    srv = AU.AuthenticatedServer(ca, 't', pol, dict(min_trust=0.8))
    assert srv.screen([K.sign_update(k, cert, 't', 0, b'\x00' * 8) for _ in range(copies)], 0, T0) == [None] + [K.REASONS['duplicate']] * (copies - 1)
    assert ca.trust.score('eve') == pytest.approx(max(0.0, min(1.0, A.TRUST_INITIAL + A.TRUST_REWARD) - A.TRUST_PENALTIES['duplicate'] * (copies - 1)))
    rejects(lambda: ca.enrol(K.make_csr(K.new_key(), 'eve', GOOD), now=T0), 'csr')

@SET
@given(bad=st.sampled_from([None, 'x', True, NAN, INF, -0.1, 1.1, [0.5]]))
def test_trust_store_arguments(bad):
    rejects(lambda: A.TrustStore(initial=bad), 'initial')
    rejects(lambda: A.TrustStore(reward=bad), 'reward')
    rejects(lambda: A.TrustStore(penalties={'duplicate': bad}), "penalties['duplicate']")
    store = A.TrustStore(); store.register('a')
    rejects(lambda: store.set('a', bad), 'value')
    rejects(lambda: store.observe('a', bad), 'event')
    rejects(lambda: store.subject('a', bad), 'attributes')
    if not isinstance(bad, str): rejects(lambda: store.register(bad), 'client_id')
