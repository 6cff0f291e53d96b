"""Every grader of `hetfl_explore.graders.clustering` against the lab's reference solution, equivalent forms of it, and
at least two typical wrong answers, asserting that the feedback names the mistake (and never prints the expected
value); the hand-computed cases pin the reference values to the source formulas."""
import numpy as np, pytest, torch
from scipy.stats import wasserstein_distance
from hetfl_explore.graders import grade, exercises, lab_report
from hetfl_explore.graders import clustering as K
from hetfl_explore.clustering.profiles import ordinal_w1, total_variation, naive_scipy_w1
from hetfl_explore.clustering.eccentricity import accepts

def w1_fixed(p, q): k = np.arange(len(p)); return wasserstein_distance(k, k, p, q)
def by_hand_mcl_step():
    A = K.q2_graph() + np.eye(4); M = A / A.sum(0); E = (M @ M) ** 2
    return E / E.sum(0)
STEP = by_hand_mcl_step()
SLIPS = dict((msg.split(':')[0][:25], S) for S, msg in K._q2_slips(K.q2_graph()))
COUNTS = K.mcl_cluster_counts('knn')
DRIFT = [K.first_rejected_drift(t) for t in K.THRESHOLDS]
SPLIT = K.cfl_first_split()
OFF = [w for c in SPLIT if 1 not in c for w in c]       # the workers CFL's first split separates from w1
MOVE = K.gpfl_first_move()
OPEN = ' '.join(keys[0] for keys in K.CLUSTERING_RUBRIC.values()) + ' ' + ' '.join(['word'] * 40)

# exercise: (reference answers in several equivalent forms, [(wrong answer, words the feedback must contain), ...])
CASES = {
 'clustering.q1': ([(0.4, 1.1), np.array([0.4, 1.1]), ['0.4', '1.1'], (torch.tensor(0.4), 1.1)],
                   [((0.8, 1.1), 'half of it'), ((0.4, 0.8), 'CUMULATIVE'), ((0.4, 0.4), 'equals TV'), ((0.4, 0.05), "SciPy's"),
                    ((1.1, 0.4), 'swapped'), ((0.3, 1.1), 'first part'), ((0.4,), 'pair')]),
 'clustering.q2': ([STEP, STEP.round(3).tolist(), torch.tensor(STEP)],
                   [(SLIPS[k], w) for k, w in zip(SLIPS, ('self-loops', 'ROWS', 'renormalise', 'inflated before', 'MATRIX power'))] +
                   [(np.full((4, 4), 0.5), 'does not sum to 1'), (STEP[:, [0, 1, 3, 2]], 'column 2'), (np.eye(3), '4 × 4')]),
 'clustering.q3': ([COUNTS, np.array(COUNTS), tuple(float(c) for c in COUNTS)],
                   [(COUNTS[::-1], 'reversed'), ([1, 1, 1, 1], 'dense graph'), (K.mcl_cluster_counts('eps'), 'eps graph'),
                    (COUNTS[:3], 'expected 4 counts'), ([2.5] * 4, 'whole numbers'), (COUNTS[:3] + [COUNTS[3] + 1], 'inflation 3.0')]),
 'clustering.q4': ([w1_fixed, ordinal_w1, lambda p, q: float(np.abs(np.cumsum(p) - np.cumsum(q)).sum())],
                   [(wasserstein_distance, 'VALUES'), (total_variation, 'TV'), (lambda p, q: np.abs(p - q).sum(), 'class by class'),
                    (lambda p, q: ordinal_w1(p, q) / (len(p) - 1), 'differs from'), (lambda p, q: 'far', 'one number'),
                    (lambda p, q: 1 / 0, 'ZeroDivisionError'), (3, 'expected a function')]),
 'clustering.q5': ([lambda xi, n, m: accepts(xi, n, m, 'autocloud'), lambda xi, n, m=3: np.bool_(xi / 2 <= (m ** 2 + 1) / (2 * n))],
                   [(lambda xi, n, m: xi < (m ** 2 + 1) / (2 * n), 'as printed'), (lambda xi, n, m: 2 * xi <= (m ** 2 + 1) / (2 * n), 'doubled'),
                    (lambda xi, n, m: xi / 2 > (m ** 2 + 1) / (2 * n), 'inverted'), (lambda xi, n, m: xi / 2 <= (m + 1) / (2 * n), 'm² + 1'),
                    (lambda xi, n, m: xi / 2 <= (m ** 2 + 1) / 2, 'wrong decision'), (lambda xi, n, m: 1, 'True or False')]),
 'clustering.q6': ([DRIFT, tuple(DRIFT), np.array(DRIFT) + 0.004],
                   [(DRIFT[::-1], 'swapped'), ([d - 0.05 for d in DRIFT], 'ACCEPTED'), ((K.first_rejected_drift('literal', 'include'), DRIFT[1]), "'include'"),
                    ((DRIFT[0], 0.9), 'second (autocloud)'), ((DRIFT[0],), 'pair')]),
 'clustering.q7': ([OFF, [f'w{w}' for w in OFF], np.array(OFF[::-1]), set(OFF)],
                   [([w - 1 for w in OFF], '0-based'), ([1] + [w for w in range(2, 16) if w not in OFF], 'contains w1'),
                    (list(range(1, 16)), 'all the workers'), (OFF[:-1], 'not the workers'), ('many', 'expected the worker ids')]),
 'clustering.q8': ([MOVE, (f'w{MOVE[0]}', *MOVE[1:]), np.array(MOVE), [float(v) for v in MOVE]],
                   [((MOVE[0] - 1, *MOVE[1:]), 'numbers workers from w1'), ((MOVE[0], MOVE[1] + 1, MOVE[2] - 1), 'moves again'),
                    ((*MOVE[:2], MOVE[2] - 1), 'third part'), ((MOVE[0] + 1, *MOVE[1:]), 'first part (worker)'), (MOVE[:2], 'three parts')]),
 'clustering.q9': ([OPEN], [('GP-FL, obviously', 'too short'), (' '.join(['the model is trained'] * 12), 'not found'), (42, 'string')]),
}

def test_every_exercise_has_cases():
    "The generic tests of every grader run in tests/test_graders.py over these CASES."
    assert sorted(CASES) == sorted(exercises('clustering')) and len(CASES) >= 8


def test_feedback_never_states_the_expected_value():
    for eid, ans, shown in (('clustering.q1', (0.3, 0.9), '1.1'), ('clustering.q3', [9, 9, 9, 9], str(COUNTS)),
                            ('clustering.q6', (0.5, 0.6), str(DRIFT[1])), ('clustering.q7', [2, 3], str(OFF[0])),
                            ('clustering.q8', (3, 2, 2), str(MOVE[1]))):
        fb = grade(eid, ans)
        assert fb.status == 'wrong' and shown not in repr(fb), f'{eid}: {fb}'

def test_hand_computed_references():
    "q1: TV = (0.4 + 0 + 0.1 + 0.3) / 2 and ordinal W1 = |0.5-0.1| + |0.7-0.3| + |0.9-0.6|; q2: the library step equals the by-hand step."
    assert total_variation(K.P1, K.Q1) == pytest.approx(0.4) and ordinal_w1(K.P1, K.Q1) == pytest.approx(1.1)
    assert naive_scipy_w1(*K.PITFALL) == 0 and ordinal_w1(*K.PITFALL) == pytest.approx(1.8)
    np.testing.assert_allclose(K.mcl_one_step(K.q2_graph()), STEP, atol=1e-12)
    np.testing.assert_allclose(STEP.sum(0), 1)

def test_slips_are_distinct_from_the_reference_and_each_other():
    mats = [STEP] + list(SLIPS.values())
    for i in range(len(mats)):
        for j in range(i + 1, len(mats)): assert not np.allclose(mats[i], mats[j], atol=K.MATRIX_TOL), (i, j)

def test_threshold_grid_separates_the_rules():
    "On the grid, the printed test (a 2σ radius for m = 3) accepts strictly fewer points than AutoCloud's (mσ)."
    g = K.threshold_grid()
    printed, auto = [accepts(*x) for x in g], [accepts(*x, 'autocloud') for x in g]
    assert all(a or not p for p, a in zip(printed, auto)) and sum(auto) > sum(printed)

def test_what_the_lab_asserts_in_prose():
    "Counts grow with inflation on the k-NN graph, the dense graph stays at one cluster, the printed threshold rejects first, AutoCloud with inclusion never rejects."
    assert COUNTS == sorted(COUNTS) and COUNTS[-1] > COUNTS[0] and K.mcl_cluster_counts('dense') == [1] * len(K.Q3_INFLATIONS)
    assert DRIFT[0] < DRIFT[1] and K.first_rejected_drift('autocloud', 'include') is None
    assert len(SPLIT) == 2 and 1 not in OFF and MOVE[0] == 1

def test_lab_report_lists_the_clustering_exercises():
    grade('clustering.q1', (0.4, 1.1))
    rep = lab_report('clustering')
    assert list(rep.index) == [f'clustering.q{i}' for i in range(1, 10)] and rep.loc['clustering.q1', 'status'] == 'correct'
