"""Bad input never surprises (own-data part: labels, tables and CSV files to interaction matrices): malformed arguments raise ValueError/TypeError naming the argument."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.feddiverse.own_data as od

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
P = 'hetfl_explore.feddiverse.own_data.'
COVERED = {P + n for n in ('as_labels', 'level_count', 'matrices_from_arrays', 'client_order', 'matrices_from_frame',
                           'load_client_csv')}

def cases(bad:dict):
    "Every (argument, malformed value) pair of `bad`, for `st.sampled_from`."
    return st.sampled_from([(arg, v) for arg, vs in bad.items() for v in vs])

def frame():
    "A valid table of samples: two clients, two classes, two attributes."
    return pd.DataFrame({'client': ['b', 'a', 'a', 'a', 'b'], 'label': [0, 0, 0, 1, 1], 'attribute': [1, 0, 0, 1, 0]})

AS_LABELS_BAD = {'name': [None, 3, ['y'], b'y'],
                 'values': [None, 'abc', 3, [[0, 1], [1, 0]], [[0], [1, 2]], [0, -1], [0, 1.5], [0, float('nan')],
                            ['cat'], np.zeros((2, 2))],
                 'index': [3, 'ab', {'a': 0}, [0], ['r0', 'r1', 'r2', 'r3']]}

@SETTINGS
@given(case=cases(AS_LABELS_BAD))
def test_as_labels_rejects_bad_arguments(case):
    arg, bad = case
    kw = {'name': 'client_labels', 'values': [0, 1, 2], 'index': None, arg: bad}
    with pytest.raises((TypeError, ValueError), match='client_labels' if arg == 'values' else arg): od.as_labels(**kw)

LEVEL_BAD = {'name': [None, 3, ('n',)], 'what': [None, 3, ['labels']],
             'labels': [None, 'ab', np.array([0, 1]), [], [np.array([], np.int64)], [[0, 1]], [np.array([0.0, 1.0])],
                        [np.zeros((2, 2), np.int64)]],
             'given': ['x', 1.5, 0, 1, -3, True, 2]}   # 2 is below the largest label 2

@SETTINGS
@given(case=cases(LEVEL_BAD))
def test_level_count_rejects_bad_arguments(case):
    arg, bad = case
    kw = {'name': 'n_classes', 'labels': [np.array([0, 2]), np.array([1])], 'given': 3, 'what': 'labels', arg: bad}
    match = {'given': 'n_classes', 'labels': 'labels'}.get(arg, arg)
    with pytest.raises((TypeError, ValueError), match=match): od.level_count(**kw)

def test_level_count_of_valid_labels():
    "The inferred count is one more than the largest label (at least 2); a given count is kept."
    ys = [np.array([0, 2]), np.array([1])]
    assert od.level_count('n_classes', ys, None, 'labels') == 3
    assert od.level_count('n_attrs', [np.array([0])], None, 'attributes') == od.MIN_LEVELS
    assert od.level_count('n_classes', ys, 5, 'labels') == 5

ARRAYS_BAD = {'labels': [None, 'ab', np.array([[0, 1]]), [], [[0, 1], [0]], [[0, -1]], [[0, 1.5]], [['a', 'b']], [[]]],
              'attributes': [None, 'ab', [[0]], [[0, 1], [1]], [[0, -2]], [[0, 0.5]]],
              'n_classes': ['x', 1.5, 0, 1, 1, True], 'n_attrs': ['x', 1.5, 0, 1, True]}

@SETTINGS
@given(case=cases(ARRAYS_BAD))
def test_matrices_from_arrays_rejects_bad_arguments(case):
    arg, bad = case
    kw = {'labels': [[0, 1], [1, 0]], 'attributes': [[0, 1], [1, 1]], arg: bad}
    with pytest.raises((TypeError, ValueError), match=arg): od.matrices_from_arrays(**kw)

ORDER_BAD = {'ids': [None, ['a', 'b'], np.array(['a']), frame()],
             'clients': ['ab', 3, {'a', 'b'}, ['a', 'a'], ('a', 'b', 'b'), [['a'], ['b']]]}

@SETTINGS
@given(case=cases(ORDER_BAD))
def test_client_order_rejects_bad_arguments(case):
    arg, bad = case
    kw = {'ids': frame()['client'], 'clients': None, arg: bad}
    with pytest.raises((TypeError, ValueError), match=arg): od.client_order(**kw)

def test_client_order_of_valid_ids():
    "Given clients first, then a categorical column's categories, then the sorted ids."
    ids = frame()['client']
    assert od.client_order(ids) == ['a', 'b']
    assert od.client_order(ids, ('b', 'a')) == ['b', 'a']
    assert od.client_order(ids.astype(pd.CategoricalDtype(['b', 'a', 'z']))) == ['b', 'a', 'z']

FRAME_BAD = {'df': [None, 'df', {'client': ['a']}, frame().drop(columns='label')],
             'client': [None, 3, ['client'], 'nope'], 'label': [None, 3, ('label',), 'nope'],
             'attribute': [None, 0, ['attribute'], 'nope'],
             'clients': ['ab', 3, ['a'], ['a', 'b', 'c'], ['a', 'a', 'b'], [['a'], ['b']]],
             'n_classes': ['x', 1.5, 0, 1, True], 'n_attrs': ['x', 1.5, 0, 1, True]}

@SETTINGS
@given(case=cases(FRAME_BAD))
def test_matrices_from_frame_rejects_bad_arguments(case):
    arg, bad = case
    kw = {'df': frame(), arg: bad}
    match = {'client': 'client|df', 'label': 'label|df', 'attribute': 'attribute|df'}.get(arg, arg)
    with pytest.raises((TypeError, ValueError), match=match): od.matrices_from_frame(**kw)

@SETTINGS
@given(case=cases({'path': [None, 3, ['x.csv'], b'x.csv'], **{k: v for k, v in FRAME_BAD.items() if k != 'df'}}))
def test_load_client_csv_rejects_bad_arguments(case, tmp_path_factory):
    arg, bad = case
    path = tmp_path_factory.mktemp('own') / 'samples.csv'
    frame().to_csv(path, index=False)
    match = {'client': 'client|df', 'label': 'label|df', 'attribute': 'attribute|df'}.get(arg, arg)
    with pytest.raises((TypeError, ValueError), match=match): od.load_client_csv(**{'path': path, arg: bad})

def test_load_client_csv_of_a_missing_file(tmp_path):
    "A path to no file is a FileNotFoundError naming `path`."
    with pytest.raises(FileNotFoundError, match='path'): od.load_client_csv(tmp_path / 'missing.csv')
