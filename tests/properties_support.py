"""Shared strategies and checks of the property tests (tests/test_properties*.py).

`reject(module, fn, arg, value, names)` calls `fn`, which must answer a malformed `value` of argument `arg` with a
`ValueError`/`TypeError` whose message names the argument, within `CALL_LIMIT_S` seconds. Every call is counted per
module and outcome; set `HETFL_PROPERTY_COUNTS=<file.json>` to have the counts written when the test process exits
(`tools`-free: `HETFL_PROPERTY_COUNTS=counts.json pytest tests/test_properties*.py`).
"""
from __future__ import annotations
import atexit, json, math, os, re, signal
from collections import defaultdict
from contextlib import contextmanager
import numpy as np
import pandas as pd
import torch
from hypothesis import strategies as st

CALL_LIMIT_S = 20          # a malformed call must be answered within this many seconds (a hang fails the test)
MAX_EXAMPLES = 12          # hypothesis examples per entry point: the malformed kinds are few, so a dozen draws cover them
COUNTS_ENV = 'HETFL_PROPERTY_COUNTS'
NAN, INF = float('nan'), float('inf')
SEED_LIMIT = 2**63         # seeds must lie in [0, 2**63 - 1]
OUTCOMES = ('clear error', 'unclear message', 'other exception', 'no error', 'hang')

COUNTS: dict = defaultdict(lambda: dict.fromkeys(OUTCOMES, 0))   # module -> outcome -> number of malformed calls

@atexit.register
def _write_counts():
    "Write the per-module counts where `HETFL_PROPERTY_COUNTS` says, merging with what another test process wrote."
    path = os.environ.get(COUNTS_ENV, '').strip()
    if not path or not COUNTS: return
    old = json.load(open(path)) if os.path.exists(path) else {}
    for mod, c in COUNTS.items():
        o = old.setdefault(mod, dict.fromkeys(OUTCOMES, 0))
        for k, v in c.items(): o[k] = o.get(k, 0) + v
    with open(path, 'w') as f: json.dump(old, f, indent=1, sort_keys=True)
    print(f"\nmalformed calls per module (all runs recorded in {path}):")
    for mod, c in sorted(old.items()): print(f"  {mod:45s} {sum(c.values()):5d} drawn: " + ', '.join(f'{k} {v}' for k, v in c.items() if v))

class Hang(Exception): "A call ran past `CALL_LIMIT_S`."

@contextmanager
def time_limit(seconds:int=CALL_LIMIT_S):
    "Raise `Hang` in the main thread when the block runs longer than `seconds`."
    def handler(signum, frame): raise Hang(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, handler); signal.alarm(seconds)
    try: yield
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)

def names_argument(message:str, name:str) -> bool:
    "Whether `message` names the argument `name` (as `name=`, `name:`, `name[`, `name and`, `name,` ... not inside a word)."
    return re.search(rf"(?<![\w]){re.escape(name)}(?=\s*(=|:|\[|\)|,|/| and |'| must| is| needs| has|$))", message) is not None

def reject(module:str, fn, arg:str, value, names=None):
    "Call `fn()` (a malformed call of argument `arg`); assert a ValueError/TypeError naming `arg` (or one of `names`)."
    names = (arg,) if names is None else tuple(names)
    try:
        with time_limit(): fn()
    except Hang as e: outcome, detail = 'hang', str(e)
    except (ValueError, TypeError) as e:
        ok = any(names_argument(str(e), n) for n in names)
        outcome, detail = ('clear error' if ok else 'unclear message'), f"{type(e).__name__}: {e}"
    except Exception as e: outcome, detail = 'other exception', f"{type(e).__name__}: {e}"
    else: outcome, detail = 'no error', 'returned normally'
    COUNTS[module][outcome] += 1
    assert outcome == 'clear error', f"{module}: {arg}={value!r:.200}: {outcome} ({detail[:400]})"

# ---- malformed values, by the kind of argument --------------------------------------------------------------------
JUNK = [None, 'x', [1, 'a'], {'a': 1}, object()]            # not a number at all

def bad_int(lo=0, hi=None):
    "Malformed integers: non-numbers, floats, NaN, bools, and integers outside [lo, hi]."
    parts = [st.sampled_from(JUNK + [1.5, NAN, INF, True, np.float64(2.0)])]
    if lo is not None: parts.append(st.integers(max_value=lo - 1, min_value=lo - 10**6) | st.just(-2**70))
    if hi is not None: parts.append(st.integers(min_value=hi + 1, max_value=hi + 10**6) | st.just(2**70))
    return st.one_of(parts)

def not_none(strategy):
    "`strategy` without None (for optional arguments, where None means the default)."
    return strategy.filter(lambda v: v is not None)

def bad_seed():
    "Malformed seeds: negatives, seeds >= 2**63, floats, non-numbers."
    return st.one_of(st.sampled_from(JUNK + [1.5, NAN, True]), st.integers(max_value=-1, min_value=-10**20),
                     st.integers(min_value=SEED_LIMIT, max_value=2**70))

def bad_float(lo=None, hi=None, lo_open=False, hi_open=False):
    "Malformed reals: non-numbers, NaN, ±inf, and values outside the range."
    parts = [st.sampled_from(JUNK + [NAN, INF, -INF, True, [0.5]])]
    if lo is not None:
        parts.append(st.floats(max_value=lo, exclude_max=not lo_open, allow_nan=False, allow_infinity=False, min_value=lo - 1e6))
    if hi is not None:
        parts.append(st.floats(min_value=hi, exclude_min=not hi_open, allow_nan=False, allow_infinity=False, max_value=hi + 1e6))
    return st.one_of(parts)

def bad_prob(): return bad_float(0, 1)

def bad_choice(extra=()):
    "Values outside any enumeration of names."
    return st.sampled_from([None, 'nope', 3, 1.5, ('a',), *extra])

def bad_str(): return st.sampled_from([None, 3, 1.5, ['x'], b'x'])
def bad_bool(): return st.sampled_from(['yes', None, 2, 1.5, 'True'])
def bad_obj(): return st.sampled_from([None, 3, 'x', 1.5, [1, 2], {'a': 1}])
def bad_frame(): return st.sampled_from([None, 3, 'x', {'a': [1]}, pd.DataFrame({'zzz': [1.0]})])
def bad_root(): return st.sampled_from([None, 3, 1.5, ['x'], b'x'])

def _cell_values(): return st.sampled_from([NAN, INF, -1, -5, 0.5, 1e300, 2.0**60])

@st.composite
def bad_matrices(draw, ndim:int=3, clients:int=3, shapes:bool=True, empty:bool=True):
    "Malformed interaction matrices: a NaN, inf, negative, fractional or overflowing cell; an empty client; a wrong shape; junk."
    kind = draw(st.sampled_from(['cell', 'cell', 'cell', 'junk', 'ragged'] + ['shape'] * shapes + ['empty'] * empty))
    base = np.full((clients, 2, 2) if ndim == 3 else (2, 2), 5.0)
    if kind == 'cell':
        idx = tuple(draw(st.integers(0, s - 1)) for s in base.shape)
        base[idx] = draw(_cell_values()); return base
    if kind == 'empty': base[(0,) * (ndim - 2)] = 0; return base
    if kind == 'shape': return draw(st.sampled_from([np.ones((2, 1)), np.ones(4), np.ones((2, 2, 1)), np.ones((3, 2, 2, 2, 1)), 5.0]))
    if kind == 'ragged': return [[1, 2], [3]]
    return draw(st.sampled_from(JUNK))

@st.composite
def bad_reals(draw, lo=None, hi=None, shape=(3,)):
    "A real array with one bad entry (NaN, ±inf, out of [lo, hi]) or junk."
    kind = draw(st.sampled_from(['nan', 'inf', 'range', 'junk', 'ragged']))
    arr = np.full(shape, 0.5 if lo is None or hi is None else (lo + hi) / 2)
    if kind == 'junk': return draw(st.sampled_from(JUNK[:2] + [['a', 'b']]))
    if kind == 'ragged': return [[0.5, 0.5], [0.5]]
    if kind == 'range' and (lo is not None or hi is not None):
        arr.flat[0] = (lo - 1) if lo is not None else (hi + 1)
    else: arr.flat[0] = NAN if kind == 'nan' else INF
    return arr

def bad_labels():
    "Malformed label vectors: strings, floats with fractions, negatives, ragged lists, None."
    return st.sampled_from([['a', 'b'], None, [1.5, 2.5], [[1, 2], [3]], [-1, 0], 'x'])

def bad_confusion():
    "Malformed count tensors C[y, a, ŷ]: negative or NaN counts, wrong shapes, junk."
    return st.sampled_from([-torch.ones(2, 2, 2), torch.full((2, 2, 2), NAN), torch.ones(2, 2), torch.ones(2, 2, 3),
                            'x', None, [[1, 2]], torch.full((2, 2, 2), 1e308, dtype=torch.float64)])

# ---- sanity of results ----------------------------------------------------------------------------------------------
def no_nan(x) -> bool:
    "True when `x` (array, tensor, number, dict or list of them) holds no NaN."
    if isinstance(x, dict): return all(no_nan(v) for v in x.values())
    if isinstance(x, (list, tuple)): return all(no_nan(v) for v in x)
    if isinstance(x, torch.Tensor): x = x.detach().cpu().numpy()
    a = np.asarray(x, dtype=float)
    return not np.isnan(a).any()

def same(u, v) -> bool:
    "Deep equality of results: arrays and tensors (NaN equal to NaN), dicts, lists, DataFrames, figures."
    import plotly.graph_objects as go
    if isinstance(u, go.Figure): return isinstance(v, go.Figure) and u.to_json() == v.to_json()
    if isinstance(u, pd.DataFrame) or isinstance(u, pd.Series):
        try: pd.testing.assert_frame_equal(u, v) if isinstance(u, pd.DataFrame) else pd.testing.assert_series_equal(u, v); return True
        except AssertionError: return False
    if isinstance(u, dict): return isinstance(v, dict) and u.keys() == v.keys() and all(same(u[k], v[k]) for k in u)
    if isinstance(u, (list, tuple)): return isinstance(v, (list, tuple)) and len(u) == len(v) and all(same(a, b) for a, b in zip(u, v))
    if isinstance(u, (str, bytes)) or u is None: return u == v
    if isinstance(u, torch.Tensor): u = u.detach().cpu().numpy()
    if isinstance(v, torch.Tensor): v = v.detach().cpu().numpy()
    a, b = np.asarray(u), np.asarray(v)
    if a.dtype.kind in 'OUS' or b.dtype.kind in 'OUS': return a.shape == b.shape and bool((a == b).all())
    return a.shape == b.shape and bool(np.allclose(a.astype(float), b.astype(float), equal_nan=True, rtol=0, atol=0))
