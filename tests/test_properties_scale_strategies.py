"""Bad input never surprises (scale part: the selector client contract, the sampling strategies, datasets as federations):
malformed arguments raise a ValueError/TypeError naming the argument, and never another exception."""
import functools
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
pytest.importorskip('flwr')
from flwr.app import Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp.strategy import FedAvg
import hetfl_explore.scale.contract as co
import hetfl_explore.scale.strategies as sg

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
NOT_STR = st.sampled_from([None, 3, 1.5, ['x'], b'x'])
NOT_MESSAGE = st.sampled_from([None, 3, 'reply', {'stats': 1}, RecordDict()])
NOT_APP = st.sampled_from([None, 3, 'app', ClientApp])
NOT_LEVEL = st.one_of(st.text(max_size=6).filter(lambda s: s not in co.LEVELS), NOT_STR)
BAD_SHAPE = st.sampled_from([3, 'ab', (1,), (1, 2, 3), (0, 2), (2, -1), (1.5, 2), (True, 2), {'c': 1}])
UNKNOWN = st.text(max_size=6).filter(lambda s: s.strip().lower().replace('_', '-') not in sg.SELECTOR_NAMES)
NOT_SAMPLING = st.sampled_from([k for k in sg.SELECTOR_NAMES if k not in sg.SAMPLING_ONLY])
NOT_INT = st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.none(), st.booleans(), st.integers(max_value=0))

@functools.cache
def grid(): return sg.AppGrid(ClientApp(), 2)   # sets Flower's task identity, which a `Message` needs
def reply():
    grid()
    return Message(RecordDict(), dst_node_id=sg.NODE_BASE, message_type=co.STATS_QUERY)

def data():
    from datasets import Dataset
    return Dataset.from_dict({'x': [float(i) for i in range(20)], 'label': [i % 2 for i in range(20)], 'group': [0] * 20})
def partitioner():
    from flwr_datasets.partitioner import IidPartitioner
    return IidPartitioner(2)
def from_dataset(**kw):
    pa = pytest.importorskip('hetfl_explore.scale.partitions')
    return pa.federation_from_dataset(**{'dataset': data(), 'partitioner': partitioner(), 'features': 'x', **kw})

# (fully qualified name, call with the bad value, argument name the error must quote, strategy of bad values)
CASES = [
    ('contract.stats_record', lambda v: co.stats_record(v, 'size'), 'counts',
     st.sampled_from([None, 'abc', [[1, -1]], [[0.5, 1]], [[float('nan'), 1]], [1, 2], [[['a']]], np.zeros((2, 2, 2))])),
    ('contract.stats_record', lambda v: co.stats_record([[1, 2]], v), 'level', NOT_LEVEL.filter(lambda s: s != 'none')),
    ('contract.register_stats', lambda v: co.register_stats(v, lambda c: [[1]]), 'app', NOT_APP),
    ('contract.register_stats', lambda v: co.register_stats(ClientApp(), v), 'counts', st.sampled_from([None, 3, [[1]], 'counts'])),
    ('contract.register_loss', lambda v: co.register_loss(v, lambda a, c: 0.0), 'app', NOT_APP),
    ('contract.register_loss', lambda v: co.register_loss(ClientApp(), v), 'loss', st.sampled_from([None, 3, 0.5, 'loss'])),
    ('contract.register_loss', lambda v: co.register_loss(ClientApp(), lambda a, c: 0.0, v), 'key', NOT_STR),
    ('contract.read_stats', lambda v: co.read_stats(v, 'size'), 'reply', NOT_MESSAGE),
    ('contract.read_stats', lambda v: co.read_stats(reply(), v), 'level', NOT_LEVEL),
    ('contract.read_stats', lambda v: co.read_stats(reply(), 'matrix', v), 'shape', BAD_SHAPE),
    ('contract.stats_shape', lambda v: co.stats_shape(v), 'shape', BAD_SHAPE),
    ('contract.missing_handler', lambda v: co.missing_handler(v), 'reply', NOT_MESSAGE),
    ('contract.handler_error', lambda v: co.handler_error(v, 'uniform needs it'), 'kind',
     st.one_of(st.text(max_size=12).filter(lambda s: s not in (co.STATS_QUERY, co.LOSS_QUERY)), NOT_STR)),
    ('contract.handler_error', lambda v: co.handler_error(co.LOSS_QUERY, v), 'why', NOT_STR),
    ('strategies.selector_spelling', lambda v: sg.selector_spelling(v), 'selector', NOT_STR),
    ('strategies.registry_key', lambda v: sg.registry_key(v), 'selector', NOT_STR),
    ('strategies.registry_key', lambda v: sg.registry_key(v), 'selector', UNKNOWN),
    ('strategies.sampling_name', lambda v: sg.sampling_name(v), 'selector', NOT_STR),
    ('strategies.sampling_name', lambda v: sg.sampling_name(v), 'selector', st.one_of(UNKNOWN, NOT_SAMPLING)),
    ('strategies.sampling_level', lambda v: sg.sampling_level(v), 'selector', NOT_STR),
    ('strategies.sampling_level', lambda v: sg.sampling_level(v), 'selector', st.one_of(UNKNOWN, NOT_SAMPLING)),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(selector=v), 'selector', st.one_of(NOT_STR, UNKNOWN, NOT_SAMPLING)),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(seed=v), 'seed', st.sampled_from([-1, 1.5, '0', None])),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(level=v), 'level', NOT_LEVEL.filter(lambda v: v is not None)),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(selector='fedrk', level=v), 'level',
     st.sampled_from(['none', 'size', 'triplet'])),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(shape=v), 'shape', BAD_SHAPE),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(loss_key=v), 'loss_key', NOT_STR),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(train_loss_key=v), 'train_loss_key', NOT_STR),
    ('strategies.SamplingMixin', lambda v: sg.SampledFedAvg(wait_s=v), 'wait_s',
     st.one_of(st.floats(max_value=0), st.just(float('nan')), st.text(max_size=2), st.none())),
    ('strategies.SampledFedAvg', lambda v: sg.SampledFedAvg(selector='oort', level=v), 'level', st.sampled_from(['none', 'all', 3])),
    ('strategies.sampling', lambda v: sg.sampling(v), 'strategy', st.sampled_from([None, 3, 'FedAvg', FedAvg(), int, object])),
    ('strategies.AppGrid', lambda v: sg.AppGrid(v, 2), 'app', NOT_APP),
    ('strategies.AppGrid', lambda v: sg.AppGrid(ClientApp(), v), 'num_nodes', NOT_INT),
    ('strategies.AppGrid', lambda v: sg.AppGrid(ClientApp(), 2, v), 'run_config', st.sampled_from([3, 'cfg', [('seed', 1)], (1,)])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(dataset=v), 'dataset', st.sampled_from([None, 3, {'x': [1.0]}, np.zeros(3)])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(partitioner=v), 'partitioner', st.sampled_from([None, 3, 'iid', partitioner])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(features=v), 'features',
     st.sampled_from([None, 3, [], ['nope'], ['x', 'nope'], 'nope', {'x': 1}])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(label=v), 'label', st.sampled_from([None, 3, 'nope', ['label']])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(attribute=v), 'attribute', st.sampled_from([3, 'nope', ['group']])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(test=v), 'test',
     st.sampled_from([None, 0, 1, -0.5, 1.5, float('nan'), 'half', [0.2]])),
    ('partitions.federation_from_dataset', lambda v: from_dataset(seed=v), 'seed', st.sampled_from([-1, 1.5, '0', None])),
]
COVERED = {f'hetfl_explore.scale.{name}' for name, *_ in CASES}

@pytest.mark.parametrize('name,call,arg,bad', CASES, ids=[f'{c[0]}-{c[2]}' for c in CASES])
@SETTINGS
@given(data=st.data())
def test_malformed_input_gets_a_clear_error(name, call, arg, bad, data):
    v = data.draw(bad, label=arg)
    with pytest.raises((ValueError, TypeError)) as e: call(v)
    assert arg in str(e.value), f"{name}: the error for {arg}={v!r} does not name it: {e.value}"

def test_a_partitioner_that_already_holds_data_is_refused():
    "A partitioner is cut once: handing over a used one would silently re-cut another data set."
    p = partitioner()
    from_dataset(partitioner=p)
    with pytest.raises(ValueError, match='partitioner'): from_dataset(partitioner=p)

def test_well_formed_input_passes():
    "The checks refuse only what is malformed: the same calls with good values return."
    assert co.stats_shape([3, 2]) == (3, 2) and co.stats_shape(None) is None
    assert dict(co.stats_record([[1, 2], [0, 3]], 'size')) == {'num-examples': 6}
    assert co.missing_handler(reply()) is False
    assert co.STATS_QUERY in co.handler_error(co.STATS_QUERY, 'fedrk needs it')
    assert sg.SampledFedAvg(selector='fedrk', shape=[3, 2]).shape == (3, 2)
    assert len(sg.AppGrid(ClientApp(), 3, {'seed': 1}).get_node_ids()) == 3
    assert from_dataset(test=0.25).num_clients == 2
