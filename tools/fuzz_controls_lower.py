"""Fuzz controls of the lower parts of the package: `foundation`, `engine`, `selection`, `feddiverse`, `fairness`.

Each control is a valid call `(entry, {argument: (valid value, kind)})`; `tools/fuzz.py` mutates one argument at a time
by its kind. Loaders read small files in their real formats, written to a temporary folder here (nothing downloads).
"""
from __future__ import annotations
import numpy as np

# documented valid inputs of one argument: {(entry, argument): {mutant names}}
VALID_MUTANTS = {
    ('as_float_array', 'x'): {'empty'},   # no entries: an empty float array
    ('as_labels', 'values'): {'empty', 'label past the end'},   # no rows; labels have no upper bound until counted
    ('parse_characteristics', 'text'): {'str subclass'},   # read by its characters, as a str
    ('gather_rows', 'x'): {'nan entry', 'inf entry', 'flattened'},   # a gather copies values without judging them; 1-D pools
    ('gather_rows', 'rows'): {'one short'},   # any number of rows
}

# entry points whose valid results hold NaN or inf by design: {name: why}
NONFINITE_OK = {}

SIDE_EFFECTS = set()


def _foundation() -> dict:
    "Controls of `foundation.core`, `foundation.hetero` (drawing helpers)."
    return {
     'foundation.hetero': [('box_overlap', dict(a=((0., 0., 4., 3.), 'nonneg_array'), b=((1., 1., 6., 5.), 'array'))),
                           ('label_box', dict(x=(10., 'real'), y=(20., 'real'), text=('abc', 'obj'), pos=('top center', 'choice'),
                                              r=(4., 'nonneg')))],
     'foundation.datasets': [('probe_accuracy', dict(features=(np.random.default_rng(0).normal(size=(20, 2)), 'array'),
                                                      labels=(np.arange(20) % 2, 'cluster_labels'), seed=(0, 'count')))],
    }


def _selection() -> dict:
    "Controls of `selection.taxonomy`."
    return {
     'selection.taxonomy': [('parse_characteristics', dict(text=('V ¬D ¬S R T', 'choice'))),
                            ('characteristics_text', dict(flags=(dict(V=True, D=False, S=True, R=False, T=True), 'obj')))],
    }


def _feddiverse() -> dict:
    "Controls of `feddiverse.selector`, `feddiverse.own_data`, `feddiverse.estimation` (losses)."
    import torch
    w = np.array([[1., 2., 3.], [0., 1., 1.]])
    return {
     'feddiverse.selector': [('draw_by_weight', dict(w=(w, 'nonneg_array'), u=(np.array([.3, .6]), 'linked_array'))),
                             ('as_float_array', dict(x=(np.array([1., 2.]), 'array'), name='x'))],
     'feddiverse.own_data': [('as_labels', dict(name='values', values=(np.array([0, 1, 2, 1]), 'labels')))],
     'feddiverse.estimation': [('gce_loss', dict(logits=(torch.randn(4, 3, generator=torch.Generator().manual_seed(0)), 'tensor'),
                                                 target=(torch.tensor([0, 1, 2, 1]), 'tensor_labels'), q=(0.3, 'unit'),
                                                 reduction=('mean', 'choice')))],
     'engine.backends': [('gather_rows', dict(x=(torch.arange(12.).reshape(4, 3), 'tensor'), rows=(torch.tensor([0, 2, 3]), 'tensor_labels')))],
    }


def controls() -> dict:
    "group -> [(entry, spec)] for every control of this file."
    out = {}
    for part in (_foundation(), _selection(), _feddiverse()):
        for g, entries in part.items(): out.setdefault(g, []).extend(entries)
    return out
