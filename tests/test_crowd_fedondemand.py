"""FedOnDemand steps (Tahir, 2025, ch. 4): eligibility, preliminary training, cohort sizing (erratum: the printed
formula is not a bound), and the per-round Shapley ledger in the engine."""
import math
import numpy as np, pytest, torch
from hetfl_explore.crowd import fedondemand as F
from hetfl_explore.crowd.devices import DevicePool, TaskRequirements
from hetfl_explore.crowd.promethee import PrometheeSelector
from hetfl_explore.crowd.shapley import shapley_exact
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.models import mlp

def test_eligible_by_hand():
    pool = DevicePool.sample(30, seed=2); req = TaskRequirements(ram_gb=1.0, storage_gb=5.0, bandwidth_mbps=8.0)
    s = pool.state(0)
    want = np.flatnonzero(((s['free_ram_gb'] >= 1.0) & (s['storage_gb'] >= 5.0) & (s['bandwidth_mbps'] >= 8.0)).to_numpy())
    assert F.eligible_devices(pool, req).tolist() == want.tolist()
    assert len(F.register(pool)) == 30

def test_cohort_size_formulas_by_hand():
    assert F.cohort_size_heuristic([0.5, 1.0], [0.1, 0.2], 0.1, 0.05) == math.ceil((1.8 + 0.5 * math.log(2 / 0.05)) / 0.1)
    assert F.pac_bayes_gap(100, 2.0, 0.1, 1.0) == pytest.approx(math.sqrt((2.0 + math.log(2 * 10 / 0.1)) / 200))
    for eps in (0.3, 0.1, 0.05):
        n = F.pac_bayes_sample_size(eps, 3.0, 0.05)
        assert F.pac_bayes_gap(n, 3.0, 0.05) <= eps < F.pac_bayes_gap(n - 1, 3.0, 0.05)
    assert F.pac_bayes_sample_size(0.05, 3.0, 0.05) > F.pac_bayes_sample_size(0.1, 3.0, 0.05)   # smaller error, more samples
    assert F.cohort_for_samples([3, 0, 2], np.array([10, 5, 7, 20]), 25).tolist() == [3, 0]

def test_preliminary_training_measures_the_test_set():
    data = digits_federation(num_clients=8, alpha=0.5, seed=0)
    pre = F.preliminary_training(lambda: mlp(64, 16), data, [0, 3, 5], RunConfig(batch_size=8, lr=0.2, seed=0))
    assert pre['device'].tolist() == [0, 3, 5] and (pre['test_loss'] > 0).all()
    assert pre['n_samples'].tolist() == [len(data.client_idx[k]) for k in (0, 3, 5)]
    again = F.preliminary_training(lambda: mlp(64, 16), data, [0, 3, 5], RunConfig(batch_size=8, lr=0.2, seed=0))
    np.testing.assert_allclose(pre['test_loss'], again['test_loss'])                       # deterministic
    with pytest.raises(ValueError, match='empty population'): F.preliminary_training(lambda: mlp(64, 16), data, [], RunConfig())

def test_shapley_ledger_is_efficient_every_round():
    "Each round's values sum to v(S) - v(empty): the validation-loss drop of FedAvg's aggregate of all reporters."
    data, pool = digits_federation(num_clients=10, alpha=0.5, seed=0), DevicePool.sample(10, seed=0)
    led, losses = F.ShapleyLedger(PrometheeSelector(pool)), []
    sim = Simulation(lambda: mlp(64, 16), data, led, RunConfig(rounds=3, clients_per_round=4, batch_size=8, seed=0, val_fraction=0.3),
                     callbacks=[lambda sim, row: losses.append(sim._server_eval(sim.params)[1])])
    losses.insert(0, sim._server_eval(sim.params)[1])
    h = sim.run(progress=False)
    V = led.ledger(); assert V.shape == (3, 10)
    for t, row in enumerate(h.rounds.itertuples()):
        assert set(np.flatnonzero(V[t])) <= set(row.reported)
        assert V[t].sum() == pytest.approx(losses[t] - losses[t + 1], abs=1e-5)
    with pytest.raises(ValueError, match='val_fraction'):
        Simulation(lambda: mlp(64, 16), data, F.ShapleyLedger(PrometheeSelector(pool)), RunConfig(rounds=1, clients_per_round=2, seed=0)).run(progress=False)
