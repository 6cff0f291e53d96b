"""Hostile inputs to the crowd, modelhet and clustering parts: each malformed call is refused by a `ValueError` or
`TypeError` that names the caller's argument, shows the value and says what is allowed; valid forms stay accepted."""
import numpy as np
import pandas as pd
import pytest
from hetfl_explore.clustering.profiles import check_ground, semantic_w1
from hetfl_explore.clustering.gpfl import cfl_bipartition, scores
from hetfl_explore.clustering.contribution import imbalance_descriptors, cohort_scores
from hetfl_explore.crowd.devices import tier_cost
from hetfl_explore.crowd.promethee import promethee, CRITERIA
from hetfl_explore.modelhet.mia import roc_curve, best_advantage, tpr_at_fpr

class Hostile:
    "An object every conversion of which raises."
    def _boom(self, *a, **k): raise RuntimeError('hostile')
    __array__ = __len__ = __iter__ = __getitem__ = __float__ = __index__ = _boom

GROUND = np.array([[0., 1.], [1., 0.]])
S, L = np.array([.1, .9, .4, .6]), np.array([0, 1, 0, 1])

@pytest.mark.parametrize('K,err', [(2.5, TypeError), (0, ValueError), (float('nan'), TypeError), ('2', TypeError)])
def test_check_ground_checks_K(K, err):
    with pytest.raises(err, match=r'\bK='): check_ground(GROUND, K)

def test_check_ground_names_the_callers_matrix():
    with pytest.raises(ValueError, match=r'^C has negative entries'): check_ground(-GROUND, 2)
    with pytest.raises(ValueError, match=r'^C has shape \(2, 2\): expected \(3, 3\)'): check_ground(GROUND, 3)
    with pytest.raises(ValueError, match=r'^ground has shape'): semantic_w1(np.array([.5, .25, .25]), np.array([.2, .3, .5]), GROUND)
    assert check_ground(GROUND, np.int64(2)).shape == (2, 2)

@pytest.mark.parametrize('bad', [None, 'ab', True, Hostile()])
def test_tier_cost_refuses_non_arrays_by_name(bad):
    with pytest.raises(TypeError, match=r'^hw_tier.*expected'): tier_cost(bad, np.array([0, 1]))
    with pytest.raises(TypeError, match=r'^net_tier.*expected'): tier_cost(np.array([0, 1]), bad)

def test_promethee_names_X_when_a_table_holds_text():
    X = pd.DataFrame([[1., 2., .5, 3.], [2., 1., .7, 1.]], columns=list(CRITERIA)).assign(H=['a', 'b'])
    with pytest.raises(TypeError, match=r'(?s)^X=.*expected an array of numbers'): promethee(X, np.full(4, .25))

@pytest.mark.parametrize('bad', [None, 'abc', Hostile(), [[1., 0.], [0., 1., 2.]], np.array([[np.nan, 0.], [0., 1.]])])
def test_cfl_bipartition_names_dW(bad):
    with pytest.raises((ValueError, TypeError), match=r'^dW'): cfl_bipartition(bad)

@pytest.mark.parametrize('bad', [Hostile(), [[0], [1, 1]]])
def test_scores_names_y(bad):
    with pytest.raises((ValueError, TypeError), match=r'^y'): scores(np.zeros((3, 2)), np.ones((4, 2)), bad)

@pytest.mark.parametrize('bad', [None, 'abc', Hostile(), np.array([[3., 1.5], [2., 2.]]), np.array([[3., -1.], [2., 2.]])])
def test_imbalance_descriptors_refuses_what_is_not_counts(bad):
    with pytest.raises((ValueError, TypeError), match=r'^counts'): imbalance_descriptors(bad)

@pytest.mark.parametrize('bad', [3, Hostile(), 'ab'])
def test_cohort_scores_shows_the_values_it_cannot_read(bad):
    with pytest.raises(TypeError, match=r'^values=.*expected'): cohort_scores({'a': [1, 2], 'b': [3]}, bad, 3)
    with pytest.raises(ValueError, match=r"^values=\{'a': 'x'.*expected one number"): cohort_scores({'a': [1, 2]}, {'a': 'x'}, 2)
    np.testing.assert_allclose(cohort_scores({'a': [1, 2], 'b': [3]}, pd.Series({'a': .5, 'b': .2}), 3), [.5, .5, .2])

def test_roc_curve_thresholds_are_finite_and_the_first_flags_no_one():
    fpr, tpr, thr = roc_curve(S, L)
    assert np.isfinite(thr).all() and not (S >= thr[0]).any() and (fpr[0], tpr[0]) == (0, 0)
    np.testing.assert_array_equal(thr[1:], np.sort(S)[::-1])

@pytest.mark.parametrize('fn', [roc_curve, best_advantage, tpr_at_fpr])
def test_mia_label_errors_show_the_bad_value(fn):
    with pytest.raises(ValueError, match=r'^labels: entry 3 = 2\.0 is not 0 or 1'): fn(S, [0, 1, 0, 2])
    with pytest.raises(ValueError, match=r'^labels: all 4 entries are 1; expected both'): fn(S, [1, 1, 1, 1])

def test_tpr_at_fpr_strict_resolution_is_a_bool():
    with pytest.raises(TypeError, match=r"^strict_resolution='no': expected"): tpr_at_fpr(S, L, 0.5, 'no')
    assert tpr_at_fpr(S, L, 0.5, np.bool_(False)) == 1.0 and np.isnan(tpr_at_fpr(S, L, 0.01))

def test_policy_parts_check_their_fields():
    from hetfl_explore.crowd.abac import Condition, Decision, Ref, Rule, PolicySyntaxError
    cond = Condition('subject.ram_gb', '>=', 4)
    with pytest.raises(TypeError, match=r'^name=3: expected'): Rule(3, 'permit', 'register', (cond,))
    with pytest.raises(ValueError, match=r"^effect='allow': expected one of"): Rule('r', 'allow', 'register', (cond,))
    with pytest.raises(TypeError, match=r'^conditions=.*expected'): Rule('r', 'permit', 'register', ('x',))
    with pytest.raises(ValueError, match=r'^line=-1: expected'): Rule('r', 'permit', 'register', (cond,), -1)
    with pytest.raises(TypeError, match=r'^name=3: expected'): Ref(3)
    with pytest.raises(TypeError, match=r'^trace=3: expected'): Decision(True, 'r', 'register', 3)
    with pytest.raises(TypeError, match=r'^text=3: expected'): Condition('subject.ram_gb', '>=', 4, text=3)
    with pytest.raises(ValueError, match=r'^column=0: expected'): PolicySyntaxError(1, 0, 'bad')
    assert PolicySyntaxError(2, 3, 'bad').column == 3 and Rule('r', 'deny', 'register', ()).effect == 'deny'

def test_race_table_needs_a_size_for_every_client_in_the_race():
    from hetfl_explore.crowd.baselines import race_table
    race = pd.DataFrame(dict(method=['a', 'a'], round=[0, 1], accuracy=[.5, .6], time=[1., 1.], money=[1., 1.],
                             selected=[[0, 3], [1, 2]], total_time=[1., 2.], total_money=[1., 2.]))
    with pytest.raises(ValueError, match=r'^n_samples has 2 sizes: expected one per client, at least 4'): race_table(race, [10, 20], 0.5)
    with pytest.raises(ValueError, match=r'^n_samples: entry \(0,\) = 10.5 is not an integer'): race_table(race, [10.5, 20, 30, 40], 0.5)
    assert race_table(race, [10, 20, 30, 40], 0.55).loc['a', 'unique samples'] == 100
