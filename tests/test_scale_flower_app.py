"""The Flower App (apps/flower/) run by `flwr run`: a SuperLink in simulation mode on free ports under a temporary
FLWR_HOME, 8 supernodes, 2 rounds; the run selects the clients `run_fl` selects with the same selector and seed.
The SuperLink (and everything it starts) is stopped whatever happens."""
import json, logging, os, pickle, signal, socket, subprocess, sys, time
from contextlib import contextmanager
from types import SimpleNamespace
from pathlib import Path
import pytest
pytest.importorskip('flwr', reason='Flower is not installed: pip install hetfl_explore[flower]')
from hetfl_explore.engine.simulation import run_fl
from hetfl_explore.engine.store import History
from hetfl_explore.scale.flower import app_task, APP_KEYS

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / 'apps' / 'flower'
BIN = Path(sys.executable).parent   # flwr and flower-superlink come with the flwr package
START_S, RUN_S, STOP_S = 60, 420, 10   # seconds: SuperLink ready, the whole `flwr run`, a stop before SIGKILL
SPELLED = {'pow-d': 'pow-d', 'feddiverse': 'feddiverse[sign-invariant]'}   # selector -> its name in the result file
RUN_CONFIG = {'selector': 'pow-d', 'federation': 'digits', 'num-clients': 8, 'rounds': 2, 'clients-per-round': 3, 'seed': 1}

def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def toml_value(v): return f"'{v}'" if isinstance(v, str) else str(v)

def stop(proc):
    "Stop `proc` and its whole process group (the SuperExec, the simulation and Ray it started)."
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(STOP_S)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait(STOP_S)

START_TRIES = 3   # SuperLinks started: a free port can be taken by another process (Ray's workers) before the SuperLink binds it

def wait_ready(port, proc, log) -> bool:
    "Whether the SuperLink `proc` answers on `port` (False when it exited at start-up; its output is in `log`)."
    import httpx
    t0 = time.monotonic()
    while time.monotonic() - t0 < START_S:
        if proc.poll() is not None: return False
        try:
            if httpx.get(f'http://127.0.0.1:{port}/health', timeout=1).is_success: return True
        except httpx.HTTPError: pass
        time.sleep(0.5)
    raise TimeoutError(f'the SuperLink did not answer on port {port} within {START_S} s:\n{log.read_text()[-3000:]}')

def start_superlink(tmp_path, env, simulation=True):
    "A SuperLink (in simulation mode unless `simulation` is False) on a free port, its `FLWR_HOME` config naming it; (process, port)."
    for attempt in range(START_TRIES):
        port, log = free_port(), tmp_path / f'superlink-{attempt}.log'
        (Path(env['FLWR_HOME']) / 'config.toml').write_text(f'[superlink]\ndefault = "local-simulation"\n\n[superlink.local-simulation]\n'
                                                          f'address = "127.0.0.1:{port}"\ninsecure = true\n')
        link = subprocess.Popen([str(BIN / 'flower-superlink'), '--insecure', *(['--simulation'] * simulation), '--host', '127.0.0.1',
                                 '--port', str(port), '--disable-runtime-dependency-installation'], env=env, cwd=tmp_path, start_new_session=True,
                                stdout=log.open('w'), stderr=subprocess.STDOUT)
        if wait_ready(port, link, log): return link, port
        stop(link)
    raise AssertionError(f'the SuperLink exited at start-up {START_TRIES} times; last output:\n{log.read_text()[-3000:]}')

@contextmanager
def deployment(tmp_path, env, n:int):
    "A SuperLink in deployment mode and `n` SuperNodes with partition ids 0 .. n-1 (no Ray); all stopped whatever happens."
    link, port = start_superlink(tmp_path, env, simulation=False)
    nodes = []
    try:
        for k in range(n):
            log = tmp_path / f'supernode-{k}.log'
            nodes.append(subprocess.Popen([str(BIN / 'flower-supernode'), '--insecure', '--superlink', f'127.0.0.1:{port}',
                                           '--port', str(free_port()), '--node-config', f'partition-id={k} num-partitions={n}'],
                                          env=env, cwd=tmp_path, start_new_session=True, stdout=log.open('w'), stderr=subprocess.STDOUT))
        yield port
    finally:
        for p in nodes: stop(p)
        stop(link)

LOCAL_RAY_TRIES = 3   # calls of `start_ray` before the test gives up on starting Ray

@contextmanager
def local_ray(env:dict):
    """A local Ray cluster started here (retrying a start-up that timed out), which the simulation joins via RAY_ADDRESS.
    Ray gives a raylet it starts a fixed 30 s to register: on a loaded machine Flower's own start-up can fail every time,
    while joining a running cluster has no such wait. The cluster belongs to this process and ends with it."""
    import ray
    from hetfl_explore.scale.sweeps import start_ray
    for attempt in range(LOCAL_RAY_TRIES):   # each call already retries a few times
        try: ctx = start_ray(2); break
        except Exception:
            if attempt == LOCAL_RAY_TRIES - 1: raise
    try: yield {**env, 'RAY_ADDRESS': ctx.address_info['gcs_address']}
    finally: ray.shutdown()

def own_dataset(folder) -> dict:
    "A user's own Dataset saved in `folder`: two features, 3 classes, a binary attribute, 8 sites; the run config naming it."
    import numpy as np
    from datasets import Dataset
    r, n = np.random.default_rng(0), 400
    Dataset.from_dict(dict(x0=r.normal(size=n), x1=r.normal(size=n), label=r.integers(0, 3, n), group=r.integers(0, 2, n),
                           site=np.arange(n) % 8)).save_to_disk(str(folder))
    return {'selector': 'feddiverse', 'federation': f'dataset:{folder}', 'features': 'x0,x1', 'attribute': 'group',
            'partition-by': 'site', 'rounds': 2, 'clients-per-round': 3, 'seed': 1}

@pytest.mark.parametrize('data', ['digits', 'own dataset'])
def test_flwr_run_selects_as_the_engine(tmp_path, data):
    home, out, result_file = tmp_path / 'flwr_home', tmp_path / 'history.pkl', str(tmp_path / 'result.json')
    home.mkdir()
    run_config = RUN_CONFIG if data == 'digits' else own_dataset(tmp_path / 'mine')
    env = {**os.environ, 'FLWR_HOME': str(home), 'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')])),
           'OMP_NUM_THREADS': '1', 'FLWR_DISABLE_UPDATE_CHECK': '1',
           'PATH': os.pathsep.join([str(BIN), os.environ.get('PATH', '')])}   # the SuperLink starts `flower-superexec` by name
    with local_ray(env) as env:
        link, port = start_superlink(tmp_path, env)
        try:
            config = ' '.join(f'{k}={toml_value(v)}' for k, v in {**run_config, 'history-file': str(out), 'result-file': result_file}.items())
            run = subprocess.run([str(BIN / 'flwr'), 'run', str(APP), 'local-simulation', '--federation-config', 'num-supernodes=8',
                                  '--run-config', config, '--stream'], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=RUN_S)
        finally: stop(link)
    assert out.exists(), f'the run wrote no history:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}'
    flower = History.from_dict(pickle.loads(out.read_bytes()))
    defaults = {'local-epochs': 1, 'batch-size': 16, 'lr': 0.05, 'backend': 'sequential'}   # apps/flower/pyproject.toml
    t = app_task({**defaults, **run_config})
    engine = run_fl(t['model_fn'], t['data'], t['selector'], t['config'])
    assert len(flower) == 2 and flower.rounds.selected.tolist() == engine.rounds.selected.tolist()
    assert (flower.final_params - engine.final_params).abs().max().item() <= 1e-6
    result = json.loads(Path(result_file).read_text())   # the readable result, at the path the run logged
    assert [r['selected'] for r in result['rounds']] == engine.rounds.selected.tolist() and result['selector'] == SPELLED[run_config['selector']]
    assert f'hetfl result (selected clients and metrics per round): {result_file}' in run.stdout + run.stderr
    assert 'hetfl round 2/2: selected clients' in run.stdout + run.stderr

def test_app_run_config_declares_only_keys_the_app_reads():
    import tomllib
    cfg = tomllib.loads((APP / 'pyproject.toml').read_text())['tool']['flwr']['app']
    assert cfg['components'] == {'serverapp': 'hetfl_explore.scale.flower:flower_server_app',
                                 'clientapp': 'hetfl_explore.scale.flower:flower_client_app'}
    assert {k.replace('-', '_') for k in cfg['config']} <= set(APP_KEYS)
    t = app_task(cfg['config'])
    assert t['data'].num_clients == cfg['config']['num-clients'] and t['config'].rounds == cfg['config']['rounds']

@pytest.mark.parametrize('bad, allowed', [({'selector': 'best'}, "pow-d, afl-g"), ({'federation': 'cifar'}, "'digits', 'spawrious_gsc'"),
                                          ({'epochs': 3}, 'clients_per_round'),
                                          ({'federation': 'cmnist_gsc', 'num-clients': 5}, "has 24 clients")])
def test_bad_run_config_names_the_allowed_values(bad, allowed):
    with pytest.raises(ValueError, match=allowed): app_task(bad)

@pytest.mark.parametrize('old, new', [('AFL_G', 'afl-g'), ('round_robin', 'round-robin'), ('Oort', 'oort'), ('q-FFL', 'q-ffl')])
def test_selector_names_have_one_spelling_and_old_aliases(old, new):
    a, b = app_task({'selector': old}), app_task({'selector': new})
    assert type(a['selector']) is type(b['selector'])

def test_a_published_federation_can_be_named():
    t = app_task({'federation': 'cmnist_gsc', 'scale': 0.2})
    assert t['data'].num_clients == 24 and t['data'].x.ndim == 2

def test_a_bad_run_config_is_the_first_log_line_and_nothing_runs(caplog):
    from hetfl_explore.scale.flower import flower_server_app, _app_main
    class NoGrid:   # the ServerApp must not touch the grid with a bad run config
        def __getattr__(self, name): raise AssertionError(f'the grid was used ({name}) despite a bad run config')
    with caplog.at_level(logging.INFO, logger='flwr'):
        _app_main(NoGrid(), SimpleNamespace(run_config={'selector': 'best'}))
    assert caplog.records[0].levelno == logging.ERROR and caplog.records[0].getMessage().startswith("run config: selector='best'")
