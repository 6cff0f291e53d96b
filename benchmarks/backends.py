"""Which training backend is fastest on this CPU: `train_sequential`, `train_batched` and `train_fused` on the same plan.

The measurements behind `choose_backend`'s rule (nbs/engine/05_fedavg.ipynb, "Choosing the backend"): for each
workload, one round of C clients with n samples each (one local epoch of batches of B, plain SGD, random data),
each backend timed `--reps` times after one warm-up call (which also loads or compiles the fused kernels); the best
repetition is reported, with the ratios sequential / fused and batched / fused.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/backends.py --threads 1    # writes benchmarks/results/backends.json
"""
from __future__ import annotations
import argparse, pathlib, sys, time
import numpy as np
import torch

from hetfl_explore.engine.backends import BACKENDS, batch_plan, model_profile
from hetfl_explore.engine.config import RunConfig, LocalWork
from hetfl_explore.engine.models import ParamLayout, mlp

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from record import Bench, fig  # noqa: E402

WORKLOADS = [((64, 32, 10), 50, 200, 10), ((64, 32, 10), 50, 200, 50), ((64, 32, 10), 50, 200, 200),
             ((784, 200, 10), 20, 200, 10), ((784, 200, 10), 20, 200, 50), ((784, 200, 10), 20, 200, 100), ((784, 200, 10), 20, 200, 200)]  # (MLP widths, clients C, samples n, batch B)
LR = 0.05  # client learning rate

def one(dims, C, n, B, reps) -> dict:
    "Best seconds of each backend for one round of C clients x n samples in batches of B (same model, data and plan)."
    torch.manual_seed(0); net = mlp(dims[0], list(dims[1:-1]), dims[-1]); lay = ParamLayout(net); w0 = lay.flatten(net).clone()
    x, y = torch.randn(C * n, dims[0]), torch.randint(0, dims[-1], (C * n,))
    local, valid, steps = batch_plan(np.full(C, n), B, np.random.default_rng(0))
    pool, mask = torch.from_numpy(local + (np.arange(C) * n)[:, None, None]), torch.from_numpy(valid)
    work = LocalWork(net, lay, w0, x, y, pool, mask, steps, np.full(C, LR), RunConfig())
    call = lambda fn: fn(work)
    best = {}
    for name, fn in BACKENDS.items():
        call(fn); ts = []
        for _ in range(reps):
            t = time.perf_counter(); call(fn); ts.append(time.perf_counter() - t)
        best[name] = min(ts)
    step_flops = model_profile(net, x[0])['flops'] * B
    return dict(model='-'.join(map(str, dims)), params=lay.size, clients=C, samples=n, batch=B, fwd_flops_per_step=step_flops,
                seconds=best, sequential_over_fused=best['sequential'] / best['fused'], batched_over_fused=best['batched'] / best['fused'])

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--threads', type=int, default=1, help='torch threads (the fused backend uses as many)')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--out', default=None, help='default benchmarks/results/backends.json')
    args = ap.parse_args()
    torch.set_num_threads(args.threads); bench = Bench('backends')
    rows = [one(*w, args.reps) for w in WORKLOADS]
    print(f"{'model':>12} {'C x n':>9} {'B':>4} {'fwd FLOPs/step':>14} {'sequential':>10} {'batched':>9} {'fused':>8} {'seq/fused':>9} {'bat/fused':>9}")
    for r in rows:
        s = r['seconds']
        print(f"{r['model']:>12} {r['clients']:>4} x {r['samples']:<3} {r['batch']:>4} {r['fwd_flops_per_step']:>14.1e} {s['sequential']:>10.4f} "
              f"{s['batched']:>9.4f} {s['fused']:>8.4f} {r['sequential_over_fused']:>9.1f} {r['batched_over_fused']:>9.1f}")
    figs = {f"{r['model']} B={r['batch']} batched/fused": fig(r['batched_over_fused'], 'x', 'higher') for r in rows}
    bench.write(dict(threads=args.threads, reps=args.reps, rows=rows), figs, args.out)

if __name__ == '__main__':
    main()
