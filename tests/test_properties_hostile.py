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
        for at, (name, spec) in enumerate(entries):
            for arg, v in spec.items():
                if not isinstance(v, tuple): continue
                bad, ok, extra = fuzz.KINDS[v[1]]
                muts = {**bad(v[0]), **extra(v[0])} if part == 'malformed' else ok(v[0])
                valid = fuzz.VALID_MUTANTS.get((name, arg), set()) if part == 'malformed' else set()
                out += [pytest.param((group, at), name, arg, m, id=f'{group}.{name}{_nth(entries, at)}:{arg}={m}')
                        for m in muts if m in families and m not in valid]
    return out

def _nth(entries, at) -> str:
    "'' for an entry point listed once in its group, else '#i' for its i-th listing (its controls differ)."
    names = [n for n, _ in entries]
    return '' if names.count(names[at]) == 1 else f'#{names[:at].count(names[at])}'

def _spec(where):
    "The controls of the entry listed at `where` = (group, position)."
    group, at = where
    return CONTROLS[group][at][1]

def _call(where, name, arg, value):
    "Call the entry point with its valid arguments and `arg` replaced by `value`."
    fn = getattr(__import__(f'hetfl_explore.{where[0]}', fromlist=[name]), name)
    spec = _spec(where)
    kwargs = {k: (v[0] if isinstance(v, tuple) else v) for k, v in spec.items()}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return fn(**{**kwargs, arg: value})

def _mutant(where, name, arg, family):
    "The family's value for this argument (built from the argument's valid value)."
    value, kind = _spec(where)[arg]
    bad, ok, extra = fuzz.KINDS[kind]
    return {**bad(value), **extra(value), **ok(value)}[family]

@pytest.mark.parametrize('where,name,arg,family', _cases(MALFORMED, 'malformed'))
def test_malformed_family_gets_a_clear_error(where, name, arg, family):
    value = _mutant(where, name, arg, family)
    with pytest.raises((ValueError, TypeError)) as e: _call(where, name, arg, value)
    res = {'outcome': 'raised', **fuzz._describe(e.value)}
    assert fuzz.classify(res, arg, value) == 'clear', f'{arg!r} (as a word), the value or what is allowed not in {e.value!r}'

@pytest.mark.parametrize('where,name,arg,family', _cases(EQUIVALENT, 'equivalent'))
def test_numpy_scalars_and_0d_arrays_are_accepted(where, name, arg, family):
    _call(where, name, arg, _mutant(where, name, arg, family))

def _valid_mutant_cases():
    "(where, entry, arg, family) for the mutants the fuzz table documents as valid inputs (no client available, ...)."
    return [pytest.param((group, at), name, arg, m, id=f'{name}{_nth(entries, at)}:{arg}={m}')
            for group, entries in CONTROLS.items() for at, (name, spec) in enumerate(entries)
            for arg, v in spec.items() if isinstance(v, tuple) for m in sorted(fuzz.VALID_MUTANTS.get((name, arg), ()))]

@pytest.mark.parametrize('where,name,arg,family', _valid_mutant_cases())
def test_documented_edge_states_are_accepted(where, name, arg, family):
    "An empty availability list or a round in which nobody trains is a state the engine reaches: accepted, not refused."
    _call(where, name, arg, _mutant(where, name, arg, family))

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
