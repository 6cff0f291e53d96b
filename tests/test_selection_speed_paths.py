"""The fast paths of the selection simulation pick exactly what the reference paths pick (same draws, same order).

The FedDiverse teaching results and the tutorial numbers depend on the exact random streams, so every fast path is
compared, pick by pick, with the reference on several seeds, κ values, variants and option overrides.
"""
import numpy as np, pytest
import hetfl_explore.feddiverse.selector as fs, hetfl_explore.feddiverse.simulation as fsim
from hetfl_explore.foundation.data import federation
from hetfl_explore.feddiverse.selector import (SELECTION_VARIANTS, reference_round, diversity_round, oracle_triplets,
                                               FedDiverseSelector, LiteralFedDiverseSelector)
from hetfl_explore.feddiverse.selector import COMPILED_MIN_WORK, diversity_rounds, _pairwise, _algorithm5_rounds
from hetfl_explore.feddiverse.simulation import simulate_selection
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

@pytest.mark.parametrize('T', [GCI, TILED, RANDOM, np.zeros((12, 3))], ids=['gci100', 'tiled', 'random', 'zeros'])
def test_reference_round_is_the_default_rule_pick_for_pick(T):
    "The chapter's plain reference round, `diversity_round`, and the vectorised and compiled rounds pick the same clients."
    for k in (1, 2, 7, 9, 31):
        rng, one = np.random.default_rng(k), np.random.default_rng(k)
        ref = np.stack([reference_round(T, k, rng) for _ in range(10)])
        np.testing.assert_array_equal(np.stack([diversity_round(T, k, one)[0] for _ in range(10)]), ref)
        for compiled in (False, True):
            np.testing.assert_array_equal(diversity_rounds(T, k, 10, np.random.default_rng(k), compiled=compiled), ref)

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
def test_compiled_literal_rounds_equal_the_selector_round_by_round(T, k):
    "`_algorithm5_rounds` returns the clients (in order) and re-pick counts of `LiteralFedDiverseSelector.select`, per round."
    K = len(T)
    for seed, t0, available in ((0, 0, None), (1, 2, np.arange(0, K, 2)), (2, 1, np.arange(min(K, 7)))):
        lit = LiteralFedDiverseSelector(T); lit.reset(K, 0); rng = np.random.default_rng(seed)
        one = [lit.select(t0 + t, make_view(K, t0 + t, available), k, rng).ids for t in range(30)]
        many, dups = _algorithm5_rounds(T, k, 30, np.random.default_rng(seed), t0, available)
        np.testing.assert_array_equal(many, np.stack(one)); np.testing.assert_array_equal(dups, lit.duplicates)

def test_compiled_dot_products_are_numpys_to_the_last_bit():
    "`_dots1` is `(L * x).sum(1)` bit for bit (the literal rounds' steps 2 and 3), on rows of every scale and sign."
    r = np.random.default_rng(0)
    L = r.normal(size=(5000, 3)) * 10.0 ** r.integers(-8, 8, size=(5000, 1)); x = r.normal(size=3)
    np.testing.assert_array_equal(fs._dots1(L, x[0], x[1], x[2], np.empty(len(L))), (L * x).sum(1))

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
    from hetfl_explore.feddiverse.registry import make_selector
    from hetfl_explore.feddiverse.simulation import proxy_losses
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

def test_active_fl_mask_equals_the_set_difference():
    "AFL_G's exploration pool (a mask) gives the same clients as `np.setdiff1d` on sorted and unsorted availability."
    from hetfl_explore.selection.efficiency import ActiveFL, round_half_up
    from hetfl_explore.selection.baselines import budget, sample_by
    from hetfl_explore.engine.protocol import synthetic_reports
    def plain_select(sel, clients, k, rng):
        ids, m = clients.available, budget(k, clients)
        p = sel.probabilities(ids)
        n_exploit = min(m - int(round_half_up(sel.alpha3 * m)), int((p > 0).sum()))
        exploit = sample_by(ids, p, n_exploit, rng) if n_exploit > 0 else np.array([], np.int64)
        return np.concatenate([exploit, rng.choice(np.setdiff1d(ids, exploit), size=m - len(exploit), replace=False)])
    for available in (None, np.arange(3, 60, 2), np.random.default_rng(0).permutation(60)[:40]):
        new, ref = ActiveFL(), ActiveFL(); new.reset(60, 0); ref.reset(60, 0)
        r1, r2, rr = np.random.default_rng(1), np.random.default_rng(1), np.random.default_rng(2)
        for t in range(15):
            view = make_view(60, t, available)
            a, b = new.select(t, view, 9, r1).ids, plain_select(ref, view, 9, r2)
            np.testing.assert_array_equal(a, b)
            rep = synthetic_reports(t, a, np.full(60, 100), rr); new.observe(t, rep); ref.observe(t, rep)

def test_fedrk_weights_held_by_the_caller_are_reused_and_copied():
    "A FedRK selector built with the weights of an earlier one keeps its own copy, equal to a fresh `fedrk_weights`."
    from hetfl_explore.feddiverse.selector import FedRKSelector, fedrk_weights
    N = np.asarray(federation('spawrious_gsc').matrices, float)
    a = FedRKSelector(N); b = FedRKSelector(N, weights=a.weights)
    np.testing.assert_array_equal(a.weights, fedrk_weights(N, 1e-3)); np.testing.assert_array_equal(b.weights, a.weights)
    a.weights[:] = 0                                             # a selector's copy is its own
    np.testing.assert_array_equal(b.weights, fedrk_weights(N, 1e-3))
    np.testing.assert_array_equal(FedRKSelector(N, floor=0.05).weights, fedrk_weights(N, 0.05))
    with pytest.raises(ValueError, match='weights'): FedRKSelector(N, weights=np.full(len(N) + 1, 0.1))
    with pytest.raises(ValueError, match='weights'): FedRKSelector(N, weights=-np.ones(len(N)))

# ---- the explorer selectors at scale: numpy's choice replayed compiled, partial sorts, lighter reports ------------------
import torch
import hetfl_explore.selection.baselines as sb, hetfl_explore.selection.efficiency as se, hetfl_explore.selection.constraints as sc
import hetfl_explore.engine.protocol as pr
from hetfl_explore.foundation.core import check_array
from hetfl_explore.engine.protocol import Selection, Reports, FAKE_LOSS, FAKE_LOSS_DROP, FAKE_UPDATE_SD, FAKE_BATCH, FAKE_TIME, FAKE_ENERGY
from hetfl_explore.foundation.core import check_int

def choice_cases(n_cases, seed=123):
    "Random weights (plain, with zeros, with ties, peaked, one dominant), a population, a size from 0 to the positive count, a seed."
    g = np.random.default_rng(seed)
    for i in range(n_cases):
        n = int(g.integers(1, 1500)); p = g.random(n)
        kind = i % 5
        if kind == 1: p[g.random(n) < 0.7] = 0
        if kind == 2: p = np.round(3 * p)                                  # ties and zeros
        if kind == 3: p = np.exp(g.normal(0, 8, n))                       # a few clients carry almost all the weight
        if kind == 4: p = np.full(n, 1e-3); p[int(g.integers(n))] = 1e3   # one dominant client, the rest tied
        if not (p > 0).any(): p[0] = 1
        yield g.permutation(2 * n)[:n], p / p.sum(), int(g.integers(0, np.count_nonzero(p) + 1)), int(g.integers(2**31))

def test_compiled_choice_is_generator_choice_draw_for_draw():
    "`_choice_kernel` returns `Generator.choice(replace=False, p=p)`'s indices and leaves the stream where numpy leaves it (400 cases)."
    for ids, p, m, s in choice_cases(400):
        r1, r2 = np.random.default_rng(s), np.random.default_rng(s)
        np.testing.assert_array_equal(ids.take(sb._choice_kernel(p, m, r1)), r2.choice(ids, m, replace=False, p=p))
        assert r1.random() == r2.random()

@pytest.mark.parametrize('bitgen', [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_compiled_choice_with_every_bit_generator(bitgen):
    "The same draws whatever bit generator the stream uses (`choice_without_replacement` above its threshold)."
    for ids, p, m, s in choice_cases(40, seed=5):
        r1, r2 = np.random.Generator(bitgen(s)), np.random.Generator(bitgen(s))
        np.testing.assert_array_equal(sb.choice_without_replacement(ids, p, m, r1), r2.choice(ids, m, replace=False, p=p))
        assert r1.random() == r2.random()

@pytest.mark.parametrize('p,m', [([0.5, np.nan, 0.5], 1), ([0.5, -0.1, 0.6], 1), ([0.2, 0.2, 0.2], 1), ([1.0, 0, 0], 2),
                                 ([0.5, 0.5], 3), ([0.5, 0.5, 0.0], 1)])
def test_choice_without_replacement_names_the_bad_argument(p, m, monkeypatch):
    "Weights numpy refuses (NaN, negative, not summing to 1, too few positive) get an error naming `p` or `size`; valid ones numpy's draw."
    monkeypatch.setattr(sb, 'CHOICE_COMPILED_MIN', 0)
    ids, p = np.arange(3), np.array(p)
    try: want = np.random.default_rng(0).choice(ids, m, replace=False, p=p)
    except ValueError as e: want = e
    if isinstance(want, ValueError):
        with pytest.raises(ValueError, match=r'^(p|size|a, p)\b'): sb.choice_without_replacement(ids, p, m, np.random.default_rng(0))
    else: np.testing.assert_array_equal(sb.choice_without_replacement(ids, p, m, np.random.default_rng(0)), want)

def plain_sample_by(ids, p, m, rng):
    "`sample_by` written plainly: np.nan_to_num, np.clip and numpy's `Generator.choice` (the oracle)."
    ids, p = np.asarray(ids), np.clip(np.nan_to_num(check_array('p', p, 1, allow_nan=True, allow_inf=True)), 0, None)
    m = min(check_int('m', m, lo=0), len(ids))
    pos = p > 0
    if pos.sum() >= m: return rng.choice(ids, size=m, replace=False, p=p / p.sum())
    rest = rng.choice(ids[~pos], size=m - int(pos.sum()), replace=False)
    return np.concatenate([ids[pos], rest])

def test_sample_by_equals_the_plain_sample_by():
    "NaN, ±inf, negative and zero weights, more draws than positive weights, small and large populations: the same ids, the same stream."
    g, refused = np.random.default_rng(9), 0
    for case in range(300):
        n = int(g.integers(1, 700)); p = g.normal(1, 1, n) * (g.random(n) < 0.8)
        p[g.random(n) < 0.02] = np.nan; p[g.random(n) < 0.01] = -np.inf
        if case % 7 == 0: p[int(g.integers(n))] = np.inf
        m, s = int(g.integers(0, n + 1)), int(g.integers(2**31))
        if m == 0: m = 1
        r1, r2 = np.random.default_rng(s), np.random.default_rng(s)
        try: want = plain_sample_by(np.arange(n) * 3, p, m, r2)
        except ValueError as e:                                         # an infinite weight: numpy refuses the overflowing sum
            with pytest.raises(ValueError, match=str(e)[:30]): sb.sample_by(np.arange(n) * 3, p, m, r1)
            refused += 1; continue
        np.testing.assert_array_equal(sb.sample_by(np.arange(n) * 3, p, m, r1), want)
        assert r1.random() == r2.random()
    assert refused < 60                                                 # most cases draw

def test_linear_quantile_is_numpys_quantile_to_the_last_bit():
    "`_linear_quantile` (a partial sort) equals np.quantile's default 'linear' method on sizes 1-2000, ties, spreads and q at the ends."
    g = np.random.default_rng(4)
    for n in [1, 2, 3, 4, 5, 10, 19, 20, 21, 99, 100, 101, 1000, 2000]:
        for x in (g.random(n), np.round(3 * g.random(n)), g.lognormal(0, 4, n), -g.random(n) * 1e-300, np.full(n, 0.7)):
            for q in (0.0, 1e-9, 0.25, 0.5, 0.95, 0.999999, 1.0, *g.random(5)):
                got, want = sc._linear_quantile(x.copy(), float(q)), np.quantile(x, float(q))
                assert got == want, (n, q, got, want)

def test_lowest_is_the_stable_argsort_prefix():
    "`_lowest(x, n)` is the set of the first n of a stable argsort: with ties at the cut, all tied, n from 0 to len(x)."
    g = np.random.default_rng(2)
    for n in [0, 1, 2, 3, 8, 64, 999]:
        for x in (g.random(n), np.round(5 * g.random(n)), np.zeros(n), -np.arange(n, dtype=float)):
            for m in sorted({0, 1, n // 4, n // 2, int(0.75 * n), n - 1, n}):
                if not 0 <= m <= n: continue
                got = se._lowest(x, m)
                assert len(got) == m and set(got.tolist()) == set(np.argsort(x, kind='stable')[:m].tolist()), (n, m)

def plain_synthetic_reports(t, ids, n_samples, rng, n_params=pr.FAKE_PARAMS):
    "`synthetic_reports` written plainly (Tensor.float() and Tensor.norm): the oracle."
    m = len(ids); loss = rng.uniform(*FAKE_LOSS, m)
    upd = torch.from_numpy(rng.normal(0, FAKE_UPDATE_SD, (m, n_params))).float()
    return Reports(round=t, ids=np.asarray(ids, np.int64), n_samples=np.asarray(n_samples)[ids], loss=loss,
                   loss_before=loss + rng.uniform(*FAKE_LOSS_DROP, m), steps=np.ceil(np.asarray(n_samples)[ids] / FAKE_BATCH).astype(np.int64),
                   update_norm=upd.norm(dim=1).numpy().astype(np.float64), time=rng.uniform(*FAKE_TIME, m),
                   energy=rng.uniform(*FAKE_ENERGY, m), updates=upd, global_params=torch.zeros(n_params))

def test_synthetic_reports_equal_the_plain_reports_field_by_field():
    "Every field (dtype and bits), and the stream left behind, on several seeds, report sizes and parameter lengths."
    sizes = np.random.default_rng(0).integers(1, 500, 300)
    for seed, m, P in [(0, 0, 8), (1, 1, 8), (2, 9, 8), (3, 100, 8), (4, 37, 1), (5, 12, 33), (6, 300, 8)]:
        ids = np.random.default_rng(seed).permutation(300)[:m]
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        a, b = pr.synthetic_reports(seed, ids, sizes, r1, P), plain_synthetic_reports(seed, ids, sizes, r2, P)
        for f in ('ids', 'n_samples', 'loss', 'loss_before', 'steps', 'update_norm', 'time', 'energy'):
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and np.array_equal(x, y), f
        for f in ('updates', 'global_params'):
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and torch.equal(x, y), f
        assert r1.random() == r2.random()

def plain_exploit(self, cand, u, m, rng):
    "Oort.exploit written plainly (a full sort for the k-th utility)."
    kth = np.sort(u)[::-1][min(m, len(u)) - 1]
    pool = u >= self.cutoff * kth
    return sc.sample_by(cand[pool], u[pool], m, rng) if pool.sum() >= m else sc.top_by(cand, u, m, rng)

def plain_oort_select(self, t, clients, k, rng):
    "Oort.select written plainly (np.isin for the collected utility)."
    ids, m = clients.available, sc.budget(k, clients)
    util = self.utilities(clients, ids, t); seen = np.isfinite(util)
    explored = self.explore_fresh(clients, ids[~seen], m, int(seen.sum()), rng)
    exploited = np.array([], np.int64)
    if m - len(explored):
        exploited = self.exploit(ids[seen], util[seen], m - len(explored), rng)
        self.collected.append(float(util[np.isin(ids, exploited)].sum())); self._pace()
    self.explore = max(self.explore_min, self.explore * self.decay)
    return Selection(np.concatenate([exploited, explored]))

@pytest.fixture
def plain_paths(monkeypatch):
    "Switch the simulation to the plain reference paths: numpy's choice, np.quantile, argsort, np.sort, np.isin, torch casts."
    def use():
        for mod in (sb, se, sc): monkeypatch.setattr(mod, 'sample_by', plain_sample_by)
        monkeypatch.setattr(fs, 'choice_without_replacement', lambda a, p, size, rng: rng.choice(a, size=size, replace=False, p=p))
        monkeypatch.setattr(sc, '_linear_quantile', lambda x, q: np.quantile(x, q))
        monkeypatch.setattr(se, '_lowest', lambda x, n: np.argsort(x, kind='stable')[:max(n, 0)])
        monkeypatch.setattr(sc.Oort, 'exploit', plain_exploit); monkeypatch.setattr(sc.Oort, 'select', plain_oort_select)
        for mod in (pr, fsim): monkeypatch.setattr(mod, 'synthetic_reports', plain_synthetic_reports)
    return use

TILED_1000 = np.concatenate([np.asarray(federation('spawrious_gci_100').matrices, float)] * 10)   # the benchmark's federation

@pytest.mark.parametrize('name', ['AFL_G', 'Oort', 'fedrk', 'EqW', 'pow-d', 'FedPNS'])
def test_explorer_selectors_at_scale_pick_what_the_plain_paths_pick(name, plain_paths):
    "1,000 clients, κ in {1, 2, 9, 100}, two seeds, all or every third client available: the same picks round by round, the same state."
    from hetfl_explore.feddiverse.registry import make_selector
    runs = [(k, seed, av) for k in (1, 2, 9, 100) for seed in (0, 1) for av in (None, np.arange(1, 1000, 3))]
    def run_all():
        out = []
        for k, seed, av in runs:
            sel = make_selector(name, TILED_1000, 0.0, seed)
            out.append((simulate_selection(TILED_1000, sel, 30, k, seed, available=av).selected, sel))
        return out
    fast = run_all(); plain_paths(); ref = run_all()
    for (a, s1), (b, s2), run in zip(fast, ref, runs):
        np.testing.assert_array_equal(a, b, err_msg=str(run))
        if name == 'Oort': assert s1.collected == s2.collected and s1.preferred == s2.preferred and s1.explore == s2.explore
        if name == 'AFL_G': np.testing.assert_array_equal(s1.value, s2.value)
