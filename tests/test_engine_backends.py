"Training backends near the hardware: `pool_before_relu` (the engine's default training twin) is bit-identical to the model it reorders; the fused MLP backend follows the sequential one."
import dataclasses
import numpy as np, pytest, torch, torch.nn as nn, torch.nn.functional as F
from hetfl_explore.engine.config import RunConfig, LocalWork
from hetfl_explore.engine.simulation import Simulation
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.models import cnn, mlp, ParamLayout
from hetfl_explore.engine.backends import pool_before_relu, BACKENDS, batch_plan
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.foundation.data import FederatedData

torch.set_num_threads(1)
SEEDS = (0, 1, 2, 3)   # seeds of the bit-identity checks

def small_images(K=6, seed=0, side=8):
    "A tiny image federation: K clients of 10-39 random 3-channel images, class = which colour channel is brighter."
    g = torch.Generator().manual_seed(seed); n = 40 * K
    x = torch.rand(n + 60, 3, side, side, generator=g); y = (x[:, 0].mean((1, 2)) > x[:, 1].mean((1, 2))).long()
    a = torch.randint(0, 2, (n + 60,), generator=g)
    sizes = np.random.default_rng(seed).integers(10, 40, K)
    idx = list(torch.arange(int(sizes.sum())).split(sizes.tolist()))
    return FederatedData(x[:n], y[:n], a[:n], idx, x[n:], y[n:], a[n:], 2, 2)

class OldPath(Simulation):
    "The reference engine without the twin: local training on `self.net` itself."
    @property
    def fast_net(self): return self.net

def _same_run(h1, h2):
    assert torch.equal(h1.final_params, h2.final_params)
    cols = ['accuracy', 'worst_group_accuracy', 'loss', 'train_loss', 'selected', 'weights']
    assert h1.rounds[cols].equals(h2.rounds[cols])

@pytest.mark.parametrize('backend', ['sequential', 'batched'])
@pytest.mark.parametrize('seed', SEEDS)
def test_twin_runs_are_bit_identical_to_training_on_the_net_itself(backend, seed):
    "Whole runs (momentum, weight decay, FedProx, client sizes 10-39) give exactly the parameters and history of training on `net` itself."
    data = small_images(seed=seed)
    cfg = RunConfig(device='cpu', rounds=3, clients_per_round=4, batch_size=8, lr=0.05, momentum=0.5, weight_decay=1e-3, prox_mu=0.01,
                    seed=seed, backend=backend)
    model = lambda: cnn(3, 2, width=4, img_size=8, hidden=8)
    new, old = (cls(model, data, UniformSelector(), cfg) for cls in (Simulation, OldPath))
    assert new.fast_net is not new.net and old.fast_net is old.net
    _same_run(new.run(progress=False), old.run(progress=False))

@pytest.mark.parametrize('name', ['batched', 'sequential'])   # the fused backend trains MLPs, which the twin leaves alone
def test_backends_give_identical_updates_with_the_twin(name):
    "One call of each backend: the twin's (C,P) parameters and losses equal the model's, bit for bit (GroupNorm CNN)."
    torch.manual_seed(0)
    net = cnn(3, 2, width=4, img_size=8, hidden=8, norm='group'); lay = ParamLayout(net); w0 = lay.flatten(net)
    x, y = torch.randn(60, 3, 8, 8), torch.randint(0, 2, (60,))
    sizes = np.array([9, 20, 31]); local, valid, steps = batch_plan(sizes, 6, np.random.default_rng(1), epochs=2)
    table = np.split(np.arange(60), np.cumsum(sizes)[:-1])
    pool = torch.from_numpy(np.stack([np.pad(t, (0, 31 - len(t)))[l] for t, l in zip(table, local)]))
    run = lambda m: BACKENDS[name](LocalWork(m, lay, w0, x, y, pool, torch.from_numpy(valid), steps, np.full(3, 0.1), RunConfig(device='cpu', momentum=0.9)))
    (p1, l1), (p2, l2) = run(net), run(pool_before_relu(net))
    assert torch.equal(p1, p2) and torch.equal(l1, l2)

def test_what_is_reordered_and_what_is_not():
    "Nested Sequentials are reordered, a pool returning indices and non-Sequential models are left alone, the original never changes."
    inner = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.MaxPool2d(1))
    outer = nn.Sequential(inner, nn.Flatten(), nn.ReLU(), nn.Linear(8, 2))
    twin = pool_before_relu(outer)
    assert [type(m) for m in twin[0]] == [nn.Conv2d, nn.MaxPool2d, nn.MaxPool2d, nn.ReLU]   # ReLU moves past both pools
    assert [type(m) for m in inner] == [nn.Conv2d, nn.ReLU, nn.MaxPool2d, nn.MaxPool2d]       # the original is unchanged
    x = torch.randn(3, 1, 6, 6); assert torch.equal(twin(x), outer(x))
    keep = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2, return_indices=True)); assert pool_before_relu(keep) is keep
    avg = nn.Sequential(nn.ReLU(), nn.AvgPool2d(2)); assert pool_before_relu(avg) is avg          # averaging does not commute with ReLU
    lin = nn.Linear(3, 2); assert pool_before_relu(lin) is lin
    assert not pool_before_relu(cnn(3, 2, width=2, img_size=8, hidden=4).eval()).training

def test_ties_and_negative_windows_route_gradients_identically():
    "Windows of equal values and windows with no positive value: same outputs and gradients as ReLU then pooling."
    x = torch.tensor([[[[1., 1., -2., -3.], [0., 1., -1., -5.], [2., 2., 0., 0.], [2., 2., 0., -0.]]]], requires_grad=True)
    seq = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2)); twin = pool_before_relu(seq)
    assert [type(m) for m in twin] == [nn.MaxPool2d, nn.ReLU]
    g = [torch.autograd.grad((m(x) * torch.arange(1., 5.).view(1, 1, 2, 2)).sum(), x)[0] for m in (seq, twin)]
    assert torch.equal(seq(x), twin(x)) and torch.equal(*g)

def test_evaluation_on_the_twin_is_identical():
    "`evaluate` on the twin gives exactly the model's accuracy, group accuracies and loss (why the test forward may use it too)."
    from hetfl_explore.engine.models import evaluate
    data = small_images(seed=5); torch.manual_seed(5)
    net = cnn(3, 2, width=4, img_size=8, hidden=8); flat = ParamLayout(net).flatten(net) * 1.5
    r1, r2 = (evaluate(m, data.x_test, data.y_test, data.a_test, 2, 2, batch_size=16, params=flat) for m in (net, pool_before_relu(net)))
    assert r1['accuracy'] == r2['accuracy'] and r1['loss'] == r2['loss']
    np.testing.assert_array_equal(r1['group_accuracy'], r2['group_accuracy'])


def reference_sequential(model, layout, w0, x, y, idx, mask, steps, lr, cfg, client_loss=None, n_data=None):
    "The sequential backend as it was before its batches were gathered once per client (one gather per step)."
    C, S = idx.shape[:2]
    start = w0 if w0.dim() == 2 else w0.expand(C, -1)
    new, losses = start.clone(), torch.zeros(C, S)
    for c in range(C):
        layout.load(model, start[c]); w0_views = layout.unflatten(start[c])
        opt = torch.optim.SGD(model.parameters(), lr=float(lr[c]), momentum=cfg.momentum, weight_decay=cfg.weight_decay)
        for s in range(int(steps[c])):
            b = idx[c, s][mask[c, s]]
            if client_loss is None: loss = F.cross_entropy(model(x[b]), y[b])
            else: loss = client_loss(model(x[b]), y[b], dict(model.named_parameters()), int(n_data[c])).mean()
            losses[c, s] = loss.detach()
            if cfg.prox_mu: loss = loss + cfg.prox_mu / 2 * sum((p - w0_views[n]).pow(2).sum() for n, p in model.named_parameters())
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
        new[c] = layout.flatten(model)
    return new, losses

@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('hook', [False, True])
def test_sequential_backend_matches_the_per_step_reference(seed, hook):
    "Gathering a client's batches once gives bit for bit the per-step loop (unequal clients, a zero-step client, momentum, FedProx, a loss hook)."
    from hetfl_explore.engine.backends import train_sequential
    torch.manual_seed(seed); net = pool_before_relu(cnn(3, 2, width=4, img_size=8, hidden=8)); lay = ParamLayout(net)
    x, y = torch.randn(70, 3, 8, 8).contiguous(memory_format=torch.channels_last), torch.randint(0, 2, (70,))
    sizes = np.array([9, 0, 30, 31]); local, valid, steps = batch_plan(sizes, 7, np.random.default_rng(seed), epochs=2)
    table = np.split(np.arange(70), np.cumsum(sizes)[:-1])
    pool = torch.from_numpy(np.stack([np.pad(t, (0, 31 - len(t)))[l] for t, l in zip(table, local)]))
    loss = (lambda out, yy, params, n: F.cross_entropy(out, yy, reduction='none') * (1 + 1 / n)) if hook else None
    args = (net, lay, lay.flatten(net), x, y, pool, torch.from_numpy(valid), steps, np.array([.1, .2, .05, .1]),
            RunConfig(device='cpu', momentum=0.9, weight_decay=1e-3, prox_mu=0.1))
    (p1, l1), (p2, l2) = train_sequential(LocalWork(*args, client_loss=loss, n_data=sizes)), reference_sequential(*args, client_loss=loss, n_data=sizes)
    assert torch.equal(p1, p2) and torch.equal(l1, l2)

# ---- one read from the device per evaluation and per report (the GPU path): the same numbers as the per-item reads
def test_evaluate_reads_once_and_sums_the_loss_like_python_floats():
    from hetfl_explore.engine.models import evaluate
    d, model = small_images(K=4, seed=5), cnn(3, 2, width=4, img_size=8, hidden=8)
    r = evaluate(model, d.x_test, d.y_test, d.a_test, 2, 2, batch_size=7)   # 60 test images: 9 batches
    with torch.no_grad():   # the reference reading: one Python float (a double) per batch, summed in order
        ref = 0.0
        for i in range(0, len(d.x_test), 7): ref += F.cross_entropy(model(d.x_test[i:i + 7]), d.y_test[i:i + 7], reduction='sum').item()
    assert r['loss'] == ref / len(d.x_test) and r['group_counts'].sum() == len(d.x_test)

@pytest.mark.parametrize('loss_before', ['first_batch', 'off'])
def test_report_reads_once_and_divides_in_float32_like_torch(loss_before):
    sim = Simulation(lambda: mlp(64, 8, 10), digits_federation(num_clients=12, seed=0),
                     UniformSelector(), RunConfig(rounds=1, clients_per_round=5, batch_size=7, seed=2, loss_before=loss_before, device='cpu'))
    plan = sim.begin_round(); new, losses = sim.train_round(plan)
    seen = {}
    sim.selector.observe = lambda t, reports: seen.setdefault('r', reports)
    steps = plan.steps.copy(); ref = (losses.sum(1) / torch.as_tensor(np.maximum(steps, 1))).numpy().astype(np.float64)
    first = losses[:, 0].numpy().astype(np.float64); sim.finish_round(plan, new, losses)
    r = seen['r']
    assert np.array_equal(r.loss, ref) and r.loss.dtype == np.float64
    assert np.array_equal(r.loss_before, first) if loss_before == 'first_batch' else np.isnan(r.loss_before).all()
    assert np.array_equal(r.update_norm, r.updates.norm(dim=1).numpy().astype(np.float64))

def test_gather_rows_is_indexing_in_the_pools_layout():
    "The backends' gather of samples and labels: `x[rows]` exactly, strides included (channels-last pools stay channels-last)."
    from hetfl_explore.engine.backends import gather_rows
    g = torch.Generator().manual_seed(0)
    rows = torch.randint(0, 50, (37,), generator=g)
    for x in (torch.rand(50, 3, 6, 5, generator=g), torch.rand(50, 3, 6, 5, generator=g).contiguous(memory_format=torch.channels_last),
              torch.rand(50, 64, generator=g), torch.rand(50, 1, 4, 4, generator=g).contiguous(memory_format=torch.channels_last),
              torch.randint(0, 10, (50,), generator=g)):
        got, ref = gather_rows(x, rows), x[rows]
        assert torch.equal(got, ref) and got.stride() == ref.stride()

def test_sequential_reuses_one_optimizer_like_a_fresh_one_per_client():
    "One SGD for all clients (state cleared, lr set per client) equals a new `torch.optim.SGD` per client, momentum included."
    d = small_images(K=5, seed=3)
    for momentum in (0.0, 0.9):
        cfg = RunConfig(rounds=1, clients_per_round=5, batch_size=7, lr=0.05, momentum=momentum, seed=1, backend='sequential', device='cpu',
                        client_lr=[0.05, 0.01, 0.1, 0.02, 0.07])
        sim = Simulation(lambda: cnn(3, 2, width=4, img_size=8, hidden=8), d, UniformSelector(), cfg)
        plan = sim.begin_round(); new, _ = sim.train_round(plan)
        model, layout = sim.fast_net, sim.layout
        for i, c in enumerate(plan.rep):   # the textbook loop, one client at a time
            layout.load(sim.net, sim.params); opt = torch.optim.SGD(model.parameters(), lr=float(sim.lr[c]), momentum=momentum)
            rows = torch.as_tensor(sim.table[c][plan.local[i]])
            for s in range(int(plan.steps[i])):
                b = rows[s][torch.as_tensor(plan.valid[i, s])]
                loss = F.cross_entropy(model(sim.x[b]), sim.y[b]); opt.zero_grad(); loss.backward(); opt.step()
            assert torch.equal(layout.flatten(sim.net), new[i])

# ---------------------------------------------------------------------------------------------- the fused MLP backend
FUSED_TOL = 2e-5   # float32: the fused kernels sum in another order than torch's matmuls

def _mlp_plan(seed, sizes=(7, 12, 3, 9, 16), B=4, epochs=2, hidden=(8, 5)):
    "A random MLP, pool and batch plan of clients of unequal sizes (the last batch of an epoch partial)."
    torch.manual_seed(seed); net = mlp(6, list(hidden), 3); lay = ParamLayout(net)
    n = int(sum(sizes)); x, y = torch.randn(n, 6), torch.randint(0, 3, (n,))
    local, valid, steps = batch_plan(np.array(sizes), B, np.random.default_rng(seed), epochs=epochs)
    pool = torch.from_numpy(local + np.cumsum([0, *sizes[:-1]])[:, None, None])
    return net, lay, x, y, pool, torch.from_numpy(valid), steps

@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('cfg', [RunConfig(device='cpu'), RunConfig(device='cpu', momentum=0.9, weight_decay=1e-3, prox_mu=0.1), RunConfig(device='cpu', momentum=0.5)])
def test_fused_matches_the_sequential_backend(seed, cfg):
    "Per-client parameters and batch losses equal `torch.optim.SGD`'s on autograd gradients, up to float32 rounding."
    net, lay, x, y, pool, valid, steps = _mlp_plan(seed)
    starts = lay.flatten(net) + 0.01 * torch.randn(len(steps), lay.size)   # one start per client, as sub-models have
    lr = np.linspace(0.05, 0.2, len(steps))
    for w0 in (lay.flatten(net), starts):
        got, ref = (BACKENDS[b](LocalWork(net, lay, w0, x, y, pool, valid, steps, lr, cfg)) for b in ('fused', 'sequential'))
        torch.testing.assert_close(got[0], ref[0], atol=FUSED_TOL, rtol=0); torch.testing.assert_close(got[1], ref[1], atol=FUSED_TOL, rtol=0)

def test_fused_results_do_not_depend_on_the_threads():
    "Each client runs start to end in one thread, so any split over threads gives the same bits."
    net, lay, x, y, pool, valid, steps = _mlp_plan(0, sizes=tuple(range(3, 40, 3)))
    run = lambda: BACKENDS['fused'](LocalWork(net, lay, lay.flatten(net), x, y, pool, valid, steps, np.full(len(steps), 0.1), RunConfig(device='cpu', momentum=0.9)))
    outs = []
    for threads in (1, 2, 5):
        torch.set_num_threads(threads); outs.append(run())
    torch.set_num_threads(1)
    assert all(torch.equal(o[0], outs[0][0]) and torch.equal(o[1], outs[0][1]) for o in outs[1:])

def test_fused_runs_agree_with_sequential_runs():
    "A whole run (selection, plans, FedAvg, evaluation) with the fused backend follows the sequential run."
    data = digits_federation(num_clients=12, samples_per_client=(15, 25), seed=0)
    cfg = RunConfig(rounds=3, clients_per_round=5, batch_size=10, lr=0.05, momentum=0.5, seed=3, device='cpu')   # the fused backend is CPU-only
    h = {b: Simulation(lambda: mlp(64, 32, 10), data, UniformSelector(), dataclasses.replace(cfg, backend=b)).run(progress=False)
         for b in ('fused', 'sequential')}
    assert h['fused'].meta['backend'] == 'fused' and h['fused'].rounds.selected.equals(h['sequential'].rounds.selected)
    torch.testing.assert_close(h['fused'].final_params, h['sequential'].final_params, atol=1e-4, rtol=0)

def test_auto_picks_fused_only_where_it_can_run():
    "'auto' trains an MLP fused on a CPU; a client_loss or a CNN keeps the other backends; an explicit 'fused' says what is missing."
    data, cfg = small_images(), RunConfig(rounds=1, clients_per_round=2, batch_size=5, device='cpu')   # on a GPU 'auto' is batched
    flat = lambda: mlp(3 * 8 * 8, 8, 2)
    assert Simulation(flat, data, UniformSelector(), cfg).backend == 'fused'
    ce = lambda out, y, params, n: torch.nn.functional.cross_entropy(out, y, reduction='none')
    assert Simulation(flat, data, UniformSelector(), cfg, client_loss=ce).backend == 'batched'
    conv = lambda: cnn(3, 2, width=4, img_size=8, hidden=8)
    with pytest.raises(ValueError, match="backend='fused' trains float32 Linear/ReLU chains"):
        Simulation(conv, data, UniformSelector(), dataclasses.replace(cfg, backend='fused'))
    with pytest.raises(ValueError, match='a client_loss needs'):
        Simulation(flat, data, UniformSelector(), dataclasses.replace(cfg, backend='fused'), client_loss=ce)
