"""BayFL-SVI (Tahir, 2025, ch. 6): the KL term, the four server rules against hand-computed cases, and the conjugate
linear-regression oracle (product of experts of exact client posteriors = the centralised posterior)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hetfl_explore.crowd.bayesian import (gaussian_kl, MeanFieldLinear, bayes_mlp, get_posterior, set_posterior, set_prior, neg_elbo,
                                          train_client, aggregate_posteriors, linear_posterior, conjugate_rounds, forward,
                                          run_bayesfl, predictive, expected_calibration_error, MODES)

@pytest.mark.parametrize('seed', range(3))
def test_kl_equals_torch_kl_divergence(seed):
    g = torch.Generator().manual_seed(seed)
    mq, mp = torch.randn(7, generator=g, dtype=torch.float64), torch.randn(7, generator=g, dtype=torch.float64)
    vq, vp = torch.rand(7, generator=g, dtype=torch.float64) + .05, torch.rand(7, generator=g, dtype=torch.float64) + .05
    ref = torch.distributions.kl_divergence(torch.distributions.Normal(mq, vq.sqrt()), torch.distributions.Normal(mp, vp.sqrt())).sum()
    assert torch.allclose(gaussian_kl(mq, vq, mp, vp), ref, atol=1e-12)

def test_layer_kl_is_gaussian_kl_to_its_prior():
    torch.manual_seed(0); layer = MeanFieldLinear(4, 3, prior_var=0.3)
    mu, var = layer.posterior()
    assert torch.allclose(layer.kl(), gaussian_kl(mu, var, 0., 0.3), rtol=1e-5)

@pytest.mark.parametrize('seed,dim,clients', [(0, 1, 10), (1, 3, 5), (2, 6, 8)])
def test_poe_of_exact_client_posteriors_is_the_centralised_posterior(seed, dim, clients):
    rng = np.random.default_rng(seed); theta = torch.from_numpy(rng.normal(size=dim))
    Xs = [torch.from_numpy(rng.normal(size=(15, dim))) for _ in range(clients)]
    ys = [X @ theta + 0.5 * torch.from_numpy(rng.normal(size=15)) for X in Xs]
    mu0, var0 = torch.from_numpy(rng.normal(size=dim)), torch.from_numpy(rng.uniform(0.5, 2, size=dim))
    cm, cc = linear_posterior(torch.cat(Xs), torch.cat(ys), 0.25, mu0, var0)
    post = [linear_posterior(X, y, 0.25, mu0, var0) for X, y in zip(Xs, ys)]
    gm, gc = aggregate_posteriors(torch.stack([m for m, _ in post]), torch.stack([c for _, c in post]), mu0, torch.diag(var0), 'poe')
    assert torch.allclose(gm, cm, atol=1e-8) and torch.allclose(gc, cc, atol=1e-8)

def test_linear_posterior_matches_the_textbook_formula_in_1d():
    y = torch.tensor([1.0, 3.0], dtype=torch.float64)
    m, c = linear_posterior(torch.ones(2, 1, dtype=torch.float64), y, 1.0, 0.0, 1.0)   # precision 1 + 2, mean 4 / 3
    assert torch.allclose(c, torch.tensor([[1 / 3]], dtype=torch.float64)) and torch.allclose(m, torch.tensor([4 / 3], dtype=torch.float64))

def test_the_four_rules_on_a_hand_computed_case():
    mus, vs = torch.tensor([[1.0], [3.0]], dtype=torch.float64), torch.tensor([[1.0], [0.5]], dtype=torch.float64)
    want = {'as_printed': (7 / 4, 1 / 4), 'poe': (7 / 2, 1 / 2), 'precision_mean': (7 / 3, 1.0), 'variance_weighted': (7 / 3, 2 / 3)}
    for mode, (m, v) in want.items():
        gm, gv = aggregate_posteriors(mus, vs, 0.0, 1.0, mode)
        assert abs(float(gm) - m) < 1e-12 and abs(float(gv) - v) < 1e-12, mode

def test_precision_mean_stays_in_the_convex_hull_and_poe_is_clipped_at_the_prior():
    g = torch.Generator().manual_seed(3)
    mus, vs = torch.randn(6, 50, generator=g), torch.rand(6, 50, generator=g) + 0.01
    m, _ = aggregate_posteriors(mus, vs, 5.0, 1.0, 'precision_mean')
    assert (m >= mus.min(0).values - 1e-6).all() and (m <= mus.max(0).values + 1e-6).all()
    _, v = aggregate_posteriors(torch.zeros(3, 2), torch.full((3, 2), 10.0), 0., 1., 'poe')   # sum of precisions < (N-1) * prior's
    assert torch.allclose(v, torch.ones(2))

def test_printed_rule_collapses_and_poe_with_fixed_prior_does_not():
    rng = np.random.default_rng(0)
    Xs = [torch.ones(20, 1, dtype=torch.float64) for _ in range(10)]; ys = [2 + torch.from_numpy(rng.normal(size=20)) for _ in range(10)]
    _, cc = linear_posterior(torch.cat(Xs), torch.cat(ys), 1.0)
    printed = [float(c[0, 0]) for _, c in conjugate_rounds(Xs, ys, 1.0, 'as_printed', 'last_global', rounds=5)]
    assert cc[0, 0] / printed[-1] > 1e4 and all(a / b > 10 for a, b in zip(printed, printed[1:]))
    exact = [float(c[0, 0]) for _, c in conjugate_rounds(Xs, ys, 1.0, 'poe', 'fixed', rounds=3)]
    assert np.allclose(exact, float(cc[0, 0]), rtol=1e-10)

def test_posterior_round_trip_prior_and_elbo():
    torch.manual_seed(0); net = bayes_mlp(5, 3, hidden=4)
    P = sum(p.numel() for n, p in net.named_parameters() if n.endswith('_mu'))
    m, v = torch.randn(P), torch.rand(P) + 0.01
    m2, v2 = get_posterior(set_posterior(net, m, v))
    assert torch.allclose(m2, m, atol=1e-6) and torch.allclose(v2, v, rtol=1e-4)
    set_prior(net, torch.zeros(P), torch.full((P,), 2.0))
    kl = sum(l.kl() for l in net.modules() if isinstance(l, MeanFieldLinear))
    assert torch.allclose(kl, gaussian_kl(m2, v2, 0., 2.0), rtol=1e-4)
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    loss = neg_elbo(net, x, y, n_data=80); loss.backward()
    assert torch.isfinite(loss) and all(p.grad is not None for p in net.parameters())
    assert torch.equal(forward(net, x, sample=False), forward(net, x, sample=False))      # the means are deterministic

def test_train_client_is_reproducible_and_finds_a_slope():
    x = torch.linspace(-2, 2, 100).unsqueeze(1); y = 3 * x[:, 0]
    def fit(): return train_client(torch.nn.Sequential(MeanFieldLinear(1, 1)), torch.zeros(2), torch.full((2,), 0.01), x, y,
                                   torch.Generator().manual_seed(0), epochs=30, lr=0.05, likelihood='gaussian', noise_var=0.01)
    (m1, v1), (m2, v2) = fit(), fit()
    assert torch.equal(m1, m2) and torch.equal(v1, v2) and abs(float(m1[0]) - 3) < 0.1

def test_ece_on_a_hand_computed_case():
    p = torch.tensor([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7]])
    # confidences 0.9, 0.6, 0.7 fall in three bins; correct = 1, 0, 1
    assert abs(expected_calibration_error(p, torch.tensor([0, 1, 1])) - (0.1 + 0.6 + 0.3) / 3) < 1e-6

def test_run_bayesfl_is_deterministic_and_predictive_is_a_distribution():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    a, b = (run_bayesfl(fd, rounds=2, clients_per_round=3, hidden=8, seed=1) for _ in range(2))
    assert torch.equal(a['mu'], b['mu']) and a['accuracy'] == b['accuracy']
    p, v = predictive(a['model'], fd.x_test[:20], samples=5)
    assert torch.allclose(p.sum(1), torch.ones(20), atol=1e-5) and (v >= 0).all()
    seen = []
    run_bayesfl(fd, rounds=1, clients_per_round=2, hidden=4, exchange=lambda t, ids, posts, mu: seen.append(len(posts)) or [])
    assert seen == [2]                                                   # the hook sees both; accepting none keeps the global

def test_posterior_rule_aggregates_the_clients_mu_and_softplus_rho():
    "The engine rule reads (mu, rho) from the stacked updates, aggregates with the mode, restarts rho, on a hand-made case."
    from hetfl_explore.crowd.bayesian import posterior_rule, _posterior_index, RHO_INIT
    from hetfl_explore.engine.aggregation import AggregationInput
    from hetfl_explore.engine.models import ParamLayout
    torch.manual_seed(0); net = bayes_mlp(3, 2, hidden=2, prior_var=0.5); lay = ParamLayout(net); g = lay.flatten(net)
    mu_i, rho_i = _posterior_index(net)
    assert torch.equal(g[mu_i], get_posterior(net)[0]) and torch.allclose(F.softplus(g[rho_i]) ** 2, get_posterior(net)[1])
    W = g + 0.1 * torch.randn(3, len(g))
    for mode in MODES:
        rule = posterior_rule(net, mode, prior_var=0.5)
        new = g + rule(AggregationInput(g, W - g, np.full(3, 1 / 3)))
        mu, var = aggregate_posteriors(W[:, mu_i], F.softplus(W[:, rho_i]) ** 2, 0., 0.5, mode)
        torch.testing.assert_close(new[mu_i], mu.float()); torch.testing.assert_close(rule.posterior[1], var)
        assert torch.all(new[rho_i] == RHO_INIT)

def test_elbo_loss_is_the_per_sample_elbo_and_trains_in_both_backends():
    from hetfl_explore.crowd.bayesian import elbo_loss, run_bayesfl_engine
    from hetfl_explore.foundation.data import tiny_digits_federation
    torch.manual_seed(1); net = bayes_mlp(4, 3, hidden=5); x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    per = elbo_loss(net)(forward(net, x, sample=False), y, dict(net.named_parameters()), 40)
    torch.testing.assert_close(per.mean(), F.cross_entropy(forward(net, x, sample=False), y) + (net[1].kl() + net[3].kl()) / 40)
    with torch.no_grad(): torch.testing.assert_close(net(x), forward(net, x, sample=False))   # no gradients: the means
    fd = tiny_digits_federation(0)
    a, b = (run_bayesfl_engine(fd, rounds=2, clients_per_round=3, hidden=8, seed=1) for _ in range(2))
    assert torch.equal(a['mu'], b['mu']) and a['accuracy'] == b['accuracy']
    assert a['history'].meta['aggregation'].endswith('posterior_rule.<locals>.rule')

def test_aggregation_runs_on_one_thread_and_restores_the_thread_count():
    "The memory-bound rule gives the same bits whatever the caller's thread count, which it leaves as it was."
    g = torch.Generator().manual_seed(0)
    mus, vs = torch.randn(7, 1001, generator=g), torch.rand(7, 1001, generator=g) + 0.01
    before = torch.get_num_threads(); out = {}
    for n in (1, 2):
        torch.set_num_threads(n); out[n] = aggregate_posteriors(mus, vs, 0., 1., 'poe'); assert torch.get_num_threads() == n
    torch.set_num_threads(before)
    assert all(torch.equal(a, b) for a, b in zip(out[1], out[2]))
    with pytest.raises(ValueError): aggregate_posteriors(mus, -vs)
    assert torch.get_num_threads() == before                                    # restored after an error too

def test_variances_that_are_not_positive_definite_are_refused():
    from hetfl_explore.crowd.bayesian import aggregate_posteriors, linear_posterior, expected_calibration_error
    with pytest.raises(ValueError, match='positive-definite'): aggregate_posteriors(torch.zeros(3, 2), -torch.eye(2).expand(3, 2, 2).clone())
    with pytest.raises(ValueError, match='positive-definite'): aggregate_posteriors(torch.zeros(2, 2), torch.tensor([[[1., 2.], [0., 1.]]] * 2))
    for bad in (float('inf'), float('nan'), -1.0, 0.0):
        with pytest.raises(ValueError, match='vars'): aggregate_posteriors(torch.zeros(2, 2), torch.full((2, 2), bad), mode='precision_mean')
    with pytest.raises(ValueError, match='var0'): linear_posterior(torch.ones(3, 2), torch.ones(3), 1.0, var0=torch.tensor([[1., 0.], [0., -1.]]))
    with pytest.raises(ValueError, match='probs'): expected_calibration_error(torch.tensor([[1.5, -0.5], [0.2, 0.8]]), [0, 1])
    with pytest.raises(ValueError, match='y'): expected_calibration_error(torch.tensor([[0.5, 0.5]]), [2])
    with pytest.raises(ValueError, match='y'): expected_calibration_error(torch.tensor([[0.5, 0.5]]), [-1])
    assert 0 <= expected_calibration_error(np.array([[0.3, 0.7]]), np.array([np.int64(1)])) <= 1

def test_size_aware_weights_multiply_each_clients_precision():
    from hetfl_explore.crowd.bayesian import aggregate_posteriors
    m, v = torch.tensor([[0.], [3.]]), torch.ones(2, 1)
    assert aggregate_posteriors(m, v, 0., 1., 'precision_mean', weights=[1, 2])[0].item() == pytest.approx(2.0)
    assert torch.equal(aggregate_posteriors(m, v, 0., 1., 'poe', weights=[5, 5])[0], aggregate_posteriors(m, v, 0., 1., 'poe')[0])
    full = aggregate_posteriors(m, torch.eye(1).expand(2, 1, 1), 0., torch.eye(1), 'precision_mean', weights=np.array([1, 2]))
    assert full[0].item() == pytest.approx(2.0)
    for bad in ([1.0], [-1.0, 2.0], [0.0, 1.0], [float('nan'), 1.0], 'ab'):
        with pytest.raises((ValueError, TypeError), match='weights'): aggregate_posteriors(m, v, weights=bad)

def _marker(t, ids, posts, mu):
    "Client j's means: 1 at parameter j, 0 elsewhere; unit variances, so the global mean's first entries are the client weights."
    return [(torch.eye(len(ids), len(m))[j], torch.ones_like(v)) for j, (m, v) in enumerate(posts)]

@pytest.mark.parametrize('seed', range(3))
def test_size_weighting_makes_client_weights_proportional_to_sizes(seed):
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(seed); k = 4
    ids = np.random.default_rng(seed).choice(fd.num_clients, k, replace=False)           # run_bayesfl's round-0 draw
    n = fd.client_sizes[ids].astype(float)
    got = {w: run_bayesfl(fd, rounds=1, clients_per_round=k, mode='precision_mean', hidden=4, seed=seed, exchange=_marker, weighting=w)['mu'][:k]
           for w in ('variance', 'size')}
    assert np.allclose(got['size'].numpy(), n / n.sum(), atol=1e-6) and np.allclose(got['variance'].numpy(), 1 / k, atol=1e-6)

def test_size_weighting_reaches_accepted_subsets_and_changes_the_result():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    keep_two = lambda t, ids, posts, mu: {int(c): p for c, p in list(zip(ids, _marker(t, ids, posts, mu)))[1:3]}   # two of four arrive
    ids = np.random.default_rng(0).choice(fd.num_clients, 4, replace=False); n = fd.client_sizes[ids[1:3]].astype(float)
    mu = run_bayesfl(fd, rounds=1, clients_per_round=4, mode='precision_mean', hidden=4, exchange=keep_two, weighting='size')['mu']
    assert np.allclose(mu[1:3].numpy(), n / n.sum(), atol=1e-6) and float(mu[0]) == 0.0
    a, b = (run_bayesfl(fd, rounds=3, clients_per_round=5, hidden=8, weighting=w)['mu'] for w in ('variance', 'size'))
    assert float((a - b).abs().max()) > 1e-3

def test_weighting_and_exchange_are_checked_by_name():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0)
    with pytest.raises(ValueError, match='weighting'): run_bayesfl(fd, rounds=1, weighting='count')
    with pytest.raises(ValueError, match='weighting'): run_bayesfl(fd, rounds=1, weighting='size', server=lambda m, v, ids: (m[0], v[0]))
    with pytest.raises(ValueError, match='exchange'): run_bayesfl(fd, rounds=1, clients_per_round=3, hidden=4, exchange=lambda t, ids, posts, mu: posts[:2])
    with pytest.raises(ValueError, match='exchange'): run_bayesfl(fd, rounds=1, clients_per_round=2, hidden=4, exchange=lambda t, ids, posts, mu: {99: posts[0]})
    from hetfl_explore.crowd.bayesian import posterior_rule, run_bayesfl_engine
    with pytest.raises(ValueError, match='weighting'): posterior_rule(bayes_mlp(2, 2), weighting='count')
    with pytest.raises(ValueError, match='weighting'): run_bayesfl_engine(fd, rounds=1, weighting='count')

@pytest.mark.parametrize('w', [[0.1, 0.3, 0.6], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
def test_engine_rule_size_weighting_uses_the_engines_weights(w):
    from hetfl_explore.crowd.bayesian import posterior_rule, _posterior_index
    from hetfl_explore.engine.aggregation import AggregationInput
    from hetfl_explore.engine.models import ParamLayout
    net = bayes_mlp(3, 2, hidden=2); mu_i, rho_i = _posterior_index(net); P = ParamLayout(net).size
    ups = torch.zeros(3, P); ups[:, rho_i] = float(np.log(np.e - 1)); ups[torch.arange(3), mu_i[:3]] = 1.0
    for weighting, want in (('size', np.array(w)), ('variance', np.full(3, 1 / 3))):
        rule = posterior_rule(net, 'precision_mean', weighting=weighting); rule(AggregationInput(torch.zeros(P), ups, np.array(w)))
        assert np.allclose(rule.posterior[0][:3].numpy(), want, atol=1e-6)
