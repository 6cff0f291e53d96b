"""The Flower adapter: a `Selector` as a strategy of Flower's message API replays the engine's run.

The stub-grid tests run in process; `test_flower_simulation_matches_engine` starts Flower's simulation runtime (Ray)
with two supernodes, as CI does.
"""
import numpy as np
import pytest
torch = pytest.importorskip('torch')
pytest.importorskip('flwr')
from hetfl_explore.engine.protocol import UniformSelector, RoundRobinSelector, Selector, Selection
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation, run_fl
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.models import mlp
from hetfl_explore.selection.efficiency import PowD
from hetfl_explore.selection.inclusion import FedDropout
from hetfl_explore.scale.flower import (FlowerClients, SelectorStrategy, StubGrid, MessageLog, check_hostable, run_flower,
                                        message_bytes, STUB_NODE_BASE, MEASURED)

MODEL = lambda: mlp(64, 16, 10)
CFG = RunConfig(rounds=3, clients_per_round=2, batch_size=16, lr=0.05, seed=3, backend='sequential')

@pytest.fixture(scope='module')
def data(): return digits_federation(num_clients=5, alpha=0.5, seed=1)

MEASURED_COLS = {'bytes', 'total_bytes', *(f'{m}_{k}' for k in MEASURED for m in ('msg', 'bytes'))}

def same_run(a, b):
    "Same selections, same per-round records (wall time and the bytes Flower measures aside) and the same final weights to 1e-6."
    assert a.rounds.selected.tolist() == b.rounds.selected.tolist()
    cols = [c for c in a.rounds.columns if c != 'wall_time' and c not in MEASURED_COLS]
    assert list(a.rounds.columns) == list(b.rounds.columns)
    assert a.rounds[cols].fillna(-1).equals(b.rounds[cols].fillna(-1))
    assert (a.final_params - b.final_params).abs().max().item() <= 1e-6

@pytest.mark.parametrize('make', [UniformSelector, RoundRobinSelector, lambda: PowD(d=4)])
def test_stub_grid_matches_engine(data, make):
    flower, log = run_flower(MODEL, data, make(), CFG)
    same_run(flower, run_fl(MODEL, data, make(), CFG))

def test_messages_are_counted_by_type(data):
    _, log = run_flower(MODEL, data, PowD(d=4), CFG)
    s = log.summary().set_index(['type', 'direction'])
    assert s.loc[('query.attributes', 'sent'), 'messages'] == data.num_clients
    assert s.loc[('train', 'sent'), 'messages'] == s.loc[('train', 'received'), 'messages'] == CFG.rounds * CFG.clients_per_round
    assert s.loc[('query.loss', 'sent'), 'messages'] == CFG.rounds * 4      # d candidates asked every round
    P = sum(p.numel() for p in MODEL().parameters())
    assert s.loc[('train', 'received'), 'bytes'] >= 4 * P * CFG.rounds * CFG.clients_per_round   # float32 models come back

def test_round_rows_show_the_measured_messages(data):
    "Loss queries, downloads and uploads in the round rows are the MessageLog's; time queries and skipped uploads the engine's."
    flower, log = run_flower(MODEL, data, PowD(d=4), CFG)
    engine = run_fl(MODEL, data, PowD(d=4), CFG)
    df, P = log.frame(), sum(p.numel() for p in MODEL().parameters())
    for t, row in flower.rounds.iterrows():
        d = df[df['round'] == t]
        assert row.msg_query_loss == ((d.type == 'query.loss') & (d.direction == 'sent')).sum() == 4
        assert row.bytes_query_loss == d.bytes[d.type == 'query.loss'].sum()
        assert row.msg_download == ((d.type == 'train') & (d.direction == 'sent')).sum() == CFG.clients_per_round
        assert row.bytes_download == d.bytes[(d.type == 'train') & (d.direction == 'sent')].sum()
        assert row.msg_upload == ((d.type == 'train') & (d.direction == 'received')).sum() == CFG.clients_per_round
        assert row.bytes_upload == d.bytes[(d.type == 'train') & (d.direction == 'received')].sum()
        assert row.bytes == sum(row[f'bytes_{k}'] for k in ('query_loss', 'query_time', 'download', 'upload', 'skipped'))
    for k in MEASURED:   # same counts as the engine's formula (no dropouts here), more bytes (names, shapes, plan, configs)
        assert flower.rounds[f'msg_{k}'].tolist() == engine.rounds[f'msg_{k}'].tolist()
        assert (flower.rounds[f'bytes_{k}'] > engine.rounds[f'bytes_{k}']).all()
    assert flower.rounds.bytes_upload.min() >= 4 * P * CFG.clients_per_round
    assert np.allclose(flower.rounds.total_bytes, flower.rounds.bytes.cumsum())
    assert flower.rounds[['msg_query_time', 'msg_skipped']].equals(engine.rounds[['msg_query_time', 'msg_skipped']])

def test_stub_grid_routes_by_node_id(data):
    clients = FlowerClients(MODEL, data, CFG)
    grid = StubGrid(clients)
    assert grid.get_node_ids() == [STUB_NODE_BASE + k for k in range(data.num_clients)]
    sim = Simulation(MODEL, data, UniformSelector(), CFG)
    strategy = SelectorStrategy(sim)
    msgs = strategy.configure_train(1, None, None, grid)
    assert strategy.nodes == {k: STUB_NODE_BASE + k for k in range(data.num_clients)}
    assert [m.metadata.dst_node_id - STUB_NODE_BASE for m in msgs] == strategy._pending.rep.tolist()
    assert all(message_bytes(m) > 0 for m in msgs)

def test_wrong_sizes_are_refused(data):
    other = digits_federation(num_clients=5, alpha=0.5, seed=2)
    sim = Simulation(MODEL, data, UniformSelector(), CFG)
    with pytest.raises(ValueError, match='data sizes'):
        SelectorStrategy(sim).configure_train(1, None, None, StubGrid(FlowerClients(MODEL, other, CFG)))

class KeepHalf(UniformSelector):
    "A uniform selector that asks for half sub-models without declaring it in its taxonomy."
    def select(self, t, clients, k, rng):
        ids = super().select(t, clients, k, rng).ids
        return Selection(ids, keep=np.full(len(ids), 0.5))

def test_unhostable_selector_is_refused(data):
    with pytest.raises(ValueError, match='cannot run as a Flower strategy'): check_hostable(FedDropout())
    with pytest.raises(ValueError, match='sub-model'): run_flower(MODEL, data, KeepHalf(), CFG)
    with pytest.raises(ValueError, match='cannot run as a Flower strategy'): run_flower(MODEL, data, FedDropout(), CFG)
    with pytest.raises(TypeError, match='selector'): run_flower(MODEL, data, 'uniform', CFG)

def test_flower_simulation_matches_engine():
    two = digits_federation(num_clients=2, alpha=0.5, seed=0)
    cfg = RunConfig(rounds=3, clients_per_round=1, batch_size=16, lr=0.05, seed=0, backend='sequential')
    flower, log = run_flower(MODEL, two, UniformSelector(), cfg, runtime='simulation', num_cpus=2)
    same_run(flower, run_fl(MODEL, two, UniformSelector(), cfg))
    assert log.summary().set_index(['type', 'direction']).loc[('train', 'received'), 'messages'] == cfg.rounds

def test_attributes_travel_as_query_messages(data):
    from hetfl_explore.feddiverse.selector import oracle_triplets
    from hetfl_explore.scale.sweeps import interaction_matrices
    trip = oracle_triplets(interaction_matrices(data))
    h, _ = run_flower(MODEL, data, UniformSelector(), CFG, attributes=lambda k: {'triplet': [float(v) for v in trip[k]]})
    got = h.meta['client_attributes']
    assert [got[k]['n_samples'] for k in range(data.num_clients)] == [len(i) for i in data.client_idx]
    assert all(abs(a - b) < 1e-12 for k in range(data.num_clients) for a, b in zip(got[k]['triplet'], trip[k]))

ODD = lambda t, ids, u, g: (ids % 2 == 0, ['odd' if k % 2 else None for k in ids])
CE2 = lambda out, y, params, n_data: 2 * torch.nn.functional.cross_entropy(out, y, reduction='none')   # a different objective

@pytest.mark.parametrize('kw', [dict(accept=ODD), dict(client_loss=CE2)], ids=['accept', 'client_loss'])
def test_engine_hooks_run_through_flower(data, kw):
    "The engine's accept filter (server side) and a client loss (client side) act through Flower exactly as in the engine."
    flower, _ = run_flower(MODEL, data, UniformSelector(), CFG, **kw)
    engine = run_fl(MODEL, data, UniformSelector(), CFG, **kw)
    same_run(flower, engine)
    plain = run_fl(MODEL, data, UniformSelector(), CFG)
    assert (flower.final_params - plain.final_params).abs().max().item() > 1e-3   # the hook changed the run
    if 'accept' in kw: assert all(r == {k: 'odd' for k in s if k % 2} for r, s in zip(flower.rounds.rejected, flower.rounds.selected))

def test_the_adapter_uses_only_the_engines_public_round():
    "The strategy drives the engine through `begin_round` / `finish_round`, never its private step methods."
    import inspect, re
    import hetfl_explore.scale.flower as fl
    private = set(re.findall(r'sim\._([a-z]\w*)\(', inspect.getsource(fl)))
    assert not private, f"the adapter calls private engine methods: {sorted(private)}"

class FakeRay:
    "Just enough of Ray for pickling: an initialised runtime with an object store that counts its puts."
    class Ref:
        def __init__(self, i): self.i = i
        def hex(self): return f'ref{self.i}'
    def __init__(self): self.store = {}
    def is_initialized(self): return True
    def put(self, obj):
        ref = self.Ref(len(self.store)); self.store[ref.hex()] = obj; return ref
    def get(self, ref): return self.store[ref.hex()]

def test_client_app_ships_the_data_once_while_ray_runs(data, monkeypatch):
    "Flower's Ray backend pickles the ClientApp with every message: the federation goes into the object store once, each pickle is a handle."
    import pickle, sys, cloudpickle
    import hetfl_explore.scale.flower as fl
    clients = FlowerClients(MODEL, data, CFG)
    app = clients.client_app()
    whole = len(cloudpickle.dumps(lambda: app))
    ray = FakeRay(); monkeypatch.setitem(sys.modules, 'ray', ray); monkeypatch.setattr(fl, '_SHIPPED', {})
    sizes = [len(cloudpickle.dumps(lambda: app)) for _ in range(3)]
    assert len(ray.store) == 1 and max(sizes) < whole / 10, (sizes, whole)
    a, b = (pickle.loads(pickle.dumps(clients)) for _ in range(2))
    assert a is b and len(fl._SHIPPED) == 1                     # one copy per worker process, reused by every message
    x, y = a.rows(2)
    assert torch.equal(y, clients.rows(2)[1]) and torch.equal(x, clients.rows(2)[0])

def test_importing_the_adapter_under_an_unsupported_flower_names_the_range_and_the_install():
    "An installed Flower outside the supported range stops the import with what to install, before Flower is imported."
    import subprocess, sys
    code = ("import importlib.metadata as m; real = m.version; m.version = lambda n: '1.10.0' if n == 'flwr' else real(n)\n"
            "import hetfl_explore.scale.flower")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and 'ImportError' in out.stderr
    assert "flwr 1.10.0 is installed, outside the supported range: pip install 'hetfl_explore[flower]' (flwr>=1.22,<2)" in out.stderr
