"""IFCA (Ghosh et al., 2020, Algorithm 1, option II) on the engine, against an independent float64 NumPy implementation
of the paper's algorithm: the argmin rule and its ties, the hand-computed case, k = 1 is FedAvg exactly, and the
parameters that move the outcome."""
import dataclasses, math
import numpy as np
import pytest
import torch
from hetfl_explore.foundation.data import FederatedData, digits_federation
from hetfl_explore.engine.models import mlp
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.engine.simulation import Simulation, run_fl, BYTES_PER_PARAM
from hetfl_explore.clustering.ifca import IFCA, ifca_assign, stream_federation
from hetfl_explore.clustering.data import har_like_stream
from hetfl_explore.engine.groups import FixedGroups

torch.set_num_threads(1)

S, LR, ROUNDS = 0.5, 0.5, 5
X1 = np.array([[1., 0.], [-1., 0.], [1., 0.], [-1., 0.]])
Y_A, Y_B = (X1[:, 0] > 0).astype(int), (X1[:, 0] < 0).astype(int)
THETA0 = np.array([-S, 0., S, 0., 0., 0.])          # a linear softmax model: '1.weight' (2, 2) row-major, then '1.bias'

def hand_data(clients=None) -> FederatedData:
    "A federation of the given (x, y) clients; by default four holding (+-1, 0) twice each, labelled by A, A, B, B."
    clients = clients or CLIENTS
    xs = torch.tensor(np.concatenate([x for x, _ in clients]), dtype=torch.float32)
    ys = torch.tensor(np.concatenate([y for _, y in clients]))
    ends = np.cumsum([len(y) for _, y in clients])
    idx = [torch.arange(e - len(y), e) for e, (_, y) in zip(ends, clients)]
    zeros = torch.zeros(len(ys), dtype=torch.long)
    return FederatedData(x=xs, y=ys, a=zeros, client_idx=idx, x_test=xs, y_test=ys, a_test=zeros, n_classes=2,
                         n_attrs=1)

def np_loss_grad(theta, x, y):
    "Mean cross-entropy of the linear softmax model `theta` on (x, y) and its gradient, in float64 NumPy."
    W, b = theta[:4].reshape(2, 2), theta[4:]
    z = x @ W.T + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    G = (p - np.eye(2)[y]) / len(y)
    return loss, np.concatenate([(G.T @ x).ravel(), G.sum(0)])

def ifca_numpy(starts, clients, rounds, lr):
    "Algorithm 1, option II, every client each round, one full-batch gradient step: models and assignments per round."
    theta, chosen = np.array(starts, np.float64), []
    for _ in range(rounds):
        s = np.array([int(np.argmin([np_loss_grad(w, x, y)[0] for w in theta])) for x, y in clients])
        new = [theta[j] - lr * np_loss_grad(theta[j], x, y)[1] for (x, y), j in zip(clients, s)]
        theta = np.stack([np.mean([new[i] for i in np.flatnonzero(s == j)], 0) if (s == j).any() else theta[j]
                          for j in range(len(theta))])
        chosen.append(s)
    return theta, np.array(chosen)

def by_client(h, n):
    "Each round's cluster of every client (every client takes part in every round)."
    out = np.full((len(h), n), -1)
    for t, (ids, g) in enumerate(zip(h.rounds.selected, h.rounds.groups)): out[t, ids] = g
    return out

CLIENTS = [(X1, Y_A), (X1, Y_A), (X1, Y_B), (X1, Y_B)]
HAND_CFG = RunConfig(rounds=ROUNDS, clients_per_round=4, batch_size=4, lr=LR, local_epochs=1, weighting='equal',
                     backend='sequential')
LINEAR = lambda: mlp(2, [], 2)

def run_hand(starts, cfg=HAND_CFG, data=None):
    rule = IFCA(len(starts), starts=torch.tensor(np.asarray(starts), dtype=torch.float32))
    return run_fl(LINEAR, data or hand_data(), UniformSelector(), cfg, grouping=rule)

def test_ties_go_to_the_lowest_index_and_nan_counts_as_infinite():
    assert ifca_assign([[1., 1.], [2., 1.], [3., 3.]]).tolist() == [0, 1, 0]
    assert ifca_assign([[5., 2., 2.]]).tolist() == [1]
    assert ifca_assign([[np.nan, 3.], [np.nan, np.nan], [np.inf, np.inf]]).tolist() == [1, 0, 0]
    assert ifca_assign(np.zeros((0, 3))).tolist() == []

def test_equal_starts_tie_every_client_into_cluster_0():
    "Equal losses go to the lowest index; with one label map cluster 0 then improves, keeps everyone and is FedAvg."
    first = run_hand(np.stack([THETA0, THETA0]))
    assert (by_client(first, 4)[0] == 0).all()                   # round 0: every client ties
    same_map = hand_data([(X1, Y_A)] * 4)
    h = run_hand(np.stack([THETA0, THETA0]), HAND_CFG, same_map)
    assert (by_client(h, 4) == 0).all()
    assert torch.equal(h.final_params[1], torch.tensor(THETA0, dtype=torch.float32))   # never trained: its start
    assert torch.equal(h.final_params[0], run_hand(THETA0[None], HAND_CFG, same_map).final_params)

def test_hand_case_losses_are_the_hand_values():
    rule = IFCA(2, starts=torch.tensor(np.stack([THETA0, -THETA0]), dtype=torch.float32))
    sim = Simulation(LINEAR, hand_data(), UniformSelector(), HAND_CFG, grouping=rule)
    right, wrong = math.log(1 + math.exp(-2 * S)), math.log(1 + math.exp(2 * S))
    np.testing.assert_allclose(sim._group_losses(np.arange(4)), [[right, wrong]] * 2 + [[wrong, right]] * 2, atol=1e-6)

def test_engine_equals_the_papers_algorithm_round_after_round():
    starts = np.stack([THETA0, -THETA0])
    h = run_hand(starts)
    theta, chosen = ifca_numpy(starts, CLIENTS, ROUNDS, LR)
    assert (chosen == [0, 0, 1, 1]).all()                        # the planted clusters, from the first round on
    assert (by_client(h, 4) == chosen).all()
    np.testing.assert_allclose(h.final_params.double().numpy(), theta, atol=1e-6)

def test_a_start_near_the_wrong_cluster_is_corrected_by_the_argmin():
    "Starts that are not mirror images: the assignments of the engine and the reference agree in every round."
    rng = np.random.default_rng(3)
    starts = np.stack([THETA0 + rng.normal(0, 0.3, 6), rng.normal(0, 0.3, 6)])
    h = run_hand(starts)
    theta, chosen = ifca_numpy(starts, CLIENTS, ROUNDS, LR)
    assert (by_client(h, 4) == chosen).all()
    np.testing.assert_allclose(h.final_params.double().numpy(), theta, atol=1e-5)

def test_k1_equals_fedavg_exactly():
    fed = digits_federation(num_clients=20, alpha=0.5, seed=0)
    cfg = RunConfig(rounds=4, clients_per_round=5, batch_size=10, lr=0.3, aggregator='fedavgm', server_momentum=0.5,
                    seed=2)
    plain = run_fl(lambda: mlp(64, 16, 10), fed, UniformSelector(), cfg)
    one = run_fl(lambda: mlp(64, 16, 10), fed, UniformSelector(), cfg, grouping=IFCA(1))
    assert torch.equal(plain.final_params, one.final_params)
    cols = ['accuracy', 'worst_group_accuracy', 'loss', 'train_loss', 'selected', 'weights', 'bytes', 'msg_download',
            'sim_time']
    assert plain.rounds[cols].equals(one.rounds[cols])

def test_a_parameter_varied_moves_the_output():
    starts = np.stack([THETA0, -THETA0])
    base = run_hand(starts)
    swapped = run_hand(starts[::-1].copy())                      # the starts' order names the clusters
    assert (by_client(swapped, 4) == 1 - by_client(base, 4)).all()
    assert torch.equal(swapped.final_params, base.final_params.flip(0))
    one = run_hand(starts[:1])                                   # k = 1: one model for both label maps
    assert (by_client(one, 4) == 0).all() and not torch.allclose(one.final_params, base.final_params[0])
    slower = run_hand(starts, dataclasses.replace(HAND_CFG, lr=LR / 2))
    assert not torch.allclose(slower.final_params, base.final_params)
    right = (np.array([[1., 0.]] * 8), np.ones(8, int))        # an A client holding 8 points with x_1 > 0 only
    uneven = hand_data([CLIENTS[0], right, *CLIENTS[2:]])
    sized = run_hand(starts, dataclasses.replace(HAND_CFG, weighting='size'), uneven)
    equal = run_hand(starts, HAND_CFG, uneven)
    assert not torch.allclose(sized.final_params[0], equal.final_params[0])   # cluster A: the plain mean differs
    assert torch.equal(sized.final_params[1], equal.final_params[1])          # cluster B's members hold equal data

def test_every_participant_downloads_all_k_models():
    h = run_hand(np.stack([THETA0, -THETA0, np.zeros(6)]))
    assert (h.rounds.msg_download == 3 * h.rounds.n_selected).all()
    assert (h.rounds.bytes_download == BYTES_PER_PARAM * 6 * 3 * h.rounds.n_selected).all()

def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match='n_groups'): IFCA(0)
    with pytest.raises(ValueError, match='starts'): IFCA(2, starts=torch.zeros(3, 6))
    with pytest.raises(ValueError, match='init'): IFCA(2, init='random')
    with pytest.raises(ValueError, match='losses'): ifca_assign([1., 2.])
    with pytest.raises(ValueError, match='starts'):
        Simulation(LINEAR, hand_data(), UniformSelector(), HAND_CFG, grouping=IFCA(2, starts=torch.zeros(2, 5)))

def test_a_fedstream_runs_on_the_engine_round_by_round():
    har = har_like_stream(group_sizes=(2, 3), rounds=3, drift_round=2, seed=1)
    data, stream = stream_federation(har)
    for t in range(4):
        for w in range(har.n_clients):
            X, y = har.batch(t, w)
            rows = stream.at(t)[w]
            assert torch.equal(data.x[rows], torch.as_tensor(X))
            assert torch.equal(data.y[rows], torch.as_tensor(y).long())
    assert torch.equal(data.x_test, torch.as_tensor(har.server_test[0])) and len(stream.rounds) == 4
    assert len(stream_federation(har, rounds=1)[1].rounds) == 2
    cfg = RunConfig(rounds=4, clients_per_round=5, batch_size=16, lr=0.05, seed=0)
    h = run_fl(lambda: mlp(har.n_features, [], har.n_classes), data, UniformSelector(), cfg, stream=stream,
               grouping=FixedGroups(har.groups[0]))
    sizes = h.clients.groupby('round').n_samples.sum().tolist()
    assert sizes == [sum(len(har.batch(t, w)[1]) for w in range(har.n_clients)) for t in range(4)]
    with pytest.raises(ValueError, match='rounds'): stream_federation(har, rounds=4)
