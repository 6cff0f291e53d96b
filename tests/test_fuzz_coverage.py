"""The fuzz (`tools/fuzz.py`) reaches every public entry point of the package.

The list of public entry points is derived as `test_properties.public_names` derives it: every function and class in a
module's `__all__` that the module defines. Each is fuzzed with a hand-written control and its argument kinds, with an
automatic control built from its defaults (numbers mutated into NaN, text, 10**400, self-raising objects and subclasses),
or is covered elsewhere (the Flower adapter) or never called blind (defaults that write files or run experiment grids).
A new public callable that is none of these fails `test_every_public_callable_is_fuzzed`."""
from __future__ import annotations
import sys
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import fuzz

def test_every_public_callable_is_fuzzed():
    gaps = sorted(q for q, how in fuzz.coverage().items() if how == 'gap')
    assert not gaps, (f"{len(gaps)} public callables without a fuzz family (add a control to the part's "
                      f"tools/fuzz_controls_*.py):\n" + '\n'.join(gaps))

def test_the_word_rule_is_not_a_substring_rule():
    "A message names the argument as a word: `t` is not named by `ClientView.round` nor `y` by `y_test`."
    assert fuzz.names_argument('t', "t=-1: expected an integer in [0, inf]")
    assert not fuzz.names_argument('t', "ClientView.round=-1: expected an integer in [0, inf]")
    assert not fuzz.names_argument('y', "y_test: labels must lie in [0, 2)")
    assert fuzz.names_argument('available', "ClientView.available: id 7 is out of range; expected ids in [0, 4)")
    clear = {'outcome': 'raised', 'type': 'ValueError', 'value_type': True, 'where': fuzz.PACKAGE_DIR + 'x.py',
             'message': "tol=nan: expected a finite number in [0, inf]"}
    assert fuzz.classify(clear, 'tol', float('nan')) == 'clear'
    assert fuzz.classify({**clear, 'message': 'tol is bad'}, 'tol', float('nan')) == 'unclear'        # nothing allowed
    assert fuzz.classify({**clear, 'message': 'tol: expected a number'}, 'tol', float('nan')) == 'unclear'   # no value
    assert fuzz.classify({'outcome': 'ok', 'nonfinite': False}, 'tol', 1.0) == 'silent'

def test_accepted_results_are_checked_for_nan_and_inf():
    import numpy as np, torch, pandas as pd
    assert fuzz.nonfinite({'a': [1.0, (np.array([0., np.nan]),)]}) and fuzz.nonfinite(torch.tensor([np.inf]))
    assert fuzz.nonfinite(pd.DataFrame({'x': [1.0, np.nan], 'y': ['a', 'b']})) and not fuzz.nonfinite(pd.DataFrame({'x': [1.0]}))
    ok = fuzz.run_forked(lambda: np.array([np.nan]), 30)
    assert ok['outcome'] == 'ok' and ok['nonfinite'] and fuzz.accepted(ok, 'some_entry') == 'nonfinite'

def test_automatic_gaps_name_only_entry_points_without_a_control():
    "An entry point given a hand-written control leaves `AUTO_GAPS`, whose reason no longer applies."
    cov = fuzz.coverage()
    stale = sorted(q for q in fuzz.AUTO_GAPS if cov.get(q) == 'manual')
    assert not stale, f"hand-written controls cover these now; remove them from AUTO_GAPS in tools/fuzz.py: {stale}"
