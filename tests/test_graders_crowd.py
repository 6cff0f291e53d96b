"""Every grader of the crowdsourced-FL lab (`hetfl_explore.graders.crowd`) against the reference solution, equivalent
forms of it, and at least two typical wrong answers, asserting that the feedback names the mistake; the hand-computed
answers are also compared with the thesis' formulas worked out by hand."""
import numpy as np, pytest, torch
from hetfl_explore.graders import grade, exercises, lab_report
from hetfl_explore.graders import crowd as X
from hetfl_explore.crowd.promethee import uni_flows_sorted, compute_flows_as_printed, budget_greedy
from hetfl_explore.crowd.abac import EXAMPLE_POLICY, parse_policy
from hetfl_explore.crowd.pki import verify_update

def fixed_flows(g, q, p):
    "Algorithm 2 with the fully preferred clients counted (the lab's solution)."
    order = np.argsort(g, kind='stable'); s, n = g[order], len(g)
    phi, total, start, end = np.zeros(n), 0.0, 0, 0
    for i in range(n):
        lo, up = s[i] - p, s[i] - q
        while start < i and s[start] < lo: total -= s[start]; start += 1
        while end < n and s[end] <= up: total += s[end]; end += 1
        phi[order[i]] = (start + ((end - start) * (s[i] - q) - total) / (p - q)) / (n - 1)
    return phi

def verifier(check_task=True, check_round=True, check_nonce=True, check_sig=True):
    "A verifier with the chosen checks (all of them: the lab's solution)."
    def accept(u, task_id, round, seen):
        ok = ((not check_sig or verify_update(u)) and (not check_task or u.task_id == task_id)
              and (not check_round or u.round == round) and (not check_nonce or u.nonce not in seen))
        if ok: seen.add(u.nonce)
        return bool(ok)
    return accept

PHI1 = [0.0, 0.1, -0.1]                      # hand-computed net flows of A, B, C (see the lab)
PHI4 = [2.25, 4.0, 5.25]                     # x_i + (α/2) x_i (Σx − x_i) for x = (1, 2, 3), α = 0.5
T2 = X.panel_ranking(); CHOSEN = T2.loc[T2['chosen'], 'rank'].tolist()
T5 = X.shapley_panel_table(); ESCAPED = T5.loc[(T5['kind'] != 'benign') & ~T5['flagged'], 'kind'].tolist()
FLAGGED = T5.loc[(T5['kind'] != 'benign') & T5['flagged'], 'kind'].tolist()
R6 = X.playground_ratios()
PDP = parse_policy(EXAMPLE_POLICY); D7 = [PDP.decide(r).permit for r in X.abac_requests()]
flip = lambda i: [not d if j == i else d for j, d in enumerate(D7)]
OPEN = ' '.join(keys[0] for keys in X.CROWD_RUBRIC.values()) + ' ' + ' '.join(['word'] * 40)

CASES = {
 'crowd.q1': ([PHI1, np.array(PHI1), tuple(PHI1), torch.tensor(PHI1), [0, 0.1, -0.1]],
              [([0, -0.1, 0.1], 'flipped'), ([0, 0.2, -0.2], 'without averaging'), ([0, 0.0667, -0.0667], 'divided by n'),
               ([0.45, 0.4, 0.35], 'positive flow φ⁺ alone'), ([0.05, 0.05, -0.1], 'P(d) = d'), ([0.1, 0.1, 0.1], 'add up to 0'), ([0.1], 'three net flows')]),
 'crowd.q2': ([CHOSEN, set(CHOSEN), np.array(CHOSEN), tuple(reversed(CHOSEN))],
              [(X._with_break(T2, X.Q2_BUDGET), 'Algorithm 3'), (list(range(1, len(CHOSEN) + 1)), 'more than the budget'),
               (T2.loc[T2['chosen'], 'client'].tolist(), 'client ids'), ([CHOSEN[0]] * 2, 'appears twice'), ([1.5], 'whole numbers'), ([0, 1], 'ranks run from 1')]),
 'crowd.q3': ([fixed_flows, lambda g, q, p: uni_flows_sorted(g, q, p)[0], lambda g, q, p: list(uni_flows_sorted(g, q, p)[0])],
              [(compute_flows_as_printed, 'printed sweep'), (lambda g, q, p: np.sort(uni_flows_sorted(g, q, p)[0]), 'sorted order'),
               (lambda g, q, p: uni_flows_sorted(g, q, p)[1], 'negative flow'), (lambda g, q, p: uni_flows_sorted(g, q, p)[0] * (len(g) - 1), 'n − 1'),
               (lambda g, q, p: fixed_flows(g, q, p)[:-1], 'one φ⁺ per client'), (lambda g, q, p: 1 / 0, 'ZeroDivisionError'), ('f', 'expected a function')]),
 'crowd.q4': ([PHI4, np.array(PHI4), (2.25, 4, 5.25)],
              [([1, 2, 3], 'values alone'), ([3.5, 6, 7.5], 'leave-one-out'), ([11.5 / 3] * 3, 'equal split'),
               (list(np.array(PHI4) / 11.5), 'payout shares'), ([2, 4, 5], 'efficiency'), ([2.25, 4.25, 5.0], 'not split')]),
 'crowd.q5': ([ESCAPED, tuple(ESCAPED), set(ESCAPED)] + ([ESCAPED[0], ESCAPED[0].replace('_', ' ').upper()] if len(ESCAPED) == 1 else []),
              [(ESCAPED + FLAGGED[:1], f'the panel flags {FLAGGED[0]}'), (ESCAPED + ['benign'], 'not free riders'), (['free'], 'unknown kind'),
               ([], 'not in your list'), (3, 'list of strings')]),
 'crowd.q6': ([('overconfident', R6[-1]), ['Over-confident', R6[-1] * 1.01], ('overconfident', torch.tensor(R6[-1]))],
              [(('overconfident', 1 / R6[-1]), 'inverted'), (('overconfident', R6[0]), 'after round 1'),
               (('overconfident', X.playground_ratios('poe', 'last_global')[-1]), 'another setting'),
               (('underconfident', R6[-1]), 'first part (verdict)'), (('sure', R6[-1]), 'must be one of'), (('overconfident', -1), 'positive ratio'),
               (('overconfident',), 'pair')]),
 'crowd.q7': ([D7, ['permit' if d else 'deny' for d in D7], tuple(['Permit' if d else 'DENY' for d in D7])],
              [(flip(4), 'ABAC decide when none applies'), (flip(3), 'missing attribute'), (flip(2), 'deny-overrides'),
               (flip(0), 'register rule'), (D7[:3], f'list of {len(D7)} decisions'), (D7[:4] + ['maybe'], 'decision 5')]),
 'crowd.q8': ([verifier(), lambda u, t, r, s: verifier()(u, t, r, s)],
              [(lambda u, t, r, s: verify_update(u), 'replayed in round 2'), (verifier(check_nonce=False), 'twice in round 1'),
               (verifier(check_task=False), 'another task'), (verifier(check_sig=False), 'tampered'), (lambda u, t, r, s: False, 'fresh valid update'),
               (lambda u, t, r, s: 'yes', 'True or False'), (lambda u, t: True, 'TypeError')]),
 'crowd.q9': ([OPEN], [('it depends', 'too short'), (' '.join(['the model is trained'] * 12), 'not found'), (42, 'string')]),
}

def test_every_exercise_has_cases():
    "The generic tests of every grader run in tests/test_graders.py over these CASES."
    assert sorted(CASES) == sorted(exercises('crowd')) and len(CASES) >= 8


def test_hand_computed_answers_match_the_formulas():
    plus, minus = X.q1_flows()
    np.testing.assert_allclose(plus, [0.45, 0.4, 0.35]); np.testing.assert_allclose(minus, [0.45, 0.3, 0.45])   # π table of the lab
    np.testing.assert_allclose(X.q4_game().closed_form(), PHI4)
    assert abs(sum(PHI4) - X.q4_game()(range(3))) < 1e-12                                                       # efficiency: Σφ = v(N)

def test_panel_answers_follow_the_library_rules():
    order = T2['client'].to_numpy()
    assert sorted(budget_greedy(order, T2['cost'].to_numpy(), X.Q2_BUDGET).tolist()) == sorted(T2.loc[T2['chosen'], 'client'])
    assert X._with_break(T2, X.Q2_BUDGET) != sorted(CHOSEN)     # the exercise separates Algorithm 1 from a `break`
    assert ESCAPED and FLAGGED and R6[-1] > 1 > 1 / R6[-1]      # every panel question has a non-trivial answer today
    assert [d for d in D7] == [True, True, False, False, False]

def test_feedback_never_states_the_expected_answer():
    for eid, value, shown in (('crowd.q1', [0, 0, 0.1], '0.1,'), ('crowd.q4', [1, 1, 1], '2.25'), ('crowd.q6', ('overconfident', 2.0), f'{R6[-1]:.4g}')):
        fb = grade(eid, value)
        assert fb.status == 'wrong' and shown not in repr(fb), f'{eid}: {fb}'
    for ans in ([1], [1, 2, 3, 4], list(range(1, 31))):
        assert str(CHOSEN) not in repr(grade('crowd.q2', ans))

def test_module_grader_and_report_agree():
    assert X._q4(PHI4).status == grade('crowd.q4', PHI4).status == 'correct'
    assert lab_report('crowd').loc['crowd.q4', 'status'] == 'correct'
