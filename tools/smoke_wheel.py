"""The package as an importer gets it: build the wheel and the sdist (`python -m build`), check that both carry every
non-Python file of the package, install the wheel into a fresh virtual environment whose path holds neither the
repository nor its editable install, and run the smoke check there: the six FedDiverse metrics of a federation, a
3-round `run_fl`, a FedDiverse selection, a panel constructed; none of JupyterLab, Flower, Ray or Playwright imported.

    python tools/smoke_wheel.py                # fresh venv, pip install -c constraints.txt <wheel> (pip's cache; downloads once)
    python tools/smoke_wheel.py --reuse-deps   # the fresh venv reads this environment's installed packages (not its
                                               # hetfl_explore) instead of downloading them: seconds, for a local check
    python tools/smoke_wheel.py --check        # the smoke check alone, in the running interpreter
"""
from __future__ import annotations
import argparse, os, re, subprocess, sys, sysconfig, tempfile, zipfile, tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_ONLY = ('jupyterlab', 'flwr', 'ray', 'playwright')   # modules the lean install must neither need nor import

def package_data() -> list[str]:
    "Every non-Python file under the package folder (what the wheel must ship beside the modules), as repository paths."
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / 'hetfl_explore').rglob('*')
                  if p.is_file() and p.suffix not in ('.py', '.pyc') and '__pycache__' not in p.parts)

def build(out:Path) -> tuple[Path, Path]:
    "The wheel and the sdist of the working tree, built without an isolated build environment (no download)."
    subprocess.run([sys.executable, '-m', 'build', '--no-isolation', '--wheel', '--sdist', '--outdir', str(out), str(ROOT)],
                   check=True, stdout=subprocess.DEVNULL)
    return next(out.glob('*.whl')), next(out.glob('*.tar.gz'))

def check_archives(wheel:Path, sdist:Path):
    "Fail naming the package files the wheel or the sdist lacks, and any extra-only requirement the wheel's core lists."
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    in_sdist = {n.split('/', 1)[1] for n in tarfile.open(sdist).getnames() if '/' in n}
    for f in package_data():
        if f not in in_wheel: raise SystemExit(f'smoke_wheel: {f} is missing from {wheel.name} (MANIFEST.in / include_package_data)')
        if f not in in_sdist: raise SystemExit(f'smoke_wheel: {f} is missing from {sdist.name} (MANIFEST.in)')
    meta = next(n for n in in_wheel if n.endswith('.dist-info/METADATA'))
    core = [l for l in zipfile.ZipFile(wheel).read(meta).decode().splitlines() if l.startswith('Requires-Dist:') and 'extra ==' not in l]
    heavy = [l for l in core if re.match(r'Requires-Dist: (jupyterlab|flwr|ray|playwright)\b', l)]
    if heavy: raise SystemExit(f'smoke_wheel: the core requirements of {wheel.name} list extras: {heavy}')

def fresh_venv(where:Path, wheel:Path, reuse_deps:bool) -> Path:
    "A new virtual environment with the wheel installed; its python."
    subprocess.run([sys.executable, '-m', 'venv', str(where)], check=True)
    py = where / 'bin' / 'python'
    pip = [str(py), '-m', 'pip', 'install', '-q', '--disable-pip-version-check', '--no-compile']
    if reuse_deps:   # a plain path entry, not a site dir: this environment's .pth files (its editable install) stay unread
        site = subprocess.run([str(py), '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'], capture_output=True, text=True, check=True).stdout.strip()
        Path(site, 'reused_deps.pth').write_text(sysconfig.get_path('purelib') + '\n')
        subprocess.run(pip + ['--no-deps', str(wheel)], check=True)
    else: subprocess.run(pip + ['-c', str(ROOT / 'constraints.txt'), str(wheel)], check=True)
    return py

def smoke():
    "Import the installed package and use it as an importer would; fail if it comes from the repository or pulls in an extra."
    import numpy as np
    import hetfl_explore
    where = Path(hetfl_explore.__file__).resolve()
    if ROOT in where.parents: raise SystemExit(f'smoke_wheel: hetfl_explore was imported from the repository ({where}), not from the wheel')
    from hetfl_explore.foundation.data import digits_federation
    from hetfl_explore.foundation.hetero import fl_metrics
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.simulation import run_fl
    from hetfl_explore.feddiverse.selector import FedDiverseSelector, oracle_triplets
    from hetfl_explore.widgets.editor import MatrixEditor
    data = digits_federation(num_clients=6, alpha=0.5, seed=0)
    counts = np.zeros((data.num_clients, data.n_classes, data.n_attrs), np.int64)
    for k, i in enumerate(data.client_idx): np.add.at(counts[k], (data.y[i].numpy(), data.a[i].numpy()), 1)
    metrics = fl_metrics(counts)
    assert len(metrics) == 6 and all(np.isfinite(v) for v in metrics.values()), metrics
    cfg = RunConfig(rounds=3, clients_per_round=2, batch_size=16, lr=0.05, seed=0, device='cpu')
    h = run_fl(lambda: mlp(64, 16, 10), data, FedDiverseSelector(oracle_triplets(counts)), cfg)
    assert len(h.rounds) == 3 and all(len(s) == 2 for s in h.rounds.selected), h.rounds.selected.tolist()
    MatrixEditor()
    pulled = sorted(m for m in EXTRAS_ONLY if m in sys.modules)
    if pulled: raise SystemExit(f'smoke_wheel: the core pulled in {pulled}')
    print(f'smoke_wheel: ok ({where.parent}): metrics {sorted(metrics)}; 3 FedDiverse rounds, selected {h.rounds.selected.tolist()}; MatrixEditor built')

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help='run the smoke check in this interpreter')
    ap.add_argument('--reuse-deps', action='store_true', help="read this environment's installed packages instead of downloading them")
    a = ap.parse_args(argv)
    if a.check: return smoke()
    with tempfile.TemporaryDirectory(prefix='hetfl_wheel_') as tmp:
        wheel, sdist = build(Path(tmp) / 'dist')
        check_archives(wheel, sdist)
        print(f'smoke_wheel: built {wheel.name} and {sdist.name}; {len(package_data())} package data files in both', flush=True)
        py = fresh_venv(Path(tmp) / 'venv', wheel, a.reuse_deps)
        env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
        subprocess.run([str(py), '-I', '-c', f'import runpy, sys; sys.argv = ["smoke_wheel", "--check"]; runpy.run_path({str(Path(__file__).resolve())!r}, run_name="__main__")'],
                       check=True, cwd=tmp, env=env)

if __name__ == '__main__': sys.exit(main())
