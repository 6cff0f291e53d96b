"""Hostile inputs at the top of the package, the labs' graders and the scale-out part: refused with a message that names
the caller's argument, or (a `str` subclass's characters, a hostile answer) read without calling the object's methods."""
from __future__ import annotations
import json
import numpy as np
import pytest
from test_hostile_entry_points import refused

class RaisingStr(str):
    "A `str` whose own methods raise (what a hostile caller may pass for a name or an answer)."
    def _boom(self, *a, **k): raise RuntimeError('hostile str')
    strip = lower = upper = split = replace = startswith = __iter__ = __len__ = __contains__ = _boom
    __eq__ = __ne__ = __hash__ = __format__ = _boom

class RaisingInt(int):
    "An `int` whose comparisons and arithmetic raise."
    def _boom(self, *a, **k): raise RuntimeError('hostile int')
    __abs__ = __lt__ = __gt__ = __le__ = __ge__ = __eq__ = __hash__ = _boom

def test_selector_names_are_read_by_their_characters_and_errors_name_selector():
    from hetfl_explore.scale.strategies import registry_key, sampling_name, sampling_level, SampledFedAvg
    assert registry_key(RaisingStr('Pow_D')) == 'pow-d' and sampling_name(RaisingStr('round_robin')) == 'round-robin'
    assert sampling_level(RaisingStr('FedDiverse')) == 'triplet'
    refused(lambda: registry_key('best'), 'selector', "'best'")
    refused(lambda: SampledFedAvg(selector='best'), 'selector', "'best'")

def test_stats_record_refuses_counts_without_a_class_or_an_attribute():
    from hetfl_explore.scale.contract import stats_record
    refused(lambda: stats_record(np.zeros((0, 2)), 'matrix'), 'counts', '(0, 2)')
    refused(lambda: stats_record([[]], 'size'), 'counts', '(1, 0)')
    assert stats_record([[3, 1], [0, 2]], 'size')['num-examples'] == 6

CFG = dict(dataset='digits', selector='uniform', seed=0, num_clients=4, rounds=1, clients_per_round=2, device='cpu')

@pytest.mark.parametrize('bad, key, shown', [
    ({'dataset': 'no-such-data'}, "config['dataset']", 'no-such-data'), ({'seed': -1}, "config['seed']", '-1'),
    ({'num_clients': 0}, "config['num_clients']", '0'), ({'colour': 'red'}, 'config', 'allowed'),
    ({'rounds': 0}, 'config', 'rounds')])
def test_a_sweep_configuration_names_its_bad_key(bad, key, shown):
    from hetfl_explore.scale.sweeps import fl_task
    msg = refused(lambda: fl_task({**CFG, **bad}), 'config', shown)
    assert key in msg

def test_a_missing_key_says_which_keys_a_configuration_needs():
    from hetfl_explore.scale.sweeps import fl_task
    assert 'expected the keys dataset, selector and seed' in refused(lambda: fl_task({'dataset': 'digits'}), 'config')

def test_run_sweep_checks_every_configuration_before_it_touches_the_directory(tmp_path):
    from hetfl_explore.scale.sweeps import run_sweep
    d = tmp_path / 'sweep'
    msg = refused(lambda: run_sweep([CFG, {**CFG, 'seed': 1, 'selector': 'nope'}], d, backend='sequential'), 'configs')
    assert 'configs[1]' in msg and 'nope' in msg and not d.exists()

def test_a_sweep_store_takes_a_tuple_and_names_a_repeated_configuration(tmp_path):
    from hetfl_explore.scale.sweeps import SweepStore
    assert SweepStore(tmp_path / 'a', (CFG, {**CFG, 'seed': 1}), len).configs == [CFG, {**CFG, 'seed': 1}]
    msg = refused(lambda: SweepStore(tmp_path / 'b', [CFG, {**CFG, 'seed': 1}, CFG], len), 'configs')
    assert 'configs[2] repeats configs[0]' in msg and 'expected' in msg

def test_answer_problem_and_is_placeholder_answer_for_any_hostile_answer():
    from hetfl_explore.graders.core import answer_problem, is_placeholder
    assert 'could not be read' in answer_problem(RaisingInt(3)) and 'could not be read' in answer_problem([1.0, RaisingInt(1)])
    assert is_placeholder(RaisingStr('  ')) and not is_placeholder(RaisingStr('0.5'))
    assert is_placeholder([RaisingStr(''), None]) and answer_problem(0.5) is None

def test_rubric_feedback_reads_a_hostile_text_and_grade_reads_a_hostile_id():
    from hetfl_explore.graders.core import rubric_feedback, grade, Feedback
    out = rubric_feedback('fuzz.q1', RaisingStr('k ' * 5), {'k': ['k']}, min_words=3)
    assert isinstance(out, Feedback) and out.status == 'submitted'
    assert grade(RaisingStr('selection.q1'), ...).status == 'not attempted'

def test_labs_and_exercise_ids_are_checked_by_name(monkeypatch):
    from hetfl_explore.graders.core import assert_solved, grade, exercises, exercise, EXERCISES
    monkeypatch.setitem(EXERCISES, 'fuzz.q7', None)   # the registration below is undone after the test
    refused(lambda: assert_solved('chemistry'), 'lab', "'chemistry'")
    refused(lambda: assert_solved(None), 'lab', 'None')
    refused(lambda: exercises('chemistry'), 'lab', "'chemistry'")
    refused(lambda: grade('selection.q99', 1.0), 'exercise', "'selection.q99'")
    assert exercise(RaisingStr('fuzz.q7'), 'look again')(lambda a: None).exercise == 'fuzz.q7'
    assert exercises()[-1] == 'fuzz.q7' and exercises()[0] == 'selection.q1'   # one's own lab after the course's

def test_step3_scores_names_its_triplets():
    from hetfl_explore.graders.feddiverse import step3_scores
    refused(lambda: step3_scores(np.zeros((0, 3)), 0, 0), 'L', '(0, 3)')
    refused(lambda: step3_scores('abc', 0, 1), 'L', 'abc')
    refused(lambda: step3_scores(np.ones((3, 2)), 0, 1), 'L', '(3, 2)')
    L = np.array([[1., 0., 0.], [0., 1., 0.], [0., 0., 1.]])
    assert step3_scores(L, 0, 1).tolist() == [0.0, 0.0, 1.0]
