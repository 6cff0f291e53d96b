"""Crowd baselines and the selection race (Tahir, 2025, §5.8.2): orderings, budgets, the pool's clock and the race table."""
import numpy as np, pandas as pd, pytest
from hetfl_explore.crowd.devices import DevicePool
from hetfl_explore.crowd.baselines import (CrowdRandom, GreedyPerCost, PriceFirst, ResourceAware, Budgeted, selection_race, race_table,
                                           TRAIN_FLOPS_PER_FORWARD)
from hetfl_explore.crowd.promethee import PrometheeSelector
from hetfl_explore.engine.protocol import make_view, UniformSelector
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.models import mlp
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.simulation import BYTES_PER_PARAM
from hetfl_explore.engine.backends import model_profile
from hetfl_explore.selection.efficiency import PowD

def test_orderings_by_hand():
    pool = DevicePool(np.array([0, 3, 1, 2]), np.array([0, 3, 1, 0]))        # costs 1, 10, 4, 4
    view = make_view(4, n_samples=np.array([10, 100, 80, 8]))
    rng = np.random.default_rng(0)
    assert PriceFirst(pool).select(0, view, 2, rng).ids.tolist() == [0, 2]   # 1, then the first of the 4s
    assert GreedyPerCost(pool).select(0, view, 2, rng).ids.tolist() == [2, 0]  # 80/4 = 20, then 10/1 = 100/10 = 10 (tie: lower id)
    h = pool.scores(0); best = int(np.argmax(h['H'] + h['N']))
    assert ResourceAware(pool).select(0, view, 1, rng).ids.tolist() == [best]
    assert PriceFirst(pool, budget=9.0).select(0, view, 4, rng).ids.tolist() == [0, 2, 3]   # 1 + 4 + 4 = 9

def test_budgeted_keeps_inner_order_within_budget():
    pool = DevicePool.sample(12, seed=3); b = Budgeted(UniformSelector(), pool, 12.0); b.reset(12, 0)
    ids = b.select(0, make_view(12), 6, np.random.default_rng(1)).ids
    inner = UniformSelector().select(0, make_view(12), 6, np.random.default_rng(1)).ids
    assert pool.cost[ids].sum() <= 12.0 and set(ids) <= set(inner)

def test_race_clock_table_and_errors():
    n, data = 12, digits_federation(num_clients=12, alpha=0.5, seed=0)
    pool, cfg = DevicePool.sample(n, seed=0), RunConfig(rounds=3, clients_per_round=4, batch_size=8, seed=0)
    race = selection_race([PriceFirst(pool, 15.0), PrometheeSelector(pool, budget=15.0)], pool, data, lambda: mlp(64, 16), cfg)
    assert (race['money'] <= 15.0).all() and len(race) == 6
    prof = model_profile(mlp(64, 16), data.x[0]); sizes = np.array([len(i) for i in data.client_idx])
    r0 = race.iloc[0]                                                         # no dropouts: reported == selected
    assert r0['time'] == pytest.approx(pool.round_time(0, r0['selected'], sizes[r0['selected']] * TRAIN_FLOPS_PER_FORWARD * prof['flops'],
                                                       BYTES_PER_PARAM * prof['params']))
    t = race_table(race, sizes, 0.0)
    pf = race[race.method == 'Price-first']; chosen = set(np.concatenate(pf['selected'].to_list()))
    assert t.loc['Price-first', 'unique clients'] == len(chosen) and t.loc['Price-first', 'unique samples'] == sizes[list(chosen)].sum()
    assert t.loc['Price-first', 'money'] == pytest.approx(pf['money'].sum()) and t['ToA@0 (s)'].notna().all()
    with pytest.raises(ValueError, match='selectors'): selection_race([PriceFirst(pool), PriceFirst(pool)], pool, data, lambda: mlp(64, 16), cfg)
    with pytest.raises(ValueError, match='data has 12 clients'): selection_race([PriceFirst(DevicePool.sample(5))], DevicePool.sample(5), data, lambda: mlp(64, 16), cfg)
