"""Run every notebook with nbdev's own runner (`nbdev.test.test_nb`, the engine behind `nbdev_test`), one pytest
test per notebook, so the suite ends with pytest's summary line.

Cells flagged with a `tst_flags` flag from `settings.ini` (`cuda`, `slow`) are skipped unless forced with
`HETFL_TEST_FLAGS="slow cuda"`, exactly like `nbdev_test --flags`.

`make test` builds the docs first, and the docs build executes every notebook (same flags, one thread, failing on any
error). A notebook that build executed on exactly the current notebook, package, data and flags (its fingerprint in
`_docs_exec/executed.json`, see `tools/build_docs.py`) passes without running a second time; any change, a forced
flag or `HETFL_RERUN_NOTEBOOKS=1` runs it here.
"""
import atexit, os, sys
from pathlib import Path
import pytest
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.test import test_nb as run_notebook, _keep_file
from conftest import ROOT

sys.path.insert(0, str(ROOT/'tools'))
import build_docs

CFG = get_config()
NBS = sorted(Path(f).absolute() for f in nbglob(CFG.nbs_path, as_path=True)
             if _keep_file(Path(f), '.notest'))

def _register_except_ipython_reset(register):
    "Wrap `atexit.register` so IPython shells' exit-time reset (a full gc per shell, seconds at exit) is not queued."
    def reg(f, *args, **kwargs):
        return f if getattr(f, '__name__', '') == 'atexit_operations' else register(f, *args, **kwargs)
    return reg

def test_found_notebooks(): assert len(NBS) >= 2, f"no notebooks found under {CFG.nbs_path}"

@pytest.mark.parametrize('nb', NBS, ids=[str(p.relative_to(CFG.nbs_path)) for p in NBS])
def test_notebook(nb, monkeypatch):
    monkeypatch.setattr(atexit, 'register', _register_except_ipython_reset(atexit.register))
    skip, force = CFG.tst_flags.split(), os.environ.get('HETFL_TEST_FLAGS', '').split()
    if not force and not os.environ.get('HETFL_RERUN_NOTEBOOKS') and build_docs.executed_ok(nb): return   # run by the docs build
    ok, secs = run_notebook(nb, skip_flags=skip, force_flags=force, basepath=CFG.config_path)
    assert ok, f"{nb.name} failed (traceback above)"
