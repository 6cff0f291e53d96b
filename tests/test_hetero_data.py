"Tests of hetfl_explore.foundation.hetero and hetfl_explore.foundation.data: published FedDiverse values, edge cases, property tests."
import numpy as np, pandas as pd, pytest, torch
from hypothesis import given, settings, strategies as st, HealthCheck
from hypothesis.extra.numpy import arrays
from hetfl_explore.foundation.hetero import (as_counts, dht, delta_ci, delta_ai, delta_sc, fl_metrics, client_types, marginal_vector,
                                  interaction_matrix, mutual_information, hellinger, js_divergence, label_skew, METRICS,
                                  federation_heatmaps, ternary_triplets, metric_bars)
from hetfl_explore.foundation.data import (FEDERATIONS, federation, assert_published, scale_federation, scale_drift,
                                partition_from_matrices, partition_iid, partition_dirichlet, partition_shards,
                                balanced_split, FederatedData, FlwrPartitioner)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- published values (Tables 5 and 6, spec §3)
@pytest.mark.parametrize('name', list(FEDERATIONS))
def test_published_client_triplets(name):
    spec = federation(name)
    for (m, N), t in zip(spec.client_types, spec.published['triplets']):
        np.testing.assert_array_equal(np.round(dht(N), 2), np.round(t, 2), err_msg=f"{name} {N}")

@pytest.mark.parametrize('name', list(FEDERATIONS))
def test_global_matrix_is_sum_of_clients(name):
    spec = federation(name)
    glob = spec.published.get('global_matrix', spec.derived.get('global_matrix'))
    np.testing.assert_array_equal(spec.matrices.sum(0), glob)
    np.testing.assert_array_equal(spec.global_matrix, glob)

@pytest.mark.parametrize('name', [n for n in FEDERATIONS if n != 'spawrious_gci_100'])
def test_published_global_values(name):
    spec, m = federation(name), fl_metrics(federation(name).matrices)
    for k in ('GCI', 'GAI', 'GSC'): assert round(float(m[k]), 2) == spec.published[k], (name, k, m[k])

@pytest.mark.parametrize('name', list(FEDERATIONS))
def test_derived_metrics_and_types(name):
    assert_published(federation(name))   # six metrics within 1e-3 of spec §3.4, type counts, plus the above

def test_assert_published_can_fail():
    spec = federation('spawrious_gsc')
    bad = type(spec)(spec.name, ((23, [[90, 90], [10, 10]]), (1, [[10, 90], [90, 10]])), spec.class_names,
                     spec.attr_names, spec.published, spec.derived)
    with pytest.raises(AssertionError): assert_published(bad)

def test_sizes_and_kappa():
    got = {n: (s.num_clients, int(s.global_matrix.sum()), s.kappa) for n, s in FEDERATIONS.items()}
    assert got == {'spawrious_gsc': (24, 4800, 9), 'cmnist_gsc': (24, 4800, 9), 'spawrious_gci': (24, 4800, 9),
                   'spawrious_gai': (25, 4600, 9), 'waterbirds_dist': (30, 4795, 9), 'spawrious_4': (25, 8800, 9),
                   'spawrious_gci_100': (100, 15600, 12)}

def test_worked_examples():
    np.testing.assert_allclose(dht([[90, 90], [10, 10]]), [0.5310, 0, 0], atol=1e-4)
    np.testing.assert_allclose(dht([[90, 10], [10, 90]]), [0, 0, 0.5310], atol=1e-4)
    np.testing.assert_allclose(mutual_information([[90, 10], [10, 90]]), 0.3681, atol=1e-4)
    np.testing.assert_allclose(dht([[3498, 184], [56, 1057]]), [0.2183, 0.1751, 0.6701], atol=1e-4)
    np.testing.assert_allclose(delta_ci([[20, 20], [20, 20], [5, 5], [5, 5]]), 0.139, atol=1e-3)
    np.testing.assert_allclose(dht([[68, 68], [10, 10]])[0], 0.4475, atol=1e-4)

# ---------------------------------------------------------------- edge cases and errors
def test_edge_cases():
    np.testing.assert_array_equal(dht([[7, 0], [0, 0]]), [1, 1, 0])           # H(Y)+H(A)=0 -> SC := 0
    assert delta_ai([[3, 0], [4, 0]]) == 1 and delta_sc([[3, 0], [4, 0]]) == 0
    assert delta_ci([[3, 4], [0, 0]]) == 1

@pytest.mark.parametrize('N,msg', [
    ([[[1, 1], [1, 1]], [[1, -2], [1, 1]]], 'client 1, cell (y=0, a=1) = -2.0 is negative'),
    ([[[1, 1], [1, 1]], [[1, 1], [np.nan, 1]]], 'client 1, cell (y=1, a=0) = nan is NaN'),
    ([[[1, 1], [1, np.inf]]], 'client 0, cell (y=1, a=1) = inf is infinite'),
    ([[0.5, 1], [1, 1]], 'cell (y=0, a=0) = 0.5 is not an integer'),
    ([[[1, 1], [1, 1]], [[0, 0], [0, 0]]], 'client 1, no samples at all'),
    ([[0, 0], [0, 0]], 'no samples at all'),
    ([1, 2], 'shape (2,)'),
    ([[1, 2, 3]], 'shape (1, 3)'),
    ([[1, 2], [3]], 'not a rectangular array'),
])
def test_invalid_counts(N, msg):
    for f in (dht, delta_ci):
        with pytest.raises(ValueError) as e: f(N)
        assert msg in str(e.value), str(e.value)

def test_torch_and_list_inputs():
    N = np.array([[[5, 1], [2, 9]], [[3, 3], [0, 4]]])
    np.testing.assert_allclose(dht(torch.tensor(N)), dht(N)); np.testing.assert_allclose(dht(N.tolist()), dht(N))
    with pytest.raises(ValueError, match='client 0, cell'): dht(torch.tensor([[[-1, 1], [1, 1]]]))

def test_client_types_ties():
    t = dht([[[170, 5], [5, 5]], [[10, 10], [10, 10]], [[90, 10], [10, 90]]])
    assert list(client_types(t)) == ['CI=AI', 'CI=AI=SC', 'SC']
    assert list(client_types(t, tie='first')) == ['CI', 'CI', 'SC']
    with pytest.raises(ValueError, match='client 0, tie between CI, AI'): client_types(t, tie='raise')
    with pytest.raises(ValueError, match='tie'): client_types(t, tie='nope')

def test_interaction_and_marginal():
    assert interaction_matrix(np.array([0, 1, 1]), np.array([1, 1, 0]), 2, 3).tolist() == [[0, 1, 0], [1, 1, 0]]
    assert marginal_vector([[[1, 2], [3, 4]]]).tolist() == [[3, 7]]
    with pytest.raises(ValueError, match=r'a: expected integer labels in \[0, 2\)'): interaction_matrix([0], [2], 2, 2)

def test_views_build():
    Ns = federation('spawrious_gai').matrices
    assert len(federation_heatmaps(Ns, unique=True).data) == 8
    assert len(federation_heatmaps(Ns, max_clients=5).data) == 5
    fig = ternary_triplets(dht(Ns)); assert sum(len(d.a) for d in fig.data) == 25
    assert {d.name for d in fig.data} == {'CI', 'AI', 'SC', 'CI=AI'}
    assert [d.name for d in metric_bars(Ns, published=federation('spawrious_gai').published).data] == ['computed', 'published']

# ---------------------------------------------------------------- property tests: metrics
def matrices(max_y=4, max_a=3, max_k=6):
    return st.tuples(st.integers(1, max_k), st.integers(2, max_y), st.integers(2, max_a)).flatmap(
        lambda s: arrays(np.int64, s, elements=st.integers(0, 50)).filter(lambda N: (N.sum((1, 2)) > 0).all()))

@SETTINGS
@given(matrices())
def test_metric_ranges_and_batching(Ns):
    t = dht(Ns)
    assert t.shape == (len(Ns), 3) and ((t >= 0) & (t <= 1)).all()
    for k in range(len(Ns)): np.testing.assert_allclose(t[k], dht(Ns[k]), atol=1e-12)
    m = fl_metrics(Ns)
    assert all(0 <= m[k] <= 1 for k in METRICS)
    np.testing.assert_allclose([m['CCI'], m['CAI'], m['CSC']], t.mean(0), atol=1e-12)

@SETTINGS
@given(matrices(), st.integers(2, 9))
def test_scale_invariance_and_transpose(Ns, c):
    np.testing.assert_allclose(dht(Ns * c), dht(Ns), atol=1e-12)
    tT = dht(np.swapaxes(Ns, 1, 2))          # swapping roles of Y and A: SC symmetric
    np.testing.assert_allclose(tT[:, 2], dht(Ns)[:, 2], atol=1e-12)

@SETTINGS
@given(matrices())
def test_reference_implementation_agrees(Ns):
    def H(p): p = p[p > 0]; return float(-(p * np.log(p)).sum())
    for N in Ns.astype(float):   # spec §2.4 reference implementation
        P = N / N.sum(); py, pa = P.sum(1), P.sum(0); hy, ha = H(py), H(pa); nz = P > 0
        mi = float((P[nz] * np.log(P[nz] / np.outer(py, pa)[nz])).sum())
        ref = [1 - hy / np.log(len(py)), 1 - ha / np.log(len(pa)), 2 * mi / (hy + ha) if hy + ha > 0 else 0.0]
        np.testing.assert_allclose(dht(N), np.clip(ref, 0, 1), atol=1e-9)

@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 6)), elements=st.floats(0, 10)),
       arrays(np.float64, 6, elements=st.floats(0.01, 10)))
def test_divergence_ranges(p, q):
    p = p + 1e-3; q = q[:p.shape[1]]
    for f in (hellinger, js_divergence):
        d = f(p, q); assert ((d >= 0) & (d <= 1)).all()
        np.testing.assert_allclose(f(q, q), 0, atol=1e-7)
    np.testing.assert_allclose(hellinger(p, q), hellinger(q, p), atol=1e-12)

def test_label_skew():
    Ns = [[[90, 90], [10, 10]], [[10, 10], [90, 90]], [[50, 50], [50, 50]]]
    d = label_skew(Ns); assert d[0] == pytest.approx(d[1]) and d[2] == pytest.approx(0, abs=1e-7)
    assert label_skew(Ns, 'js', 'group').shape == (3,)

# ---------------------------------------------------------------- scaling
@pytest.mark.parametrize('name,scale,worst', [('spawrious_gsc', 0.5, 0), ('spawrious_gsc', 0.1, 0), ('spawrious_gci', 0.1, 0),
    ('spawrious_gci_100', 0.5, 0), ('spawrious_gai', 0.5, 0.04), ('spawrious_4', 0.5, 0.07), ('waterbirds_dist', 0.5, 0.09)])
def test_scaling_drift_matches_spec(name, scale, worst):
    assert round(float(scale_drift(name, scale)['max_drift'].max()), 2) == worst

@SETTINGS
@given(matrices(), st.floats(0.01, 3), st.integers(0, 3))
def test_scaling_keeps_integers_and_support(Ns, s, mn):
    S = scale_federation(Ns, s, min_nonzero=mn)
    assert S.dtype == np.int64 and S.shape == Ns.shape
    assert (S[Ns == 0] == 0).all() and (S[Ns > 0] >= mn).all()
    assert (np.abs(S - Ns * s) <= np.maximum(0.5, mn) + 1e-9).all()

def test_scale_drift_metrics_table():
    df = scale_drift('waterbirds_dist', 0.25, level='metrics')
    assert list(df.index) == list(METRICS) and (df.drift >= 0).all()
    with pytest.raises(ValueError, match='scale=-1'): scale_federation('cmnist_gsc', -1)

# ---------------------------------------------------------------- partitioners
def pool_for(Ns, extra, seed):
    "A shuffled pool holding the global matrix plus `extra` samples per cell."
    G = Ns.sum(0) + extra; Y, A = G.shape
    y = np.repeat(np.arange(Y * A) // A, G.reshape(-1)); a = np.repeat(np.arange(Y * A) % A, G.reshape(-1))
    perm = np.random.default_rng(seed).permutation(len(y)); return y[perm], a[perm]

@SETTINGS
@given(matrices(max_y=3, max_a=3, max_k=5), st.integers(0, 3), st.integers(0, 2**31))
def test_partition_from_matrices_exact(Ns, extra, seed):
    y, a = pool_for(Ns, extra, seed % 7)
    parts = partition_from_matrices(y, a, Ns, seed)
    allidx = np.concatenate(parts)
    assert len(np.unique(allidx)) == len(allidx) == Ns.sum()                               # disjoint, exact total
    got = np.stack([interaction_matrix(y[p], a[p], *Ns.shape[1:]) for p in parts])
    np.testing.assert_array_equal(got, Ns)                                                 # exact counts
    again = partition_from_matrices(y, a, Ns, seed)
    assert all((p == q).all() for p, q in zip(parts, again))                               # deterministic

@SETTINGS
@given(matrices(max_y=3, max_a=3, max_k=5), st.integers(0, 100))
def test_partition_from_matrices_short_pool(Ns, seed):
    cell = np.unravel_index(np.argmax(Ns.sum(0)), Ns.shape[1:])
    extra = np.zeros(Ns.shape[1:], int); extra[cell] = -1
    y, a = pool_for(Ns, extra, seed)
    with pytest.raises(ValueError, match=rf"cell \(y={cell[0]}, a={cell[1]}\): the clients need {Ns.sum(0)[cell]} samples"):
        partition_from_matrices(y, a, Ns, seed)

@SETTINGS
@given(st.integers(20, 300), st.integers(1, 8), st.floats(0.05, 20), st.integers(0, 1000), st.booleans())
def test_random_partitioners(n, K, alpha, seed, group):
    rng = np.random.default_rng(seed); y, a = rng.integers(0, 3, n), rng.integers(0, 2, n)
    over = 'group' if group else 'class'
    splits = {'iid': lambda s: partition_iid(y, K, s),
              'dirichlet': lambda s: partition_dirichlet(y, K, alpha, s, a=a, over=over, min_size=0),
              'shards': lambda s: partition_shards(y, K, s, shards_per_client=2, a=a, over=over)}
    for name, f in splits.items():
        parts = f(seed); allidx = np.concatenate(parts)
        assert len(parts) == K and len(np.unique(allidx)) == len(allidx) == n, name           # disjoint, covering
        assert all((p == q).all() for p, q in zip(parts, f(seed))), name                      # deterministic
        assert all(p.dtype == np.int64 for p in parts)

def test_partition_seeds_differ():
    y = np.arange(200) % 4
    p0, p1 = partition_dirichlet(y, 5, 0.5, 0), partition_dirichlet(y, 5, 0.5, 1)
    assert [p.tolist() for p in p0] != [p.tolist() for p in p1]

def test_balanced_split():
    y, a = np.arange(400) % 2, (np.arange(400) // 2) % 2
    tr, te = balanced_split(y, a, 2, 2, 10, seed=3, reserve=[[50, 50], [50, 50]])
    assert interaction_matrix(y[te], a[te], 2, 2).tolist() == [[10, 10], [10, 10]]
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 400
    with pytest.raises(ValueError, match=r'cell \(y=0, a=0\): training needs 101'): balanced_split(y, a, 2, 2, 1, 0, [[101, 0], [0, 0]])

# ---------------------------------------------------------------- FederatedData
def toy(seed=0, n_per=60):
    g = torch.Generator().manual_seed(seed)
    y, a = torch.arange(4).repeat_interleave(n_per) // 2, torch.arange(4).repeat_interleave(n_per) % 2
    return torch.randn(len(y), 3, 4, 4, generator=g), y, a

def test_federated_data_from_matrices():
    x, y, a = toy(n_per=230)
    Ns = scale_federation('spawrious_gai', 0.1)
    fd = FederatedData.from_pool(x, y, a, Ns, seed=0, test_per_group=5)
    np.testing.assert_array_equal(fd.interaction(), Ns)
    assert fd.num_clients == 25 and fd.test_interaction().tolist() == [[5, 5], [5, 5]]
    assert fd.class_names == ['y0', 'y1'] and fd.x.dtype == torch.float32
    xs, ys, as_ = fd.client(0); assert xs.shape[1:] == (3, 4, 4) and len(ys) == fd.client_sizes[0]
    assert len(FlwrPartitioner(fd).load_partition(24)) == fd.client_sizes[24]
    spec = federation('spawrious_gsc')
    with pytest.raises(ValueError, match='training needs'): FederatedData.from_pool(x, y, a, spec, seed=0)

def test_federated_data_validation():
    x, y, a = toy()
    ok = dict(x=x, y=y, a=a, client_idx=[torch.arange(3), torch.arange(3, 6)], x_test=x[:2], y_test=y[:2], a_test=a[:2],
              n_classes=2, n_attrs=2)
    FederatedData(**ok)
    for change, msg in [(dict(client_idx=[torch.arange(3), torch.arange(2, 6)]), 'clients overlap'),
                        (dict(client_idx=[torch.tensor([999])]), 'indices must lie in'),
                        (dict(y=y[:-1]), 'y: length'), (dict(n_classes=1), 'y: labels must lie in [0, 1)'),
                        (dict(x_test=x[:2, :2]), 'x_test: sample shape'), (dict(y=y.float()), 'expected integer labels')]:
        with pytest.raises((ValueError, TypeError)) as e: FederatedData(**{**ok, **change})
        assert msg in str(e.value), (msg, str(e.value))

@SETTINGS
@given(st.integers(1, 6), st.integers(1, 9), st.booleans(), st.integers(0, 100))
def test_stacked(K, bs, shuffle, seed):
    x, y, a = toy(n_per=15)
    fd = FederatedData.from_pool(x, y, a, lambda y, a, s: partition_dirichlet(y, K, 0.7, s), seed=seed, test_per_group=2)
    ids = list(range(K))[::-1]
    s = fd.stacked(ids, batch_size=bs, shuffle=shuffle, seed=seed)
    assert s.mask.shape[1] % bs == 0 and s.mask.shape[1] >= int(fd.client_sizes.max())
    assert s.sizes.tolist() == fd.client_sizes[ids].tolist() and (s.mask.sum(1) == s.sizes).all()
    for c, k in enumerate(ids):
        xs, ys, as_ = fd.client(k); m = s.mask[c]
        assert sorted(ys.tolist()) == sorted(s.y[c][m].tolist())
        assert torch.allclose(s.x[c][m].sum(0), xs.sum(0), atol=1e-4)
        assert bool(m[:int(s.sizes[c])].all())                        # real samples first, padding last
    assert (s.x[~s.mask] == 0).all()
    s2 = fd.stacked(ids, batch_size=bs, shuffle=shuffle, seed=seed)
    assert torch.equal(s.y, s2.y) and torch.equal(s.x, s2.x)

def test_loader_determinism_and_device():
    x, y, a = toy(n_per=100)
    fd = FederatedData.from_pool(x, y, a, scale_federation('spawrious_gsc', 0.05), seed=1, test_per_group=4)
    b1 = [b[1].tolist() for b in fd.client_loader(2, batch_size=3, seed=5)]
    assert b1 == [b[1].tolist() for b in fd.client_loader(2, batch_size=3, seed=5)]
    assert sum(len(b) for b in b1) == 10
    assert fd.to('cpu').interaction().tolist() == fd.interaction().tolist()
    if torch.cuda.is_available():
        g = fd.to('cuda'); assert g.x.is_cuda and g.interaction().tolist() == fd.interaction().tolist()

# ---------------------------------------------------------------- bad input never surprises (regression tests)
def test_client_types_types_a_single_triplet():
    "A single 1-D triplet is typed with the default tie='join'."
    assert client_types(dht(federation('spawrious_gsc').matrices[0])) == 'CI'
    assert client_types([0.2, 0.2, 0.1]) == 'CI=AI'

def test_partition_dirichlet_impossible_min_size_fails_up_front():
    "min_size that no draw can reach (4 clients x 21 > 20 samples) is refused before any draw, even with max_tries=10**7."
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match=r'min_size=21: 4 clients x 21 samples need 84'):
        partition_dirichlet(y, 4, 1.0, 0, min_size=21, max_tries=10**7)

@pytest.mark.parametrize('w', [[-1, 2], [0, 0], [np.nan, 1], [np.inf, 1]])
def test_entropy_and_hellinger_reject_bad_weights(w):
    "Negative, all-zero, NaN or infinite weights raise a ValueError naming the argument, never a NaN result."
    from hetfl_explore.foundation.hetero import entropy
    with pytest.raises(ValueError, match=r'^p: '): entropy(w)
    with pytest.raises(ValueError, match=r'^p: '): hellinger(w, [1, 1])
    with pytest.raises(ValueError, match=r'^q: '): js_divergence([1, 1], w)

def test_scale_federation_refuses_counts_that_overflow():
    "Scaling to counts beyond 2**53 raises instead of overflowing to negative counts."
    with pytest.raises(ValueError, match=r'scale=1e\+300.*MAX_COUNT'): scale_federation(federation('spawrious_gsc'), 1e300)

def test_dht_refuses_counts_above_max_count():
    "Counts too large for exact float64 arithmetic raise a ValueError naming the cell, not an OverflowError."
    with pytest.raises(ValueError, match=r'N: cell \(y=0, a=0\) = 1e\+308 is above MAX_COUNT'): dht([[1e308] * 2] * 2)

def test_interaction_matrix_of_an_empty_client_is_zero():
    "An empty client is valid input: its interaction matrix is all zeros."
    np.testing.assert_array_equal(interaction_matrix([], [], 2, 2), np.zeros((2, 2), np.int64))
    assert interaction_matrix(torch.zeros(0, dtype=torch.long), [], 3, 2).shape == (3, 2)

def test_seeds_beyond_63_bits_rejected():
    "Seeds >= 2**63 fail validation with the argument named, before torch sees them."
    from hetfl_explore.foundation.core import spawn_seeds, torch_generator, seed_everything
    for f in (lambda: spawn_seeds(2**64, 1), lambda: torch_generator(2**63), lambda: seed_everything(2**64), lambda: partition_iid([0, 1], 1, 2**64)):
        with pytest.raises(ValueError, match=r'seed=\d+: expected an integer in \[0, 9223372036854775807\]'): f()
