"""Clustering-based FL (Al-Saedi & Boeva): hand-computed cases, library oracles and bad input."""
import json
import numpy as np
import pandas as pd
import pytest
import torch
import scipy.sparse as sp
from scipy.stats import wasserstein_distance, kendalltau
from sklearn.metrics import silhouette_samples as sk_silhouette, adjusted_rand_score
from hetfl_explore.clustering.profiles import (laplace_smooth, class_distance_matrix, ordinal_w1, total_variation, naive_scipy_w1,
    semantic_w1, distance_to_similarity, sparsify, ema_update, PROB_ATOL)
from hetfl_explore.foundation.core import check_distribution
from itertools import combinations
from hetfl_explore.clustering.mcl import mcl, silhouette_samples, clustering_report, kmedoids, kmedoids_cost
from hetfl_explore.clustering.eccentricity import cluster_stats, eccentricity, chebyshev_threshold, accepts, eccentricity_reassign
from hetfl_explore.clustering.data import from_client_arrays, har_like_stream, leaf_synthetic, digits_writers, load_leaf_json, load_hhar, load_realworld
from hetfl_explore.clustering.gpfl import GPFL, CFL, FedAvg, weighted_average, cfl_bipartition, local_sgd, lr_init
from hetfl_explore.clustering.gpfl import cfl_step, CFLGroups
from hetfl_explore.engine.groups import GroupRound
from hetfl_explore.clustering.cafl import CAFL, FedCO, CMFL, FedProx, silhouette_relocate, split_optimize, cmfl_relevance
from hetfl_explore.clustering.contribution import (PAPER_CAFL, PAPER_GPFL, PAPER_FLCOHORT_CLUSTERS, PAPER_FLCOHORT_CLIENT,
    kendall_tau_b, imbalance_descriptors, fl_cohort, deletion_influence, minmax_scores, bin_scores, rank_correlation_matrix, training_scores,
    fedavg_on_clients, top_fraction_curves, group_curves, drop_unstable_curves)

P_PERM, Q_PERM = np.array([.7, .1, .1, .1]), np.array([.1, .1, .1, .7])
EDGES7 = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5), (4, 6), (5, 6), (3, 6)]

def graph7():
    A = np.zeros((7, 7))
    for i, j in EDGES7: A[i, j] = A[j, i] = 1
    return A

def test_laplace_hand_case(): np.testing.assert_allclose(laplace_smooth([5, 0, 3, 0]), [0.5, 1/12, 1/3, 1/12])

def test_wasserstein_pitfall_and_oracle():
    assert naive_scipy_w1(P_PERM, Q_PERM) == pytest.approx(0.0)
    assert ordinal_w1(P_PERM, Q_PERM) == pytest.approx(1.8) and total_variation(P_PERM, Q_PERM) == pytest.approx(0.6)
    P = np.random.default_rng(0).dirichlet(np.ones(6), 8); D = class_distance_matrix(P, 'w1_ordinal')
    for i in range(8):
        for j in range(8): assert D[i, j] == pytest.approx(wasserstein_distance(np.arange(6), np.arange(6), P[i], P[j]))

def test_semantic_cost_reduces_to_tv_and_ordinal():
    K = 4; assert semantic_w1(P_PERM, Q_PERM, 1 - np.eye(K)) == pytest.approx(0.6)
    assert semantic_w1(P_PERM, Q_PERM, np.abs(np.subtract.outer(np.arange(K), np.arange(K)))) == pytest.approx(1.8)

def test_mcl_matches_markov_clustering_package():
    mc = pytest.importorskip('markov_clustering')
    def oracle_labels(A, r):
        clusters = mc.get_clusters(mc.run_mcl(A.copy(), inflation=r)); lab = np.full(len(A), -1)
        for c, members in enumerate(sorted(clusters, key=min)): lab[list(members)] = c
        return lab
    rng = np.random.default_rng(0)
    graphs = [graph7()]
    for s in range(5):
        P = np.vstack([rng.dirichlet(30 * rng.dirichlet(np.ones(6)), n) for n in (3, 4, 3)])
        D = class_distance_matrix(P); graphs.append(sparsify(distance_to_similarity(D), D, 'knn', k=2))
    for A in graphs:
        for r in (1.7, 2.0, 3.0):
            ours, ref = mcl(A, inflation=r), oracle_labels(A, r)
            assert adjusted_rand_score(ours, ref) == pytest.approx(1.0), (r, ours, ref)

def tied_component_graph(size, rng):
    "An isolated equal-weight clique of `size` nodes next to a random weighted component, nodes shuffled."
    m = int(rng.integers(2, 6)); B = rng.uniform(0, 1, (m, m)); B = (B + B.T) / 2
    A = np.zeros((size + m, size + m)); A[:size, :size] = rng.uniform(0.1, 5); A[size:, size:] = B
    np.fill_diagonal(A, 0); p = rng.permutation(size + m); return A[np.ix_(p, p)]

def test_mcl_exact_ties_match_markov_clustering():
    "Attractors sharing one limit row (pair, triangle, 4-clique of equal weights) form one cluster, as the reference says."
    mc = pytest.importorskip('markov_clustering')
    rng = np.random.default_rng(0)
    for size in (2, 3, 4):
        for _ in range(100):
            A = tied_component_graph(size, rng)
            ref = sorted(tuple(c) for c in mc.get_clusters(mc.run_mcl(A.copy(), inflation=1.7)))
            lab = mcl(A); ours = sorted(tuple(np.flatnonzero(lab == j)) for j in np.unique(lab))
            assert ours == ref, (size, ours, ref)

def test_kmedoids_swap_optimal_and_exact():
    rng = np.random.default_rng(3)
    for _ in range(30):
        X = rng.normal(size=(11, 2)); D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
        best = min(kmedoids_cost(D, s) for s in combinations(range(11), 3))
        _, m_ex = kmedoids(D, 3, method='exact'); assert kmedoids_cost(D, m_ex) == pytest.approx(best)
        _, m_auto = kmedoids(D, 3); assert kmedoids_cost(D, m_auto) == pytest.approx(best)
        _, m = kmedoids(D, 3, method='pam'); c = kmedoids_cost(D, m)
        assert all(kmedoids_cost(D, [*m[:i], h, *m[i + 1:]]) >= c - 1e-12 for i in range(3) for h in range(11) if h not in m)

def test_cafl_keeps_its_clusters_and_s_min_lets_singletons_form():
    "s_min = 0: k clusters persist (k uploads a round); s_min > 0: new singletons form on every seed 0-9."
    grew = 0
    for seed in range(10):
        d = leaf_synthetic(n_clients=12, rounds=4, seed=seed)
        r = CAFL(k=3).run(d, seed=seed); assert r.uplink == [12, 3, 3, 3, 3]
        grew += max(len(set(l)) for l in CAFL(k=3, s_min=0.2).run(d, seed=seed).labels) > 3
    assert grew == 10

def test_silhouette_relocate_singleton_stays_and_count_never_falls_at_zero():
    rng = np.random.default_rng(4)
    for _ in range(50):
        X = rng.normal(size=(9, 2)); D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
        lab = rng.integers(0, 4, 9); lab[:4] = np.arange(4); reps = rng.choice(9, 3, replace=False)
        assert len(set(silhouette_relocate(D, lab, reps))) == 4
    with pytest.raises(ValueError, match='reps'): silhouette_relocate(D, lab, [1, 1])

def test_mcl_seven_node_and_sparse():
    for r in (1.7, 2.0, 3.0): np.testing.assert_array_equal(mcl(graph7(), inflation=r), [0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(mcl(sp.csr_matrix(graph7())), mcl(graph7()))

def test_dense_graph_collapses_sparse_graph_recovers():
    h = har_like_stream(seed=0); P = laplace_smooth(np.stack([np.bincount(h.batch(0, w)[1], minlength=8) for w in range(15)]))
    D = class_distance_matrix(P); S = distance_to_similarity(D)
    assert len(set(mcl(sparsify(S, D, 'dense'), inflation=1.7))) <= 2
    assert adjusted_rand_score(h.groups[0], mcl(sparsify(S, D, 'eps', eps_q=0.15))) > 0.6

def test_silhouette_oracle_and_singletons():
    rng = np.random.default_rng(2); X = rng.normal(size=(10, 2)); D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    lab = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3])
    np.testing.assert_allclose(silhouette_samples(D, lab), sk_silhouette(D, lab, metric='precomputed'), atol=1e-12)
    assert silhouette_samples(D, lab)[-1] == 0

def test_degenerate_clusterings_reported():
    D = 1 - np.eye(4)
    assert clustering_report(np.zeros(4, int), D)['degenerate'] == 'one cluster'
    rep = clustering_report(np.arange(4), D); assert rep['degenerate'] == 'all singletons' and np.isnan(rep['silhouette'])
    assert clustering_report([0, 0, 1, 1], D)['degenerate'] is None
    np.testing.assert_array_equal(silhouette_samples(D, np.arange(4)), np.zeros(4))

def test_eccentricity_identities():
    P = np.random.default_rng(3).dirichlet(np.ones(5), 7); (mu, var, n), = cluster_stats(P, np.zeros(7, int)).values()
    xi = [eccentricity(p, mu, var, n) for p in P]
    assert sum(xi) == pytest.approx(2.0) and max(xi) <= 1 + 1e-12
    for r2 in np.linspace(0.001, 0.5, 60):   # literal threshold at m = 3 <=> ||p - mu||^2 < 4 sigma^2
        x = 1 / n + r2 / (n * var); assert accepts(x, n, 3, 'literal') == (r2 < 4 * var)
        assert accepts(x, n, 3, 'autocloud') == (r2 <= 9 * var + 1e-12)
    assert chebyshev_threshold(5, 3) == pytest.approx(1.0)

def test_eccentricity_reassign_moves_and_singletons():
    rng = np.random.default_rng(0); base = np.array([[.7, .1, .1, .1], [.1, .1, .1, .7]])
    P = np.vstack([base[0] + rng.normal(0, .01, (4, 4)), base[1] + rng.normal(0, .01, (4, 4))]); P /= P.sum(1, keepdims=True)
    lab = np.r_[0, 0, 0, 0, 1, 1, 1, 1]; Pn = P.copy(); Pn[0] = P[5]; Pn[1] = [.1, .7, .1, .1]
    new, changed = eccentricity_reassign(Pn, P, lab)
    assert new[0] == 1 and new[1] == 2 and changed.sum() == 2
    same, ch = eccentricity_reassign(P, P, lab); assert not ch.any()

def test_group_weights_sum_to_one():
    th = [np.full((2, 2), v) for v in (1.0, 2.0, 4.0)]
    np.testing.assert_allclose(weighted_average(th, [10, 20, 70]), np.full((2, 2), 0.1 + 0.4 + 2.8))

def test_gpfl_recurrence_and_drift():
    h = har_like_stream(rounds=8, seed=0); run = GPFL().run_all(h)
    assert run.recur[0] >= 1 and len(run.labels) == 9
    np.testing.assert_array_equal(run.recur, np.sum([a != b for a, b in zip(run.labels[1:], run.labels[:-1])], 0))

def test_cfl_split_rule():
    s = cfl_bipartition(np.array([[1, .1], [1, -.1], [-1, .1], [-1, -.1]])); assert s[0] == s[1] != s[2] == s[3]
    h = har_like_stream(rounds=4, drift_round=2, seed=1)
    assert CFL(eps1=0.0, eps2=0.0, warmup=0).run(h).labels[-1].max() == 0          # mean norm never < 0: no split
    assert CFL(eps1=1e9, eps2=0.0, warmup=2).run(h).labels[-1].max() >= 1

def test_kendall_tau_paper_tables():
    assert kendall_tau_b(PAPER_CAFL.Synthetic, PAPER_GPFL.Synthetic) == pytest.approx(-0.415, abs=5e-4)
    assert kendall_tau_b(PAPER_CAFL.Synthetic, PAPER_GPFL.Synthetic) == pytest.approx(kendalltau(PAPER_CAFL.Synthetic, PAPER_GPFL.Synthetic).statistic)
    np.testing.assert_allclose(PAPER_CAFL.sum().values, [60, 50, 50])
    np.testing.assert_allclose(PAPER_FLCOHORT_CLUSTERS.Synthetic / PAPER_FLCOHORT_CLUSTERS['size'], PAPER_FLCOHORT_CLIENT.Synthetic, atol=1e-4)

def test_minmax_bins():
    np.testing.assert_allclose(minmax_scores([1, 3, 2]), [0, 1, .5]); np.testing.assert_allclose(minmax_scores([2, 2]), [0, 0])
    np.testing.assert_array_equal(bin_scores([1, 2, 3, 5.5], (2, 5)), [0, 1, 1, 2])

def test_imbalance_descriptors_hand_case():
    L = imbalance_descriptors([[4, 1, 0], [2, 2, 2]])
    assert L[0, 0] == 4 and L[1, 0] == 1 and L[0, 2] == pytest.approx(5 / 5.5)
    V = np.array([6, 3, 2]); assert L[1, 1] == pytest.approx(1 - 22 / (np.sqrt(12) * np.sqrt(49)))

def test_cafl_and_fedco_counts():
    d = leaf_synthetic(n_clients=12, rounds=4, seed=0)
    r = CAFL(k=3).run(d); assert r.uplink[0] == 12 and r.freq.sum() == sum(r.uplink[1:])
    assert training_scores(r).sum() == r.freq.sum()
    none = FedCO(3, r=2, acc_threshold=1.0, fallback='skip').run(d)      # nobody reaches accuracy 1.0: no uploads
    assert sum(none.uplink[1:]) <= sum(FedCO(3, r=2, acc_threshold=0.0).run(d).uplink[1:])
    assert all(u <= 2 * len(set(l)) for u, l in zip(none.uplink[1:], none.labels[:-1]))

def test_relocate_and_split():
    pts = np.array([[0, 0], [0, .1], [.1, 0], [5, 5], [5, 5.1], [5.1, 5], [4.9, 5]]); D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    np.testing.assert_array_equal(silhouette_relocate(D, [0, 0, 0, 0, 1, 1, 1], [3]), [0, 0, 0, 1, 1, 1, 1])
    assert len(set(split_optimize(D, np.zeros(7, int)))) == 2

def test_cmfl_and_fedprox():
    assert cmfl_relevance(np.array([1., -1, 1, 1]), np.array([1., 1, 1, -1])) == 0.5
    X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int); th0 = lr_init(3, 2)
    far = local_sgd(th0, X, y, np.random.default_rng(0), epochs=5); near = local_sgd(th0, X, y, np.random.default_rng(0), epochs=5, prox_mu=10.0)
    assert np.linalg.norm(near) < np.linalg.norm(far)
    assert FedProx(0.1).train.prox_mu == 0.1

def test_loaders_real_formats(tmp_path):
    leaf = {'users': ['u0', 'u1'], 'num_samples': [3, 3], 'user_data': {'u0': {'x': [[1, 2]] * 3, 'y': [0, 1, 0]}, 'u1': {'x': [[3, 4]] * 3, 'y': [2, 2, 1]}}}
    (tmp_path / 'train.json').write_text(json.dumps(leaf)); s = load_leaf_json(tmp_path / 'train.json')
    assert (s.n_clients, s.n_classes, s.n_features) == (2, 3, 2)
    rng = np.random.default_rng(0)
    rows = [(i, 0, i, *rng.normal(size=3), 'a', 'nexus4', 'nexus4_1', 'walk' if i < 250 else 'sit') for i in range(500)]
    pd.DataFrame(rows, columns='Index Arrival_Time Creation_Time x y z User Model Device gt'.split()).to_csv(tmp_path / 'h.csv', index=False)
    h = load_hhar(tmp_path / 'h.csv', window=50); assert h.n_clients == 1 and h.n_features == 12
    (tmp_path / 'rw/proband3/data').mkdir(parents=True)
    pd.DataFrame({'id': range(300), 'attr_time': range(300), 'attr_x': rng.normal(size=300), 'attr_y': 0.0, 'attr_z': 1.0}).to_csv(tmp_path / 'rw/proband3/data/acc_running_chest.csv', index=False)
    r = load_realworld(tmp_path / 'rw', window=50); assert r.n_clients == 1 and set(r.batch(0, 0)[1]) == {7}

def test_loaders_bad_paths(tmp_path):
    with pytest.raises(ValueError, match='path'): load_leaf_json(tmp_path)
    with pytest.raises(ValueError, match='path'): load_hhar(tmp_path / 'missing.csv')
    with pytest.raises(ValueError, match='path'): load_realworld(tmp_path)

@pytest.mark.parametrize('call, match', [
    (lambda: check_distribution('p', [0.5, 0.6], atol=PROB_ATOL), r'p: weights at \(0,\) along axis -1 sum to 1.1'),
    (lambda: check_distribution('p', [1.2, -0.2], atol=PROB_ATOL), 'p: entry 1 = -0.2 is out of range'),
    (lambda: class_distance_matrix([[0.5, 0.6]]), 'P: weights at .* expected probabilities summing to 1'),
    (lambda: distance_to_similarity([[0, 1], [2, 0]]), 'D is not symmetric'),
    (lambda: mcl(np.ones((3, 3)), inflation=1.0), 'inflation'),
    (lambda: mcl(np.ones((3, 3)), inflation=0.5), 'inflation'),
    (lambda: kmedoids(np.zeros((3, 3)), 4), 'fewer clients'),
    (lambda: CAFL(k=30).run(leaf_synthetic(n_clients=5, rounds=2)), 'fewer clients'),
    (lambda: laplace_smooth([[1, 2], [0, 0]]), 'no examples'),
    (lambda: imbalance_descriptors([[1, 2], [0, 0]]), 'empty client'),
    (lambda: ema_update([0.5, 0.5], [0.3, 0.3, 0.4]), 'p_new'),
    (lambda: semantic_w1(P_PERM, Q_PERM, np.ones((4, 4))), 'ground'),
])
def test_bad_input_clear_errors(call, match):
    with pytest.raises((ValueError, TypeError), match=match): call()

def test_degenerate_runs_are_reported_not_crashed():
    from hetfl_explore.clustering.data import FedStream
    rng = np.random.default_rng(0); X = rng.normal(size=(40, 3)).astype(np.float32); y = np.tile([0, 1, 2, 0], 10)
    same = FedStream('identical', 4, 3, 3, 3, lambda t, w, split, r: (X, y), np.zeros((4, 4), int), (X, y))   # every client has the same data
    run = GPFL().run_all(same, 3)
    assert all(l['degenerate'] == 'one cluster' for l in run.log) and run.recur.sum() == 0
    ca = CAFL(k=4).run(same, 2); assert ca.log[0]['degenerate'] == 'all singletons'
    assert CAFL(k=1).run(same, 2).log[-1]['degenerate'] == 'one cluster'

def test_other_streams_run_through_the_algorithms():
    d = digits_writers(n_writers=6, rounds=2)
    assert len(GPFL().run_all(d, 2).labels) == 3 and len(CAFL(k=2).run(d, 2).uplink) == 3
    assert len(CMFL(0.55).run(har_like_stream(rounds=6), 2).uplink) == 3

def test_panels_compute_and_show_errors():
    from hetfl_explore.widgets.clustering import ProfileLab, EccentricityPanel
    lab = ProfileLab()
    assert lab.compute()['ari'] > lab.compute(distance='naive scipy (wrong)')['ari']
    lab.values = lambda: dict(graph='knn', k=99)
    assert lab.refresh() is None and '99' in lab.status.value
    ep = EccentricityPanel(); assert ep.compute(drift=1.0, mode='include', size=4)['accepted'].all()


def test_cfl_follows_the_reference_code_plain_means_and_children_from_their_own_updates():
    "A forced split: each child's model is the parent's plus its own members' plain mean update (or the weighted mean)."
    rng = np.random.default_rng(2)
    dW = np.vstack([rng.normal(1, 0.1, (4, 6)), rng.normal(-1, 0.1, (4, 6))])
    sizes = rng.integers(5, 50, 8)
    side = cfl_bipartition(dW)
    for variant in ('reference', 'size_weighted'):
        algo = CFL(eps1=1e9, eps2=0.0, warmup=0, variant=variant)
        rule = CFLGroups(algo)
        rule.reset(8, 0)
        start = torch.as_tensor(rng.normal(size=(1, 6)))
        counts = np.zeros((8, 3), int)
        counts[:, 0] = sizes
        rnd = GroupRound(0, np.arange(8), np.zeros(8, int), torch.as_tensor(dW), start, start.clone(), counts,
                         np.zeros(8, np.int64))
        models, index = rule.reform(0, rnd)
        assert len(models) == 2 and ((index == side).all() or (index == 1 - side).all())
        wts = np.ones(8) if variant == 'reference' else sizes.astype(float)
        for w in range(8):
            mine = side == side[w]
            step = dW[mine].mean(0) if variant == 'reference' else wts @ dW / wts.sum()
            np.testing.assert_allclose(models[index[w]].numpy(), start[0].numpy() + step, atol=1e-12)
        assert rule.norms[0][0] == pytest.approx(np.linalg.norm(wts @ dW / wts.sum()))
        parts, steps, norms = cfl_step(dW, sizes, 0, 1e9, 0.0, 0, variant)
        assert len(parts) == 2 and norms == rule.norms[0]
    assert len(cfl_step(dW, sizes, 0, 0.0, 0.0, 0)[0]) == 1                  # the mean norm is never < 0: no split
    with pytest.raises(ValueError, match='variant'): CFL(variant='weighted')


def test_gpfl_rule_seeds_a_new_group_with_its_member_s_own_model():
    "After a move to a new singleton, the group's model is the mover's own new model; others keep the aggregate."
    h = har_like_stream(rounds=8, seed=0)
    algo = GPFL()
    sim = algo.simulation(h, 8, 0)
    moved = None
    for t in range(9):
        before = sim.models.clone()
        sim.step()
        rnd, rule = algo.rule.last, algo.rule
        if t and rule.changed.any() and moved is None:
            moved = t
            w = int(np.flatnonzero(rule.changed)[0])
            row = int(np.flatnonzero(rnd.ids == w)[0])
            if (rule.labels == rule.labels[w]).sum() == 1:                    # a singleton: seeded from w
                assert torch.equal(sim.models[rule.index[w]], rnd.personal[row])
        assert before.shape[1] == sim.models.shape[1]
    assert moved is not None
    np.testing.assert_array_equal(algo.record.recur, rule.recur)


def test_hostile_labels_features_lengths_and_eccentricities_are_rejected():
    X = np.zeros((4, 2))
    for y, arg in (([0, 1, -3, 7], 'ys[0]'), ([0, 1, 0.5, 1], 'ys[0]')):
        with pytest.raises(ValueError, match=arg.replace('[', r'\[').replace(']', r'\]')): from_client_arrays('x', [X], [y], 2)
    with pytest.raises(ValueError, match=r'Xs\[0\]'): from_client_arrays('x', [np.full((4, 2), np.nan)], [[0, 1, 0, 1]], 2)
    with pytest.raises(ValueError, match='same length'): total_variation([1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match='same length'): ordinal_w1([1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match='xi'): accepts(-1.0, 3)
    assert accepts(np.float32(0.1), np.int64(3))                                          # numpy scalars are numbers

def test_mcl_mass_ties_dense_equals_sparse():
    "A node split equally between two clusters joins the lower attractor's, whatever the arithmetic (dense or sparse)."
    import scipy.sparse as sp
    from hetfl_explore.clustering.mcl import mcl, mcl_matrix
    bridge = np.zeros((5, 5))
    for i, j in ((0, 1), (3, 4), (1, 2), (2, 3)): bridge[i, j] = bridge[j, i] = 1
    np.testing.assert_allclose(mcl_matrix(bridge)[0][[1, 3], 2], [0.5, 0.5], atol=1e-12)   # a tie up to rounding
    assert mcl(bridge).tolist() == mcl(sp.csr_matrix(bridge)).tolist() == [0, 0, 0, 1, 1]
    for s in range(300):                                    # random symmetric 0/1 and small-integer weighted graphs
        r = np.random.default_rng(s); n = int(r.integers(3, 14))
        U = np.triu((r.random((n, n)) < 0.3) * (r.integers(1, 3, (n, n)) if s % 2 else 1), 1).astype(float)
        assert mcl(U + U.T).tolist() == mcl(sp.csr_matrix(U + U.T)).tolist(), s


def test_the_studys_tables_are_data_files_naming_their_source():
    "Tables 3-6 of the contribution study are the package's data files, each naming its source, read cell for cell."
    from importlib import resources
    from hetfl_explore.clustering.contribution import PAPER_FLCOHORT_MEMBERS
    for n in (3, 4, 5, 6):
        path = resources.files('hetfl_explore').joinpath('data', 'tables', f'alsaedi_contribution_table{n}.csv')
        source = path.read_text(encoding='utf-8').splitlines()[0]
        assert source.startswith('# Al-Saedi & Boeva, client-contribution study') and f'Table {n}: ' in source
    assert PAPER_CAFL.shape == PAPER_GPFL.shape == (20, 3) and list(PAPER_CAFL.index) == list(range(1, 21))
    assert PAPER_CAFL.loc[20, 'Synthetic'] == 5.6 and PAPER_GPFL.loc[1, 'CelebA'] == 2.8
    assert PAPER_FLCOHORT_CLUSTERS['size'].tolist() == [6, 7, 5, 2]
    assert PAPER_FLCOHORT_CLIENT.loc[3, 'FEMNIST'] == 0.0374
    assert PAPER_FLCOHORT_MEMBERS[4] == (1, 4)
    assert sorted(sum(PAPER_FLCOHORT_MEMBERS.values(), ())) == list(range(1, 21))
