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

def test_assert_learned_reads_its_value_as_a_finite_number():
    "A learned value of '1.0', True, inf or NaN is named (once '1.0' and True passed, inf passed every bound)."
    from hetfl_explore.foundation.core import assert_learned
    for v in ('1.0', True, float('inf'), float('nan'), None):
        refused(lambda: assert_learned('fuzz', v, 0.5), 'value')
    assert assert_learned('fuzz', np.float32(0.75), 0.5) == 0.25 and assert_learned('fuzz', torch.tensor(0.75), 0.5) == 0.25

def test_seeds_and_gaps_of_selection_helpers_are_checked():
    "`sketch` names a bad seed; `robust_low_outliers` a bad `min_gap`."
    from hetfl_explore.selection.baselines import sketch
    from hetfl_explore.selection.constraints import robust_low_outliers
    u = torch.ones(3, 4)
    for v in (-1, 1.5, 2**64, 'x'): refused(lambda: sketch(u, 2, v), 'seed')
    assert np.allclose(sketch(u, 2, np.int64(3)), sketch(u, 2, 3))
    acc = np.array([.9, .8, .85, .1])
    for v in (-1.0, float('nan'), 'x', None): refused(lambda: robust_low_outliers(acc, min_gap=v), 'min_gap')
    assert robust_low_outliers(acc).tolist() == [False, False, False, True]

def test_linked_lengths_name_both_arguments_and_what_is_allowed():
    "A length or shape mismatch names the argument that was changed, not only its partner, and says what fits."
    from hetfl_explore.selection.baselines import top_by, choice_without_replacement, stratified_pick
    from hetfl_explore.selection.constraints import qffl_step, oort_utility
    from hetfl_explore.selection.incentives import subjective_reputation
    from hetfl_explore.selection.efficiency import pooled_balance
    from hetfl_explore.fairness.metrics import gap
    rng = np.random.default_rng(0)
    refused(lambda: top_by(np.array([], int), np.array([3., 1., 2.]), 2, rng), 'ids', 'expected')
    refused(lambda: choice_without_replacement(np.array([0, 1, 2]), np.array([.5, .5]), 2, rng), 'p', 'expected')
    refused(lambda: choice_without_replacement(np.array([], int), np.array([.2, .3, .5]), 2, rng), 'a', 'expected')
    refused(lambda: qffl_step(torch.zeros(0), torch.ones(2, 3), np.ones(2), 1.0), 'global_params', 'expected')
    refused(lambda: qffl_step(torch.zeros(3), torch.ones(2, 3), np.ones(1), 1.0), 'losses', 'expected')
    refused(lambda: oort_utility(np.ones(2), np.ones(2), np.ones(0), 2.0), 'times', 'expected')
    refused(lambda: subjective_reputation(np.ones(0), np.ones(2)), 'pos', 'expected')
    refused(lambda: gap(np.zeros(0)), 'rates', 'expected')
    refused(lambda: stratified_pick(np.zeros(0), np.array([0, 1]), 1, rng), 'groups', 'expected')
    assert stratified_pick(np.array([0., 1.]), np.array([], int), 2, rng).tolist() == []   # nobody available: nobody picked
    refused(lambda: pooled_balance(np.zeros((0, 2)), np.array([0])), 'class_counts', 'expected')
    refused(lambda: pooled_balance(np.array([[3, 1], [1, 3]]), np.array([], int)), 'ids', 'expected')
    assert pooled_balance(np.array([[3, 1], [1, 3]]), np.array([0, 1])) == 1.0

def test_evaluation_reads_int32_labels_and_empty_batches():
    "int32 labels once crashed cross-entropy; no rows once raised IndexError in the width check."
    from hetfl_explore.engine.models import evaluate, mlp
    from hetfl_explore.crowd.bayesian import predictive, bayes_mlp
    torch.manual_seed(0); m = mlp(4, 5, 3); x, y, a = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([0, 1, 0, 1, 0, 1])
    r32, r64 = evaluate(m, x, y.int(), a.int(), 3, 2), evaluate(m, x, y, a, 3, 2)
    assert r32['accuracy'] == r64['accuracy'] and r32['loss'] == r64['loss']
    assert evaluate(m, x[:0], y[:0], a[:0], 3, 2)['group_counts'].sum() == 0
    assert predictive(bayes_mlp(4, 3, 5), x[:0], samples=2)[0].shape == (0, 3)

def test_estimation_pivot_checks_labels_and_mask():
    "`pivot_class` and `estimate_matrix` name labels out of range, float labels and a mask of another length."
    from hetfl_explore.feddiverse.estimation import pivot_class, estimate_matrix
    maj, y = torch.tensor([True, False, True, False]), torch.tensor([0, 0, 1, 1])
    assert pivot_class(maj, y, 2) in (0, 1)
    refused(lambda: pivot_class(maj, torch.tensor([0, 0, 1, 5]), 2), 'y', '5')
    refused(lambda: pivot_class(maj, y.float(), 2), 'y', 'float')
    refused(lambda: pivot_class(maj[:3], y, 2), 'majority', '3')
    refused(lambda: estimate_matrix(maj, torch.tensor([-1, 0, 1, 1]), 2, None, None), 'y', '-1')

def test_select_per_group_reads_labels_as_non_negative_integers():
    "NaN, negative or fractional labels were cast to int64 and grouped silently (also when every sample is kept)."
    from hetfl_explore.foundation.loaders import select_per_group
    y, a = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    for bad in (np.array([0., np.nan, 1., 1.]), np.array([0, -1, 1, 1]), np.array([0., .5, 1., 1.])):
        for m in (1, None):
            refused(lambda: select_per_group(bad, a, m), 'y')
            refused(lambda: select_per_group(y, bad, m), 'a')
    refused(lambda: select_per_group(y, a[:3], 1), 'a', 'expected')
    assert select_per_group(y, a, None).tolist() == [0, 1, 2, 3] and sorted(select_per_group(y, a, 1).tolist()) == [0, 1, 2, 3]

def test_check_distribution_checks_its_tolerance():
    "An atol of NaN, inf or a negative number once made every sum pass (or none)."
    from hetfl_explore.foundation.core import check_distribution
    for v in (float('nan'), float('inf'), -1e-3, 'x'):
        refused(lambda: check_distribution('p', [.5, .5], atol=v), 'atol')
    refused(lambda: check_distribution('p', [.5, .6], atol=1e-6), 'p', 'expected')
    assert check_distribution('p', [.5, .5], atol=1e-6).tolist() == [.5, .5]

def test_unit_masks_names_a_model_that_is_not_a_module():
    "A number or any other object once failed with AttributeError ('named_modules')."
    from hetfl_explore.engine.aggregation import unit_masks
    from hetfl_explore.engine.models import mlp
    for bad in (3, 'mlp', None): refused(lambda: unit_masks(bad, 0.5, np.random.default_rng(0)), 'model', 'Module')
    m = unit_masks(mlp(4, 6, 3), 0.5, np.random.default_rng(0))
    assert set(m.unique().tolist()) <= {0.0, 1.0} and 0 < m.mean() < 1

def test_promethee_weights_gpfl_labels_and_pool_labels_are_named():
    "An object whose reading raises (weights), None or text as labels (local_sgd) and labels of another length are named."
    from fractions import Fraction
    from hetfl_explore.crowd.promethee import check_weights
    from hetfl_explore.clustering.gpfl import local_sgd
    from hetfl_explore.foundation.data import balanced_split
    class Raising:
        def __array__(self, *a, **k): raise RuntimeError('hostile')
    refused(lambda: check_weights(Raising()), 'weights')
    assert check_weights([Fraction(1, 4)] * 4).tolist() == [.25] * 4
    th, X, rng = np.zeros((3, 2)), np.ones((4, 2)), np.random.default_rng(0)
    for bad in (None, 'abc', [[0], [1, 1]]): refused(lambda: local_sgd(th, X, bad, rng), 'y')
    assert local_sgd(th, X, np.array([0, 1, 1, 0]), rng).shape == (3, 2)
    y = np.array([0, 0, 1, 1]); refused(lambda: balanced_split(y, y[:0], 2, 2, 1, 0), 'a', 'expected')

def test_flcir_needs_at_least_one_client():
    "An empty (0, C) histogram table was accepted and left a selector with no client to pick."
    from hetfl_explore.selection.efficiency import FLCIR
    refused(lambda: FLCIR(np.zeros((0, 3))), 'class_counts', 'expected')
    assert FLCIR(np.eye(3) * 10).class_counts.shape == (3, 3)

def test_default_device_names_a_gpu_index_the_machine_lacks(monkeypatch):
    "'cuda:7' on a one-GPU machine was returned as a device and failed at first use inside torch."
    from hetfl_explore.foundation.core import default_device
    assert default_device('cpu') == torch.device('cpu') and default_device(torch.device('cpu')).type == 'cpu'
    refused(lambda: default_device('nope'), 'device', 'nope')
    refused(lambda: default_device(3), 'device', '3')
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    monkeypatch.setattr(torch.cuda, 'device_count', lambda: 1)
    refused(lambda: default_device('cuda:7'), 'device', 'cuda:7')
    assert default_device('cuda:0') == torch.device('cuda:0') and default_device('cuda').type == 'cuda'

def test_toy_client_checks_its_margins():
    "A NaN or text margin once produced NaN features (or failed inside torch)."
    from hetfl_explore.feddiverse.estimation import toy_client
    N = np.array([[3, 1], [2, 4]])
    for name in ('attr_margin', 'class_margin'):
        for v in (float('nan'), float('inf'), '1', None): refused(lambda: toy_client(N, **{name: v}), name)
    x, y, a = toy_client(N, noise_dims=2)
    assert x.shape == (10, 4) and torch.isfinite(x).all() and len(y) == len(a) == 10

def test_selection_and_kl_and_label_mismatches_name_the_callers_argument():
    "validate_selection once named Selection.ids, not `sel`; gaussian_kl, interaction_matrix, triplet_error and the MIA "
    "metrics said what differs but not what fits; neg_elbo rejected a batch given as a list (read as float64)."
    from hetfl_explore.engine.protocol import validate_selection, make_view
    from hetfl_explore.crowd.bayesian import gaussian_kl, neg_elbo, bayes_mlp
    from hetfl_explore.foundation.hetero import interaction_matrix
    from hetfl_explore.feddiverse.selector import triplet_error
    from hetfl_explore.modelhet.mia import roc_auc
    view = make_view(4, 0)
    for bad in (None, 'abc', np.array([0.5, 1.5]), np.array([0, 0]), np.array([], int)):
        refused(lambda: validate_selection(bad, view), 'sel')
    assert validate_selection(np.array([0, 2]), view).ids.tolist() == [0, 2]
    z, o = torch.zeros(3), torch.ones(3)
    refused(lambda: gaussian_kl(z, o, torch.zeros(2), o), 'mu_p', 'expected')
    refused(lambda: interaction_matrix(np.array([0, 1]), np.array([0]), 2, 2), 'a', 'expected')
    t = np.full((3, 3), .1); refused(lambda: triplet_error(t, t[:2]), 'true', 'expected')
    refused(lambda: roc_auc(np.array([.1, .9]), np.array([0])), 'labels', 'expected')
    m = bayes_mlp(4, 3, 5); torch.manual_seed(0); a = neg_elbo(m, [[0.] * 4, [1.] * 4], torch.tensor([0, 2]), 10)
    torch.manual_seed(0); assert torch.allclose(a, neg_elbo(m, torch.tensor([[0.] * 4, [1.] * 4]), torch.tensor([0, 2]), 10))

def test_fednova_norm_needs_one_learning_rate_per_client():
    from hetfl_explore.engine.aggregation import fednova_norm
    for steps, lr in ((np.array([3., 5.]), np.array([])), (np.array([3., 5.]), np.array([.1])), (np.array([]), np.array([.1, .1]))):
        refused(lambda: fednova_norm(steps, lr), 'lr', 'one learning rate per client')
    assert fednova_norm(np.array([3., 5.]), np.array([.1, .1]), prox_mu=0.0).tolist() == [3., 5.]   # prox_mu = 0: plain FedNova

def test_dirichlet_splits_name_an_empty_pool():
    from hetfl_explore.foundation.data import partition_dirichlet, dirichlet_size_split
    refused(lambda: partition_dirichlet(np.array([], int), 2, 0.5, 0), 'y', 'no labels')
    refused(lambda: dirichlet_size_split(np.array([], int), 2), 'y', 'no labels')

def test_group_averages_and_f1_name_the_callers_argument():
    from hetfl_explore.clustering.gpfl import weighted_average, weighted_f1
    refused(lambda: weighted_average(3, [1.0]), 'thetas', 'thetas=3')
    refused(lambda: weighted_f1(np.array([]), np.array([0, 1, 0]), 2), 'y', '0 and 3 labels')
    assert weighted_f1(np.array([0, 1]), np.array([0, 1]), 2) == 1.0

def test_messages_show_the_value_received():
    from hetfl_explore.engine.store import check_federated_data
    from hetfl_explore.foundation.core import check_array
    refused(lambda: check_federated_data(3), 'data', 'data=3 (int)')
    refused(lambda: check_array('availability', [1.0, 10**400]), 'availability', '10000')
