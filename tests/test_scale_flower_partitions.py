"""Flower Datasets partitioners over an in-memory `datasets.Dataset` of the package's data become federations
(`hetfl_explore.scale.partitions`): clients are the partitions, every selector runs on them, bad columns are named."""
import os, subprocess, sys, warnings
import numpy as np
import pytest
pytest.importorskip('flwr_datasets', reason='Flower Datasets is not installed: pip install hetfl_explore[flower]')
import torch
from flwr_datasets.partitioner import IidPartitioner, DirichletPartitioner, PathologicalPartitioner, ShardPartitioner
from hetfl_explore.scale.partitions import pool_dataset, federation_from_partitioner, federation_from_dataset, POOL_COLUMNS
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.foundation.hetero import fl_metrics
from hetfl_explore.feddiverse.registry import SELECTORS, make_selector
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import run_fl
from hetfl_explore.engine.models import mlp

warnings.filterwarnings('ignore', module='flwr_datasets')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = range(10)

@pytest.fixture(scope='module')
def digits(): return digits_federation(num_clients=1, alpha=None, seed=0)

def test_partitions_are_the_clients(digits):
    p = PathologicalPartitioner(8, 'label', 2, seed=3)
    fed = federation_from_partitioner(p, digits)
    assert fed.num_clients == 8 and torch.equal(fed.x, digits.x) and torch.equal(fed.y_test, digits.y_test)
    for k in range(8):
        assert fed.client_idx[k].tolist() == list(p.load_partition(k)['row'])
        assert len(torch.unique(fed.y[fed.client_idx[k]])) <= 2
    assert (fed.interaction().sum(0) <= digits.interaction()[0]).all()   # classes no partition drew are left out
    iid = federation_from_partitioner(IidPartitioner(8), digits)
    assert (iid.interaction().sum(0) == digits.interaction()[0]).all()

def test_classes_and_attributes_come_from_the_dataset(digits):
    flipped = pool_dataset(digits).map(lambda r: {'attribute': 1 - r['attribute']})
    fed = federation_from_partitioner(IidPartitioner(5), digits, flipped)
    assert torch.equal(fed.a, 1 - digits.a) and torch.equal(fed.y, digits.y)
    shuffled = pool_dataset(digits).shuffle(seed=0)   # rows in another order: the 'row' column maps them back
    assert torch.equal(federation_from_partitioner(IidPartitioner(5), digits, shuffled).a, digits.a)

def test_same_seed_same_clients(digits):
    a, b = (federation_from_partitioner(DirichletPartitioner(10, 'group', 0.3, min_partition_size=5, seed=4), digits) for _ in range(2))
    assert [i.tolist() for i in a.client_idx] == [i.tolist() for i in b.client_idx]

@pytest.mark.parametrize('seed', SEEDS)
def test_label_dirichlet_makes_class_imbalance_only(digits, seed):
    "Over labels, α = 0.1 raises the clients' CI far above IID and leaves AI and SC low; over groups AI and SC rise too."
    iid = fl_metrics(federation_from_partitioner(IidPartitioner(20), digits).interaction())
    lab = fl_metrics(federation_from_partitioner(DirichletPartitioner(20, 'label', 0.1, min_partition_size=1, seed=seed), digits).interaction())
    grp = fl_metrics(federation_from_partitioner(DirichletPartitioner(20, 'group', 0.1, min_partition_size=1, seed=seed), digits).interaction())
    assert lab['CCI'] > 0.5 > iid['CCI'] + 0.4 and lab['CAI'] < 0.1 and lab['CSC'] < 0.15
    assert grp['CCI'] > 0.3 and grp['CAI'] > 2 * lab['CAI'] and grp['CSC'] > lab['CSC'] + 0.2

def test_shards_keep_whole_shards(digits):
    fed = federation_from_partitioner(ShardPartitioner(20, 'label', num_shards_per_partition=2, seed=0), digits)
    assert set(fed.client_sizes.tolist()) == {74} and fl_metrics(fed.interaction())['CCI'] > 0.6

@pytest.mark.parametrize('name', list(SELECTORS))
def test_every_selector_runs_on_a_partition(digits, name):
    fed = federation_from_partitioner(DirichletPartitioner(12, 'group', 0.3, min_partition_size=10, seed=1), digits)
    cfg = RunConfig(rounds=2, clients_per_round=3, batch_size=16, lr=0.05, seed=0, backend='sequential')
    h = run_fl(lambda: mlp(64, 8, 10), fed, make_selector(name, fed.interaction()), cfg)
    assert len(h) == 2 and all(0 < len(s) <= fed.num_clients for s in h.rounds.selected)

def test_bad_columns_and_partitioners_are_named(digits):
    pool = pool_dataset(digits)
    with pytest.raises(ValueError, match="attribute='attribute'"): federation_from_partitioner(IidPartitioner(4), digits, pool.remove_columns('attribute'))
    with pytest.raises(ValueError, match="label='digit'"): federation_from_partitioner(IidPartitioner(4), digits, label='digit')
    with pytest.raises(ValueError, match="no 'row' column.*federation_from_dataset"): federation_from_partitioner(IidPartitioner(4), digits, pool.remove_columns('row'))
    with pytest.raises(ValueError, match="'row' column"): federation_from_partitioner(IidPartitioner(4), digits, pool.select(range(100)))
    used = IidPartitioner(4); federation_from_partitioner(used, digits)
    with pytest.raises(ValueError, match='already holds a dataset'): federation_from_partitioner(used, digits)
    with pytest.raises(TypeError, match='partitioner'): federation_from_partitioner('iid', digits)

def run_python(code):
    return subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'PYTHONPATH': ROOT, 'OMP_NUM_THREADS': '1'})

def test_missing_extra_names_the_install_command_and_the_core_never_imports_it():
    r = run_python("import sys; sys.modules['flwr_datasets'] = None\nimport hetfl_explore.scale.partitions")
    assert 'pip install hetfl_explore[flower]' in r.stderr and 'ImportError' in r.stderr, r.stderr[-500:]
    r = run_python("import sys, hetfl_explore\nassert not {'flwr_datasets', 'datasets', 'hetfl_explore.scale.partitions'} & set(sys.modules)")
    assert r.returncode == 0, r.stderr[-500:]

from hypothesis import given, settings, strategies as st, HealthCheck

@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(n=st.integers(1, 40), column=st.sampled_from(['label', 'group']), shards=st.integers(1, 3))
def test_partitions_are_disjoint_clients_of_the_pool(digits, n, column, shards):
    "Whatever the partitioner cuts, clients are disjoint pool rows with the pool's labels; IID shares out every row."
    for p in (IidPartitioner(n), ShardPartitioner(n, column, num_shards_per_partition=shards, seed=n)):
        fed = federation_from_partitioner(p, digits)
        rows = torch.cat(fed.client_idx)
        assert fed.num_clients == n and len(torch.unique(rows)) == len(rows) <= len(digits.y)
        assert torch.equal(fed.y[rows], digits.y[rows]) and torch.equal(fed.a[rows], digits.a[rows])
    iid = federation_from_partitioner(IidPartitioner(n), digits)
    assert iid.client_sizes.sum() == len(digits.y) and iid.client_sizes.max() - iid.client_sizes.min() <= 1


def own_dataset(n=1797):
    "A user's own Dataset: sklearn's digits with their own column names, no 'row' column."
    from datasets import Dataset
    from sklearn.datasets import load_digits
    X, Y = load_digits(return_X_y=True)
    return Dataset.from_dict({'pixels': X[:n].tolist(), 'digit': Y[:n].tolist(), 'bold': (X[:n].sum(1) > 300).astype(int).tolist()}), X[:n], Y[:n]

def test_a_users_dataset_becomes_a_federation_in_one_call():
    ds, X, Y = own_dataset()
    p = DirichletPartitioner(10, 'digit', 0.3, min_partition_size=5, seed=2)
    fed = federation_from_dataset(ds, p, features='pixels', label='digit', attribute='bold', test=0.25, seed=1)
    assert fed.num_clients == 10 and fed.n_classes == 10 and fed.n_attrs == 2
    assert int(fed.client_sizes.sum()) + len(fed.y_test) == len(ds)
    for k in range(10):   # client k holds exactly partition k's rows: its inputs, labels and attributes
        part = p.load_partition(k)
        assert torch.equal(fed.x[fed.client_idx[k]], torch.tensor(part['pixels'], dtype=torch.float32))
        assert fed.y[fed.client_idx[k]].tolist() == part['digit'] and fed.a[fed.client_idx[k]].tolist() == part['bold']
    several = federation_from_dataset(ds, IidPartitioner(4), features=['digit', 'bold'], label='digit', test=0.5)
    assert tuple(several.x.shape[1:]) == (2,) and several.n_attrs == 1

@pytest.mark.parametrize('kw, match', [(dict(features='image', label='digit'), "features='image'"),
                                       (dict(features='pixels'), "label='label'"),
                                       (dict(features='pixels', label='digit', attribute='colour'), "attribute='colour'"),
                                       (dict(features='pixels', label='digit', test=0.0), 'test')])
def test_federation_from_dataset_errors_name_the_argument(kw, match):
    ds, _, _ = own_dataset(200)
    with pytest.raises(ValueError, match=match): federation_from_dataset(ds, IidPartitioner(4), **kw)
