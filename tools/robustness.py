#!/usr/bin/env python
"""Re-run every learned-outcome check over seeds and thread counts and report its margins.

A learned check is a call `hetfl_explore.foundation.core.assert_learned(name, value, bound)`: it passes when `value > bound`.
This tool finds

* every notebook under `nbs/` that calls `assert_learned(` and executes its cells in order, up to and including the
  last cell that calls it (cells flagged `#| slow`, `#| cuda` or `#| eval: false` are skipped, as nbdev's runner does;
  the working directory is the notebook's folder), and
* every test file under `tests/` with a `@pytest.mark.learned` test, run with `pytest -m learned`,

once per (seed, threads) in a fresh subprocess with `HETFL_OUTCOME_SEED=seed`, `OMP_NUM_THREADS=threads` and
`HETFL_OUTCOME_LOG` naming a temporary file where each check appends its value, bound and margin. It prints one row per
check (runs passed, worst margin and where, median value), writes the same plus every raw record and the machine to
a JSON file, and exits non-zero if a run failed or a check is missing from a run.

    python tools/robustness.py --jobs 2                 # seeds 0-9 x threads {1, 2}
    python tools/robustness.py --seeds 3 --only 09_     # a quick look at one notebook
"""
from __future__ import annotations
import argparse, functools, json, os, platform, re, statistics, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALL = 'assert_learned('                 # what marks a notebook cell as holding a learned check
DEFINITION = 'def assert_learned('      # the notebook defining the function exercises it with fixed numbers: not a check
LEARNED_MARK = '@pytest.mark.learned'
DEFAULT_JSON = ROOT / 'benchmarks' / 'results' / 'robust.json'
TAIL_CHARS = 2000                      # characters of a failed run's output kept in the report

@dataclass
class Source:
    "One thing to run per (seed, threads): a notebook prefix or a test file's learned tests."
    kind: str  # 'notebook' or 'test'
    path: Path
    upto: int = -1  # notebook: index of the last cell to run
    def label(self) -> str: return str(self.path.relative_to(ROOT))

@dataclass
class Run:
    "The outcome of one subprocess."
    source: str
    seed: int
    threads: int
    ok: bool
    wall_s: float
    records: list = field(default_factory=list)
    error: str = ''

def _cell_source(cell) -> str:
    "A cell's source as one string (stored as a string or a list of lines)."
    src = cell.get('source', '')
    return ''.join(src) if isinstance(src, list) else src

def notebook_sources(nbs:Path) -> list[Source]:
    "Notebooks under `nbs` calling `assert_learned(`, each with the index of its last cell that calls it."
    out = []
    for p in sorted(nbs.rglob('*.ipynb')):
        if '.ipynb_checkpoints' in p.parts or p.name.startswith('_'): continue
        cells = json.loads(p.read_text(encoding='utf-8'))['cells']
        code = [_cell_source(c) for c in cells]
        if any(DEFINITION in s for s in code): continue
        hits = [i for i, c in enumerate(cells) if c['cell_type'] == 'code' and CALL in code[i]]
        if hits: out.append(Source('notebook', p, hits[-1]))
    return out

def test_sources(tests:Path) -> list[Source]:
    "Test files with at least one `@pytest.mark.learned` test."
    return [Source('test', p) for p in sorted(tests.glob('test_*.py')) if LEARNED_MARK in p.read_text(encoding='utf-8')]

# ---------------------------------------------------------------------------------------------------------------
# The worker: executes one notebook prefix in this process (called in a subprocess by the driver).

@functools.cache
def skip_flags() -> frozenset:
    "The flags settings.ini's `tst_flags` skips (`cuda`, `slow`): such cells do not run in the normal suite either."
    from nbdev.config import get_config
    return frozenset(get_config(path=ROOT).tst_flags.split())

def _skip_cell(cell) -> bool:
    "nbdev's rule: markdown, the export cell, `#| eval: false`, and cells flagged with a skipped test flag."
    if cell.cell_type != 'code' or 'nbdev_export' + '(' in cell.source: return True
    d = getattr(cell, 'directives_', {}) or {}
    if d.get('eval:', [''])[0].lower() == 'false': return True
    return bool(skip_flags() & d.keys())

def run_notebook_prefix(path:Path, upto:int) -> None:
    "Execute the cells of `path` up to index `upto` with execnb (as nbdev's test runner does); raise on the first error."
    from nbdev.process import NBProcessor
    from nbdev.frontmatter import FrontmatterProc
    from execnb.shell import CaptureShell
    from fastcore.xtras import working_directory
    os.environ['IN_TEST'] = '1'
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb
    shell = CaptureShell(path)
    with working_directory(path.parent):
        for i, cell in enumerate(nb.cells[:upto + 1]):
            if _skip_cell(cell): continue
            shell.cell(cell)
            if shell.exc: raise RuntimeError(f"cell {i} failed:\n{shell.prettytb(fname=path)}")

def _worker(path:str, upto:int) -> int:
    "Subprocess entry point: run one notebook prefix, print the error tail on failure, exit without IPython's reset."
    try: run_notebook_prefix(Path(path), upto)
    except Exception as e:
        print(str(e)[-TAIL_CHARS:], file=sys.stderr, flush=True); code = 1
    else: code = 0
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(code)  # skip IPython's exit-time reset (a full gc), seconds per process

# ---------------------------------------------------------------------------------------------------------------
# The driver.

def run_one(src:Source, seed:int, threads:int, timeout:float) -> Run:
    "Run one source in a subprocess with the seed and thread count in its environment; collect its check records."
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / 'checks.jsonl'
        env = {**os.environ, 'HETFL_OUTCOME_SEED': str(seed), 'HETFL_OUTCOME_LOG': str(log),
               'OMP_NUM_THREADS': str(threads), 'MKL_NUM_THREADS': str(threads), 'PYTHONHASHSEED': '0',
               'OMP_WAIT_POLICY': 'PASSIVE'}  # idle OpenMP threads sleep: spinning on a busy core slows tiny ops 50-100x
        if src.kind == 'notebook': cmd = [sys.executable, __file__, '--worker', str(src.path), str(src.upto)]
        else: cmd = [sys.executable, '-m', 'pytest', str(src.path), '-m', 'learned', '-q', '-p', 'no:cacheprovider']
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
            ok, out = p.returncode == 0, (p.stdout + p.stderr)
        except subprocess.TimeoutExpired: ok, out = False, f'timed out after {timeout:.0f} s'
        wall = time.perf_counter() - t0
        records = [json.loads(l) for l in log.read_text(encoding='utf-8').splitlines() if l.strip()] if log.exists() else []
    return Run(src.label(), seed, threads, ok, wall, records, '' if ok else out[-TAIL_CHARS:])

def _passes(run:Run, name:str) -> bool:
    "A run passes a check when it recorded it and every record of it cleared its bound."
    got = [x['margin'] for x in run.records if x['name'] == name]
    return bool(got) and min(got) > 0

def summarise(runs:list[Run]) -> list[dict]:
    "One row per (source, check name): runs, passes, worst margin and where, median value; a missing record fails."
    rows = []
    for source in dict.fromkeys(r.source for r in runs):
        mine = [r for r in runs if r.source == source]
        names = list(dict.fromkeys(rec['name'] for r in mine for rec in r.records))
        for name in names:
            recs, missing = [], []
            for r in mine:
                got = [x for x in r.records if x['name'] == name]
                if got: recs += [(r, x) for x in got]
                else: missing.append((r.seed, r.threads))
            worst_r, worst = min(recs, key=lambda t: t[1]['margin'])
            rows.append(dict(name=name, source=source, bound=recs[0][1]['bound'], runs=len(mine),
                             passed=sum(_passes(r, name) for r in mine),
                             worst_margin=worst['margin'], worst_seed=worst_r.seed, worst_threads=worst_r.threads,
                             median_value=statistics.median(x['value'] for _, x in recs), missing=missing))
    return rows

def machine() -> dict:
    "CPU model, cores and library versions of this machine."
    cpu = platform.processor()
    try: cpu = next(l.split(':', 1)[1].strip() for l in Path('/proc/cpuinfo').read_text().splitlines() if l.startswith('model name'))
    except (OSError, StopIteration): pass
    import numpy, torch
    return dict(cpu=cpu, cores=os.cpu_count(), python=platform.python_version(), torch=torch.__version__,
                numpy=numpy.__version__, platform=platform.platform())

def print_table(rows:list[dict], runs:list[Run]) -> None:
    "The margins, one row per check, and the failed runs."
    w = max([len(r['name']) for r in rows] + [5])
    s = max([len(Path(r['source']).name) for r in rows] + [6])
    print(f"{'check':<{w}}  {'source':<{s}}  {'bound':>8}  {'passed':>7}  {'worst margin':>12}  {'at (seed, thr)':>14}  {'median value':>12}")
    for r in rows:
        print(f"{r['name']:<{w}}  {Path(r['source']).name:<{s}}  {r['bound']:>8.4g}  {r['passed']:>3}/{r['runs']:<3}  "
              f"{r['worst_margin']:>12.4g}  {str((r['worst_seed'], r['worst_threads'])):>14}  {r['median_value']:>12.4g}"
              + (f"  MISSING in {len(r['missing'])} runs" if r['missing'] else ''))
    for r in runs:
        if not r.ok: print(f"\nFAILED {r.source} seed={r.seed} threads={r.threads}:\n{r.error}")

def merge_records(old:dict, new:dict, root:Path=ROOT) -> dict:
    "The old record with the sources of `new` replaced by their new runs (seeds and threads must match) and sources whose file is gone dropped; commands kept in order."
    if (old['seeds'], old['threads']) != (new['seeds'], new['threads']):
        raise SystemExit(f"--update: the existing record ran seeds {old['seeds']} x threads {old['threads']}, this run "
                         f"{new['seeds']} x {new['threads']}: use the same --seeds and --threads")
    ran = set(new['sources']) | {s for s in old['sources'] if not (root / s).exists()}   # re-run, or moved away
    keep = lambda rows: [r for r in rows if r['source'] not in ran]
    commands = old.get('commands', [dict(command=old['command'], wall_s=old['wall_s'], machine=old['machine'])])
    return dict(command=new['command'], commands=commands + [dict(command=new['command'], wall_s=new['wall_s'], machine=new['machine'])],
                seeds=new['seeds'], threads=new['threads'], jobs=new['jobs'], wall_s=round(old['wall_s'] + new['wall_s'], 1),
                machine=new['machine'], checks=keep(old['checks']) + new['checks'],
                sources={**{k: v for k, v in old['sources'].items() if k not in ran}, **new['sources']},
                records=keep(old['records']) + new['records'], failures=keep(old['failures']) + new['failures'])

def main(argv=None) -> int:
    "Run every source over the seeds and thread counts, print the table, write the JSON; 1 if a run or check failed."
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', type=int, default=10, help='seeds 0..N-1 (default 10)')
    ap.add_argument('--threads', type=int, nargs='+', default=[1, 2], help='OMP_NUM_THREADS values (default 1 2)')
    ap.add_argument('--jobs', type=int, default=1, help='subprocesses in parallel (default 1)')
    ap.add_argument('--only', nargs='+', default=None, help='keep only sources whose path contains one of these substrings')
    ap.add_argument('--json', default=str(DEFAULT_JSON), help=f'result file (default {DEFAULT_JSON.relative_to(ROOT)})')
    ap.add_argument('--timeout', type=float, default=900, help='seconds per subprocess (default 900)')
    ap.add_argument('--update', action='store_true', help='keep the other sources of the existing --json file and '
                    'replace only the ones run now (same seeds and threads required)')
    ap.add_argument('--worker', nargs=2, metavar=('NOTEBOOK', 'UPTO'), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker: return _worker(a.worker[0], int(a.worker[1]))
    if a.seeds < 1: ap.error(f'--seeds={a.seeds}: expected at least 1')
    if a.jobs < 1: ap.error(f'--jobs={a.jobs}: expected at least 1')
    if any(t < 1 for t in a.threads): ap.error(f'--threads={a.threads}: expected positive integers')
    sources = notebook_sources(ROOT / 'nbs') + test_sources(ROOT / 'tests')
    if a.only: sources = [s for s in sources if any(o in s.label() for o in a.only)]
    if not sources: print('no learned-outcome assertions found' + (f' matching {a.only!r}' if a.only else ''), file=sys.stderr); return 2
    tasks = [(s, seed, t) for s in sources for seed in range(a.seeds) for t in a.threads]
    print(f"{len(sources)} sources x {a.seeds} seeds x threads {a.threads}: {len(tasks)} runs, {a.jobs} at a time", flush=True)
    t0 = time.perf_counter(); runs = []
    with ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda t: run_one(*t, timeout=a.timeout), tasks):
            runs.append(r)
            print(f"  {'ok  ' if r.ok else 'FAIL'} {r.source} seed={r.seed} threads={r.threads} {r.wall_s:.1f} s, {len(r.records)} checks", flush=True)
    wall = time.perf_counter() - t0
    rows = summarise(runs)
    print(); print_table(rows, runs)
    bad_runs = [r for r in runs if not r.ok or not r.records]
    bad_rows = [r for r in rows if r['missing'] or r['passed'] < r['runs']]
    print(f"\n{len(rows)} checks, {len(runs)} runs in {wall:.0f} s (--jobs {a.jobs}); "
          f"{len(bad_runs)} failed runs, {len(bad_rows)} checks not passing in every run")
    out = Path(a.json); out.parent.mkdir(parents=True, exist_ok=True)
    per_source = {s.label(): dict(kind=s.kind, runs=[dict(seed=r.seed, threads=r.threads, ok=r.ok, wall_s=round(r.wall_s, 2), checks=len(r.records))
                                                      for r in runs if r.source == s.label()]) for s in sources}
    command = ' '.join(['tools/robustness.py'] + (argv if argv is not None else sys.argv[1:]))
    record = dict(command=command, seeds=list(range(a.seeds)), threads=a.threads, jobs=a.jobs, wall_s=round(wall, 1), machine=machine(),
                  checks=rows, sources=per_source, records=[dict(source=r.source, **x) for r in runs for x in r.records],
                  failures=[dict(source=r.source, seed=r.seed, threads=r.threads, error=r.error) for r in bad_runs])
    if a.update and out.exists(): record = merge_records(json.loads(out.read_text(encoding='utf-8')), record)
    out.write_text(json.dumps(record, indent=1, default=str) + '\n', encoding='utf-8')
    print(f"wrote {out}")
    return 1 if bad_runs or bad_rows else 0

if __name__ == '__main__': sys.exit(main())
