"Property tests of FedDiverse's server side (selection rule, FedRK, simulation) and of the GCE loss."
import numpy as np, pytest, torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st, HealthCheck
from hetfl_explore.feddiverse.selector import (diversity_round, FedDiverseSelector, FedRKSelector, fedrk_weights,
                                               SELECTION_VARIANTS, oracle_triplets, perturb_triplets)
from hetfl_explore.feddiverse.selector import diversity_rounds
from hetfl_explore.feddiverse.registry import SELECTORS
from hetfl_explore.feddiverse.simulation import simulate_selection
from hetfl_explore.engine.protocol import make_view
from hetfl_explore.foundation.data import federation

VARIANTS = list(SELECTION_VARIANTS)
# triplets with many zeros, duplicates and exhausted dimensions
triplet_values = st.sampled_from([0.0, 0.0, 0.0, 0.25, 0.5, 0.53, 1.0])
triplets = st.integers(1, 30).flatmap(lambda K: st.lists(st.lists(triplet_values, min_size=3, max_size=3), min_size=K, max_size=K))

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(T=triplets, k=st.integers(1, 35), variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**31),
       rnd=st.integers(0, 5), ties=st.sampled_from(['random', 'first']))
def test_selection_is_distinct_and_never_crashes(T, k, variant, seed, rnd, ties):
    T = np.array(T)
    opts = dict(SELECTION_VARIANTS[variant], ties=ties, remainder='truncate')
    ids, trace = diversity_round(T, k, np.random.default_rng(seed), rnd, **opts)
    assert len(ids) == min(k, len(T)) and len(set(ids.tolist())) == len(ids)
    assert ids.min() >= 0 and ids.max() < len(T)

@settings(max_examples=60, deadline=None)
@given(T=triplets, k=st.integers(1, 35), seed=st.integers(0, 2**31))
def test_overselect_finishes_the_triplet(T, k, seed):
    ids, _ = diversity_round(np.array(T), k, np.random.default_rng(seed), remainder='overselect')
    assert len(ids) == min(-(-k // 3) * 3, len(T)) and len(set(ids.tolist())) == len(ids)

@pytest.mark.parametrize('variant', VARIANTS)
def test_selector_returns_kappa_distinct_and_is_seeded(variant):
    T = oracle_triplets(federation('waterbirds_dist').matrices)
    sel = FedDiverseSelector(T, variant); sel.reset(30, 0)
    a = sel.select(3, make_view(30, 3), 9, np.random.default_rng(11)).ids
    b = sel.select(3, make_view(30, 3), 9, np.random.default_rng(11)).ids
    assert len(set(a.tolist())) == 9 and (a == b).all()
    ex = sel.explain(); assert (ex['ids'] == a).all() and len(ex['steps']) == 3

def test_selector_respects_availability():
    T = oracle_triplets(federation('spawrious_gsc').matrices)
    sel = FedDiverseSelector(T); sel.reset(24, 0)
    av = np.array([0, 2, 4, 6, 8, 16, 17, 18])
    ids = sel.select(0, make_view(24, 0, available=av), 9, np.random.default_rng(0)).ids
    assert set(ids.tolist()) == set(av.tolist())

def test_default_variant_balances_types_on_spawrious_gsc():
    # tolerance: +-1.5 percentage points of 1/3 over 400 rounds of 9 (3,600 slots); with pure-type clients the
    # default rule picks exactly one client of each type per triplet, so the shares are 1/3 up to the rare
    # random fallback, and the measured deviation is 0.
    st_ = simulate_selection('spawrious_gsc', FedDiverseSelector(oracle_triplets(federation('spawrious_gsc').matrices)),
                             rounds=400, k=9, seed=1)
    for d in ('CI', 'AI', 'SC'): assert abs(st_.type_shares[d] - 1 / 3) <= 0.015, st_.type_shares

def test_uniform_shares_match_prevalence():
    from hetfl_explore.engine.protocol import UniformSelector
    st_ = simulate_selection('waterbirds_dist', UniformSelector(), rounds=400, k=9, seed=2)
    assert abs(st_.type_shares['CI'] - 0.10) < 0.02 and abs(st_.type_shares['SC'] - 0.833) < 0.03

@settings(max_examples=40, deadline=None)
@given(K=st.integers(1, 12), Y=st.sampled_from([2, 4]), seed=st.integers(0, 1000), zeros=st.booleans())
def test_fedrk_weights_on_simplex(K, Y, seed, zeros):
    N = np.random.default_rng(seed).integers(0, 50, (K, Y, 2))
    if zeros: N[0] = 0
    w = fedrk_weights(N)
    assert (w >= 0).all() and abs(w.sum() - 1) < 1e-9 and np.isfinite(w).all()
    S = np.tensordot(w, N.astype(float), 1)
    assert S.var() <= np.tensordot(np.full(K, 1 / K), N.astype(float), 1).var() + 1e-6   # no worse than uniform

@pytest.mark.parametrize('name', ['spawrious_gsc', 'waterbirds_dist', 'spawrious_gai', 'spawrious_4'])
def test_fedrk_selector(name):
    N = federation(name).matrices
    w = fedrk_weights(N, floor=1e-3); assert (w > 0).all() and abs(w.sum() - 1) < 1e-9
    sel = FedRKSelector(N); sel.reset(len(N), 0)
    ids = sel.select(0, make_view(len(N)), 9, np.random.default_rng(0)).ids
    assert len(set(ids.tolist())) == 9

def test_noisy_triplets_seeded_and_clipped():
    T = oracle_triplets(federation('spawrious_4').matrices)
    a, b = perturb_triplets(T, 0.3, seed=5), perturb_triplets(T, 0.3, seed=5)
    assert (a == b).all() and a.min() >= 0 and a.max() <= 1 and not (a == T).all()

def test_bad_input_errors():
    with pytest.raises(ValueError, match='triplets'): FedDiverseSelector(np.ones((4, 2)))
    with pytest.raises(ValueError, match='non-negative'): FedDiverseSelector(-np.ones((4, 3)))
    with pytest.raises(ValueError, match="variant"): FedDiverseSelector(np.ones((4, 3)), 'nope')
    with pytest.raises(ValueError, match='floor'): fedrk_weights(np.ones((3, 2, 2)), floor=2)

@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 20), C=st.integers(2, 5), seed=st.integers(0, 1000))
def test_gce_tends_to_ce(n, C, seed):
    from hetfl_explore.feddiverse.estimation import gce_loss
    g = torch.Generator().manual_seed(seed)
    logits, y = 3 * torch.randn(n, C, generator=g, dtype=torch.float64), torch.randint(0, C, (n,), generator=g)
    ce = F.cross_entropy(logits, y)
    assert abs(gce_loss(logits, y, 1e-6) - ce) < 1e-4 * max(1.0, ce.item())
    assert gce_loss(logits, y, 0.3) <= ce + 1e-12          # (1 - p^q)/q <= -log p for q > 0

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(T=triplets, k=st.integers(1, 14), variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**31),
       t0=st.integers(0, 5), ties=st.sampled_from(['random', 'first']))
def test_diversity_rounds_equals_diversity_round_round_by_round(T, k, variant, seed, t0, ties):
    "The vectorised path draws exactly what `diversity_round` draws, round by round, from the same stream."
    T, opts = np.array(T), dict(SELECTION_VARIANTS[variant], ties=ties)
    many = diversity_rounds(T, k, 6, np.random.default_rng(seed), t0, **opts)
    rng = np.random.default_rng(seed)
    one = np.stack([diversity_round(T, k, rng, t0 + i, **opts)[0] for i in range(6)])
    assert (many == one).all()

def test_simulate_selection_by_name_and_availability():
    N = federation('spawrious_gsc').matrices
    by_name = simulate_selection(N, 'feddiverse', 30, 9, seed=3)
    by_obj = simulate_selection(N, FedDiverseSelector(oracle_triplets(N)), 30, 9, seed=3)
    assert (by_name.selected == by_obj.selected).all()
    for name in SELECTORS:
        st_ = simulate_selection(N, name, 8, 6, seed=1, available=np.arange(0, 24, 2))
        assert st_.selected[:, 1::2].sum() == 0 and (st_.selected.sum(1) == 6).all(), name

def test_demo_report_has_its_sections(tmp_path):
    "`make demo`'s report, on a tiny run: styled, with the setting, the table, captioned figures and links onward."
    from hetfl_explore.feddiverse.experiments import demo, DEMO_CAPTIONS
    torch.set_num_threads(1)
    out = tmp_path / 'demo.html'
    runs = demo(rounds=1, seeds=(0,), out=str(out), log=None)
    html = out.read_text()
    assert set(runs.method) == {'FedDiverse', 'Uniform'}
    for part in ('<style>', 'sans-serif', '<h2>What was run</h2>', 'Németh et al., 2025', 'T = 1 rounds', 'Seeds: 0',
                 '<h2>Results</h2>', '<table', '<h2>Figures</h2>', '<h2>Where to go next</h2>', 'feddiverse/selector.html'):
        assert part in html, part
    assert html.count('<figcaption>') == 3 and all(c in html for c in DEMO_CAPTIONS)
    assert 'src="http' not in html and 'plotly.js v' in html     # plotly.js inlined, no network


# ------------------------------------------------------------------ labels, literal Alg. 5, bad input
from hetfl_explore.feddiverse.selector import selector_name, algorithm5_round, LiteralFedDiverseSelector, check_triplets, mixture_variance, DEFAULT_ALIAS
from hetfl_explore.feddiverse.simulation import proxy_losses, selection_stats, share_selectors
from hetfl_explore.feddiverse.registry import make_selector
from hetfl_explore.feddiverse.estimation import toy_client
from hetfl_explore.feddiverse.experiments import method_label

GSC = federation('spawrious_gsc')


def test_diversity_round_refuses_available_out_of_range():
    T = np.random.default_rng(0).random((6, 3))
    for bad in ([-1], [6], [1.5], [np.nan]):
        with pytest.raises((ValueError, TypeError), match='available'): diversity_round(T, 3, np.random.default_rng(0), available=bad)
        with pytest.raises((ValueError, TypeError), match='available'): diversity_rounds(T, 3, 2, np.random.default_rng(0), available=bad)


def test_fedrk_weights_refuses_nan():
    with pytest.raises(ValueError, match='matrices'): fedrk_weights(np.full((3, 2, 2), np.nan))


def test_fedrk_selector_refuses_negative_matrices():
    with pytest.raises(ValueError, match='matrices'): FedRKSelector(-np.ones((3, 2, 2)))


def test_simulate_selection_refuses_none_selector():
    with pytest.raises(TypeError, match='selector'): simulate_selection(GSC, None)


def test_diversity_rounds_refuses_nan_triplets():
    T = np.full((6, 3), np.nan)
    with pytest.raises(ValueError, match='triplets'): diversity_rounds(T, 3, 4, np.random.default_rng(0))


def test_triplet_roundoff_is_clipped_real_negatives_rejected():
    T = oracle_triplets(GSC.matrices); T[0, 1] = -2.2e-16
    sel = FedDiverseSelector(T)
    assert sel.triplets.min() == 0.0
    T[0, 1] = -1e-3
    with pytest.raises(ValueError, match='triplets'): FedDiverseSelector(T)
    assert (oracle_triplets(GSC) >= 0).all()


def test_every_variant_is_labelled():
    assert selector_name() == 'feddiverse[sign-invariant]' == FedDiverseSelector(oracle_triplets(GSC)).name
    fd_keys = [k for k in SELECTORS if k.startswith('feddiverse')]
    assert all(k.startswith('feddiverse[') for k in fd_keys if k != DEFAULT_ALIAS)
    assert {selector_name(v) for v in SELECTION_VARIANTS} | {'feddiverse[paper-as-printed]'} <= set(SELECTORS)
    assert set(share_selectors(GSC.matrices)) >= {'feddiverse[sign-invariant]', 'feddiverse[paper-as-printed]'}
    assert method_label('FedDiverse') == 'FedDiverse [sign-invariant]'


def test_algorithm5_as_printed_repicks_and_counts():
    toy = np.array([[0, 0, 1.], [1, 0, 0], [0, 1, 0], [0.5, 0.5, 0], [0.9, 0.1, 0], [0.1, 0.9, 0]])
    ids, tr = algorithm5_round(toy, 6, np.random.default_rng(0))
    assert tr['picks'] == [0, 2, 5, 1, 3, 0, 4] and tr['duplicates'] == 1 and sorted(ids.tolist()) == list(range(6))
    st_ = simulate_selection(GSC, LiteralFedDiverseSelector(oracle_triplets(GSC)), 100, 9)
    assert st_.duplicates.shape == (100,) and (st_.duplicates > 0).mean() > 0.4
    assert (st_.selected.sum(1) <= 9).all()


@settings(max_examples=40, deadline=None)
@given(T=triplets, k=st.integers(1, 35), seed=st.integers(0, 2**31), t=st.integers(0, 5))
def test_algorithm5_as_printed_never_crashes(T, k, seed, t):
    ids, tr = algorithm5_round(np.array(T), k, np.random.default_rng(seed), t)
    assert len(set(ids.tolist())) == len(ids) <= k and len(tr['picks']) == len(ids) + tr['duplicates']


def _forms(spec):
    "The same federation as a FederationSpec, a numpy array, a nested list and a torch tensor."
    N = np.asarray(spec)
    return [spec, N, N.tolist(), torch.as_tensor(N)]


def test_matrix_functions_accept_every_form():
    small = federation('waterbirds_dist')
    for f in (oracle_triplets, fedrk_weights, proxy_losses):
        outs = [f(x) for x in _forms(small)]
        for o in outs[1:]: np.testing.assert_allclose(o, outs[0])
    w = fedrk_weights(small)
    for x in _forms(small): assert mixture_variance(x, w) == pytest.approx(mixture_variance(small, w))
    for x in _forms(small):
        assert FedRKSelector(x).weights == pytest.approx(FedRKSelector(small).weights)
        assert simulate_selection(x, 'uniform', 5, 3).selected.tolist() == simulate_selection(small, 'uniform', 5, 3).selected.tolist()
        assert type(make_selector('feddiverse[sign-invariant]', x)) is FedDiverseSelector
    T = oracle_triplets(small)
    np.testing.assert_allclose(FedDiverseSelector(small).triplets, T)   # a spec where triplets are expected: its true triplets
    for x in (T, T.tolist(), torch.as_tensor(T)):
        np.testing.assert_allclose(FedDiverseSelector(x).triplets, T); np.testing.assert_allclose(LiteralFedDiverseSelector(x).triplets, T)
    ch = np.zeros((5, small.num_clients), int); ch[:, :3] = 1
    for x in _forms(small): assert selection_stats(x, ch).type_shares == selection_stats(small, ch).type_shares
    N0 = np.asarray(small)[0]
    for x in (N0, N0.tolist(), torch.as_tensor(N0)): assert torch.equal(toy_client(x)[1], toy_client(N0)[1])
    for bad in ('x', {'a': 1}, object()):
        with pytest.raises((ValueError, TypeError), match='matrices'): fedrk_weights(bad)
        with pytest.raises((ValueError, TypeError), match='triplets'): FedDiverseSelector(bad)

def _exact_min_norm_balanced(N):
    "Exact (rational) minimum-norm weights on the simplex whose mixture is the uniform matrix, all of them positive."
    import sympy
    K = len(N); w = sympy.symbols(f'w0:{K}'); flat = N.reshape(K, -1)
    S = [sum(int(flat[k, c]) * w[k] for k in range(K)) for c in range(flat.shape[1])]
    cons = [S[c] - S[0] for c in range(1, len(S))] + [sum(w) - 1]
    lam = sympy.symbols(f'l0:{len(cons)}')
    lagr = sum(x * x for x in w) - sum(l * g for l, g in zip(lam, cons))
    sol = sympy.solve([sympy.diff(lagr, x) for x in w] + cons, list(w) + list(lam), dict=True)[0]
    return np.array([float(sol[x]) for x in w]), [sol[x] for x in w]

def test_fedrk_minimum_norm_optimum_is_exact_and_label_free():
    "Spawrious_GSC: every balanced weighting is optimal; FedRK returns the minimum-norm one, whatever the client order."
    N = federation('spawrious_gsc').matrices
    exact, rational = _exact_min_norm_balanced(N)
    assert all(r > 0 for r in rational) and rational[-1] == sympy_rational(15, 94)
    w = fedrk_weights(N)
    np.testing.assert_allclose(w, exact, atol=1e-9)
    for seed in range(20):                                   # relabelling relabels the weights, nothing else
        p = np.random.default_rng(seed).permutation(len(N))
        np.testing.assert_allclose(fedrk_weights(N[p]), w[p], atol=1e-12)
    same = np.flatnonzero((N.reshape(len(N), -1) == N[8].ravel()).all(1))   # 15 identical majority-SC clients
    assert len(same) == 15 and np.ptp(w[same]) == 0

def test_fedrk_identical_clients_get_identical_weights():
    "Duplicating clients in any order: identical matrices always share one weight, and the mixture stays optimal."
    N = federation('spawrious_gsc').matrices
    rng = np.random.default_rng(3)
    for _ in range(10):
        M = np.concatenate([N, N[rng.integers(0, len(N), 5)]])[rng.permutation(len(N) + 5)]
        w = fedrk_weights(M)
        key = [tuple(m.ravel()) for m in M]
        for k in set(key):
            ids = [i for i, x in enumerate(key) if x == k]
            assert np.ptp(w[ids]) == 0
        assert np.tensordot(w, M.astype(float), 1).var() < 1e-12

def sympy_rational(a, b):
    import sympy
    return sympy.Rational(a, b)
