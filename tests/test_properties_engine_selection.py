"""Bad input never surprises (engine and selection parts): malformed arguments raise ValueError/TypeError naming the
argument, never another exception or a hang."""
import importlib, inspect
import numpy as np, pytest, torch
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.engine.protocol as pt
from hetfl_explore.engine import models, config, backends, fused, aggregation, system, store, simulation
import hetfl_explore.selection.taxonomy as tx
import hetfl_explore.selection.baselines as bl
import hetfl_explore.selection.efficiency as ef
import hetfl_explore.selection.constraints as cs
import hetfl_explore.selection.inclusion as inc
import hetfl_explore.selection.incentives as icv
import hetfl_explore.selection.compare as cmp

SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

def refuses_naming(call, # one-argument call under test
                   arg:str, # the argument name the error must contain
                   bad, # hypothesis strategy of malformed values
                   label:str): # what the failure message calls the call
    "Every value `bad` draws makes `call` raise ValueError/TypeError naming `arg`."
    @SETTINGS
    @given(v=bad)
    def check(v):
        with pytest.raises((ValueError, TypeError)) as e: call(v)
        assert arg in str(e.value), f"{label}({v!r:.60}): {type(e.value).__name__}: {e.value}"
    check()
NOT_INT = st.one_of(st.sampled_from([None, 'x', 1.5, float('nan'), object()]), st.integers(max_value=0))
NOT_POS = st.sampled_from([None, 'x', float('nan'), float('inf'), -1.0, object()])
NOT_UNIT = st.one_of(st.sampled_from([None, 'x', float('nan'), object()]), st.floats(1.01, 9), st.floats(-9, -0.01))
NOT_ARRAY = st.sampled_from([None, 'abc', object(), [[1, 'x']]])
NOT_CHOICE = st.sampled_from(['nope', None, 3, ''])
NOT_BOOL = st.sampled_from([None, 'yes', 2])
NOT_RNG = st.sampled_from([None, 'rng', 3.5])
NOT_MODEL = st.sampled_from([None, 'model', 3])
NOT_DF = st.sampled_from([None, 'df', 3, [1, 2]])
RNG = lambda: np.random.default_rng(0)
VIEW = lambda: pt.make_view(4)
REP = lambda: pt.synthetic_reports(0, np.array([0, 1]), np.full(4, 10), RNG())
NET = lambda: models.mlp(4, 3, 2)

def _sel(cls, *a, **k): return lambda v: cls(*a, **k).select(0, v, 2, RNG())   # a selector's select with a bad view
BAD_VIEW = st.sampled_from([None, 'view', 3])

# (qualified name, call with the bad value, argument named in the error, strategy of bad values)
CASES = [
    ('engine.protocol.Selection', lambda v: pt.Selection(v), 'Selection.ids', NOT_ARRAY),
    ('engine.protocol.as_selection', lambda v: pt.as_selection(v), 'ids', NOT_ARRAY),
    ('engine.protocol.ClientView', lambda v: pt.ClientView(0, v, np.full(4, 1)), 'ClientView.available', NOT_ARRAY),
    ('engine.protocol.Reports', lambda v: pt.Reports(0, v, [1], [1.], [1.], [1], [1.], [1.], [1.], torch.zeros(1, 2), torch.zeros(2)), 'Reports.ids', NOT_ARRAY),
    ('engine.protocol.Selector', lambda v: pt.Selector().reset(v, 0), 'num_clients', NOT_INT),
    ('engine.protocol.validate_selection', lambda v: pt.validate_selection([0], v), 'clients', BAD_VIEW),
    ('engine.protocol.UniformSelector', lambda v: pt.UniformSelector().select(0, VIEW(), v, RNG()), 'k', NOT_INT),
    ('engine.protocol.RoundRobinSelector', lambda v: pt.RoundRobinSelector().select(0, VIEW(), v, RNG()), 'k', NOT_INT),
    ('engine.protocol.make_view', lambda v: pt.make_view(v), 'num_clients', NOT_INT),
    ('engine.protocol.synthetic_reports', lambda v: pt.synthetic_reports(0, [0], np.full(2, 5), RNG(), n_params=v), 'n_params', NOT_INT),
    ('engine.protocol.selection_trace', lambda v: pt.selection_trace(pt.UniformSelector(), 4, 2, v), 'rounds', NOT_INT),
    ('engine.protocol.participation_figure', lambda v: pt.participation_figure(v), 'trace', NOT_ARRAY),
    ('engine.models.Flatten1', lambda v: models.Flatten1()(v), 'x', NOT_ARRAY),
    ('engine.models.mlp', lambda v: models.mlp(v), 'in_features', NOT_INT),
    ('engine.models.cnn', lambda v: models.cnn(width=v), 'width', NOT_INT),
    ('engine.models.mobilenet_v2_gn', lambda v: models.mobilenet_v2_gn(groups=v), 'groups', NOT_INT),
    ('engine.models.check_vmappable', lambda v: models.check_vmappable(v), 'model', NOT_MODEL),
    ('engine.models.ParamLayout', lambda v: models.ParamLayout(v), 'model', NOT_MODEL),
    ('engine.models.evaluate', lambda v: models.evaluate(NET(), torch.zeros(2, 4), torch.zeros(2).long(), torch.zeros(2).long(), 2, 1, batch_size=v), 'batch_size', NOT_INT),
    ('engine.config.RunConfig', lambda v: config.RunConfig(device='cpu', rounds=v), 'RunConfig.rounds', NOT_INT),
    ('engine.backends.batch_plan', lambda v: backends.batch_plan([3, 4], v, RNG()), 'batch_size', NOT_INT),
    ('engine.config.LocalWork', lambda v: config.LocalWork(NET(), v, torch.zeros(23), None, None, None, None, None, None, config.RunConfig(device='cpu')), 'layout', NOT_MODEL),
    ('engine.config.check_pool', lambda v: config.check_pool(v, torch.zeros(2).long(), NET()), 'x',
     st.sampled_from([None, 'x', 3, torch.zeros(0, 4), torch.tensor([[np.nan, 1.]]), torch.tensor([[np.inf, 1.]])])),
    ('engine.config.check_start', lambda v: config.check_start('w0', v, 23), 'w0',
     st.sampled_from([None, 'w0', torch.zeros(22), torch.zeros(2, 2, 23), torch.full((23,), np.nan)])),
    ('engine.config.check_finite', lambda v: config.check_finite('updates', v), 'updates',
     st.sampled_from([None, 'u', 3, torch.tensor([np.nan, 1.]), torch.tensor([[1., -np.inf]])])),
    ('engine.backends.train_sequential', lambda v: backends.train_sequential(v), 'work', NOT_MODEL),
    ('engine.backends.train_batched', lambda v: backends.train_batched(v), 'work', NOT_MODEL),
    ('engine.fused.train_fused', lambda v: fused.train_fused(v), 'work', NOT_MODEL),
    ('engine.fused.mlp_dims', lambda v: fused.mlp_dims(v), 'model', NOT_MODEL),
    ('engine.backends.pool_before_relu', lambda v: backends.pool_before_relu(v), 'model', NOT_MODEL),
    ('engine.backends.local_train', lambda v: backends.local_train(NET(), torch.zeros(23), torch.zeros(3, 4), torch.zeros(3).long(), v, RNG()), 'config', NOT_MODEL),
    ('engine.aggregation.fednova_norm', lambda v: aggregation.fednova_norm([1, 2], [1., 1.], momentum=v), 'momentum', NOT_UNIT),
    ('engine.aggregation.AggregationInput', lambda v: aggregation.AggregationInput(torch.zeros(2), v, np.ones(1)), 'AggregationInput.updates', NOT_ARRAY),
    ('engine.aggregation.fedavg_rule', lambda v: aggregation.fedavg_rule(v), 'inp', NOT_MODEL),
    ('engine.aggregation.fednova_rule', lambda v: aggregation.fednova_rule(v), 'inp', NOT_MODEL),
    ('engine.aggregation.masked_average', lambda v: aggregation.masked_average(v), 'inp', NOT_MODEL),
    ('engine.aggregation.aggregate', lambda v: aggregation.aggregate(torch.zeros(2), torch.zeros(1, 2), np.ones(1), v, {}), 'cfg', NOT_MODEL),
    ('engine.aggregation.unit_masks', lambda v: aggregation.unit_masks(NET(), v, RNG()), 'keep', NOT_UNIT),
    ('engine.system.SystemProfiles', lambda v: system.SystemProfiles(v, 1, 1, 1, 0), 'SystemProfiles.speed', NOT_ARRAY),
    ('engine.store.History', lambda v: store.History(v), 'config', NOT_DF),
    ('engine.store.RunStore', lambda v: store.RunStore(v), 'path', st.sampled_from([None, 3, object()])),
    ('engine.store.data_fingerprint', lambda v: store.data_fingerprint(v), 'data', st.sampled_from([None, 3, 'x'])),
    ('engine.store.selector_fingerprint', lambda v: store.selector_fingerprint(v), 'selector', st.sampled_from([None, 3, 'x'])),
    ('engine.backends.model_profile', lambda v: backends.model_profile(v, torch.zeros(4)), 'model', NOT_MODEL),
    ('engine.backends.choose_backend', lambda v: backends.choose_backend({'flops': 1, 'params': 1}, v, torch.device('cpu')), 'batch_size', NOT_INT),
    ('engine.backends.block_size', lambda v: backends.block_size({'params': 1, 'activations': 1}, v, torch.device('cpu')), 'batch_size', NOT_INT),
    ('engine.simulation.Simulation', lambda v: simulation.Simulation(NET, v, pt.UniformSelector(), config.RunConfig(device='cpu')), 'data', st.sampled_from([None, 3, 'x'])),
    ('engine.simulation.RoundPlan', lambda v: simulation.RoundPlan(0, pt.Selection([1, 2]), v, np.ones(2), None, np.zeros((2, 1, 1)), np.ones((2, 1, 1), bool), np.ones(2), 0.0),
     'RoundPlan.dropped', st.sampled_from([None, 'x', [False, False], np.zeros(3, bool), np.zeros(2)])),
    ('engine.store.hook_identity', lambda v: store.hook_identity(v), 'hook', st.sampled_from([3, 'x', 1.5, [1]])),
    ('engine.store.run_key', lambda v: store.run_key(v), 'identity', st.sampled_from([None, 3, b'x'])),
    ('engine.simulation.run_fl', lambda v: simulation.run_fl(NET, v), 'data', st.sampled_from([None, 3, 'x'])),
    ('engine.backends.resolve_backend', lambda v: backends.resolve_backend(v, NET(), torch.zeros(2, 4), None, torch.device('cpu'), {'flops': 1, 'params': 1}, 4), 'backend', st.sampled_from([None, 3, 'fast'])),
    ('engine.backends.gather_rows', lambda v: backends.gather_rows(v, torch.zeros(1).long()), 'x', NOT_ARRAY),
    ('engine.fused.fused_dims', lambda v: fused.fused_dims(v, torch.zeros(2, 4), None, torch.device('cpu')), 'model', NOT_MODEL),
    ('engine.aggregation.aggregation_rule_name', lambda v: aggregation.aggregation_rule_name(v), 'rule', st.sampled_from([3, 'x', 1.5])),
    ('engine.aggregation.resolve_aggregation_rule', lambda v: aggregation.resolve_aggregation_rule(None, v, config.RunConfig(device='cpu')), 'selector', st.sampled_from([None, 3, 'x'])),
    ('engine.store.check_federated_data', lambda v: store.check_federated_data(v), 'data', st.sampled_from([None, 3, 'x'])),
    ('engine.store.run_identity', lambda v: store.run_identity(v, 'batched', torch.device('cpu'), None, NET(), pt.UniformSelector(), False), 'config', NOT_MODEL),
    ('engine.simulation.LivePlot', lambda v: simulation.LivePlot(v), 'metrics', st.sampled_from([None, 3, [], [1]])),
]
CASES += [
    ('selection.taxonomy.parse_characteristics', lambda v: tx.parse_characteristics(v), 'text', st.sampled_from([None, 3, 'V D Q', ''])),
    ('selection.taxonomy.characteristics_text', lambda v: tx.characteristics_text(v), 'flags', st.sampled_from([None, 3, {'Q': True}])),
    ('selection.taxonomy.placement', lambda v: tx.placement('X', v, 'V D S R T', 'theta', '-', 'Ranking', '-'), 'policy', NOT_CHOICE),
    ('selection.taxonomy.methods_where', lambda v: tx.methods_where(V=v), 'V', st.sampled_from(['maybe', 3])),
    ('selection.taxonomy.taxonomy_figure', lambda v: tx.taxonomy_figure(dims=v), 'dims', st.sampled_from([('nope',), None, 3])),
    ('selection.taxonomy.taxonomy_sunburst', lambda v: tx.taxonomy_sunburst(v), 'table', st.sampled_from(['df', 3, [1, 2]])),
    ('selection.taxonomy.MethodCard', lambda v: tx.MethodCard(v), 'row', NOT_DF),
    ('selection.taxonomy.method_card', lambda v: tx.method_card(v), 'method', st.sampled_from(['nope', None, 3])),
    ('selection.taxonomy.placement_mismatches', lambda v: tx.placement_mismatches(v), 'declared', NOT_DF),
    ('selection.taxonomy.placement_table', lambda v: tx.placement_table(v), 'selectors', st.sampled_from([None, 3, [3]])),
    ('selection.baselines.budget', lambda v: bl.budget(v, VIEW()), 'k', NOT_INT),
    ('selection.baselines.top_by', lambda v: bl.top_by([0, 1], [1., 2.], v, RNG()), 'm', NOT_INT),
    ('selection.baselines.choice_without_replacement', lambda v: bl.choice_without_replacement(np.arange(3), v, 1, RNG()), 'p',
     st.sampled_from([[0.5, 0.5], [1.0], np.full(4, 0.25)])),   # numpy's own error: 'a' and 'p' must have same size
    ('selection.baselines.sample_by', lambda v: bl.sample_by([0, 1], [1., 2.], v, RNG()), 'm', NOT_INT),
    ('selection.baselines.softmax', lambda v: bl.softmax([1., 2.], v), 'beta', st.sampled_from([None, 'x', float('nan'), float('inf')])),
    ('selection.baselines.allocate', lambda v: bl.allocate([2, 2], v, 3), 'weight', st.sampled_from([[np.inf, 1], [-1, 1], [1], None, 'ab'])),
    ('selection.baselines.stratified_pick', lambda v: bl.stratified_pick(np.zeros(4, int), np.arange(4), v, RNG()), 'm', NOT_INT),
    ('selection.baselines.EqRep', _sel(bl.EqRep), 'clients', BAD_VIEW),  # budget() checks the view
    ('selection.baselines.EqW', lambda v: bl.EqW(replace=v), 'replace', NOT_BOOL),
    ('selection.baselines.RoundRobin', lambda v: bl.RoundRobin().select(0, VIEW(), v, RNG()), 'k', NOT_INT),
    ('selection.baselines.FedNova', lambda v: bl.FedNova(participation=v), 'participation', NOT_CHOICE),
    ('selection.baselines.flag_opposing', lambda v: bl.flag_opposing(v), 'updates', NOT_ARRAY),
    ('selection.baselines.FedPNS', lambda v: bl.FedPNS(beta=v), 'beta', NOT_UNIT),
    ('selection.baselines.sketch', lambda v: bl.sketch(torch.zeros(2, 3), v, 0), 'dim', NOT_INT),
    ('selection.baselines.ward_clusters', lambda v: bl.ward_clusters(np.zeros((3, 2)), v), 'n', NOT_INT),
    ('selection.baselines.HCSFed', lambda v: bl.HCSFed(n_clusters=v), 'n_clusters', NOT_INT),
    ('selection.efficiency.observed_losses', lambda v: ef.observed_losses(v), 'reports', st.sampled_from([None, 3, 'x', [1.0]])),
    ('selection.constraints.SystemAwareSelector', lambda v: cs.SystemAwareSelector(epochs=v), 'epochs', st.sampled_from([None, 'x', 0, -1.0, float('nan')])),
    ('selection.efficiency.round_half_up', lambda v: ef.round_half_up(v), 'x', st.sampled_from([None, 'x', float('nan'), float('inf')])),
    ('selection.efficiency.ActiveFL', lambda v: ef.ActiveFL(alpha1=v), 'alpha1', NOT_UNIT),
    ('selection.efficiency.PowD', lambda v: ef.PowD(d=v), 'd', st.sampled_from(['x', 1.5, 0, -2])),
    ('selection.efficiency.shapley_values', lambda v: ef.shapley_values(v, lambda c: 0.0, RNG()), 'n', NOT_INT),
    ('selection.efficiency.coalition_utility', lambda v: ef.coalition_utility(v), 'reports', st.sampled_from([None, 3, 'x'])),
    ('selection.efficiency.SFedAvg', lambda v: ef.SFedAvg(n_perm=v), 'n_perm', NOT_INT),
    ('selection.efficiency.toy_reports', lambda v: ef.toy_reports(0, [0], v, torch.ones(2)), 'updates', NOT_ARRAY),
    ('selection.efficiency.local_centroids', lambda v: ef.local_centroids([np.zeros((4, 2))], k_local=v), 'k_local', NOT_INT),
    ('selection.efficiency.KFed', lambda v: ef.KFed(v), 'centroids', st.sampled_from([None, 3, 'x'])),
    ('selection.efficiency.LAG', lambda v: ef.LAG(D=v), 'D', NOT_INT),
    ('selection.efficiency.pooled_balance', lambda v: ef.pooled_balance(v, [0]), 'class_counts', NOT_ARRAY),
    ('selection.efficiency.FLCIR', lambda v: ef.FLCIR(v), 'class_counts', NOT_ARRAY),
    ('selection.efficiency.FAVOR', lambda v: ef.FAVOR(dim=v), 'dim', NOT_INT),
    ('selection.efficiency.q_net', lambda v: ef.q_net(v, 4, torch.Generator()), 'n_in', NOT_INT),
    ('selection.constraints.round_estimates', lambda v: cs.round_estimates(VIEW(), [0], epochs=v), 'epochs', NOT_POS),
    ('selection.constraints.FedCS', lambda v: cs.FedCS(time_source=v), 'time_source', NOT_CHOICE),
    ('selection.constraints.project_simplex', lambda v: cs.project_simplex(v), 'v', NOT_ARRAY),
    ('selection.constraints.inclusion_probabilities', lambda v: cs.inclusion_probabilities(v, 2), 'p',
     st.sampled_from([None, 'ab', [-1., 2.], [np.nan, 1.], [np.inf, 1.], [[1., 2.]]])),
    ('selection.constraints.sample_unbiased', lambda v: cs.sample_unbiased(v, [.5, .5], 1, RNG()), 'ids',
     st.sampled_from([None, 'ab', [0, 0], [-1, 2], [0.5, 1], [[0, 1]]])),
    ('selection.constraints.AgnosticFL', lambda v: cs.AgnosticFL(mode=v), 'mode', NOT_CHOICE),
    ('selection.constraints.qffl_step', lambda v: cs.qffl_step(torch.zeros(2), torch.zeros(1, 2), [1.], v), 'q', NOT_POS),
    ('selection.constraints.QFFL', lambda v: cs.QFFL(step=v), 'step', NOT_CHOICE),
    ('selection.constraints.normalised_utility', lambda v: cs.normalised_utility([1., 2.], v), 'clip', NOT_UNIT),
    ('selection.constraints.oort_utility', lambda v: cs.oort_utility([1], [1.], [1.], v), 'preferred', NOT_POS),
    ('selection.constraints.Oort', lambda v: cs.Oort(staleness=v), 'staleness', NOT_POS),
    ('selection.constraints.FLAME', lambda v: cs.FLAME(alpha=v), 'alpha', NOT_POS),
    ('selection.constraints.robust_low_outliers', lambda v: cs.robust_low_outliers([.5, .6], z=v), 'z', NOT_POS),
    ('selection.constraints.DDaBA', lambda v: cs.DDaBA(delta=v), 'delta', NOT_POS),
    ('selection.constraints.PolicyStack', lambda v: cs.PolicyStack(v, cs.Oort()), 'filter', st.sampled_from([None, 3, 'x'])),
    ('selection.inclusion.LTFL', lambda v: inc.LTFL(loss_prob=v), 'loss_prob', NOT_UNIT),
    ('selection.inclusion.FedDropout', lambda v: inc.FedDropout(min_capacity=v), 'min_capacity', NOT_UNIT),
    ('selection.incentives.CIMR', lambda v: icv.CIMR(participation=v), 'participation', NOT_CHOICE),
    ('selection.incentives.FMore', lambda v: icv.FMore(markup=v), 'markup', NOT_POS),
    ('selection.incentives.contract_menu', lambda v: icv.contract_menu(v), 'costs', NOT_ARRAY),
    ('selection.incentives.subjective_reputation', lambda v: icv.subjective_reputation([1.], [1.], W=v), 'W', NOT_POS),
    ('selection.incentives.CBIM', lambda v: icv.CBIM(n_types=v), 'n_types', NOT_INT),
    ('selection.incentives.update_is_good', lambda v: icv.update_is_good(v), 'reports', st.sampled_from([None, 3, 'x'])),
    ('selection.compare.jain_index', lambda v: cmp.jain_index(v), 'counts', NOT_ARRAY),
    ('selection.compare.simulation_client_accuracies', lambda v: cmp.simulation_client_accuracies(v), 'sim', st.sampled_from([None, 3, 'x'])),
    ('selection.compare.history_metrics', lambda v: cmp.history_metrics(v), 'h', st.sampled_from([None, 3, 'x'])),
    ('selection.compare.run_strategy', lambda v: cmp.run_strategy(pt.UniformSelector(), None, NET, config.RunConfig(), v), 'seed', NOT_INT),
    ('selection.compare.compare_selectors', lambda v: cmp.compare_selectors(v, None, NET, config.RunConfig()), 'selectors', st.sampled_from([None, 3, [3]])),
    ('selection.compare.summary', lambda v: cmp.summary(v), 'result', NOT_DF),
    ('selection.compare.curves_figure', lambda v: cmp.curves_figure(v), 'result', NOT_DF),
    ('selection.compare.selection_heatmaps', lambda v: cmp.selection_heatmaps(v), 'result', NOT_DF),
    ('selection.compare.poison_labels', lambda v: cmp.poison_labels(v, [0]), 'data', st.sampled_from([None, 3, 'x'])),
]
COVERED = {f'hetfl_explore.{name}' for name, *_ in CASES}

@pytest.mark.parametrize('name,call,arg,bad', CASES, ids=[c[0] for c in CASES])
def test_malformed_input_names_the_argument(name, call, arg, bad):
    refuses_naming(call, arg, bad, name)

def test_covered_is_every_public_function_and_class():
    "COVERED lists exactly the public functions and classes of hetfl_explore.engine.* and hetfl_explore.selection.*."
    public = set()
    for m in (pt, models, config, backends, fused, aggregation, system, store, simulation, tx, bl, ef, cs, inc, icv, cmp):
        for n in m.__all__:
            o = getattr(m, n)
            if (inspect.isfunction(o) or inspect.isclass(o)) and o.__module__ == m.__name__: public.add(f'{m.__name__}.{n}')
    assert public == COVERED, (sorted(public - COVERED), sorted(COVERED - public))


# ---- hostile-input families of the selection entry points -------------------------------------------------------
SEL_MODULES = (tx, bl, ef, cs, inc, icv, cmp)
BAD_IDS = st.one_of(st.lists(st.integers(0, 5), min_size=1, max_size=4).map(lambda l: l + l[:1]),          # a repeated id
                    st.lists(st.integers(0, 5), max_size=3).map(lambda l: l + [-1]),                       # a negative id
                    st.lists(st.integers(0, 5), max_size=3).map(lambda l: l + [1.5]),                      # a fractional id
                    st.sampled_from(['ab', None, [[0, 1]], [float('nan')], [True, 'x']]))
# (name, call with bad ids, argument named): ids arguments refuse repeats, negatives and fractions
ID_CASES = [
    ('top_by', lambda v: bl.top_by(v, np.ones(len(v)) if isinstance(v, list) else [1.], 1, RNG()), 'ids'),
    ('sample_by', lambda v: bl.sample_by(v, np.ones(len(v)) if isinstance(v, list) else [1.], 1, RNG()), 'ids'),
    ('sample_unbiased', lambda v: cs.sample_unbiased(v, np.ones(len(v)) if isinstance(v, list) else [1.], 1, RNG()), 'ids'),
    ('stratified_pick', lambda v: bl.stratified_pick(np.zeros(6), v, 1, RNG()), 'available'),
    ('pooled_balance', lambda v: ef.pooled_balance(np.ones((6, 2)), v), 'ids'),
]

@pytest.mark.parametrize('name,call,arg', ID_CASES, ids=[c[0] for c in ID_CASES])
def test_ids_refuse_repeats_negatives_and_fractions(name, call, arg):
    refuses_naming(call, arg, BAD_IDS, name)

# (name, call with a bad array, argument named, strategy): NaN, infinities, negatives, empty and mismatched lengths
NUM = lambda *extra: st.sampled_from([[float('nan'), 1.], [float('inf'), 1.], [-1., 1.], 'ab', None, *extra])
ARRAY_CASES = [
    ('jain_index', cmp.jain_index, 'counts', NUM([], [[1., 2.]])),
    ('contract_menu', icv.contract_menu, 'costs', NUM([])),
    ('subjective_reputation.pos', lambda v: icv.subjective_reputation(v, [1., 1.]), 'pos', NUM()),
    ('subjective_reputation.neg', lambda v: icv.subjective_reputation([1., 1.], v), 'neg', NUM([1., 1., 1.])),
    ('robust_low_outliers', cs.robust_low_outliers, 'acc', NUM([])),
    ('oort_utility.times', lambda v: cs.oort_utility([1., 1.], [1., 1.], v, 1.), 'times',   # +inf: never answers (utility 0)
     st.sampled_from([[float('nan'), 1.], [-1., 1.], [1., 1., 1.], 'ab', None])),
    ('oort_utility.n_samples', lambda v: cs.oort_utility(v, [1., 1.], [1., 1.], 1.), 'n_samples', NUM()),
    ('qffl_step.losses', lambda v: cs.qffl_step(torch.zeros(2), torch.zeros(2, 2), v, 1.), 'losses', NUM([1.])),
    ('qffl_step.updates', lambda v: cs.qffl_step(torch.zeros(2), v, [1.], 1.), 'updates',
     st.sampled_from([torch.zeros(1, 3), torch.full((1, 2), float('nan')), 'ab'])),
    ('top_by.values', lambda v: bl.top_by([0, 1], v, 1, RNG()), 'values', st.sampled_from([[1.], [1., 2., 3.], 'ab'])),
    ('sample_by.p', lambda v: bl.sample_by([0, 1], v, 1, RNG()), 'p', st.sampled_from([[1.], [1., 2., 3.], 'ab'])),
    ('choice_without_replacement.p', lambda v: bl.choice_without_replacement(np.arange(2), v, 1, RNG()), 'p',
     st.sampled_from([[float('nan'), 1.], [-0.5, 1.5], [0.2, 0.2], [1.], 'ab'])),
    ('inclusion_probabilities', lambda v: cs.inclusion_probabilities(v, 1), 'p', NUM()),
    ('flag_opposing', bl.flag_opposing, 'updates', st.sampled_from([torch.full((3, 2), float('nan')), torch.zeros(3), 'ab'])),
    ('sketch', lambda v: bl.sketch(v, 2, 0), 'updates', st.sampled_from([torch.full((2, 3), float('inf')), 'ab'])),
    ('ward_clusters', lambda v: bl.ward_clusters(v, 2), 'z', st.sampled_from([np.full((3, 2), float('nan')), 'ab'])),
]

@pytest.mark.parametrize('name,call,arg,bad', ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_arrays_refuse_nan_negative_empty_and_mismatched(name, call, arg, bad):
    refuses_naming(call, arg, bad, name)

def test_shapley_utilities_must_be_finite_numbers():
    for bad in (float('nan'), float('inf'), 'x', None):
        with pytest.raises((ValueError, TypeError), match='utility'): ef.shapley_values(3, lambda s, b=bad: b, RNG())
    with pytest.raises(ValueError, match='n'): ef.shapley_values(-1, lambda s: 0., RNG())

def _numeric_parameters():
    "(qualified name, class, parameter, default) of every selection class whose numeric parameters all have defaults."
    out = []
    for m in SEL_MODULES:
        for n in m.__all__:
            o = getattr(m, n)
            if not (inspect.isclass(o) and o.__module__ == m.__name__): continue
            try: sig = inspect.signature(o)
            except (TypeError, ValueError): continue
            if any(p.default is inspect._empty for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)): continue
            out += [(f'{m.__name__}.{n}', o, pn, p.default) for pn, p in sig.parameters.items()
                    if isinstance(p.default, (int, float)) and not isinstance(p.default, bool)]
    return out
NUMERIC_PARAMETERS = _numeric_parameters()

@pytest.mark.parametrize('name,cls,param,default', NUMERIC_PARAMETERS, ids=[f'{c[0].rsplit(".", 1)[1]}.{c[2]}' for c in NUMERIC_PARAMETERS])
def test_numeric_parameters_take_numpy_scalars_and_refuse_strings_bools_nan(name, cls, param, default):
    "numpy scalars of the default are accepted; strings, bools, None, NaN and -inf are refused naming the parameter."
    cls(**{param: np.float64(default) if isinstance(default, float) else np.int64(default)})
    refuses_naming(lambda v: cls(**{param: v}), param, st.sampled_from(['x', True, None, float('nan'), -float('inf'), [default]]),
                   f'{name}.{param}')
