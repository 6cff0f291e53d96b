"Each selection method does what its name says: hand-computed cases of the published rules, and bad input refused by name."
import dataclasses, signal
import numpy as np, pytest, torch
from hetfl_explore.engine.protocol import ClientView, Selection, Selector, UniformSelector, make_view, selection_trace, synthetic_reports
from hetfl_explore.engine.aggregation import AggregationInput, fednova_rule, unit_masks
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation, run_fl
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.system import SystemProfiles
from hetfl_explore.engine.models import mlp
from hetfl_explore.selection.baselines import FedNova, RoundRobin, allocate
from hetfl_explore.selection.efficiency import LAG
from hetfl_explore.selection.constraints import FedCS, QFFL, Oort, DDaBA, PolicyStack, qffl_step
from hetfl_explore.selection.inclusion import LTFL, FedDropout
from hetfl_explore.selection.compare import compare_selectors

@pytest.fixture(scope='module')
def fed(): return digits_federation(8, alpha=0.5, seed=0)
MODEL = lambda: mlp(64, 16, 10)
CFG = RunConfig(rounds=2, clients_per_round=3, lr=0.2, batch_size=16)

def lag_reference(a, c, eta, D, xi, rounds):
    """LAG-PS as published (Chen et al., 2018, eq. (12b) and update (4)) on workers f_m = a_m/(2M)||theta - c_m||^2:
    L_m = a_m / M, step alpha = eta; worker m is contacted when L_m^2 ||hat_m - theta||^2 > sum_d xi_d ||move_d||^2 / (alpha^2 M^2)."""
    M = len(a); L, alpha = a / M, eta; theta = np.zeros(2); hist, hat, grad, out = [theta.copy()], {}, {}, []
    for t in range(rounds):
        moves = sum(np.sum((hist[i + 1] - hist[i]) ** 2) for i in range(max(0, len(hist) - 1 - D), len(hist) - 1))
        rhs = (xi / D) * moves / (alpha ** 2 * M ** 2)
        up = [m for m in range(M) if m not in hat or L[m] ** 2 * np.sum((hat[m] - theta) ** 2) > rhs]
        if not up: break
        for m in up: hat[m], grad[m] = theta.copy(), a[m] * (theta - c[m]) / M
        out.append(sorted(up)); theta = theta - alpha * np.sum([grad[m] for m in range(M)], 0); hist.append(theta.copy())
    return out

def test_lag_skip_pattern_matches_the_published_trigger():
    a, c, alpha = np.array([1., 1., 2., 4., 8.]), np.array([[1., 0], [0, 1], [-1, 0], [0, -1], [1, 1]]), 0.1
    s = LAG(smoothness=alpha * a); s.reset(5, 0); rng = np.random.default_rng(0); theta = torch.zeros(2, dtype=torch.float64); got = []
    want = lag_reference(a, c, alpha, 10, 1.0, 12)
    for t in range(len(want)):
        ids = s.select(t, ClientView(t, np.arange(5), np.full(5, 100), global_params=theta), 5, rng).ids; got.append(sorted(ids.tolist()))
        upd = -alpha * torch.as_tensor(a[ids])[:, None] * (theta - torch.as_tensor(c[ids]))
        r = synthetic_reports(t, ids, np.full(5, 100), rng); r.updates, r.global_params = upd, theta.clone()
        s.observe(t, r); theta = theta + s.aggregation(AggregationInput(theta, upd, np.ones(len(ids)) / len(ids)))
    assert got == want and any(len(g) < 5 for g in got[1:]) and any(len(g) > 1 for g in got[2:])

def test_fednova_formula_on_heterogeneous_steps():
    eta, tau, g, p = 0.1, np.array([1, 3, 6]), torch.eye(3), np.array([.2, .3, .5])
    U = -eta * torch.as_tensor(tau, dtype=torch.float32)[:, None] * g
    want = -eta * float((p * tau).sum()) * torch.as_tensor(p, dtype=torch.float32)     # -eta tau_eff sum p_k g_k
    torch.testing.assert_close(fednova_rule(AggregationInput(torch.zeros(3), U, p, tau, np.full(3, eta))), want)

def test_fednova_under_run_fl_uses_normalised_averaging(fed):
    cfg = dataclasses.replace(CFG, rounds=1)
    h = run_fl(MODEL, fed, FedNova(), cfg); ref = run_fl(MODEL, fed, FedNova(), dataclasses.replace(cfg, aggregator='fednova'))
    assert h.meta['aggregation'].endswith('fednova_rule') and len(h.rounds.selected[0]) == fed.num_clients   # all clients
    torch.testing.assert_close(h.final_params, ref.final_params)

def test_fednova_with_fedavgm_in_compare(fed):
    res = compare_selectors([FedNova()], fed, MODEL, dataclasses.replace(CFG, aggregator='fedavgm', server_momentum=0.95))
    assert res.attrs['histories'][('FedNova', 0)].meta['aggregation'].endswith('fednova_rule')
    with pytest.raises(ValueError, match='not both'):
        run_fl(MODEL, fed, FedNova(), dataclasses.replace(CFG, momentum=0.5, prox_mu=0.1))

def test_round_robin_is_the_count_rule_under_random_availability():
    tr = selection_trace(RoundRobin(), 12, 3, 300, seed=2, availability=0.4)
    av = selection_trace(UniformSelector(), 12, 12, 300, seed=2, availability=0.4)
    before = np.cumsum(tr, 0) - tr
    for t in range(300):
        picked, waiting = tr[t] == 1, (av[t] == 1) & (tr[t] == 0)
        if picked.any() and waiting.any(): assert before[t, picked].max() <= before[t, waiting].min()
    assert np.ptp(tr.sum(0)) <= 3
    first = [tuple(np.flatnonzero(r)) for r in selection_trace(RoundRobin(), 12, 3, 4, seed=0)]
    assert first != [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)]                 # seeded tie-break, not id order

def test_federated_dropout_trains_sub_models(fed):
    prof = SystemProfiles.sample(fed.num_clients, seed=0, speed_sigma=1.0)
    h = run_fl(MODEL, fed, FedDropout(), dataclasses.replace(CFG, rounds=1, clients_per_round=8), profiles=prof)
    r = h.rounds.iloc[0]; P = h.meta['n_params']
    assert r.bytes_download < 4 * P * r.msg_download                              # some clients got a smaller model
    m = unit_masks(MODEL(), 0.5, np.random.default_rng(0)); assert int(m.sum()) == 8 * 64 + 8 + 8 * 10 + 10

class _AllFlagged(DDaBA):
    def reweight(self, selected, updates): return np.zeros(len(updates.ids))

def test_all_flagged_round_keeps_the_previous_model(fed):
    sim = Simulation(MODEL, fed, _AllFlagged(), dataclasses.replace(CFG, rounds=1, val_fraction=0.2))
    before = sim.params.clone(); row = sim.step()
    assert row['kept_previous'] and torch.equal(sim.params, before)
    view = make_view(4, available=[1, 2, 3], n_samples=np.array([1, 2, 8, 9])); s = LTFL(loss_prob=1.0, quantile=0.0); s.reset(4, 0)
    sel = s.select(0, view, 2, np.random.default_rng(0))      # this seed picks 2 and 3, both slower than the fastest available (1)
    assert sorted(sel.ids) == [2, 3] and sel.weights.sum() == 0 and s.round_info() == {'lost': 2}   # all lost: all weights 0

def test_qffl_default_is_the_qfedavg_step():
    s = QFFL(q=1.0); g0 = torch.zeros(2); U = torch.tensor([[1., 0], [0, 2]]); F = np.array([0.5, 2.0])
    rep = synthetic_reports(0, np.array([0, 1]), np.array([10, 10]), np.random.default_rng(0)); rep.loss_before = F
    got = s.aggregation(AggregationInput(g0, U, np.array([.5, .5]), lr=np.full(2, 0.5), reports=rep))
    L = 2.0; d = -L * U; h = 1.0 * (d ** 2).sum(1) + L * torch.as_tensor(F, dtype=torch.float32)      # q F^(q-1)||d||^2 + L F^q
    torch.testing.assert_close(got, -(torch.as_tensor(F, dtype=torch.float32)[:, None] * d).sum(0) / h.sum())
    torch.testing.assert_close(got, qffl_step(g0, U, F, 1.0, L))
    assert QFFL(step='reweight').aggregation is None

def test_oort_long_unselected_client_reenters():
    s = Oort(alpha=0, staleness=1.0, explore=0, explore_min=0, cutoff=1.0); s.reset(3, 0)
    s.loss[:] = [1.0, 1.2, 2.0]; s.last[:] = 1; view = make_view(3)
    u = s.utilities(view, np.arange(3), 1); np.testing.assert_allclose(u, [0, 20 / 92, 1.0])   # (min(u, q95) - min) / (q95 - min), q95 = 192; ln 1 = 0: no bonus
    rng, picks = np.random.default_rng(0), []
    for t in range(1, 200):
        ids = s.select(t, view, 1, rng).ids; picks.append(int(ids[0])); s.last[ids] = t + 1
        if ids[0] == 0: break
    assert picks[-1] == 0 and picks[0] == 2                                   # re-entry by the staleness bonus

def test_fedcs_needs_profiles_or_says_where_times_came_from(fed):
    with pytest.raises(ValueError, match='time_source'): FedCS().select(0, make_view(4), 2, np.random.default_rng(0))
    h = run_fl(MODEL, fed, FedCS(), dataclasses.replace(CFG, rounds=1))
    assert h.rounds['info'][0]['time_source'] == 'drawn' and h.rounds.msg_query_time[0] > 0

def test_messages_counted_by_type(fed):
    from hetfl_explore.selection.efficiency import PowD
    h = run_fl(MODEL, fed, PowD(d=5), dataclasses.replace(CFG, rounds=1)); r = h.rounds.iloc[0]; P = h.meta['n_params']
    assert (r.msg_query_loss, r.msg_download, r.msg_upload) == (5, 3, 3)
    assert r.bytes == r.bytes_query_loss + r.bytes_download + r.bytes_upload == 4 * P * 11 + 8 * 5

def test_composed_policy_end_to_end(fed):
    prof = SystemProfiles.sample(fed.num_clients, seed=0, speed_sigma=1.0)
    h = run_fl(MODEL, fed, PolicyStack(FedCS(), Oort()), dataclasses.replace(CFG, rounds=3), profiles=prof)
    t = prof.round_cost(np.arange(fed.num_clients), np.asarray(fed.client_sizes, float), 4.0 * h.meta['n_params'])[0]
    for r in h.rounds.itertuples(): assert max(t[r.selected]) <= r.info.get('t_max', np.inf) + 1e-9 or len(r.selected) == 1

def test_reweight_hook_and_aggregation_plugin(fed):
    med = lambda inp: inp.updates.median(0).values
    h = run_fl(MODEL, fed, UniformSelector(), CFG, aggregation=med); assert h.meta['aggregation'].endswith('<lambda>')
    with pytest.raises(ValueError, match='one aggregation rule'): Simulation(MODEL, fed, FedNova(), CFG, aggregation=med)

# ---- bad input in the engine and selection folders
def _alarm(seconds):
    def raise_(*_): raise TimeoutError('hang')
    signal.signal(signal.SIGALRM, raise_); signal.alarm(seconds)

def test_allocate_infinite_weight_does_not_hang():
    _alarm(5)
    try:
        with pytest.raises(ValueError, match='weight'): allocate([2, 2], [np.inf, 1], 3)
    finally: signal.alarm(0)

def test_system_profiles_refuse_nan():
    with pytest.raises(ValueError, match='SystemProfiles.speed'):
        SystemProfiles(speed=[np.nan, 1, 1], bandwidth=1, availability=1, energy_budget=np.inf, dropout=0)
    with pytest.raises(ValueError, match='speed=nan'): SystemProfiles.sample(3, speed=np.nan)

def test_runconfig_refuses_scalar_client_lr():
    with pytest.raises(TypeError, match='RunConfig.client_lr=0.1'): RunConfig(client_lr=0.1)

def test_run_fl_refuses_a_model_that_does_not_fit(fed):
    with pytest.raises(ValueError, match='64 values'): run_fl(lambda: mlp(32, 16, 10), fed)
    with pytest.raises(ValueError, match='n_classes=10'): run_fl(lambda: mlp(64, 16, 3), fed)

def test_run_fl_refuses_no_data():
    with pytest.raises(TypeError, match=r'data=None \(NoneType\)'): run_fl(MODEL, None)

def test_seed_range():
    with pytest.raises(ValueError, match='RunConfig.seed'): RunConfig(seed=2 ** 64)
    with pytest.raises(ValueError, match='seed'): SystemProfiles.sample(3, seed=2 ** 64)
    RunConfig(seed=2 ** 63 - 1)

def test_softmax_refuses_plus_inf_and_nan():
    "softmax refuses +inf and NaN by name (an infinite value would otherwise get no weight: [inf, 1] -> [0, 1])."
    from hetfl_explore.selection.baselines import softmax
    for bad in ([np.inf, 1.0], [np.nan, 1.0]):
        with pytest.raises(ValueError, match='v='): softmax(np.array(bad))
    np.testing.assert_allclose(softmax(np.array([-np.inf, 0.0, 0.0])), [0, 0.5, 0.5])

def test_selection_heatmaps_fit_the_page_column(fed):
    "Six panels per row still fit the docs column (a 1280 px browser): the figure is capped at PAGE_FIGURE_WIDTH."
    from hetfl_explore.foundation.core import PAGE_FIGURE_WIDTH
    from hetfl_explore.selection.compare import selection_heatmaps
    res = compare_selectors([UniformSelector(), RoundRobin()], fed, MODEL, dataclasses.replace(CFG, rounds=1))
    assert selection_heatmaps(res, cols=6).layout.width == PAGE_FIGURE_WIDTH
    assert selection_heatmaps(res, cols=2).layout.width == 2 * 220 + 40

def hamilton_reference(weights, seats):
    "Hamilton's method without caps, in exact fractions: floors of the quotas, then the largest remainders (ties: the lower index)."
    from fractions import Fraction
    q = [Fraction(w) * seats / sum(map(Fraction, weights)) for w in weights]
    out = [int(x) for x in q]
    for g in sorted(range(len(q)), key=lambda g: (-(q[g] - out[g]), g))[:seats - sum(out)]: out[g] += 1
    return out, q

@pytest.mark.parametrize('weights,seats,want', [((1, 1, 1), 2, [1, 1, 0]), ((5, 2, 1), 3, [2, 1, 0]),
                                                ((.5, .3, .2), 9, [4, 3, 2]), ((6, 4, 2), 5, [2, 2, 1])])
def test_allocate_is_hamiltons_largest_remainder(weights, seats, want):
    assert allocate([50] * len(weights), weights, seats).tolist() == want == hamilton_reference(weights, seats)[0]

def test_allocate_obeys_the_quota_rule_on_random_splits():
    "500 random splits: equal to the exact reference, each group within floor/ceil of its quota; caps redistributed."
    rng = np.random.default_rng(0)
    for _ in range(500):
        G = int(rng.integers(2, 8)); w = rng.integers(0, 20, G).astype(float); w[0] += 1; m = int(rng.integers(0, 40))
        got = allocate([1000] * G, w, m); want, q = hamilton_reference(w.tolist(), m)
        assert got.tolist() == want and all(int(x) <= g <= -(-x // 1) for g, x in zip(got, q))
    got = allocate([1, 10, 10], [8, 1, 1], 6)                    # quota 4.8 > capacity 1: the other 5 seats re-split
    assert got.tolist() == [1, 3, 2] or got.tolist() == [1, 2, 3]
    assert allocate([1, 10, 10], [8, 1, 1], 6).sum() == 6

def test_allocate_breaks_equal_remainders_at_random():
    draws = np.array([allocate([3, 3, 3], [1, 1, 1], 2, np.random.default_rng(s)) for s in range(300)])
    assert (draws.max(1) == 1).all() and (draws.sum(1) == 2).all()
    assert all(60 < (draws[:, g] == 0).sum() < 140 for g in range(3))      # each group left out about 100 times

def test_kfed_spreads_over_equal_groups():
    "3 equal well-separated groups, κ = 2: never two clients of one group, and every client is selected."
    from hetfl_explore.selection.efficiency import KFed
    centres = np.array([[0., 0], [100, 0], [0, 100]])
    cents = [centres[g] + np.random.default_rng(k).normal(0, .1, (2, 2)) for k, g in enumerate(np.repeat([0, 1, 2], 3))]
    s = KFed(cents, n_global=3, n_groups=3); s.reset(9, 0); rng = np.random.default_rng(0)
    assert len(set(s.group.tolist())) == 3
    seen = np.zeros(9, int)
    for t in range(300):
        ids = s.select(t, make_view(9, t), 2, rng).ids
        assert np.bincount(s.group[ids], minlength=3).max() == 1
        seen[ids] += 1
    assert (seen > 0).all()

def test_hcsfed_neyman_allocation_reaches_every_cluster():
    "Clusters of 6/4/2 with equal spreads, κ = 5: Neyman allocation [2, 2, 1] every round."
    from hetfl_explore.selection.baselines import HCSFed
    s = HCSFed(); s.reset(12, 0)
    s.cluster = np.repeat([0, 1, 2], [6, 4, 2]); s.norm = np.tile([1., 2.], 6); s.centres, s.n_found = np.eye(3), 3
    rng = np.random.default_rng(0)
    for t in range(50):
        ids = s.select(t, make_view(12, t), 5, rng).ids
        assert np.bincount(s.cluster[ids], minlength=3).tolist() == [2, 2, 1]

def test_comparison_arguments_are_checked(fed):
    "Repeated seeds (a run would overwrite another) and poisoned clients (shifted twice) are refused."
    from hetfl_explore.selection.compare import poison_labels, curves_figure, history_metrics, summary
    with pytest.raises(ValueError, match='seeds=.*distinct'):
        compare_selectors([UniformSelector()], fed, MODEL, CFG, seeds=(0, 0))
    with pytest.raises(ValueError, match='clients: id 1 appears more than once'): poison_labels(fed, [1, 1])
    assert torch.equal(poison_labels(fed, []).y, fed.y)
    with pytest.raises(ValueError, match=r'seeds: expected a 1-D array of seeds, got an array of shape \(2, 2\)'):
        compare_selectors([UniformSelector()], fed, MODEL, CFG, seeds=np.zeros((2, 2), int))
    res = compare_selectors([UniformSelector()], fed, MODEL, dataclasses.replace(CFG, rounds=1), seeds=np.arange(2))
    assert list(res.seed) == [0, 1] and len(curves_figure(res, 'total_sim_time').data) == 1
    with pytest.raises(ValueError, match="metric='selected': expected one of"): curves_figure(res, 'selected')
    with pytest.raises(ValueError, match=r'target=1.5: expected a finite number in \[0, 1\]'):
        history_metrics(res.attrs['histories'][('uniform', 0)], 1.5)
    with pytest.raises(ValueError, match="columns='nope'"): summary(res, ('final_accuracy', 'nope'))
