"""Benchmark authenticated aggregation and Bayesian server aggregation (`hetfl_explore.crowd`).

Run:  OMP_NUM_THREADS=2 .venv/bin/python benchmarks/trust.py [--updates 1000] [--params 100000] [--clients 100] [--big 1000000] [--threads 1,2]
Prints a table and writes benchmarks/results/trust.json. Targets: signing + verifying 1,000 updates of a
100k-parameter model (the update is (mu, var), 800 KB as float32) in at most 2 s on 2 cores; the Bayesian
aggregation of 100 clients x 1M parameters (float32, mean-field) in at most 0.5 s. Signing does not keep the 1,000 signed
updates (each client signs its own); verifying does (the server holds what it received). Times are the median of
`repeats` runs after one warm-up; the JSON records the machine's load average, since other processes share the cores.
The aggregation is one streaming pass per client (two in-place `addcdiv_` into two (P,) accumulators, no (N, P)
temporary): it is memory-bound, so it is timed with each intra-op thread count of `--threads`, side by side; on a
loaded machine (load average above the core count) a second thread mostly waits at the parallel regions' barriers.
"""
import argparse, os, sys, time
from datetime import datetime, timezone
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig
import numpy as np
import torch
import cryptography
from hetfl_explore.crowd.pki import CertificateAuthority, new_key, make_csr, sign_update, verify_update
from hetfl_explore.crowd.authenticated import AuthenticatedServer
from hetfl_explore.crowd.bayesian import aggregate_posteriors, MODES

def timeit(fn, repeats):
    "Median and best wall time of `fn` in seconds, after one warm-up call."
    fn(); ts = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))

def signing_cases(n_updates, n_params):
    "Sign, verify and full server checks of `n_updates` (mu, var) updates of `n_params` parameters."
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    ca = CertificateAuthority(now=t0); keys = [new_key() for _ in range(n_updates)]
    certs = [ca.enrol(make_csr(k, f'bench-{i}', {}), now=t0)[0] for i, k in enumerate(keys)]   # one client per update: one update each
    key, cert, upd = keys[0], certs[0], (torch.randn(n_params), torch.rand(n_params))
    signed = [sign_update(k, c, 'bench', 1, upd) for k, c in zip(keys, certs)]
    def sign():                                    # each client signs its own update: nothing is kept between signings
        for _ in range(n_updates): sign_update(key, cert, 'bench', 1, upd)
    def verify(): assert all(verify_update(u) for u in signed)
    def receive(): assert len(AuthenticatedServer(ca, 'bench').receive(signed, 1, t0)) == n_updates
    return [(f'sign {n_updates} updates (serialise + SHA-256 + ECDSA)', sign), (f'verify {n_updates} updates (SHA-256 + ECDSA)', verify),
            (f'server.receive {n_updates} updates (certificate, CRL, signature, nonce)', receive)]

def aggregation_cases(n_clients, n_params, threads):
    "Every aggregation mode on (n_clients, n_params) float32 posteriors, with `threads` intra-op threads."
    g = torch.Generator().manual_seed(0)
    mus, vs = torch.randn(n_clients, n_params, generator=g), torch.rand(n_clients, n_params, generator=g) + 0.01
    def with_threads(mode):
        def run():
            before = torch.get_num_threads(); torch.set_num_threads(threads)
            try: aggregate_posteriors(mus, vs, 0., 1., mode)
            finally: torch.set_num_threads(before)
        return run
    return [(f'aggregate {mode} {n_clients} x {n_params:,} ({threads} thread{"s" if threads > 1 else ""})', with_threads(mode)) for mode in MODES]

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--updates', type=int, default=1000); p.add_argument('--params', type=int, default=100_000)
    p.add_argument('--clients', type=int, default=100); p.add_argument('--big', type=int, default=1_000_000)
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--threads', default='1,2', help='intra-op thread counts for the aggregation, comma-separated')
    p.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'trust.json'))
    a = p.parse_args()
    bench, rows = Bench('trust'), []
    threads = [int(t) for t in a.threads.split(',')]
    for name, fn in signing_cases(a.updates, a.params) + [c for th in threads for c in aggregation_cases(a.clients, a.big, th)]:
        med, best = timeit(fn, a.repeats); rows.append(dict(case=name, median_s=round(med, 4), best_s=round(best, 4)))
    sv = rows[0]['median_s'] + rows[1]['median_s']
    targets = [dict(target='sign + verify 1,000 updates of 100k parameters <= 2 s', measured_s=round(sv, 4), met=sv <= 2.0)]
    for i, th in enumerate(threads):
        slowest = max(r['median_s'] for r in rows[3 + i * len(MODES):3 + (i + 1) * len(MODES)])
        targets.append(dict(target=f'Bayesian aggregation 100 clients x 1M parameters <= 0.5 s (slowest mode, {th} thread(s))',
                            measured_s=slowest, met=slowest <= 0.5))
    w = max(len(r['case']) for r in rows)
    print(f"{'case':<{w}}  {'median s':>9}  {'best s':>8}")
    for r in rows: print(f"{r['case']:<{w}}  {r['median_s']:>9.4f}  {r['best_s']:>8.4f}")
    for t in targets: print(f"{t['target']}: {t['measured_s']:.3f} s -> {'met' if t['met'] else 'NOT met'}")
    meta = dict(cryptography=cryptography.__version__, repeats=a.repeats, threads=threads, omp_num_threads=os.environ.get('OMP_NUM_THREADS'))
    bench.write(dict(meta=meta, rows=rows, targets=targets), {f"{r['case']} median": fig(r['median_s']) for r in rows}, a.out)

if __name__ == '__main__': main()
