"""Shared pytest configuration: the repository root and the project's own options."""
import os, sys
from pathlib import Path

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
