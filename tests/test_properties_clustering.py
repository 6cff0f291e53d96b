"""Bad input never surprises (clustering part): malformed arguments raise ValueError/TypeError naming the argument;
class-count matrices given as numpy, nested lists or torch tensors agree."""
from types import SimpleNamespace
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.clustering.profiles as pr
from hetfl_explore.foundation.core import check_distribution
import hetfl_explore.clustering.mcl as mc
import hetfl_explore.clustering.eccentricity as ec
import hetfl_explore.clustering.data as da
import hetfl_explore.clustering.gpfl as gp
import hetfl_explore.clustering.cafl as ca
import hetfl_explore.clustering.contribution as co

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
NOT_ARRAY = st.sampled_from([None, 'abc', object(), [[1, 'x']]])
NOT_INT = st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.none(), st.booleans())
NOT_NUMBER = st.one_of(st.text(max_size=3), st.none(), st.just(float('nan')), st.just(float('inf')), st.lists(st.integers(), max_size=2))
BAD_PROB = st.one_of(NOT_ARRAY, st.lists(st.floats(-1, 2), min_size=1, max_size=6).filter(lambda v: min(v) < 0 or abs(sum(v) - 1) > 1e-3))
BAD_SYM = st.integers(0, 10**6).map(lambda s: np.random.default_rng(s).random((4, 4)) + np.diag(np.zeros(4)))
BAD_DIST = st.one_of(NOT_ARRAY, BAD_SYM, st.just(-np.ones((3, 3)) + np.eye(3)), st.just(np.ones((2, 3))))
BAD_CHOICE = st.text(max_size=6).filter(lambda s: s not in {'tv', 'w1_ordinal', 'semantic', 'gauss', 'linear', 'inverse', 'knn', 'eps',
    'dense', 'literal', 'autocloud', 'frozen', 'include', 'stale', 'fresh', 'top1', 'skip', 'per_round', 'retrain', 'label', 'train', 'test'})
NOT_STREAM = st.sampled_from([None, 'stream', 3, {'rounds': 2}])

def small_stream(): return da.leaf_synthetic(n_clients=6, n_features=4, n_classes=3, rounds=2, seed=0)
P3 = np.array([[.5, .3, .2], [.2, .3, .5], [.4, .4, .2]]); D3 = pr.class_distance_matrix(P3); A7 = np.ones((4, 4))
TH, X2, Y2 = np.zeros((3, 2)), np.zeros((4, 2)), np.array([0, 1, 0, 1])

# (fully qualified name, call with the bad value, argument name quoted in the error, strategy of bad values)
CASES = [
    ('profiles probabilities', lambda v: check_distribution('p', v, atol=pr.PROB_ATOL, ndim=pr.PROB_NDIM), 'p',
     BAD_PROB),
    ('profiles.check_distance_matrix', lambda v: pr.check_distance_matrix('D', v), 'D', BAD_DIST),
    ('profiles.laplace_smooth', lambda v: pr.laplace_smooth(v), 'counts', st.one_of(NOT_ARRAY, st.just([[1, -2]]), st.just([[0, 0]]))),
    ('profiles.class_counts', lambda v: pr.class_counts([0, 1], v), 'n_classes', st.one_of(NOT_INT, st.integers(max_value=0))),
    ('profiles.ema_update', lambda v: pr.ema_update([.5, .5], [.5, .5], v), 'w', st.one_of(NOT_NUMBER, st.floats(1.01, 9), st.floats(-9, -0.01))),
    ('profiles.naive_scipy_w1', lambda v: pr.naive_scipy_w1(v, [.5, .5]), 'p', BAD_PROB),
    ('profiles.total_variation', lambda v: pr.total_variation([.5, .5], v), 'q', BAD_PROB),
    ('profiles.check_prob_pair', lambda v: pr.check_prob_pair([.5, .5], v), 'q', st.one_of(BAD_PROB, st.just([1.0]), st.just([.2, .3, .5]))),
    ('profiles.ordinal_w1', lambda v: pr.ordinal_w1(v, [.5, .5]), 'p', BAD_PROB),
    ('profiles.check_ground', lambda v: pr.check_ground(v, 4), 'C', BAD_DIST),
    ('profiles.semantic_w1', lambda v: pr.semantic_w1([.5, .5], [.5, .5], v), 'ground', BAD_DIST),
    ('profiles.class_distance_matrix', lambda v: pr.class_distance_matrix(P3, v), 'metric', BAD_CHOICE),
    ('profiles.distance_to_similarity', lambda v: pr.distance_to_similarity(v), 'D', BAD_DIST),
    ('profiles.sparsify', lambda v: pr.sparsify(np.ones((3, 3)), D3, 'knn', k=v), 'k', st.one_of(NOT_INT, st.integers(max_value=0), st.integers(3, 99))),
    ('mcl.mcl_matrix', lambda v: mc.mcl_matrix(A7, inflation=v), 'inflation', st.one_of(NOT_NUMBER, st.floats(-5, 1))),
    ('mcl.mcl', lambda v: mc.mcl(A7, expansion=v), 'expansion', st.one_of(NOT_INT, st.integers(max_value=1))),
    ('mcl.check_cluster_labels', lambda v: mc.check_cluster_labels(v, 3), 'labels', st.sampled_from([None, [0.5, 1, 0], [[0, 1, 1]], [0, 1], 'abc'])),
    ('mcl.silhouette_samples', lambda v: mc.silhouette_samples(v, [0, 1, 1]), 'D', BAD_DIST),
    ('mcl.clustering_report', lambda v: mc.clustering_report(v), 'labels', st.sampled_from([[], [0.5, 1.5], [[0, 1]], ['a']])),
    ('mcl.kmedoids', lambda v: mc.kmedoids(D3, v), 'k', st.one_of(NOT_INT, st.integers(max_value=0), st.integers(4, 50))),
    ('mcl.kmedoids_cost', lambda v: mc.kmedoids_cost(D3, v), 'medoids', st.sampled_from([[], [0, 0], [-1], [3], [0.5], 'a', None, [[0, 1]]])),
    ('eccentricity.cluster_stats', lambda v: ec.cluster_stats(v, [0, 0]), 'P', BAD_PROB),
    ('eccentricity.eccentricity', lambda v: ec.eccentricity([.5, .5], [.5, .5], v, 3), 'var', st.one_of(NOT_NUMBER, st.floats(-5, 0))),
    ('eccentricity.eccentricity p', lambda v: ec.eccentricity(v, [.5, .5], 0.1, 3), 'p', st.sampled_from([[1.0], [np.nan, 1], [np.inf, 0], [], 'ab', None, [[.5, .5]]])),
    ('eccentricity.accepts xi', lambda v: ec.accepts(v, 3), 'xi', st.one_of(NOT_NUMBER, st.floats(max_value=-1e-9), st.booleans())),
    ('eccentricity.chebyshev_threshold', lambda v: ec.chebyshev_threshold(v), 'n', st.one_of(NOT_INT, st.integers(max_value=0))),
    ('eccentricity.accepts', lambda v: ec.accepts(0.1, 3, 3, v), 'threshold', BAD_CHOICE),
    ('eccentricity.eccentricity_reassign', lambda v: ec.eccentricity_reassign(P3, P3, [0, 0, 1], mode=v), 'mode', BAD_CHOICE),
]
BAD_SCORES = st.sampled_from([None, 'ab', [1.0, 2.0], [np.nan] * 6, [np.inf] * 6, [[1.0] * 6]])
CASES += [
    ('contribution.kendall_tau_b x', lambda v: co.kendall_tau_b(v, [1.0, 2.0, 3.0]), 'x', st.sampled_from([[1, np.nan, 2], [1, 2], 'abc', None, [[1, 2, 3]], [1, np.inf, 2]])),
    ('contribution.minmax_scores x', lambda v: co.minmax_scores(v), 'x', st.sampled_from([[], [np.nan, 1], 'abc', None, [[1, 2]]])),
    ('contribution.bin_scores x', lambda v: co.bin_scores(v, (1, 2)), 'x', st.sampled_from([[np.nan, 1], 'abc', None, [[1, 2]]])),
    ('contribution.fedavg_on_clients', lambda v: co.fedavg_on_clients(small_stream(), v, 1), 'clients', st.sampled_from([[], [0, 0], [6], [-1], [0.5], 'a', None])),
    ('contribution.top_fraction_curves', lambda v: co.top_fraction_curves(small_stream(), v, rounds=1), 'scores', BAD_SCORES),
    ('contribution.group_curves', lambda v: co.group_curves(small_stream(), v, (1,), rounds=1), 'scores', BAD_SCORES),
    ('contribution.drop_unstable_curves', lambda v: co.drop_unstable_curves(small_stream(), np.arange(6.), v, rounds=1), 'n_drop', st.one_of(NOT_INT, st.integers(max_value=0), st.integers(6, 50))),
]
CASES += [
    ('data.FedStream', lambda v: da.FedStream('x', v, 2, 2, 1, lambda *a: None, np.zeros((2, 1)), (None, None)), 'n_clients', st.one_of(NOT_INT, st.integers(max_value=0))),
    ('data.har_like_stream', lambda v: da.har_like_stream(group_sizes=v), 'group_sizes', st.sampled_from([(), (0, 2), 'ab', None, (1.5,)])),
    ('data.from_client_arrays', lambda v: da.from_client_arrays('x', [np.zeros((4, 2))], [v], 2), 'ys[0]',
     st.sampled_from([[0, 1, -3, 7], [0, 1, 0.5, 1], [0, 1, np.nan, 1], [0, 1], 'abcd', None, [[0, 1, 0, 1]]])),
    ('data.from_client_arrays Xs', lambda v: da.from_client_arrays('x', [v], [[0, 1, 0, 1]], 2), 'Xs[0]',
     st.sampled_from([np.full((4, 2), np.nan), np.full((4, 2), np.inf), np.zeros((3, 2)), 'abcd', None])),
    ('data.leaf_synthetic', lambda v: da.leaf_synthetic(n_clients=4, label_flip=v), 'label_flip', st.sampled_from([(9,), (-1,), 'a', None, (0.5,)])),
    ('data.digits_writers', lambda v: da.digits_writers(skew=v), 'skew', st.one_of(NOT_NUMBER, st.floats(1.01, 5), st.floats(-5, -0.01))),
    ('data.from_client_arrays', lambda v: da.from_client_arrays('x', [np.zeros((3, 2))], [[0, 1, 0]], 2, test_frac=v), 'test_frac', st.one_of(NOT_NUMBER, st.floats(1, 5), st.floats(-5, -0.01))),
    ('data.load_leaf_json', lambda v: da.load_leaf_json(v), 'path', st.sampled_from([None, 3, '/nonexistent/leaf.json'])),
    ('data.load_hhar', lambda v: da.load_hhar(v), 'path', st.sampled_from([None, 3, '/nonexistent/h.csv'])),
    ('data.load_realworld', lambda v: da.load_realworld(v), 'path', st.sampled_from([None, 3, '/nonexistent'])),
    ('gpfl.lr_init', lambda v: gp.lr_init(3, v), 'n_classes', st.one_of(NOT_INT, st.integers(max_value=1))),
    ('gpfl.predict_proba', lambda v: gp.predict_proba(TH, v), 'X', st.one_of(NOT_ARRAY, st.just(np.zeros((3, 5))))),
    ('gpfl.local_sgd', lambda v: gp.local_sgd(TH, X2, Y2, np.random.default_rng(0), lr=v), 'lr', st.one_of(NOT_NUMBER, st.floats(-5, 0))),
    ('gpfl.weighted_average', lambda v: gp.weighted_average([TH, TH], v), 'weights', st.sampled_from([[0, 0], [1], [-1, 2], [1, 2, 3]])),
    ('gpfl.weighted_f1', lambda v: gp.weighted_f1([0, 1], v, 2), 'pred', st.sampled_from([[0], [0, 5], [-1, 0]])),
    ('gpfl.scores', lambda v: gp.scores(TH, X2, v), 'y', st.sampled_from([[0, 1], [0, 5, 0, 1], [0.5, 1, 0, 1]])),
    ('gpfl.server_accuracy', lambda v: gp.server_accuracy(TH, v), 'data', NOT_STREAM),
    ('gpfl.FLRun', lambda v: gp.FLRun(v), 'name', st.sampled_from([None, 3, ['a']])),
    ('gpfl.softmax_regression', lambda v: gp.softmax_regression(3, v), 'n_classes',
     st.one_of(NOT_INT, st.integers(max_value=1))),
    ('gpfl.model_scores', lambda v: gp.model_scores(v, torch.zeros(6), X2[:, :2], Y2), 'net',
     st.sampled_from([None, 3, 'x'])),
    ('gpfl.StreamAlgorithm', lambda v: gp.StreamAlgorithm(v), 'train', st.sampled_from([3, 'x', object()])),
    ('gpfl.stream_record', lambda v: gp.stream_record(v), 'history', st.sampled_from([None, 3, 'x', {'meta': {}}])),
    ('gpfl.RecordedGrouping', lambda v: gp.RecordedGrouping(v), 'n_groups',
     st.one_of(NOT_INT, st.integers(max_value=0))),
    ('gpfl.GPFLGroups', lambda v: gp.GPFLGroups(v), 'algo', st.sampled_from([None, 3, 'x'])),
    ('gpfl.CFLGroups', lambda v: gp.CFLGroups(v), 'algo', st.sampled_from([None, 3, 'x'])),
    ('gpfl.gpfl_start', lambda v: gp.gpfl_start(gp.GPFL(), v), 'counts',
     st.sampled_from([[[-1, 2]], [[0.5, 1]], 'ab', None])),
    ('gpfl.gpfl_regroup', lambda v: gp.gpfl_regroup(v, P3, [0, 0, 1], P3), 'algo', st.sampled_from([None, 3, 'x'])),
    ('gpfl.cfl_step', lambda v: gp.cfl_step(np.ones((3, 2)), [1, 2, 3], 0, variant=v), 'variant', BAD_CHOICE),
    ('cafl.RepresentativeSelector', lambda v: ca.RepresentativeSelector(v), 'algo', st.sampled_from([None, 3, 'x'])),
    ('gpfl.FedAvg', lambda v: gp.FedAvg(frac=v), 'frac', st.one_of(NOT_NUMBER, st.floats(-5, 0), st.floats(1.01, 5))),
    ('gpfl.GPFL', lambda v: gp.GPFL(inflation=v), 'inflation', st.one_of(NOT_NUMBER, st.floats(-5, 1))),
    ('gpfl.cfl_bipartition', lambda v: gp.cfl_bipartition(v), 'dW', st.sampled_from([np.zeros(3), np.zeros((1, 3))])),
    ('gpfl.CFL', lambda v: gp.CFL(warmup=v), 'warmup', st.one_of(NOT_INT, st.integers(max_value=-1))),
    ('cafl.CAFL.representatives acc', lambda v: ca.CAFL(2).representatives(np.array([0, 0, 1]), v), 'acc', st.sampled_from([[.5, np.nan, .1], [.5, .1], 'abc', None, [[.1, .2, .3]]])),
    ('cafl.FedCO.representatives acc', lambda v: ca.FedCO(2).representatives(np.array([0, 0, 1]), v), 'acc', st.sampled_from([[.5, np.nan, .1], [.5, .1], 'abc', None])),
    ('cafl.cmfl_relevance u', lambda v: ca.cmfl_relevance(v, np.ones(3)), 'u', st.sampled_from(['abc', None, [np.nan, 1, 1], [1, 1]])),
    ('cafl.silhouette_relocate', lambda v: ca.silhouette_relocate(v, [0, 1, 1], [0]), 'D', BAD_DIST),
    ('cafl.split_optimize', lambda v: ca.split_optimize(D3, [0, 0, 0], min_size=v), 'min_size', st.one_of(NOT_INT, st.integers(max_value=1))),
    ('cafl.CAFL', lambda v: ca.CAFL(k=v), 'k', st.one_of(NOT_INT, st.integers(max_value=0))),
    ('cafl.FedCO', lambda v: ca.FedCO(acc_threshold=v), 'acc_threshold', st.one_of(st.text(max_size=2), st.floats(1.01, 5), st.floats(-5, -0.01))),
    ('cafl.FedProx', lambda v: ca.FedProx(mu=v), 'mu', st.one_of(NOT_NUMBER, st.floats(-5, -0.01))),
    ('cafl.cmfl_relevance', lambda v: ca.cmfl_relevance(np.zeros(3), v), 'u', st.sampled_from([np.zeros(2), np.zeros(5)])),
    ('cafl.CMFL', lambda v: ca.CMFL(v_thr=v), 'v_thr', st.one_of(NOT_NUMBER, st.floats(1.01, 5))),
    ('cafl.comm_tradeoff', lambda v: ca.comm_tradeoff(small_stream(), v), 'methods', st.sampled_from([{}, None, [1]])),
    ('contribution.kendall_tau_b', lambda v: co.kendall_tau_b([1, 2, 3], v), 'x, y', st.sampled_from([[1, 2], [np.nan, 1, 2], [[1, 2, 3]]])),
    ('contribution.rank_correlation_matrix', lambda v: co.rank_correlation_matrix(v), 'scores', st.sampled_from([{}, {'a': [1, 2]}, None, [1]])),
    ('contribution.cohort_scores', lambda v: co.cohort_scores({1: v}, {1: 0.5}, 3), 'members', st.sampled_from([[], [0], [4], [1.5]])),
    ('contribution.minmax_scores', lambda v: co.minmax_scores(v), 'x', st.sampled_from([[], [np.nan], [[1, 2]]])),
    ('contribution.bin_scores', lambda v: co.bin_scores([1, 2], v), 'edges', st.sampled_from([[], [3, 2], [[1]]])),
    ('contribution.deletion_influence', lambda v: co.deletion_influence(small_stream(), 1, mode=v), 'mode', BAD_CHOICE),
    ('contribution.imbalance_descriptors', lambda v: co.imbalance_descriptors(v), 'counts', st.sampled_from([[1, 2], [[-1, 2]], [[0, 0]], [[np.nan, 1]]])),
    ('contribution.fl_cohort', lambda v: co.fl_cohort(small_stream(), k=v, rounds=1), 'k', st.one_of(NOT_INT, st.integers(max_value=0), st.integers(7, 40))),
    ('contribution.training_scores', lambda v: co.training_scores(v), 'run',
     st.sampled_from([None, 3, SimpleNamespace(freq=None, recur=None)])),
    ('contribution.contribution_study', lambda v: co.contribution_study(v), 'data', NOT_STREAM),
    ('contribution.ClientSubset', lambda v: co.ClientSubset(v), 'clients',
     st.sampled_from([[], [0, 0], [-1], [0.5], 'a', None, [[1, 2]]])),
]
import hetfl_explore.widgets.clustering as wc
CASES += [
    ('widgets.clustering.FigurePanel', lambda v: wc.FigurePanel()._build(v), 'controls',
     st.sampled_from([None, 3, 'ab'])),
    ('widgets.clustering.ProfileLab', lambda v: wc.ProfileLab(seed=v), 'seed', st.one_of(NOT_INT, st.integers(max_value=-1))),
    ('widgets.clustering.EccentricityPanel', lambda v: wc.EccentricityPanel(seed=v), 'seed', st.one_of(NOT_INT, st.integers(max_value=-1))),
    ('widgets.clustering.GPFLPlayer', lambda v: wc.GPFLPlayer(rounds=v), 'rounds', st.one_of(NOT_INT, st.integers(max_value=5), st.integers(31, 99))),
    ('widgets.clustering.FedCOTradeoff', lambda v: wc.FedCOTradeoff(rounds=v), 'rounds', st.one_of(NOT_INT, st.integers(max_value=1), st.integers(51, 99))),
    ('widgets.clustering.WhoContributes', lambda v: wc.WhoContributes(rounds=v), 'rounds', st.one_of(NOT_INT, st.integers(max_value=1), st.integers(31, 99))),
]
COVERED = {f'hetfl_explore.{"" if name.startswith("widgets") else "clustering."}{name}' for name, *_ in CASES if ' ' not in name} | {'hetfl_explore.widgets.clustering.family_cost'}

def test_family_cost_is_a_ground_cost():
    C = wc.family_cost(); pr.check_ground(C, len(da.ACTIVITIES))      # takes no argument: nothing malformed to draw
    assert C[0, 1] == 0.5 and C[0, 2] == 1.0

@pytest.mark.parametrize('name, call, arg, strategy', CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(name, call, arg, strategy):
    @SETTINGS
    @given(strategy)
    def check(v):
        with pytest.raises((ValueError, TypeError)) as e: call(v)
        assert arg.split(',')[0] in str(e.value) or arg in str(e.value), f'{name}: {e.value!r} does not name {arg!r}'
    check()

def test_every_public_callable_is_covered():
    import inspect
    mods = (pr, mc, ec, da, gp, ca, co, wc)
    public = {f'{m.__name__}.{n}' for m in mods for n in m.__all__ if inspect.isfunction(getattr(m, n)) or inspect.isclass(getattr(m, n))}
    assert public <= COVERED, sorted(public - COVERED)

@given(st.integers(0, 10**6))
@settings(max_examples=10, deadline=None)
def test_count_matrices_agree_across_forms(seed):
    C = np.random.default_rng(seed).integers(0, 20, (5, 4)); C[:, 0] += 1
    ref = pr.laplace_smooth(C)
    for form in (C.tolist(), torch.tensor(C), C.astype(np.float32)):
        np.testing.assert_allclose(pr.laplace_smooth(form), ref, rtol=1e-6)
        np.testing.assert_allclose(co.imbalance_descriptors(form), co.imbalance_descriptors(C), rtol=1e-6)

def test_federation_spec_label_counts():
    from hetfl_explore.foundation.data import federation, FEDERATIONS
    spec = federation(sorted(FEDERATIONS)[0]); counts = np.asarray(spec).sum(-1)      # (clients, classes) label counts
    np.testing.assert_allclose(pr.laplace_smooth(counts), pr.laplace_smooth(spec.matrices.sum(-1).tolist()))
