"""The fast paths of the selection simulation pick exactly what the reference paths pick (same draws, same order).

The FedDiverse teaching results and the tutorial numbers depend on the exact random streams, so every fast path is
compared, pick by pick, with the reference on several seeds, κ values, variants and option overrides.
"""
import numpy as np, pytest
import hetfl_explore.feddiverse.selector as fs
from hetfl_explore.foundation.data import federation
from hetfl_explore.feddiverse.selector import (SELECTION_VARIANTS, COMPILED_MIN_WORK, diversity_rounds, diversity_round,
                                               oracle_triplets, simulate_selection, FedDiverseSelector, LiteralFedDiverseSelector,
                                               _pairwise, _algorithm5_rounds)
from hetfl_explore.foundation.core import rng_streams
from hetfl_explore.engine.protocol import make_view

GCI = oracle_triplets(federation('spawrious_gci_100').matrices)
TILED = np.concatenate([oracle_triplets(federation('spawrious_gsc').matrices)] * 5)   # 120 clients, exact ties
RANDOM = np.random.default_rng(11).random((90, 3)) * np.random.default_rng(12).integers(0, 2, (90, 3))   # zeros in places
OVERRIDES = [dict(), dict(ties='first'), dict(rotate='none'), dict(rotate='per_round'), dict(lead='CI'), dict(lead='random', norm='l1'),
             dict(cumulative=True), dict(norm='cosine', cumulative=False), dict(signed=True, remainder='overselect')]

def both(T, k, rounds, seed, t0=0, available=None, **opts):
    "The compiled and the vectorised picks from the same seed."
    run = lambda c: diversity_rounds(T, k, rounds, np.random.default_rng(seed), t0, available, compiled=c, **opts)
    return run(True), run(False)

@pytest.mark.parametrize('variant', list(SELECTION_VARIANTS))
@pytest.mark.parametrize('T', [GCI, TILED, RANDOM], ids=['gci100', 'tiled', 'random'])
@pytest.mark.parametrize('k', [1, 2, 7, 9, 31])
def test_compiled_rounds_equal_vectorised_rounds(variant, T, k):
    "Every named variant, three federations (one full of exact ties), κ not a multiple of 3, three seeds."
    for seed in (0, 1, 2):
        fast, ref = both(T, k, 25, seed, t0=seed, **SELECTION_VARIANTS[variant])
        np.testing.assert_array_equal(fast, ref)

@pytest.mark.parametrize('opts', OVERRIDES, ids=[str(o) for o in OVERRIDES])
def test_compiled_rounds_equal_vectorised_rounds_under_overrides(opts):
    "Each option moved away from the variant's value (ties, rotation, lead, norm, cumulative, sign, remainder)."
    for variant in SELECTION_VARIANTS:
        for seed, k in ((3, 9), (4, 20)):
            fast, ref = both(TILED, k, 20, seed, t0=1, **{**SELECTION_VARIANTS[variant], **opts})
            np.testing.assert_array_equal(fast, ref)

def test_compiled_rounds_with_available_subsets_and_degenerate_triplets():
    "Availability subsets, fewer available clients than κ, all-zero triplets (uniform fallback) and one non-zero client."
    one = np.zeros((15, 3)); one[4] = (0.1, 0.2, 0.3)
    for T, available, k in ((TILED, np.arange(0, 120, 3), 9), (TILED, [5, 17, 40], 9), (np.zeros((12, 3)), None, 9),
                            (one, None, 6), (RANDOM, np.arange(30), 30)):
        for variant in SELECTION_VARIANTS:
            fast, ref = both(T, k, 15, 5, available=available, **SELECTION_VARIANTS[variant])
            np.testing.assert_array_equal(fast, ref)

def test_compiled_rounds_equal_diversity_round_round_by_round():
    "The compiled path also equals the traced single rounds `FedDiverseSelector.select` makes (same stream)."
    for variant, opts in SELECTION_VARIANTS.items():
        rng = np.random.default_rng(8)
        one = np.stack([diversity_round(GCI, 9, rng, 4 + i, **opts)[0] for i in range(12)])
        np.testing.assert_array_equal(diversity_rounds(GCI, 9, 12, np.random.default_rng(8), 4, compiled=True, **opts), one)

def test_pairwise_sum_is_numpys_sum_to_the_last_bit():
    "`_pairwise` replays numpy's pairwise summation (blocks, eight partial sums, halving) exactly."
    rng, pairwise = np.random.default_rng(0), _pairwise
    for n in [*range(1, 300), 511, 512, 513, 1000, 1001, 4099, 10007]:
        x = rng.random(n) * rng.integers(0, 2, n) * 10.0 ** rng.uniform(-3, 3, n)
        assert pairwise(x) == x.sum(), n

def test_simulate_selection_takes_the_compiled_path_above_the_threshold_with_the_same_stats():
    "Large enough, `simulate_selection` runs the compiled kernel; its participation equals the vectorised path's."
    K = len(GCI); rounds = COMPILED_MIN_WORK // (K * 9) + 1
    st = simulate_selection(federation('spawrious_gci_100'), 'feddiverse', rounds, 9, seed=3)
    sel = FedDiverseSelector(GCI)
    ref = diversity_rounds(GCI, 9, rounds, rng_streams(3, 3, 'simulate_selection')[0], compiled=False, **sel.options)
    chosen = np.zeros((rounds, K), np.int64); chosen[np.arange(rounds)[:, None], ref] = 1
    np.testing.assert_array_equal(st.selected, chosen)

def test_compiled_flag_is_validated():
    "`compiled` must be a bool or None."
    with pytest.raises(TypeError, match='compiled'): diversity_rounds(GCI, 3, 2, np.random.default_rng(0), compiled='yes')

@pytest.mark.parametrize('T', [GCI, TILED, RANDOM, np.zeros((12, 3))], ids=['gci100', 'tiled', 'random', 'zeros'])
@pytest.mark.parametrize('k', [1, 5, 9, 30])
@pytest.mark.parametrize('table', [True, False])
def test_compiled_literal_rounds_equal_the_selector_round_by_round(T, k, table, monkeypatch):
    "`_algorithm5_rounds` returns the clients (in order) and re-pick counts of `LiteralFedDiverseSelector.select`, per round."
    K = len(T)
    if not table: monkeypatch.setattr(fs, 'LITERAL_TABLE_MAX', 0)   # step 2's dot products asked from numpy every time
    for seed, t0, available in ((0, 0, None), (1, 2, np.arange(0, K, 2)), (2, 1, np.arange(min(K, 7)))):
        lit = LiteralFedDiverseSelector(T); lit.reset(K, 0); rng = np.random.default_rng(seed)
        one = [lit.select(t0 + t, make_view(K, t0 + t, available), k, rng).ids for t in range(30)]
        many, dups = _algorithm5_rounds(T, k, 30, np.random.default_rng(seed), t0, available)
        np.testing.assert_array_equal(many, np.stack(one)); np.testing.assert_array_equal(dups, lit.duplicates)

def test_simulate_selection_literal_compiled_path_equals_round_by_round():
    "Above the threshold `simulate_selection` runs the literal rounds compiled: same participation, same re-picks."
    K = len(GCI); rounds = COMPILED_MIN_WORK // (K * 9) + 1
    st = simulate_selection(federation('spawrious_gci_100'), 'feddiverse[paper-as-printed]', rounds, 9, seed=5)
    lit = LiteralFedDiverseSelector(GCI); lit.reset(K, 5); rng = rng_streams(5, 3, 'simulate_selection')[0]
    chosen = np.zeros((rounds, K), np.int64)
    for t in range(rounds): chosen[t, lit.select(t, make_view(K, t), 9, rng).ids] = 1
    np.testing.assert_array_equal(st.selected, chosen); np.testing.assert_array_equal(st.duplicates, lit.duplicates)

def reference_run(N, name, rounds, k, seed, loss_noise=0.05):
    "The per-round loop `simulate_selection` ran before its speed-up: a fresh `make_view` every round (the oracle)."
    from dataclasses import replace
    from hetfl_explore.engine.protocol import synthetic_reports, Selector
    from hetfl_explore.feddiverse.selector import make_selector, proxy_losses
    sel = make_selector(name, N, 0.0, seed); K = len(N); sel.reset(K, seed)
    rng, lrng, rrng = rng_streams(seed, 3, 'simulate_selection')
    sizes, base = N.reshape(K, -1).sum(1), proxy_losses(N)
    loss = lambda ids: base[ids] + lrng.normal(0, loss_noise, len(ids))
    chosen = np.zeros((rounds, K), np.int64)
    for t in range(rounds):
        ids = sel.select(t, make_view(K, t, None, n_samples=sizes, loss_fn=loss), k, rng).ids
        chosen[t, ids] = 1
        if type(sel).observe is not Selector.observe:
            rep = synthetic_reports(t, ids, sizes, rrng); l = loss(ids)
            sel.observe(t, replace(rep, loss=l, loss_before=l + np.abs(rrng.normal(0, loss_noise, len(ids)))))
    return chosen

@pytest.mark.parametrize('name', ['uniform', 'round_robin', 'EqW', 'pow-d', 'AFL_G', 'Oort', 'q-FFL', 'FedPNS', 'FL-CIR', 'fedrk'])
def test_explorer_selectors_pick_what_the_fresh_view_loop_picks(name):
    "Reusing one validated `ClientView` (a copy per round) changes no pick of any explorer selector."
    N = federation('spawrious_gci_100').matrices
    for seed, k in ((0, 9), (1, 20)):
        np.testing.assert_array_equal(simulate_selection(N, name, 25, k, seed).selected, reference_run(np.asarray(N, float), name, 25, k, seed))

def test_active_fl_mask_equals_the_set_difference_it_replaced():
    "AFL_G's exploration pool (a mask now, `np.setdiff1d` before) gives the same clients on sorted and unsorted availability."
    from hetfl_explore.selection.efficiency import ActiveFL, round_half_up
    from hetfl_explore.selection.baselines import budget, sample_by
    from hetfl_explore.engine.protocol import synthetic_reports
    def old_select(sel, clients, k, rng):
        ids, m = clients.available, budget(k, clients)
        p = sel.probabilities(ids)
        n_exploit = min(m - int(round_half_up(sel.alpha3 * m)), int((p > 0).sum()))
        exploit = sample_by(ids, p, n_exploit, rng) if n_exploit > 0 else np.array([], np.int64)
        return np.concatenate([exploit, rng.choice(np.setdiff1d(ids, exploit), size=m - len(exploit), replace=False)])
    for available in (None, np.arange(3, 60, 2), np.random.default_rng(0).permutation(60)[:40]):
        new, old = ActiveFL(), ActiveFL(); new.reset(60, 0); old.reset(60, 0)
        r1, r2, rr = np.random.default_rng(1), np.random.default_rng(1), np.random.default_rng(2)
        for t in range(15):
            view = make_view(60, t, available)
            a, b = new.select(t, view, 9, r1).ids, old_select(old, view, 9, r2)
            np.testing.assert_array_equal(a, b)
            rep = synthetic_reports(t, a, np.full(60, 100), rr); new.observe(t, rep); old.observe(t, rep)

def test_fedrk_weights_are_solved_once_per_federation_and_equal_a_fresh_solve():
    "A second FedRK selector on the same matrices reuses the solved weights: equal to a fresh `fedrk_weights`, never shared."
    from hetfl_explore.feddiverse.selector import FedRKSelector, fedrk_weights
    N = np.asarray(federation('spawrious_gsc').matrices, float)
    a, b = FedRKSelector(N), FedRKSelector(N)
    np.testing.assert_array_equal(a.weights, fedrk_weights(N, 1e-3)); np.testing.assert_array_equal(b.weights, a.weights)
    a.weights[:] = 0                                             # a selector's copy is its own
    np.testing.assert_array_equal(FedRKSelector(N).weights, fedrk_weights(N, 1e-3))
    np.testing.assert_array_equal(FedRKSelector(N, floor=0.05).weights, fedrk_weights(N, 0.05))   # the floor is part of the key
    M = N.copy(); M[0, 0, 0] += 1
    np.testing.assert_array_equal(FedRKSelector(M).weights, fedrk_weights(M, 1e-3))             # other matrices, other weights
