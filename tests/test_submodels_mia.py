"""Property and fixture tests for hetfl_explore.modelhet.submodels, .mia and .modelhet (fast, no network)."""
import json, pickle
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from hetfl_explore.modelhet.submodels import (WidthCNN, count_params, hidden_sizes, full_set, random_set, quadrant_sets,
                                     extract_state, aggregate_submodels, coverage, ChannelSchedule, METHODS,
                                     taxonomy_table, small_clients)
from hetfl_explore.modelhet.mia import (AttackResult, roc_auc, tpr_at_fpr, advantage, best_advantage, min_nonmembers,
                               mia_split, n_known_members, attack_metrics)
from hetfl_explore.modelhet.experiments import (appendix_tables, spread_table, frequency_spearman, modelhet_headlines, real_federation)
from hetfl_explore.foundation.data import dirichlet_size_split
from hetfl_explore.foundation.loaders import load_cifar, load_femnist_leaf

H = hidden_sizes(16)


@pytest.mark.parametrize('u,c,k,n', [(8, 3, 10, 25_418), (16, 3, 10, 99_210), (32, 3, 10, 391_946), (64, 3, 10, 1_558_026),
                                     (16, 3, 100, 110_820), (16, 1, 62, 105_630)])
def test_param_counts(u, c, k, n):
    assert count_params(WidthCNN(u, c, k)) == n


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 4))
def test_full_sets_aggregate_to_fedavg(seed, n):
    torch.manual_seed(seed)
    g = WidthCNN(8, 1, 10).state_dict()
    locs = [{k: v + torch.randn_like(v) for k, v in g.items()} for _ in range(n)]
    w = np.random.default_rng(seed).uniform(1, 100, n)
    agg = aggregate_submodels(g, locs, [full_set(hidden_sizes(8))] * n, w)
    for k in g:
        ref = sum(wi * s[k] for wi, s in zip(w, locs)) / w.sum()
        torch.testing.assert_close(agg[k], ref.to(agg[k].dtype), rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_aggregation_is_cellwise_mean_over_covering_clients(seed):
    rng = np.random.default_rng(seed)
    g = WidthCNN(16, 1, 10).state_dict()
    sets = [random_set(H, 0.5, rng) for _ in range(3)]
    locs = [{k: v + 1.0 + i for k, v in extract_state(g, s).items()} for i, s in enumerate(sets)]
    agg = aggregate_submodels(g, locs, sets, [1, 1, 1])
    cov = coverage(g, sets)
    name = 'blocks.2.conv.weight'
    d = agg[name] - g[name]
    assert torch.all(d[cov[name] == 0] == 0)                       # uncovered cells keep their value
    assert torch.all(d[cov[name] > 0] >= 1 - 1e-5)                 # covered cells moved to a mean of +1..+3


def test_random_sets_are_coupled_and_sized():
    rng = np.random.default_rng(0)
    for _ in range(20):
        s = random_set(H, 0.5, rng)
        assert s.coupled and [len(o) for o in s.outs] == hidden_sizes(16, 0.5)
    assert not random_set(H, 0.5, rng, coupling='independent').coupled


def test_quadrants_tile_hidden_layers():
    cov = coverage(WidthCNN(16, 3, 10).state_dict(), quadrant_sets(H))
    for l in (1, 2, 3): assert torch.all(cov[f'blocks.{l}.conv.weight'] == 1)


@pytest.mark.parametrize('method', METHODS)
def test_schedule_frequency_and_coupling(method):
    s = ChannelSchedule(method, H, list(range(8)), seed=3)
    emp = s.empirical_frequency(40)
    if method in ('OSR', 'GSR', 'USR'): assert emp == pytest.approx(1 / 40)
    else: assert emp == pytest.approx(s.nominal_frequency())
    assert all(s.set_for(k, t).coupled for k in range(8) for t in range(5))
    assert s.set_for(8, 0).label == 'full'


def test_unstudied_and_small_clients():
    tax = taxonomy_table()
    assert tax.studied.sum() == 9
    for code in ('GSM', 'UFM', 'USM'):
        with pytest.raises(ValueError, match='does not study'): ChannelSchedule(code, H, [0])
    assert small_clients(np.array([50, 10, 30, 20]), 1) == [1, 2, 3]


def test_metric_conventions():
    s, l = np.array([3., 2, 1, 0]), np.array([1, 0, 1, 0])
    assert roc_auc(s, l) == 0.75
    assert tpr_at_fpr(s, l, 0.5, strict_resolution=False) == 1.0       # <=: the point with FPR exactly 0.5 counts
    assert tpr_at_fpr(s, l, 0.49, strict_resolution=False) == 0.5
    assert np.isnan(tpr_at_fpr(s, l, 1e-3))                             # 2 non-members < min_nonmembers(1e-3)
    assert min_nonmembers(1e-3) == 1000 and min_nonmembers(0.01) == 100
    assert advantage(np.array([1, 0, 0, 0]), l) == 0.5 and best_advantage(s, l) == 0.5
    with pytest.raises(ValueError): AttackResult([0.1], [2], [0])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_advantage_equals_balanced_accuracy_gap(seed):
    rng = np.random.default_rng(seed)
    lab = np.r_[np.ones(50, int), np.zeros(50, int)]
    pred = rng.integers(0, 2, 100)
    acc = (pred == lab).mean()
    assert advantage(pred, lab) == pytest.approx(2 * (acc - 0.5))
    sc = rng.normal(size=100)
    assert best_advantage(sc, lab) >= 0 and 0 <= roc_auc(sc, lab) <= 1


def test_split_knowledge_and_balance():
    x, y = torch.randn(250, 1, 8, 8), torch.randint(0, 10, (250,))
    xp, yp = torch.randn(100, 1, 8, 8), torch.randint(0, 10, (100,))
    sp = mia_split(x, y, xp, yp, seed=1)
    assert n_known_members(250) == 3 and n_known_members(1000) == 10
    assert len(sp.x_known) == 3 and sp.labels.sum() == 100 and len(sp.labels) == 200
    assert not set(sp.member_idx) & set(np.setdiff1d(np.arange(250), sp.member_idx)) - set()


def test_thesis_tables_reproduce_table9_and_checks():
    A = appendix_tables()
    t9 = spread_table(A).set_index(['dataset', 'n_large', 'metric']).delta
    assert t9[('CIFAR-10', 2, 'client_acc')] == pytest.approx(37.65, abs=0.01)
    assert t9[('CIFAR-100', 5, 'client_acc')] == pytest.approx(11.88, abs=0.01)
    assert t9[('CIFAR-10', 8, 'auc_avg')] == pytest.approx(0.66, abs=0.011)
    fs = frequency_spearman(A).set_index(['dataset', 'n_large'])
    assert (fs.client_acc > 0.85).all()
    for ds in ('CIFAR-10', 'CIFAR-100'): assert modelhet_headlines(A[A.dataset == ds]).holds.all()


THESIS_TABLES = {24: 'CIFAR-10', 25: 'CIFAR-100', 26: 'FEMNIST'}   # Németh (2025), thesis, appendix B

def test_thesis_tables_are_data_files_read_exactly():
    "Tables 24-26 are the package's data files, each naming its source; appendix_tables holds every cell unchanged."
    import csv
    from importlib import resources
    A = appendix_tables()
    assert len(A) == 87
    for n, ds in THESIS_TABLES.items():
        path = resources.files('hetfl_explore').joinpath('data', 'tables', f'nemeth2025_table{n}.csv')
        source, header, *lines = path.read_text(encoding='utf-8').splitlines()
        assert source.startswith('# Németh (2025), thesis, appendix B, ') and f'Table {n}: {ds},' in source
        rows, cols = list(csv.reader(lines)), header.split(',')
        got = A[A.dataset == ds]
        assert len(got) == len(rows) == 29 and all(len(r) == len(cols) == 22 for r in rows)
        for (_, r), cells in zip(got.iterrows(), rows):
            for col, cell in zip(cols, cells):
                if col == 'method': assert r.label == cell
                elif col in ('dataset', 'rebuilt'): assert r[col] == cell
                elif col == 'T': assert r[col] == cell if cell else r[col] != r[col]   # a baseline has no T (NaN)
                elif col == 'n_large': assert r[col] == int(cell)
                else: assert r[col] == float(cell), (n, r.label, col, cell)   # the exact decimal the table prints
    c10 = A[(A.dataset == 'CIFAR-10')]
    assert c10.query("method == 'FedAvg-small'").auc_avg.item() == 51.60          # figures the chapter asserts
    assert c10[c10.n_large == 2].sort_values('client_acc').iloc[0][['method', 'client_acc']].tolist() == ['OSR', 32.30]
    assert sorted(A[A.rebuilt != ''].label.unique()) == ['FedAvg100k', 'GFM', 'GFR', 'OFM', 'OFR', 'OSM', 'OSR', 'USR']


def test_thesis_tables_6_to_10_are_data_files_read_exactly():
    "Tables 6, 7, 8 and 10 come from their data files cell for cell, with the figures the chapter quotes."
    import csv
    from importlib import resources
    from hetfl_explore.modelhet.experiments import table6, table7, table8, table10
    for n, df in ((6, table6()), (7, table7()), (8, table8().reset_index()), (10, table10())):
        path = resources.files('hetfl_explore').joinpath('data', 'tables', f'nemeth2025_table{n}.csv')
        source, *lines = path.read_text(encoding='utf-8').splitlines()
        assert source.startswith(f'# Németh (2025), thesis, Table {n}: ')
        header, *rows = list(csv.reader(lines))
        assert header == list(df.columns) and len(rows) == len(df) > 0
        for got, cells in zip(df.itertuples(index=False), rows):
            assert list(got) == [c if isinstance(v, str) else float(c) for v, c in zip(got, cells)], (n, cells)
    assert table8().stack().idxmin() == ('CIFAR-100', '1.6M') and table8().stack().min() == -0.90
    assert table6().set_index(['method', 'coupling']).loc[('GFR', 'layerwise'), 'client_acc'] == 62.80
    t10 = table10()
    assert len(t10) == 22 and t10.variant.nunique() == 2
    assert t10.query("method == 'OSR'").d_client_acc.tolist() == [.91, -2.24]


def test_dirichlet_size_split_is_class_balanced():
    y = np.repeat(np.arange(10), 100)
    parts = dirichlet_size_split(y, 10, 0.85, seed=0, min_size=10)
    assert sorted(np.concatenate(parts).tolist()) == list(range(1000))
    frac = np.array([[np.mean(y[p] == c) for c in range(10)] for p in parts if len(p) >= 50])
    assert np.abs(frac - 0.1).max() < 0.05


def test_real_format_loaders(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / 'cifar-100-python'; d.mkdir()
    for f in ('train', 'test'):
        with open(d / f, 'wb') as fh:
            pickle.dump({b'data': rng.integers(0, 256, (30, 3072), dtype=np.uint8), b'fine_labels': list(rng.integers(0, 100, 30))}, fh)
    xtr, ytr, xte, yte = load_cifar(tmp_path, 'cifar100')
    assert xtr.shape == (30, 3, 32, 32) and 0 <= float(xtr.min()) and float(xtr.max()) <= 1
    with pytest.raises(FileNotFoundError, match='never downloads'): load_cifar(tmp_path, 'cifar10')
    for split, users in (('train', ['w1', 'w2', 'w3']), ('test', ['w9'])):
        (tmp_path / 'femnist' / split).mkdir(parents=True)
        data = {'users': users, 'num_samples': [4] * len(users),
                'user_data': {u: {'x': rng.random((4, 784)).tolist(), 'y': rng.integers(0, 62, 4).tolist()} for u in users}}
        (tmp_path / 'femnist' / split / 'all_data_0.json').write_text(json.dumps(data))
    writers, (xt, yt) = load_femnist_leaf(tmp_path / 'femnist')
    assert len(writers) == 3 and xt.shape == (4, 1, 28, 28)
    fd = real_federation(tmp_path / 'femnist', 'femnist', num_clients=3)
    assert fd.num_clients == 3 and fd.n_classes == 62 and int(fd.client_sizes.sum()) == 12


# ------------------------------------------------------------------ LiRA inside a federation, scores
from torch import nn
from hetfl_explore.modelhet.mia import (lira_population, lira_offline, disjoint_pool, train_shadows, MIASplit,
                                        tpr_at_fpr as _tpr)

BONUS, NOISE, POOL_SHIFT = 1.0, 0.5, 0.3   # planted member bonus, per-model noise sd, pull towards the pool's mean


def _keys(x): return {r.tobytes() for r in x.float().numpy()}


class Planted(nn.Module):
    "A planted 'model': logits (0, s) with s = 2 x0 + shift(pool mean) + model noise + BONUS iff x was in its training set."
    def __init__(self, x_train, seed):
        super().__init__()
        self.p = nn.Parameter(torch.zeros(1)); self.members = _keys(x_train); self.seed = seed
        self.shift = POOL_SHIFT * float(x_train[:, 0].mean()) if len(x_train) else 0.0
    def forward(self, x):
        u = torch.frac(x[:, 1].double() * 1e4 * (self.seed + 1) * 0.6180339887).clamp(1e-6, 1 - 1e-6)
        noise = NOISE * np.sqrt(2) * torch.erfinv(2 * u - 1)
        member = torch.tensor([r.tobytes() in self.members for r in x.float().numpy()], dtype=torch.float64)
        s = 2 * x[:, 0].double() + self.shift + noise + BONUS * member
        return torch.stack([torch.zeros_like(s), s], 1).float() + 0 * self.p


def _planted_case(n=800, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(5 * n, 2, generator=g); Y = torch.ones(5 * n, dtype=torch.long)
    parts = [slice(i * n, (i + 1) * n) for i in range(5)]   # target's members, other clients (2n), test, independent pool
    members, fed_pool, test, indep = X[parts[0]], X[n:3 * n], X[parts[3]], X[parts[4]]
    split = MIASplit(torch.cat([members, test]), Y[:2 * n], np.r_[np.ones(n, int), np.zeros(n, int)],
                     members[:0], Y[:0], np.arange(n), np.arange(n))
    return members, fed_pool, indep, split, Y


def test_lira_in_federation_matches_independent_shadows_and_never_trains_on_target():
    members, fed_pool, indep, split, Y = _planted_case()
    target = Planted(members, seed=999)
    seen = []
    def train_fn(m, x, y, s): seen.append(x.clone()); return Planted(x, s)
    fed = lira_population(target, split, lambda: nn.Linear(1, 1), fed_pool, Y[:len(fed_pool)], 16, train_fn, True, seed=0)
    ind = lira_population(target, split, lambda: nn.Linear(1, 1), indep, Y[:len(indep)], 16, train_fn, True, seed=1)
    # no shadow ever trains on a target record (nor on a non-member query)
    assert len(seen) == 32 and all(not (_keys(x) & _keys(split.x)) for x in seen)
    # balanced design: each pool record IN for exactly 8 of 16 shadows; every query scored against all 16
    assert (fed.info['shadows'].in_pool.sum(0) == 8).all() and (fed.info['n_out'] == 16).all()
    # planted case: the in-federation estimate agrees with the offline run on independent shadows
    # (tolerance: 0.05 in TPR at 1 % FPR, about 3 binomial standard errors at n = 800; 0.015 in AUC;
    # measured over data seeds 0-5: |dTPR| <= 0.035, |dAUC| <= 0.011)
    t_fed, t_ind = _tpr(fed.scores, fed.labels, 0.01), _tpr(ind.scores, ind.labels, 0.01)
    assert 0.2 < t_ind < 0.9 and abs(t_fed - t_ind) <= 0.05
    assert abs(roc_auc(fed.scores, fed.labels) - roc_auc(ind.scores, ind.labels)) <= 0.015


def test_lira_population_refuses_the_targets_records():
    members, fed_pool, _, split, Y = _planted_case(100)
    bad = torch.cat([fed_pool, members[:5]])
    with pytest.raises(ValueError, match='known members'):
        lira_population(Planted(members, 0), split, lambda: nn.Linear(1, 1), bad, Y[:len(bad)], 4,
                        lambda m, x, y, s: pytest.fail('trained before checking the pool'))
    xp, _ = disjoint_pool(bad, Y[:len(bad)], split.x)
    assert len(xp) == len(fed_pool)


def test_lira_ranks_by_z_not_saturating_phi():
    members, fed_pool, _, split, Y = _planted_case(300)
    target = Planted(members, 999); target.forward_orig = target.forward
    big = lambda x: target.forward_orig(x) * torch.tensor([1., 40.])   # confident members: Phi(z) rounds to 1.0
    target.forward = big
    r = lira_population(target, split, lambda: nn.Linear(1, 1), fed_pool, Y[:len(fed_pool)], 8,
                        lambda m, x, y, s: Planted(x, s))
    assert (r.info['lam'][r.labels == 1] == 1.0).sum() > 10        # Phi saturates for many members ...
    assert len(np.unique(r.scores[r.labels == 1])) == (r.labels == 1).sum()   # ... z does not tie
    assert _tpr(r.scores, r.labels, 0.01) > _tpr(r.info['lam'], r.labels, 0.01)
    assert np.isfinite(r.info['log_lam']).all() and ((r.scores > 0) == (r.preds == 1)).all()


def test_tpr_at_fpr_refuses_nan():
    s, l = np.r_[1., 2, 3, 4], np.r_[1, 0, 1, 0]
    for strict in (True, False):
        with pytest.raises(ValueError, match='fpr'): tpr_at_fpr(s, l, fpr=float('nan'), strict_resolution=strict)


def test_weighting_values_documented_are_accepted():
    from hetfl_explore.engine.config import RunConfig
    with pytest.raises(ValueError, match="'size', 'equal'"): RunConfig(weighting='samples')
    nb = json.load(open('nbs/modelhet/30_submodels.ipynb'))
    src = ''.join(''.join(c['source']) for c in nb['cells'])
    assert "weighting='samples'" not in src and "weighting='uniform'" not in src and "weighting='size'" in src

def test_channel_schedule_tiny_rate_fails_fast():
    "ChannelSchedule(..., rate=1e-300) is refused by the first set it would list (1e600 names), not by a MemoryError."
    from hetfl_explore.modelhet.submodels import ChannelSchedule
    for method in ('OSM', 'OFM', 'GFM'):
        with pytest.raises(ValueError, match='rate=1e-300'): ChannelSchedule(method, [64, 32], [0, 1], rate=1e-300)


# ---- non-IID clients: non-members drawn from the client's own (class x attribute) mix ------------------------------
NULL_SEEDS = range(10)     # client draws
NULL_MARGIN = 0.05         # |mean AUC - 0.5| allowed for members that were never trained on


def _skewed_null_case():
    "A digits target trained on 300 digits, and a federation of the other digits whose 5 clients hold 2 classes each."
    from sklearn.datasets import load_digits
    from hetfl_explore.foundation.data import FederatedData
    from hetfl_explore.modelhet.mia import fit_classifier
    dg = load_digits(); X = torch.tensor(dg.images[:, None] / 16, dtype=torch.float32); Y = torch.tensor(dg.target)
    perm = torch.from_numpy(np.random.default_rng(0).permutation(len(X)))
    own, test, fed = perm[:300], perm[300:700], perm[700:]
    torch.manual_seed(0)
    target = fit_classifier(WidthCNN(8, 1, 10), X[own], Y[own], epochs=30, batch_size=32, seed=0)
    z = lambda n: torch.zeros(n, dtype=torch.long)
    data = FederatedData.from_pool(X[fed], Y[fed], z(len(fed)), seed=0, n_classes=10, n_attrs=1, test=(X[test], Y[test], z(len(test))),
                                   clients=lambda yy, aa, s: [np.flatnonzero(np.asarray(yy) // 2 == k) for k in range(5)])
    return target, data


def test_per_client_attack_on_label_skewed_clients_is_a_null_test_when_never_trained():
    "Members the target never saw: attack_clients' AUC averages 0.5 (a uniform test-set draw gives about 0.26 here)."
    from types import SimpleNamespace
    from hetfl_explore.modelhet.experiments import attack_clients, ModelHetPreset
    target, data = _skewed_null_case()
    run = SimpleNamespace(client_model=lambda k: target, global_model=lambda: target, small=[],
                          sets=[SimpleNamespace(rate=1.0)] * data.num_clients)
    aucs = [attack_clients(run, data, ModelHetPreset(attacks=('yeom',)), seed=s, global_model=False).auc.mean() for s in NULL_SEEDS]
    assert abs(np.mean(aucs) - 0.5) < NULL_MARGIN, aucs


def test_client_split_matches_class_counts_and_one_class_clients_stay_in_their_class():
    from hetfl_explore.modelhet.experiments import client_mia_split
    _, data = _skewed_null_case()
    for k in range(data.num_clients):
        sp = client_mia_split(data, k, seed=k)
        assert (np.bincount(sp.y[sp.labels == 1], minlength=10) == np.bincount(sp.y[sp.labels == 0], minlength=10)).all()
        assert set(sp.y.tolist()) == {2 * k, 2 * k + 1}
    x, y = torch.randn(30, 1, 8, 8), torch.full((30,), 3)
    with pytest.raises(ValueError, match='strata'):      # a one-class client whose class the pool lacks
        mia_split(x[:20], y[:20], x[20:], y[20:] * 0, strata=(y[:20], y[20:] * 0))
    for bad in ((y[:20],), (y[:20], y[20:25]), (y[:20].float() - 4, y[20:]), 'ab'):
        with pytest.raises((ValueError, TypeError), match='strata'): mia_split(x[:20], y[:20], x[20:], y[20:], strata=bad)


def test_uniform_split_is_unchanged_without_strata():
    x, y = torch.arange(60.).view(60, 1), torch.arange(60) % 3
    sp = mia_split(x[:40], y[:40], x[40:], y[40:], seed=3)
    rng = np.random.default_rng(3); perm = rng.permutation(40); rest = perm[3:]
    assert (sp.member_idx == np.sort(rest[:20])).all() and (sp.nonmember_idx == np.sort(rng.permutation(20)[:20])).all()


def test_preset_mia_cap_is_a_positive_integer():
    from hetfl_explore.modelhet.experiments import ModelHetPreset
    for bad in ('x', -1, 0, 1.5, None, float('nan')):
        with pytest.raises((ValueError, TypeError), match='mia_cap'): ModelHetPreset(mia_cap=bad)
