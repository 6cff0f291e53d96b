"""Property tests of hetfl_explore.fairness.metrics: our 150-sample worked vector, federated exactness, and agreement with
fairlearn (a test-only oracle) wherever both are defined, plus the documented NaN-vs-0 difference."""
import warnings
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck

from hetfl_explore.fairness import metrics as F

fl = pytest.importorskip('fairlearn.metrics')
from sklearn.metrics import accuracy_score

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def labelled(draw, max_groups=4):
    "Random (y, a, y_hat) with binary y and 1..max_groups protected groups."
    n = draw(st.integers(1, 60))
    g = draw(st.integers(1, max_groups))
    ints = lambda hi: st.lists(st.integers(0, hi), min_size=n, max_size=n)
    return np.array(draw(ints(1))), np.array(draw(ints(g - 1))), np.array(draw(ints(1))), g


def quiet(f, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', F.UndefinedMetricWarning)
        return float(f(*a, **kw))


def test_worked_vector_exact():
    C = F.worked_example()
    rep = F.fairness_report(C, percent=False)
    expected = dict(acc=128 / 150, wga=0.6, d_eop=0.30, d_dp=0.14, d_pe=0.10, d_eod=0.30, d_ap=0.14,
                    d_wcal=36 / 42 - 6 / 14, di=0.14)
    for k, v in expected.items(): assert rep[k] == pytest.approx(v, abs=1e-9), k
    assert float(F.equalized_odds_diff(C, agg='mean')) == pytest.approx(0.20, abs=1e-9)
    assert float(F.equal_opportunity_diff(C, pos_label=0)) == pytest.approx(0.10, abs=1e-9)
    assert float(F.demographic_parity_diff(C, pos_label=0)) == pytest.approx(0.14, abs=1e-9)


def test_worked_vector_matches_fairlearn():
    C = F.worked_example()
    cells = [(y, a, yh) for y in (0, 1) for a in (0, 1) for yh in (0, 1)]
    y, a, yh = np.repeat(np.array(cells), [int(C[c]) for c in cells], axis=0).T
    assert fl.demographic_parity_difference(y, yh, sensitive_features=a) == pytest.approx(0.14)
    assert fl.equal_opportunity_difference(y, yh, sensitive_features=a) == pytest.approx(0.30)
    assert fl.equalized_odds_difference(y, yh, sensitive_features=a, agg='mean') == pytest.approx(0.20)


@SETTINGS
@given(labelled())
def test_agrees_with_fairlearn_where_defined(data):
    y, a, yh, g = data
    C = F.group_confusion(y, a, yh, 2, g)
    present = np.unique(a)             # fairlearn only knows groups that occur
    # selection rate is defined for every present group: always comparable when ≥ 2 groups occur
    if len(present) >= 2:
        assert quiet(F.demographic_parity_diff, C) == pytest.approx(
            fl.demographic_parity_difference(y, yh, sensitive_features=a), abs=1e-12)
        mf = fl.MetricFrame(metrics=accuracy_score, y_true=y, y_pred=yh, sensitive_features=a)
        assert quiet(F.accuracy_parity_diff, C) == pytest.approx(mf.difference(), abs=1e-12)
    # TPR/FPR: comparable when every present group has positives (resp. negatives)
    has_pos = all((y[a == g_] == 1).any() for g_ in present)
    has_neg = all((y[a == g_] == 0).any() for g_ in present)
    if len(present) >= 2 and has_pos:
        assert quiet(F.equal_opportunity_diff, C) == pytest.approx(
            fl.equal_opportunity_difference(y, yh, sensitive_features=a), abs=1e-12)
    if len(present) >= 2 and has_pos and has_neg:
        for agg in ('worst_case', 'mean'):
            assert quiet(F.equalized_odds_diff, C, agg=agg) == pytest.approx(
                fl.equalized_odds_difference(y, yh, sensitive_features=a, agg=agg), abs=1e-12)
    # worst-group accuracy over the (y, a) cells that occur
    mf = fl.MetricFrame(metrics=accuracy_score, y_true=y, y_pred=yh, sensitive_features={'y': y, 'a': a})
    assert quiet(F.worst_group_accuracy, C) == pytest.approx(mf.group_min(), abs=1e-12)
    assert quiet(F.accuracy, C) == pytest.approx(accuracy_score(y, yh), abs=1e-12)


@SETTINGS
@given(labelled(max_groups=2))
def test_documented_difference_empty_group(data):
    "Where a group has no positive sample fairlearn counts its TPR as 0; we return NaN with a warning."
    y, a, yh, g = data
    present = np.unique(a)
    no_pos = [g_ for g_ in present if not (y[a == g_] == 1).any()]
    if len(present) < 2 or not no_pos: return
    C = F.group_confusion(y, a, yh, 2, g)
    with pytest.warns(F.UndefinedMetricWarning):
        tpr = F.true_positive_rate(C)
    assert torch.isnan(tpr[no_pos]).all()
    assert np.isnan(quiet(F.equal_opportunity_diff, C))
    fl_val = fl.equal_opportunity_difference(y, yh, sensitive_features=a)
    assert not np.isnan(fl_val)        # fairlearn silently returns a number ...
    tp_zero = np.nan_to_num(tpr[present].numpy(), nan=0.0)
    assert fl_val == pytest.approx(tp_zero.max() - tp_zero.min(), abs=1e-12)   # ... which is the gap with NaN -> 0


def test_documented_fairlearn_counterexample():
    y, a, yh = [1, 1, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 0, 1, 0, 0]
    assert fl.equal_opportunity_difference(y, yh, sensitive_features=a) == pytest.approx(0.5)
    with pytest.warns(F.UndefinedMetricWarning):
        assert np.isnan(float(F.equal_opportunity_diff(F.group_confusion(y, a, yh))))


@SETTINGS
@given(labelled(), st.integers(1, 5))
def test_federated_sum_is_exact(data, n_clients):
    "Splitting the data over clients and summing their counts gives the pooled metrics exactly."
    y, a, yh, g = data
    owner = np.arange(len(y)) % n_clients
    Cs = [F.group_confusion(y[owner == k], a[owner == k], yh[owner == k], 2, g) for k in range(n_clients)]
    C = F.group_confusion(y, a, yh, 2, g)
    assert torch.equal(F.sum_confusions(Cs), C)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', F.UndefinedMetricWarning)
        a_, b_ = F.fairness_report(F.sum_confusions(Cs)), F.fairness_report(C)
    assert a_ == pytest.approx(b_, nan_ok=True)


@SETTINGS
@given(labelled(max_groups=2))
def test_pos_label_symmetries(data):
    y, a, yh, g = data
    C = F.group_confusion(y, a, yh, 2, g)
    dp1, dp0 = quiet(F.demographic_parity_diff, C, 1), quiet(F.demographic_parity_diff, C, 0)
    assert dp1 == pytest.approx(dp0, abs=1e-12, nan_ok=True)
    assert quiet(F.equal_opportunity_diff, C, 0) == pytest.approx(
        quiet(F.predictive_equality_diff, C, 1), abs=1e-12, nan_ok=True)


def test_signed_and_reference_gaps():
    C = F.worked_example()
    assert float(F.demographic_parity_diff(C, how='ref', signed=True)) == pytest.approx(-0.14)
    assert float(F.demographic_parity_diff(C, how='ref', ref=1, signed=True)) == pytest.approx(0.14)
    with pytest.raises(ValueError, match='has no sign'): F.demographic_parity_diff(C, signed=True)


def test_simpson_example():
    cs = F.simpson_example()
    tab = F.client_table(cs, percent=False)
    assert list(tab['d_dp'].iloc[:2]) == [0.0, 0.0]
    assert tab.loc['federation (Σ C_k)', 'd_dp'] == pytest.approx(0.4909, abs=1e-4)


def test_input_validation():
    with pytest.raises(ValueError, match='y: values must lie'): F.group_confusion([0, 3], [0, 0], [0, 0])
    with pytest.raises(ValueError, match='a: values must lie'): F.group_confusion([0, 1], [0, 2], [0, 0])
    with pytest.raises(TypeError, match='boolean'): F.group_confusion(torch.tensor([True]), [0], [0])
    with pytest.raises(ValueError, match='count tensor'): F.accuracy(torch.ones(2, 2))
    with pytest.raises(ValueError, match='non-negative'): F.accuracy(-torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match='shapes differ'): F.sum_confusions([torch.ones(2, 2, 2), torch.ones(2, 3, 2)])
    with pytest.raises(ValueError, match="how='x'"): F.demographic_parity_diff(F.worked_example(), how='x')
    with pytest.raises(ValueError, match='pos_label=5'): F.selection_rate(F.worked_example(), 5)


def test_weights_and_empty_tensor():
    C = F.group_confusion([1, 0], [0, 1], [1, 1], weight=[2.0, 0.5])
    assert float(C.sum()) == 2.5
    with pytest.warns(F.UndefinedMetricWarning):
        assert np.isnan(float(F.accuracy(torch.zeros(2, 2, 2))))


# ---- fairness_experiments: the pure (no-training) parts
from hetfl_explore.fairness import experiments as FE
from hetfl_explore.foundation.data import federation


def test_privacy_levels_and_messages():
    N = federation('spawrious_gsc').matrices
    assert [FE.message_size(l) for l in FE.PRIVACY_LEVELS] == [0, 3, 3, 4]
    assert FE.client_metadata('random', N[8]) == {}
    assert FE.client_metadata('feddiverse_known', N[8]) == FE.client_metadata('feddiverse_known', N[23])  # blind to reversal
    assert FE.client_metadata('fedrk', N[8]) != FE.client_metadata('fedrk', N[23])
    names = {l: FE.privacy_selector(l, N, estimated_triplets=np.zeros((24, 3))).name for l in FE.PRIVACY_LEVELS}
    assert names == {'random': 'uniform', 'feddiverse_predicted': 'feddiverse_predicted',
                     'feddiverse_known': 'feddiverse_known', 'fedrk': 'fedrk'}
    with pytest.raises(ValueError, match='estimated_triplets'): FE.privacy_selector('feddiverse_predicted', N)
    with pytest.raises(ValueError, match=r'expected shape \(24, 3\)'):
        FE.privacy_selector('feddiverse_predicted', N, estimated_triplets=np.zeros((3, 3)))


def test_thesis_tables_and_headline_checks():
    th = FE.thesis_summary()
    assert th.loc[('celeba_like', 'fedrk'), 'wga'] == 59.57 and len(th) == 12
    assert FE.fairness_headlines(th).holds.all()
    worse = th.copy(); worse.loc[('utkface_like', 'fedrk'), 'd_dp'] = 0.2   # FedRK no longer the fairest, ladder broken
    chk = FE.fairness_headlines(worse).set_index(['claim', 'dataset']).holds
    assert not chk[('1. FedRK fairest, accuracy unchanged', 'utkface_like')]
    assert not chk[('3. ΔDemPar never increases along the ladder', 'utkface_like')]
    assert chk[('1. FedRK fairest, accuracy unchanged', 'celeba_like')]
    tab = FE.chapter_table(th)
    assert tab.loc[('UTKFace_GSC', 'FedRK (Known R^k)'), 'ΔEOp (↓)'] == '0.04 ± 0.01'


def test_summarise_layout():
    runs = pd.DataFrame([dict(dataset='utkface_like', level=l, seed=s, acc=80 + s, wga=60.0, d_eop=0.1, d_dp=0.1 * s)
                         for l in ('fedrk', 'random') for s in (0, 1, 2)])
    out = FE.summarise(runs)
    assert list(out.index) == [('utkface_like', 'random'), ('utkface_like', 'fedrk')]    # ladder order
    assert out.loc[('utkface_like', 'random'), 'acc'] == 81 and out.loc[('utkface_like', 'random'), 'acc_std'] == 1
    assert out.n.tolist() == [3, 3]


def test_reversed_patterns():
    N = FE.mix_matrices(0.9, 1)
    assert (N == federation('spawrious_gsc').matrices).all()
    gain = FE.resampling_gain(N)
    assert np.allclose(gain.sum((1, 2)), 0)                       # shares sum to 1 locally and globally
    m = FE.minority_cells(N)
    assert m.tolist() == [[False, True], [True, False]]
    assert gain[23][m].min() > 0 > gain[8][m].max()               # anti client useful, majority SC not
    assert FE.mix_matrices(0.75, 4)[-4:].tolist() == [[[25, 75], [75, 25]]] * 4
    with pytest.raises(ValueError, match='n_anti=17'): FE.mix_matrices(0.9, 17)


def test_preset_validation():
    with pytest.raises(ValueError, match='FairnessPreset.rounds=0'): FE.FairnessPreset(rounds=0)
    with pytest.raises(ValueError, match='avg_last'): FE.FairnessPreset(rounds=5, avg_last=10)


def test_fedrk_weighted_realises_weights():
    from hetfl_explore.engine.protocol import make_view
    from hetfl_explore.foundation.core import rng_streams
    N = federation('spawrious_gsc').matrices
    sel = FE.privacy_selector('fedrk_weighted', N); sel.reset(24, 0)
    rng = rng_streams(1, 1, 'test')[0]; mean = np.zeros(24)
    for t in range(1500):
        s = sel.select(t, make_view(24, t), 9, rng)
        assert len(np.unique(s.ids)) == len(s.ids) and s.weights.sum() == pytest.approx(1.0)
        mean[s.ids] += s.weights / 1500
    assert np.abs(mean - sel.weights).max() < 0.03
    assert FE.message_size('fedrk_weighted') == 4
    th = FE.thesis_summary().reset_index()
    extra = th[th.level == 'fedrk'].assign(level='fedrk_weighted', d_dp=0.0)
    summ = pd.concat([th, extra]).set_index(['dataset', 'level'])
    assert FE.fairness_headlines(summ, rk='fedrk_weighted').holds.all()
    with pytest.raises(ValueError, match="rk='random'"): FE.fairness_headlines(summ, rk='random')


def test_client_table_refuses_repeated_names_and_exposure_table_repeated_counts():
    from hetfl_explore.fairness.metrics import client_table
    from hetfl_explore.fairness.experiments import exposure_table
    C = np.ones((2, 2, 2))
    with pytest.raises(ValueError, match='names'): client_table([C, C], names=['a', 'a'])
    with pytest.raises(ValueError, match='n_antis'): exposure_table((1, 1), rounds=2)
    with pytest.raises(ValueError, match='cell'): __import__('hetfl_explore.fairness.experiments', fromlist=['x']).mix_matrices(cell=10**400)
