"Engine properties the notebook cannot hold compactly: plan invariants, backend agreement, resume, store, system heterogeneity."
import dataclasses, re
from pathlib import Path
import numpy as np, pandas as pd, pytest, torch, torch.nn as nn
from hypothesis import given, settings, strategies as st
from hetfl_explore.engine.config import RunConfig, LocalWork
from hetfl_explore.engine.simulation import Simulation, run_fl
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.engine.system import SystemProfiles
from hetfl_explore.engine.store import RunStore
from hetfl_explore.engine.backends import batch_plan, BACKENDS
from hetfl_explore.engine.models import cnn, mlp, check_vmappable, ParamLayout, evaluate
from hetfl_explore.engine.protocol import Selector, Selection, UniformSelector, RoundRobinSelector
from hetfl_explore.engine.simulation import MESSAGE_TYPES
from hetfl_explore.foundation.data import FederatedData

torch.set_num_threads(1)

@pytest.fixture(scope='module')
def fed(): return digits_federation(num_clients=12, alpha=0.5, seed=0)

def small_images(K=6, seed=0):
    g = torch.Generator().manual_seed(seed); n = 40 * K
    x = torch.rand(n + 60, 3, 8, 8, generator=g); y = (x[:, 0].mean((1, 2)) > x[:, 1].mean((1, 2))).long()
    a = torch.randint(0, 2, (n + 60,), generator=g)
    sizes = np.random.default_rng(seed).integers(10, 40, K)
    idx = list(torch.arange(int(sizes.sum())).split(sizes.tolist()))
    return FederatedData(x[:n], y[:n], a[:n], idx, x[n:], y[n:], a[n:], 2, 2)

MLP = lambda: mlp(64, 16, 10)

@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=6), st.integers(1, 8), st.integers(1, 3), st.integers(0, 99))
def test_batch_plan_epochs_cover_each_sample_once(sizes, B, E, seed):
    local, valid, steps = batch_plan(np.array(sizes), B, np.random.default_rng(seed), epochs=E)
    for c, n in enumerate(sizes):
        nb = -(-n // B); assert steps[c] == E * nb
        for e in range(E):
            got = local[c, e * nb:(e + 1) * nb][valid[c, e * nb:(e + 1) * nb]]
            assert sorted(got.tolist()) == list(range(n))
        assert not valid[c, steps[c]:].any() and valid[c, :steps[c]].any(1).all()

@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=5), st.integers(1, 8), st.integers(1, 12), st.integers(0, 99))
def test_batch_plan_steps_are_full_and_balanced(sizes, B, S, seed):
    local, valid, steps = batch_plan(np.array(sizes), B, np.random.default_rng(seed), steps=S)
    assert valid.all() and (steps == S).all()
    for c, n in enumerate(sizes):
        seq = local[c].reshape(-1); assert seq.max() < n
        counts = np.bincount(seq, minlength=n); assert counts.max() - counts.min() <= 1   # successive full shuffles

@pytest.mark.parametrize('extra', [dict(), dict(momentum=0.9, weight_decay=1e-3, prox_mu=0.05), dict(local_steps=3),
                                   dict(aggregator='fednova', local_epochs=2), dict(aggregator='fedavgm', server_momentum=0.9)])
def test_backends_agree_on_groupnorm_cnn(extra):
    data = small_images()
    cfg = RunConfig(device='cpu', rounds=3, clients_per_round=4, batch_size=8, lr=0.05, client_lr=tuple(np.linspace(0.02, 0.08, 6)), **extra)
    model = lambda: cnn(3, 2, width=4, img_size=8, hidden=8, norm='group')
    hs = {b: run_fl(model, data, UniformSelector(), dataclasses.replace(cfg, backend=b)) for b in ('batched', 'sequential')}
    torch.testing.assert_close(hs['batched'].final_params, hs['sequential'].final_params, atol=1e-5, rtol=0)
    assert hs['batched'].rounds.selected.equals(hs['sequential'].rounds.selected)

def test_blocks_do_not_change_the_result(fed):
    cfg = RunConfig(device='cpu', rounds=2, clients_per_round=8, batch_size=5, lr=0.1, backend='batched', momentum=0.5)
    one = run_fl(MLP, fed, UniformSelector(), cfg)
    blocks = run_fl(MLP, fed, UniformSelector(), dataclasses.replace(cfg, block_clients=3))
    torch.testing.assert_close(one.final_params, blocks.final_params, atol=1e-6, rtol=0)

def test_same_seed_same_history_with_devices(fed):
    prof = SystemProfiles.sample(12, seed=2, speed_sigma=0.8, availability=0.6, dropout=0.3)
    cfg = RunConfig(device='cpu', rounds=5, clients_per_round=4, batch_size=10, lr=0.2, seed=5)
    h1, h2 = (run_fl(MLP, fed, UniformSelector(), cfg, profiles=prof) for _ in range(2))
    cols = ['accuracy', 'loss', 'selected', 'reported', 'weights', 'sim_time', 'energy', 'bytes']
    assert h1.rounds[cols].equals(h2.rounds[cols]) and torch.equal(h1.final_params, h2.final_params)
    h3 = run_fl(MLP, fed, UniformSelector(), dataclasses.replace(cfg, seed=6), profiles=prof)
    assert not h1.rounds.selected.equals(h3.rounds.selected)
    assert h1.rounds.n_dropped.sum() > 0

class LossGreedy(Selector):
    "Stateful and query-using: asks 2k candidates for their loss, keeps the k worst, remembers reported losses."
    name = 'loss_greedy'
    def reset(self, num_clients, seed): super().reset(num_clients, seed); self.seen = np.zeros(num_clients)
    def select(self, round, clients, k, rng):
        cand = rng.choice(clients.available, size=min(2 * k, len(clients.available)), replace=False)
        return np.sort(cand[np.argsort(-clients.ask(cand, 'loss'), kind='stable')[:k]])
    def observe(self, round, reports): self.seen[reports.ids] += reports.loss

def test_resume_reaches_the_uninterrupted_result(fed, tmp_path):
    cfg = RunConfig(device='cpu', rounds=6, clients_per_round=3, batch_size=10, lr=0.2, aggregator='fedavgm', server_momentum=0.7, seed=4)
    prof = SystemProfiles.sample(12, seed=0, dropout=0.2)
    full = run_fl(MLP, fed, LossGreedy(), cfg, profiles=prof)
    store = RunStore(tmp_path / 'r.sqlite')
    def boom(sim, row):
        if row['round'] == 3: raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt): run_fl(MLP, fed, LossGreedy(), cfg, profiles=prof, store=store, callbacks=[boom])
    assert store.runs()['round'].tolist() == [3]   # the interrupted round's checkpoint comes after its callbacks
    resumed = run_fl(MLP, fed, LossGreedy(), cfg, profiles=prof, store=store)
    assert torch.equal(resumed.final_params, full.final_params)
    cols = ['accuracy', 'selected', 'reported', 'weights', 'queries', 'bytes', 'total_energy']
    assert resumed.rounds[cols].equals(full.rounds[cols])
    assert (full.rounds.queries == 6).all()   # 2k candidates asked every round, and counted in the bytes
    trained = []   # a finished run comes back from the store without training a round
    again = run_fl(MLP, fed, LossGreedy(), cfg, profiles=prof, store=store, callbacks=[lambda sim, row: trained.append(row['round'])])
    assert trained == [] and torch.equal(again.final_params, full.final_params)
    other = Simulation(MLP, fed, LossGreedy(), dataclasses.replace(cfg, seed=5), profiles=prof, store=store)
    assert other.key != Simulation(MLP, fed, LossGreedy(), cfg, profiles=prof, store=store).key

def test_energy_budgets_and_patience(fed):
    prof = SystemProfiles.sample(12, seed=0, energy_budget=0.5)
    h = run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=50, clients_per_round=6, batch_size=10), profiles=prof)
    assert h.stop_reason == 'no client available' and len(h) < 50
    h = run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=60, clients_per_round=2, batch_size=10, lr=0.5, patience=2))
    best, since, stop = -np.inf, 0, None   # replay the patience rule on the recorded curve: the run stopped where it says
    for t, acc in enumerate(h.rounds.accuracy):
        best, since = (acc, 0) if acc > best else (best, since + 1)
        if since >= 2: stop = t; break
    assert (h.stop_reason, len(h)) == (('rounds', 60) if stop is None else ('early_stopping', stop + 1))

def test_bad_inputs(fed):
    bn = lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.LazyLinear(2))
    with pytest.raises(ValueError, match='BatchNorm'): check_vmappable(bn())
    with pytest.raises(ValueError, match='client_lr has 3 entries'): Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', client_lr=(0.1,) * 3))
    with pytest.raises(ValueError, match="budget_on='energy' needs SystemProfiles"):
        Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', budget=1.0, budget_on='energy'))
    class Bad(Selector):
        def select(self, round, clients, k, rng): return [0, 99]
    with pytest.raises(ValueError, match=r'unavailable or unknown clients \[99\]'): run_fl(MLP, fed, Bad(), RunConfig(device='cpu', rounds=1))
    with pytest.raises(ValueError, match='RunConfig.batch_size=0'): RunConfig(device='cpu', batch_size=0)

def test_server_eval_and_loss_before(fed):
    seen = {}
    class Spy(UniformSelector):
        def observe(self, round, reports): seen['r'] = reports
    run_fl(MLP, fed, Spy(), RunConfig(device='cpu', rounds=1, clients_per_round=3, val_fraction=0.3, batch_size=10))
    r = seen['r']; acc, loss = r.server_eval(r.global_params)
    assert 0 <= acc <= 1 and loss > 0 and r.updates.shape == (3, r.global_params.numel())
    assert np.all(r.loss_before > 0) and np.allclose(r.update_norm, r.updates.norm(dim=1).numpy(), atol=1e-5)

def test_rounds_where_every_client_drops_out(fed):
    prof = SystemProfiles.sample(12, seed=0, dropout=1.0)
    for backend in ('batched', 'sequential'):
        h = run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=2, clients_per_round=3, backend=backend), profiles=prof)
        assert (h.rounds.n_dropped == 3).all() and h.rounds.reported.map(len).eq(0).all()
        init = ParamLayout(MLP()).size
        assert h.final_params.shape == (init,) and h.rounds.energy.gt(0).all()

def test_mobilenet_backends_agree_in_float64():
    "Deep nets amplify float32 rounding differences between the backends; in float64 the update logic agrees exactly."
    from hetfl_explore.engine.models import mobilenet_v2_gn
    torch.manual_seed(0)
    net = mobilenet_v2_gn(2, width_mult=0.25).double(); lay = ParamLayout(net); w0 = lay.flatten(net)
    x = torch.rand(40, 3, 32, 32, dtype=torch.float64); y = torch.randint(0, 2, (40,))
    sizes = np.array([12, 28]); local, valid, steps = batch_plan(sizes, 8, np.random.default_rng(0))
    pool = torch.from_numpy(local + np.array([0, 12])[:, None, None])
    r = {n: fn(LocalWork(net, lay, w0, x, y, pool, torch.from_numpy(valid), steps, np.array([0.05, 0.02]), RunConfig(device='cpu', lr=0.05, momentum=0.9)))
         for n, fn in BACKENDS.items() if n != 'fused'}   # the fused backend trains float32 MLPs only
    torch.testing.assert_close(r['batched'][0], r['sequential'][0], atol=1e-9, rtol=0)

def test_stop_when_sees_the_current_round_and_evaluates_it(fed):
    h = run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=20, clients_per_round=3, eval_every=5),
               stop_when=lambda hist: hist.round_rows[-1]['total_reward'] >= 10)
    assert h.stop_reason == 'stop_when' and len(h) == 4 and not np.isnan(h.rounds.accuracy.iloc[-1])
    assert h.rounds.accuracy.iloc[:3].isna().all()   # eval_every=5: rounds 0-2 were not evaluated

ACCEPT_ALL = lambda t, ids, updates, g: (np.ones(len(ids), bool), [None] * len(ids))
CE = lambda out, y, params, n_data: torch.nn.functional.cross_entropy(out, y, reduction='none')

@pytest.mark.parametrize('backend', ['batched', 'sequential'])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_hooks_that_change_nothing_give_the_same_run(fed, backend, seed):
    "An accept-all filter and the cross-entropy written as a client loss reproduce the default run bit for bit."
    prof = SystemProfiles.sample(12, seed=seed, speed_sigma=0.5, availability=0.8, dropout=0.2)
    cfg = RunConfig(device='cpu', rounds=3, clients_per_round=5, batch_size=10, lr=0.1, seed=seed, backend=backend, momentum=0.5)
    ref = run_fl(MLP, fed, UniformSelector(), cfg, profiles=prof)
    for kw in (dict(accept=ACCEPT_ALL), dict(client_loss=CE)):
        h = run_fl(MLP, fed, UniformSelector(), cfg, profiles=prof, **kw)
        assert torch.equal(h.final_params, ref.final_params)
        assert h.rounds[['accuracy', 'selected', 'reported', 'weights']].equals(ref.rounds[['accuracy', 'selected', 'reported', 'weights']])
    assert 'rejected' not in ref.rounds and 'rejection' not in ref.clients   # default histories keep their columns

def test_rejected_updates_are_left_out_and_recorded(fed):
    cfg = RunConfig(device='cpu', rounds=4, clients_per_round=6, batch_size=10, lr=0.1)
    odd = lambda t, ids, u, g: (ids % 2 == 0, ['odd' if k % 2 else None for k in ids])
    h = run_fl(MLP, fed, UniformSelector(), cfg, accept=odd)
    for _, r in h.rounds.iterrows():
        assert r.reported == [k for k in r.selected if k % 2 == 0] and r.rejected == {k: 'odd' for k in r.selected if k % 2}
        assert r.msg_upload == len(r.selected)                            # rejected updates were still uploaded
    refused = h.clients[h.clients.rejection.notna()]
    assert (refused.client % 2 == 1).all() and (refused.weight == 0).all() and not refused.reported.any()
    refuse_all = lambda t, ids, u, g: (np.zeros(len(ids), bool), ['no'] * len(ids))
    none = run_fl(MLP, fed, UniformSelector(), cfg, accept=refuse_all)          # nothing accepted: the initial model stays
    assert none.rounds.kept_previous.all() and torch.equal(none.final_params, Simulation(MLP, fed, UniformSelector(), cfg).params)

@pytest.mark.parametrize('bad, msg', [(lambda t, ids, u, g: (np.ones(len(ids)), [None] * len(ids)), 'boolean mask'),
                                      (lambda t, ids, u, g: (np.zeros(len(ids), bool), [None] * len(ids)), 'without a reason'),
                                      (lambda t, ids, u, g: (np.ones(len(ids) + 1, bool), [None] * len(ids)), 'boolean mask')])
def test_a_bad_filter_answer_is_named(fed, bad, msg):
    with pytest.raises(ValueError, match=msg): run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=1, clients_per_round=3), accept=bad)

def test_hooks_must_be_callable(fed):
    for kw in ('accept', 'client_loss'):
        with pytest.raises(TypeError, match=kw): Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=1), **{kw: 3})

def test_client_rows_match_the_reports_and_an_independent_evaluation(fed):
    "The columnar client bookkeeping: reported rows carry the round's reports; eval_clients rows equal a direct evaluation."
    prof = SystemProfiles.sample(12, seed=1, dropout=0.3)
    sim = Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=2, clients_per_round=6, batch_size=10, lr=0.1, eval_clients=True), profiles=prof)
    h = sim.run(progress=False); c = h.clients
    sel = c[c.selected.eq(True)]
    for _, r in h.rounds.iterrows():
        rows = sel[sel['round'] == r['round']]
        assert rows.client.tolist() == r.selected and rows[rows.reported.astype(bool)].client.tolist() == r.reported
        assert np.allclose(rows[rows.reported.astype(bool)].weight, r.weights) and (rows[~rows.reported.astype(bool)].weight == 0).all()
        assert rows.n_samples.tolist() == [len(fed.client_idx[k]) for k in r.selected]
    own = c[c.own_accuracy.notna() & (c['round'] == 1)]
    model = sim.model
    with torch.no_grad():
        for k in range(12):
            i = fed.client_idx[k]; out = model(fed.x[i])
            assert own.own_accuracy.iloc[k] == pytest.approx(float((out.argmax(1) == fed.y[i]).double().mean()), abs=1e-12)
            assert own.own_loss.iloc[k] == pytest.approx(float(torch.nn.functional.cross_entropy(out, fed.y[i])), rel=1e-5)

def _history_equal(a, b):
    "Same final weights and the same round rows (wall time aside)."
    assert torch.equal(a.final_params, b.final_params)
    cols = [c for c in a.rounds.columns if c != 'wall_time']
    assert a.rounds[cols].fillna(-1).equals(b.rounds[cols].fillna(-1))

@pytest.mark.parametrize('backend', ['batched', 'sequential'])
def test_the_public_split_round_is_step(fed, backend):
    "begin_round, train_round and finish_round in a row give `step`'s run bit for bit (dropouts, masks of a selector, an accept filter)."
    from hetfl_explore.selection.inclusion import FedDropout
    prof = SystemProfiles.sample(12, seed=2, dropout=0.3)
    cfg = RunConfig(device='cpu', rounds=3, clients_per_round=5, batch_size=10, lr=0.1, seed=2, backend=backend)
    odd = lambda t, ids, u, g: (ids % 2 == 0, ['odd' if k % 2 else None for k in ids])
    for sel, kw in ((UniformSelector, dict(accept=odd)), (lambda: FedDropout(min_capacity=0.3), {})):
        ref = Simulation(MLP, fed, sel(), cfg, profiles=prof, **kw).run(progress=False)
        sim, masked = Simulation(MLP, fed, sel(), cfg, profiles=prof, **kw), set()
        while sim.stop_reason is None:
            plan = sim.begin_round()
            assert plan.t == sim.round and len(plan.rep) == len(plan.steps) == plan.local.shape[0]
            masked.add(plan.masks is not None)
            sim.finish_round(plan, *sim.train_round(plan))
        assert masked == {not kw}                         # FedDropout's rounds carry sub-model masks, the others none
        sim.history.final_params = sim.params.detach().cpu().clone()
        _history_equal(sim.history, ref)

def test_finish_round_refuses_what_does_not_fit_the_plan(fed):
    sim = Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=3, clients_per_round=4, batch_size=10))
    plan = sim.begin_round(); new, losses = sim.train_round(plan)
    with pytest.raises(ValueError, match='new: expected a tensor of shape'): sim.finish_round(plan, new[:-1], losses)
    with pytest.raises(ValueError, match='losses: expected a tensor of shape'): sim.finish_round(plan, new, losses[:, :0])
    with pytest.raises(TypeError, match='plan'): sim.finish_round('plan', new, losses)
    with pytest.raises(ValueError, match='measured'): sim.finish_round(plan, new.clone(), losses, measured=lambda: {'msg_nope': 1})
    sim = Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=3, clients_per_round=4, batch_size=10))
    plan = sim.begin_round(); sim.finish_round(plan, *sim.train_round(plan))
    with pytest.raises(ValueError, match='plan is for round 0: this run is at round 1'): sim.finish_round(plan, new, losses)

def test_measured_messages_replace_the_formula_and_move_the_totals(fed):
    sim = Simulation(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=2, clients_per_round=4, batch_size=10))
    plan = sim.begin_round()
    row = sim.finish_round(plan, *sim.train_round(plan), measured=lambda: {'msg_upload': 7, 'bytes_upload': 123.0})
    assert row['msg_upload'] == 7 and row['bytes_upload'] == 123.0
    assert row['bytes'] == row['total_bytes'] == sum(row[f'bytes_{k}'] for k in MESSAGE_TYPES)
    with pytest.raises(ValueError, match='finite and non-negative'):
        plan = sim.begin_round(); sim.finish_round(plan, *sim.train_round(plan), measured=lambda: {'bytes_upload': -1.0})

def test_hooks_enter_the_run_identity_by_code_and_closure(fed, tmp_path):
    "Two closures of one factory with different settings are different runs; the same hook is the same run in any process."
    from hetfl_explore.engine.store import hook_identity
    import subprocess, sys
    def stop_after(n): return lambda h: len(h.round_rows) >= n
    assert hook_identity(stop_after(2)) != hook_identity(stop_after(3)) and hook_identity(stop_after(2)) == hook_identity(stop_after(2))
    named = stop_after(2); named.identity = 'stop after 2'
    assert hook_identity(named) == 'stop after 2' and hook_identity(None) is None
    cfg, store = RunConfig(device='cpu', rounds=4, clients_per_round=3, batch_size=10), RunStore(str(tmp_path / 'runs.sqlite'))
    a = Simulation(MLP, fed, UniformSelector(), cfg, store=store, stop_when=stop_after(2)).run(progress=False)
    b = Simulation(MLP, fed, UniformSelector(), cfg, store=store, stop_when=stop_after(3)).run(progress=False)
    assert (len(a), len(b)) == (2, 3)                     # before: one key, so the second run reused the first (2 rounds)
    code = "import numpy as np; from hetfl_explore.engine.store import hook_identity; t = np.arange(3); print(hook_identity(lambda h: t.sum() > 1))"
    outs = {subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(outs) == 1 and '#' in outs.pop()           # no memory address in the identity

@settings(max_examples=15, deadline=None)
@given(chunk=st.integers(1, 70), n=st.integers(1, 70), seed=st.integers(0, 2**16))
def test_evaluate_in_pieces_equals_one_forward(chunk, n, seed):
    "`evaluate`'s forward in pieces of `forward_chunk` rows gives the accuracy, group counts and loss of one forward per batch."
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed); net = cnn(1, 3, width=4)
    x, y, a = torch.randn(n, 1, 28, 28, generator=g), torch.randint(0, 3, (n,), generator=g), torch.randint(0, 2, (n,), generator=g)
    whole, pieces = (evaluate(net, x, y, a, 3, 2, batch_size=32, forward_chunk=c) for c in (32, chunk))
    assert pieces['accuracy'] == whole['accuracy'] and (pieces['group_counts'] == whole['group_counts']).all()
    assert abs(pieces['loss'] - whole['loss']) <= 1e-6 * max(1.0, abs(whole['loss']))

def test_a_history_stored_with_row_dicts_still_loads():
    "Runs stored before the client table went columnar kept one dict per row (missing keys: not reported); they load to the same table."
    from hetfl_explore.engine.store import History
    rows = [dict(round=0, client=3, reported=True, loss=0.5), dict(round=0, client=5, reported=False), dict(round=1, client=3, reported=True, loss=0.25)]
    d = dict(config={}, meta={}, rounds=[], clients=rows, groups=[], final_params=None, stop_reason=None)
    h = History.from_dict(d)
    pd.testing.assert_frame_equal(h.clients, pd.DataFrame(rows))
    pd.testing.assert_frame_equal(History.from_dict(h.to_dict()).clients, h.clients)   # and the columnar form round-trips

def test_cpu_assuming_tests_pin_the_device():
    "On a GPU machine these files run as here: every run configuration in them names device='cpu'."
    for name in ('test_engine.py', 'test_engine_backends.py'):
        src = (Path(__file__).parent / name).read_text()
        calls = re.findall(r'RunConfig\((?:[^()]|\([^()]*\))*\)', src)
        assert calls and all('device=' in c for c in calls), [c for c in calls if 'device=' not in c][:3]

def test_pinned_run_stays_on_the_cpu_when_cuda_is_claimed(fed, monkeypatch):
    "With the automatic device resolution claiming CUDA, a run pinned to the CPU never touches CUDA (there is none here)."
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True); monkeypatch.delenv('HETFL_DEVICE', raising=False)
    from hetfl_explore.foundation.core import default_device
    assert default_device(None).type == 'cuda'
    h = run_fl(MLP, fed, UniformSelector(), RunConfig(device='cpu', rounds=1, clients_per_round=2, batch_size=10))
    assert len(h.rounds) == 1
