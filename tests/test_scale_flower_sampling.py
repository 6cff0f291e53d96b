"""Sampling-only strategies in process: a real Flower `ClientApp` served by `AppGrid`, Flower's own round loop
(`Strategy.start`). Uniform sampling gives Flower's FedAvg weights bit for bit, the wrapped strategy's messages are kept,
and every bad input is a clear message or a dropped node with its reason, never a hang."""
import logging, re
import numpy as np
import pytest
pytest.importorskip('flwr', reason='Flower is not installed: pip install hetfl_explore[flower]')
import torch
from flwr.app import ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp.strategy import FedAvg, FedProx
from hetfl_explore.scale.contract import CONTRACT_PAGE, register_stats, stats_record
from hetfl_explore.scale.strategies import AppGrid, NODE_BASE, SampledFedAvg, sampling

NODES, SIZES = 8, [20 + 5 * k for k in range(8)]

def counts(context):
    "Node k: SIZES[k] samples over 3 classes × 2 attributes, skewed by k."
    k = context.node_config['partition-id']; n = SIZES[k]
    return [[n - 2 * (k % 3) - 2, 1], [k % 3, 0], [k % 3, 1]]

def app(stats=counts, seen=None):
    "A linear model trained one SGD step on node-specific data; replies `train_loss` and `num-examples`."
    a = ClientApp()
    @a.train()
    def train(msg, context):
        k = context.node_config['partition-id']
        if seen is not None: seen.append(dict(msg.content['config']))
        w = msg.content['arrays']['w'].numpy() - 0.1 * (k + 1) * np.ones(3, np.float32)
        return Message(RecordDict({'arrays': ArrayRecord({'w': torch.from_numpy(w)}), 'metrics': MetricRecord({'train_loss': float(k), 'num-examples': SIZES[k]})}),
                       reply_to=msg)
    @a.evaluate()
    def evaluate(msg, context):
        return Message(RecordDict({'metrics': MetricRecord({'eval_loss': 1.0, 'num-examples': SIZES[context.node_config['partition-id']]})}),
                       reply_to=msg)
    return register_stats(a, stats) if stats else a

def start(strategy, grid, rounds=3):
    logging.getLogger('flwr').setLevel(logging.WARNING)
    return strategy.start(grid=grid, initial_arrays=ArrayRecord({'w': torch.zeros(3)}), num_rounds=rounds,
                          train_config=ConfigRecord({'lr': 0.1}))

KW = dict(fraction_train=0.5, fraction_evaluate=0.25, min_available_nodes=NODES, seed=5)

def test_uniform_sampling_is_flowers_fedavg_on_the_same_nodes():
    s = SampledFedAvg(selector='uniform', **KW); res = start(s, AppGrid(app(), NODES))
    w = np.zeros(3)
    for r in (1, 2, 3):   # FedAvg by hand: the num-examples-weighted mean of the selected nodes' models
        ks = [n - NODE_BASE for n in s.selected[r]]
        w = sum(SIZES[k] * (w - 0.1 * (k + 1)) for k in ks) / sum(SIZES[k] for k in ks)
    assert np.allclose(res.arrays['w'].numpy(), w, atol=1e-5) and all(len(v) == 4 for v in s.selected.values())
    assert sorted(res.evaluate_metrics_clientapp) == [1, 2, 3]   # federated evaluation ran every round

def test_the_wrapped_strategys_messages_are_kept():
    seen = []
    s = sampling(FedProx)(selector='fedrk', proximal_mu=0.3, **KW); start(s, AppGrid(app(seen=seen), NODES), rounds=1)
    assert seen and all(c['proximal-mu'] == 0.3 and c['lr'] == 0.1 and c['server-round'] == 1 for c in seen)

def test_the_seed_fixes_the_selection_and_moves_it():
    sel = lambda seed: start(s := SampledFedAvg(selector='feddiverse', **{**KW, 'seed': seed}), AppGrid(app(), NODES)) and s.selected
    assert sel(1) == sel(1) and any(sel(1) != sel(s) for s in (2, 3, 4))

@pytest.mark.parametrize('bad, why', [(lambda r: {**r, 'num-examples': r['num-examples'] + 1}, 'contradicts'),
                                      (lambda r: {**r, 'counts': [-1] + r['counts'][1:]}, 'negative'),
                                      (lambda r: {**r, 'counts': r['counts'][:-1]}, 'values: expected'),
                                      (lambda r: {**r, 'counts': [float('inf')] + [float(v) for v in r['counts'][1:]]}, 'non-finite')])
def test_a_node_with_bad_stats_is_dropped_with_its_reason_and_the_run_goes_on(bad, why):
    a = app(stats=None)
    @a.query('stats')
    def stats(msg, context):
        rec = dict(stats_record(counts(context), 'matrix'))
        return Message(RecordDict({'stats': MetricRecord(bad(rec) if context.node_config['partition-id'] == 3 else rec)}), reply_to=msg)
    s = SampledFedAvg(selector='fedrk', **KW); res = start(s, AppGrid(a, NODES))
    assert list(s.dropped) == [NODE_BASE + 3] and why in s.dropped[NODE_BASE + 3]
    assert NODE_BASE + 3 not in {n for v in s.selected.values() for n in v} and sorted(res.train_metrics_clientapp) == [1, 2, 3]

def test_a_missing_handler_is_named_before_round_1():
    with pytest.raises(RuntimeError, match=f"no 'query.stats' handler.*{re.escape(CONTRACT_PAGE)}"):
        start(SampledFedAvg(selector='feddiverse', **KW), AppGrid(app(stats=None), NODES))
    with pytest.raises(RuntimeError, match="no 'query.loss' handler"):
        start(SampledFedAvg(selector='pow-d', **KW), AppGrid(app(), NODES))

def test_too_few_nodes_is_a_message_not_a_hang():
    with pytest.raises(RuntimeError, match=r'only 8 nodes connected within wait_s=0.5 s, 9 needed \(min_available_nodes=9'):
        start(SampledFedAvg(selector='uniform', **{**KW, 'min_available_nodes': 9}, wait_s=0.5), AppGrid(app(), NODES))

@pytest.mark.parametrize('kw, why', [(dict(selector='best'), 'allowed: uniform'), (dict(selector='q-FFL'), 'not sampling-only'),
                                     (dict(selector='fedrk', level='size'), re.escape("allowed: ['matrix']")), (dict(seed=-1), 'seed')])
def test_bad_arguments_name_the_argument(kw, why):
    with pytest.raises((ValueError, TypeError), match=why): SampledFedAvg(**kw)
