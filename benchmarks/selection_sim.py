"""Selection simulation at scale: `simulate_selection` for FedDiverse and every explorer selector.

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/selection_sim.py [--clients 1000] [--rounds 3000] [--k 9,100] [--repeats 3]
The federation is spawrious_gci_100's matrices tiled to `--clients` clients; each selector of
`hetfl_explore.feddiverse.registry.SELECTORS` runs `--rounds` rounds choosing each `--k` clients a round (no training;
9 is `simulate_selection`'s default κ, 100 is 10% of the clients).
Reported: wall and thread-CPU seconds per run (median of `--repeats`), the first run's CPU, milliseconds per round, and the target (< 1 s a run).
The CPU time of the Python thread (`time.thread_time`) is insensitive to other users' load; the wall time is not.
The FedDiverse variants, the literal selector and the weighted draws without replacement of the explorer selectors
(`sample_by`'s replay of numpy's `Generator.choice`: EqW, pow-d, AFL_G, Oort, FedPNS, FedRK) run compiled (numba) at
this scale: the first call in a process loads numba's on-disk cache (about 1 s; compiling on a fresh machine takes
longer), so the median of `--repeats` is the steady state and `walls` / `cpus` in the JSON keep every repeat. FedRK solves its QP (over a second at 1,000 clients)
once per federation and reuses it: each selector's first repeat starts cold (`first_cpu_s`, the '1st cpu' column).
Prints a table (and the record comparison) and writes benchmarks/results/selection_sim.json.
"""
import argparse, itertools, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig

TARGET_S = 1.0  # the target: 3,000 rounds over 1,000 clients in under a second per selector

def matrices(clients: int) -> np.ndarray:
    "spawrious_gci_100's (K, |Y|, |A|) matrices tiled to `clients` clients."
    from hetfl_explore.foundation.data import federation
    N = np.asarray(federation('spawrious_gci_100').matrices)
    return np.concatenate([N] * (-(-clients // len(N))))[:clients]

def time_selector(N, name, rounds, k, repeats) -> dict:
    "Median wall and thread-CPU seconds of `repeats` runs of `simulate_selection` (each a fresh selector, seed = repeat), and the first run's CPU."
    from hetfl_explore.feddiverse.simulation import simulate_selection
    from hetfl_explore.feddiverse.registry import make_selector
    from hetfl_explore.feddiverse.selector import FedRKSelector
    wall, cpu, weights = [], [], None   # FedRK's weights: solved in the first (cold) run, then reused
    for i in range(repeats):
        c0, w0 = time.thread_time(), time.perf_counter()
        sel = make_selector(name, N, 0.0, i) if weights is None else FedRKSelector(N, weights=weights)
        simulate_selection(N, sel, rounds, k, seed=i)
        if isinstance(sel, FedRKSelector): weights = sel.weights
        wall.append(time.perf_counter() - w0); cpu.append(time.thread_time() - c0)
    return dict(selector=name, k=k, wall_s=float(np.median(wall)), cpu_s=float(np.median(cpu)), walls=wall, cpus=cpu, first_cpu_s=cpu[0],
                ms_per_round=1e3 * float(np.median(wall)) / rounds)

def main():
    from hetfl_explore.feddiverse.registry import SELECTORS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--clients', type=int, default=1000)
    p.add_argument('--rounds', type=int, default=3000)
    p.add_argument('--k', default='9,100', help='clients a round (comma-separated list)')
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--selectors', default=','.join(SELECTORS))
    p.add_argument('--out', default=None)
    args = p.parse_args()
    bench = Bench('selection_sim')
    N = matrices(args.clients)
    rows = []
    print(f"{'selector':<29} {'k':>4} {'wall s':>8} {'cpu s':>8} {'1st cpu':>8} {'ms/round':>9}  target: cpu < {TARGET_S} s")
    for k, name in itertools.product(map(int, args.k.split(',')), args.selectors.split(',')):
        r = time_selector(N, name, args.rounds, k, args.repeats); rows.append(r)
        print(f"{name:<29} {k:4d} {r['wall_s']:8.3f} {r['cpu_s']:8.3f} {r['first_cpu_s']:8.3f} {r['ms_per_round']:9.3f}  {'ok' if r['cpu_s'] < TARGET_S else 'MISSED'}", flush=True)
    bench.write(dict(clients=args.clients, rounds=args.rounds, ks=args.k, repeats=args.repeats, target_s=TARGET_S, results=rows),
                {f"{r['selector']} k={r['k']} cpu": fig(r['cpu_s']) for r in rows}, args.out)

if __name__ == '__main__': main()
