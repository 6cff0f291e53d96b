"""Benchmark crowdsourced FL: PROMETHEE II flows, exact Shapley and a selection race on the crowd simulator.

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/crowd.py [--repeats 5] [--quick]
Prints a table and writes benchmarks/results/crowd.json. Targets (CPU): PROMETHEE sorted flows for 10,000 clients x 4
criteria <= 50 ms; exact Shapley of the 12-player quadratic game <= 1 s; a 20-round race with 100 devices <= 120 s.
Times are wall-clock on this machine (median and best of `repeats` calls after one warm-up; the race runs once).
"""
import argparse, os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig
import numpy as np
import torch
from hetfl_explore.crowd.promethee import flows_sorted, flows_pairwise, PrometheeSelector, REFERENCE_CONFIG
from hetfl_explore.crowd.shapley import QuadraticGame, shapley_exact, CountingUtility
from hetfl_explore.crowd.devices import DevicePool
from hetfl_explore.crowd.baselines import (CrowdRandom, GreedyPerCost, PriceFirst, ResourceAware, Budgeted, selection_race, race_table)
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.models import mlp
from hetfl_explore.foundation.data import digits_federation
from hetfl_explore.selection.efficiency import ActiveFL, PowD

TARGETS = {'promethee sorted n=10000': 50.0, 'shapley exact n=12 (quadratic)': 1000.0, 'race 100 devices x 20 rounds (8 selectors)': 120_000.0}

def timeit(fn, repeats):
    "Median and best wall-clock milliseconds of `repeats` calls after one warm-up."
    fn(); ts = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts)), float(np.min(ts))

def promethee_cases(quick):
    "Sorted vs pairwise flows for n = 10^2 .. 10^4 clients x 4 criteria (reference weights, q=0.05, p=0.5)."
    w, q, p = REFERENCE_CONFIG['weights'], REFERENCE_CONFIG['q'], REFERENCE_CONFIG['p']
    out = []
    for n in ((100, 1000) if quick else (100, 300, 1000, 3000, 10_000)):
        X = np.random.default_rng(n).random((n, 4))
        out += [(f'promethee sorted n={n}', lambda X=X: flows_sorted(X, w, q, p)), (f'promethee pairwise n={n}', lambda X=X: flows_pairwise(X, w, q, p))]
    if not quick:
        X = np.random.default_rng(0).random((10_000, 4))
        a, b = flows_sorted(X, w, q, p), flows_pairwise(X, w, q, p)
        print(f"sorted vs pairwise at n=10000: max |difference| = {max(np.abs(a[0] - b[0]).max(), np.abs(a[1] - b[1]).max()):.2e}")
    return out

def race_case(rounds=20, n=100, budget=40.0):
    "The race of nbs/crowd/63: 8 selectors, digits federation, 100 devices, 20 rounds, budget 40 per round."
    data, pool = digits_federation(num_clients=n, alpha=0.5, seed=0), DevicePool.sample(n, seed=0)
    cfg = RunConfig(rounds=rounds, clients_per_round=10, batch_size=8, lr=0.2, local_epochs=3, seed=0)
    top = PrometheeSelector(pool, weights=REFERENCE_CONFIG['weights'], budget=budget, top_frac=0.5); top.name = 'FedPROM (public-code weights, top 50%)'
    sels = [CrowdRandom(pool, budget), Budgeted(ActiveFL(), pool, budget), Budgeted(PowD(), pool, budget), GreedyPerCost(pool, budget),
            ResourceAware(pool, budget), PriceFirst(pool, budget), PrometheeSelector(pool, budget=budget), top]
    t0 = time.perf_counter(); race = selection_race(sels, pool, data, lambda: mlp(64, 32), cfg); ms = (time.perf_counter() - t0) * 1e3
    return ms, race_table(race, np.array([len(i) for i in data.client_idx]), 0.6)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--quick', action='store_true', help='small sizes only (a smoke run)')
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'crowd.json'))
    args = ap.parse_args()
    bench, rows = Bench('crowd'), []
    for name, fn in promethee_cases(args.quick):
        reps = 1 if 'pairwise n=10000' in name else args.repeats
        med, best = timeit(fn, reps); rows.append(dict(case=name, median_ms=round(med, 3), best_ms=round(best, 3)))
    g = QuadraticGame(np.random.default_rng(0).uniform(0, 2, 12), alpha=0.5); cu = CountingUtility(g)
    med, best = timeit(lambda: shapley_exact(g, 12), args.repeats); shapley_exact(cu, 12)
    err = float(np.abs(shapley_exact(g, 12) - g.closed_form()).max())
    rows.append(dict(case='shapley exact n=12 (quadratic)', median_ms=round(med, 3), best_ms=round(best, 3), evaluations=cu.calls, max_error_vs_closed_form=err))
    table = None
    if not args.quick:
        ms, table = race_case(); rows.append(dict(case='race 100 devices x 20 rounds (8 selectors)', median_ms=round(ms, 1), best_ms=round(ms, 1)))
    for r in rows:
        if r['case'] in TARGETS: r.update(target_ms=TARGETS[r['case']], meets_target=bool(r['median_ms'] <= TARGETS[r['case']]))
    w = max(len(r['case']) for r in rows)
    print(f"{'case':<{w}}  {'median ms':>11}  {'best ms':>11}  target")
    for r in rows: print(f"{r['case']:<{w}}  {r['median_ms']:>11.3f}  {r['best_ms']:>11.3f}  {r.get('target_ms', '')} {'' if 'meets_target' not in r else ('ok' if r['meets_target'] else 'MISSED')}")
    if table is not None: print(table.round(3).to_string())
    meta = dict(repeats=args.repeats, omp_num_threads=os.environ.get('OMP_NUM_THREADS'))
    out = dict(meta=meta, results=rows, race_table=None if table is None else table.round(4).reset_index().to_dict('records'))
    if not args.quick: bench.write(out, {f"{r['case']} median": fig(r['median_ms'], 'ms') for r in rows}, args.out)

if __name__ == '__main__': main()
