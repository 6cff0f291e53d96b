"""The engine on a GPU: the small CNN with 1,000 clients a round, batched vs sequential, in clients per
second and against CPU runs of the same workload; the digits scaling (1k-30k clients a round) on the device; where a
round waits for the device (host syncs, by call site); and the `cuda`-flagged notebook cells, run for real.

Workload `cnn1000`: the colored-MNIST pool of `cmnist24` (federation 'cmnist_gsc' at scale 0.5: 2,400 training images,
1,500 test images) dealt anew to 1,000 clients of 40-60 distinct images each (pool rows are copied, so clients stay
disjoint), all 1,000 training every round; the cmnist24 CNN (~106k parameters), 1 local epoch, batch 28, SGD lr 0.01,
FedAvg by size, evaluation on the test set every round. Steady s/round = median of the rounds after the first.

    .venv/bin/python benchmarks/gpu.py --device cuda            # on a GPU machine: benchmarks/results/gpu.json
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/gpu.py --device cpu --threads 1   # the project's CPU: gpu_cpu.json

On a GPU machine the same call also runs the batched backend with cuDNN's autotuner on, with TF32 off and without the
channels-last layout (`VARIANTS`), profiles one batched round (`torch.profiler`, the operators with the most device time),
times the same run on that machine's CPU (its own threads; `--no-cpu` skips it) and compares the final weights of every
run with it, and reads the committed `gpu_cpu.json` (the project's 2-core CPU), so the speed-up over both CPU runs is
printed. On a CPU it reads the committed `gpu.json` instead and prints how much faster the GPU record is.
"""
from __future__ import annotations
import argparse, contextlib, dataclasses, json, pathlib, sys, time, traceback, warnings
import numpy as np
import torch

from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation
from hetfl_explore.engine.models import cnn
from hetfl_explore.engine.protocol import UniformSelector
from hetfl_explore.foundation.data import FederatedData, federation
from hetfl_explore.foundation.datasets import make_federated

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from record import Bench, fig, committed  # noqa: E402
import engine as engine_bench  # noqa: E402  (the engine benchmark: its digits scaling and sizes)

CLIENTS = 1000            # clients of cnn1000, all of them training every round
CLIENT_SIZES = (40, 60)   # images per client (inclusive range)
BACKENDS = ('batched', 'sequential')

def dealt(data, num_clients, sizes, seed) -> FederatedData:
    "`data`'s training pool dealt to `num_clients` clients of sizes drawn in `sizes` (distinct rows each; rows copied)."
    r = np.random.default_rng([seed, num_clients])
    n = r.integers(sizes[0], sizes[1] + 1, num_clients)
    rows = torch.from_numpy(np.concatenate([r.choice(len(data.x), k, replace=False) for k in n]))
    idx = list(torch.arange(len(rows)).split(n.tolist()))
    return FederatedData(data.x[rows], data.y[rows], data.a[rows], idx, data.x_test, data.y_test, data.a_test,
                         data.n_classes, data.n_attrs, data.class_names, data.attr_names)

def cnn1000(rounds) -> dict:
    "The cnn1000 workload: data, model builder and run configuration."
    base = make_federated('cmnist', federation('cmnist_gsc'), scale=0.5, seed=0)
    return dict(data=dealt(base, CLIENTS, CLIENT_SIZES, 0), model_fn=lambda: cnn(3, 2, width=16, img_size=28, hidden=64),
                config=RunConfig(rounds=rounds, clients_per_round=CLIENTS, batch_size=28, lr=0.01, local_epochs=1, weighting='size',
                                 aggregator='fedavg', loss_before='first_batch', seed=0))

def sync(device):
    if str(device).startswith('cuda'): torch.cuda.synchronize()

def run(w, backend, device) -> dict:
    "One engine run of workload `w` on `device` with `backend`: total, steady s/round, clients/s, final accuracy and weights."
    sync(device); t0 = time.perf_counter()
    sim = Simulation(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend=backend, device=device))
    h = sim.run(progress=False); sync(device)
    per = h.rounds.wall_time.tolist(); steady = float(np.median(per[1:] if len(per) > 1 else per))
    return dict(backend=sim.backend, device=str(sim.device), total_s=time.perf_counter() - t0, per_round=per, steady_s_per_round=steady,
                clients_per_s=w['config'].clients_per_round / steady, accuracy=float(h.rounds.accuracy.iloc[-1]),
                block_clients=sim.block, params=h.final_params.detach().cpu())

def scaling(device, sizes) -> list:
    "`engine.py`'s digits scaling (`scaling_one`) on `device`, in this process: steady s/round and peak device memory per size."
    rows = []
    for k in sizes:
        if str(device).startswith('cuda'): torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
        r = engine_bench.scaling_one(k, device=device); r.pop('peak_rss_gib')   # this process's peak, not this size's
        r['peak_device_gib'] = torch.cuda.max_memory_allocated() / 2 ** 30 if str(device).startswith('cuda') else None
        rows.append(r)
        print(f"  digits {k:>6d} clients/round on {device}: {r['steady_s_per_round']:.4f} s/round"
              + (f", peak device memory {r['peak_device_gib']:.2f} GiB" if r['peak_device_gib'] is not None else ''), flush=True)
    return rows

def sync_sites(w, device, rounds=1) -> dict:
    "Host syncs of `rounds` rounds after a warm-up round, by the package's innermost call site (torch's sync debug mode)."
    sim = Simulation(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend='batched', device=device))
    sim.step(); sites = {}
    def hook(message, category, filename, lineno, file=None, line=None):
        own = [f for f in traceback.extract_stack()[:-1] if 'hetfl_explore' in f.filename]
        key = f"{pathlib.Path(own[-1].filename).name}:{own[-1].name}: {own[-1].line}" if own else 'outside the package (switching the debug mode)'
        sites[key] = sites.get(key, 0) + 1
    old = warnings.showwarning; warnings.showwarning = hook
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('always'); warnings.showwarning = hook
            torch.cuda.set_sync_debug_mode('warn')
            for _ in range(rounds): sim.step()
    finally:
        torch.cuda.set_sync_debug_mode('default'); warnings.showwarning = old
    return dict(rounds=rounds, clients_per_round=w['config'].clients_per_round, sites=dict(sorted(sites.items(), key=lambda kv: -kv[1])))

def cuda_cells() -> dict:
    "Every notebook cell flagged `#| cuda` whose inputs the package provides, run here; its outcome."
    from hetfl_explore.engine.simulation import Simulation  # noqa: F401 (the cells' names)
    from hetfl_explore.foundation.data import digits_federation
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.protocol import UniformSelector  # noqa: F401
    out = {}
    for nb in sorted((HERE.parent / 'nbs').rglob('*.ipynb')):
        for i, c in enumerate(json.loads(nb.read_text())['cells']):
            src = ''.join(c['source'])
            if c['cell_type'] != 'code' or not src.lstrip().startswith('#| cuda') or 'run_grid' in src or ' fd' in src: continue
            name = f"{nb.relative_to(HERE.parent)}#{i}"
            try: exec(compile(src, name, 'exec'), dict(globals(), **locals())); out[name] = 'passed'
            except Exception as e: out[name] = f'FAILED: {type(e).__name__}: {e}'
            print(f"  cuda cell {name}: {out[name]}", flush=True)
    return out

@contextlib.contextmanager
def cudnn_flags(**flags):
    "`torch.backends.cudnn` flags set inside the block (restored afterwards)."
    old = {k: getattr(torch.backends.cudnn, k) for k in flags}
    try:
        for k, v in flags.items(): setattr(torch.backends.cudnn, k, v)
        yield
    finally:
        for k, v in old.items(): setattr(torch.backends.cudnn, k, v)

@contextlib.contextmanager
def nchw():
    "The engine without its channels-last layout for images (plain NCHW pool and model)."
    keep = Simulation._channels_last
    Simulation._channels_last = lambda self: None
    try: yield
    finally: Simulation._channels_last = keep

# variants of the batched run on a GPU: cuDNN's autotuner, fp32 convolutions (PyTorch lets cuDNN use TF32 by default), NCHW
VARIANTS = {'cudnn.benchmark': lambda: cudnn_flags(benchmark=True), 'fp32 (TF32 off)': lambda: cudnn_flags(allow_tf32=False),
            'NCHW (no channels-last)': nchw}

def flagged(variant, job):
    "`job()` inside the context manager `variant()`."
    with variant(): return job()

def profile_round(w, device, rows=12) -> str:
    "`torch.profiler`'s table of one batched round after a warm-up round: the operators with the most device time."
    from torch.profiler import profile, ProfilerActivity
    sim = Simulation(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend='batched', device=device))
    sim.step(); sync(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        sim.step(); sync(device)
    return prof.key_averages().table(sort_by='self_cuda_time_total', row_limit=rows, max_name_column_width=48)

def attempt(out, name, job):
    "`job()`, or None with the error noted in `out['errors']` (one failing part does not lose the others' figures)."
    try: return job()
    except Exception as e:
        out.setdefault('errors', {})[name] = f"{type(e).__name__}: {e}"; traceback.print_exc(); return None

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    ap.add_argument('--rounds', type=int, default=4, help='rounds of cnn1000 per backend on the device')
    ap.add_argument('--no-cpu', dest='cpu', action='store_false', help="on a GPU machine: skip the run on its CPU")
    ap.add_argument('--backends', default=','.join(BACKENDS))
    ap.add_argument('--scaling', default=','.join(map(str, engine_bench.SCALING)), help="digits clients a round ('' to skip)")
    ap.add_argument('--threads', type=int, default=None, help='torch threads (default: torch default)')
    ap.add_argument('--out', default=None)
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    gpu = args.device.startswith('cuda')
    bench = Bench('gpu' if gpu else 'gpu_cpu')
    w = cnn1000(args.rounds)
    out = dict(device=args.device, device_name=torch.cuda.get_device_name() if gpu else None, threads=torch.get_num_threads(),
               workload=dict(name='cnn1000', clients=CLIENTS, client_sizes=CLIENT_SIZES, config=dataclasses.asdict(w['config'])), runners={})
    if gpu: out['tf32'] = dict(matmul=torch.backends.cuda.matmul.allow_tf32, cudnn=torch.backends.cudnn.allow_tf32)
    jobs = [(f'{args.device} {b}', lambda b=b: run(w, b, args.device)) for b in args.backends.split(',')]
    if gpu: jobs += [(f'{args.device} batched, {v}', lambda v=v: flagged(VARIANTS[v], lambda: run(w, 'batched', args.device))) for v in VARIANTS]
    if gpu and args.cpu: jobs.append(('cpu (this machine)', lambda: run(w, 'auto', 'cpu')))
    for name, job in jobs:
        r = attempt(out, name, job)
        if r is None: continue
        out['runners'][name] = r
        print(f"  cnn1000 {name:22s} {r['backend']:10s} {r['steady_s_per_round']:.3f} s/round, {r['clients_per_s']:.0f} clients/s, "
              f"accuracy {r['accuracy']:.3f}, block {r['block_clients']}", flush=True)
    ref = out['runners'].get(f'{args.device} sequential', next(iter(out['runners'].values()), {})).get('params')
    cpu = out['runners'].get('cpu (this machine)', {}).get('params')
    for r in out['runners'].values():
        r['max_weight_diff_vs_sequential'] = float((r['params'] - ref).abs().max())
        if cpu is not None: r['max_weight_diff_vs_cpu'] = float((r['params'] - cpu).abs().max())
    for r in out['runners'].values(): r.pop('params')
    other = (committed('gpu_cpu' if gpu else 'gpu') or {}).get('runners', {})   # the counterpart record (GPU <-> project CPU)
    out['counterpart_best_s_per_round'] = min((r['steady_s_per_round'] for k, r in other.items() if k.startswith('cuda') != gpu), default=None)
    if args.scaling: out['scaling'] = attempt(out, 'scaling', lambda: scaling(args.device, [int(k) for k in args.scaling.split(',')])) or []
    if gpu:
        out['sync_sites'] = attempt(out, 'sync sites', lambda: sync_sites(w, args.device))
        out['cuda_cells'] = attempt(out, 'cuda cells', cuda_cells)
        out['profile'] = attempt(out, 'profile', lambda: profile_round(w, args.device))
    print(table(out))
    bench.write(out, figures(out), args.out)

def figures(out) -> dict:
    "Headline figures: s/round and clients/s per runner, speed-ups over the CPU runs, the scaling."
    f = {}
    for k, r in out['runners'].items():
        f[f'cnn1000 {k} s/round'] = fig(r['steady_s_per_round'])
        f[f'cnn1000 {k} clients/s'] = fig(r['clients_per_s'], 'clients/s', 'higher')
    for k, x in speedups(out).items(): f[f'cnn1000 {k}'] = fig(x, 'ratio', 'higher')
    for r in out.get('scaling', []): f[f"digits {r['clients']} s/round"] = fig(r['steady_s_per_round'])
    return f

def speedups(out) -> dict:
    """On a GPU: each device runner's speed-up over this machine's CPU run (same call) and over the committed project-CPU
    record (`gpu_cpu.json`, its fastest runner). On a CPU: the committed GPU record's fastest runner against each runner here."""
    gpu, other = out['device'].startswith('cuda'), out.get('counterpart_best_s_per_round')
    cpu_here = [r['steady_s_per_round'] for k, r in out['runners'].items() if k.startswith('cpu ')]
    res = {}
    for k, r in out['runners'].items():
        if gpu and k.startswith('cpu '): continue
        if gpu and cpu_here: res[f'{k} x this machine cpu'] = min(cpu_here) / r['steady_s_per_round']
        if other: res[f'{k} x project cpu' if gpu else f'gpu record x {k}'] = (other / r['steady_s_per_round']) if gpu else (r['steady_s_per_round'] / other)
    return res

def table(out) -> str:
    "The cnn1000 table, the speed-ups, the scaling, the sync sites and the cuda cells."
    lines = ['', f"cnn1000 ({CLIENTS} clients a round, small CNN) on {out['device_name'] or 'cpu'}, {out['threads']} CPU threads",
             f"{'runner':34s} {'s/round':>8s} {'clients/s':>10s} {'accuracy':>9s} {'block':>6s} {'max |dw| vs seq':>16s} {'vs cpu':>9s}"]
    for k, r in out['runners'].items():
        vs_cpu = f"{r['max_weight_diff_vs_cpu']:9.2e}" if 'max_weight_diff_vs_cpu' in r else f"{'-':>9s}"
        lines.append(f"{k:34s} {r['steady_s_per_round']:8.3f} {r['clients_per_s']:10.0f} {r['accuracy']:9.3f} {r['block_clients']:6d} "
                     f"{r['max_weight_diff_vs_sequential']:16.2e} {vs_cpu}")
    lines += [f"speed-up {k}: {v:.1f}x" for k, v in speedups(out).items()]
    for r in out.get('scaling', []):
        mem = '' if r['peak_device_gib'] is None else f", peak device memory {r['peak_device_gib']:.2f} GiB"
        lines.append(f"digits {r['clients']:>6d} clients a round: {r['steady_s_per_round']:.4f} s/round{mem}")
    if out.get('sync_sites'):
        s = out['sync_sites']
        lines.append(f"host syncs in {s['rounds']} batched round(s) of {s['clients_per_round']} clients, by call site:")
        lines += [f"  {n:4d}  {site}" for site, n in s['sites'].items()]
    lines += [f"cuda cell {k}: {v}" for k, v in (out.get('cuda_cells') or {}).items()]
    if out.get('profile'): lines += ['one batched round of cnn1000 under torch.profiler:', out['profile']]
    lines += [f"ERROR in {k}: {v}" for k, v in out.get('errors', {}).items()]
    return '\n'.join(lines)

if __name__ == '__main__':
    main()
