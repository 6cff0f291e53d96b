"The benchmark record's comparison rule, the bare-SGD ceiling's sanity rule, and the engine at many clients (no timing)."
import importlib.util, pathlib, sys
import numpy as np
import torch
from hetfl_explore.engine.backends import CPU_BLOCK_BUDGET_BYTES, block_size, model_profile
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.models import mlp
from hetfl_explore.engine.protocol import UniformSelector

BENCH = pathlib.Path(__file__).parents[1] / 'benchmarks'

def _load(name):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f'{name}.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

def _old(kind, **values):
    return dict(machine=dict(machine_kind=kind), figures={k: dict(value=v) for k, v in values.items()})

def test_record_flags_only_more_than_25_percent_worse_on_the_same_machine_kind():
    rec = _load('record')
    figs = dict(t=rec.fig(1.30), u=rec.fig(1.20), r=rec.fig(0.70, 'ratio', 'higher'), q=rec.fig(0.85, 'ratio', 'higher'), new=rec.fig(1.0))
    old = _old('cpu|2', t=1.0, u=1.0, r=1.0, q=1.0)
    c = rec.compare(figs, old, 'cpu|2')['figures']
    assert c['t']['worse'] and not c['u']['worse']          # time: 30% slower flagged, 20% not
    assert c['r']['worse'] and not c['q']['worse']          # ratio (higher is better): 1/0.70 - 1 = 43% worse flagged, 1/0.85 - 1 = 18% not
    assert abs(c['t']['ratio'] - 1.3) < 1e-12 and c['new']['ratio'] is None
    other = rec.compare(figs, old, 'another cpu|16')
    assert not other['same_machine_kind'] and not any(v['worse'] for v in other['figures'].values())  # other kind: shown, never flagged
    assert not any(v['worse'] for v in rec.compare(figs, None, 'cpu|2')['figures'].values())       # no record yet

def test_record_machine_has_cpu_cores_threads_load_and_versions():
    m = _load('record').machine((1.0, 2.0, 3.0))
    for k in ('cpu_model', 'cores', 'logical_cpus', 'torch_threads', 'loadavg_before', 'loadavg_after', 'packages', 'machine_kind'):
        assert k in m
    assert m['loadavg_before'] == [1.0, 2.0, 3.0] and 'torch' in m['packages'] and 'numpy' in m['packages']

def test_ceiling_slower_than_a_runner_is_invalid():
    eng = _load('engine')
    rows = {'engine-batched': dict(best_s_per_round=0.5), 'plain': dict(best_s_per_round=2.0)}
    assert eng.ceiling_check(0.4, rows) == dict(valid=True, runners_faster_than_ceiling={})
    bad = eng.ceiling_check(0.6, rows)
    assert not bad['valid'] and bad['runners_faster_than_ceiling'] == {'engine-batched': 0.5}

def test_digits_federation_holds_more_clients_than_digits():
    d = digits_federation(num_clients=2500, samples_per_client=(15, 25), seed=0)   # 2,500 clients > 1,797 digits
    assert d.num_clients == 2500 and all(15 <= len(i) <= 25 for i in d.client_idx)

def test_cpu_blocks_are_cache_sized_and_give_the_same_run():
    prof = model_profile(mlp(64, 32, 10), torch.zeros(64))
    assert 100 <= block_size(prof, 10, torch.device('cpu')) <= 4096     # the MLP: ~1,200 clients a block, not ~20,000
    assert CPU_BLOCK_BUDGET_BYTES <= 1 << 27
    d = digits_federation(num_clients=60, samples_per_client=(15, 25), seed=0)
    cfg = RunConfig(rounds=2, clients_per_round=60, batch_size=10, lr=0.05, backend='batched', device='cpu', seed=0)
    one = Simulation(lambda: mlp(64, 32, 10), d, UniformSelector(), cfg).run(progress=False)
    blocks = Simulation(lambda: mlp(64, 32, 10), d, UniformSelector(), RunConfig(**{**cfg.__dict__, 'block_clients': 7})).run(progress=False)
    assert torch.allclose(one.final_params, blocks.final_params, atol=1e-6)
    assert np.allclose(one.rounds.train_loss, blocks.rounds.train_loss, atol=1e-6)

def test_every_benchmark_writes_the_record_and_runs_in_make_bench():
    "Each script in benchmarks/ saves through `Bench` (machine, load, comparison with the committed record) and `make bench` runs it."
    ROOT = BENCH.parent
    scripts = sorted(p for p in (ROOT/"benchmarks").glob('*.py') if p.name != 'record.py')
    make = (ROOT/'Makefile').read_text().split('\nbench:', 1)[1].split('\n\n', 1)[0]
    assert [p.name for p in scripts if 'Bench(' not in p.read_text()] == []
    assert [p.name for p in scripts if f'benchmarks/{p.name}' not in make] == []

def test_a_record_without_machine_kind_is_compared_as_another_machine():
    rec = _load('record')
    cmp = rec.compare({'x': rec.fig(2.0)}, {'machine': 'x86_64', 'figures': {}}, 'AMD|2 cpus|1 threads')
    assert cmp['same_machine_kind'] is False and cmp['record_machine_kind'] is None and cmp['figures']['x']['ratio'] is None

def test_gpu_benchmark_deals_disjoint_clients_and_computes_speedups_from_its_runs():
    gpu = _load('gpu')
    base = digits_federation(num_clients=5, seed=0)
    d = gpu.dealt(base, 40, (3, 6), seed=1)
    assert d.num_clients == 40 and all(3 <= len(i) <= 6 for i in d.client_idx)
    assert all(len(torch.unique(d.x[i], dim=0)) == len(i) for i in d.client_idx)   # distinct pool rows within a client
    assert torch.equal(d.x_test, base.x_test)
    out = dict(device='cuda', counterpart_best_s_per_round=8.0,
               runners={'cuda batched': dict(steady_s_per_round=0.2), 'cpu (this machine)': dict(steady_s_per_round=5.0)})
    assert gpu.speedups(out) == {'cuda batched x this machine cpu': 25.0, 'cuda batched x project cpu': 40.0}
    cpu = dict(device='cpu', counterpart_best_s_per_round=0.25, runners={'cpu sequential': dict(steady_s_per_round=10.0)})
    assert gpu.speedups(cpu) == {'gpu record x cpu sequential': 40.0}
    before = torch.backends.cudnn.benchmark
    assert gpu.flagged(lambda: gpu.cudnn_flags(benchmark=not before), lambda: torch.backends.cudnn.benchmark) == (not before)
    assert torch.backends.cudnn.benchmark == before    # restored
