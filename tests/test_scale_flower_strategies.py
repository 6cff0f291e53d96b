"""Sampling-only strategies under `flwr run`: a quickstart-style Flower App written here in its own files (its ClientApp
uses no package code but the one-line `register_stats`), run once per runtime (deployment: a SuperLink and 10
SuperNodes with partition ids; simulation: 10 supernodes on Ray), each time under a fresh FLWR_HOME on a free port, with
uniform, FedDiverse, pow-d and round robin sampling one after the other, then Flower's own FedAvg shown the uniform run's
nodes. The app trains, evaluates federatedly, and uniform sampling gives FedAvg's weights."""
import json, os, subprocess, textwrap
import numpy as np
import pytest
pytest.importorskip('flwr', reason='Flower is not installed: pip install hetfl_explore[flower]')
from test_scale_flower_app import BIN, ROOT, deployment, local_ray, start_superlink, stop

NODES, ROUNDS, RUN_S = 10, 2, 1200   # RUN_S: a loaded machine starts each deployment ClientApp process slowly
RUNTIMES = ('deployment', 'simulation')   # Flower's two runtimes: SuperNode processes, or Ray actors
SELECTORS = ('uniform', 'feddiverse', 'pow-d', 'round-robin')

CLIENT = '''
"A Flower quickstart-style ClientApp: a small MLP on this node's own Dirichlet share of sklearn's digits."
from collections import OrderedDict
import numpy as np, torch
from sklearn.datasets import load_digits
from flwr.app import ArrayRecord, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from hetfl_explore.scale.contract import register_stats

def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

def load(context):
    "This node's rows: a label-skewed Dirichlet(0.5) share of the digits, the attribute is a bold stroke."
    X, y = load_digits(return_X_y=True)
    rng, n = np.random.default_rng(0), context.node_config['num-partitions']
    owner = np.empty(len(y), int)
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))
        owner[idx] = rng.choice(n, size=len(idx), p=rng.dirichlet([0.5] * n))
    mine = np.flatnonzero(owner == context.node_config['partition-id'])
    ink = X.sum(1); bold = np.array([ink[i] > np.median(ink[y == y[i]]) for i in mine], int)
    return torch.tensor(X[mine] / 16, dtype=torch.float32), torch.tensor(y[mine]), bold

def model(arrays):
    m = net(); m.load_state_dict(OrderedDict((k, torch.from_numpy(v.numpy())) for k, v in arrays.items())); return m

app = ClientApp()

@app.train()
def train(msg, context):
    x, y, _ = load(context); m = model(msg.content['arrays'])
    opt = torch.optim.SGD(m.parameters(), lr=msg.content['config']['lr'])
    torch.manual_seed(1000 * context.node_config['partition-id'] + msg.content['config']['server-round'])
    for b in torch.randperm(len(y)).split(16):
        opt.zero_grad(); loss = torch.nn.functional.cross_entropy(m(x[b]), y[b]); loss.backward(); opt.step()
    return Message(RecordDict({'arrays': ArrayRecord(m.state_dict()),
                               'metrics': MetricRecord({'train_loss': loss.item(), 'num-examples': len(y)})}), reply_to=msg)

@app.evaluate()
def evaluate(msg, context):
    x, y, _ = load(context); m = model(msg.content['arrays'])
    with torch.no_grad(): out = m(x)
    return Message(RecordDict({'metrics': MetricRecord({'eval_loss': torch.nn.functional.cross_entropy(out, y).item(),
                   'eval_acc': (out.argmax(1) == y).float().mean().item(), 'num-examples': len(y)})}), reply_to=msg)

@app.query('loss')
def loss(msg, context):
    x, y, _ = load(context); m = model(msg.content['arrays'])
    with torch.no_grad(): return Message(RecordDict({'metrics': MetricRecord({'loss': torch.nn.functional.cross_entropy(m(x), y).item()})}), reply_to=msg)

def counts(context):
    _, y, a = load(context); return np.bincount(y.numpy() * 2 + a, minlength=20).reshape(10, 2).tolist()

register_stats(app, counts)
'''

SERVER = '''
"The ServerApp: each selector as a sampling-only FedAvg, then Flower's FedAvg shown the uniform run's nodes."
import json
from flwr.app import ArrayRecord, ConfigRecord
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg
from hetfl_explore.scale.strategies import SampledFedAvg
from client import net

class Shown(Grid):
    "The run's grid, showing Flower each round only the given nodes."
    def __init__(self, grid, rounds): self.grid, self.rounds, self.r = grid, rounds, 1
    def set_run(self, run): self.grid.set_run(run)
    @property
    def run(self): return self.grid.run
    def create_message(self, *a, **k): return self.grid.create_message(*a, **k)
    def get_node_ids(self): return list(self.rounds[str(min(self.r, len(self.rounds)))])
    def push_messages(self, m): return self.grid.push_messages(m)
    def pull_messages(self, i): return self.grid.pull_messages(i)
    def send_and_receive(self, messages, *, timeout=None):
        messages = list(messages); out = self.grid.send_and_receive(messages, timeout=timeout)
        self.r += any(m.metadata.message_type == 'train' for m in messages); return out

app = ServerApp()

@app.main()
def main(grid, context):
    cfg, out = context.run_config, {}
    start = dict(initial_arrays=ArrayRecord(net().state_dict()), num_rounds=cfg['rounds'],
                 train_config=ConfigRecord({'lr': 0.1}), evaluate_config=ConfigRecord({}))
    for name in cfg['selectors'].split(','):
        s = SampledFedAvg(selector=name, fraction_train=0.3, fraction_evaluate=0.2, min_available_nodes=cfg['nodes'], seed=1, wait_s=120)
        res = s.start(grid=grid, **start)
        out[name] = dict(selected={str(r): v for r, v in s.selected.items()}, dropped=s.dropped,
                         train={str(r): dict(m) for r, m in res.train_metrics_clientapp.items()},
                         evaluate={str(r): dict(m) for r, m in res.evaluate_metrics_clientapp.items()},
                         arrays={k: v.numpy().tolist() for k, v in res.arrays.items()})
    ref = FedAvg(fraction_train=1.0, fraction_evaluate=0.0, min_train_nodes=1, min_available_nodes=1)
    res = ref.start(grid=Shown(grid, out['uniform']['selected']), **start)
    out['fedavg'] = dict(arrays={k: v.numpy().tolist() for k, v in res.arrays.items()})
    with open(cfg['result'], 'w') as f: json.dump(out, f)
'''

PYPROJECT = '''
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[project]
name = "quickstart-selectors"
version = "1.0.0"
dependencies = []
[tool.hatch.build.targets.wheel]
packages = ["."]
[tool.flwr.app]
publisher = "tests"
[tool.flwr.app.components]
serverapp = "server:app"
clientapp = "client:app"
[tool.flwr.app.config]
rounds = 2
nodes = 10
selectors = "uniform"
result = ""
'''

def flwr_run(app, tmp, env, out, extra=()) -> str:
    "`flwr run` of the quickstart app on the SuperLink `config.toml` names; its whole output."
    config = f"rounds={ROUNDS} nodes={NODES} selectors='{','.join(SELECTORS)}' result='{out}'"
    run = subprocess.run([str(BIN / 'flwr'), 'run', str(app), 'local-simulation', *extra, '--run-config', config, '--stream'],
                         env=env, cwd=tmp, capture_output=True, text=True, timeout=RUN_S)
    return run.stdout + run.stderr

@pytest.fixture(scope='module', params=RUNTIMES)
def result(request, tmp_path_factory):
    "The quickstart app run once per runtime: Flower's simulation (Ray) and deployment (a SuperLink and 10 SuperNodes)."
    tmp = tmp_path_factory.mktemp(f'quickstart-{request.param}')
    app, home, out = tmp / 'app', tmp / 'flwr_home', tmp / 'result.json'
    app.mkdir(); home.mkdir()
    for name, text in (('client.py', CLIENT), ('server.py', SERVER), ('pyproject.toml', PYPROJECT)):
        (app / name).write_text(textwrap.dedent(text).lstrip())
    env = {**os.environ, 'FLWR_HOME': str(home), 'OMP_NUM_THREADS': '1', 'FLWR_DISABLE_UPDATE_CHECK': '1',
           'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), str(app), os.environ.get('PYTHONPATH')])),
           'PATH': os.pathsep.join([str(BIN), os.environ.get('PATH', '')])}
    if request.param == 'simulation':
        with local_ray(env) as env:
            link, _ = start_superlink(tmp, env)
            try: log = flwr_run(app, tmp, env, out, ('--federation-config', f'num-supernodes={NODES}'))
            finally: stop(link)
    else:
        with deployment(tmp, env, NODES): log = flwr_run(app, tmp, env, out)
    (tmp / 'run.log').write_text(log)   # kept for a failure's whole story
    assert out.exists(), f'the run wrote no result:\n{log[-6000:]}'
    return json.loads(out.read_text()), log

@pytest.mark.parametrize('name', SELECTORS)
def test_each_selector_trains_and_evaluates_federatedly(result, name):
    r, _ = result[0][name], result[1]
    assert r['dropped'] == {}
    assert sorted(r['selected']) == ['1', '2'] and all(len(v) == 3 for v in r['selected'].values())   # int(10 × 0.3)
    assert sorted(r['evaluate']) == ['1', '2'] and all(0 <= m['eval_acc'] <= 1 for m in r['evaluate'].values())   # 2 nodes a round
    assert all(np.isfinite(m['train_loss']) for m in r['train'].values())

def test_round_robin_and_informed_selectors_pick_differently(result):
    rr = result[0]['round-robin']['selected']
    assert len(set(rr['1']) | set(rr['2'])) == 6   # nobody twice before everybody once
    picks = {n: [sorted(v) for _, v in sorted(result[0][n]['selected'].items())] for n in SELECTORS}
    assert len({json.dumps(p) for p in picks.values()}) > 1

def test_uniform_sampling_gives_flowers_fedavg_weights(result):
    u, ref = result[0]['uniform']['arrays'], result[0]['fedavg']['arrays']
    assert u.keys() == ref.keys()
    for k in u: assert np.abs(np.asarray(u[k]) - np.asarray(ref[k])).max() <= 1e-6, k   # float32 sums in reply order

def test_flowers_log_shows_each_round_selection(result):
    log = result[1]
    for name in SELECTORS: assert f'configure_train: {name} selected 3 nodes' in log, log[-3000:]
