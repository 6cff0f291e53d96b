"""Hostile input families for every entry point of the fuzz table (`tools/fuzz.py`).

For each entry point and argument the fuzz table gives a valid call and the argument's kind. From the kind come the
families: numpy scalars and 0-d arrays, which a number-taking argument accepts; and NaN / ±inf, empty inputs (no
clients, no labels, no triplets) and distributions one outcome short, integers beyond the
float and 64-bit ranges, numbers given as strings or bools, self-containing and self-raising objects, negative
variances and weights, duplicate / negative / fractional ids, labels outside their range, which it refuses with a
`ValueError`/`TypeError` naming the argument."""
from __future__ import annotations
import sys, warnings
import numpy as np
import pytest
import torch
from hypothesis import given, settings, HealthCheck, strategies as st
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import fuzz

MALFORMED = ('nan', 'inf', '-inf', '10**400', '2**64', '-2**64', '1.5', 'str', 'bool', 'hostile', 'recursive', 'nan entry',
             'inf entry', 'negative entry', '-1', 'negative id', 'fractional id', 'duplicate id', 'label -1', 'label past the end',
             'fractional label', 'fractional', 'empty', 'one short', 'int subclass', 'float subclass', 'str subclass')
EQUIVALENT = ('np.float64', 'np.float32', '0-d array', 'Fraction', 'np.int64', 'np.int32')
SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
CONTROLS = fuzz._controls()

def _cases(families, part):
    "(group, entry, arg, family) for every argument of the table and every family of its kind in `families`."
    out = []
    for group, entries in CONTROLS.items():
        for name, spec in entries:
            for arg, v in spec.items():
                if not isinstance(v, tuple): continue
                bad, ok, extra = fuzz.KINDS[v[1]]
                muts = {**bad(v[0]), **extra(v[0])} if part == 'malformed' else ok(v[0])
                valid = fuzz.VALID_MUTANTS.get((name, arg), set()) if part == 'malformed' else set()
                out += [pytest.param(group, name, arg, m, id=f'{group}.{name}:{arg}={m}') for m in muts if m in families and m not in valid]
    return out

def _call(group, name, arg, value):
    "Call the entry point with its valid arguments and `arg` replaced by `value`."
    fn = getattr(__import__(f'hetfl_explore.{group}', fromlist=[name]), name)
    spec = dict(CONTROLS[group])[name]
    kwargs = {k: (v[0] if isinstance(v, tuple) else v) for k, v in spec.items()}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return fn(**{**kwargs, arg: value})

def _mutant(group, name, arg, family):
    "The family's value for this argument (built from the argument's valid value)."
    value, kind = dict(CONTROLS[group])[name][arg]
    bad, ok, extra = fuzz.KINDS[kind]
    return {**bad(value), **extra(value), **ok(value)}[family]

# malformed calls still answered by a foreign message, an internal name or without the value (word-exact rule); known gaps
KNOWN_UNCLEAR = frozenset({
    'clustering.gpfl.weighted_f1:y=empty',
    'clustering.profiles.class_counts:y=empty',
    'crowd.bayesian.gaussian_kl:mu_p=empty',
    'crowd.bayesian.gaussian_kl:mu_p=one short',
    'crowd.bayesian.gaussian_kl:var_p=empty',
    'crowd.bayesian.gaussian_kl:var_p=one short',
    'engine.aggregation.fednova_norm:lr=empty',
    'engine.aggregation.fednova_norm:lr=one short',
    'engine.aggregation.fednova_norm:steps=empty',
    'engine.protocol.selection_trace:availability=10**400',
    'engine.protocol.validate_selection:sel=bool',
    'engine.protocol.validate_selection:sel=duplicate id',
    'engine.protocol.validate_selection:sel=empty',
    'engine.protocol.validate_selection:sel=fractional id',
    'engine.protocol.validate_selection:sel=hostile',
    'engine.protocol.validate_selection:sel=inf entry',
    'engine.protocol.validate_selection:sel=nan entry',
    'engine.protocol.validate_selection:sel=negative id',
    'engine.protocol.validate_selection:sel=recursive',
    'engine.protocol.validate_selection:sel=str',
    'feddiverse.selector.triplet_error:true=one short',
    'foundation.data.dirichlet_size_split:y=empty',
    'foundation.data.partition_dirichlet:y=empty',
    'foundation.hetero.interaction_matrix:a=empty',
    'foundation.hetero.interaction_matrix:y=empty',
    'modelhet.mia.advantage:labels=empty',
    'modelhet.mia.advantage:preds=empty',
    'modelhet.mia.roc_auc:labels=empty',
    'selection.baselines.choice_without_replacement:a=empty',
    'selection.baselines.choice_without_replacement:p=empty',
    'selection.baselines.choice_without_replacement:p=one short',
    'selection.baselines.top_by:ids=empty',
    'selection.baselines.top_by:values=empty',
    'selection.baselines.top_by:values=one short',
    'selection.efficiency.FLCIR:class_counts=empty',
})

@pytest.mark.parametrize('group,name,arg,family', _cases(MALFORMED, 'malformed'))
def test_malformed_family_gets_a_clear_error(group, name, arg, family):
    if f'{group}.{name}:{arg}={family}' in KNOWN_UNCLEAR: pytest.xfail('a known gap: answered, but not clearly by the word-exact rule')
    value = _mutant(group, name, arg, family)
    with pytest.raises((ValueError, TypeError)) as e: _call(group, name, arg, value)
    res = {'outcome': 'raised', **fuzz._describe(e.value)}
    assert fuzz.classify(res, arg, value) == 'clear', f'{arg!r} (as a word), the value or what is allowed not in {e.value!r}'

@pytest.mark.parametrize('group,name,arg,family', _cases(EQUIVALENT, 'equivalent'))
def test_numpy_scalars_and_0d_arrays_are_accepted(group, name, arg, family):
    _call(group, name, arg, _mutant(group, name, arg, family))

def _valid_mutant_cases():
    "(group, entry, arg, family) for the mutants the fuzz table documents as valid inputs (no client available, ...)."
    where = {name: group for group, entries in CONTROLS.items() for name, _ in entries}
    return [pytest.param(where[name], name, arg, m, id=f'{name}:{arg}={m}') for (name, arg), ms in fuzz.VALID_MUTANTS.items() for m in sorted(ms)]

@pytest.mark.parametrize('group,name,arg,family', _valid_mutant_cases())
def test_documented_edge_states_are_accepted(group, name, arg, family):
    "An empty availability list or a round in which nobody trains is a state the engine reaches: accepted, not refused."
    _call(group, name, arg, _mutant(group, name, arg, family))

@SETTINGS
@given(e=st.integers(309, 4000), sign=st.sampled_from([1, -1]))
def test_integers_beyond_float_range_are_refused_by_the_validators(e, sign):
    from hetfl_explore.foundation.core import check_float, check_int, check_array
    for f in (lambda: check_float('lr', sign * 10**e), lambda: check_int('k', sign * 10**e), lambda: check_array('w', [1, sign * 10**e])):
        with pytest.raises(ValueError, match='lr|k|w'): f()

@SETTINGS
@given(var=st.sampled_from([-1.0, float('nan'), float('inf')]), n=st.integers(2, 5))
def test_negative_nan_infinite_weights_are_refused_by_aggregation(var, n):
    from hetfl_explore.engine.aggregation import aggregate
    from hetfl_explore.engine.config import RunConfig
    w = np.full(n, 1 / n); w[0] = var
    with pytest.raises(ValueError, match='weights'): aggregate(torch.zeros(3), torch.ones(n, 3), w, RunConfig(device='cpu'), {})

@SETTINGS
@given(ids=st.lists(st.integers(-3, 6), min_size=1, max_size=6), frac=st.booleans())
def test_client_view_ids_are_distinct_integers_in_range(ids, frac):
    from hetfl_explore.engine.protocol import ClientView
    value = np.asarray(ids, float) + (0.5 if frac else 0.0)
    ok = not frac and min(ids) >= 0 and max(ids) < 4 and len(set(ids)) == len(ids)
    if ok: assert ClientView(0, value, [1, 2, 3, 4]).available.tolist() == ids
    else:
        with pytest.raises((ValueError, TypeError), match='ClientView.available'): ClientView(0, value, [1, 2, 3, 4])
