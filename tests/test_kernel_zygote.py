"""The docs build's kernel zygote (tools/kernel_zygote.py): kernels forked with torch & co. imported behave like fresh
kernels (own process, directory, environment, fresh global generators) and never outlive their launcher."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import nbformat
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT/'tools'))
import build_docs as bd, kernel_zygote as kz

WAIT_S, POLL_S = 120, 0.05   # an upper bound for a process to appear or vanish (never asserted as a speed), and the poll

@pytest.fixture(scope='module')
def zygote():
    "A zygote (one per test module: it imports torch & co.), named in $HETFL_KERNEL_ZYGOTE, stopped after the tests."
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv('OMP_NUM_THREADS', '1')
        p = bd.start_zygote()
        assert p is not None and os.environ['HETFL_KERNEL_ZYGOTE']
        yield p
        bd.stop_zygote(p)
    assert p.poll() is not None and 'HETFL_KERNEL_ZYGOTE' not in os.environ and not Path(p.socket_path).exists()

def until(pred, what):
    "Poll `pred` until it holds (fail naming `what` after WAIT_S)."
    t0 = time.monotonic()
    while not pred():
        assert time.monotonic() - t0 < WAIT_S, f'{what} after {WAIT_S} s'
        time.sleep(POLL_S)

PROBE = ("import json, os, random, sys\n"
         "preloaded = 'torch' in sys.modules\n"
         "import numpy as np, torch\n"
         "print(json.dumps(dict(pid=os.getpid(), cwd=os.getcwd(), probe=os.environ.get('HETFL_PROBE'), preloaded=preloaded,\n"
         "    torch_seed=torch.initial_seed(), np=int(np.random.randint(2**31)), py=random.random())))")

def probe(folder, monkeypatch, value):
    "Run the PROBE notebook in `folder` with $HETFL_PROBE=`value` through `build_docs.execute`; its printed facts."
    monkeypatch.setenv('HETFL_PROBE', value)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    folder.mkdir(exist_ok=True); path = folder/'probe.ipynb'; nbformat.write(nb, path)
    _, _, err = bd.execute(path)
    assert err is None, err
    return json.loads(nbformat.read(path, as_version=4).cells[0].outputs[0]['text'])

def test_forked_kernels_are_fresh_processes(zygote, tmp_path, monkeypatch):
    a, b = probe(tmp_path/'a', monkeypatch, 'first'), probe(tmp_path/'b', monkeypatch, 'second')
    assert a['preloaded'] and b['preloaded']                                         # torch came with the fork
    assert len({a['pid'], b['pid'], zygote.pid}) == 3                                 # a process of its own each
    assert (a['cwd'], a['probe'], b['cwd'], b['probe']) == (str(tmp_path/'a'), 'first', str(tmp_path/'b'), 'second')
    assert a['np'] != b['np'] and a['py'] != b['py'] and a['torch_seed'] != b['torch_seed']   # seeded afresh, not inherited

SLEEPER = "import os, pathlib, time\npathlib.Path('pid').write_text(str(os.getpid()))\nwhile True: time.sleep(1)\n"

def test_a_kernel_dies_with_its_launcher(zygote, tmp_path):
    (tmp_path/'sleeper.py').write_text(SLEEPER)
    launcher = subprocess.Popen([sys.executable, kz.__file__, 'launch', os.environ['HETFL_KERNEL_ZYGOTE'], '--', '-m', 'sleeper'], cwd=tmp_path)
    until(lambda: (tmp_path/'pid').exists() and (tmp_path/'pid').read_text(), 'the forked process did not start')
    pid = int((tmp_path/'pid').read_text())
    assert kz.alive(pid) and pid not in (launcher.pid, zygote.pid)
    launcher.send_signal(signal.SIGKILL); launcher.wait()                           # what jupyter_client does to a stuck kernel
    until(lambda: not kz.alive(pid), 'the kernel outlived its killed launcher')

def test_a_launcher_returns_when_its_kernel_exits_and_forwards_signals(zygote, tmp_path):
    (tmp_path/'sleeper.py').write_text(SLEEPER)
    launcher = subprocess.Popen([sys.executable, kz.__file__, 'launch', os.environ['HETFL_KERNEL_ZYGOTE'], '--', '-m', 'sleeper'], cwd=tmp_path)
    until(lambda: (tmp_path/'pid').exists() and (tmp_path/'pid').read_text(), 'the forked process did not start')
    launcher.send_signal(signal.SIGTERM)                                            # forwarded: the kernel ends, then the launcher
    assert launcher.wait(timeout=WAIT_S) == 0
    assert not kz.alive(int((tmp_path/'pid').read_text()))

def test_a_zygote_with_threads_refuses_and_the_build_falls_back(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv('HETFL_KERNEL_ZYGOTE', raising=False)                         # (another test's zygote may be running)
    monkeypatch.setenv('OMP_NUM_THREADS', '2')                                      # OpenBLAS starts its threads on import
    assert bd.start_zygote() is None and 'HETFL_KERNEL_ZYGOTE' not in os.environ
    assert 'plain kernels' in capsys.readouterr().out
