"""The engine's groups of models and streams of data: one group is the plain run bit for bit, aggregation within groups
against hand numbers, a fixed-group stream run against a plain loop, the backends, resuming and the checks."""
import dataclasses
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.models import mlp, evaluate
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.engine.simulation import Simulation, run_fl
from hetfl_explore.engine.system import SystemProfiles
from hetfl_explore.engine.store import RunStore
from hetfl_explore.engine.groups import (FixedGroups, Grouping, ClientStream, GroupView, aggregate_groups, group_shares,
                                         mix_evaluations, check_assignment)

torch.set_num_threads(1)
MLP = lambda: mlp(64, 16, 10)

@pytest.fixture(scope='module')
def fed(): return digits_federation(num_clients=12, alpha=0.5, seed=0)

def test_one_group_is_the_plain_run_bit_for_bit(fed):
    cfg = RunConfig(rounds=4, clients_per_round=5, batch_size=10, lr=0.3, momentum=0.5, aggregator='fedavgm',
                    server_momentum=0.5, seed=1, eval_clients=True, loss_before='full')
    devs = SystemProfiles.sample(12, seed=1, speed_sigma=1.0, availability=0.8, dropout=0.3)
    for backend in ('sequential', 'batched', 'fused'):
        c = dataclasses.replace(cfg, backend=backend)
        plain = run_fl(MLP, fed, UniformSelector(), c, profiles=devs)
        one = run_fl(MLP, fed, UniformSelector(), c, profiles=devs, grouping=FixedGroups(np.zeros(12, int)))
        assert torch.equal(plain.final_params, one.final_params), backend
        cols = ['accuracy', 'worst_group_accuracy', 'loss', 'train_loss', 'selected', 'reported', 'weights', 'bytes',
                'energy']
        assert plain.rounds[cols].equals(one.rounds[cols]), backend
        assert plain.clients.loss_before.equals(one.clients.loss_before)
        assert plain.clients.own_accuracy.equals(one.clients.own_accuracy)

def test_aggregate_groups_by_hand():
    models = torch.tensor([[0., 0.], [10., 10.], [5., 5.]])
    updates = torch.tensor([[1., 0.], [3., 0.], [0., 2.], [0., 4.]])
    weights = np.array([0.1, 0.3, 0.2, 0.4])
    moved = aggregate_groups(models, updates, weights, np.array([0, 0, 1, 1]), RunConfig(), [{}, {}, {}])
    assert moved.tolist() == [0, 1]
    want = [[0.25 * 1 + 0.75 * 3, 0.], [10., 10 + (2 * 2 + 4 * 4) / 6], [5., 5.]]   # weights renormalised per group
    torch.testing.assert_close(models, torch.tensor(want))
    zero = torch.zeros(3, 2)
    assert aggregate_groups(zero, updates[:2], np.zeros(2), np.array([2, 2]), RunConfig(), [{}, {}, {}]).tolist() == []
    assert torch.equal(zero, torch.zeros(3, 2))                  # an untrusted group keeps its model

def test_group_momentum_is_kept_per_group():
    cfg = RunConfig(aggregator='fedavgm', server_momentum=0.5)
    models, states = torch.zeros(2, 1), [{}, {}]
    for _ in range(2): aggregate_groups(models, torch.ones(1, 1), np.ones(1), np.array([0]), cfg, states)
    assert models.tolist() == [[1 + 1.5], [0.]] and 'velocity' not in states[1]

def test_shares_and_mixture_by_hand():
    np.testing.assert_array_equal(group_shares(np.array([0, 1, -1, 1]), np.array([10, 20, 30, 10]), 2), [0.25, 0.75])
    r = lambda acc, loss, g: dict(accuracy=acc, loss=loss, group_accuracy=np.array(g), group_counts=np.array([3, 1]))
    m = mix_evaluations([r(0.5, 2.0, [0.2, 1.0]), r(1.0, 0.0, [1.0, 1.0])], np.array([0.25, 0.75]))
    assert (m['accuracy'], m['loss'], m['model_accuracy']) == (0.875, 0.5, [0.5, 1.0])
    assert m['worst_group_accuracy'] == pytest.approx(0.25 * 0.2 + 0.75 * 1.0, abs=1e-15)

def grouped_plain(fed, stream, groups, rounds, lr, epochs, seed, n_groups):
    "Every client every round, full-batch steps, size-weighted mean of the trained models within each fixed group."
    torch.manual_seed(seed); model = MLP()
    w = [torch.cat([p.detach().reshape(-1) for p in model.parameters()])] * n_groups
    from hetfl_explore.engine.models import ParamLayout
    layout = ParamLayout(model)
    for t in range(rounds):
        new, n = [], []
        for k, i in enumerate(stream.at(t)):
            layout.load(model, w[groups[k]])
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            for _ in range(epochs):
                opt.zero_grad(); F.cross_entropy(model(fed.x[i]), fed.y[i]).backward(); opt.step()
            new.append(layout.flatten(model).detach().clone()); n.append(len(i))
        w = [sum(n[k] * new[k] for k in np.flatnonzero(groups == g)) / sum(n[k] for k in np.flatnonzero(groups == g))
             for g in range(n_groups)]
    return torch.stack(w)

def test_fixed_groups_on_a_stream_equal_the_plain_loop(fed):
    groups = np.array([0, 1, 2] * 4)
    rng = np.random.default_rng(0)
    half = lambda i: np.sort(rng.choice(i.numpy(), max(1, len(i) // 2), replace=False))
    stream = ClientStream([[half(i) for i in fed.client_idx] for _ in range(3)])
    cfg = RunConfig(rounds=3, clients_per_round=12, batch_size=10_000, lr=0.5, local_epochs=2, seed=4,
                    backend='sequential')
    h = run_fl(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(groups), stream=stream)
    torch.testing.assert_close(h.final_params, grouped_plain(fed, stream, groups, 3, 0.5, 2, 4, 3), atol=1e-4, rtol=0)
    for b in ('batched', 'fused'):
        cb = dataclasses.replace(cfg, backend=b)
        hb = run_fl(MLP, fed, UniformSelector(), cb, grouping=FixedGroups(groups), stream=stream)
        torch.testing.assert_close(hb.final_params, h.final_params, atol=1e-5, rtol=0)
    sizes = h.clients.groupby('round').n_samples.sum().tolist()
    assert sizes == [sum(len(i) for i in stream.at(t)) for t in range(3)]

def test_grouped_evaluation_mixes_the_models_by_share(fed):
    cfg = RunConfig(rounds=2, clients_per_round=12, batch_size=10, lr=0.3, seed=0)
    sim = Simulation(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 2))
    row = sim.step(); row = sim.step()
    shares = group_shares(sim.assignment, sim.sizes, 2)
    accs = [evaluate(sim.fast_net, *sim.test, 10, sim.n_attrs, params=m)['accuracy'] for m in sim.models]
    assert row['model_accuracy'] == accs and abs(row['accuracy'] - shares @ accs) < 1e-12

def test_a_grouped_run_resumes_to_the_uninterrupted_models(fed, tmp_path):
    cfg = RunConfig(rounds=4, clients_per_round=6, batch_size=10, lr=0.3, aggregator='fedavgm', server_momentum=0.5,
                    seed=2)
    full = run_fl(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 3))
    store = RunStore(tmp_path / 'runs.sqlite')
    def stop(sim, row):
        if row['round'] == 1: raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run_fl(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 3), store=store, callbacks=[stop])
    resumed = run_fl(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 3), store=store)
    assert torch.equal(resumed.final_params, full.final_params)
    other = Simulation(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 2), store=store)
    same = Simulation(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups(np.arange(12) % 3), store=store)
    assert other.key != same.key

def test_bad_rules_and_streams_are_refused(fed):
    cfg = RunConfig(rounds=1, clients_per_round=4, batch_size=10, seed=0)
    class Outside(Grouping):
        name = 'outside'
        def assign(self, t, view): return np.full(len(view.ids), self.n_groups)
    class Short(Grouping):
        name = 'short'
        def assign(self, t, view): return np.zeros(1)
    for rule, msg in ((Outside(2), 'outside.assign'), (Short(2), 'short.assign')):
        with pytest.raises(ValueError, match=msg): run_fl(MLP, fed, UniformSelector(), cfg, grouping=rule)
    with pytest.raises(TypeError, match='grouping'): Simulation(MLP, fed, UniformSelector(), cfg, grouping='ifca')
    with pytest.raises(ValueError, match='num_clients=12'):
        Simulation(MLP, fed, UniformSelector(), cfg, grouping=FixedGroups([0, 1]))
    with pytest.raises(ValueError, match='group 1 has no client'): FixedGroups([0, 2])
    with pytest.raises(ValueError, match='3 clients'):
        Simulation(MLP, fed, UniformSelector(), cfg, stream=ClientStream([[[0]] * 3]))
    with pytest.raises(ValueError, match='out of range'):
        Simulation(MLP, fed, UniformSelector(), cfg, stream=ClientStream([[[10 ** 6]] * 12]))
    with pytest.raises(ValueError, match='every round'): ClientStream([[[0]], [[0], [1]]])
    one_round = ClientStream([list(fed.client_idx)])
    sim = Simulation(MLP, fed, UniformSelector(), dataclasses.replace(cfg, rounds=3), stream=one_round)
    sim.step()
    with pytest.raises(ValueError, match='t=1'): sim.step()      # the stream has one round
    view = GroupView(0, np.array([1, 2]), torch.zeros(2, 3), np.full(5, -1))
    assert check_assignment([1, 0], view).tolist() == [1, 0]
    with pytest.raises(RuntimeError, match='no loss channel'): view.ask_losses([1])


class SplitOnce(Grouping):
    "One group until round 1's aggregation, then two: clients by parity, group 1 seeded with client 1's own model."
    name, reforms = 'split_once', True
    def reset(self, num_clients, seed):
        super().reset(num_clients, seed)
        self.index, self.seen = np.zeros(num_clients, np.int64), []
    def assign(self, t, view): return self.index[view.ids]
    def reform(self, t, rnd):
        self.seen.append(rnd)
        if t != 1: return None
        self.index = np.arange(self.num_clients) % 2
        row = int(np.flatnonzero(rnd.ids == 1)[0])
        return torch.stack([rnd.models[0], rnd.personal[row]]), self.index.copy()

def test_a_rule_re_forms_its_groups_after_aggregation(fed):
    cfg = RunConfig(rounds=3, clients_per_round=12, batch_size=10, lr=0.3, seed=0, aggregator='fedavgm',
                    server_momentum=0.5, loss_before='off')
    rule = SplitOnce(1)
    sim = Simulation(MLP, fed, UniformSelector(), cfg, grouping=rule)
    sim.step()
    sim.step()
    rnd = rule.seen[1]
    assert len(sim.models) == 2 and len(sim.group_state) == 2 and all(not s for s in sim.group_state)
    own = rnd.start[0] + rnd.updates[int(np.flatnonzero(rnd.ids == 1)[0])]
    assert torch.equal(sim.models[1], own)                        # the seeded model is client 1's own
    np.testing.assert_array_equal(sim.assignment, np.arange(12) % 2)
    want = np.stack([np.bincount(fed.y[fed.client_idx[k]].numpy(), minlength=10) for k in rnd.ids])
    np.testing.assert_array_equal(rnd.counts, want)                          # each reporting client's class counts
    np.testing.assert_array_equal(rnd.sizes, [len(fed.client_idx[k]) for k in rnd.ids])
    sim.step()
    assert set(sim.history.rounds.groups.iloc[-1]) == {0, 1}               # round 2 trains the two models
    assert rule.seen[2].start.shape[0] == 2

def test_reform_answers_are_checked(fed):
    from hetfl_explore.engine.groups import GroupRound, check_reform, client_class_counts
    y = torch.tensor([0, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(client_class_counts(y, [torch.tensor([0, 1]), torch.tensor([3, 4, 5])], [1, 0], 3),
                                  [[0, 0, 3], [1, 1, 0]])
    rnd = GroupRound(0, np.array([0, 1]), np.array([0, 0]), torch.zeros(2, 3), torch.zeros(1, 3), torch.zeros(1, 3),
                     np.ones((2, 4), int), np.zeros(3, np.int64))
    assert check_reform(None, rnd) is None
    m, a = check_reform((torch.ones(2, 3), np.array([0, 1, -1])), rnd)
    assert m.shape == (2, 3) and a.tolist() == [0, 1, -1]
    for bad, match in (((torch.ones(2, 4), [0, 1, 1]), r'\(G\', 3\)'), ((torch.ones(2, 3), [0, 2, 1]), r'\[-1, 2\)'),
                       ((torch.ones(2, 3), [0, 1]), 'expected 3 integers'), ([1, 2], 'pair')):
        with pytest.raises((ValueError, TypeError), match=match): check_reform(bad, rnd, 'r')
    with pytest.raises(ValueError, match=r'GroupRound.groups: shape \(1,\)'):
        GroupRound(0, np.array([0, 1]), np.array([0]), torch.zeros(2, 3), torch.zeros(1, 3), torch.zeros(1, 3),
                   np.ones((2, 4), int), np.zeros(3, np.int64))
