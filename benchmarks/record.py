"""The benchmark record shared by every script in `benchmarks/`.

Each benchmark hands `write_record` its payload and a flat dict of headline *figures*; the helper

* adds the machine: CPU model, physical cores, logical CPUs (threads), torch/OMP threads, the 1/5/15-minute load
  average before (`Bench` start) and after the run, Python and package versions, and a `machine_kind` key
  (CPU model | logical CPUs | torch threads) that says which records are comparable;
* prints each figure beside the committed record's value (`git show HEAD:benchmarks/results/<name>.json`, else the file on
  disk) as a ratio new/record, and flags ``WORSE`` a figure more than `WORSE_TOLERANCE` (25%) worse than the record
  when both were measured on the same machine kind (on another kind the ratio is shown, never flagged);
* writes ``benchmarks/results/<name>.json`` with ``machine``, ``figures`` and ``comparison`` next to the payload.

A figure is ``dict(value=..., unit='s', better='lower'|'higher')``. Ratios to anchors measured in the same run (plain
loop, Flower, bare SGD, matmul) are the headline figures, since absolute times move from machine to machine and with load.
"""
from __future__ import annotations
import json, os, pathlib, platform, subprocess, sys, time
from importlib import metadata

HERE = pathlib.Path(__file__).parent
RESULTS = HERE / 'results'
WORSE_TOLERANCE = 0.25  # a figure more than 25% worse than the committed record (same machine kind) is flagged
PACKAGES = ('numpy', 'torch', 'pandas', 'scipy', 'scikit-learn', 'flwr', 'ray', 'hetfl_explore')

def cpu_model() -> str:
    "The CPU model name (/proc/cpuinfo on Linux, else `platform.processor()`)."
    try:
        for line in pathlib.Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'): return line.split(':', 1)[1].strip()
    except OSError: pass
    return platform.processor() or platform.machine()

def physical_cores() -> int:
    "Distinct (physical id, core id) pairs in /proc/cpuinfo; the logical CPU count where that is unavailable."
    try:
        pairs, phys = set(), '0'
        for line in pathlib.Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('physical id'): phys = line.split(':')[1].strip()
            if line.startswith('core id'): pairs.add((phys, line.split(':')[1].strip()))
        if pairs: return len(pairs)
    except OSError: pass
    return os.cpu_count() or 1

def versions() -> dict:
    "Installed versions of the packages that set the speed (absent ones omitted)."
    out = {'python': platform.python_version()}
    for p in PACKAGES:
        try: out[p] = metadata.version(p)
        except metadata.PackageNotFoundError: pass
    return out

def machine(load_before) -> dict:
    "The machine a record was measured on, with the load average before and now (after)."
    import torch
    m = dict(cpu_model=cpu_model(), cores=physical_cores(), logical_cpus=os.cpu_count(), torch_threads=torch.get_num_threads(),
             omp_num_threads=os.environ.get('OMP_NUM_THREADS'), platform=platform.platform(),
             cuda=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
             loadavg_before=list(load_before), loadavg_after=list(os.getloadavg()), packages=versions(),
             date_utc=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))
    m['machine_kind'] = f"{m['cpu_model']}|{m['logical_cpus']} cpus|{m['torch_threads']} threads" + (f"|{m['cuda']}" if m['cuda'] else '')
    return m

def committed(name: str) -> dict | None:
    "The committed record `benchmarks/results/<name>.json`: HEAD's version (None if never committed; the file on disk outside git)."
    rel = f'benchmarks/results/{name}.json'
    try: r = subprocess.run(['git', 'show', f'HEAD:{rel}'], cwd=HERE.parent, capture_output=True, text=True)
    except OSError: r = None
    if r is not None and r.returncode == 0: txt = r.stdout
    elif r is not None and 'not a git repository' not in r.stderr: txt = None   # in git, never committed: no record yet
    else: txt = (RESULTS / f'{name}.json').read_text() if (RESULTS / f'{name}.json').exists() else None
    try: return json.loads(txt) if txt else None
    except json.JSONDecodeError: return None

def compare(figures: dict, old: dict | None, kind: str) -> dict:
    "Per figure: the record's value, ratio new/record, and whether it is > `WORSE_TOLERANCE` worse on the same machine kind."
    old_figs = (old or {}).get('figures', {})
    old_machine = (old or {}).get('machine')
    old_kind = old_machine.get('machine_kind') if isinstance(old_machine, dict) else None   # a record without `machine_kind`: no kind
    same = bool(old) and old_kind == kind
    out = {}
    for k, f in figures.items():
        o = old_figs.get(k, {}).get('value')
        if o is None or f['value'] is None or not o:
            out[k] = dict(record=None, ratio=None, worse=False); continue
        ratio = f['value'] / o
        worse_by = ratio - 1 if f.get('better', 'lower') == 'lower' else 1 / ratio - 1 if ratio else float('inf')
        out[k] = dict(record=o, ratio=ratio, worse=bool(same and worse_by > WORSE_TOLERANCE))
    return dict(same_machine_kind=same, record_machine_kind=old_kind, figures=out)

def report(figures: dict, cmp: dict) -> str:
    "A table: figure, value, unit, the record's value, ratio new/record and the WORSE flag."
    w = max([len(k) for k in figures] + [6])
    lines = [f"{'figure':<{w}} {'value':>11} {'unit':<8} {'record':>11} {'x record':>9}  "
             + ('(same machine kind)' if cmp['same_machine_kind'] else f"(record from another machine kind: {cmp['record_machine_kind']}; not flagged)")]
    for k, f in figures.items():
        c = cmp['figures'][k]
        rec = '-' if c['record'] is None else f"{c['record']:.4g}"
        rat = '-' if c['ratio'] is None else f"{c['ratio']:.2f}"
        lines.append(f"{k:<{w}} {f['value']:>11.4g} {f.get('unit', ''):<8} {rec:>11} {rat:>9}  {'WORSE (>25%)' if c['worse'] else ''}")
    return '\n'.join(lines)

class Bench:
    "Start of a benchmark run: notes the load average now; `write` adds the machine and the comparison and saves the record."
    def __init__(self, name: str): # the record's name: benchmarks/results/<name>.json
        self.name, self.load_before, self.t0 = name, os.getloadavg(), time.perf_counter()

    def write(self, payload: dict, figures: dict, out: str | None = None) -> dict:
        "Print the figures beside the committed record and write payload + machine + figures + comparison as JSON."
        m = machine(self.load_before)
        cmp = compare(figures, committed(self.name), m['machine_kind'])
        print(f"\n{self.name}: load {m['loadavg_before'][0]:.2f} before, {m['loadavg_after'][0]:.2f} after; {m['machine_kind']}")
        print(report(figures, cmp))
        rec = dict(command=' '.join(['.venv/bin/python'] + sys.argv), machine=m, seconds=time.perf_counter() - self.t0,
                   figures=figures, comparison=cmp, **payload)
        path = pathlib.Path(out) if out else RESULTS / f'{self.name}.json'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, indent=1, default=float) + '\n')
        print('wrote', path)
        return rec

def fig(value, unit: str = 's', better: str = 'lower') -> dict:
    "One headline figure of a record."
    return dict(value=None if value is None else float(value), unit=unit, better=better)
