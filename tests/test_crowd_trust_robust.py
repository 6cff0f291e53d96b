"""Robust aggregation (Blanchard et al., 2017; Yin et al., 2018) and the attacks of Tahir (2025), section 7.6.2, plus the
panels of `widgets.trust`."""
import numpy as np
import pytest
import torch
from hetfl_explore.crowd.robust import krum_scores, robust_aggregate, flip_labels, attack_exchange, attack_table, SCALE_RANGE, CLAIMED_VAR

def test_krum_scores_by_hand():
    pts = torch.tensor([[0.], [1.], [3.], [6.], [100.]])
    # f = 1: each point sums the squared distances to its n - f - 2 = 2 nearest others
    assert torch.allclose(krum_scores(pts, 1), torch.tensor([1 + 9, 1 + 4, 4 + 9, 9 + 25, 94.**2 + 97.**2]))
    assert torch.allclose(krum_scores(pts, 0), torch.tensor([1 + 9 + 36, 1 + 4 + 25, 4 + 9 + 9, 9 + 25 + 36, 94.**2 + 97.**2 + 99.**2]))
    with pytest.raises(ValueError, match='f=2'): krum_scores(pts, 2)

def test_rules_by_hand():
    m, v = torch.tensor([[0., 5], [1., 6], [2., 7], [3., 8], [100., -50]]), torch.arange(1., 11).view(5, 2)
    assert torch.equal(robust_aggregate(m, v, 'median')[0], torch.tensor([2., 6]))
    k = krum_scores(m, 1).argmin()
    assert torch.equal(robust_aggregate(m, v, 'krum')[0], m[k]) and torch.equal(robust_aggregate(m, v, 'krum')[1], v[k])
    assert torch.allclose(robust_aggregate(m, v, 'multi_krum')[0], m[:4].mean(0))
    assert torch.allclose(robust_aggregate(m, v, 'fedavg')[0], m.mean(0))
    assert torch.allclose(robust_aggregate(m, v, 'poe', prior_var=2.0)[0], __import__('hetfl_explore.crowd.bayesian', fromlist=['x']).aggregate_posteriors(m, v, 0., 2.0, 'poe')[0])

def test_attacks_change_only_the_attackers():
    mu, post = torch.zeros(4), [(torch.ones(4), torch.full((4,), .5))] * 3
    for attack in ('gradient_scaling', 'random_weights', 'variance_claim'):
        out = attack_exchange(attack, [1], seed=0)(0, np.array([0, 1, 2]), post, mu)
        assert torch.equal(out[0][0], post[0][0]) and torch.equal(out[2][1], post[2][1]) and not torch.equal(out[1][0], post[1][0])
    s = attack_exchange('gradient_scaling', [0])(3, np.array([0]), post, mu)[0][0]
    assert torch.allclose(s, s[0].expand(4)) and abs(float(s[0])) <= SCALE_RANGE
    assert torch.equal(attack_exchange('variance_claim', [0])(0, np.array([0]), post, mu)[0][1], torch.full((4,), CLAIMED_VAR))
    assert attack_exchange('none', [0])(0, np.array([0]), post[:1], mu) == post[:1]

def test_flip_labels_and_a_tiny_table():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0); ff = flip_labels(fd, [2])
    i, j = fd.client_idx[2], fd.client_idx[3]
    assert torch.equal(ff.y[i], 9 - fd.y[i]) and torch.equal(ff.y[j], fd.y[j]) and torch.equal(fd.y, tiny_digits_federation(0).y)
    t = attack_table(fd, attacks=('none', 'variance_claim'), rules=('median', 'poe'), rounds=1, last=1, clients_per_round=5, hidden=4)
    assert list(t.index) == ['none', 'variance_claim'] and list(t.columns) == ['median', 'poe'] and ((t >= 0) & (t <= 1)).all().all()

def test_panels_show_errors_and_keep_state():
    from hetfl_explore.widgets.trust import AggregationPlayground, TrustWalkthrough, walkthrough, playground_figure, DEMO_DEVICE, WALKTHROUGH_ATTACKS
    from hetfl_explore.crowd.abac import EXAMPLE_POLICY
    from hetfl_explore.crowd.pki import REASONS
    pg = AggregationPlayground(mode='poe', prior='fixed')
    assert np.allclose(pg.figure.data[2].y, 1.0)
    assert not pg.set(prior_var=-1) and 'prior_var' in pg.error and pg.settings['prior_var'] == 1.0 and 'hx-error' in pg.msg.value
    assert pg.set(mode='as_printed', prior='last_global') and pg.figure.data[2].y[-1] > 100
    tw = TrustWalkthrough()
    assert tw.state['verdict'] is None and 'PERMIT by hardware' in tw.report.value
    assert not tw.set('rule x: deny\n', DEMO_DEVICE) and 'line 1' in tw.error and tw.state['verdict'] is None
    assert not tw.set(EXAMPLE_POLICY, '[1, 2]') and 'attributes' in tw.error
    assert tw.set(EXAMPLE_POLICY, DEMO_DEVICE, 'revoked') and 'certificate revoked' in tw.report.value
    assert [walkthrough(EXAMPLE_POLICY, DEMO_DEVICE, a)['verdict'] for a in WALKTHROUGH_ATTACKS] == [
        None, REASONS['signature'], REASONS['round'], REASONS['task'], REASONS['expired'], REASONS['revoked']]

def test_robust_aggregate_refuses_non_positive_variances():
    from hetfl_explore.crowd.robust import robust_aggregate, RULES
    for rule in RULES:
        for bad in (-torch.ones(3, 2), torch.zeros(3, 2)):
            with pytest.raises(ValueError, match='vars'): robust_aggregate(torch.zeros(3, 2), bad, rule)
