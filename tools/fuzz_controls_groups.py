"""Fuzz controls of the engine's groups of models (`engine.groups`) and of IFCA (`clustering.ifca`).

Read by `tools/fuzz.py` (`control_modules`): each control is a valid call `(entry, {argument: (valid value, kind)})`."""
from __future__ import annotations
import numpy as np

VALID_MUTANTS = {
    ('ifca_assign', 'losses'): {'nan entry', 'inf entry', 'empty'},   # NaN counts as +inf; no client: no assignment
    ('GroupView', 'ids'): {'empty'},   # a view with no client to assign
    # no client: a (0, K) table; a repeated id: its row again
    ('client_class_counts', 'ids'): {'empty', 'duplicate id'},
}

def controls() -> dict:
    "group -> [(entry, spec)] for the groups chapter and IFCA."
    import torch
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp, ParamLayout
    from hetfl_explore.engine.groups import GroupView, FixedGroups, GroupRound
    from hetfl_explore.clustering.data import leaf_synthetic
    small = leaf_synthetic(n_clients=4, n_features=3, n_classes=2, rounds=2, seed=0)
    net = mlp(2, [], 2)
    P = ParamLayout(net).size
    view = GroupView(0, np.array([0, 1]), torch.zeros(2, P), np.full(4, -1))
    rnd = GroupRound(0, np.array([0, 1]), np.array([0, 0]), torch.zeros(2, 3), torch.zeros(1, 3), torch.zeros(1, 3),
                     np.ones((2, 2), int), np.zeros(4, np.int64))
    res = dict(accuracy=0.5, loss=1.0, group_accuracy=np.array([[0.5]]), group_counts=np.array([[2]]))
    return {
     'engine.groups': [('GroupView', dict(round=(0, 'count'), ids=(np.array([0, 1]), 'unique_ids'),
                                          models=(torch.zeros(2, P), 'obj'), previous=(np.full(4, -1), 'obj'))),
                       ('Grouping', dict(n_groups=(2, 'size'))),
                       ('check_assignment', dict(groups=(np.array([1, 0]), 'obj'), view=(view, 'obj'))),
                       ('group_models', dict(model_fn=(lambda: mlp(2, [], 2), 'callable'),
                                             first=(torch.zeros(P), 'obj'), grouping=(FixedGroups([0, 1]), 'obj'),
                                             seed=(0, 'count'))),
                       ('aggregate_groups', dict(models=(torch.zeros(2, 3), 'obj'), updates=(torch.ones(2, 3), 'obj'),
                                                 weights=(np.array([.5, .5]), 'nonneg_linked'),
                                                 groups=(np.array([0, 1]), 'obj'), cfg=(RunConfig(), 'obj'),
                                                 states=([{}, {}], 'obj'))),
                       ('group_shares', dict(assignment=(np.array([0, 1, -1]), 'obj'),
                                             sizes=(np.array([1., 2., 3.]), 'obj'), n_groups=(2, 'size'))),
                       ('mix_evaluations', dict(results=([res, res], 'obj'), shares=(np.array([.5, .5]), 'obj'))),
                       ('ClientStream', dict(rounds=([[np.array([0, 1]), np.array([2])]], 'obj'))),
                       ('GroupRound', dict(round=(0, 'count'), ids=(np.array([0, 1]), 'unique_ids'),
                                           groups=(np.array([0, 0]), 'obj'), updates=(torch.zeros(2, 3), 'obj'),
                                           start=(torch.zeros(1, 3), 'obj'), models=(torch.zeros(1, 3), 'obj'),
                                           counts=(np.ones((2, 2), int), 'obj'), assignment=(np.zeros(4, int), 'obj'))),
                       ('client_class_counts', dict(y=(torch.tensor([0, 1, 1]), 'obj'),
                                                    client_idx=([torch.tensor([0]), torch.tensor([1, 2])], 'obj'),
                                                    ids=(np.array([1, 0]), 'unique_ids'), n_classes=(2, 'size'))),
                       ('check_reform', dict(out=((torch.ones(2, 3), np.array([0, 1, -1, 0])), 'obj'),
                                             rnd=(rnd, 'obj'))),
                       ('grouped_identity', dict(identity=('{}', 'obj'), grouping=(FixedGroups([0, 1]), 'obj'),
                                                 stream=None))],
     'clustering.ifca': [('ifca_assign', dict(losses=(np.array([[1., 2.], [3., 0.]]), 'array'))),
                         ('IFCA', dict(n_groups=(2, 'size'), init=('seeded', 'choice'))),
                         ('stream_federation', dict(stream=(small, 'obj'), rounds=(1, 'count')))],
    }
