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

def test_robust_outliers_by_hand():
    from hetfl_explore.crowd.robust import robust_outliers, OUTLIER_RATIO
    m = torch.tensor([[0.], [1.], [2.], [3.], [100.]])
    for rule in ('krum', 'multi_krum', 'median'): assert robust_outliers(m, rule).tolist() == [False] * 4 + [True]
    for rule in ('fedavg', 'poe'): assert not robust_outliers(m, rule).any()
    assert not robust_outliers(m, 'multi_krum', f=0).any()                          # f = 0: Multi-Krum discards nobody
    assert not robust_outliers(m, 'median', ratio=1e6).any() and OUTLIER_RATIO == 100.0
    with pytest.raises(ValueError, match='mus'): robust_outliers(torch.zeros(0, 2), 'median')

ROUND = (torch.tensor([[0., 0], [1, 0], [0, 1], [1, 1], [50, 50]]), torch.ones(5, 2))

@pytest.mark.parametrize('penalty', [0.05, 0.1, 0.3])
def test_each_flagged_round_costs_the_outlier_penalty_and_then_access_and_rank(penalty):
    "Client 14 (position 4) is far from the others in every round: it loses exactly `penalty` per round, then access, and its T."
    from hetfl_explore.crowd.abac import TrustStore, parse_policy, EXAMPLE_POLICY, Request, client_name
    from hetfl_explore.crowd.robust import robust_server
    store = TrustStore(penalties=dict(outlier=penalty)); srv = robust_server('multi_krum', trust=store)
    ids, phone = np.array([10, 11, 12, 13, 14]), dict(ram_gb=6, disk_gb=20, full_disk_encryption=True, protocols={'TLS'}, encryption={'AES-256'}, os_patch_age_days=[0])
    pol, trail = parse_policy(EXAMPLE_POLICY), []
    for r in range(3):
        srv(*ROUND, ids); trail.append(store.score(client_name(14)))
    assert srv.outliers == [[14]] * 3 and trail == pytest.approx([max(0, 0.9 - penalty * (r + 1)) for r in range(3)])
    assert all(store.score(client_name(c)) == 0.9 for c in range(10, 14))
    access = lambda c: pol.decide(Request(store.subject(client_name(c), phone), 'participate', dict(min_trust=0.8))).permit
    assert access(13) and not access(14)                                            # three flagged rounds: below 0.8 for every penalty here
    srv_names = robust_server('median', trust=TrustStore(penalties=dict(outlier=penalty)), names={c: f'dev{c}' for c in ids})
    srv_names(*ROUND, ids); assert srv_names.outliers == [[14]]

def _phi_drop(penalty):
    "Client 4's FedPROM net-flow drop when only its trust fell by one outlier penalty (unnormalised criteria, q = 0.05, p = 0.5)."
    from hetfl_explore.crowd.abac import TrustStore, client_name
    from hetfl_explore.crowd.devices import DevicePool
    from hetfl_explore.crowd.promethee import PrometheeSelector
    from hetfl_explore.engine.protocol import ClientView
    store = TrustStore(penalties=dict(outlier=penalty)); store.flag(4, 'outlier'); names = [client_name(c) for c in range(6)]
    pool, phi = DevicePool.sample(6, seed=0), {}
    for label, trust in (('before', np.full(6, 0.9)), ('after', store.vector(names))):
        sel = PrometheeSelector(pool, trust=trust, normalise=False); sel.reset(6, 0)
        sel.select(0, ClientView(0, np.arange(6), np.full(6, 50)), 6, np.random.default_rng(0)); phi[label] = sel.table.set_index('client')['phi']
    return phi['before'][4] - phi['after'][4]

@pytest.mark.parametrize('penalty', [0.1, 0.2, 0.4])
def test_the_outlier_penalty_moves_fedproms_trust_criterion(penalty):
    "Every other client is preferred to client 4 on T by P(penalty) = (penalty - q) / (p - q), weighted by W_T = 1/4."
    assert _phi_drop(penalty) == pytest.approx(0.25 * min(1, (penalty - 0.05) / 0.45), abs=1e-12)

def test_a_robust_run_flags_the_attacker_whenever_it_plays():
    from hetfl_explore.foundation.data import tiny_digits_federation
    from hetfl_explore.crowd.abac import TrustStore
    from hetfl_explore.crowd.bayesian import run_bayesfl
    from hetfl_explore.crowd.robust import robust_server
    fd, store = tiny_digits_federation(0), TrustStore()
    srv = robust_server('multi_krum', trust=store)
    run_bayesfl(fd, rounds=4, clients_per_round=5, hidden=8, exchange=attack_exchange('random_weights', [3]), server=srv)
    rng = np.random.default_rng(0); played = [3 in rng.choice(10, 5, replace=False) for _ in range(4)]
    assert srv.outliers == [[3] if p else [] for p in played] and sum(played) > 0
    assert store.score('client-3') == pytest.approx(0.9 - 0.1 * sum(played)) and set(store.scores) == {'client-3'}

def test_robust_server_shrinks_f_when_few_updates_arrive_and_checks_its_arguments():
    from hetfl_explore.crowd.robust import robust_server
    m, v = ROUND
    assert torch.equal(robust_server('multi_krum')(m[:4], v[:4], np.arange(4))[0], m[:4].mean(0))    # n = 4: f = 0
    assert torch.equal(robust_server('krum')(m[:2], v[:2], np.arange(2))[0], m[:2].mean(0))          # n < 3: the mean
    with pytest.raises(ValueError, match='rule'): robust_server('trimmed')
    with pytest.raises(TypeError, match='trust'): robust_server(trust={'a': 1.0})
    with pytest.raises(ValueError, match='names'): robust_server(trust=__import__('hetfl_explore.crowd.abac', fromlist=['x']).TrustStore(), names=['a'])(*ROUND, np.arange(5))
