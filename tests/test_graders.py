"""Every grader of `hetfl_explore.graders` against the lab's reference solution, equivalent forms of it, and at least
two typical wrong answers, asserting that the feedback names the mistake (and never prints the expected value)."""
import numpy as np, pytest, torch
from hetfl_explore.graders import grade, exercises, lab_report
from hetfl_explore.graders import selection as S, modelhet as M, feddiverse as F, fairness as R
from hetfl_explore.graders.core import Feedback, MIME
from hetfl_explore.modelhet.mia import roc_auc, best_advantage
from hetfl_explore.fairness.metrics import demographic_parity_diff, sum_confusions, simpson_example
from hetfl_explore.foundation.hetero import dht, fl_metrics
from hetfl_explore.foundation.data import federation

def fixed_pick(K, k, rng): return rng.choice(K, size=k, replace=False)
def fixed_step3(L, sel, kp, kc):
    s = np.abs(F.step3_scores(L, kp, kc)); s[list(sel)] = -np.inf
    return int(np.argmax(s))
GSC = fl_metrics(federation('spawrious_gsc'))
EXP = M.exponential_losses()
ORDER = sorted(F.EXPLORER_SELECTORS, key=lambda s: F.explorer_stats(s).union_mean()[0])   # what the explorer shows today
DRIFT, NO_DRIFT = ('towards uniform', 'one third each')[::1 if F.explorer_stats('feddiverse[sign-invariant]', F.NOISE).type_shares['CI'] > 1 / 3 + F.DRIFT else -1]
OPEN = {lab: ' '.join(sum((list(keys[:1]) for keys in rub.values()), [])) + ' ' + ' '.join(['word'] * 40)
        for lab, rub in (('selection.q7', S.SELECTION_RUBRIC), ('modelhet.q8', M.MODELHET_RUBRIC), ('feddiverse.q8', F.FEDDIVERSE_RUBRIC), ('fairness.q7', R.FAIRNESS_RUBRIC))}
SHORT, OFFTOPIC = 'it depends', ' '.join(['the model is trained'] * 12)

# exercise: (reference answers in several equivalent forms, [(wrong answer, words the feedback must contain), ...])
CASES = {
 'selection.q1': ([5 / 40, 12.5, np.float64(0.125), '12.5%'], [(1 / 40, 'one particular pick'), (1 / 5, 'divided by κ'), ('a lot', 'expected one probability')]),
 'selection.q2': ([0.875 ** 20, 6.92], [(1 - 20 * 5 / 40, 'union bound'), (0.125 ** 20, 'selected in every round'), ((1 - 1 / 40) ** 20, 'chance of one pick')]),
 'selection.q3': ([(40 * 0.875 ** 20, S.never_selected()), [2.77, np.int64(S.never_selected())]],
                  [((2.77, 40 - S.never_selected()), 'selected at least once'), ((0.0692, S.never_selected()), 'first part'), ((S.never_selected(), 2.77), 'swapped'), ((2.77,), 'pair')]),
 'selection.q4': ([fixed_pick, lambda K, k, rng: rng.permutation(K)[:k].tolist()],
                  [(lambda K, k, rng: rng.integers(0, K, size=k), 'same client twice'), (lambda K, k, rng: np.arange(k), 'whatever the random generator'),
                   (lambda K, k, rng: rng.choice(K, k - 1, replace=False), 'exactly k'), (lambda K, k, rng: rng.choice(K, k, replace=False, p=np.r_[np.full(K - 1, 0.5 / (K - 1)), 0.5]), 'not uniform'),
                   (lambda K, k, rng: 1 / 0, 'ZeroDivisionError'), (3, 'expected a function')]),
 'selection.q5': ([100 / 176, 0.568, '0.568'], [(100 / 44, 'at most 1'), (100 / 132, 'never selected counts too'), (1.76, 'inverted')]),
 'selection.q6': ([[S.uniform_jain(20), S.uniform_jain(200)], np.array([S.uniform_jain(20), S.uniform_jain(200)])],
                  [((1, 1), 'even only on average'), ((S.uniform_jain(200), S.uniform_jain(20)), 'swapped'), ((S.uniform_jain(20), 0.5), 'second (200 rounds)')]),
 'modelhet.q1': ([[3, 5, 10, 20], np.array([3., 5, 10, 20]), (3, 5, 10, 20)],
                 [([2, 5, 10, 20], 'rounded down'), ([10, 20, 40, 80], "full model's widths"), ([2.5, 5, 10, 20], 'whole channels'), ([3, 5, 10], 'four hidden widths')]),
 'modelhet.q2': ([M.param_ratio(), 100 * M.param_ratio()], [(0.5, 'input AND output'), (0.25, 'approximation'), (0.0625, 'r⁴')]),
 'modelhet.q3': ([(1, 2), [1.0, 2.0], np.array([1, 2])], [((2, 2), 'first part (weights)'), ((1, 1), 'second part (biases)'), ((2, 1), 'swapped')]),
 'modelhet.q4': ([8 / 9, 88.89], [(1 / 9, 'flipped'), (2 / 3, 'accuracy at the threshold')]),
 'modelhet.q5': ([1 / 3, 0.333], [(2 / 3, 'subtracts the FPR'), (1.0, 'added the FPR'), (-1 / 3, 'sign')]),
 'modelhet.q6': ([lambda l, m: roc_auc(-np.asarray(l), m), lambda l, m: roc_auc(1 / np.asarray(l), m)],
                 [(lambda l, m: roc_auc(l, m), 'LOWER loss'), (lambda l, m: float(((np.asarray(l) < 0.5) == m).mean()), 'not the ROC AUC'), (lambda l, m: 'high', 'one number')]),
 'modelhet.q7': ([(5 / 6, best_advantage(EXP.scores, EXP.labels)), (83.3, round(best_advantage(EXP.scores, EXP.labels), 2))],
                 [((0.5, 0.5), 'no separation'), ((1 / 6, 0.5), 'flipped'), ((5 / 6, 5 / 6), 'AUC again'), ((5 / 6, 0.2), 'best advantage')]),
 'feddiverse.q1': ([dht([[90, 10], [10, 90]]).tolist(), np.array([0, 0, 0.531]), (0, 0, 0.531)],
                   [([0, 0, 0.368], 'in nats'), ([0, 0, 0.469], 'H(A|Y)'), ([0.1, 0, 0.531], 'CI or AI'), ([0.531], 'three numbers')]),
 'feddiverse.q2': ([(GSC['GSC'], GSC['CSC']), [round(GSC['GSC'], 3), round(GSC['CSC'], 3)]],
                   [((GSC['CSC'], GSC['GSC']), 'swapped'), ((0, 0), 'GCI and GAI'), ((GSC['GSC'], 0.5), 'second part (CSC)')]),
 'feddiverse.q3': ([('A', 'less than half'), ['a', 'Less  than half']], [(('B', 'less than half'), 'first part'), (('A', 'more than half'), 'second part'), (('A', 'half'), "'less than half' or")]),
 'feddiverse.q4': ([fixed_step3], [(lambda L, sel, kp, kc: int(np.argmax(np.abs(F.step3_scores(L, kp, kc)))), 'already selected'),
                                   (lambda L, sel, kp, kc: int(np.setdiff1d(np.arange(len(L)), sel)[np.argmax(F.step3_scores(L, kp, kc)[np.setdiff1d(np.arange(len(L)), sel)])]), 'signed score'),
                                   (lambda L, sel, kp, kc: int(np.setdiff1d(np.arange(len(L)), sel)[0]), 'largest |score|'), (lambda L, sel, kp, kc: 'x', 'one client id')]),
 'feddiverse.q5': ([F.explorer_stats('uniform').type_shares['CI'], 100 * F.explorer_stats('uniform').type_shares['CI'], 66.7],
                   [(100 / 3, "FedDiverse's balance"), (F.explorer_stats('uniform').type_shares['AI'], 'AI share'), (16, '16 clients')]),
 'feddiverse.q6': ([ORDER, tuple(o.upper() for o in ORDER)],
                   [(ORDER[::-1], 'highest first'), ([ORDER[1], ORDER[0], ORDER[2]], 'first two are swapped'),
                    ([ORDER[0], ORDER[2], ORDER[1]], 'most class-imbalanced' if ORDER[-1] == 'uniform' else 'order is off'), ([ORDER[0]] * 2 + [ORDER[2]], 'exactly once')]),
 'feddiverse.q7': ([DRIFT, DRIFT.title()], [(NO_DRIFT, 'look again'), ('more diverse', "'towards uniform' or")]),
 'fairness.q1': ([0.28, 28, torch.tensor(0.28)], [(0.2, 'base rates'), (0.44, 'disparate impact'), (0.3, 'ΔEOp')]),
 'fairness.q2': ([0.3, 30], [(0.1, 'FPRs'), (0.28, 'ΔDemPar')]),
 'fairness.q3': ([(0.79, 0.5), (79, 50)], [((0.79, 0.78), "worst GROUP's accuracy"), ((0.5, 0.79), 'swapped'), ((0.7, 0.5), 'first part (overall accuracy)')]),
 'fairness.q4': ([float(demographic_parity_diff(sum_confusions(simpson_example()))), demographic_parity_diff(sum_confusions(simpson_example()))],
                 [(0, 'SUM'), (0.9, 'not ΔDemPar of the summed counts')]),
 'fairness.q5': ([lambda cs: demographic_parity_diff(sum_confusions(cs)), lambda cs: float(demographic_parity_diff(sum(cs)))],
                 [(lambda cs: float(np.mean([demographic_parity_diff(c) for c in cs])), 'average'),
                  (lambda cs: float(sum(demographic_parity_diff(c) * c.sum() for c in cs) / sum(c.sum() for c in cs)), 'size-weighted'),
                  (lambda cs: 0.0, 'not its ΔDemPar')]),
 'fairness.q6': ([(0.4, 0.0), (40, 0)], [((0.8, 0.8), "client's row"), ((0.4, 0.4), 'second (mix 0.5)'), ((0.4,), 'pair')]),
}
for eid in OPEN: CASES[eid] = ([OPEN[eid]], [(SHORT, 'too short'), (OFFTOPIC, 'not found'), (42, 'string')])

from test_graders_crowd import CASES as CROWD_CASES              # later labs keep their cases (and their own tests) in
from test_graders_clustering import CASES as CLUSTERING_CASES    # tests/test_graders_<lab>.py; the generic tests run here
CASES |= CROWD_CASES | CLUSTERING_CASES

def test_every_exercise_has_cases():
    assert sorted(CASES) == sorted(exercises())

@pytest.mark.parametrize('eid', sorted(CASES))
def test_reference_and_equivalent_forms_pass(eid):
    for ans in CASES[eid][0]:
        fb = grade(eid, ans)
        assert fb.status in ('correct', 'submitted'), f'{eid}: {ans!r} -> {fb}'
        if fb.status == 'submitted': assert 'not found' not in fb.message

@pytest.mark.parametrize('eid', sorted(CASES))
def test_wrong_answers_get_feedback_that_names_the_mistake(eid):
    wrongs = CASES[eid][1]
    assert len(wrongs) >= 2
    for ans, words in wrongs:
        fb = grade(eid, ans)
        assert fb.status == 'wrong' or (fb.status == 'submitted' and 'not found' in fb.message), f'{eid}: {ans!r} -> {fb}'
        assert words in fb.message, f'{eid}: {ans!r}: expected {words!r} in {fb.message!r}'
        assert fb.hint or fb.status == 'submitted'

@pytest.mark.parametrize('eid', sorted(CASES))
def test_placeholder_is_not_attempted(eid):
    for ph in (..., None, '', (..., ...)):
        fb = grade(eid, ph)
        assert fb.status == 'not attempted' and 'placeholder' in fb.message

def test_module_grader_and_grade_agree():
    assert S._q1(0.125).status == grade('selection.q1', 0.125).status == 'correct'
    assert R._q1(0.2).message == grade('fairness.q1', 0.2).message

def test_feedback_never_states_the_expected_number():
    for eid, value, shown in (('selection.q1', 0.2, '0.125'), ('selection.q2', 0.5, '0.069'), ('modelhet.q4', 0.5, '0.889'),
                              ('fairness.q1', 0.9, '0.28'), ('modelhet.q2', 0.9, '0.256')):
        fb = grade(eid, value)
        assert fb.status == 'wrong' and shown not in repr(fb), f'{eid}: {fb}'

def test_feedback_displays_and_records():
    fb = grade('selection.q1', 0.125)
    bundle = fb._repr_mimebundle_()
    assert bundle[MIME] == dict(exercise='selection.q1', status='correct', message=fb.message, hint=fb.hint)
    assert 'selection.q1' in bundle['text/plain'] and 'correct' in bundle['text/html']
    assert lab_report('selection').loc['selection.q1', 'status'] == 'correct'

def test_hints_show_no_literal_backticks():
    "Hints print as plain text in the lab: a name in backticks would show its backticks."
    for eid in exercises(): assert '`' not in grade(eid, ...).hint, eid

def _adv_q5():
    r = M.small_attack(); return r.preds[r.labels == 1].mean() - r.preds[r.labels == 0].mean()

def _f32_auc(losses, is_member):
    return np.float32(roc_auc(-np.asarray(losses, np.float32), is_member))

def _start_adv():
    return M.start_advantage()

FORMS = {   # exercise: (right answers in the forms students type, [(plausible wrong answer, words of its feedback), ...])
 'selection.q4': ([fixed_pick, lambda K, k, rng: np.sort(rng.choice(K, k, replace=False))],
                  [(lambda K, k, rng: (rng.integers(K) + np.arange(k)) % K, 'every set of k clients'),
                   (lambda K, k, rng: (rng.integers(K // k) * k + np.arange(k)) % K, 'not uniform')]),
 'modelhet.q2': ([M.param_ratio(), round(M.param_ratio(), 3), 0.26, 25.62, '26%'],
                 [(0.25, 'r² is the approximation'), (0.5, 'input AND output'), (0.27, 'not the ratio')]),
 'modelhet.q5': ([1 / 3, 0.33, 33.3, '33.3%', np.float32(1 / 3)], [(-1 / 3, 'sign'), (-33.3, 'sign'), (2 / 3, 'TPR')]),
 'modelhet.q6': ([lambda l, m: roc_auc(-np.asarray(l), m), _f32_auc, lambda l, m: torch.tensor(roc_auc(-np.asarray(l), m), dtype=torch.float32)],
                 [(lambda l, m: roc_auc(np.asarray(l), m), 'LOWER loss'), (lambda l, m: 0.5, 'not the ROC AUC')]),
 'modelhet.q7': ([(5 / 6, 0.532), (0.83, 0.53), (83.3, 53.2), ('83%', '53%')],
                 [((5 / 6, 0.507), 'starting threshold'), ((5 / 6, 5 / 6), 'AUC again'), ((0.5, 0.532), 'no separation'), ((5 / 6, 0.45), 'off')]),
 'feddiverse.q5': ([0.6622, 66.2, 66, '66%', 0.66], [(70, 'not the CI share'), (68.1, 'not the CI share'), (1 / 3, 'balance'), (35.7, 'fedrk row')]),
}

@pytest.mark.parametrize('eid', list(FORMS))
def test_graders_accept_every_form_and_reject_plausible_mistakes(eid):
    right, wrong = FORMS[eid]
    for ans in right:
        fb = grade(eid, ans); assert fb.status == 'correct', f'{eid}: {ans!r} -> {fb}'
    for ans, words in wrong:
        fb = grade(eid, ans); assert fb.status == 'wrong' and words in fb.message, f'{eid}: {ans!r} -> {fb}'

def test_start_advantage_is_the_panels_first_reading():
    "The q7 trap is the value the anatomy panel prints before the slider is moved."
    from hetfl_explore.widgets.privacy_fairness import MIAAnatomy
    assert MIAAnatomy(M.exponential_losses()).metrics['advantage'] == pytest.approx(M.start_advantage(), abs=1e-12)

@pytest.mark.parametrize('eid,diff', [('fairness.q1', demographic_parity_diff), ('fairness.q2', None)])
def test_fairness_gaps_accept_a_signed_difference(eid, diff):
    "The gap is max − min; a student who subtracts the other way has the right size (−0.28 for 0.28), in either form."
    from hetfl_explore.fairness.metrics import equal_opportunity_diff
    want = float((diff or equal_opportunity_diff)(R.lab_confusion()))
    for ans in (want, -want, round(-want, 2), -100 * want, f'{-100 * want:.1f}%'):
        fb = grade(eid, ans); assert fb.status == 'correct', f'{eid}: {ans!r} -> {fb}'
    assert grade(eid, want + 0.05).status == 'wrong'
