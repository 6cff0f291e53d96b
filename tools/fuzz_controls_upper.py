"""Fuzz controls of the upper parts of the package: `crowd`, `modelhet` and `clustering` (read by `tools/fuzz.py`).

Every public callable of these parts has a valid control call here; each argument carries the kind that says what it
is (a count, a probability, linked arrays, a choice, an object), so the fuzz mutates it as such."""
from __future__ import annotations
import numpy as np

# documented valid inputs of one argument: {(entry, argument): {mutant names}}
VALID_MUTANTS = {}
# entry points whose valid results hold NaN/inf by design: {entry: why}
NONFINITE_OK = {}


def _known_defect_controls() -> dict:
    "Controls of the entry points whose malformed inputs were once answered unclearly or accepted."
    K = np.array([[0., 1.], [1., 0.]])
    X = np.array([[1., 2., .5, 3.], [2., 1., .7, 1.], [1.5, 1.5, .2, 2.]]); w = np.full(4, .25)
    s, lab = np.array([.1, .9, .4, .6]), np.array([0, 1, 0, 1])
    return {
     'clustering.profiles': [('check_ground', dict(C=(K, 'nonneg_array'), K=(2, 'size')))],
     'crowd.devices': [('tier_cost', dict(hw_tier=(np.array([0, 1, 2]), 'ids'), net_tier=(np.array([1, 0, 2]), 'ids')))],
     'crowd.promethee': [('promethee', dict(X=(X, 'array'), weights=(w, 'nonneg_linked'), q=(0.05, 'nonneg'), p=(0.5, 'pos'),
                                            method=('sorted', 'choice'), normalise=True)),
                         ('flows_as_printed', dict(X=(X, 'array'), weights=(w, 'nonneg_linked'), q=(0.05, 'nonneg'), p=(0.5, 'pos')))],
     'clustering.gpfl': [('cfl_bipartition', dict(dW=(np.array([[1., 0.], [0., 1.], [1., .1]]), 'array'))),
                         ('scores', dict(theta=(np.zeros((3, 2)), 'array'), X=(np.ones((4, 2)), 'array'),
                                         y=(np.array([0, 1, 1, 0]), 'labels')))],
     'clustering.contribution': [('imbalance_descriptors', dict(counts=(np.array([[3., 1.], [2., 2.]]), 'counts'))),
                                 ('cohort_scores', dict(members=({'a': [1, 2], 'b': [3]}, 'obj'), values=({'a': .5, 'b': .2}, 'obj'),
                                                        n=(3, 'size')))],
     'modelhet.mia': [('roc_curve', dict(scores=(s, 'array'), labels=(lab, 'labels'))),
                      ('best_advantage', dict(scores=(s, 'array'), labels=(lab, 'labels'))),
                      ('tpr_at_fpr', dict(scores=(s, 'array'), labels=(lab, 'labels'), fpr=(0.5, 'unit'), strict_resolution=False))],
    }


def controls() -> dict:
    "group -> [(entry, {argument: (valid value, kind)})] for the crowd, modelhet and clustering parts."
    out = {}
    for part in (_known_defect_controls(),):
        for g, entries in part.items(): out.setdefault(g, []).extend(entries)
    return out
