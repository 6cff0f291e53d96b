#!/usr/bin/env python
"""Regenerate and check the published results in `data/results/`: the one way to make each file.

Every file there has one registered target below that calls the library function which makes it. The generator
runs each target in a fresh Python process with `OMP_NUM_THREADS=1` (set before torch is imported) and
`torch.set_num_threads(1)`, with the seeds stated in the target, so the numbers do not depend on the machine's
thread count (with two threads the same seeds move modelhet AUCs by up to 0.06). Next to each file it writes
`<name>.meta.json`: the command, seeds, package versions, git commit, thread count, CPU, date and wall time.

On one kind of CPU the trained numbers then reproduce bit for bit (`--strict` requires that when the CPU model, torch
CPU capability and torch/numpy versions match the saved file's sidecar). A CPU with another vector instruction set
(AVX2 instead of AVX-512, or ARM) still changes them, as another seed would, so a trained figure is compared as its
**mean over the seeds** with a tolerance from its **spread over the seeds**: k = 4 standard errors of the difference
of two n-seed means, 4·σ·√(2/n), where σ is the figure's seed std pooled (root mean square) over the file's groups,
read from the whole saved file, and n the number of seeds compared. Selection statistics and sizes must match to their
rounding unit; timings are never compared.

Every trained result runs seeds 0..S-1 (S >= 10; 20 for colored MNIST, whose runs take seconds). A check of a many-seed
file recomputes a **random subset of its seeds** (`Target.check_seeds` of them, drawn afresh each time from a draw
seed the check prints; `--draw N` repeats a draw, `--all-seeds` recomputes every seed) and compares those seeds' rows of
the saved file with the recomputed ones. Regeneration is resumable: a target writes into
`data/results/.partial/<name>/` (ignored by git), which a restarted run continues and a finished one moves into place.

Usage:
    python tools/results.py NAME... | all          regenerate into data/results (with sidecars)
    python tools/results.py --check NAME... | cheap regenerate into a temporary folder and compare (exit 1 if not)
    python tools/results.py --list                 targets, cost and tolerance
`make results` runs `all`; `make results-check` (CI) runs `--check all`: every file, whole or a drawn subset (its
`check_seeds` seeds, and for a grid over datasets one drawn dataset, `check_part`), about 10 minutes on one core;
`make results-check-all` recomputes every seed of every file (`--all-seeds`, as long as `make results`);
`--check cheap` is the quick set that regenerates whole in about 3 minutes.
"""
from __future__ import annotations
import argparse, datetime, json, math, os, platform, shutil, subprocess, sys, tempfile, time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))   # this checkout's hetfl_explore, also in a worktree
RESULTS = ROOT/'data'/'results'
TOOL = 'tools/results.py'
THREADS = 1   # the pinned thread count of every generation (set in the environment before torch is imported)
THREAD_ENV = {'OMP_NUM_THREADS': str(THREADS), 'MKL_NUM_THREADS': str(THREADS)}
META_SUFFIX = '.meta.json'
REQUIRED_META = ('target', 'file', 'command', 'check', 'seeds', 'versions', 'threads', 'cpu', 'date', 'wall_seconds')
REQUIRED_VERSIONS = ('python', 'torch', 'numpy', 'hetfl_explore_commit')
GROUPS = ('all', 'cheap')
PARTIAL = RESULTS/'.partial'   # resumable staging of a regeneration in progress (ignored by git)
SEEDS = tuple(range(10))    # seeds 0..S-1 of every trained result (colored MNIST: `CMNIST_SEEDS`)
CMNIST_SEEDS = tuple(range(20))   # a colored-MNIST run takes seconds: twice the seeds
SPREAD_K = 4.0      # a trained figure may move by this many standard errors of a difference of two seed means (`Spread`)
ISA_ENV = ('ATEN_CPU_CAPABILITY', 'ONEDNN_MAX_CPU_ISA', 'MKL_CBWR')   # variables that change the kernels torch picks
SAME_MACHINE = (('cpu', 'model'), ('cpu', 'torch_capability'), ('versions', 'torch'), ('versions', 'numpy'),
                *(('cpu', k) for k in ISA_ENV))   # equal in both sidecars: the rows should come back bit for bit

# ---------------------------------------------------------------------------------------------------- tolerances
@dataclass(frozen=True)
class Abs:
    "A fixed absolute tolerance (0: exact)."
    tol:float # the largest accepted |saved - regenerated|
    def value(self, view, col, n=None) -> float: "The tolerance of `col`."; return self.tol
    def __str__(self): "The rule in words."; return f'±{self.tol:g}' if self.tol else 'exact'

@dataclass(frozen=True)
class Spread:
    "k standard errors of the difference of two n-seed means, k·σ·√(2/n); σ: the seed std pooled over the file's groups."
    k:float = SPREAD_K # standard errors
    floor:float = 0.0 # smallest tolerance (for figures whose spread is 0 on the saved seeds)
    def factor(self, n:int) -> float: "The tolerance in units of σ for means over `n` seeds."; return self.k * math.sqrt(2 / n)
    def sigma(self, view, col) -> float:
        "Pooled seed std of `col` in a view (from its `<col>_std` column)."
        import numpy as np
        s = view[f'{col}_std'].to_numpy(float)
        return float(np.sqrt(np.nanmean(s ** 2))) if np.isfinite(s).any() else 0.0
    def value(self, view, col, n) -> float: "The tolerance of `col` for means over `n` seeds."; return max(self.floor, self.factor(n) * self.sigma(view, col))
    def __str__(self): "The rule in words."; return f'{self.k:g}·σ·√(2/n)' + (f' (≥ {self.floor:g})' if self.floor else '')

# ---------------------------------------------------------------------------------------------------------- views
def seed_view(keys:tuple, # columns that identify a published figure (everything but the seed)
              cols:tuple, # the figures
             ) -> Callable:
    "A view that averages the per-seed rows of each group: `col` (mean) and `col_std` (std over seeds)."
    def view(df):
        g = df.groupby(list(keys), dropna=False)[list(cols)]
        return g.mean().join(g.std(ddof=1).add_suffix('_std'))
    return view

def row_view(keys:tuple, # columns that identify a row
            ) -> Callable:
    "A view of the saved rows themselves, indexed by `keys`."
    return lambda df: df.set_index(list(keys))

def modelhet_view(df):
    "The published figures of the modelhet sweep: `summarize` of the clients' and of the global model's attacks."
    from hetfl_explore.modelhet.experiments import summarize
    keys = ['n_large', 'method']
    c = summarize(df).set_index(keys)
    g = summarize(df, target='global').set_index(keys)[['auc_yeom', 'auc_yeom_std']].add_prefix('global_')
    return c.join(g)

# -------------------------------------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    "One result file: how to make it, what it costs, and how a regenerated copy is compared with it."
    name:str # target name (the file is `<name>.csv`)
    make:Callable # make(path): write the file (runs in the worker process, one thread)
    seeds:tuple # the seeds it uses
    cost_s:float # measured wall time, 1 thread, this project's 2-core machine
    cheap:bool # part of `--check cheap` / `make results-check`
    view:Callable # view(df) -> DataFrame indexed by the figure's keys
    tolerance:dict # column of the view -> `Abs` or `Spread`
    timing:tuple = () # timing columns: written, never compared
    rows:Callable|None = None # rows(df) -> bool mask of the rows compared (default: all)
    note:str = '' # what is compared, in words
    check_seeds:int|None = None # seeds a check recomputes (drawn at random from `seeds`); None: the whole file
    check_part:str|None = None # a column of the file, passed to `make` as a keyword: a check also draws one of its values
    @property
    def file(self) -> str: "The file name under data/results."; return f'{self.name}.csv'
    def compared(self, df):
        "The compared part of a saved file: timing columns and rows left out."
        df = df if self.rows is None else df[self.rows(df)]
        return df.drop(columns=[c for c in self.timing if c in df.columns])
    def cost_check(self, parts:int=1) -> float:
        "Estimated seconds of a check (the drawn seeds, and one of the `parts` values of `check_part`, only)."
        return self.cost_s * (self.check_seeds or len(self.seeds)) / len(self.seeds) / (parts if self.check_part else 1)

def _selection_shares(path, seeds):
    "Type shares of every selection rule on the seven federations, 3,000 rounds (no training)."
    from hetfl_explore.feddiverse.simulation import selection_share_table
    selection_share_table(rounds=3000, seed=seeds[0]).to_csv(path, index=False)

def _feddiverse_overhead(path, seeds):
    "Table 2: FedDiverse's one-off client cost, upload sizes and per-round server cost on CMNIST_GSC."
    from hetfl_explore.feddiverse.experiments import measure_overhead
    measure_overhead('CMNIST_GSC', seed=seeds[0]).to_csv(path)

def _feddiverse_estimation(path, seeds):
    "Estimation error of the triplets (Algorithms 1-4) on every stand-in, teaching preset."
    from hetfl_explore.feddiverse.experiments import estimation_errors, PRESETS
    estimation_errors(PRESETS['teaching'], seeds=seeds, out=str(path))

def _feddiverse_cmnist(path, seeds):
    "Tables 1 and 3 at the teaching scale on colored MNIST: 16 runs per seed."
    from hetfl_explore.feddiverse.experiments import paper_grid, PRESETS
    paper_grid(PRESETS['teaching'], out=str(path), datasets=('CMNIST_GSC',), seeds=seeds, log=None)

def _feddiverse_teaching(path, seeds, dataset=None):
    "Tables 1 and 3 at the teaching scale on the five shapes stand-ins (or one), the methods of SHAPES_METHODS: 55 runs per seed."
    from hetfl_explore.feddiverse.experiments import paper_grid, PRESETS, SHAPES_DATASETS, SHAPES_METHODS
    datasets = SHAPES_DATASETS if dataset is None else (dataset,)
    paper_grid(PRESETS['teaching'], out=str(path), datasets=datasets, seeds=seeds, methods=SHAPES_METHODS, log=None)

def _modelhet_tiny(path, seeds):
    "The tiny digits sweep of chapter 4: 9 sub-model methods x 3 configurations + 2 baselines, Yeom attack."
    import dataclasses
    from hetfl_explore.modelhet.experiments import run_preset, MODELHET_TINY
    run_preset(dataclasses.replace(MODELHET_TINY, seeds=tuple(seeds)), path=str(path), progress=False)

def _modelhet_lira(path, seeds):
    "LiRA on the tiny digits federation with pooled (biased, old) and population (new) shadows, 3 methods."
    import dataclasses
    from hetfl_explore.modelhet.experiments import run_preset, LIRA_COMPARE, LIRA_METHODS
    run_preset(dataclasses.replace(LIRA_COMPARE, seeds=tuple(seeds)), methods=LIRA_METHODS, path=str(path), progress=False)

def _lira_view(df):
    "Mean and std over seeds of the client-averaged LiRA AUC and TPR@1% per (method, shadow design)."
    from hetfl_explore.modelhet.experiments import lira_comparison
    return lira_comparison(df)

def _fairness_grid(path, seeds, dataset=None):
    "Chapter 6's grid: 3 faces-like splits (or one) x 5 privacy levels."
    from hetfl_explore.fairness.experiments import run_fairness_grid, ALL_LEVELS, FairnessPreset, SPLIT_PRESETS
    datasets = tuple(SPLIT_PRESETS) if dataset is None else (dataset,)
    run_fairness_grid(datasets, levels=tuple(ALL_LEVELS), seeds=tuple(seeds), preset=FairnessPreset(), path=str(path), log=None)

def _fairness_explorer(path, seeds):
    "The fairness explorer's precomputed grid: 4 rho x 3 client mixes x 4 levels."
    from hetfl_explore.fairness.experiments import explorer_grid
    explorer_grid(seeds=tuple(seeds), path=str(path))

_EST = ('MAE_CI', 'MAE_AI', 'MAE_SC', 'euclid_mean', 'euclid_sup', 'fallbacks')
_TEACH = ('wga', 'accuracy', 'share_CI', 'share_AI', 'share_SC')
_GRID = ('acc', 'wga', 'd_eop', 'd_dp', 'd_pe', 'd_eod', 'd_ap', 'd_wcal', 'di', 'triplet_error')
_EXPL = ('acc', 'wga', 'd_eop', 'd_dp', 'clients_mean_d_dp', 'clients_mean_d_eop', 'federation_d_dp', 'federation_d_eop')
_MH = ('server_acc', 'client_acc', 'auc_yeom', 'adv_yeom', 'global_auc_yeom')
_SHARES, _UNION = ('CI', 'AI', 'SC'), ('union_CI', 'union_AI', 'union_SC')
_TEACH_VIEW, _TEACH_TOL = seed_view(('dataset', 'method', 'fl'), _TEACH + ('rounds',)), {'rounds': Abs(0), **{c: Spread() for c in _TEACH}}

TARGETS = {t.name: t for t in [
    Target('selection_shares', _selection_shares, (0,), 50, True, row_view(('federation', 'method')),
           {'kappa': Abs(0), **{c: Abs(0.1) for c in _SHARES}, **{c: Abs(0.001) for c in _UNION}},
           note='no training: shares to their rounding unit (0.1 %), union triplets to 0.001'),
    Target('feddiverse_overhead', _feddiverse_overhead, (0,), 8, True,
           row_view(('quantity',)), {'value': Abs(0)}, rows=lambda d: d.quantity.str.startswith('upload'),
           note='upload sizes exact; the times (rows) are machine-dependent and not compared'),
    Target('feddiverse_estimation', _feddiverse_estimation, (0, 1, 2), 90, True, seed_view(('dataset',), _EST + ('clients',)),
           {'clients': Abs(0), **{c: Spread() for c in _EST}}, timing=('client_seconds',),
           note='per dataset, mean over 3 seeds (descriptive: no comparison between arms rests on it)'),
    Target('feddiverse_cmnist', _feddiverse_cmnist, CMNIST_SEEDS, 400, False, _TEACH_VIEW, _TEACH_TOL, timing=('seconds',),
           check_seeds=4, note='per (method, FL method), mean over the drawn seeds; WGA curves not compared'),
    Target('feddiverse_teaching', _feddiverse_teaching, SEEDS, 3300, False, _TEACH_VIEW, _TEACH_TOL, timing=('seconds',),
           check_seeds=1, check_part='dataset', note='per (method, FL method) of the drawn dataset, mean over the drawn seed; '
           'WGA curves not compared'),
    Target('fairness_explorer', _fairness_explorer, (0, 1, 2), 170, False, seed_view(('rho', 'n_anti', 'level'), _EXPL),
           {c: Spread() for c in _EXPL}, check_seeds=1, note='per (rho, n_anti, level), mean over the drawn seed'),
    Target('fairness_grid', _fairness_grid, SEEDS, 950, False, seed_view(('dataset', 'level'), _GRID),
           {c: Spread() for c in _GRID}, timing=('seconds',), check_seeds=1, check_part='dataset',
           note='per level of the drawn dataset, mean over the drawn seed; count tensors not compared'),
    Target('modelhet_tiny', _modelhet_tiny, SEEDS, 1220, False, modelhet_view,
           {'n_seeds': Abs(0), **{c: Spread() for c in _MH}}, timing=('seconds',), check_seeds=1,
           note='summarize() per (n_large, method), %, mean over the drawn seed'),
    Target('modelhet_lira', _modelhet_lira, (0, 1, 2), 420, False, _lira_view,
           {c: Spread() for c in ('auc', 'tpr_1pct')}, timing=('seconds',), check_seeds=1,
           note='lira_comparison() per (method, attack), %, mean over the drawn seed'),
]}

PENDING: dict = {}   # targets without a saved file yet: name -> why (a check skips them, saying so)

def resolve(names, # target names, 'all' or 'cheap'
           ) -> list[Target]:
    "The targets named on the command line, in registry order."
    if not names: raise ValueError(f"name at least one target, 'all' or 'cheap' (see `python {TOOL} --list`)")
    unknown = [n for n in names if n not in TARGETS and n not in GROUPS]
    if unknown: raise ValueError(f"unknown target(s) {', '.join(map(repr, unknown))}: choose from {', '.join(TARGETS)}, 'all' or 'cheap'")
    want = {n for n in names if n in TARGETS}
    if 'all' in names: want |= set(TARGETS)
    if 'cheap' in names: want |= {n for n, t in TARGETS.items() if t.cheap}
    return [t for n, t in TARGETS.items() if n in want]

# ------------------------------------------------------------------------------------------------------- sidecars
def _git(*args) -> str:
    "Output of a git command in the repository ('' where git or the repository is missing)."
    try: return subprocess.run(['git', *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError): return ''

def cpu_model() -> str:
    "The CPU's model name (from /proc/cpuinfo where there is one)."
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.lower().startswith('model name'): return line.split(':', 1)[1].strip()
    except OSError: pass
    return platform.processor() or platform.machine()

def environment() -> dict:
    "Versions, threads and CPU of this process (call after torch is imported and pinned)."
    import numpy, pandas, torch
    commit = _git('rev-parse', 'HEAD') or 'unknown'
    dirty = bool(_git('status', '--porcelain', '--', 'hetfl_explore', 'tools'))
    return dict(versions=dict(python=platform.python_version(), torch=torch.__version__, numpy=numpy.__version__, pandas=pandas.__version__,
                              hetfl_explore_commit=commit, hetfl_explore_dirty=dirty),
                threads=dict(torch=torch.get_num_threads(), **{k: os.environ.get(k) for k in THREAD_ENV}),
                cpu=dict(model=cpu_model(), cores=os.cpu_count(), torch_capability=torch.backends.cpu.get_cpu_capability(),
                         **{k: os.environ[k] for k in ISA_ENV if k in os.environ}))

def meta_path(csv:Path) -> Path: "The sidecar of a result file."; return csv.with_name(csv.stem + META_SUFFIX)

def worker(name:str, # target to make
           out_dir:str, # folder to write `<name>.csv` and its sidecar into (an unfinished file there is resumed)
           seeds:str='', # comma-separated seeds to make ('': all the target's seeds)
           part:str='', # a value of the target's `check_part` column to make alone ('': all of them)
          ):
    "Make one target in this (fresh, single-threaded) process and write its sidecar."
    import torch
    torch.set_num_threads(THREADS)
    t, path = TARGETS[name], Path(out_dir)/TARGETS[name].file
    seeds = tuple(int(x) for x in seeds.split(',')) if seeds else t.seeds
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')
    kw = {t.check_part: part} if part else {}
    t0 = time.perf_counter(); t.make(path, seeds, **kw); wall = time.perf_counter() - t0
    meta = dict(target=name, file=f'data/results/{t.file}', command=f'python {TOOL} {name}', also_made_by='make results (every file)',
                check=f'python {TOOL} --check {name}', seeds=list(seeds), **environment(), date=date, wall_seconds=round(wall, 1),
                wall_note='seconds of the last (resumed) session only' if path.exists() and wall < t.cost_s / 4 else '')
    meta_path(path).write_text(json.dumps(meta, indent=1, ensure_ascii=False) + '\n')

def generate(t:Target, # target
             out_dir:Path, # folder for the new file and sidecar
             seeds:tuple|None=None, # the seeds to make (None: all the target's)
             part:str|None=None, # one value of the target's `check_part` column to make (None: all)
            ) -> float: # wall seconds, process start included
    "Run `worker` for one target in a fresh process with the thread count pinned in its environment."
    t0 = time.perf_counter()
    env = {**os.environ, **THREAD_ENV, 'PYTHONWARNINGS': 'ignore'}
    arg = ','.join(map(str, seeds)) if seeds is not None else ''
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), '--worker', t.name, str(out_dir), arg, part or ''],
                       cwd=ROOT, env=env)
    if r.returncode: raise RuntimeError(f"{t.name}: generation failed (exit {r.returncode}, traceback above)")
    return time.perf_counter() - t0

# ------------------------------------------------------------------------------------------------------ comparing
def _max_diff(a, b) -> float:
    "Largest |a - b| where NaN == NaN and NaN vs a number is infinite."
    import numpy as np
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = np.abs(a - b); d[np.isnan(a) & np.isnan(b)] = 0; d[np.isnan(a) ^ np.isnan(b)] = np.inf
    return float(d.max()) if d.size else 0.0

def seed_rows(df, # a saved file
              seeds:tuple|None, # the seeds kept (None: every row)
              part:tuple|None=None, # (column, value): only the rows with this value (None: every row)
             ):
    "The rows of the given seeds (files without a seed column are kept whole), and of the given part."
    df = df if seeds is None or 'seed' not in df.columns else df[df.seed.isin(seeds)]
    return df if part is None else df[df[part[0]] == part[1]]

def draw_seeds(t:Target, # target
               draw:int, # seed of the draw (printed by the check, so a draw can be repeated)
              ) -> tuple|None: # the drawn seeds, sorted (None: the target is checked whole)
    "A random subset of `t.check_seeds` of the target's seeds."
    import random
    if t.check_seeds is None or t.check_seeds >= len(t.seeds): return None
    return tuple(sorted(random.Random(f'{draw}:{t.name}').sample(list(t.seeds), t.check_seeds)))

def draw_part(t:Target, # target
              draw:int, # seed of the draw (as for `draw_seeds`)
              saved, # DataFrame of the saved file (its values of `t.check_part`)
             ) -> tuple|None: # (column, value), or None when the target has no `check_part`
    "One value of the target's `check_part` column, drawn at random from the saved file's values."
    import random
    if t.check_part is None: return None
    return t.check_part, random.Random(f'{draw}:{t.name}:part').choice(sorted(map(str, saved[t.check_part].unique())))

def compare(t:Target, # target
            saved, # DataFrame of the saved file (whole: the seed spread σ is read from all its seeds)
            new, # DataFrame of the regenerated file (the drawn seeds only, or whole)
            seeds:tuple|None=None, # the seeds recomputed (None: the whole file)
            part:tuple|None=None, # (column, value) recomputed (None: every value)
           ) -> list[dict]: # one row per compared column
    "Compare the published figures of two versions of a file (the target's view) within the target's tolerances."
    full = t.view(t.compared(saved))
    vs, vn = t.view(t.compared(seed_rows(saved, seeds, part))), t.view(t.compared(new))
    n = len(seeds) if seeds is not None else len(t.seeds)
    rows = []
    if set(vs.index) != set(vn.index):
        rows.append(dict(file=t.file, column='(rows)', max_abs_diff=f'{len(set(vs.index) ^ set(vn.index))} differ', tolerance='same', ok=False))
        return rows
    vn = vn.loc[vs.index]
    for col, rule in t.tolerance.items():
        diff, tol = _max_diff(vs[col], vn[col]), rule.value(full, col, n)
        rows.append(dict(file=t.file, column=col, max_abs_diff=diff, tolerance=tol, rule=str(rule), ok=diff <= tol + 1e-12))
    return rows

def identical_rows(t:Target, saved, new) -> bool:
    "True when every saved row, timings aside, came back bit for bit (the usual case on one CPU type)."
    a, b = t.compared(saved), t.compared(new)
    if list(a.columns) != list(b.columns) or len(a) != len(b): return False
    order = lambda d: d.sort_values(list(d.columns)).reset_index(drop=True)
    return order(a).equals(order(b))

def _fmt(v) -> str:
    "A table cell: strings as they are, numbers to 4 significant digits."
    if isinstance(v, str): return v
    return 'inf' if math.isinf(v) else f'{v:.4g}'

def print_table(rows:list[dict]):
    "The check's table: file, column, max abs diff, tolerance (and its rule), ok."
    head = ('file', 'column', 'max abs diff', 'tolerance', 'rule', 'ok')
    cells = [(r['file'], r['column'], _fmt(r['max_abs_diff']), _fmt(r['tolerance']), r.get('rule', ''), 'ok' if r['ok'] else 'FAIL') for r in rows]
    w = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    for line in [head, tuple('-' * x for x in w), *cells]: print('  '.join(s.ljust(x) for s, x in zip(line, w)).rstrip())

# ------------------------------------------------------------------------------------------------------- commands
def parts(t:Target, # target
          saved=None, # DataFrame of its saved file, if already read (None: read the column from data/results)
         ) -> int:
    "How many values of the target's `check_part` column its saved file holds (1 without a part or a saved file)."
    import pandas as pd
    if t.check_part is None: return 1
    if saved is None:
        if not (RESULTS/t.file).exists(): return 1
        saved = pd.read_csv(RESULTS/t.file, usecols=[t.check_part])
    return int(saved[t.check_part].nunique())

def list_targets():
    "Print every target with its cost estimate, seeds and tolerance."
    print(f"{'target':22s} {'file':27s} {'cost':>7s}  {'cheap':5s}  seeds    tolerance (rule: columns) and what is compared")
    for t in TARGETS.values():
        by_rule = {}
        for c, r in t.tolerance.items(): by_rule.setdefault(str(r), []).append(c)
        tol = '; '.join(f"{r}: {', '.join(cs)}" for r, cs in by_rule.items())
        seeds = f"{t.seeds[0]}..{t.seeds[-1]}" if len(t.seeds) > 1 else str(t.seeds[0])
        part = '' if t.check_part is None else f' and {t.check_part}'
        checked = 'whole' if t.check_seeds is None else f'{t.check_seeds} drawn seed(s){part}, {t.cost_check(parts(t)) / 60:.1f} m'
        print(f"{t.name:22s} {t.file:27s} {t.cost_s / 60:5.1f} m  {'yes' if t.cheap else 'no':5s}  {seeds:7s}  "
              f"{tol}\n{'':75s}(check: {checked}; {t.note})" + (f"\n{'':75s}PENDING: {PENDING[t.name]}" if t.name in PENDING else ''))
    print(f"σ = the figure's std over seeds, pooled over the file's groups (from the whole saved file); "
          f"{SPREAD_K:g}·σ·√(2/n) = {SPREAD_K:g} standard errors of a difference of two n-seed means (n: the seeds compared). "
          f"cheap: {sum(t.cost_s for t in TARGETS.values() if t.cheap) / 60:.1f} m, check of all: "
          f"{sum(t.cost_check(parts(t)) for t in TARGETS.values()) / 60:.0f} m, regeneration of all: {sum(t.cost_s for t in TARGETS.values()) / 60:.0f} m.")

def regenerate(targets:list[Target]):
    "Regenerate each target into data/results (file and sidecar replaced only when the run succeeds; an interrupted run resumes)."
    for t in targets:
        stage = PARTIAL/t.name
        stage.mkdir(parents=True, exist_ok=True)
        resumed = ' (resuming its unfinished file)' if (stage/t.file).exists() else ''
        print(f"{t.name}: regenerating (about {t.cost_s / 60:.1f} min, {THREADS} thread){resumed} ...", flush=True)
        wall = generate(t, stage)
        for f in (t.file, meta_path(Path(t.file)).name): shutil.move(str(stage/f), str(RESULTS/f))
        stage.rmdir()
        print(f"{t.name}: wrote data/results/{t.file} and its sidecar ({wall:.0f} s)", flush=True)

def same_machine(saved_meta:Path, # sidecar of the saved file
                 new_meta:Path, # sidecar of the regenerated file
                ) -> bool: # same CPU model, torch CPU capability, torch and numpy: the rows should come back bit for bit
    "Whether a regeneration ran on the kind of machine, and with the packages, that made the saved file."
    if not saved_meta.exists(): return False
    a, b = json.loads(saved_meta.read_text()), json.loads(new_meta.read_text())
    return all(a.get(k, {}).get(f) == b.get(k, {}).get(f) for k, f in SAME_MACHINE)

def regenerate_and_compare(targets:list[Target], # targets to regenerate and compare
                           keep:str|None=None, # folder to keep the regenerated files in
                           strict:bool=False, # also fail when the rows are not bit-identical on the same machine and packages
                           draw:int|None=None, # seed of the draw of the checked seeds (None: a fresh one, printed)
                           all_seeds:bool=False, # recompute every seed of every target
                          ) -> bool: # all within tolerance
    "Regenerate each target into a temporary folder and compare with the saved file; print the table."
    import pandas as pd
    rows, notes = [], []
    draw = int.from_bytes(os.urandom(4), 'little') if draw is None else draw
    print(f"seeds drawn with --draw {draw}", flush=True)
    for t in targets:
        saved_path = RESULTS/t.file
        if t.name in PENDING and not saved_path.exists():
            notes.append(f"{t.file}: not checked, {PENDING[t.name]}; make it with `python {TOOL} {t.name}`"); continue
        if not saved_path.exists(): raise FileNotFoundError(f"{saved_path}: no saved file to check; make it with `python {TOOL} {t.name}`")
        with tempfile.TemporaryDirectory(prefix=f'results-check-{t.name}-') as tmp:
            saved = pd.read_csv(saved_path)
            seeds, part = (None, None) if all_seeds else (draw_seeds(t, draw), draw_part(t, draw, saved))
            which = 'every seed' if seeds is None else f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))} of {len(t.seeds)}"
            which += '' if part is None else f", {part[0]} {part[1]}"
            cost = t.cost_s if seeds is None else t.cost_check(parts(t, saved))
            print(f"{t.name}: regenerating {which} into a temporary folder (about {cost / 60:.1f} min) ...", flush=True)
            wall = generate(t, Path(tmp), seeds, None if part is None else part[1])
            new = pd.read_csv(Path(tmp)/t.file)
            rows += compare(t, saved, new, seeds, part)
            same, identical = same_machine(meta_path(saved_path), meta_path(Path(tmp)/t.file)), identical_rows(t, seed_rows(saved, seeds, part), new)
            if strict and same and not identical:
                rows.append(dict(file=t.file, column='(bit-identical rows)', max_abs_diff='no', tolerance='yes', rule='--strict', ok=False))
            machine = 'same CPU and packages as the saved file' if same else 'another CPU or package set than the saved file'
            notes.append(f"{t.file} ({which}): {wall:.0f} s; rows {'identical (timings aside)' if identical else 'NOT bit-identical'} ({machine}); {t.note}")
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                for f in (t.file, meta_path(Path(t.file)).name): shutil.copy(Path(tmp)/f, Path(keep)/f)
    print(); print_table(rows); print(); print('\n'.join(notes))
    ok = all(r['ok'] for r in rows)
    print('\nall within tolerance' if ok else '\nDISAGREEMENT: see the FAIL rows above')
    return ok

def main(argv=None # command-line arguments (default: sys.argv[1:])
        ) -> int: # exit status
    "Command line: regenerate targets, check them (`--check`), or list them (`--list`)."
    os.environ.update(THREAD_ENV)   # before anything here imports torch (the workers get it in their environment too)
    p = argparse.ArgumentParser(prog=f'python {TOOL}', description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('names', nargs='*', help="targets (see --list), 'all' or 'cheap'")
    p.add_argument('--check', action='store_true', help='regenerate into a temporary folder and compare with data/results')
    p.add_argument('--keep', metavar='DIR', help='with --check: keep the regenerated files and sidecars in DIR')
    p.add_argument('--strict', action='store_true', help='with --check: on the CPU and packages of the saved file, '
                                                         'also require its rows bit for bit')
    p.add_argument('--draw', type=int, metavar='N', help='with --check: the seed of the draw of checked seeds (repeats a printed draw)')
    p.add_argument('--all-seeds', action='store_true', help='with --check: recompute every seed, not a drawn subset')
    p.add_argument('--list', action='store_true', help='list the targets with cost and tolerance')
    p.add_argument('--worker', nargs='+', metavar='NAME DIR [SEEDS]', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker: worker(*a.worker); return 0
    if a.list:
        if a.names or a.check: raise ValueError("--list takes no target names and no --check")
        list_targets(); return 0
    if (a.keep or a.strict or a.draw is not None or a.all_seeds) and not a.check:
        raise ValueError("--keep, --strict, --draw and --all-seeds only go with --check")
    targets = resolve(a.names)
    if not a.check: regenerate(targets); return 0
    t0 = time.perf_counter(); ok = regenerate_and_compare(targets, a.keep, a.strict, a.draw, a.all_seeds)
    print(f"wall time {time.perf_counter() - t0:.0f} s"); return 0 if ok else 1

if __name__ == '__main__':
    try: sys.exit(main())
    except ValueError as e: sys.exit(f"{TOOL}: error: {e}")
