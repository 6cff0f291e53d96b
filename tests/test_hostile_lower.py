"""Hostile inputs to foundation, engine, selection, feddiverse and fairness get clear errors.

Each test holds a malformed call the fuzz (`tools/fuzz.py`, controls in `tools/fuzz_controls_lower.py`) once found
accepted or refused with a message from inside numpy/torch/scikit-learn; the error must now name the argument, show the
value and say what is allowed, and the valid call beside it must still work."""
from __future__ import annotations
import numpy as np
import pytest
import torch


def test_gce_loss_refuses_class_indices_out_of_range():
    from hetfl_explore.feddiverse.estimation import gce_loss
    logits = torch.zeros(3, 2)
    assert float(gce_loss(logits, torch.tensor([0, 1, 1]), q=1.0)) == pytest.approx(0.5)   # (1 - 1/2) / 1
    for bad in ([0, 1, 2], [-1, 0, 1]):
        with pytest.raises(ValueError, match=r'target: class -?\d is out of range; expected class indices in \[0, 2\)'):
            gce_loss(logits, torch.tensor(bad))
    with pytest.raises(ValueError, match='target.*expected 3 integer class indices'): gce_loss(logits,
                                                                                               torch.tensor([0., 1.,
                                                                                                             1.]))
    with pytest.raises(ValueError, match='logits: expected finite'): gce_loss(torch.full((3, 2), float('nan')),
                                                                              torch.tensor([0, 1, 1]))


def test_gather_rows_refuses_rows_out_of_range_and_non_integer_rows():
    from hetfl_explore.engine.backends import gather_rows
    x = torch.arange(12.).reshape(4, 3)
    assert torch.equal(gather_rows(x, torch.tensor([3, 0])), x[[3, 0]])
    with pytest.raises(ValueError, match=r'rows: row 4 is out of range; expected row indices in \[0, 4\)'):
        gather_rows(x, torch.tensor([0, 4]))
    with pytest.raises(ValueError, match='rows: row -1 is out of range'): gather_rows(x, torch.tensor([-1, 0]))
    with pytest.raises(TypeError, match='rows: torch.float32.*expected a 1-D tensor of integer row indices'):
        gather_rows(x, torch.tensor([0.5]))
    with pytest.raises(TypeError, match='rows=.*expected an instance of Tensor'): gather_rows(x, np.array([0, 1]))


def test_draw_by_weight_refuses_nan_negative_and_mismatched_inputs():
    from hetfl_explore.feddiverse.selector import draw_by_weight
    w = np.array([[1., 2., 3.], [0., 1., 1.]])
    assert draw_by_weight(w, np.array([0.0, 0.99])).tolist() == [0, 2]   # cumulative shares 1/6, 1/2, 1 and 0, 1/2, 1
    with pytest.raises(ValueError,
                       match=r'w: entry \(0, 0\) = nan is NaN'): draw_by_weight(np.where(w == 1, np.nan, w),
                                                                                np.array([.1, .2]))
    with pytest.raises(ValueError, match=r'w: entry \(0, 0\) = -1.0 is out of range; expected finite numbers in \[0'):
        draw_by_weight(-w, np.array([.1, .2]))
    with pytest.raises(ValueError, match='u: 1 uniforms for the 2 rows of w'): draw_by_weight(w, np.array([.1]))
    with pytest.raises(ValueError, match=r'u: entry 1 = 1.5: expected uniforms in \[0, 1\)'):
        draw_by_weight(w, np.array([.1, 1.5]))
    with pytest.raises(ValueError, match='w: row 1 has no positive weight'): draw_by_weight(w * [[1], [0]],
                                                                                            np.array([.1, .2]))


def test_as_float_array_refuses_nan_and_inf():
    from hetfl_explore.feddiverse.selector import as_float_array
    assert as_float_array([1, 2], 'x').dtype == np.float64
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError,
                           match=r'weights: entry 1 = (nan|inf) is (NaN|infinite); expected finite numbers'):
            as_float_array([1., bad], 'weights')


def test_probe_accuracy_refuses_nan_and_fractional_labels_with_a_message_of_its_own():
    from hetfl_explore.foundation.datasets import probe_accuracy
    x = np.random.default_rng(0).normal(size=(20, 2)); y = np.arange(20) % 2
    assert 0 <= probe_accuracy(x, y) <= 1
    with pytest.raises(ValueError, match='labels: entry 0 = nan is NaN; expected finite'): probe_accuracy(x,
                                                                                                          np.r_[np.nan,
                                                                                                                y[1:]])
    with pytest.raises(ValueError, match='labels: entry 0 = 0.5: expected integer labels'):
        probe_accuracy(x, y + 0.5)
    with pytest.raises(ValueError,
                       match='features and labels: 20 rows of features, 19 labels: expected one label per row'):
        probe_accuracy(x, y[:-1])


def test_as_labels_shows_the_value_and_refuses_objects_that_raise():
    from hetfl_explore.feddiverse.own_data import as_labels
    class Hostile:
        def __array__(self, *a, **k): raise RuntimeError('hostile')
        def __len__(self): raise RuntimeError('hostile')
    assert as_labels('labels', [2, 0]).tolist() == [2, 0]
    with pytest.raises(ValueError,
                       match=r"labels=None: shape \(\): expected a 1-D sequence of labels"): as_labels('labels', None)
    with pytest.raises(TypeError,
                       match='labels: Hostile cannot be read as labels.*expected a 1-D sequence'): as_labels('labels',
                                                                                                             Hostile())


def test_parse_characteristics_names_its_own_argument():
    from hetfl_explore.selection.taxonomy import parse_characteristics, placement
    assert parse_characteristics('V ¬D S !R T') == dict(V=True, D=False, S=True, R=False, T=True)
    with pytest.raises(TypeError, match='text=3: expected an instance of str'): parse_characteristics(3)
    with pytest.raises(ValueError,
                       match=r"text='V D': expected each of V, D, S, R, T once"): parse_characteristics('V D')
    with pytest.raises(ValueError, match=r"client='V D': expected each of V, D, S, R, T once"):   # via `placement`
        placement('m', 'Baseline', 'V D', 'theta', '-', 'Probability', '-')


def test_box_overlap_refuses_an_inverted_box():
    from hetfl_explore.foundation.hetero import box_overlap
    assert box_overlap((0, 0, 4, 3), (1, 1, 6, 5)) == 6.0   # 3 x 2
    with pytest.raises(ValueError,
                       match=r'a=\(4.0, 0.0, 0.0, 3.0\): an inverted box: expected left <= right and top <= bottom'):
        box_overlap((4, 0, 0, 3), (1, 1, 6, 5))
    with pytest.raises(ValueError, match='b=.*an inverted box'): box_overlap((0, 0, 4, 3), (1, 5, 6, 1))


def test_paired_differences_names_the_column_or_arm_that_is_missing():
    import pandas as pd
    from hetfl_explore.foundation.core import paired_differences, assert_paired
    runs = pd.DataFrame([dict(arm=arm, seed=s, v=s + (arm == 'a')) for s in range(10) for arm in 'ab'])
    assert paired_differences(runs, 'arm', 'a', 'b', 'v').iloc[0]['mean'] == 1.0
    with pytest.raises(ValueError, match="value='w': not a column of runs: expected one of \['arm', 'seed', 'v'\]"): paired_differences(runs,
                                                                                                              'arm',
                                                                                                              'a', 'b',
                                                                                                              'w')
    with pytest.raises(ValueError, match="b='c': expected one of 'a', 'b'"): paired_differences(runs, 'arm', 'a', 'c',
                                                                                                'v')
    with pytest.raises(TypeError, match='name=3: expected an instance of str'):
        assert_paired(paired_differences(runs, 'arm', 'a', 'b', 'v').iloc[0], 1, name=3)


def test_engine_records_check_their_per_client_arrays():
    from hetfl_explore.engine.protocol import Reports
    from hetfl_explore.engine.aggregation import AggregationInput
    ok = dict(round=0, ids=np.array([0, 2]), n_samples=np.array([5, 7]), loss=np.array([.5, .4]),
              loss_before=np.array([.6, np.nan]),
              steps=np.array([2, 2]), update_norm=np.array([.1, .2]), time=np.ones(2), energy=np.ones(2),
              updates=torch.ones(2, 3),
              global_params=torch.zeros(3))
    assert Reports(**ok).round == 0   # NaN loss_before: not measured
    assert Reports(**{**ok, 'updates': torch.zeros(2, 0)}).updates.shape == (2, 0)   # sampling only: no update shared
    bad = [(dict(round=-1), r'Reports.round=-1: expected an integer in \[0, inf\]'),
           (dict(time=-np.ones(2)), 'Reports.time: entry 0 = -1.0 is out of range'),
           (dict(energy=np.ones(1)), 'Reports.energy: 1 entries: expected 2, one per id'),
           (dict(global_params=torch.zeros(2)),
            r'Reports.global_params: expected a 1-D tensor, one entry per parameter \(3, ')]
    for change, message in bad:
        with pytest.raises(ValueError, match=message): Reports(**{**ok, **change})
    with pytest.raises(ValueError, match='steps: entry 0 = nan is NaN'):
        AggregationInput(torch.zeros(3), torch.ones(2, 3), np.ones(2), steps=np.array([np.nan, 1.]), lr=np.ones(2))
    with pytest.raises(ValueError, match='lr: 1 entries: expected 2, one per client update'):
        AggregationInput(torch.zeros(3), torch.ones(2, 3), np.ones(2), steps=np.ones(2), lr=np.ones(1))


def test_run_identity_and_toy_reports_check_their_arguments():
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector
    from hetfl_explore.engine.store import run_identity, History
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.selection.efficiency import toy_reports
    fed, cfg = tiny_digits_federation(num_clients=4, min_size=10, n_test=40), RunConfig(device='cpu')
    cpu = torch.device('cpu')
    args = (cfg, 'batched', cpu, fed, mlp(64, 8, 10), UniformSelector(), False)
    assert '"backend": "batched"' in run_identity(*args)
    with pytest.raises(ValueError, match="backend='turbo': expected one of 'batched', 'sequential', 'fused'"):
        run_identity(cfg, 'turbo', *args[2:])
    with pytest.raises(TypeError, match="device='cpu': expected an instance of device"): run_identity(cfg, 'batched',
                                                                                                      'cpu', *args[3:])
    with pytest.raises(TypeError, match='meta=3: expected an instance of dict'): History({}, meta=3)
    upd, target = torch.eye(2), torch.ones(2)
    assert toy_reports(1, [0, 2], upd, target).round == 1
    with pytest.raises(ValueError, match='t=-1: expected an integer'): toy_reports(-1, [0, 2], upd, target)
    with pytest.raises(ValueError, match='ids and updates: 1 ids, 2 rows'): toy_reports(0, [0], upd, target)
    with pytest.raises(ValueError, match='ids: id 0 appears more than once'): toy_reports(0, [0, 0], upd, target)


def test_figures_and_placements_name_their_own_arguments():
    from hetfl_explore.foundation.hetero import metric_bars
    from hetfl_explore.engine.protocol import participation_figure
    from hetfl_explore.selection.taxonomy import placement
    with pytest.raises(ValueError, match='metrics: client 0, cell .* is NaN'): metric_bars(np.full((3, 2, 2), np.nan))
    with pytest.raises(TypeError, match='title=3: expected an instance of str'): metric_bars(np.ones((3, 2, 2)),
                                                                                             title=3)
    with pytest.raises(ValueError,
                       match=r'trace: entry \(0, 0\) = 2.0 is out of range'): participation_figure(np.array([[2., 0.]]))
    with pytest.raises(TypeError, match='message=3: expected one of'): placement('m', 'Baseline', 'V D S R T', 3, '-',
                                                                                 'Probability', '-')
    with pytest.raises(TypeError, match='interpretation=3: expected an instance of str'):
        placement('m', 'Baseline', 'V D S R T', 'theta', '-', 3, '-')


def test_int32_labels_train_and_score_as_int64_ones():
    "Integer labels of any width are labels: a pool, one client's training and the attack's losses read int32 as int64."
    from hetfl_explore.foundation.datasets import Pool
    from hetfl_explore.engine.backends import local_train
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.modelhet.mia import model_outputs, fit_classifier
    x, y = torch.rand(12, 4), torch.arange(12) % 3
    pool = Pool(x, y.int(), y.int(), ['a', 'b', 'c'], ['p', 'q', 'r'])
    assert pool.y.dtype == torch.int64 and torch.equal(pool.y, y)
    cfg = RunConfig(batch_size=4, local_steps=2, device='cpu')
    runs = []
    for labels in (y, y.int()):
        torch.manual_seed(0); model = mlp(4, 8, 3)
        runs.append(local_train(model, torch.zeros(sum(p.numel() for p in model.parameters())), x, labels, cfg,
                                np.random.default_rng(0))[0])
    assert torch.equal(runs[0], runs[1])
    torch.manual_seed(0); model = mlp(4, 8, 3)
    assert np.array_equal(model_outputs(model, x, y)[0], model_outputs(model, x, y.int())[0])
    fit_classifier(model, x, y.int(), epochs=1, batch_size=4)
    with pytest.raises(TypeError, match='y=None'):
        local_train(model, torch.zeros_like(runs[0]), x, None, cfg, np.random.default_rng(0))


def test_columns_ids_and_attribute_labels_are_named_by_the_callers_argument():
    import pandas as pd
    from hetfl_explore.feddiverse.own_data import matrices_from_frame
    from hetfl_explore.foundation.core import check_ids
    from hetfl_explore.foundation.data import partition_from_matrices
    df = pd.DataFrame(dict(client=[0, 1], label=[0, 1], attribute=[1, 0]))
    assert matrices_from_frame(df).shape == (2, 2, 2)
    with pytest.raises(ValueError, match=r"label='cls': not a column of df; expected one of \['client', 'label'"):
        matrices_from_frame(df, label='cls')
    with pytest.raises(ValueError, match=r'clients=3: shape \(\): expected a 1-D list of ids'):
        check_ids('clients', 3, 4)
    with pytest.raises(TypeError, match="a=None: expected the pool's attribute labels"):
        partition_from_matrices(np.array([0, 1]), None, np.ones((1, 2, 2), int), 0)


def test_distillation_rows_are_shaped_like_the_queried_ones():
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.modelhet.mia import distill_trajectory
    torch.manual_seed(0)
    x, y = torch.rand(6, 4), torch.arange(6) % 3
    assert distill_trajectory(mlp(4, 8, 3), lambda: mlp(4, 8, 3), torch.rand(8, 4), x, y, epochs=1).shape == (6, 2)
    with pytest.raises(ValueError, match=r"x_dl: shape \(8, 5\): expected rows shaped like x's, \(4,\)"):
        distill_trajectory(mlp(4, 8, 3), lambda: mlp(4, 8, 3), torch.rand(8, 5), x, y, epochs=1)
    with pytest.raises(ValueError, match=r"x_dl: shape \(8,\): expected a non-empty pool, one row of features"):
        distill_trajectory(mlp(4, 8, 3), lambda: mlp(4, 8, 3), torch.rand(8), x, y, epochs=1)
