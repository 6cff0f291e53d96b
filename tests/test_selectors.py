"""Property and rule tests of every client selector, on a fake server view: no training, fast."""
import numpy as np, torch, pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from hetfl_explore.engine.protocol import Selection, Reports, make_view, validate_selection
from hetfl_explore.selection.taxonomy import TABLE4, placement_mismatches, placement_table
from hetfl_explore.selection import baselines as B
from hetfl_explore.selection import efficiency as E
from hetfl_explore.selection import constraints as C
from hetfl_explore.selection import inclusion as I
from hetfl_explore.selection import incentives as N

P = 6  # length of the fake parameter vectors

def _centroids(K):
    r = np.random.default_rng(K)
    return [r.normal(k % 3, 0.1, (2, 2)) for k in range(K)]

# name -> (factory(K), size rule): 'exact' = min(k, |A|) clients; 'atmost' = 1..min(k, |A|); 'any' = 1..|A|
SELECTORS = {
    'EqRep': (lambda K: B.EqRep(), 'exact'), 'EqW': (lambda K: B.EqW(), 'exact'),
    'EqW-replace': (lambda K: B.EqW(replace=True), 'atmost'), 'RoundRobin': (lambda K: B.RoundRobin(), 'exact'),
    'FedNova': (lambda K: B.FedNova(), 'any'), 'FedNova-k': (lambda K: B.FedNova(participation='k'), 'exact'), 'FedPNS': (lambda K: B.FedPNS(), 'exact'),
    'HCSFed': (lambda K: B.HCSFed(), 'any'),            # round 0: every available client
    'AFL_G': (lambda K: E.ActiveFL(), 'exact'), 'pow-d': (lambda K: E.PowD(), 'exact'),
    'S-FedAvg': (lambda K: E.SFedAvg(n_perm=3), 'exact'), 'k-FED': (lambda K: E.KFed(_centroids(K), n_global=3), 'exact'),
    'LAG': (lambda K: E.LAG(), 'any'),                   # threshold: a variable number (dynamic, as published)
    'LAG-cap': (lambda K: E.LAG(cap=True), 'atmost'),
    'FL-CIR': (lambda K: E.FLCIR(np.eye(3)[np.arange(K) % 3] * 10), 'exact'),
    'FAVOR': (lambda K: E.FAVOR(steps_per_round=2), 'exact'),
    'FedCS': (lambda K: C.FedCS(time_source='data_size'), 'atmost'),            # clients over the deadline are dropped
    'AFL_M': (lambda K: C.AgnosticFL(), 'atmost'),      # clients whose lambda was projected to 0 are never drawn
    'AFL_M-weights': (lambda K: C.AgnosticFL(mode='weights'), 'exact'),
    'q-FFL': (lambda K: C.QFFL(q=1.0), 'exact'), 'q-FFL-reweight': (lambda K: C.QFFL(q=1.0, step='reweight'), 'exact'), 'Oort': (lambda K: C.Oort(), 'exact'), 'FLAME_C': (lambda K: C.FLAME(), 'exact'),
    'DDaBA': (lambda K: C.DDaBA(), 'exact'), 'LT-FL': (lambda K: I.LTFL(), 'exact'), 'FDropout': (lambda K: I.FedDropout(), 'exact'),
    'CI-MR': (lambda K: N.CIMR(n_perm=3), 'any'),        # full participation
    'CI-MR-k': (lambda K: N.CIMR(participation='k', n_perm=3), 'exact'),
    'FMore': (lambda K: N.FMore(), 'atmost'),            # only positive-score bids win
    'CBIM': (lambda K: N.CBIM(), 'atmost'),              # reputation threshold
}

def fake_reports(t, ids, n_samples, losses, rng):
    "Reports with deterministic fake updates and a fake validation set (accuracy = exp(-distance to a target))."
    ids = np.asarray(ids, np.int64); m = len(ids); target = torch.ones(P)
    g = torch.zeros(P)
    upd = torch.from_numpy(rng.normal(0, 0.3, (m, P))).float()
    ev = lambda p: (float(torch.exp(-(p - target).norm())), float((p - target).norm()))
    return Reports(round=t, ids=ids, n_samples=n_samples[ids], loss=losses[ids], loss_before=losses[ids] + 0.1,
                   steps=np.full(m, 5), update_norm=upd.norm(dim=1).numpy().astype(np.float64), time=np.ones(m),
                   energy=np.ones(m), updates=upd, global_params=g, server_eval=ev)

def run_rounds(name, K, k, avail_masks, n_samples, losses, seed):
    "Drive a selector for len(avail_masks) rounds on the fake environment; return the list of Selections."
    factory, _ = SELECTORS[name]
    s = factory(K); s.reset(K, seed)
    rng, rep_rng, out = np.random.default_rng(seed), np.random.default_rng(seed + 1), []
    for t, mask in enumerate(avail_masks):
        avail = np.flatnonzero(mask)
        view = make_view(K, t, avail, n_samples, loss_fn=lambda ids: losses[ids], global_params=torch.zeros(P))
        sel = validate_selection(s.select(t, view, k, rng), view, name)
        out.append(sel)
        s.observe(t, fake_reports(t, sel.ids, n_samples, losses, rep_rng))
    return out

@st.composite
def environments(draw):
    K = draw(st.integers(1, 10)); k = draw(st.integers(1, 12))
    masks = [draw(st.lists(st.booleans(), min_size=K, max_size=K).filter(any)) for _ in range(3)]
    equal = draw(st.booleans())
    n = np.full(K, 50) if equal else np.array(draw(st.lists(st.integers(1, 200), min_size=K, max_size=K)))
    losses = np.full(K, 1.0) if equal else np.array(draw(st.lists(st.floats(0.01, 5.0), min_size=K, max_size=K)))
    return K, k, masks, n, losses, draw(st.integers(0, 2**16))

@pytest.mark.parametrize('name', list(SELECTORS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env=environments())
def test_selector_properties(name, env):
    K, k, masks, n, losses, seed = env
    sels = run_rounds(name, K, k, masks, n, losses, seed)
    rule = SELECTORS[name][1]
    for t, (sel, mask) in enumerate(zip(sels, masks)):
        avail = np.flatnonzero(mask); cap = min(k, len(avail))
        assert len(np.unique(sel.ids)) == len(sel.ids)                 # distinct
        assert np.isin(sel.ids, avail).all()                           # never an unavailable client
        if rule == 'exact': assert len(sel.ids) == cap
        elif rule == 'atmost': assert 1 <= len(sel.ids) <= cap
        else: assert 1 <= len(sel.ids) <= len(avail)
        if sel.weights is not None:
            assert sel.weights.shape == sel.ids.shape and (sel.weights >= 0).all()
            assert abs(sel.weights.sum() - 1) < 1e-9 or sel.weights.sum() == 0   # all 0: no update trusted
    again = run_rounds(name, K, k, masks, n, losses, seed)             # deterministic for a seed
    for a, b in zip(sels, again):
        assert np.array_equal(a.ids, b.ids)
        assert (a.weights is None) == (b.weights is None) and (a.weights is None or np.allclose(a.weights, b.weights))

def test_every_table4_row_is_implemented_and_matches():
    classes = {c for m in (B, E, C, I, N) for c in vars(m).values() if isinstance(c, type) and getattr(c, 'taxonomy', None)}
    table = placement_table(classes)
    assert set(TABLE4.index) <= set(table.index), set(TABLE4.index) - set(table.index)
    for cls in classes:
        if cls.taxonomy['method'] in TABLE4.index: assert placement_mismatches(cls.taxonomy) == [], cls.__name__
    assert not table.index.duplicated().any()
    assert {'AFL_G', 'AFL_M'} <= set(table.index)                      # the two AFLs are distinct methods

# ---- rule tests on tiny hand-checked cases ----

def test_powd_picks_highest_loss_candidates():
    losses = np.array([0.3, 2.0, 0.1, 1.5, 0.9, 1.7])
    view = make_view(6, loss_fn=lambda ids: losses[ids])
    for seed in range(10):
        s = E.PowD(d=4); s.reset(6, seed)
        sel = s.select(0, view, 2, np.random.default_rng(seed))
        assert sorted(sel.ids) == sorted(s.candidates[np.argsort(-s.losses)[:2]])
    s = E.PowD(d=6); s.reset(6, 0)
    assert sorted(s.select(0, view, 3, np.random.default_rng(0)).ids) == [1, 3, 5]

def test_fedcs_drops_clients_over_deadline():
    view = make_view(5, n_samples=np.array([1, 2, 5, 9, 3]))
    for seed in range(10):
        s = C.FedCS(deadline=4, request=10, time_source='data_size'); s.reset(5, seed)
        ids = s.select(0, view, 5, np.random.default_rng(seed)).ids
        assert sorted(ids) == [0, 1, 4]

def test_qffl_q0_equals_fedavg_weights():
    n, F = np.array([10, 30, 60, 5]), np.array([0.5, 1.0, 3.0, 0.2])
    view = make_view(4, n_samples=n, loss_fn=lambda ids: F[ids])
    s = C.QFFL(q=0, step='reweight'); s.reset(4, 0)
    sel = s.select(0, view, 3, np.random.default_rng(1))
    np.testing.assert_allclose(sel.weights, n[sel.ids] / n[sel.ids].sum())
    U = torch.randn(3, 5)
    torch.testing.assert_close(C.qffl_step(torch.zeros(5), U, F[:3], q=0), U.mean(0))
    w = C.QFFL(q=3).weights(n, F); assert w.argmax() == 2

def test_eqrep_frequencies_and_eqw_monotone():
    from hetfl_explore.engine.protocol import selection_trace
    t = selection_trace(B.EqRep(), 10, 3, 1000, seed=0)
    np.testing.assert_allclose(t.mean(0), 0.3, atol=0.05)
    sizes = np.array([10, 20, 40, 80, 160])
    f = selection_trace(B.EqW(), 5, 2, 1000, seed=0, n_samples=sizes).mean(0)
    assert (np.diff(f) > 0).all()

def test_oort_utility_formula_and_alpha0():
    u = C.oort_utility(np.array([50, 50]), np.array([2.0, 2.0]), np.array([4.0, 8.0]), preferred=4.0, alpha=1.5)
    np.testing.assert_allclose(u, [100, 100 * 0.5 ** 1.5])
    np.testing.assert_allclose(C.oort_utility([50], [2.0], [8.0], 4.0, alpha=0), [100])

def test_activefl_round0_is_pure_exploration():
    s = E.ActiveFL(); s.reset(8, 0)
    sel = s.select(0, make_view(8), 5, np.random.default_rng(0))
    assert sorted(sel.ids) == sorted(s.explored) and len(sel.ids) == 5

def test_ddaba_zeroes_a_malicious_client():
    s = C.DDaBA(); s.reset(6, 0); target = torch.ones(P)
    upd = torch.full((6, P), 0.2); upd[0] = -3.0
    ev = lambda p: (float(torch.exp(-(p - target).norm())), float((p - target).norm()))
    ids = np.arange(6)
    s.observe(0, Reports(0, ids, np.full(6, 10), np.ones(6), np.ones(6), np.full(6, 5), upd.norm(dim=1).numpy(),
                         np.ones(6), np.ones(6), upd, torch.zeros(P), ev))
    assert s.flagged.tolist() == [True] + [False] * 5
    sel = s.select(1, make_view(6), 6, np.random.default_rng(0))
    assert sel.weights[sel.ids == 0][0] == 0

def test_lag_contacts_fewer_clients_as_model_settles():
    s = E.LAG(cap=False); s.reset(6, 0); rng = np.random.default_rng(0); theta = torch.zeros(P); sizes = []
    for t in range(10):
        ids = s.select(t, make_view(6, global_params=theta.clone()), 6, rng).ids; sizes.append(len(ids))
        r = fake_reports(t, ids, np.full(6, 10), np.ones(6), rng); r.updates = r.updates * 0.5 ** t; r.global_params = theta.clone()
        s.observe(t, r); theta = theta + 0.5 ** t
    assert sizes[0] == 6 and sizes[-1] < 6

def test_cbim_threshold_and_contract():
    e, r = N.contract_menu([1.0, 0.5])
    assert np.all(np.diff(r) > 0) and abs(r[0] - 1.0 * e[0]) < 1e-12
    s = N.CBIM(); s.reset(4, 0); s.neg[2] = 5
    assert 2 not in s.select(0, make_view(4), 4, np.random.default_rng(0)).ids

def test_shapley_efficiency_and_symmetry():
    u = lambda c: float(len(c) ** 2)
    phi = E.shapley_values(4, u, np.random.default_rng(0))
    np.testing.assert_allclose(phi.sum(), 16); np.testing.assert_allclose(phi, 4)

def test_hcsfed_reset_restores_configured_clusters():
    from hetfl_explore.engine.protocol import selection_trace
    s = B.HCSFed(n_clusters=5); selection_trace(s, 3, 2, 3)      # 3 clients: the run finds only 3 clusters
    assert (s.n_found, s.n_clusters) == (3, 5)
    s.reset(10, 0)
    assert (s.n_found, s.n_clusters) == (5, 5) and s.centres is None


MC_DRAWS, MC_TOL = 20_000, 0.01   # Monte Carlo draws; tolerance on each mean weight (about 5 standard errors)

@pytest.mark.parametrize('lam,k', [([0.05, 0.15, 0.3, 0.5], 2), ([0.1] * 10, 3), ([0.4, 0.3, 0.2, 0.1, 0.0], 3), ([0.9, 0.05, 0.05], 1)])
def test_afl_select_mode_is_unbiased(lam, k):
    "AFL_M mode='select': k distinct clients, weights summing to one, E[weight_k] = lambda_k (Monte Carlo)."
    lam = np.asarray(lam); K = len(lam); s = C.AgnosticFL(); s.reset(K, 0); s.lam = lam
    rng, mean_w = np.random.default_rng(0), np.zeros(K)
    for _ in range(MC_DRAWS):
        sel = s.select(0, make_view(K), k, rng)
        assert len(sel.ids) == min(k, np.count_nonzero(lam)) and abs(sel.weights.sum() - 1) < 1e-12
        mean_w[sel.ids] += sel.weights / MC_DRAWS
    assert np.abs(mean_w - lam).max() < MC_TOL, mean_w


def test_afl_select_mode_restricted_to_available_clients_renormalises():
    s = C.AgnosticFL(); s.reset(4, 0); s.lam = np.array([0.1, 0.2, 0.3, 0.4])
    rng, mean_w = np.random.default_rng(1), np.zeros(4)
    for _ in range(MC_DRAWS):
        sel = s.select(0, make_view(4, 0, np.array([1, 3])), 1, rng); mean_w[sel.ids] += sel.weights / MC_DRAWS
    assert np.abs(mean_w - [0, 1 / 3, 0, 2 / 3]).max() < MC_TOL


def test_fedcs_default_deadline_is_the_median_of_the_requested_clients():
    s = C.FedCS(request=2, time_source='data_size'); s.reset(8, 0)
    s.select(0, make_view(8, n_samples=np.arange(1, 9) * 10), 2, np.random.default_rng(2))
    assert len(s.asked) == 4 and s.t_max == np.median((s.asked + 1) * 10.0) != np.median(np.arange(1, 9) * 10.0)


def test_fednova_participation_and_its_rule_travel_with_the_selector():
    view = make_view(4, n_samples=np.array([10, 20, 30, 40]))
    assert sorted(B.FedNova().select(0, view, 2, np.random.default_rng(0)).ids) == [0, 1, 2, 3]       # 'all' ignores k
    assert len(B.FedNova(participation='k').select(0, view, 2, np.random.default_rng(0)).ids) == 2
    assert not hasattr(B.FedNova(), 'config_overrides')        # no config change: `aggregation` carries the rule


def test_reward_budget_is_plus_infinity_or_a_non_negative_number():
    assert N.CBIM().reward_budget == np.inf and N.CBIM(reward_budget=np.float64(5)).reward_budget == 5.0
    for bad in (float('nan'), -float('inf'), -1.0, 'x', [np.inf], True):
        with pytest.raises((ValueError, TypeError), match='reward_budget'): N.CBIM(reward_budget=bad)

def test_allocate_with_float_weights_of_long_fractions():
    "Weights whose exact fractions have huge denominators (HCSFed's Neyman weights) still get quotas within capacity."
    from hetfl_explore.selection.baselines import allocate, _hamilton_quotas
    cap, w = np.array([6, 16, 2]), np.array([1.2440093902041816, 1.358769844101891, 0.022020936014268067])
    q = [float(x) for x in _hamilton_quotas(cap, w, 9)]
    np.testing.assert_allclose(q, 9 * w / w.sum())                     # no group reaches its capacity: plain proportions
    assert allocate(cap, w, 9).tolist() == [4, 5, 0]
