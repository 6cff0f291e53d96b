"""Bad input never surprises `hetfl_explore.graders.clustering`: any student answer gets a `Feedback` (never an
exception), the helpers that run a student's function answer with a message, and the data helpers reject malformed
arguments with a `ValueError`/`TypeError` naming the argument."""
import re
import numpy as np
from hypothesis import given, strategies as st
from hetfl_explore.graders import clustering as K
from test_properties_graders import ANSWERS, SETTINGS, raises_naming

QS = sorted(n for n in vars(K) if re.fullmatch(r'_q[0-9]+', n))   # the graders, reached through `grade`
HELPERS = ('q2_graph', 'mcl_one_step', 'mcl_cluster_counts', 'w1_cases', 'w1_problem', 'threshold_grid', 'threshold_problem',
           'first_rejected_drift', 'cfl_first_split', 'as_workers', 'gpfl_first_move')
COVERED = {f'hetfl_explore.graders.clustering.{n}' for n in HELPERS}

def test_covered_names_are_the_public_callables():
    assert COVERED == {f'{K.__name__}.{n}' for n in K.__all__ if callable(getattr(K, n))}

@SETTINGS
@given(x=ANSWERS)
def test_student_function_readers_never_raise(x):
    for f in (K.w1_problem, K.threshold_problem): assert f(x) is None or isinstance(f(x), str)
    w = K.as_workers(x)
    assert w is None or (isinstance(w, list) and all(isinstance(i, int) for i in w))

BAD_SEED = st.one_of(st.integers(-10, -1), st.floats(), st.text(max_size=3), st.none())

@SETTINGS
@given(bad=BAD_SEED)
def test_data_helpers_reject_bad_seeds(bad):
    for f in (K.mcl_cluster_counts, K.first_rejected_drift, K.cfl_first_split, K.gpfl_first_move, K.w1_cases):
        raises_naming(f, 'seed', seed=bad)

@SETTINGS
@given(bad=st.one_of(st.text(max_size=6), st.integers(), st.none()))
def test_choices_are_checked(bad):
    raises_naming(K.mcl_cluster_counts, 'graph', bad)
    raises_naming(K.first_rejected_drift, 'threshold', bad)
    raises_naming(K.first_rejected_drift, 'mode', 'literal', bad)

@SETTINGS
@given(bad=st.one_of(st.floats(max_value=-1e-9), st.just(float('nan')), st.text(max_size=3), st.none()))
def test_cfl_settings_are_checked(bad):
    raises_naming(K.cfl_first_split, 'eps1', bad)
    raises_naming(K.cfl_first_split, 'eps2', 0.4, bad)
    raises_naming(K.cfl_first_split, 'warmup', 0.4, 0.3, bad)

@SETTINGS
@given(A=st.one_of(st.text(max_size=3), st.builds(lambda n: np.ones((n, n + 1)), st.integers(1, 4)),
                   st.builds(lambda n: -np.ones((n, n)), st.integers(2, 4)), st.just([[np.nan, 1], [1, 0]])),
       loops=st.one_of(st.integers(), st.text(max_size=2), st.none()))
def test_mcl_one_step_rejects_bad_input(A, loops):
    raises_naming(K.mcl_one_step, 'A', A)
    raises_naming(K.mcl_one_step, 'loops', K.q2_graph(), loops)

def test_argument_free_helpers_are_deterministic():
    np.testing.assert_array_equal(K.q2_graph(), K.q2_graph())
    assert K.threshold_grid() == K.threshold_grid()
    for (p, q), (p2, q2) in zip(K.w1_cases(), K.w1_cases()): np.testing.assert_array_equal(np.r_[p, q], np.r_[p2, q2])
