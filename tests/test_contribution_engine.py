"""The contribution experiments on the engine: `ClientSubset` runs, the deletion approach, FL-Cohort, the retraining
curves and `training_scores`, checked on hand cases and against recomputations that do not use the module's helpers."""
from __future__ import annotations
import dataclasses
from types import SimpleNamespace
import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.models import mlp
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.engine.simulation import Simulation, run_fl
from hetfl_explore.clustering.data import FedStream, leaf_synthetic
from hetfl_explore.clustering.ifca import stream_federation
from hetfl_explore.clustering.contribution import (CONTRIBUTION_TRAIN, ClientSubset, deletion_influence, fl_cohort,
    fedavg_on_clients, top_fraction_curves, group_curves, drop_unstable_curves, training_scores, contribution_study)

CPU = dataclasses.replace(CONTRIBUTION_TRAIN, device='cpu')
FULL_BATCH = dataclasses.replace(CPU, batch_size=1000, lr=0.5)   # one full-batch step a round: no shuffle matters


def subset_sim(data, clients, rounds, seed=0, train=CPU):
    "A `ClientSubset` run built from the public engine API (as the module should build it)."
    fd, stream = stream_federation(data, rounds)
    cfg = dataclasses.replace(train, rounds=rounds + 1, clients_per_round=data.n_clients, seed=seed)
    return Simulation(lambda: mlp(data.n_features, [], data.n_classes), fd, ClientSubset(clients), cfg, stream=stream)


def rounds_by_protocol(sim):
    "Per round: reporting ids, their float64 trained models and the engine's weights, by the engine's round protocol."
    out = []
    while sim.stop_reason is None:
        plan = sim.begin_round()
        new, losses = sim.train_round(plan)
        out.append((plan.rep.copy(), new.double().numpy().copy(), plan.sel.weights.copy(), sim.params.double().numpy()))
        sim.finish_round(plan, new, losses)
    return out


def softmax_np(theta, X, d, K):
    "Softmax outputs of a flat linear model (weight (K, d) row-major, then bias (K,)) in float64 NumPy."
    z = X @ theta[:d * K].reshape(K, d).T + theta[d * K:]
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def union_stream(rounds=3):
    "Three clients with fixed data; client 2 holds the union of clients 0 and 1's data."
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(40, 3)).astype(np.float32) + m for m in (0, 2)]
    Xs.append(np.vstack(Xs))
    parts = [(X, (X[:, 0] > X[:, 1]).astype(int)) for X in Xs]
    return FedStream('union', 3, 2, 3, rounds, lambda t, w, split, r: parts[w], np.full((rounds + 1, 3), -1), parts[2])


def test_client_subset_trains_everyone_and_averages_the_members_by_size():
    d = leaf_synthetic(n_clients=6, rounds=2, seed=3)
    members = np.array([0, 3, 5])
    got, full = rounds_by_protocol(subset_sim(d, members, 2)), rounds_by_protocol(subset_sim(d, range(6), 2))
    for t, (ids, new, w, _) in enumerate(got):
        assert ids.tolist() == list(range(6))
        n = np.array([len(d.batch(t, c)[1]) for c in range(6)], float) * np.isin(np.arange(6), members)
        np.testing.assert_allclose(w, n / n.sum(), rtol=0, atol=1e-12)
        if t + 1 < len(got): np.testing.assert_allclose(got[t + 1][3], w @ new, atol=1e-6)   # next broadcast
    np.testing.assert_array_equal(got[0][1][members], full[0][1][members])   # round 0: the full run's batches


def test_fedavg_on_every_client_is_the_engines_plain_fedavg():
    d = leaf_synthetic(n_clients=8, rounds=3, seed=1)
    fd, stream = stream_federation(d, 3)
    cfg = dataclasses.replace(CPU, rounds=4, clients_per_round=8, seed=0)
    plain = run_fl(lambda: mlp(d.n_features, [], d.n_classes), fd, UniformSelector(), cfg, stream=stream)
    np.testing.assert_allclose(fedavg_on_clients(d, range(8), 3, train=CPU), plain.rounds['accuracy'], atol=1e-12)


def test_subset_curves_are_fedavg_on_the_chosen_clients():
    d = leaf_synthetic(n_clients=8, rounds=3, seed=1)
    sc = np.array([5., 1, 4, 0, 3, 2, 7, 6])
    on = lambda ids: fedavg_on_clients(d, ids, 3, train=CPU)
    np.testing.assert_allclose(top_fraction_curves(d, sc, (0.25,), 3, train=CPU)['top 25%'], on([6, 7]))
    g = group_curves(d, sc, (2.5, 100), 3, train=CPU)
    np.testing.assert_allclose(g['bin 0'], on([1, 3, 5]))
    np.testing.assert_allclose(g['all'], on(range(8)))
    assert g['bin 2'].isna().all() and len(g) == 4
    dr = drop_unstable_curves(d, sc, 2, 3, train=CPU)
    np.testing.assert_allclose(dr.iloc[:, 1], on([0, 1, 2, 3, 4, 5]))
    assert not np.allclose(on([6, 7]), on(range(8)))                # the subset changes the model
    for bad in ([], [0, 0], [8], [-1], [0.5]):
        with pytest.raises((ValueError, TypeError), match='clients'): fedavg_on_clients(d, bad, 3)
    with pytest.raises(ValueError, match='scores'): top_fraction_curves(d, sc[:5])
    with pytest.raises(ValueError, match='n_drop'): drop_unstable_curves(d, sc, 8)
    with pytest.raises(TypeError, match=r'^train='): fedavg_on_clients(d, [0], 1, train={'lr': 0.1})


def test_per_round_deletion_matches_a_numpy_recomputation_and_the_union_case():
    data = union_stream()
    for dist in ('tv', 'label'):
        infl = deletion_influence(data, 3, dist=dist, seed=0, train=FULL_BATCH)
        ref = np.zeros(3)
        X = data.server_test[0].astype(np.float64)
        for ids, new, w, _ in rounds_by_protocol(subset_sim(data, range(3), 3, train=FULL_BATCH)):
            full = softmax_np(w @ new, X, 3, 2)
            for u in ids:
                loo = softmax_np((w @ new - w[u] * new[u]) / (1 - w[u]), X, 3, 2)
                changed = (full.argmax(1) != loo.argmax(1)).mean()
                ref[u] += 0.5 * np.abs(full - loo).sum(1).mean() if dist == 'tv' else changed
        np.testing.assert_allclose(infl, ref / 4, atol=1e-6)   # rounds 0..3
    tv = deletion_influence(data, 3, seed=0, train=FULL_BATCH)
    assert tv[2] < 1e-6 < 1e-3 < tv[:2].min()         # client 2's model is the round's mean: without it, no change


def test_retrain_deletion_is_the_distance_to_the_run_without_the_client():
    data = union_stream()
    infl = deletion_influence(data, 2, mode='retrain', seed=0, train=FULL_BATCH)
    X = data.server_test[0].astype(np.float64)
    final = lambda ids: subset_sim(data, ids, 2, train=FULL_BATCH).run(progress=False).final_params.double().numpy()
    p_all = softmax_np(final(range(3)), X, 3, 2)
    for u in range(3):
        p_u = softmax_np(final([v for v in range(3) if v != u]), X, 3, 2)
        assert infl[u] == pytest.approx(0.5 * np.abs(p_all - p_u).sum(1).mean(), abs=1e-6)
    assert infl[2] < 1e-5 < 1e-3 < infl[:2].min()                 # without client 2 the run is the same
    one = FedStream('one', 1, 2, 3, 2, lambda t, w, s, r: (np.zeros((4, 3), np.float32), np.array([0, 1, 0, 1])),
                    np.full((3, 1), -1), (np.zeros((4, 3), np.float32), np.array([0, 1, 0, 1])))
    with pytest.raises(ValueError, match='1 client'): deletion_influence(one, 1, mode='retrain', train=CPU)
    assert deletion_influence(one, 1, train=CPU).shape == (1,)      # per round: without it the model stays put


def test_fl_cohort_matches_a_leave_cohort_out_recomputation_with_sklearn():
    d = leaf_synthetic(n_clients=8, rounds=3, seed=0, label_flip=(0,))
    fc = fl_cohort(d, k=3, rounds=2, train=CPU)
    assert fc['cohort'].sum() == pytest.approx(1.0) and (fc['cohort'] >= 0).all()
    np.testing.assert_allclose(np.bincount(fc['labels'], weights=fc['client']), fc['cohort'])
    ids, new, w, _ = rounds_by_protocol(subset_sim(d, range(8), 2))[-1]
    X, y = d.server_test[0].astype(np.float64), d.server_test[1]
    predict = lambda m: softmax_np(m @ new / m.sum(), X, d.n_features, d.n_classes).argmax(1)
    f1 = lambda m: f1_score(y, predict(m), average='weighted')
    raw = np.array([f1(w) - f1(w * (fc['labels'][ids] != j)) for j in range(3)]).clip(0)
    np.testing.assert_allclose(fc['cohort'], raw / raw.sum(), atol=1e-9)
    np.testing.assert_allclose(fl_cohort(d, k=1, rounds=2, train=CPU)['client'], np.full(8, 1 / 8))


def test_training_scores_read_freq_or_recur_from_any_run_record():
    np.testing.assert_array_equal(training_scores(SimpleNamespace(freq=np.array([2, 0, 1]), recur=None)), [2., 0., 1.])
    gp = SimpleNamespace(recur=np.array([0, 3]))
    np.testing.assert_array_equal(training_scores(gp, count_initial=True), [1., 4.])
    for bad in (None, 3):
        with pytest.raises(TypeError, match=r'^run=.*expected a run record'): training_scores(bad)
    with pytest.raises(ValueError, match=r'^run=.*neither'): training_scores(SimpleNamespace(freq=None, recur=None))


def test_runs_are_deterministic_and_seeds_matter():
    d = leaf_synthetic(n_clients=6, rounds=2, seed=2)
    a, b = (deletion_influence(d, 2, seed=0, train=CPU) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, deletion_influence(d, 2, seed=1, train=CPU))
    with pytest.raises(ValueError, match='server_test'):
        deletion_influence(dataclasses.replace(d, server_test=(np.zeros((0, d.n_features)), np.zeros(0, int))), 1)


def test_the_study_keeps_its_columns_and_signature():
    d = leaf_synthetic(n_clients=8, rounds=2, seed=0, label_flip=(0,))
    st = contribution_study(d, 2, 0, k=2, cohorts=2)
    assert list(st.columns) == ['Deletion', 'FL-Cohort', 'CA-FL', 'GP-FL (1 - minmax_scores)'] and len(st) == 8
    assert np.isfinite(st.to_numpy()).all()
