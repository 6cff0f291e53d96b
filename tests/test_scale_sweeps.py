"""Resumable sweeps: the store, the grid, both backends, and kill-and-resume of a Ray sweep.

The kill-and-resume test starts a sweep on Ray (local, 2 CPUs) in a subprocess whose task holds part of the grid at a
gate, waits by polling the store until some configurations are saved, interrupts the driver (Ctrl-C), opens the gate,
resumes, and checks that nothing finished was re-run or lost.
"""
import json, os, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pytest
from hetfl_explore.scale.sweeps import (sweep_grid, run_sweep, SweepStore, config_key, check_address, fl_task, RUNS_DIR,
                                        interaction_matrices)

GRID = sweep_grid(['digits'], ['uniform', 'round_robin'], [0, 1, 2], rounds=[2], clients_per_round=[3])
POLL_S, WAIT_S = 0.2, 600   # poll the store every POLL_S seconds, give up after WAIT_S

def snapshot(path):
    "Name -> (bytes, mtime) of every saved configuration file."
    return {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in (Path(path) / RUNS_DIR).glob('*.json')}

def test_keys_hash_the_full_configuration():
    a, b = GRID[0], dict(GRID[0], seed=9)
    assert config_key(a) == config_key(dict(reversed(list(a.items()))))     # key order does not matter
    assert config_key(a) != config_key(b)
    assert config_key(a) != config_key(a, task=print)                          # the task is part of the identity

def test_grid_is_the_product():
    g = sweep_grid(['digits'], ['uniform', 'pow-d'], [0, 1], alpha=[0.1, 1.0], lr=[0.01])
    assert len(g) == 8 and {c['alpha'] for c in g} == {0.1, 1.0} and all(c['lr'] == 0.01 for c in g)

def test_matrices_count_every_sample():
    from hetfl_explore.foundation.data import digits_federation
    d = digits_federation(num_clients=4, seed=0)
    M = interaction_matrices(d)
    assert M.shape == (4, 10, 2) and M.sum() == sum(len(i) for i in d.client_idx)

def test_sequential_resume_runs_only_what_is_missing(tmp_path):
    store = SweepStore(tmp_path, GRID[:3])
    store.save(store.keys[1], dict(accuracy=-1.0))                            # pretend one finished earlier
    df = run_sweep(GRID[:3], tmp_path, backend='sequential', progress=False)
    assert df.from_store.tolist() == [False, True, False]
    assert df.accuracy[1] == -1.0 and 0 <= df.accuracy[0] <= 1               # the stored one was not re-run

def test_another_grid_is_refused(tmp_path):
    run_sweep(GRID[:1], tmp_path, backend='sequential', progress=False)
    with pytest.raises(ValueError, match='belongs to another sweep'): run_sweep(GRID[:2], tmp_path, backend='sequential')

def test_unreachable_address_is_a_clear_error(tmp_path):
    with pytest.raises(ConnectionError, match='cannot reach a Ray cluster'): check_address('127.0.0.1:1')
    with pytest.raises(ConnectionError, match='127.0.0.1:1'): run_sweep(GRID[:1], tmp_path, address='127.0.0.1:1')
    with pytest.raises(ValueError, match="backend='ray'"): run_sweep(GRID[:1], tmp_path, backend='sequential', address='127.0.0.1:1')

# The sweep's task runs the configurations with seed < OPEN_SEEDS and holds the others at a gate (a file) until the test
# opens it, so the interruption always finds finished and unfinished work: no race between the sweep and the signal.
OPEN_SEEDS = 2
GATED_TASK = textwrap.dedent(f'''
    import os, time
    from pathlib import Path
    from hetfl_explore.scale.sweeps import fl_task
    def gated_task(config):
        "fl_task, but configurations with seed >= {OPEN_SEEDS} wait until the gate file exists."
        while config['seed'] >= {OPEN_SEEDS} and not Path(os.environ['HETFL_TEST_GATE']).exists(): time.sleep(0.05)
        return fl_task(config)
''')
SCRIPT = textwrap.dedent('''
    import sys, gated_task
    from ray import cloudpickle
    from hetfl_explore.scale.sweeps import sweep_grid, run_sweep
    cloudpickle.register_pickle_by_value(gated_task)                 # Ray workers need not import the test's module
    grid = sweep_grid(['digits'], ['uniform', 'round_robin'], list(range(6)), rounds=[3], clients_per_round=[3])
    run_sweep(grid, sys.argv[1], task=gated_task.gated_task, backend='ray', num_cpus=2, progress=False)
''')

def test_kill_and_resume_loses_and_reruns_nothing(tmp_path, monkeypatch):
    pytest.importorskip('ray')
    grid = sweep_grid(['digits'], ['uniform', 'round_robin'], list(range(6)), rounds=[3], clients_per_round=[3])
    code, store, gate = tmp_path/'code', tmp_path/'store', tmp_path/'gate'
    code.mkdir(); (code/'gated_task.py').write_text(GATED_TASK)
    env = dict(os.environ, OMP_NUM_THREADS='1', HETFL_TEST_GATE=str(gate), PYTHONPATH=os.pathsep.join([str(code), os.environ.get('PYTHONPATH', '')]))
    p = subprocess.Popen([sys.executable, '-c', SCRIPT, str(store)], env=env)
    t0 = time.monotonic()
    while len(snapshot(store)) < 2:                                          # wait for saved results, not for a time
        assert p.poll() is None, f'the sweep ended (exit code {p.returncode}) before it could be interrupted'
        assert time.monotonic() - t0 < WAIT_S, 'no configuration finished in time'
        time.sleep(POLL_S)
    p.send_signal(signal.SIGINT)                                             # Ctrl-C
    try: p.wait(timeout=60)
    except subprocess.TimeoutExpired: p.kill(); p.wait()                     # a driver stuck in shutdown: kill it
    saved = snapshot(store)
    open_configs = sum(c['seed'] < OPEN_SEEDS for c in grid)
    assert 2 <= len(saved) <= open_configs < len(grid), 'only open configurations can have finished'
    monkeypatch.setenv('HETFL_TEST_GATE', str(gate)); monkeypatch.syspath_prepend(str(code)); gate.touch()
    import gated_task
    df = run_sweep(grid, store, task=gated_task.gated_task, backend='sequential', progress=False)
    after = snapshot(store)
    assert {k: after[k] for k in saved} == saved                              # nothing finished was rewritten (re-run)
    assert set(df.key[df.from_store] + '.json') == set(saved)                 # ... and the resume says so
    assert len(after) == len(grid) and df.accuracy.notna().all()             # nothing lost, everything done

OPTIONAL_ABSENT = textwrap.dedent('''
    import sys, tempfile
    sys.modules['flwr'] = None; sys.modules['ray'] = None          # as if the extras were not installed
    import hetfl_explore, hetfl_explore.scale
    from hetfl_explore.scale.sweeps import sweep_grid, run_sweep
    df = run_sweep(sweep_grid(['digits'], ['uniform'], [0], rounds=[1]), tempfile.mkdtemp(), backend='sequential', progress=False)
    assert len(df) == 1
    for imp, extra in (('import hetfl_explore.scale.flower', 'hetfl_explore[flower]'),
                       ('run_sweep(sweep_grid(["digits"], ["uniform"], [1], rounds=[1]), tempfile.mkdtemp(), progress=False)', 'hetfl_explore[ray]')):
        try: exec(imp); raise SystemExit('no ImportError for ' + imp)
        except ImportError as e: assert extra in str(e), e
''')

def test_default_paths_work_without_the_extras():
    subprocess.run([sys.executable, '-c', OPTIONAL_ABSENT], check=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
