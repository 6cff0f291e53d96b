"""Benchmark the vectorised heterogeneity metrics of `hetfl_explore.foundation.hetero`.

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hetero.py [--clients 10000] [--repeats 50]
Prints a table and writes benchmarks/results/hetero.json. Times are per call, in milliseconds (median and best of
`repeats` calls after one warm-up), on the CPU. Inputs are random integer matrices with every client non-empty.
"""
import argparse, os, sys, time
from pathlib import Path
import numpy as np
import torch
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig
from hetfl_explore.foundation.hetero import dht, fl_metrics, client_types, label_skew, as_counts

def timeit(fn, repeats):
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts)), float(np.min(ts))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--clients', type=int, default=10_000)
    p.add_argument('--repeats', type=int, default=50)
    p.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'hetero.json'))
    args = p.parse_args()
    bench = Bench('hetero')
    rng = np.random.default_rng(0)
    K = args.clients
    cases = []
    for Y, A in [(2, 2), (4, 2), (10, 2)]:
        Ns = rng.integers(0, 200, (K, Y, A)); Ns[:, 0, 0] += 1
        Nt = torch.from_numpy(Ns)
        cases += [(f'dht numpy int64 ({Y}x{A})', lambda Ns=Ns: dht(Ns)),
                  (f'dht torch int64 ({Y}x{A})', lambda Nt=Nt: dht(Nt)),
                  (f'fl_metrics numpy ({Y}x{A})', lambda Ns=Ns: fl_metrics(Ns))]
    Ns = rng.integers(0, 200, (K, 2, 2)); Ns[:, 0, 0] += 1
    Nl, T = Ns.tolist(), dht(Ns)
    cases += [('dht nested lists (2x2)', lambda: dht(Nl)),
              ('as_counts validation only (2x2)', lambda: as_counts(Ns)),
              ('client_types tie=join', lambda: client_types(T)),
              ('label_skew hellinger (2x2)', lambda: label_skew(Ns))]
    rows = []
    for name, fn in cases:
        med, best = timeit(fn, args.repeats)
        rows.append(dict(case=name, clients=K, median_ms=round(med, 3), best_ms=round(best, 3)))
    w = max(len(r['case']) for r in rows)
    print(f"{'case':<{w}}  {'clients':>8}  {'median ms':>10}  {'best ms':>8}")
    for r in rows: print(f"{r['case']:<{w}}  {r['clients']:>8}  {r['median_ms']:>10.3f}  {r['best_ms']:>8.3f}")
    meta = dict(repeats=args.repeats, omp_num_threads=os.environ.get('OMP_NUM_THREADS'))
    bench.write(dict(meta=meta, results=rows), {f"{r['case']} median": fig(r['median_ms'], 'ms') for r in rows}, args.out)

if __name__ == '__main__': main()
