"""Bad input never surprises `hetfl_explore.graders.crowd`: any student answer gets a `Feedback` (never an exception),
a student's function that misbehaves is reported, not raised, and the data helpers reject malformed arguments with a
ValueError/TypeError naming the argument."""
import re, sys
from pathlib import Path
import numpy as np
from hypothesis import given, settings, strategies as st, HealthCheck
sys.path.insert(0, str(Path(__file__).parent))
from properties_support import reject, bad_int, bad_float, bad_choice, MAX_EXAMPLES, NAN, INF
from hetfl_explore.graders import crowd as X
from test_properties_graders import ANSWERS   # tests/test_properties_graders.py gives every lab's graders any answer

SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
QS = sorted(n for n in vars(X) if re.fullmatch(r'_q[0-9]+', n))   # the graders, reached through `grade`
HELPERS = ('q1_flows', 'panel_ranking', 'bug_cases', 'flows_problem', 'q4_game', 'shapley_panel_table', 'playground_ratios',
           'abac_requests', 'signed_updates', 'verifier_problem')
COVERED = {f'hetfl_explore.graders.crowd.{n}' for n in HELPERS}
MOD = 'hetfl_explore.graders.crowd'

def test_covered_is_every_public_callable():
    assert COVERED == {f'{MOD}.{n}' for n in X.__all__ if callable(getattr(X, n))}

@SETTINGS
@given(f=ANSWERS)
def test_problem_finders_report_never_raise(f):
    for finder in (X.flows_problem, X.verifier_problem):
        out = finder(f)
        assert out is None or (isinstance(out, str) and out)

BAD_Q = st.sampled_from([None, 'x', -0.1, NAN, INF, True, {'a': 1}, object(), [0.1, 0.2, 0.3]])

@SETTINGS
@given(bad=BAD_Q)
def test_q1_flows_rejects_bad_thresholds(bad):
    reject(MOD, lambda: X.q1_flows(bad), 'q', bad)
    reject(MOD, lambda: X.q1_flows(0.0, bad), 'p', bad)
    reject(MOD, lambda: X.q1_flows(0.6, 0.5), 'q', (0.6, 0.5))          # q above p

@SETTINGS
@given(bad=bad_float(lo=0.5, hi=100))
def test_panel_ranking_rejects_bad_budgets(bad):
    reject(MOD, lambda: X.panel_ranking(bad), 'budget', bad)

@SETTINGS
@given(bad=bad_int(lo=0))
def test_bug_cases_rejects_bad_seeds(bad):
    reject(MOD, lambda: X.bug_cases(bad), 'seed', bad)

@SETTINGS
@given(bad=bad_choice())
def test_playground_ratios_rejects_bad_settings(bad):
    reject(MOD, lambda: X.playground_ratios(bad), 'mode', bad)
    reject(MOD, lambda: X.playground_ratios('poe', bad), 'prior', bad)

def test_argument_free_helpers_are_deterministic_and_copies():
    for f in (X.q4_game, X.shapley_panel_table, X.abac_requests, X.signed_updates, X.panel_ranking):
        a, b = f(), f()
        assert type(a) is type(b)
    t = X.shapley_panel_table(); t.loc[:, 'flagged'] = True
    assert not X.shapley_panel_table()['flagged'].all()                  # the cached table is not changed by a caller
    assert X.signed_updates()['fresh'] == X.signed_updates()['fresh']    # one device, one set of signed updates per session
    np.testing.assert_array_equal(X.bug_cases(3)[0][0], X.bug_cases(3)[0][0])
