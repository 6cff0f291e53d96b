"""Bad input never surprises `hetfl_explore.graders`.

Two kinds of input: a student's *answer*, which may be anything (a grader must never raise on it: it answers with a
`Feedback` that says what it expected), and the *arguments* of the entry points and data helpers (an unknown
exercise id, a negative seed...), which raise `ValueError`/`TypeError` naming the argument (and, for ids, listing
the known ones)."""
import importlib, re
import numpy as np, pytest, torch
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.graders as C
from hetfl_explore.graders import core, selection, modelhet, feddiverse, fairness
from hetfl_explore.graders.core import Feedback, STATUSES

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
LAB_MODULES = (selection, modelhet, feddiverse, fairness)   # the labs whose helpers this file covers (later labs: their own file)
QS = [(m, n) for m in (importlib.import_module(f'{core.PACKAGE}.{lab}') for lab in core.LABS)   # every lab's graders
      for n in sorted(vars(m)) if re.fullmatch(r'_q[0-9]+', n)]

COVERED = {f'hetfl_explore.graders.core.{n}' for n in (
    'Feedback', 'as_number', 'as_fraction', 'as_signed_fraction', 'matches', 'as_numbers', 'as_text', 'as_parts', 'is_placeholder', 'first_mistake',
    'try_call', 'exercise', 'load_labs', 'exercises', 'grade', 'rubric_feedback', 'lab_report', 'assert_solved',
    'answer_problem')} | {
    'hetfl_explore.graders.selection.' + n for n in ('never_selected', 'sampler_problem', 'uniform_jain')} | {
    'hetfl_explore.graders.modelhet.' + n for n in ('param_ratio', 'layer_coverage',
                                                   'small_attack', 'exponential_losses', 'predicted_auc', 'start_advantage')} | {
    'hetfl_explore.graders.feddiverse.' + n for n in ('step3_cases', 'step3_scores', 'explorer_stats')} | {
    'hetfl_explore.graders.fairness.' + n for n in ('lab_confusion', 'federated_dp_cases', 'explorer_dp')}

class Unreadable:
    "An answer whose every conversion and comparison raises."
    def _boom(self, *a): raise RuntimeError('unreadable')
    __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = __eq__ = __getitem__ = _boom

def recursive():
    "A list that contains itself."
    xs = [1.0]; xs.append(xs); return xs

def nested(depth):
    "A list nested `depth` deep around one number."
    x = 1.0
    for _ in range(depth): x = [x]
    return x

def raises_naming(f, arg, *args, **kw):
    "Assert `f(*args, **kw)` raises ValueError/TypeError whose message names `arg`; returns the message."
    with pytest.raises((ValueError, TypeError)) as e: f(*args, **kw)
    assert arg in str(e.value), f'{arg!r} not named in {e.value!r}'
    return str(e.value)

def test_covered_names_exist_and_every_public_callable_is_covered():
    public = {f'{m.__name__}.{n}' for m in (core,) + LAB_MODULES for n in m.__all__ if callable(getattr(m, n))}
    assert COVERED == public

ANSWERS = st.one_of(st.none(), st.just(...), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=30), st.lists(st.one_of(st.integers(-5, 50), st.floats(), st.text(max_size=5), st.booleans()), max_size=6),
                    st.tuples(st.text(max_size=12), st.floats()), st.sets(st.text(max_size=8), max_size=3),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.builds(lambda n: np.full(n, np.nan), st.integers(0, 4)),
                    st.builds(lambda x: torch.tensor(x), st.floats(-2, 2)), st.just(lambda *a: None), st.just(lambda *a: [0, 0, 0, 0]),
                    st.just(lambda g, q, p: g), st.just(lambda *a: True), st.just(lambda *a: a[3].add(None)), st.just(print), st.just(object()),
                    st.builds(lambda: recursive()), st.builds(nested, st.integers(20, 5000)), st.builds(lambda e: [10**e, 1], st.integers(309, 500)),
                    st.builds(lambda e: -10**e, st.integers(309, 500)), st.builds(Unreadable), st.just([Unreadable()]))

@pytest.mark.parametrize('mod,name', QS, ids=[f'{m.__name__.split(".")[-1]}.{n}' for m, n in QS])
@SETTINGS
@given(answer=ANSWERS)
def test_any_answer_gets_feedback_never_an_exception(mod, name, answer):
    fb = getattr(mod, name)(answer)
    assert isinstance(fb, Feedback) and fb.status in STATUSES and fb.message
    if fb.status == 'wrong': assert fb.hint

@SETTINGS
@given(eid=st.text(max_size=20).filter(lambda s: s not in C.exercises()))
def test_unknown_exercise_id_lists_the_known_ones(eid):
    msg = raises_naming(C.grade, 'exercise', eid, 1)
    assert "expected one of 'selection.q1'" in msg and 'fairness.q7' in msg

@SETTINGS
@given(eid=st.one_of(st.integers(), st.none(), st.floats(), st.lists(st.text(), max_size=2)))
def test_non_string_exercise_id_is_a_type_error(eid):
    with pytest.raises(TypeError, match='exercise'): C.grade(eid, 1)

@SETTINGS
@given(lab=st.one_of(st.text(max_size=10).filter(lambda s: s not in core.LABS), st.integers()))
def test_unknown_lab(lab):
    for f in (C.exercises, C.lab_report, C.assert_solved): raises_naming(f, 'lab', lab)

@SETTINGS
@given(x=ANSWERS)
def test_readers_never_raise(x):
    assert core.as_number(x) is None or np.isfinite(core.as_number(x))
    assert core.as_fraction(x) is None or isinstance(core.as_fraction(x), float)
    assert core.as_signed_fraction(x) is None or np.isfinite(core.as_signed_fraction(x))
    a = core.as_numbers(x); assert a is None or (a.ndim == 1 and np.isfinite(a).all())
    assert core.as_text(x) is None or isinstance(core.as_text(x), str)
    assert core.as_parts(x, 2) is None or len(core.as_parts(x, 2)) == 2
    assert isinstance(core.is_placeholder(x), bool)
    res, err = core.try_call(x, 1)
    assert err is None or isinstance(err, str)
    assert selection.sampler_problem(x) is None or isinstance(selection.sampler_problem(x), str)

@SETTINGS
@given(status=st.text(max_size=10).filter(lambda s: s not in STATUSES), other=st.one_of(st.integers(), st.none()))
def test_feedback_validates(status, other):
    raises_naming(Feedback, 'status', 'selection.q1', status, 'm')
    raises_naming(Feedback, 'exercise', other, 'correct', 'm')
    raises_naming(Feedback, 'message', 'selection.q1', 'correct', other)

@SETTINGS
@given(eid=st.one_of(st.text(max_size=12).filter(lambda s: not re.fullmatch(r'[a-z]+\.q[0-9]+', s)), st.integers()))
def test_exercise_decorator_rejects_bad_ids(eid):
    raises_naming(core.exercise, 'eid', eid, 'hint')
    with pytest.raises(TypeError, match='hint'): core.exercise('demo.q1', 3)

@SETTINGS
@given(bad=st.one_of(st.integers(-5, 0), st.floats(), st.text(max_size=3), st.none()))
def test_rubric_and_mistake_arguments(bad):
    raises_naming(core.rubric_feedback, 'min_words', 'demo.q1', 'text', {'a': ('a',)}, bad)
    raises_naming(core.rubric_feedback, 'rubric', 'demo.q1', 'text', [bad], 5)
    if bad is None or isinstance(bad, str) or (isinstance(bad, float) and not np.isfinite(bad)): raises_naming(core.first_mistake, 'value', bad, [], 0.1)
    raises_naming(core.first_mistake, 'mistakes', 0.5, bad, 0.1)

BAD_INT = st.one_of(st.integers(-10, -1), st.floats(), st.text(max_size=3), st.none())

@SETTINGS
@given(bad=BAD_INT)
def test_data_helpers_reject_bad_sizes_and_seeds(bad):
    raises_naming(selection.never_selected, 'seed', 20, bad)
    raises_naming(selection.uniform_jain, 'seed', 20, bad)
    raises_naming(modelhet.exponential_losses, 'seed', 10, bad)
    raises_naming(feddiverse.step3_cases, 'seed', bad)
    raises_naming(fairness.federated_dp_cases, 'seed', bad)
    if not (isinstance(bad, int) and bad > 0): raises_naming(selection.never_selected, 'rounds', bad)
    if not (isinstance(bad, int) and bad > 0): raises_naming(modelhet.exponential_losses, 'n', bad)

@SETTINGS
@given(bad=st.one_of(st.floats().filter(lambda v: not 0 <= v <= 1), st.text(max_size=3), st.none()))
def test_explorer_helpers_reject_bad_settings(bad):
    raises_naming(fairness.explorer_dp, 'mix', bad)
    raises_naming(fairness.explorer_dp, 'reliance', 0.5, bad)
    raises_naming(feddiverse.explorer_stats, 'selector', bad)
    if not (isinstance(bad, float) and bad >= 0): raises_naming(feddiverse.explorer_stats, 'noise', 'uniform', bad)

@SETTINGS
@given(L=st.one_of(st.text(max_size=3), st.builds(lambda n: np.ones((n, 2)), st.integers(1, 4)), st.just([[np.nan, 0, 1]])), k=st.integers(-5, 20))
def test_step3_scores_rejects_bad_input(L, k):
    raises_naming(feddiverse.step3_scores, 'L', L, 0, 0)
    if not 0 <= k < 3: raises_naming(feddiverse.step3_scores, 'kp', np.eye(3), k, 0)

def test_argument_free_helpers_are_deterministic():
    for f in (modelhet.param_ratio, modelhet.layer_coverage, modelhet.predicted_auc, fairness.lab_confusion, modelhet.small_attack, core.load_labs,
              modelhet.start_advantage):
        a, b = f(), f()
        assert type(a) is type(b)

@SETTINGS
@given(answer=st.one_of(st.builds(lambda: recursive()), st.builds(nested, st.integers(core.MAX_ANSWER_DEPTH + 1, 5000)),
                        st.builds(lambda e: [1, [10**e]], st.integers(309, 500)), st.builds(np.ones, st.integers(core.MAX_ANSWER_ITEMS + 1, 10**7))))
def test_unreadable_answers_are_named_before_any_conversion(answer):
    assert isinstance(core.answer_problem(answer), str)
    assert all(C.grade(e, answer).status == 'wrong' for e in C.exercises()[::7])

@SETTINGS
@given(answer=st.one_of(st.floats(allow_nan=False), st.lists(st.integers(-10**6, 10**6), max_size=20), st.text(max_size=20)))
def test_ordinary_answers_are_readable(answer):
    assert core.answer_problem(answer) is None

def test_matches_refuses_bad_arguments_by_name():
    assert core.matches(0.26, 0.2562, 0.0025) and not core.matches(0.25, 0.2562, 0.0025) and not core.matches(0.3, 0.2562, 0.0025)
    for name, args in (('value', ('x', 0.5, 0.1)), ('want', (0.5, np.nan, 0.1)), ('tol', (0.5, 0.5, -1)), ('min_decimals', (0.5, 0.5, 0.1, -1))):
        raises_naming(core.matches, name, *args)
