"""The saved results in data/results: each file has a registered target in tools/results.py and a sidecar saying how it
was made; the command line lists, and rejects bad input. Nothing is generated here (`make results-check` does that)."""
import importlib.util, json, subprocess, sys
import pandas as pd
import pytest
from conftest import ROOT

CHEAP_BUDGET_S = 180   # `make results-check` must regenerate the cheap set in about 3 minutes (1 thread)

def _load_tool():
    "tools/results.py as a module (importing it has no side effects: no torch, no environment change)."
    spec = importlib.util.spec_from_file_location('results_tool', ROOT/'tools'/'results.py')
    mod = sys.modules['results_tool'] = importlib.util.module_from_spec(spec)   # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod

tool = _load_tool()
RESULTS = ROOT/'data'/'results'
FILES = sorted(p for p in RESULTS.iterdir() if p.is_file() and not p.name.endswith(tool.META_SUFFIX))

def test_every_file_has_a_target():
    files, targets = {p.name for p in FILES}, {t.file for t in tool.TARGETS.values()}
    assert not files - targets, f"files in data/results without a target in tools/results.py: {sorted(files - targets)}"
    assert not targets - files, f"targets without a saved file (run `python tools/results.py NAME`): {sorted(targets - files)}"

@pytest.mark.parametrize('path', FILES, ids=[p.name for p in FILES])
def test_sidecar(path):
    side = tool.meta_path(path)
    assert side.exists(), f"{side.name} missing: regenerate with `python tools/results.py {path.stem}`"
    meta = json.loads(side.read_text())
    assert not [k for k in tool.REQUIRED_META if k not in meta], f"{side.name} lacks {[k for k in tool.REQUIRED_META if k not in meta]}"
    assert not [k for k in tool.REQUIRED_VERSIONS if not meta['versions'].get(k)], f"{side.name}: versions incomplete"
    assert meta['target'] == path.stem and meta['command'] == f"python tools/results.py {path.stem}"
    assert meta['threads']['torch'] == tool.THREADS and meta['threads']['OMP_NUM_THREADS'] == str(tool.THREADS)
    assert meta['seeds'] == list(tool.TARGETS[path.stem].seeds) and meta['cpu']['model'] and meta['wall_seconds'] >= 0

def test_no_orphan_sidecars():
    orphans = [p.name for p in RESULTS.glob(f'*{tool.META_SUFFIX}') if not (RESULTS/(p.name[:-len(tool.META_SUFFIX)] + '.csv')).exists()]
    assert not orphans, f"sidecars without their file: {orphans}"

def test_list():
    r = subprocess.run([sys.executable, str(ROOT/'tools'/'results.py'), '--list'], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert all(name in r.stdout for name in tool.TARGETS), r.stdout

def test_cheap_set_fits_its_budget():
    cheap = [t for t in tool.TARGETS.values() if t.cheap]
    assert cheap and sum(t.cost_s for t in cheap) <= CHEAP_BUDGET_S
    assert [t.name for t in tool.resolve(['cheap'])] == [t.name for t in cheap]
    assert len(tool.resolve(['all', 'selection_shares'])) == len(tool.TARGETS)

@pytest.mark.parametrize('argv, message', [(['nope'], 'unknown target'), ([], 'name at least one target'),
                                           (['--keep', 'x', 'cheap'], '--keep and --strict only go with --check'),
                                           (['--list', 'cheap'], '--list takes no target names')])
def test_bad_input(argv, message, monkeypatch):
    monkeypatch.setattr(tool.os, 'environ', dict(tool.os.environ))   # main() pins the thread variables: keep them local
    with pytest.raises(ValueError, match=message): tool.main(argv)

def test_compare_uses_seed_spread():
    t = tool.TARGETS['feddiverse_estimation']
    saved = pd.DataFrame(dict(dataset=['a'] * 3 + ['b'] * 3, seed=[0, 1, 2] * 2, MAE_CI=0.0, MAE_AI=[.1, .2, .3, .1, .1, .1],
                              MAE_SC=.1, euclid_mean=.2, euclid_sup=.5, fallbacks=1, clients=24, client_seconds=1.0))
    sigma = (0.1 ** 2 / 2) ** 0.5                   # pooled over the two datasets: RMS of 0.1 and 0
    factor = tool.SPREAD_K * (2 / 3) ** 0.5         # k standard errors of a difference of two 3-seed means
    near = saved.assign(MAE_AI=saved.MAE_AI + 0.98 * factor * sigma, client_seconds=9.0)
    far = saved.assign(MAE_AI=saved.MAE_AI + 1.02 * factor * sigma)
    ok = {r['column']: r['ok'] for r in tool.compare(t, saved, near)}
    assert all(ok.values()) and 'client_seconds' not in ok    # timings are never compared
    assert not {r['column']: r['ok'] for r in tool.compare(t, saved, far)}['MAE_AI']
    assert not tool.identical_rows(t, saved, near) and tool.identical_rows(t, saved, saved.assign(client_seconds=5.0))
    assert not tool.compare(t, saved, saved[saved.dataset == 'a'])[0]['ok']   # a missing group fails
