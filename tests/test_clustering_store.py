"""Clustering runs on the engine's run store: a finished run is read back with its record, an interrupted one
resumes."""
import numpy as np, pytest, torch
from hetfl_explore.engine.store import RunStore
from hetfl_explore.clustering.data import har_like_stream
from hetfl_explore.clustering.gpfl import FedAvg, GPFL, CFL, stream_record, STREAM_RECORD
from hetfl_explore.clustering.cafl import CAFL, FedCO, CMFL

ROUNDS = 6   # rounds after round 0: enough for GP-FL to re-group and CFL to split

@pytest.fixture(scope='module')
def stream():
    return har_like_stream(rounds=ROUNDS, seed=0)

def same_record(a, b):
    "Two records hold the same rounds: metrics, labels, uploads, logs, per-worker counts and final models."
    assert a.name == b.name
    np.testing.assert_equal(a.metrics, b.metrics)
    np.testing.assert_equal([np.asarray(l) for l in a.labels], [np.asarray(l) for l in b.labels])
    assert a.uplink == b.uplink and a.log == b.log
    for f in ('recur', 'freq'): np.testing.assert_equal(getattr(a, f), getattr(b, f))
    assert a.models.keys() == b.models.keys()
    for k in a.models: torch.testing.assert_close(a.models[k], b.models[k], rtol=0, atol=0)

ALGOS = dict(fedavg=lambda: FedAvg(frac=0.5), gpfl=lambda: GPFL(), cfl=lambda: CFL(eps2=0.2, warmup=2),
             cafl=lambda: CAFL(), fedco=lambda: FedCO(), cmfl=lambda: CMFL())

@pytest.mark.parametrize('name', ALGOS)
def test_a_stored_run_is_read_back_with_its_record(stream, name, tmp_path):
    path = str(tmp_path / 'runs.sqlite')
    plain = ALGOS[name]().run(stream, seed=1)
    first = ALGOS[name]().run(stream, seed=1, store=path)
    again = ALGOS[name]()
    kept = again.run(stream, seed=1, store=path)
    assert again.sim.round == 0                      # read back: the engine took no step
    assert len(RunStore(path).runs()) == 1           # one key: the run's identity is stable
    same_record(first, plain)                        # keeping a run does not change it
    same_record(kept, first)
    assert kept.history is again.sim.history and STREAM_RECORD in kept.history.meta

@pytest.mark.parametrize('name', ['gpfl', 'cfl', 'cafl'])
def test_an_interrupted_run_resumes_from_its_checkpoint(stream, name, tmp_path):
    path = str(tmp_path / 'runs.sqlite')
    whole = ALGOS[name]().run(stream, seed=2)
    cut = ALGOS[name]()
    sim = cut.simulation(stream, seed=2, store=path)
    for _ in range(3): sim.step()                    # each step leaves a checkpoint in the store
    assert RunStore(path).runs().status.tolist() == ['running']
    later = ALGOS[name]()
    resumed = later.run(stream, seed=2, store=path)
    assert later.sim.round == ROUNDS + 1
    same_record(resumed, whole)

def test_settings_change_the_key_and_the_run_state_does_not(stream, tmp_path):
    path = str(tmp_path / 'runs.sqlite')
    algo = GPFL()
    algo.run(stream, seed=0, store=path)
    algo.run(stream, seed=0, store=path)             # the same object again: its finished run is not part of its key
    GPFL(inflation=2.0).run(stream, seed=0, store=path)
    FedAvg().run(stream, seed=0, store=path)
    assert len(RunStore(path).runs()) == 3

def test_stream_record_names_what_is_missing(stream):
    h = FedAvg().run(stream, seed=0).history
    del h.meta[STREAM_RECORD]
    with pytest.raises(ValueError, match="stream_record"): stream_record(h)
    with pytest.raises(TypeError, match='history'): stream_record({'meta': {}})
