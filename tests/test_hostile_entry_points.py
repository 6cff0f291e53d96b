"""Hostile inputs at public entry points that once slipped through: each is refused with a `ValueError`/`TypeError` naming
the caller's argument as a word, or (for valid edge cases) accepted with a correct result."""
from __future__ import annotations
import re
from datetime import datetime, timezone
from fractions import Fraction
import numpy as np
import pytest
import torch

def word(name:str) -> str:
    "A regex matching `name` as a whole word (not inside another identifier)."
    return rf'(?<![\w.]){re.escape(name)}(?![\w])'

def refused(fn, name:str, value_text:str|None=None, exc=(ValueError, TypeError)):
    "Assert `fn()` raises a ValueError/TypeError naming `name` as a word (and showing `value_text` if given)."
    with pytest.raises(exc) as e: fn()
    msg = str(e.value)
    assert re.search(word(name), msg), f'{name!r} not named as a word in {msg!r}'
    if value_text is not None: assert value_text in msg, f'{value_text!r} not in {msg!r}'
    return msg

def test_nan_features_are_refused_by_federated_data():
    from hetfl_explore.foundation.data import FederatedData
    x = torch.zeros(4, 2); x[1, 0] = float('nan'); y = torch.tensor([0, 1, 0, 1])
    ok = lambda x, xt: FederatedData(x, y, y * 0, [torch.tensor([0, 1]), torch.tensor([2, 3])], xt, y[:2], y[:2] * 0, 2, 1)
    refused(lambda: ok(x, torch.zeros(2, 2)), 'x', 'NaN')
    xt = torch.zeros(2, 2); xt[0, 1] = float('inf')
    refused(lambda: ok(torch.zeros(4, 2), xt), 'x_test', 'inf')
    assert ok(torch.zeros(4, 2), torch.zeros(2, 2)).num_clients == 2

def test_too_many_digits_clients_say_how_many_the_data_allows():
    from hetfl_explore.foundation.data import digits_federation
    msg = refused(lambda: digits_federation(num_clients=5000), 'num_clients', '5000')
    assert '-3203' not in msg and re.search(r'\[1, 1\d{3}\]', msg), msg

def test_crowd_baselines_check_the_pool_against_the_round():
    from hetfl_explore.crowd.devices import DevicePool
    from hetfl_explore.crowd.baselines import PriceFirst, GreedyPerCost, CrowdRandom
    from hetfl_explore.engine.protocol import make_view
    rng = np.random.default_rng(0)
    for cls in (PriceFirst, GreedyPerCost, CrowdRandom):
        sel = cls(DevicePool.sample(6))
        for n in (4, 8): refused(lambda: sel.select(0, make_view(n), 2, rng), 'clients', str(n))
        assert len(sel.select(0, make_view(6), 2, rng).ids) == 2

def test_nan_loss_noise_is_refused_by_simulate_selection():
    from hetfl_explore.feddiverse.simulation import simulate_selection
    for v in (float('nan'), float('inf'), -0.1):
        refused(lambda: simulate_selection('spawrious_gsc', 'pow-d', rounds=2, loss_noise=v), 'loss_noise')

def test_free_rider_run_checks_its_training_settings_and_reads_fractions():
    from hetfl_explore.crowd.shapley import free_rider_run
    kw = dict(rounds=1, n_benign=2, kinds=('zero',))
    for name, v in (('samples', 0), ('samples', 2.5), ('local_steps', -1), ('lr', -1.0), ('lr', float('nan')), ('lr', 'x')):
        refused(lambda: free_rider_run(**kw, **{name: v}), name)
    a, b = free_rider_run(**kw, lr=Fraction(1, 20)), free_rider_run(**kw, lr=0.05)
    assert np.allclose(a['phi'], b['phi'])

def test_neg_elbo_checks_inputs_and_labels_and_bayes_mlp_names_n_classes():
    from hetfl_explore.crowd.bayesian import neg_elbo, bayes_mlp
    m = bayes_mlp(4, 3, 5)
    x, y = torch.zeros(2, 4), torch.tensor([0, 2])
    assert torch.isfinite(neg_elbo(m, x, y, 10))
    refused(lambda: neg_elbo(m, torch.full((2, 4), float('nan')), y, 10), 'x', 'NaN')
    refused(lambda: neg_elbo(m, x, torch.tensor([0, 5]), 10), 'y', '5')
    refused(lambda: neg_elbo(m, x, torch.tensor([0]), 10), 'y')
    refused(lambda: bayes_mlp(4, 0, 5), 'n_classes', '0')
    refused(lambda: bayes_mlp(0, 3, 5), 'in_features', '0')

def test_serialise_refuses_non_numbers():
    from hetfl_explore.crowd.pki import serialise
    for v in (None, 'abc', (torch.zeros(2), None), {'a': 1}):
        refused(lambda: serialise(v), 'update')
    assert serialise(torch.ones(2)) == np.ones(2, '<f4').tobytes()

def _server():
    from hetfl_explore.crowd.pki import CertificateAuthority, new_key, make_csr
    from hetfl_explore.crowd.authenticated import AuthenticatedServer
    t0 = datetime(2026, 3, 1, tzinfo=timezone.utc); ca = CertificateAuthority(now=t0); k = new_key()
    return AuthenticatedServer(ca, 'task'), {0: (k, ca.enrol(make_csr(k, 'c0', {}), now=t0)[0])}, t0

def test_authenticated_filter_refuses_fractional_client_ids_and_names_start():
    from hetfl_explore.crowd.authenticated import authenticated_filter
    srv, ids, t0 = _server()
    acc = authenticated_filter(srv, ids, start=t0)
    refused(lambda: acc(0, [0.5], [torch.zeros(2)], torch.zeros(2)), 'ids', '0.5')
    refused(lambda: acc(0, [0, 0], [torch.zeros(2)] * 2, torch.zeros(2)), 'ids')
    refused(lambda: acc(0, [0], [torch.zeros(2), torch.zeros(2)], torch.zeros(2)), 'updates')
    mask, _ = acc(0, [0], [torch.zeros(2)], torch.zeros(2))
    assert mask.tolist() == [True]
    refused(lambda: authenticated_filter(srv, ids, start='2026-01-01'), 'start')
    refused(lambda: authenticated_filter(srv, ids, start=datetime(2026, 1, 1)), 'start')

def test_weighted_average_refuses_nan_weights():
    from hetfl_explore.clustering.gpfl import weighted_average
    th = [np.ones(2), np.zeros(2)]
    for w in ([float('nan'), 1], [float('inf'), 1], [-1, 2], [0, 0], [1]):
        refused(lambda: weighted_average(th, w), 'weights')
    assert np.allclose(weighted_average(th, [1, 3]), [0.25, 0.25])

def test_mcl_matrix_refuses_a_tolerance_that_is_no_tolerance():
    from hetfl_explore.clustering.mcl import mcl_matrix
    A = np.ones((3, 3))
    for v in (float('inf'), float('nan'), -1.0):
        refused(lambda: mcl_matrix(A, tol=v), 'tol')
    assert mcl_matrix(A, tol=0.0)[1] >= 1

def test_empty_and_tiny_valid_inputs_get_results():
    from hetfl_explore.clustering.profiles import class_counts, sparsify
    from hetfl_explore.clustering.gpfl import weighted_f1
    from hetfl_explore.crowd.robust import robust_aggregate
    assert class_counts([], 2).tolist() == [0.0, 0.0]
    assert weighted_f1([], [], 2) == 0.0
    assert sparsify(np.ones((1, 1)), np.zeros((1, 1)), 'eps').tolist() == [[0.0]]
    mu, var = robust_aggregate(torch.zeros(3, 2), torch.ones(3, 2), 'poe', prior_var=1e-6)
    assert torch.isfinite(mu).all() and torch.allclose(var, torch.full((2,), 1e-6))
    refused(lambda: robust_aggregate(torch.zeros(3, 2), torch.ones(3, 2), 'poe', prior_var=1e-300), 'prior_var', '1e-300')

def test_contribution_study_names_cohorts():
    from hetfl_explore.clustering.contribution import contribution_study
    from hetfl_explore.clustering.data import har_like_stream
    data = har_like_stream(rounds=2, drift_round=1)
    refused(lambda: contribution_study(data, rounds=1, k=2, cohorts=0), 'cohorts', '0')
    refused(lambda: contribution_study(data, rounds=1, k=0), 'k', '0')
    refused(lambda: contribution_study(data, rounds=1, cohorts=10**6), 'cohorts')

class RaisingStr(str):
    "A string whose methods raise (a hostile answer)."
    def _boom(self, *a, **k): raise RuntimeError('hostile string')
    strip = lower = split = __iter__ = __len__ = __eq__ = __hash__ = __contains__ = encode = _boom

class RaisingFloat(float):
    def _boom(self, *a, **k): raise RuntimeError('hostile float')
    __float__ = __eq__ = __lt__ = __gt__ = __sub__ = __rsub__ = __abs__ = __round__ = __hash__ = _boom

class RaisingInt(int):
    def _boom(self, *a, **k): raise RuntimeError('hostile int')
    __int__ = __index__ = __eq__ = __lt__ = __gt__ = __sub__ = __abs__ = __float__ = __hash__ = _boom

@pytest.mark.parametrize('answer', [RaisingStr('abc'), RaisingStr(''), [RaisingStr('x')], RaisingFloat(1.0), RaisingInt(3),
                                    (RaisingInt(1), RaisingFloat(2.0))], ids=['str', 'empty str', '[str]', 'float', 'int', 'tuple'])
def test_grade_gives_feedback_to_subclasses_whose_methods_raise(answer):
    from hetfl_explore.graders.core import grade, exercises, Feedback
    for eid in exercises():
        assert isinstance(grade(eid, answer), Feedback), eid

def test_policy_set_checks_its_rules():
    from hetfl_explore.crowd.abac import PolicySet, parse_policy, EXAMPLE_POLICY
    refused(lambda: PolicySet('not rules'), 'rules')
    refused(lambda: PolicySet(('x',)), 'rules')
    p = parse_policy(EXAMPLE_POLICY)
    assert PolicySet(p.rules, p.combining) == p

def test_smaller_silent_gaps_are_closed():
    from hetfl_explore.engine.protocol import Selection
    from hetfl_explore.engine.aggregation import fednova_norm
    from hetfl_explore.crowd.devices import processing_capacity
    from hetfl_explore.clustering.data import har_like_stream
    from hetfl_explore.scale.sweeps import sweep_grid
    from hetfl_explore.selection.efficiency import FLCIR
    refused(lambda: Selection([1e20]), 'Selection.ids', '1e+20')
    for s in ([float('nan'), 1], [-1, 2], [float('inf'), 2]): refused(lambda: fednova_norm(s, [0.1, 0.1]), 'steps')
    refused(lambda: fednova_norm([1, 2], [0.1, float('nan')], prox_mu=0.1), 'lr')
    assert fednova_norm([3, 5], [0.1, 0.1]).tolist() == [3.0, 5.0]
    one = np.ones(2)
    refused(lambda: processing_capacity(one, one, [1.5, 0], one), 'util', '1.5')
    refused(lambda: har_like_stream(batch_range=(40, 20)), 'batch_range')
    refused(lambda: har_like_stream(batch_range=(40,)), 'batch_range')
    refused(lambda: sweep_grid(['digits'], ['uniform'], [0, 0]), 'seeds', '0')
    refused(lambda: FLCIR(np.array([[1., -2.], [3., 4.]])), 'class_counts')
    refused(lambda: FLCIR(np.array([[1., np.nan], [3., 4.]])), 'class_counts')

def test_internal_names_no_longer_answer_for_the_callers_argument():
    from hetfl_explore.engine.protocol import make_view, selection_trace
    refused(lambda: make_view(4, t=-1), 't', '-1')
    refused(lambda: selection_trace('uniform', 4, 2, 2), 'selector')
    refused(lambda: selection_trace(object(), 4, 2, 2), 'selector')

def test_run_fl_names_stop_when():
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.simulation import run_fl
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector
    fed = tiny_digits_federation(num_clients=3, min_size=10, n_test=40)
    cfg = RunConfig(rounds=1, clients_per_round=2, batch_size=8, device='cpu')
    refused(lambda: run_fl(lambda: mlp(64, 8, 10), fed, UniformSelector(), cfg, progress=False, stop_when='x'), 'stop_when')

def test_bad_seeds_are_named_by_attack_table_and_cfl():
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.crowd.robust import attack_table
    from hetfl_explore.clustering.gpfl import CFL
    from hetfl_explore.clustering.data import har_like_stream
    fed = tiny_digits_federation(num_clients=3, min_size=10, n_test=40)
    for s in (-1, 1.5, 'x', float('nan')):
        refused(lambda: attack_table(fed, seed=s), 'seed')
        refused(lambda: CFL().run(har_like_stream(rounds=2, drift_round=1), 1, seed=s), 'seed')

def test_numbers_and_choices_whose_methods_raise_are_refused_by_name():
    from hetfl_explore.foundation.core import check_int, check_float, check_choice
    from hetfl_explore.selection.incentives import CBIM
    refused(lambda: check_int('k', RaisingInt(3)), 'k', 'RaisingInt', exc=TypeError)
    refused(lambda: check_float('lr', RaisingFloat(0.5)), 'lr', 'RaisingFloat', exc=TypeError)
    refused(lambda: check_choice('norm', RaisingStr('l1'), ['l1', 'l2']), 'norm', 'RaisingStr', exc=TypeError)
    refused(lambda: CBIM(reward_budget=RaisingFloat(1.0)), 'reward_budget')
    assert CBIM(reward_budget=float('inf')).reward_budget == float('inf')

def test_reference_round_refuses_a_tolerance_that_is_no_tolerance():
    from hetfl_explore.feddiverse.selector import reference_round
    T = np.array([[.1, .2, .3], [.4, .1, .0], [.2, .2, .2]])
    for v in (float('nan'), -1.0, '1e-9'):
        refused(lambda: reference_round(T, 2, np.random.default_rng(0), tol=v), 'tol')
    assert len(reference_round(T, 2, np.random.default_rng(0))) == 2

def test_contribution_curves_refuse_a_federation_of_the_wrong_kind():
    "`top_fraction_curves`, `group_curves` and `drop_unstable_curves` take a `FedStream`: another object is named, not read."
    from hetfl_explore.clustering.contribution import top_fraction_curves, group_curves, drop_unstable_curves
    from hetfl_explore.clustering.data import from_client_arrays
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd, s = tiny_digits_federation(num_clients=4, min_size=10, n_test=40), np.arange(4.)
    for bad in (fd, None, 'digits', np.ones(4)):
        refused(lambda: top_fraction_curves(bad, s, rounds=1), 'data', 'FedStream')
        refused(lambda: group_curves(bad, s, (2,), rounds=1), 'data', 'FedStream')
        refused(lambda: drop_unstable_curves(bad, s, 1, rounds=1), 'data', 'FedStream')
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(12, 2)) + i for i in range(4)]; y = [np.arange(12) % 2 for _ in range(4)]
    st = from_client_arrays('toy', X, y, 2, rounds=2, seed=0)
    out = top_fraction_curves(st, s, (0.5, 1.0), rounds=1)
    assert list(out.columns) == ['top 50%', 'top 100%'] and len(out) == 2 and np.isfinite(out.to_numpy()).all()

def test_predictive_and_evaluate_check_their_inputs_and_devices():
    "An array whose `.device` is the string 'cpu' (numpy 2), a tensor on another device, NaN rows or bad labels are named."
    from hetfl_explore.crowd.bayesian import predictive, bayes_mlp
    from hetfl_explore.engine.models import evaluate, mlp
    torch.manual_seed(0)
    bm, m = bayes_mlp(4, 3, 5), mlp(4, 5, 3)
    x, y, a = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([0, 1, 0, 1, 0, 1])
    mean, var = predictive(bm, x, samples=3)
    assert mean.shape == (6, 3) and torch.allclose(mean.sum(1), torch.ones(6)) and (var >= 0).all()
    assert torch.allclose(predictive(bm, x.double(), samples=3)[0], mean, atol=1e-6)   # float64 rows read in the model's dtype
    r = evaluate(m, x, y, a, 3, 2)
    assert 0 <= r['accuracy'] <= 1 and r['group_counts'].sum() == 6
    nan = x.clone(); nan[2, 1] = float('nan')
    for bad, what in ((x.numpy(), 'Tensor'), (x.to('meta'), 'meta'), (nan, 'NaN'), (x[:, :3], '4'), ('cpu', 'Tensor')):
        refused(lambda: predictive(bm, bad), 'x', what)
        refused(lambda: evaluate(m, bad, y, a, 3, 2), 'x', what)
    refused(lambda: predictive('nope', x), 'model')
    refused(lambda: evaluate(m, x, y.numpy(), a, 3, 2), 'y', 'Tensor')
    refused(lambda: evaluate(m, x, torch.tensor([0, 1, 2, 0, 1, 3]), a, 3, 2), 'y', '3')
    refused(lambda: evaluate(m, x, y, torch.tensor([0, 1, 0, 1, 0, 2]), 3, 2), 'a', '2')   # once counted as class 1's group
    refused(lambda: evaluate(m, x, y[:5], a, 3, 2), 'y', '5')
    refused(lambda: evaluate(m, x, y.float(), a, 3, 2), 'y', 'float')
    refused(lambda: evaluate(m, x, y, a, 0, 2), 'n_classes', '0')
    refused(lambda: evaluate(m, x, y, a, 3, 2.5), 'n_attrs', '2.5')
