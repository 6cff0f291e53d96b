"""pfl-research's public Flower comparison as a workload of benchmarks/engine.py (`cifar1000`): the split, the model,
the real CIFAR-10 files when present (a stand-in of the same shape otherwise), and the Flower section of the record."""
import importlib.util, json, pathlib, pickle, sys
import numpy as np
import pytest
import torch

BENCH = pathlib.Path(__file__).parents[1] / 'benchmarks'

@pytest.fixture(scope='module')
def eng():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location('engine', BENCH / 'engine.py')
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

def test_pfl_cnn_is_pfl_researchs_cifar_cnn_without_dropout(eng):
    net = eng.pfl_cnn()
    assert (
        sum(p.numel() for p in net.parameters()) == 896 + 18_496 + 12_544 * 128 + 128 + 1_290
    )  # conv 32, conv 64, dense 128, 10 outputs
    assert not any(isinstance(m, torch.nn.Dropout) for m in net.modules())
    assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)

def test_standin_has_cifar10s_shape_and_the_split_is_pfl_researchs(eng, monkeypatch, tmp_path):
    monkeypatch.setenv(eng.CIFAR_ROOT_ENV, str(tmp_path))   # an empty folder: no CIFAR-10 files, the stand-in
    monkeypatch.setattr(eng, 'CIFAR', dict(clients=20, per_client=50, test=100))
    w = eng.cifar_federation()
    d = w['data']
    assert w['source'].startswith('stand-in') and d.x.shape[1:] == (3, 32, 32) and d.n_classes == 10
    assert d.num_clients == 20 and set(d.client_sizes.tolist()) == {50} and len(d.x_test) == 100
    assert float(d.x.min()) >= 0 and float(d.x.max()) <= 1
    assert torch.equal(eng.cifar_federation()['data'].x, d.x)   # seeded

def write_cifar_batches(root, n_per_batch, seed=0):
    "Small files in CIFAR-10's python-pickle format (5 training batches and a test batch)."
    folder = root / 'cifar-10-batches-py'
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for name in [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']:
        batch = {
            b'data': rng.integers(0, 256, (n_per_batch, 3072), dtype=np.uint8),
            b'labels': rng.integers(0, 10, n_per_batch).tolist(),
        }
        (folder / name).write_bytes(pickle.dumps(batch))

def test_real_cifar_files_are_read_when_present(eng, monkeypatch, tmp_path):
    write_cifar_batches(tmp_path, 40)
    monkeypatch.setenv(eng.CIFAR_ROOT_ENV, str(tmp_path))
    monkeypatch.setattr(eng, 'CIFAR', dict(clients=10, per_client=20, test=30))
    w = eng.cifar_federation()
    assert (
        w['source'] == f'CIFAR-10 files under {tmp_path}'
        and w['data'].num_clients == 10
        and len(w['data'].x_test) == 30
    )
    x = eng.load_cifar(tmp_path)[0]
    mean = torch.tensor(eng.CIFAR_MEAN)[:, None, None]
    std = torch.tensor(eng.CIFAR_STD)[:, None, None]
    assert torch.allclose(w['data'].x, (x - mean) / std)   # pfl-research's normalisation

def test_workload_is_pfl_researchs_config(eng, monkeypatch):
    monkeypatch.setattr(eng, 'CIFAR', dict(clients=4, per_client=50, test=10))
    cfg = eng.workloads(quick=True)['cifar1000']()['config']
    assert (cfg.clients_per_round, cfg.batch_size, cfg.local_epochs, cfg.lr, cfg.aggregator) == (
        50,
        10,
        1,
        0.1,
        'fedavg',
    )

def test_flower_section_holds_every_flower_runner_measured_in_one_run():
    rec = json.loads((BENCH / 'results' / 'engine.json').read_text())
    sec = rec['sections']['flower']
    for name in ('cmnist24', 'digits1000', 'cifar1000'):
        runners = sec['workloads'][name]['runners']
        assert {'engine-sequential', 'plain', 'flower', 'flower-plain', 'flower-fedavg', 'flower-feddiverse'} <= set(
            runners
        ), (
            name,
            sec['workloads'][name]['skipped'],
        )
        for row in runners.values():
            assert row['clients_per_s'] > 0 and 'steady_speedup_vs_flower' in row
        assert 'steady_over_flower_plain' in runners['flower']
        # the anchor: the faster of the plain app's two resource settings, both kept
        plain = runners['flower-plain']
        assert set(plain['steady_by_resources']) == {'default', 'one-cpu'}
        assert plain['steady_s_per_round'] == min(plain['steady_by_resources'].values())
        assert plain['resources'] == min(plain['steady_by_resources'], key=plain['steady_by_resources'].get)
        # what FedDiverse sampling costs a Flower user
        assert 'steady_over_flower_fedavg' in runners['flower-feddiverse']
    assert 'data_source' in sec['workloads']['cifar1000'] and sec['machine']['loadavg_before']
