"""The exported library and the README are generated from the notebooks: check they are in sync, and that the
notebooks are clean, without touching the working tree (everything runs in a temporary copy)."""
import filecmp, shutil, subprocess, sys
from pathlib import Path
import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent

@pytest.fixture(scope='module')
def copy(tmp_path_factory):
    "A temporary copy of the notebooks, the settings and the package."
    dst = tmp_path_factory.mktemp('sync')
    for f in ('settings.ini', '_quarto.yml', 'setup.py', 'README.md'): shutil.copy(ROOT/f, dst/f)
    shutil.copytree(ROOT/'nbs', dst/'nbs', symlinks=True, ignore=shutil.ignore_patterns('.ipynb_checkpoints'))
    shutil.copytree(ROOT/'hetfl_explore', dst/'hetfl_explore', ignore=shutil.ignore_patterns('__pycache__'))
    return dst

def changed(a: Path, b: Path, pattern: str) -> list[str]:
    "Files matching `pattern` whose content differs between folders `a` and `b` (or exist in only one)."
    fa = {p.relative_to(a) for p in a.rglob(pattern) if '.ipynb_checkpoints' not in p.parts}
    fb = {p.relative_to(b) for p in b.rglob(pattern) if '.ipynb_checkpoints' not in p.parts}
    return sorted(str(p) for p in fa ^ fb) + sorted(str(p) for p in fa & fb if not filecmp.cmp(a/p, b/p, shallow=False))

def test_exported_modules_match_notebooks(copy):
    subprocess.run([str(BIN/'nbdev_export')], cwd=copy, check=True)
    diff = changed(ROOT/'hetfl_explore', copy/'hetfl_explore', '*.py')
    assert not diff, f'run `make export`: these modules differ from their notebooks: {diff}'

def test_notebooks_are_clean(copy):
    subprocess.run([str(BIN/'nbdev_clean')], cwd=copy, check=True)
    diff = changed(ROOT/'nbs', copy/'nbs', '*.ipynb')
    assert not diff, f'run `make clean-nbs`: these notebooks are not clean: {diff}'
