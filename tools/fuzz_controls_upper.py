"""Fuzz controls of the upper parts of the package: `crowd`, `modelhet` and `clustering` (read by `tools/fuzz.py`).

Every public callable of these parts has a valid control call here; each argument carries the kind that says what it
is (a count, a probability, linked arrays, a choice, an object), so the fuzz mutates it as such."""
from __future__ import annotations
import dataclasses
import numpy as np

# documented valid inputs of one argument: {(entry, argument): {mutant names}}
VALID_MUTANTS = {
    ('model_scores', 'y'): {'empty'},   # an empty test batch scores NaN (a worker without test data)
    ('Condition', 'left'): {'str subclass'},   # read with str's own methods: its characters are a valid attribute name
    ('param_index', 'name'): {'str subclass'},   # a regular expression reads its characters: a valid state-dict key
    **{(f, t): {'list'} for f in ('promethee', 'flows_as_printed') for t in 'qp'},   # a threshold per criterion
    ('sign_update', 'update'): {'ragged'},   # a list of parts of any lengths, as serialise takes
    ('attack_exchange', 'attackers'): {'empty'}, ('flip_labels', 'clients'): {'empty'},   # no attacker: an honest run
    ('forward', 'x'): {'empty'},   # no rows: no outputs
    ('disjoint_pool', 'x_exclude'): {'empty'},   # nothing to exclude: the whole pool
    ('silhouette_relocate', 'reps'): {'empty'},   # no representative to re-check: the labels come back as they are
    **{(f, 'rounds'): {'None'} for f in ('fedavg_on_clients', 'drop_unstable_curves', 'group_curves')},   # every round
    # without a model the class count is unknown: any non-negative integer label is a class
    **{k: {'label past the end'} for k in (('MIASplit', 'y'), ('MIASplit', 'y_known'), ('disjoint_pool', 'y_pool'),
                                           ('mia_split', 'y_members'), ('mia_split', 'y_pool'),
                                           ('lira_population', 'y_pool'), ('train_shadows', 'y_pool'))},
    # a SignedUpdate is a message as it arrived: any field may be junk; AuthenticatedServer.reason refuses it
    **{('SignedUpdate', f): {'int', 'hostile'}
       for f in ('task_id', 'round', 'client_id', 'payload', 'nonce', 'signature', 'certificate')},
}
# entry points whose valid results hold NaN/inf by design: {entry: why}
_TPR_NAN = ('TPR at a false-positive rate needs at least 1/FPR non-members; with fewer it is NaN (unresolved), '
            'as documented')
NONFINITE_OK = {'model_scores': 'a worker without test data this round scores NaN (undefined), not 0',
                'tpr_at_fpr': _TPR_NAN, 'attack_metrics': _TPR_NAN, 'metrics_table': _TPR_NAN,
                'attack_clients': _TPR_NAN,
                'run_modelhet': _TPR_NAN + "; a global-model row has no client accuracy (NaN)",
                'race_table': 'a method that never reaches the target accuracy has no time-to-accuracy (NaN)',
                'check_frame': 'it returns the table it checks unchanged (the thesis tables print a dash, NaN, where a '
                               'run never reached the target)'}


def _known_defect_controls() -> dict:
    "Controls of the entry points whose malformed inputs were once answered unclearly or accepted."
    K = np.array([[0., 1.], [1., 0.]])
    X = np.array([[1., 2., .5, 3.], [2., 1., .7, 1.], [1.5, 1.5, .2, 2.]]); w = np.full(4, .25)
    s, lab = np.array([.1, .9, .4, .6]), np.array([0, 1, 0, 1])
    return {
     'clustering.profiles': [('check_ground', dict(C=(K, 'nonneg_array'), K=(2, 'size')))],
     'crowd.devices': [('tier_cost',
                        dict(hw_tier=(np.array([0, 1, 2]), 'ids'), net_tier=(np.array([1, 0, 2]), 'ids')))],
     'crowd.promethee': [('promethee',
                          dict(X=(X, 'array'), weights=(w, 'nonneg_linked'), q=(0.05, 'nonneg'), p=(0.5, 'pos'),
                                            method=('sorted', 'choice'), normalise=True)),
                         ('flows_as_printed',
                          dict(X=(X, 'array'), weights=(w, 'nonneg_linked'), q=(0.05, 'nonneg'), p=(0.5, 'pos')))],
     'clustering.gpfl': [('cfl_bipartition', dict(dW=(np.array([[1., 0.], [0., 1.], [1., .1]]), 'array'))),
                         ('scores', dict(theta=(np.zeros((3, 2)), 'array'), X=(np.ones((4, 2)), 'array'),
                                         y=(np.array([0, 1, 1, 0]), 'labels')))],
     'clustering.contribution': [('imbalance_descriptors', dict(counts=(np.array([[3., 1.], [2., 2.]]), 'counts'))),
                                 ('cohort_scores',
                                  dict(members=({'a': [1, 2], 'b': [3]}, 'obj'), values=({'a': .5, 'b': .2}, 'obj'),
                                                        n=(3, 'size')))],
     'modelhet.mia': [('roc_curve', dict(scores=(s, 'array'), labels=(lab, 'labels'))),
                      ('best_advantage', dict(scores=(s, 'array'), labels=(lab, 'labels'))),
                      ('tpr_at_fpr',
                       dict(scores=(s, 'array'), labels=(lab, 'labels'), fpr=(0.5, 'unit'), strict_resolution=False))],
    }


def _stream(n_clients:int=4, rounds:int=2):
    "A small fixed-data FedStream: `n_clients` Gaussian clients, two classes."
    from hetfl_explore.clustering.data import from_client_arrays
    g = np.random.default_rng(0)
    Xs = [g.normal(size=(12, 2)) + i for i in range(n_clients)]
    return from_client_arrays('toy', Xs, [np.arange(12) % 2] * n_clients, 2, rounds=rounds, seed=0)


def _loader_files() -> dict:
    "Tiny files in the loaders' formats (LEAF json, an HHAR csv, a RealWorld folder, FEMNIST), in a temporary folder."
    import json, tempfile, pathlib
    import pandas as pd
    root, g = pathlib.Path(tempfile.mkdtemp(prefix='fuzz-upper-')), np.random.default_rng(0)
    leaf = {'users': ['u0', 'u1'], 'num_samples': [3, 3],
            'user_data': {'u0': {'x': [[1, 2]] * 3, 'y': [0, 1, 0]}, 'u1': {'x': [[3, 4]] * 3, 'y': [2, 2, 1]}}}
    (root / 'train.json').write_text(json.dumps(leaf))
    rows = [(i, 0, i, *g.normal(size=3), 'a', 'nexus4', 'nexus4_1', 'walk' if i < 100 else 'sit') for i in range(200)]
    pd.DataFrame(rows,
                 columns='Index Arrival_Time Creation_Time x y z User Model Device gt'.split()).to_csv(root / 'h.csv',
                                                                                                        index=False)
    (root / 'rw/proband3/data').mkdir(parents=True)
    pd.DataFrame({'id': range(120), 'attr_time': range(120), 'attr_x': g.normal(size=120), 'attr_y': 0.0,
                  'attr_z': 1.0}).to_csv(
        root / 'rw/proband3/data/acc_running_chest.csv', index=False)
    for split in ('train', 'test'):
        (root / 'femnist' / split).mkdir(parents=True)
        users = {f'w{i}': {'x': g.random((3, 784)).round(2).tolist(), 'y': [i % 3, 1, 2]} for i in range(4)}
        (root / 'femnist' / split / 'a.json').write_text(json.dumps({'users': list(users), 'user_data': users}))
    return dict(leaf=root / 'train.json', hhar=root / 'h.csv', realworld=root / 'rw', femnist=str(root / 'femnist'))


def _clustering_controls(files:dict) -> dict:
    "Controls of the clustering algorithms, studies and loaders on a four-client stream."
    from hetfl_explore.clustering.gpfl import FLRun, STREAM_TRAIN, FedAvg, lr_init, GPFL, CFL
    from hetfl_explore.clustering.cafl import CAFL
    s = _stream()
    D = np.array([[0., 1., 4., 4.], [1., 0., 4., 4.], [4., 4., 0., 1.], [4., 4., 1., 0.]])
    P = np.array([[.8, .2], [.7, .3], [.2, .8], [.3, .7]])
    th = lr_init(2, 2); tc = dataclasses.replace(STREAM_TRAIN, local_epochs=1, batch_size=4)
    sim = FedAvg().simulation(s, 1, 0)
    Xt, yt = s.server_test[0][:4], s.server_test[1][:4]
    return {
     'clustering.cafl': [('comm_tradeoff',
                          dict(data=(s, 'obj'), methods=({'fedavg': FedAvg()}, 'obj'), rounds=(1, 'size'),
                               seed=(0, 'count'))),
                         ('RepresentativeSelector', dict(algo=(CAFL(k=2), 'obj'))),
                         ('silhouette_relocate',
                          dict(D=(D, 'nonneg_array'), labels=(np.array([0, 0, 1, 1]), 'cluster_labels'),
                                                      reps=(np.array([0, 2]), 'unique_ids'), s_min=(0.0, 'real')))],
     'clustering.data': [('FedStream', dict(name=('toy', 'obj'), n_clients=(s.n_clients, 'size'), n_classes=(2, 'size'),
                                            n_features=(2, 'size'), rounds=(2,
                                                                            'count'), sampler=(s.sampler, 'callable'),
                                            groups=(s.groups,
                                                    'cluster_labels'), server_test=(s.server_test,
                                                                                    'obj'), seed=(0, 'count'))),
                         ('load_hhar', dict(path=(files['hhar'], 'obj'), window=(50, 'size'))),
                         ('load_leaf_json', dict(path=(files['leaf'], 'obj'), n_classes=(3, 'size'))),
                         ('load_realworld',
                          dict(path=(files['realworld'], 'obj'), position=('chest', 'choice'), window=(50, 'size')))],
     'clustering.eccentricity': [('eccentricity_reassign', dict(P_new=(P, 'nonneg_array'), P_old=(P, 'nonneg_linked'),
                                                                labels=(np.array([0, 0, 1, 1]),
                                                                        'cluster_labels'), m=(3.0, 'pos'),
                                                                threshold=('literal',
                                                                           'choice'), mode=('frozen', 'choice'),
                                                                var_floor=(1e-3, 'pos')))],
     'clustering.gpfl': [('FLRun', dict(name=('toy', 'obj'))),
                         ('model_scores', dict(net=(sim.net, 'obj'), params=(sim.params, 'obj'), X=(Xt, 'array'),
                                               y=(yt, 'labels'))),
                         ('stream_record', dict(history=(FedAvg().run(s, 1, 0).history, 'obj'))),
                         ('softmax_regression', dict(n_features=(2, 'size'), n_classes=(2, 'size'))),
                         ('StreamAlgorithm', dict(train=(tc, 'obj'))),
                         ('RecordedGrouping', dict(n_groups=(1, 'size'))),
                         ('GPFLGroups', dict(algo=(GPFL(), 'obj'))),
                         ('CFLGroups', dict(algo=(CFL(), 'obj'))),
                         ('gpfl_start', dict(algo=(GPFL(), 'obj'), counts=(np.array([[3, 1], [1, 3], [2, 2]]), 'obj'))),
                         ('gpfl_regroup', dict(algo=(GPFL(), 'obj'), P=(P, 'nonneg_array'),
                                               labels=(np.array([0, 0, 1, 1]), 'cluster_labels'),
                                               counts=(np.array([[3, 1], [3, 1], [1, 3], [1, 3]]), 'obj'))),
                         ('cfl_step', dict(dW=(np.array([[1., 0.], [0., 1.], [1., .1]]), 'array'),
                                           sizes=(np.array([1., 2., 3.]), 'nonneg_linked'), t=(0, 'count'),
                                           eps1=(0.4, 'nonneg'), eps2=(1.6, 'nonneg'), warmup=(0, 'count'))),
                         ('server_accuracy', dict(theta=(th, 'array'), data=(s, 'obj')))],
    }


def _contribution_controls() -> dict:
    "Controls of the contribution experiments (engine runs of a softmax regression) on a four-client stream."
    from types import SimpleNamespace
    from hetfl_explore.engine.config import RunConfig
    s, rc = _stream(), RunConfig(batch_size=4, loss_before='off', device='cpu')
    run = SimpleNamespace(freq=np.array([1., 0., 2., 1.]), recur=None)   # any run record with `freq` or `recur`
    scores = (np.array([.1, .5, .2, .9]), 'linked_array')
    return {
     'clustering.contribution': [
        ('ClientSubset', dict(clients=(np.array([0, 2]), 'unique_ids'))),
        ('contribution_study',
         dict(data=(s, 'obj'), rounds=(1, 'size'), seed=(0, 'count'), k=(2, 'size'), cohorts=(2, 'size'))),
        ('deletion_influence', dict(data=(s, 'obj'), rounds=(1, 'size'), mode=('per_round', 'choice'),
                                    dist=('tv', 'choice'), seed=(0, 'count'), train=(rc, 'obj'))),
        ('drop_unstable_curves', dict(data=(s, 'obj'), instability=scores, n_drop=(1, 'count'), rounds=(1, 'size'),
                                      seed=(0, 'count'), train=(rc, 'obj'))),
        ('fedavg_on_clients', dict(data=(s, 'obj'), clients=(np.array([0, 2]), 'unique_ids'), rounds=(1, 'size'),
                                   seed=(0, 'count'), train=(rc, 'obj'))),
        ('fl_cohort', dict(data=(s, 'obj'), k=(2, 'size'), rounds=(1, 'size'), seed=(0, 'count'), train=(rc, 'obj'))),
        ('group_curves', dict(data=(s, 'obj'), scores=scores, edges=(np.array([.3]), 'array'), rounds=(1, 'size'),
                              seed=(0, 'count'), train=(rc, 'obj'))),
        ('training_scores', dict(run=(run, 'obj'), count_initial=False))],
    }


def _crowd_identity(ca, name:str, attributes:dict):
    "A device's key and certificate enrolled at `ca`."
    from hetfl_explore.crowd.pki import new_key, make_csr
    key = new_key()
    return key, ca.enrol(make_csr(key, name, attributes), now=T0())[0]


def T0():
    "The fixed time of the PKI controls."
    from datetime import datetime, timezone
    return datetime(2026, 3, 1, tzinfo=timezone.utc)

GOOD = dict(ram_gb=6, disk_gb=20, full_disk_encryption=True, protocols=['TLS'], encryption=['AES-256'], trust=0.9,
            os_patch_age_days=[0])   # device attributes the example policy permits


def _crowd_trust_controls() -> dict:
    "Controls of the ABAC policy engine, the PKI and the authenticated server."
    import torch
    from datetime import timedelta
    from hetfl_explore.crowd.abac import parse_policy, EXAMPLE_POLICY, Condition
    from hetfl_explore.crowd.pki import CertificateAuthority, new_key, make_csr, sign_update, serialise, seal
    from hetfl_explore.crowd.authenticated import AuthenticatedServer
    from hetfl_explore.foundation.data import tiny_digits_federation
    pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0())
    fd = tiny_digits_federation(num_clients=3, min_size=10, n_test=40)
    ids = {c: _crowd_identity(ca, f'c{c}', GOOD) for c in range(3)}
    srv = AuthenticatedServer(ca, 'task', pol, dict(min_trust=0.8))
    key, cert = ids[0]; csr = make_csr(key, 'c0', GOOD)
    up = sign_update(key, cert, 'task', 1, torch.ones(3), nonce=bytes(16))
    cond = Condition('subject.ram_gb', '>=', 4)
    k32 = bytes(range(32)); blob = seal(k32, b'update', b'aad')
    return {
     'crowd.abac': [('Condition',
                     dict(left=('subject.ram_gb', 'choice'), op=('>=', 'choice'), right=4, forall=False,
                          text=('', 'obj'))),
                    ('Decision',
                     dict(permit=True, decided_by=('r', 'obj'), action=('register', 'obj'), trace=([], 'obj'))),
                    ('PolicySyntaxError', dict(line=(1, 'size'), column=(1, 'size'), message=('bad', 'obj'))),
                    ('Ref', dict(name=('subject.ram_gb', 'obj'))),
                    ('Request',
                     dict(subject=(GOOD, 'obj'), action=('register', 'obj'), resource=({}, 'obj'),
                          environment=({}, 'obj'))),
                    ('Rule',
                     dict(name=('r', 'obj'), effect=('permit', 'choice'), action=('register', 'obj'),
                          conditions=((cond,), 'obj'),
                                  line=(1, 'count'))),
                    ('client_name', dict(c=(3, 'count'))),
                    ('parse_policy', dict(text=(EXAMPLE_POLICY, 'obj')))],
     'crowd.pki': [('SignedUpdate',
                    dict(task_id=('task', 'obj'), round=(1, 'obj'), client_id=('c0', 'obj'),
                         payload=(up.payload, 'obj'),
                                         nonce=(up.nonce, 'obj'), signature=(up.signature,
                                                                             'obj'), certificate=(cert, 'obj'))),
                   ('attributes_of', dict(obj=(cert, 'obj'))), ('client_id_of', dict(obj=(csr, 'obj'))),
                   ('aware_now', dict(now=(T0(), 'obj'))),
                   ('certificate_problem',
                    dict(cert=(cert, 'obj'), ca_cert=(ca.cert, 'obj'), crl=(ca.crl(now=T0()), 'obj'),
                                              now=(T0(), 'obj'))),
                   ('make_csr', dict(key=(key, 'obj'), client_id=('c9', 'obj'), attributes=(GOOD, 'obj'))),
                   ('session_key',
                    dict(own=(new_key(), 'obj'), peer=(new_key().public_key(), 'obj'), context=(b'ctx', 'obj'))),
                   ('sign_update',
                    dict(key=(key, 'obj'), certificate=(cert, 'obj'), task_id=('task', 'obj'), round=(1, 'count'),
                                        update=(torch.ones(3), 'array'), nonce=(bytes(16), 'obj'))),
                   ('unseal', dict(key=(k32, 'obj'), blob=(blob, 'obj'), aad=(b'aad', 'obj'))),
                   ('verify_update', dict(u=(up, 'obj')))],
     'crowd.authenticated': [
        ('AuthenticatedServer',
         dict(ca=(ca, 'obj'), task_id=('task', 'obj'), policy=(pol, 'obj'), resource=({'min_trust': .8}, 'obj'),
                                     action=('participate', 'obj'))),
        ('authenticated_filter', dict(server=(srv, 'obj'), identities=(ids, 'obj'), intercept=None, start=(T0(), 'obj'),
                                      round_interval=(timedelta(minutes=1), 'obj'))),
        ('deserialise', dict(payload=(serialise((torch.ones(2), torch.ones(2))), 'obj'))),
        ('run_authenticated', dict(fd=(fd, 'obj'), server=(srv, 'obj'), identities=(ids, 'obj'), start=(T0(), 'obj'),
                                   round_interval=(timedelta(minutes=1),
                                                   'obj'), rounds=1, clients_per_round=2, hidden=2, seed=0))],
    }


def _crowd_learning_controls() -> dict:
    "Controls of the crowd's selection baselines, Bayesian FL, on-demand FL, robust rules and Shapley values."
    import torch
    from hetfl_explore.crowd.devices import DevicePool, TaskRequirements
    from hetfl_explore.crowd.baselines import PriceFirst, selection_race
    from hetfl_explore.crowd.bayesian import bayes_mlp
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector
    from hetfl_explore.foundation.data import tiny_digits_federation
    import pandas as pd
    fd = tiny_digits_federation(num_clients=4, min_size=10, n_test=40)
    pool = DevicePool.sample(4)
    cfg = RunConfig(rounds=1, clients_per_round=2, batch_size=8, device='cpu')
    race = selection_race([PriceFirst(pool, 15.0)], pool, fd, lambda: mlp(64, 4), cfg)
    bm = bayes_mlp(4, 3, 5); g = torch.Generator().manual_seed(0)
    x, y = torch.randn(6, 4, generator=g), torch.tensor([0, 1, 2, 0, 1, 2])
    n_par = sum(p.numel() for p in bm.parameters()) // 2   # means and scales: one of each per weight
    mu, var = torch.zeros(n_par), torch.ones(n_par)
    Xs, ys = [torch.ones(3, 2), torch.eye(3, 2)], [torch.ones(3), torch.zeros(3)]
    u = lambda s: float(len(s))
    return {
     'crowd.baselines': [('Budgeted', dict(inner=(UniformSelector(), 'obj'), pool=(pool, 'obj'), budget=(5.0, 'pos'))),
                         ('RaceClock',
                          dict(pool=(pool, 'obj'), flops_per_sample=(1e5, 'pos'), n_bytes=(1e4, 'nonneg'),
                               mode=('max', 'choice'))),
                         ('race_figure', dict(race=(race, 'obj'), target=(0.55, 'prob'))),
                         ('race_table',
                          dict(race=(race, 'obj'), n_samples=(np.array([10, 20, 30, 40]), 'counts'),
                               target=(0.55, 'prob'))),
                         ('selection_race',
                          dict(selectors=([PriceFirst(pool, 15.0)], 'obj'), pool=(pool, 'obj'), data=(fd, 'obj'),
                                                 model_fn=(lambda: mlp(64, 4),
                                                           'callable'), config=(cfg, 'obj'), mode=('max', 'choice')))],
     'crowd.bayesian': [
        ('MeanFieldLinear',
         dict(in_features=(3, 'size'), out_features=(2, 'size'), prior_var=(1.0, 'pos'), rho_init=(-5.0, 'real'))),
        ('conjugate_rounds',
         dict(Xs=(Xs, 'obj'), ys=(ys, 'obj'), noise_var=(1.0, 'pos'), mode=('poe', 'choice'), prior=('fixed', 'choice'),
                                  rounds=(2, 'size'), mu0=(0.0, 'real'), var0=(1.0, 'pos'))),
        ('elbo_loss', dict(model=(bm, 'obj'), likelihood=('categorical', 'choice'), noise_var=(1.0, 'pos'))),
        ('forward', dict(model=(bm, 'obj'), x=(x, 'tensor'), sample=True)),
        ('get_posterior', dict(model=(bm, 'obj'))),
        ('posterior_rule',
         dict(model=(bm, 'obj'), mode=('poe', 'choice'), prior_var=(1.0, 'pos'), rho_init=(-5.0, 'real'),
                                weighting=('variance', 'choice'))),
        ('run_bayesfl',
         dict(fd=(fd, 'obj'), rounds=(1, 'size'), clients_per_round=(2, 'size'), mode=('poe', 'choice'),
              hidden=(2, 'size'),
                             prior_var=(1.0, 'pos'), epochs=(1, 'size'), lr=(0.01,
              'pos'), rho_init=(-5.0, 'real'), seed=(0, 'count'),
                             weighting=('variance', 'choice'))),
        ('run_bayesfl_engine',
         dict(fd=(fd, 'obj'), rounds=(1, 'size'), clients_per_round=(2, 'size'), mode=('poe', 'choice'),
                                    hidden=(2, 'size'), prior_var=(1.0, 'pos'), epochs=(1,
              'size'), lr=(0.3, 'pos'), batch_size=(8, 'size'),
                                    seed=(0, 'count'), weighting=('variance', 'choice'))),
        ('set_posterior', dict(model=(bm, 'obj'), mu=(mu, 'array'), var=(var, 'nonneg_linked'))),
        ('set_prior', dict(model=(bm, 'obj'), mu=(mu, 'array'), var=(var, 'nonneg_linked'))),
        ('train_client',
         dict(model=(bm, 'obj'), mu=(mu, 'array'), var=(var, 'nonneg_linked'), x=(x, 'array'), y=(y, 'labels'),
                              generator=(torch.Generator().manual_seed(0),
                                         'obj'), epochs=(1, 'size'), batch_size=(4, 'size'),
                              lr=(0.01, 'pos'), likelihood=('categorical', 'choice'), noise_var=(1.0, 'pos')))],
     'crowd.devices': [('DevicePool',
                        dict(hw_tier=(np.array([0, 1, 2]), 'ids'), net_tier=(np.array([1, 0, 2]), 'ids'),
                             seed=(0, 'count'),
                                           redraw=True, availability=(0.9, 'prob'), cost=(np.array([1., 2., 3.]),
                                                                                          'nonneg_linked')))],
     'crowd.fedondemand': [
        ('ShapleyLedger', dict(inner=(UniformSelector(), 'obj'), n_perm=(5, 'size'))),
        ('cohort_for_samples',
         dict(order=(np.array([2, 0, 1]), 'unique_ids'), n_samples=(np.array([10, 20, 30]), 'counts'),
                                    n_required=(35, 'size'))),
        ('cohort_size_heuristic',
         dict(kl=(np.array([1., 2., 3.]), 'nonneg_array'), loss_var=(np.array([.1, .2, .3]), 'nonneg_linked'),
                                       epsilon=(0.5, 'pos'), delta=(0.05, 'unit'))),
        ('eligible_devices', dict(pool=(pool, 'obj'), req=(TaskRequirements(), 'obj'), t=(0, 'count'))),
        ('pac_bayes_gap', dict(n=(100, 'size'), kl=(2.0, 'nonneg'), delta=(0.05, 'unit'), loss_bound=(1.0, 'pos'))),
        ('pac_bayes_sample_size',
         dict(epsilon=(0.5, 'pos'), kl=(2.0, 'nonneg'), delta=(0.05, 'unit'), loss_bound=(1.0, 'pos'))),
        ('preliminary_training',
         dict(model_fn=(lambda: mlp(64, 4), 'callable'), data=(fd, 'obj'), ids=(np.array([0, 3]), 'unique_ids'),
                                      config=(RunConfig(batch_size=8, lr=0.2, seed=0),
                                              'obj'), fraction=(0.25, 'unit')))],
     'crowd.robust': [('attack_exchange',
                       dict(attack=('gradient_scaling', 'choice'), attackers=(np.array([0, 2]), 'unique_ids'),
                                               seed=(0, 'count'))),
                      ('attack_table',
                       dict(fd=(fd, 'obj'), attacks=(('none',), 'obj'), rules=(('fedavg',), 'obj'),
                            fraction=(0.25, 'prob'),
                                            rounds=(1, 'size'), last=(1, 'size'), seed=(0,
                            'count'), clients_per_round=2, hidden=2)),
                      ('flip_labels', dict(fd=(fd, 'obj'), clients=(np.array([1, 3]), 'unique_ids')))],
     'crowd.shapley': [('estimator_error',
                        dict(utility=(u, 'callable'), n_players=(3, 'size'), exact=(np.ones(3), 'array'),
                                                n_perms=((2, 5), 'obj'), seeds=((0, 1),
                             'obj'), L=(2, 'size'), tol=(0.05, 'nonneg'))),
                       ('fl_utility', dict(global_params=(np.zeros(4), 'array'), updates=(np.ones((3, 4)), 'array'),
                                           weights=(np.ones(3), 'nonneg_linked'), score=(lambda p: float(p.sum()),
                                                                                         'callable'))),
                       # one control per kind: each reads only its own arguments
                       ('free_rider_update',
                        dict(kind=('noise', 'choice'), global_now=(np.ones(4), 'array'), rng=np.random.default_rng(0),
                                                  noise_sd=(1e-3, 'nonneg'))),
                       ('free_rider_update', dict(kind=('stale_global', 'choice'), global_now=(np.ones(4), 'array'),
                                                  rng=np.random.default_rng(0),
                                                  global_prev=(np.zeros(4), 'linked_array'))),
                       ('free_rider_update', dict(kind=('scaled_replay', 'choice'), global_now=(np.ones(4), 'array'),
                                                  rng=np.random.default_rng(0), replay=(np.ones(4),
                                                  'linked_array'), scale=(0.5, 'real')))],
    }


def _modelhet_controls(files:dict) -> dict:
    "Controls of the sub-model methods, the membership-inference attacks and the chapter's experiments (tiny models)."
    import torch
    from torch import nn
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.modelhet.submodels import (WidthCNN, ChannelSchedule, full_set, quadrant_sets, run_submodels,
                                                  hidden_sizes)
    from hetfl_explore.modelhet.mia import AttackResult, mia_split, Shadows
    from hetfl_explore.modelhet.experiments import appendix_tables, load_results, ModelHetPreset, summarize
    fd = tiny_digits_federation(num_clients=3, min_size=10, n_test=40)
    hid = hidden_sizes(2); full = full_set(hid); half = quadrant_sets(hid)[0]
    gm = WidthCNN(u=2, in_channels=1, n_classes=10); gs = gm.state_dict()
    cfg = RunConfig(rounds=1, batch_size=16, device='cpu')
    run = run_submodels('OFM', fd, 1, cfg, u=2)
    g = torch.Generator().manual_seed(0)
    xm, ym = torch.randn(8, 1, 8, 8, generator=g), torch.arange(8) % 10
    xp, yp = torch.randn(12, 1, 8, 8, generator=g), torch.arange(12) % 10
    xs, ys = torch.randn(12, 1, 8, 8,
                         generator=g), torch.arange(12) % 10   # a shadow pool disjoint from the split's records
    model_fn = lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    target = model_fn()
    split = mia_split(xm, ym, xp, yp, cap=4, seed=0)
    shadows = Shadows([model_fn(), model_fn()], np.array([[True, False] * 6, [False, True] * 6]))
    res = AttackResult(np.array([.1, .9, .4, .6]), np.array([0, 1, 0, 1]), np.array([0, 1, 1, 1]), 'toy', {})
    per_client, thesis = load_results(), appendix_tables()
    one = thesis[thesis.dataset == 'CIFAR-10'] if 'dataset' in thesis else thesis
    tiny = ModelHetPreset(rounds=1, u=2, eval_every=1, n_shadows=1, shadow_epochs=0, distill_epochs=0, mia_cap=4)
    quick = lambda m, x, y, s: m   # a train_fn that leaves the model as it is (the attack's path, not its training)
    sched = ChannelSchedule('OFR', hid, [1], 0.5)
    return {
     'modelhet.submodels': [
        ('ChannelSchedule',
         dict(method=('OFR', 'choice'), hidden=(hid, 'obj'), small=([1], 'obj'), rate=(0.5, 'unit'),
              n_groups=(4, 'size'),
                                 n_unique=(10, 'size'), seed=(0, 'count'), coupling=('layerwise',
                                                                                     'choice'), rotate=True,
                                 osm_order=('cyclic', 'choice'), ufr_assignment=('cyclic',
                                                                                 'choice'), gfr_disjoint=False)),
        ('ChannelSet', dict(outs=(full.outs, 'obj'), ins=(full.ins, 'obj'), rate=(1.0, 'unit'), label=('full', 'obj'))),
        ('SubmodelRun',
         dict(method=('OFM', 'obj'), small=(run.small, 'obj'), sets=(run.sets, 'obj'),
              global_state=(run.global_state, 'obj'),
                             client_states=(run.client_states, 'obj'), history=(run.history,
                                                                                'obj'), arch=(run.arch, 'obj'))),
        ('aggregate_submodels',
         dict(global_state=(gs, 'obj'), client_states=([gs, gs], 'obj'), sets=([full, full], 'obj'),
                                     weights=(np.array([1., 2.]), 'nonneg_array'))),
        ('check_hidden', dict(hidden=(hid, 'obj'))),
        ('check_state', dict(name='state', state=(gs, 'obj'))),
        ('coverage', dict(global_state=(gs, 'obj'), sets=([full, half], 'obj'))),
        ('coverage_heatmap',
         dict(schedule=(sched, 'obj'), t=(0, 'count'), layer=(1, 'count'), clients=([0, 1], 'obj'))),
        ('extract_state', dict(global_state=(gs, 'obj'), cs=(half, 'obj'))),
        ('extract_submodel', dict(global_model=(gm, 'obj'), cs=(half, 'obj'))),
        ('full_set', dict(hidden=(hid, 'obj'))),
        ('hidden_sizes', dict(u=(2, 'size'), rate=(0.5, 'unit'))),
        ('make_norm', dict(norm=('group', 'choice'), channels=(4, 'size'))),
        ('param_index', dict(name=('blocks.1.conv.weight', 'choice'), cs=(half, 'obj'))),
        ('quadrant_sets', dict(hidden=(hid, 'obj'), rate=(0.5, 'unit'))),
        ('random_set',
         dict(hidden=(hid, 'obj'), rate=(0.5, 'unit'), rng=np.random.default_rng(0), coupling=('layerwise', 'choice'),
                            label=('rand', 'obj'))),
        ('run_submodels',
         dict(method=('OFR', 'choice'), data=(fd, 'obj'), n_large=(1, 'count'), config=(cfg, 'obj'), u=(2, 'size'),
                               rate=(0.5, 'unit'), norm=('static', 'choice'), schedule_kw=({}, 'obj'), callback=None)),
        ('schedule_timeline', dict(schedule=(sched, 'obj'), rounds=(3, 'size'))),
        ('small_clients', dict(sizes=(np.array([10, 30, 20]), 'counts'), n_large=(1, 'count'))),
        ('submatrix_set', dict(hidden=(hid, 'obj'), block=((0, 1), 'obj'), rate=(0.5, 'unit'), label=('O', 'obj'))),
        ('submodel_client_accuracies', dict(run=(run, 'obj'), data=(fd, 'obj')))],
     'modelhet.mia': [
        ('AttackResult',
         dict(scores=(res.scores, 'array'), labels=(res.labels, 'labels'), preds=(res.preds, 'labels'),
              attack=('toy', 'obj'),
                              info=({}, 'obj'))),
        ('MIASplit',
         dict(x=(split.x, 'tensor'), y=(split.y, 'tensor_labels'), labels=(split.labels, 'labels'),
              x_known=(split.x_known, 'tensor'),
                          y_known=(split.y_known, 'tensor_labels'), member_idx=(split.member_idx, 'unique_ids'),
                          nonmember_idx=(split.nonmember_idx, 'unique_ids'))),
        ('Shadows', dict(models=(shadows.models, 'obj'), in_pool=(shadows.in_pool, 'obj'))),
        ('attack_metrics', dict(res=(res, 'obj'), n_boot=(10, 'count'), seed=(0, 'count'))),
        ('bootstrap_ci',
         dict(metric=(lambda s, l, p: float(s.mean()), 'callable'), res=(res, 'obj'), n_boot=(10, 'size'),
              level=(0.9, 'unit'),
                              seed=(0, 'count'))),
        ('disjoint_pool', dict(x_pool=(xp, 'tensor'), y_pool=(yp, 'tensor_labels'), x_exclude=(xm, 'tensor'))),
        ('distill_trajectory',
         dict(teacher=(target, 'obj'), model_fn=(model_fn, 'callable'), x_dl=(xp, 'tensor'), x=(xm, 'tensor'),
                                    y=(ym, 'tensor_labels'), epochs=(1, 'count'), lr=(1e-3,
              'pos'), batch_size=(4, 'size'), seed=(0, 'count'))),
        ('fit_classifier',
         dict(model=(model_fn(), 'obj'), x=(xm, 'tensor'), y=(ym, 'tensor_labels'), epochs=(1, 'count'),
              lr=(1e-3, 'pos'),
                                batch_size=(4, 'size'), seed=(0, 'count'))),
        ('lira_offline',
         dict(model=(target, 'obj'), split=(split, 'obj'), shadows=(shadows, 'obj'), logit_scale=True,
              global_variance=False,
                              batch_size=(4, 'size'), seed=(0, 'count'))),
        ('lira_population',
         dict(model=(target, 'obj'), split=(split, 'obj'), model_fn=(model_fn, 'callable'), x_pool=(xs, 'tensor'),
                                 y_pool=(ys, 'tensor_labels'), n_shadows=(2,
              'size'), train_fn=(quick, 'callable'), global_variance=False,
                                 seed=(0, 'count'))),
        ('metrics_table', dict(results=([res], 'obj'), n_boot=(0, 'count'))),
        ('mia_anatomy', dict(res=(res, 'obj'), threshold=(0.5, 'real'), bins=(5, 'size'))),
        ('mia_split',
         dict(x_members=(xm, 'tensor'), y_members=(ym, 'tensor_labels'), x_pool=(xp, 'tensor'),
              y_pool=(yp, 'tensor_labels'),
                           cap=(4, 'size'), n_known=(3, 'count'), seed=(0, 'count'))),
        ('model_outputs',
         dict(model=(target, 'obj'), x=(xm, 'tensor'), y=(ym, 'tensor_labels'), batch_size=(4, 'size'),
              seed=(0, 'count'))),
        ('tmia_attack',
         dict(model=(target, 'obj'), split=(split, 'obj'), model_fn=(model_fn, 'callable'), x_aux=(xp, 'tensor'),
                             y_aux=(yp, 'tensor_labels'), distill_epochs=(1,
              'count'), train_fn=(quick, 'callable'), hidden=((4,), 'obj'),
                             mlp_epochs=(2, 'size'), seed=(0, 'count'))),
        ('train_shadows',
         dict(model_fn=(model_fn, 'callable'), x_pool=(xp, 'tensor'), y_pool=(yp, 'tensor_labels'),
              n_shadows=(2, 'size'),
                               p_in=(0.5, 'unit'), train_fn=(quick, 'callable'), seed=(0, 'count'))),
        ('yeom_attack', dict(model=(target, 'obj'), split=(split, 'obj'), batch_size=(4, 'size'), seed=(0, 'count')))],
     'modelhet.experiments': [
        ('attack_clients',
         dict(run=(run, 'obj'), data=(fd, 'obj'), preset=(tiny, 'obj'), seed=(0, 'count'), global_model=False)),
        ('check_choice_all', dict(name='values', values=(('a',), 'obj'), choices=(('a', 'b'), 'obj'))),
        ('check_frame', dict(name='df', df=(thesis, 'obj'), columns=(('method',), 'obj'))),
        ('compare_to_thesis',
         dict(summary=(summarize(per_client), 'obj'), dataset=('CIFAR-10', 'choice'), attack=('yeom', 'choice'))),
        ('frequency_spearman', dict(df=(one, 'obj'), metrics=(('client_acc', 'server_acc'), 'obj'))),
        ('lira_comparison', dict(per_client=(per_client, 'obj'))),
        ('modelhet_headlines', dict(df=(one, 'obj'), auc=('auc_avg', 'choice'))),
        ('real_federation',
         dict(root=(files['femnist'], 'obj'), name=('femnist', 'choice'), seed=(0, 'count'), num_clients=(2, 'size'),
                                 alpha=(0.85, 'pos'))),
        ('run_modelhet',
         dict(method=('OFM', 'choice'), data=(fd, 'obj'), n_large=(1, 'count'), preset=(tiny, 'obj'),
              seed=(0, 'count'))),
        ('size_leakage_correlation',
         dict(per_client=(per_client, 'obj'), metric=('advantage', 'choice'), attack=('yeom', 'choice'))),
        ('spread_table', dict(df=(one, 'obj'), metrics=(('server_acc', 'client_acc'), 'obj'))),
        ('summarize', dict(per_client=(per_client, 'obj'), who=('all', 'choice'), target=('client', 'choice'))),
        ('taxonomy_T', dict(method=('OSM', 'choice'))),
        ('tradeoff_scatter',
         dict(df=(one, 'obj'), n_large=(2, 'count'), dataset=None, privacy=('auc_avg', 'choice'), title=('t', 'obj')))],
    }


def controls() -> dict:
    "group -> [(entry, {argument: (valid value, kind)})] for the crowd, modelhet and clustering parts."
    out = {}
    for part in (_known_defect_controls(), _clustering_controls(_loader_files()), _contribution_controls(),
                 _crowd_trust_controls(),
                 _crowd_learning_controls(), _modelhet_controls(_loader_files())):
        for g, entries in part.items(): out.setdefault(g, []).extend(entries)
    return out
