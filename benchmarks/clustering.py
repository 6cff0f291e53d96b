"""Benchmark Markov clustering on a sparse k-NN graph of 1,000 clients and one GP-FL round of 100 HAR-like workers.

Run:  OMP_NUM_THREADS=2 .venv/bin/python benchmarks/clustering.py [--clients 1000] [--workers 100] [--repeats 5]
Prints a table and writes benchmarks/results/clustering.json. Times are wall-clock seconds (median and best of
`repeats` after one warm-up) on the CPU. Targets: MCL on 1,000 clients <= 1 s; one GP-FL round of 100 clients <= 1 s.
MCL input: 1,000 Laplace-smoothed class profiles (8 classes, 20 planted groups), total-variation distances,
Gaussian similarities, symmetrised 5-NN graph as a scipy.sparse matrix. GP-FL: one `step()` (one engine round:
local SGD of every worker on its new batch, group aggregation, profile update, eccentricity re-grouping, and each
worker's scores on its local test batch).
"""
import argparse, os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig
import numpy as np
from sklearn.metrics import adjusted_rand_score
from hetfl_explore.clustering.profiles import laplace_smooth, class_distance_matrix, distance_to_similarity, sparsify
from hetfl_explore.clustering.mcl import mcl
from hetfl_explore.clustering.data import har_like_stream
from hetfl_explore.clustering.gpfl import GPFL

TARGET_S = 1.0        # both targets (profile pipeline and GPFL round), in seconds
KNN, GROUPS, CLASSES = 5, 20, 8

def timeit(fn, repeats, setup=lambda: None):
    setup(); fn()
    ts = []
    for _ in range(repeats):
        setup(); t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))

def mcl_case(n, rng):
    groups = rng.integers(0, GROUPS, n); prof = rng.dirichlet(np.full(CLASSES, 0.5), GROUPS)
    counts = np.stack([rng.multinomial(200, rng.dirichlet(50 * prof[g])) for g in groups])
    D = class_distance_matrix(laplace_smooth(counts))
    A = sparsify(distance_to_similarity(D), D, 'knn', k=KNN, as_sparse=True)
    return A, groups

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--clients', type=int, default=1000)
    p.add_argument('--workers', type=int, default=100)
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'clustering.json'))
    args = p.parse_args()
    bench, rng = Bench('clustering'), np.random.default_rng(0)
    A, groups = mcl_case(args.clients, rng)
    labels = mcl(A, inflation=1.7)
    med, best = timeit(lambda: mcl(A, inflation=1.7), args.repeats)
    rows = [dict(case=f'MCL, sparse {KNN}-NN graph', size=args.clients, median_s=round(med, 4), best_s=round(best, 4),
                 target_s=TARGET_S, clusters=int(labels.max() + 1), ari=round(adjusted_rand_score(groups, labels), 3))]
    sizes = tuple([args.workers // 5] * 5)
    data = har_like_stream(group_sizes=sizes, rounds=args.repeats + 2, seed=0)
    gp = GPFL(); gp.start(data)
    ts = []
    for _ in range(args.repeats + 1):
        t0 = time.perf_counter(); gp.step(); ts.append(time.perf_counter() - t0)
    ts = ts[1:]
    rows.append(dict(case='one GP-FL round (HAR-like)', size=data.n_clients, median_s=round(float(np.median(ts)), 4),
                     best_s=round(float(np.min(ts)), 4), target_s=TARGET_S, clusters=int(len(gp.sim.models)), ari=None))
    w = max(len(r['case']) for r in rows)
    print(f"{'case':<{w}}  {'size':>5}  {'median s':>9}  {'best s':>8}  {'target s':>8}  {'clusters':>8}")
    for r in rows: print(f"{r['case']:<{w}}  {r['size']:>5}  {r['median_s']:>9.4f}  {r['best_s']:>8.4f}  {r['target_s']:>8.1f}  {r['clusters']:>8}")
    meta = dict(repeats=args.repeats, omp_num_threads=os.environ.get('OMP_NUM_THREADS'))
    bench.write(dict(meta=meta, results=rows), {f"{r['case']} median": fig(r['median_s']) for r in rows}, args.out)

if __name__ == '__main__': main()
