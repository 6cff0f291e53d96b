"""Bad input never surprises: every public entry point of crowd.{bayesian,abac,pki,authenticated,robust} and
widgets.trust answers malformed arguments with a ValueError/TypeError that names the argument."""
import re
from datetime import datetime, timedelta, timezone
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
import hetfl_explore.crowd.bayesian as B
import hetfl_explore.crowd.abac as A
import hetfl_explore.crowd.pki as K
import hetfl_explore.crowd.authenticated as AU
import hetfl_explore.crowd.robust as R
import hetfl_explore.widgets.trust as WT

COVERED = {f'hetfl_explore.crowd.bayesian.{n}' for n in ('gaussian_kl', 'MeanFieldLinear', 'bayes_mlp', 'get_posterior', 'set_posterior',
           'set_prior', 'neg_elbo', 'train_client', 'aggregate_posteriors', 'linear_posterior', 'conjugate_rounds', 'forward',
           'run_bayesfl', 'predictive', 'expected_calibration_error',
           'elbo_loss', 'posterior_rule', 'run_bayesfl_engine')} | \
          {f'hetfl_explore.crowd.abac.{n}' for n in ('PolicySyntaxError', 'Condition', 'Ref', 'Rule', 'PolicySet', 'parse_policy', 'Request', 'Decision')} | \
          {f'hetfl_explore.crowd.pki.{n}' for n in ('new_key', 'make_csr', 'attributes_of', 'client_id_of', 'CertificateAuthority',
           'certificate_problem', 'serialise', 'SignedUpdate', 'sign_update', 'verify_update', 'session_key', 'seal',
           'unseal', 'aware_now')} | \
          {f'hetfl_explore.crowd.authenticated.{n}' for n in ('AuthenticatedServer', 'deserialise', 'run_authenticated', 'authenticated_filter')} | \
          {f'hetfl_explore.crowd.robust.{n}' for n in ('krum_scores', 'robust_aggregate', 'flip_labels', 'attack_exchange', 'attack_table',
                                               'robust_outliers', 'robust_server')} | {'hetfl_explore.crowd.abac.client_name'} | \
          {f'hetfl_explore.widgets.trust.{n}' for n in ('playground_figure', 'AggregationPlayground', 'walkthrough', 'TrustWalkthrough')}

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
BAD_NUMBER = st.sampled_from([None, 'x', True, float('nan'), float('inf'), -1, 0, [1, 2], object()])
BAD_ARRAY = st.sampled_from([None, 'abc', [[1, float('nan')]], [[float('inf')]], [1, 2, 3], [[[1.]]], object()])
BAD_TEXT = st.sampled_from([None, 3, b'bytes', ['a'], 1.5])
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

def rejects(fn, *names):
    "fn() raises ValueError/TypeError whose message names one of `names`."
    with pytest.raises((ValueError, TypeError)) as e: fn()
    msg = str(e.value)
    assert any(re.search(rf'(?<![\w.]){re.escape(n)}(?![\w])', msg) for n in names), f'{msg!r} does not name {names}'

@pytest.fixture(scope='module')
def pki():
    ca = K.CertificateAuthority(now=T0); key = K.new_key(); cert = ca.enrol(K.make_csr(key, 'c', {}), now=T0)[0]
    return ca, key, cert

@SETTINGS
@given(bad=BAD_ARRAY)
def test_bayesian_arrays(bad):
    ok2 = torch.ones(2, 3)
    if not (isinstance(bad, list) and np.isfinite(np.asarray(bad, float)).all()):           # finite lists broadcast: valid
        rejects(lambda: B.gaussian_kl(bad, 1., 0., 1.), 'mu_q', 'var_q')
    rejects(lambda: B.aggregate_posteriors(bad, ok2), 'mus', 'vars')
    rejects(lambda: B.aggregate_posteriors(ok2, bad), 'vars', 'var0')
    rejects(lambda: B.linear_posterior(bad, [1., 2.], 1.), 'X', 'y')
    rejects(lambda: B.expected_calibration_error(bad, [0]), 'probs', 'y')
    rejects(lambda: R.krum_scores(bad, 0), 'points', 'f')
    rejects(lambda: R.robust_aggregate(bad, ok2), 'mus', 'vars')
    rejects(lambda: R.robust_outliers(bad, 'median'), 'mus')
    net = B.bayes_mlp(2, 2, hidden=2)
    rejects(lambda: B.set_posterior(net, bad, torch.ones(12)), 'mu', 'var')
    rejects(lambda: B.set_prior(net, torch.zeros(12), bad), 'var', 'mu')

@SETTINGS
@given(bad=BAD_NUMBER)
def test_bayesian_numbers(bad):
    rejects(lambda: B.MeanFieldLinear(bad, 2), 'in_features')
    rejects(lambda: B.MeanFieldLinear(2, 2, prior_var=bad), 'prior_var')
    rejects(lambda: B.bayes_mlp(2, 2, hidden=bad), 'hidden', 'in_features')
    net = B.bayes_mlp(2, 2, hidden=2); x, y = torch.ones(3, 2), torch.zeros(3, dtype=torch.long)
    rejects(lambda: B.neg_elbo(net, x, y, n_data=bad), 'n_data')
    rejects(lambda: B.train_client(net, torch.zeros(12), torch.ones(12), x, y, torch.Generator(), epochs=bad), 'epochs')
    rejects(lambda: B.conjugate_rounds([torch.ones(2, 1)], [torch.ones(2)], 1.0, rounds=bad), 'rounds')
    rejects(lambda: B.predictive(net, x, samples=bad), 'samples')
    rejects(lambda: B.aggregate_posteriors(torch.ones(2, 1), torch.ones(2, 1), mode=bad), 'mode')
    rejects(lambda: R.robust_aggregate(torch.ones(5, 1), torch.ones(5, 1), rule=bad), 'rule')
    rejects(lambda: R.robust_outliers(torch.ones(5, 1), rule=bad), 'rule')
    rejects(lambda: R.robust_server(rule=bad), 'rule')
    if bad is not None and not isinstance(bad, (int, float)): rejects(lambda: R.robust_server(trust=bad), 'trust')
    if not (isinstance(bad, int) and not isinstance(bad, bool) and bad >= 1): rejects(lambda: R.robust_outliers(torch.ones(5, 1), ratio=bad), 'ratio')
    if not (isinstance(bad, int) and not isinstance(bad, bool) and bad >= 0): rejects(lambda: A.client_name(bad), 'c')
    rejects(lambda: WT.playground_figure(clients=bad), 'clients')
    rejects(lambda: WT.playground_figure(prior_var=bad), 'prior_var')

def test_bayesian_models_and_runs():
    rejects(lambda: B.get_posterior(torch.nn.Linear(2, 2)), 'model')
    rejects(lambda: B.forward(torch.nn.Linear(2, 2), torch.ones(1, 2)), 'model')
    rejects(lambda: B.neg_elbo(B.bayes_mlp(2, 2), torch.ones(1, 2), torch.zeros(1, dtype=torch.long), 1, likelihood='poisson'), 'likelihood')
    rejects(lambda: B.conjugate_rounds([], [], 1.0), 'Xs')
    rejects(lambda: B.conjugate_rounds([torch.ones(2, 1)], [torch.ones(2)], 1.0, prior='sometimes'), 'prior')
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    rejects(lambda: B.run_bayesfl(fd, clients_per_round=99), 'clients_per_round')
    rejects(lambda: B.run_bayesfl(fd, rounds=0), 'rounds')
    rejects(lambda: R.flip_labels(fd, [99]), 'clients')
    rejects(lambda: B.run_bayesfl_engine(fd, clients_per_round=99), 'clients_per_round')
    rejects(lambda: B.run_bayesfl_engine(fd, rounds=0), 'rounds')
    rejects(lambda: B.run_bayesfl_engine(fd, mode='mean'), 'mode')
    rejects(lambda: B.elbo_loss(torch.nn.Linear(2, 2)), 'model')
    rejects(lambda: B.elbo_loss(B.bayes_mlp(2, 2), likelihood='poisson'), 'likelihood')
    rejects(lambda: B.posterior_rule(B.bayes_mlp(2, 2), mode='mean'), 'mode')
    rejects(lambda: B.posterior_rule(B.bayes_mlp(2, 2), prior_var=0), 'prior_var')
    rejects(lambda: B.posterior_rule('net'), 'model')
    rejects(lambda: R.attack_exchange('sybil', [0]), 'attack')
    rejects(lambda: R.attack_table(fd, attacks=('sybil',)), 'attacks')
    rejects(lambda: R.attack_table(fd, fraction=0.9), 'fraction')

@SETTINGS
@given(bad=st.sampled_from(['rule a: permit\n  x = 1', 'rule a permit register\n  x = 1', '  x = 1', 'rule a: permit register\n  x ~ 1',
                             'rule a: permit register\n  x = {1, {2}}', 'combining worst\nrule a: permit r\n  x = 1', 'rule a: permit r\n  x = 1 $']))
def test_policy_text_errors_have_line_and_column(bad):
    with pytest.raises(A.PolicySyntaxError) as e: A.parse_policy(bad)
    assert re.search(r'line \d+, column \d+', str(e.value)) and isinstance(e.value, ValueError)

@SETTINGS
@given(bad=BAD_TEXT)
def test_abac_types(bad):
    rejects(lambda: A.parse_policy(bad), 'text')
    rejects(lambda: A.Request(dict(a=1), bad), 'action')
    rejects(lambda: A.Request(bad, 'register'), 'subject')
    rejects(lambda: A.PolicySet((), combining=bad), 'combining')
    rejects(lambda: A.parse_policy(A.EXAMPLE_POLICY).decide(bad), 'request')

def test_abac_value_objects_evaluate_safely():
    c = A.Condition('subject.x', '>=', A.Ref('resource.y'), False, 'x >= resource.y')
    assert c.holds(A.Request(dict(x=1), 'r')) == (False, "attribute 'resource.y' missing")
    assert A.Rule('r', 'permit', 'a', (c,)).name == 'r' and A.PolicySyntaxError(1, 2, 'm').column == 2
    d = A.Decision(False, 'default deny', 'a', []); assert 'DENY' in d.explain()

@SETTINGS
@given(bad=BAD_TEXT)
def test_pki_types(pki, bad):
    ca, key, cert = pki
    rejects(lambda: K.aware_now(bad if bad is not None else datetime(2020, 1, 1)), 'now')
    rejects(lambda: K.make_csr(key, bad, {}), 'client_id')
    rejects(lambda: K.make_csr(bad, 'c', {}), 'key')
    rejects(lambda: K.make_csr(key, 'c', bad), 'attributes')
    rejects(lambda: K.attributes_of(bad), 'obj'); rejects(lambda: K.client_id_of(bad), 'obj')
    rejects(lambda: K.CertificateAuthority(name=bad), 'name')
    rejects(lambda: K.certificate_problem(bad, ca.cert, ca.crl(T0), T0), 'cert')
    rejects(lambda: K.sign_update(key, cert, bad, 0, torch.ones(2)), 'task_id')
    if not isinstance(bad, int): rejects(lambda: K.sign_update(key, cert, 't', bad, torch.ones(2)), 'round')   # an int is a valid round
    if not isinstance(bad, (int, float)): rejects(lambda: K.serialise(bad if bad is not None else object()), 'update')  # numbers serialise
    rejects(lambda: K.verify_update(bad), 'u')
    rejects(lambda: K.session_key(key, bad), 'peer')
    rejects(lambda: K.seal(bad, b'x'), 'key'); rejects(lambda: K.unseal(b'k' * 32, bad), 'blob')
    rejects(lambda: ca.enrol(bad), 'csr')
    rejects(lambda: AU.deserialise(bad), 'payload')
    rejects(lambda: AU.AuthenticatedServer(ca, bad), 'task_id')
    rejects(lambda: AU.AuthenticatedServer(bad, 't'), 'ca')
    rejects(lambda: AU.AuthenticatedServer(ca, 't').receive([bad], 0, T0), 'updates')
    rejects(lambda: AU.AuthenticatedServer(ca, 't').screen([bad], 0, T0), 'updates')
    rejects(lambda: AU.authenticated_filter(bad, {}), 'server')
    rejects(lambda: AU.authenticated_filter(AU.AuthenticatedServer(ca, 't'), bad), 'identities')
    rejects(lambda: AU.authenticated_filter(AU.AuthenticatedServer(ca, 't'), {}, round_interval=bad), 'round_interval')
    rejects(lambda: WT.walkthrough(bad, {}), 'policy_text')   # the caller's argument, not parse_policy's

def test_pki_values(pki):
    ca, key, cert = pki
    rejects(lambda: K.CertificateAuthority(validity=timedelta(0)), 'validity')
    rejects(lambda: K.CertificateAuthority(now=datetime(2026, 1, 1)), 'now')
    rejects(lambda: K.seal(b'short', b'x'), 'key')
    rejects(lambda: AU.deserialise(b'abc'), 'payload')
    rejects(lambda: K.certificate_problem(cert, ca.cert, K.CertificateAuthority(now=T0).crl(T0), T0), 'crl')
    su = K.sign_update(key, cert, 't', 0, b'raw'); assert isinstance(su, K.SignedUpdate) and K.verify_update(su)
    rejects(lambda: AU.run_authenticated(__import__('hetfl_explore.foundation.data', fromlist=['x']).tiny_digits_federation(0),
                                         AU.AuthenticatedServer(ca, 't'), {}), 'identities')
    rejects(lambda: WT.walkthrough(A.EXAMPLE_POLICY, {}, attack='dos'), 'attack')

def test_panels_report_errors_instead_of_raising():
    pg = WT.AggregationPlayground()
    assert not pg.set(rounds=-3) and 'rounds' in pg.error
    rejects(lambda: WT.AggregationPlayground(mode='sum'), 'mode')
    tw = WT.TrustWalkthrough()
    assert not tw.set(A.EXAMPLE_POLICY, '{bad json') and 'attributes' in tw.error
    rejects(lambda: WT.TrustWalkthrough(attributes='[]'), 'attributes')
