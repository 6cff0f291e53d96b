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
    __array__ = __len__ = __iter__ = __getitem__ = __float__ = __index__ = __bool__ = _boom
    def __repr__(self): return "Hostile()"

GROUND = np.array([[0., 1.], [1., 0.]])
S, L = np.array([.1, .9, .4, .6]), np.array([0, 1, 0, 1])

@pytest.mark.parametrize('K,err', [(2.5, TypeError), (0, ValueError), (float('nan'), TypeError), ('2', TypeError)])
def test_check_ground_checks_K(K, err):
    with pytest.raises(err, match=r'\bK='): check_ground(GROUND, K)

def test_check_ground_names_the_callers_matrix():
    with pytest.raises(ValueError, match=r'^C has negative entries'): check_ground(-GROUND, 2)
    with pytest.raises(ValueError, match=r'^C has shape \(2, 2\): expected \(3, 3\)'): check_ground(GROUND, 3)
    with pytest.raises(ValueError, match=r'^ground has shape'): semantic_w1(np.array([.5, .25, .25]),
                                                                            np.array([.2, .3, .5]), GROUND)
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

@pytest.mark.parametrize('bad',
                         [None, 'abc', Hostile(), np.array([[3., 1.5], [2., 2.]]), np.array([[3., -1.], [2., 2.]])])
def test_imbalance_descriptors_refuses_what_is_not_counts(bad):
    with pytest.raises((ValueError, TypeError), match=r'^counts'): imbalance_descriptors(bad)

@pytest.mark.parametrize('bad', [3, Hostile(), 'ab'])
def test_cohort_scores_shows_the_values_it_cannot_read(bad):
    with pytest.raises(TypeError, match=r'^values=.*expected'): cohort_scores({'a': [1, 2], 'b': [3]}, bad, 3)
    with pytest.raises(ValueError,
                       match=r"^values=\{'a': 'x'.*expected one number"): cohort_scores({'a': [1, 2]}, {'a': 'x'}, 2)
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
    with pytest.raises(ValueError, match=r'^n_samples has 2 sizes: expected one per client, at least 4'):
        race_table(race, [10, 20], 0.5)
    with pytest.raises(ValueError, match=r'^n_samples: entry \(0,\) = 10.5 is not an integer'):
        race_table(race, [10.5, 20, 30, 40], 0.5)
    assert race_table(race, [10, 20, 30, 40], 0.55).loc['a', 'unique samples'] == 100

@pytest.fixture(scope='module')
def stream():
    from hetfl_explore.clustering.data import from_client_arrays
    g = np.random.default_rng(0)
    return from_client_arrays('toy', [g.normal(size=(12, 2)) + i for i in range(4)], [np.arange(12) % 2] * 4, 2,
                              rounds=2, seed=0)

def test_fedstream_checks_groups_and_the_test_pair(stream):
    from dataclasses import replace
    with pytest.raises(ValueError, match=r'^groups: entry \(0, 0\) = nan'): replace(stream,
                                                                                    groups=np.full((3, 4), np.nan))
    with pytest.raises(ValueError,
                       match=r'^groups has shape \(3, 3\): expected \(3, 4\)'): replace(stream, groups=np.zeros((3, 3)))
    with pytest.raises(TypeError, match=r'^server_test=3: expected an \(X, y\) pair'): replace(stream, server_test=3)

def test_clustering_runs_name_their_arguments(stream):
    from hetfl_explore.clustering.contribution import fedavg_on_clients
    from hetfl_explore.clustering.cafl import silhouette_relocate
    from hetfl_explore.clustering.eccentricity import eccentricity_reassign
    with pytest.raises(TypeError, match=r'^train=Hostile'): fedavg_on_clients(stream, [0, 1], 1, train=Hostile())
    D = np.array([[0., 1., 4.], [1., 0., 4.], [4., 4., 0.]])
    with pytest.raises(TypeError, match=r'^reps'): silhouette_relocate(D, [0, 0, 1], Hostile())
    P = np.array([[.8, .2], [.7, .3], [.2, .8]])
    with pytest.raises(ValueError,
                       match=r'^var_floor=nan: expected'): eccentricity_reassign(P, P, [0, 0, 1],
                                                                                 var_floor=float('nan'))

def test_clustering_loaders_check_their_options(tmp_path):
    import json
    from hetfl_explore.clustering.data import load_leaf_json, load_realworld
    leaf = {'users': ['u0'], 'num_samples': [3], 'user_data': {'u0': {'x': [[1, 2]] * 3, 'y': [0, 1, 0]}}}
    (tmp_path / 'train.json').write_text(json.dumps(leaf))
    with pytest.raises(ValueError, match=r'^n_classes=0: expected'): load_leaf_json(tmp_path / 'train.json',
                                                                                    n_classes=0)
    with pytest.raises(ValueError,
                       match=r"^position='elbow': expected one of 'chest'"): load_realworld(tmp_path, position='elbow')

def test_crowd_runs_name_their_arguments():
    import torch
    from hetfl_explore.crowd.bayesian import run_bayesfl, run_bayesfl_engine, forward, bayes_mlp, conjugate_rounds
    from hetfl_explore.crowd.fedondemand import preliminary_training, cohort_for_samples
    from hetfl_explore.crowd.devices import DevicePool
    from hetfl_explore.engine.config import RunConfig
    with pytest.raises(TypeError, match=r'^fd=3: expected an instance of FederatedData'): run_bayesfl(3)
    with pytest.raises(TypeError, match=r'^fd=3: expected an instance of FederatedData'): run_bayesfl_engine(3)
    with pytest.raises(ValueError, match=r'^x: expected finite'): forward(bayes_mlp(4, 3, 5),
                                                                          torch.full((2, 4), float('nan')))
    with pytest.raises(ValueError, match=r'^mu0=nan: expected'): conjugate_rounds([torch.ones(3, 2)], [torch.ones(3)],
                                                                                  1.0, mu0=float('nan'))
    with pytest.raises(TypeError, match=r'^data=3: expected'): preliminary_training(lambda: None, 3, [0], RunConfig())
    with pytest.raises(ValueError, match=r'^n_samples: entry \(0,\) = 10.5 is not an integer'):
        cohort_for_samples([0, 1], [10.5, 20], 15)
    with pytest.raises(ValueError, match=r'^availability=1.5: expected probabilities'):
        DevicePool(np.array([0, 1]), np.array([0, 1]), availability=1.5)

def test_authenticated_parts_name_their_arguments():
    from hetfl_explore.crowd.pki import CertificateAuthority
    from hetfl_explore.crowd.authenticated import AuthenticatedServer, run_authenticated
    from hetfl_explore.foundation.data import tiny_digits_federation
    with pytest.raises(TypeError, match=r'^resource=Hostile'): AuthenticatedServer(CertificateAuthority(), 't',
                                                                                   resource=Hostile())
    fd = tiny_digits_federation(num_clients=2, min_size=10, n_test=20)
    with pytest.raises(TypeError,
                       match=r'^server=3: expected an instance of AuthenticatedServer'): run_authenticated(fd, 3, {})

def test_aggregate_submodels_takes_weights_as_a_tensor():
    import torch
    from hetfl_explore.modelhet.submodels import WidthCNN, hidden_sizes, full_set, aggregate_submodels
    gs = WidthCNN(u=2, in_channels=1, n_classes=10).state_dict(); full = full_set(hidden_sizes(2))
    a = aggregate_submodels(gs, [gs, gs], [full, full], torch.tensor([1., 2.]))
    b = aggregate_submodels(gs, [gs, gs], [full, full], [1., 2.])
    assert all(torch.equal(a[k], b[k]) for k in a)

def test_submodel_runs_name_their_data_and_run():
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.modelhet.submodels import run_submodels, submodel_client_accuracies
    from hetfl_explore.modelhet.experiments import attack_clients
    fd = tiny_digits_federation(num_clients=3, min_size=10, n_test=40)
    with pytest.raises(TypeError, match=r'^data=3: expected an instance of FederatedData'):
        run_submodels('OFM', 3, 1, RunConfig(rounds=1, device='cpu'), u=2)
    run = run_submodels('OFM', fd, 1, RunConfig(rounds=1, batch_size=16, device='cpu'), u=2)
    assert submodel_client_accuracies(run, fd).shape == (3,)
    with pytest.raises(TypeError, match=r'^data=3: expected an instance of FederatedData'):
        submodel_client_accuracies(run, 3)
    with pytest.raises(TypeError, match=r'^run=3: expected a SubmodelRun'): attack_clients(3, fd)
