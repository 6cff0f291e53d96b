"""Shared pytest configuration: the repository root and the project's own options."""
import os, sys, warnings
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault('OMP_NUM_THREADS', '1')
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

def browser_required() -> bool:
    "True when a missing browser must fail the browser tests (CI) instead of skipping them."
    return os.environ.get('HETFL_REQUIRE_BROWSER', '') not in ('', '0') or os.environ.get('CI', '') == 'true'

def pytest_configure(config):
    "Register the project's markers."
    config.addinivalue_line('markers', "learned: asserts a learned outcome with `assert_learned` (re-run over seeds and threads by "
                                       "tools/robustness.py through `pytest -m learned`)")

BROWSER_RELAUNCHES = 1   # a browser test whose browser closed under it runs once more; a failed assert never does

@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    "Run a browser test once more when its browser closed under it (the machine's memory pressure, not the page)."
    if not pyfuncitem.module.__name__.startswith('test_browser'): return None
    args = {a: pyfuncitem.funcargs[a] for a in pyfuncitem._fixtureinfo.argnames}
    for attempt in range(BROWSER_RELAUNCHES + 1):
        try:
            pyfuncitem.obj(**args)
            return True
        except Exception as e:
            if type(e).__name__ != 'TargetClosedError' or attempt == BROWSER_RELAUNCHES: raise
            first = str(e).splitlines()[0]
            warnings.warn(f'{pyfuncitem.name}: the browser closed under the test ({first}); relaunched')
