"""Benchmark of resumable sweeps: configurations per minute on Ray (local, 2 CPUs) and sequentially,
and Ray's overhead per task.

The grid: sklearn digits, 10 clients (Dirichlet alpha 0.5), MLP 64-32-10, selectors uniform and round robin,
`--configs / 2` seeds each, `--rounds` rounds of 3 clients (`hetfl_explore.scale.sweeps.fl_task`). Each backend starts
from an empty sweep directory. Reported:

* configurations per minute, sequential and on Ray (Ray's start-up counted separately and included in a second figure);
* overhead per task on Ray = (num_cpus x Ray wall time - sum of the tasks' own wall times) / configurations, i.e.
  CPU-seconds per task that Ray's slots spend outside the task (scheduling, serialisation, worker start, idle tail);
* overhead per task against sequential = (num_cpus x Ray wall time - sequential wall time) / configurations.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sweeps.py            # 16 configurations, 20 rounds
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sweeps.py --quick    # 4 configurations, 2 rounds (a smoke test)
"""
from __future__ import annotations
import argparse, os, pathlib, sys, tempfile, time
sys.path.insert(0, str(pathlib.Path(__file__).parent))
from record import Bench, fig
from hetfl_explore.scale.sweeps import sweep_grid, run_sweep

HERE = pathlib.Path(__file__).parent

def timed_sweep(grid, backend, num_cpus) -> dict:
    "Run `grid` from an empty directory; wall time, start-up (Ray) and the tasks' own wall times."
    start = 0.0
    if backend == 'ray':
        import ray
        t0 = time.perf_counter(); ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False); start = time.perf_counter() - t0
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter(); df = run_sweep(grid, d, backend=backend, num_cpus=num_cpus, progress=False); wall = time.perf_counter() - t0
    finally:
        if backend == 'ray': ray.shutdown()
    n = len(grid)
    return dict(backend=backend, configs=n, startup_s=start, wall_s=wall, task_s=float(df.wall_s.sum()),
                configs_per_min=60 * n / wall, configs_per_min_with_startup=60 * n / (wall + start))

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--configs', type=int, default=16); ap.add_argument('--rounds', type=int, default=20)
    ap.add_argument('--num-cpus', type=int, default=2); ap.add_argument('--quick', action='store_true')
    ap.add_argument('--out', default=str(HERE / 'results' / 'sweeps.json'))
    a, bench = ap.parse_args(), Bench('sweeps')
    n, rounds = (4, 2) if a.quick else (a.configs, a.rounds)
    grid = sweep_grid(['digits'], ['uniform', 'round_robin'], list(range(n // 2)), rounds=[rounds], clients_per_round=[3])
    seq, ray_ = timed_sweep(grid, 'sequential', a.num_cpus), timed_sweep(grid, 'ray', a.num_cpus)
    ray_['overhead_per_task_s'] = (a.num_cpus * ray_['wall_s'] - ray_['task_s']) / len(grid)
    ray_['overhead_vs_sequential_per_task_s'] = (a.num_cpus * ray_['wall_s'] - seq['wall_s']) / len(grid)
    seq['overhead_per_task_s'] = (seq['wall_s'] - seq['task_s']) / len(grid)
    print(f"{'backend':12s} {'configs':>7s} {'start s':>8s} {'wall s':>8s} {'tasks s':>8s} {'cfg/min':>8s} {'cfg/min+start':>13s} {'overhead s/task':>15s}")
    for r in (seq, ray_):
        print(f"{r['backend']:12s} {r['configs']:7d} {r['startup_s']:8.2f} {r['wall_s']:8.2f} {r['task_s']:8.2f} {r['configs_per_min']:8.1f} "
              f"{r['configs_per_min_with_startup']:13.1f} {r['overhead_per_task_s']:15.3f}")
    print(f"Ray overhead per task against sequential ({a.num_cpus} CPUs x Ray wall - sequential wall, per task): "
          f"{ray_['overhead_vs_sequential_per_task_s']:.3f} s")
    out = dict(grid=dict(configs=len(grid), rounds=rounds, clients=10, clients_per_round=3, selectors=['uniform', 'round_robin']),
               num_cpus=a.num_cpus, sequential=seq, ray=ray_, load_average=os.getloadavg(), cpu_count=os.cpu_count())
    figures = {'sequential configurations/min': fig(seq['configs_per_min'], '1/min', 'higher'),
               'ray configurations/min': fig(ray_['configs_per_min'], '1/min', 'higher'),
               'ray overhead per task vs sequential': fig(ray_['overhead_vs_sequential_per_task_s'])}
    bench.write(out, figures, a.out)

if __name__ == '__main__': main()
