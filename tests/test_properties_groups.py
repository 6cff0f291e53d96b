"""Bad input never surprises (the engine's groups of models and IFCA): malformed arguments raise ValueError/TypeError
naming the argument."""
import inspect
import numpy as np
import pytest
import torch
from hypothesis import strategies as st
import hetfl_explore.engine.groups as gr
import hetfl_explore.clustering.ifca as ifca
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.models import mlp
from test_properties_engine_selection import refuses_naming

NOT_INT = st.one_of(st.sampled_from([None, 'x', 1.5, float('nan'), object()]), st.integers(max_value=0))
NOT_OBJ = st.sampled_from([None, 3, 'x'])
VIEW = lambda: gr.GroupView(0, [0, 1], torch.zeros(2, 3), np.full(4, -1))
FIRST = lambda: torch.zeros(6)
ROUND = lambda: gr.GroupRound(0, [0, 1], [0, 0], torch.zeros(2, 3), torch.zeros(1, 3), torch.zeros(1, 3),
                              np.ones((2, 2), int), np.zeros(4, int))
LINEAR = lambda: mlp(2, [], 2)
R = lambda acc: dict(accuracy=acc, loss=0.0, group_accuracy=np.ones((1, 1)), group_counts=np.ones((1, 1), np.int64))

# (qualified name, call with the bad value, argument named in the error, strategy of bad values)
CASES = [
    ('engine.groups.GroupView', lambda v: gr.GroupView(v, [0], torch.zeros(1, 2), [-1, -1]), 'GroupView.round',
     st.one_of(NOT_INT.filter(lambda v: not (isinstance(v, int) and v == 0)), st.integers(max_value=-1))),
    ('engine.groups.Grouping', lambda v: gr.Grouping(v), 'n_groups', NOT_INT),
    ('engine.groups.FixedGroups', lambda v: gr.FixedGroups(v), 'labels',
     st.sampled_from([None, 'x', [], [-1, 0], [0.5, 1.0], [[0, 1]], [0, 2], [1, 1]])),
    ('engine.groups.check_assignment', lambda v: gr.check_assignment(v, VIEW()), 'grouping.assign',
     st.sampled_from([None, 'x', [5, 0], [0], [-1, 0], [0.5, 1.0], [[0, 1]]])),
    ('engine.groups.group_models', lambda v: gr.group_models(LINEAR, FIRST(), v, 0), 'grouping', NOT_OBJ),
    ('engine.groups.aggregate_groups',
     lambda v: gr.aggregate_groups(torch.zeros(2, 3), torch.ones(1, 3), np.ones(1), v, RunConfig(), [{}, {}]), 'groups',
     st.sampled_from([None, 'x', [5], [0.5], [-1], [0, 0]])),
    ('engine.groups.group_shares', lambda v: gr.group_shares(v, np.array([1, 2]), 2), 'assignment',
     st.sampled_from([None, 'x', [[0, 1]], [0, 1, 1], [0, 2], [-2, 0]])),
    ('engine.groups.mix_evaluations', lambda v: gr.mix_evaluations(v, np.array([1.0])), 'results',
     st.sampled_from([None, 3, [], 'x', [3], [R(1.0), R(0.5)]])),
    ('engine.groups.GroupRound', lambda v: gr.GroupRound(0, [0], [0], torch.zeros(1, 2), torch.zeros(1, 2),
                                                        torch.zeros(1, 2), v, np.zeros(2, int)), 'GroupRound.counts',
     st.sampled_from([[[-1, 2]], [[0.5, 1]], [1, 2], 'ab', None])),
    ('engine.groups.client_class_counts', lambda v: gr.client_class_counts(torch.tensor([0, 1]), [torch.tensor([0, 1])],
                                                                          [0], v), 'n_classes', NOT_INT),
    ('engine.groups.check_reform', lambda v: gr.check_reform(v, ROUND()), 'reform',
     st.sampled_from([3, 'x', (1,), (torch.ones(2, 3),)])),
    ('engine.groups.ClientStream', lambda v: gr.ClientStream(v), 'ClientStream.rounds',
     st.sampled_from([None, 3, 'x', [], [[]], [[[-1]]], [[[0]], [[0], [1]]], [[[0.5]]]])),
    ('engine.groups.grouped_identity', lambda v: gr.grouped_identity(v, None, None), 'identity',
     st.sampled_from([None, 3, b'x'])),
    ('clustering.ifca.ifca_assign', lambda v: ifca.ifca_assign(v), 'losses',
     st.sampled_from([None, 'x', [1., 2.], [[1, 'a']], np.zeros((2, 0)), 3.0])),
    ('clustering.ifca.IFCA', lambda v: ifca.IFCA(v), 'n_groups', NOT_INT),
    ('clustering.ifca.stream_federation', lambda v: ifca.stream_federation(v), 'stream', NOT_OBJ),
]
COVERED = {f'hetfl_explore.{name}' for name, *_ in CASES}

@pytest.mark.parametrize('name,call,arg,bad', CASES, ids=[c[0] for c in CASES])
def test_malformed_input_names_the_argument(name, call, arg, bad):
    refuses_naming(call, arg, bad, name)

def test_covered_is_every_public_function_and_class():
    "COVERED lists exactly the public functions and classes of the two modules."
    own = lambda m, o: (inspect.isfunction(o) or inspect.isclass(o)) and o.__module__ == m.__name__
    public = {f'{m.__name__}.{n}' for m in (gr, ifca) for n in m.__all__ if own(m, getattr(m, n))}
    assert public == COVERED, (sorted(public - COVERED), sorted(COVERED - public))

def test_ifca_starts_and_init_are_checked():
    with pytest.raises(ValueError, match='starts'): ifca.IFCA(2, starts=torch.zeros(3, 4))
    with pytest.raises(ValueError, match='init'): ifca.IFCA(2, init='random')
    with pytest.raises(ValueError, match='starts'):
        gr.group_models(LINEAR, FIRST(), ifca.IFCA(2, starts=torch.zeros(2, 4)), 0)
