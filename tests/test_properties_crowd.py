"""Bad input never surprises (crowdsourced FL): every public callable of crowd.devices, crowd.promethee,
crowd.shapley, crowd.baselines, crowd.fedondemand, widgets.crowd and widgets.panel answers malformed input with a
ValueError/TypeError naming the argument; criteria matrices given as numpy, nested lists or torch give the same
ranking."""
import re
import numpy as np, pandas as pd, pytest, torch
from hypothesis import given, settings, strategies as st, HealthCheck
from hetfl_explore.crowd import devices as D, promethee as P, shapley as S, baselines as B, fedondemand as F
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.widgets import crowd as Wc, panel as Wp
from hetfl_explore.engine.config import RunConfig

NAN, INF = float('nan'), float('inf')
JUNK = [None, 'x', [1, 'a'], {'a': 1}, object()]
SET = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
POOL = D.DevicePool.sample(6, seed=0)
GAME = S.QuadraticGame([1.0, 2.0, 0.5])
RACE = pd.DataFrame(dict(method=['a'], round=[0], accuracy=[0.5], time=[1.0], money=[1.0], selected=[[0]], total_time=[1.0], total_money=[1.0]))

def bad_num(lo=None, hi=None):
    "Malformed reals: junk, NaN, inf, and values outside [lo, hi]."
    parts = [st.sampled_from(JUNK + [NAN, INF, -INF, True])]
    if lo is not None: parts.append(st.floats(min_value=lo - 1e6, max_value=lo, exclude_max=True, allow_nan=False))
    if hi is not None: parts.append(st.floats(min_value=hi, max_value=hi + 1e6, exclude_min=True, allow_nan=False))
    return st.one_of(parts)

def bad_int(lo=None): return st.one_of(st.sampled_from(JUNK + [1.5, NAN, True]), *( [st.integers(lo - 1000, lo - 1)] if lo is not None else []))
def bad_array(): return st.sampled_from(JUNK[:4] + [[NAN, 1.0], [INF], [], [[1.0, 2.0]], [-1.0, 2.0], 'abc'])
def bad_values(): return st.sampled_from(JUNK[:4] + [[NAN, 1.0], [INF], [-1.0, 2.0], 'abc'])
def bad_matrix(): return st.sampled_from(JUNK[:4] + [[1.0, 2.0], [[NAN, 1.0]], [[INF]], [], np.zeros((0, 4)), 'abc', np.ones((2, 2, 2))])
def bad_vector(): return st.sampled_from(JUNK[:4] + [[NAN, 1.0], [INF], [], [[1.0, 2.0]], 'abc'])
def bad_obj(): return st.sampled_from([None, 3, 'x', 1.5, [1, 2], {'a': 1}])
def bad_choice(): return st.sampled_from([None, 'nope', 3, 1.5])

def rejects(fn, value, arg):
    "fn(value) must raise ValueError/TypeError whose message names `arg`."
    with pytest.raises((ValueError, TypeError)) as e: fn(value)
    assert re.search(rf"(?<!\w){re.escape(arg)}(?!\w)", str(e.value)), f"{arg}: message {str(e.value)[:200]!r} does not name it"

# qualified name -> (call with the malformed value, argument named, strategy)
CASES = {
    'crowd.devices.processing_capacity': (lambda v: D.processing_capacity(v, [2.0], [0.1], [0]), 'cores', bad_values()),
    'crowd.devices.memory_impact': (lambda v: D.memory_impact(v, [1.0]), 'required_gb', bad_num(lo=0)),
    'crowd.devices.DevicePool': (lambda v: D.DevicePool(v, [0, 1]), 'hw_tier', st.sampled_from(JUNK[:4] + [[], [0, 9], [0.5, 1.0], [-1, 0]])),
    'crowd.devices.DevicePool.sample': (lambda v: D.DevicePool.sample(v), 'n', bad_int(lo=1)),
    'crowd.devices.DevicePool.state': (lambda v: POOL.state(v), 't', bad_int(lo=0)),
    'crowd.devices.DevicePool.round_time': (lambda v: POOL.round_time(0, [0, 1], 1e9, 1e5, mode=v), 'mode', bad_choice()),
    'crowd.devices.DevicePool.client_times': (lambda v: POOL.client_times(0, v, 1e9, 1e5), 'ids', st.sampled_from([[0, 99], [-1], [0.5], 'x', None, [[0]]])),
    'crowd.devices.DevicePool.to_profiles': (lambda v: POOL.to_profiles(v), 'flops_per_sample', bad_num(lo=0)),
    'crowd.devices.tier_cost': (lambda v: D.tier_cost(v, [0]), 'hw_tier', st.sampled_from(JUNK[:4] + [[], [7], [0.5]])),
    'crowd.devices.TaskRequirements': (lambda v: D.TaskRequirements(ram_gb=v), 'ram_gb', bad_num(lo=0)),
    'crowd.devices.pool_figure': (lambda v: D.pool_figure(v), 'pool', bad_obj()),
    'crowd.promethee.check_weights': (lambda v: P.check_weights(v), 'weights', st.sampled_from(JUNK[1:] + [[0.5, 0.5, 0.5, 0.5], [1.0, 0, 0, -0.0001], [NAN] * 4, {'Speed': 1.0}, [1.0]])),
    'crowd.promethee.check_thresholds': (lambda v: P.check_thresholds(v, 0.5), 'q', st.one_of(bad_num(lo=0), st.sampled_from([0.6, 2.0, {'Z': 0.1}]))),
    'crowd.promethee.preference': (lambda v: P.preference([0.1], v, 0.5), 'q', bad_num(lo=0)),
    'crowd.promethee.minmax_columns': (lambda v: P.minmax_columns(v), 'X', bad_matrix()),
    'crowd.promethee.flows_pairwise': (lambda v: P.flows_pairwise(v, [1.0]), 'X', bad_matrix()),
    'crowd.promethee.uni_flows_sorted': (lambda v: P.uni_flows_sorted(v, 0.0, 0.5), 'g', bad_vector()),
    'crowd.promethee.flows_sorted': (lambda v: P.flows_sorted(np.ones((3, 4)), v), 'weights', st.sampled_from([[0.5] * 4, {'Q': 0.5}, 'x', None])),
    'crowd.promethee.compute_flows_as_printed': (lambda v: P.compute_flows_as_printed([0.1, 0.2], 0.1, v), 'p', st.one_of(bad_num(lo=0), st.just(0.05))),
    'crowd.promethee.flows_as_printed': (lambda v: P.flows_as_printed(np.ones((3, 4)), [0.25] * 4, v, 0.5), 'q', st.one_of(bad_num(lo=0), st.just(0.7))),
    'crowd.promethee.promethee': (lambda v: P.promethee(np.ones((3, 4)), [0.25] * 4, method=v), 'method', bad_choice()),
    'crowd.promethee.budget_greedy': (lambda v: P.budget_greedy([0, 1], [2.0, 3.0], v), 'budget', st.one_of(bad_num(lo=0), st.just(1.0))),
    'crowd.promethee.PrometheeSelector': (lambda v: P.PrometheeSelector(POOL, budget=v), 'budget', bad_num(lo=0).filter(lambda x: x is not None)),
    'crowd.shapley.QuadraticGame': (lambda v: S.QuadraticGame([1.0], alpha=v), 'alpha', st.sampled_from(JUNK + [NAN, INF])),
    'crowd.shapley.CountingUtility': (lambda v: S.CountingUtility(v), 'utility', bad_obj()),
    'crowd.shapley.shapley_exact': (lambda v: S.shapley_exact(GAME, v), 'n_players', st.one_of(bad_int(lo=1), st.integers(17, 40))),
    'crowd.shapley.shapley_mc': (lambda v: S.shapley_mc(GAME, 3, v, np.random.default_rng(0)), 'n_perm', bad_int(lo=1)),
    'crowd.shapley.shapley_subsets': (lambda v: S.shapley_subsets(GAME, 3, v, np.random.default_rng(0)), 'n_samples', bad_int(lo=1)),
    'crowd.shapley.estimator_error': (lambda v: S.estimator_error(GAME, 3, v), 'exact', bad_array()),
    'crowd.shapley.round_shapley': (lambda v: S.round_shapley(v, GAME, 5), 'participants', st.sampled_from([[0, 0], [7], [-1], [], 'x', None, [0.5]])),
    'crowd.shapley.shapley_tmr': (lambda v: S.shapley_tmr([([0, 1], GAME)], 3, decay=v), 'decay', bad_num(lo=0, hi=1)),
    'crowd.shapley.payouts': (lambda v: S.payouts([1.0, 2.0], v), 'reward_pool', bad_num(lo=0)),
    'crowd.shapley.fl_utility': (lambda v: S.fl_utility(np.zeros(2), np.ones((2, 2)), v, lambda w: 0.0), 'weights', st.sampled_from([[1.0], [0.0, 1.0], [-1.0, 1.0], 'x', None, [NAN, 1.0]])),
    'crowd.shapley.free_rider_update': (lambda v: S.free_rider_update(v, np.zeros(2), np.random.default_rng(0)), 'kind', bad_choice()),
    'crowd.shapley.flag_free_riders': (lambda v: S.flag_free_riders([1.0, 2.0], v), 'kappa', bad_num(lo=0)),
    'crowd.shapley.free_rider_run': (lambda v: S.free_rider_run(rounds=v), 'rounds', bad_int(lo=1)),
    'crowd.baselines.CrowdRanked': (lambda v: B.CrowdRanked(v), 'pool', bad_obj()),
    'crowd.baselines.CrowdRandom': (lambda v: B.CrowdRandom(POOL, v), 'budget', bad_num(lo=0).filter(lambda x: x is not None)),
    'crowd.baselines.GreedyPerCost': (lambda v: B.GreedyPerCost(v), 'pool', bad_obj()),
    'crowd.baselines.PriceFirst': (lambda v: B.PriceFirst(POOL, v), 'budget', bad_num(lo=0).filter(lambda x: x is not None)),
    'crowd.baselines.ResourceAware': (lambda v: B.ResourceAware(v), 'pool', bad_obj()),
    'crowd.baselines.Budgeted': (lambda v: B.Budgeted(v, POOL, 5.0), 'inner', bad_obj()),
    'crowd.baselines.RaceClock': (lambda v: B.RaceClock(POOL, v, 1e5), 'flops_per_sample', bad_num(lo=0)),
    'crowd.baselines.selection_race': (lambda v: B.selection_race(v, POOL, None, None, RunConfig()), 'selectors', st.sampled_from([[], [3], ['x'], [UniformSelector(), UniformSelector()]])),
    'crowd.baselines.race_table': (lambda v: B.race_table(v, [10], 0.5), 'race', st.sampled_from([None, 3, pd.DataFrame(), pd.DataFrame({'method': ['a']})])),
    'crowd.baselines.race_figure': (lambda v: B.race_figure(RACE, v), 'target', bad_num(lo=0, hi=1).filter(lambda x: x is not None)),
    'crowd.fedondemand.register': (lambda v: F.register(v), 'pool', bad_obj()),
    'crowd.fedondemand.eligible_devices': (lambda v: F.eligible_devices(POOL, v), 'req', bad_obj()),
    'crowd.fedondemand.Task': (lambda v: F.Task(budget=v), 'Task.budget', bad_num(lo=0)),
    'crowd.fedondemand.preliminary_training': (lambda v: F.preliminary_training(lambda: None, None, [0], RunConfig(), fraction=v), 'fraction', bad_num(lo=0, hi=1)),
    'crowd.fedondemand.cohort_size_heuristic': (lambda v: F.cohort_size_heuristic([1.0], [0.1], v, 0.05), 'epsilon', bad_num(lo=0)),
    'crowd.fedondemand.pac_bayes_gap': (lambda v: F.pac_bayes_gap(v, 1.0, 0.05), 'n', bad_int(lo=1)),
    'crowd.fedondemand.pac_bayes_sample_size': (lambda v: F.pac_bayes_sample_size(0.1, 1.0, v), 'delta', bad_num(lo=0, hi=1)),
    'crowd.fedondemand.cohort_for_samples': (lambda v: F.cohort_for_samples([0, 1], [5, 5], v), 'n_required', bad_int(lo=1)),
    'crowd.fedondemand.ShapleyLedger': (lambda v: F.ShapleyLedger(v), 'inner', bad_obj()),
    'widgets.panel.error_html': (lambda v: Wp.error_html(v), 'e', bad_obj()),
    'widgets.panel.Panel': (lambda v: Wp.Panel().sync(**{v: 1}), 'values', st.sampled_from(['x', 'unknown', 'w'])),
    'widgets.crowd.PrometheePanel': (lambda v: Wc.PrometheePanel(n=v), 'n', bad_int(lo=2)),
    'widgets.crowd.RacePanel': (lambda v: Wc.RacePanel(devices=v), 'devices', bad_int(lo=10)),
    'widgets.crowd.ShapleyPanel': (lambda v: Wc.ShapleyPanel(n_benign=v), 'n_benign', bad_int(lo=1)),
}
COVERED = {f'hetfl_explore.{k}' for k in CASES}

@pytest.mark.parametrize('name', sorted(CASES))
def test_malformed_input_is_a_clear_error(name):
    call, arg, strategy = CASES[name]
    @SET
    @given(v=strategy)
    def run(v): rejects(call, v, arg)
    run()

def test_every_public_callable_is_covered():
    import inspect
    for mod in (D, P, S, B, F, Wc, Wp):
        for n in mod.__all__:
            obj = getattr(mod, n)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                assert f'hetfl_explore.{mod.__name__.split(".", 1)[1]}.{n}' in COVERED, f'{mod.__name__}.{n} has no property test'

def test_criteria_matrix_forms_agree():
    X = np.random.default_rng(0).random((12, 4))
    ref = P.promethee(X, [0.25] * 4)['phi'].to_numpy()
    for form in (X.tolist(), torch.tensor(X)):
        np.testing.assert_allclose(P.promethee(form, [0.25] * 4)['phi'].to_numpy(), ref, atol=1e-12)
