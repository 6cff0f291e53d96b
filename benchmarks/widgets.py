"""Latency of the heterogeneity-lab panels (a panel should answer at once: the targets below).

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/widgets.py [--repeats 60] [--outcome-repeats 3]
Prints a table and writes benchmarks/results/widgets.json.

1. Edit loop: one cell edit in a `MatrixEditor` holding 100 clients (spawrious_gci_100, one row per client) with a linked
   `SelectionExplorer` recomputes and redraws metrics, triplets and 100 rounds of selection (uniform + FedDiverse, κ = 12).
   Also each explorer selector alone (100 rounds, 100 clients). Target: p95 ≤ 50 ms of Python time. Reported as CPU time
   of the Python thread (`time.thread_time`, insensitive to other users' load) and wall time.
2. Outcome panel: the teaching preset (cmnist_gsc, 24 clients, 20 rounds, one selector) trained from scratch (generated
   data cached, run cache bypassed): time to the first curve point and to the end. Target ≤ 0.5 s / ≤ 3 s on 2 cores.
   Torch uses `--threads` threads (default 2). Wall times depend on machine load, which is recorded.
3. Panel handlers: each control of `SubmodelExplorer` and `TradeoffExplorer` moved as a browser would (the widget's
   value set, its observer redraws the figure widgets in place). Target: p95 ≤ 50 ms per handler.
4. Browser: JupyterLab in headless Chromium (Playwright, 1280 × 900 px) runs a notebook showing the matrix
   editor; `--edits` values are committed into its first cell with Enter, alternating so that every edit changes the
   metrics and row 0's point. The page timestamps the Enter keydown, the first change of the readout and of the simplex
   (MutationObserver) and the animation frame after both (`tests/browser.py`). Reported: p50, p95 and the first edit of
   commit -> both redrawn. Target: p95 <= 100 ms. Skipped with a message when Chromium or Playwright is missing.
`--only edit,panels,outcome,browser` runs a subset.
"""
import argparse, os, sys, time
from dataclasses import replace
from pathlib import Path
import numpy as np
import torch
sys.path.insert(0, str(Path(__file__).parent))
from record import Bench, fig  # noqa: E402

def pct(ts):
    a = 1e3 * np.asarray(ts); return dict(p50=float(np.percentile(a, 50)), p95=float(np.percentile(a, 95)), n=len(a))

def bench_edit(repeats):
    from hetfl_explore.foundation.data import federation
    from hetfl_explore.widgets.editor import MatrixEditor
    from hetfl_explore.widgets.explorers import SelectionExplorer
    from hetfl_explore.feddiverse.simulation import simulate_selection
    from hetfl_explore.feddiverse.registry import SELECTORS
    N = federation('spawrious_gci_100').matrices
    ed = MatrixEditor(types=[(1, M) for M in N]); SelectionExplorer(ed, selectors=('uniform', 'feddiverse'), k=12, rounds=100)
    cpu, wall = [], []
    for i in range(repeats + 3):
        c0, w0 = time.thread_time(), time.perf_counter()
        assert ed.set_cell(i % 100, 0, 0, 40 + i % 50)
        if i >= 3: cpu.append(time.thread_time() - c0); wall.append(time.perf_counter() - w0)
    rows = [dict(case='cell edit -> metrics + triplets + 100 rounds (uniform + feddiverse), K=100', cpu_ms=pct(cpu), wall_ms=pct(wall))]
    for name in SELECTORS:
        cpu, wall = [], []
        for i in range(max(5, repeats // 6)):
            c0, w0 = time.thread_time(), time.perf_counter(); simulate_selection(N, name, 100, 12, seed=i)
            cpu.append(time.thread_time() - c0); wall.append(time.perf_counter() - w0)
        rows.append(dict(case=f'explore_selection {name}, 100 rounds, K=100', cpu_ms=pct(cpu), wall_ms=pct(wall)))
    return rows

def _timed(fn, repeats):
    "CPU (thread) and wall time percentiles of `fn(i)` over `repeats` calls, after 3 warm-up calls."
    cpu, wall = [], []
    for i in range(repeats + 3):
        c0, w0 = time.thread_time(), time.perf_counter(); fn(i)
        if i >= 3: cpu.append(time.thread_time() - c0); wall.append(time.perf_counter() - w0)
    return dict(cpu_ms=pct(cpu), wall_ms=pct(wall))

def bench_panels(repeats):
    from hetfl_explore.widgets.privacy_fairness import SubmodelExplorer, TradeoffExplorer
    from hetfl_explore.modelhet.submodels import METHODS
    sub, trade = SubmodelExplorer(), TradeoffExplorer()
    methods, larges, cols = list(METHODS), list(trade.large_w.options), list(trade.privacy_w.options.values())
    cases = {'SubmodelExplorer method': lambda i: setattr(sub.method_w, 'value', methods[i % len(methods)]),
             'SubmodelExplorer small clients': lambda i: setattr(sub.small_w, 'value', 1 + i % sub.num_clients),
             'SubmodelExplorer round': lambda i: setattr(sub.round_w, 'value', i % sub.rounds),
             'TradeoffExplorer large clients': lambda i: setattr(trade.large_w, 'value', larges[i % len(larges)]),
             'TradeoffExplorer privacy': lambda i: setattr(trade.privacy_w, 'value', cols[i % len(cols)])}
    return [dict(case=f'{name} handler (in-place redraw)', **_timed(fn, repeats)) for name, fn in cases.items()]

def bench_outcome(repeats):
    from hetfl_explore.foundation.data import federation
    from hetfl_explore.widgets.outcome import TEACHING_PRESET, outcome_data, outcome_simulation
    N = federation('cmnist_gsc').matrices
    outcome_data(N, TEACHING_PRESET)                    # data generation once (cached in the panel too)
    rows = []
    for sel in ('uniform', 'feddiverse'):
        first, total, cpu = [], [], []
        for i in range(repeats):
            cfg = replace(TEACHING_PRESET, seed=0)
            stamps = []
            c0, w0 = time.process_time(), time.perf_counter()
            sim = outcome_simulation(N, sel, cfg, callbacks=[lambda s, r: stamps.append(time.perf_counter() - w0)])
            sim.run(progress=False)
            total.append(time.perf_counter() - w0); cpu.append(time.process_time() - c0); first.append(stamps[0])
        rows.append(dict(case=f'outcome teaching preset ({sel}, 24 clients, 20 rounds)', first_point_s=pct(first),
                         total_s=pct(total), process_cpu_s=pct(cpu)))
    return rows

EDIT_VALUES = (60, 120)   # counts committed in turn into the editor's first cell (spawrious_gsc holds 90 there)
BROWSER_VIEWPORT = {'width': 1280, 'height': 900}
SETTLE_MS = 1000          # after the panel has drawn, before the first timed edit

def bench_browser(edits):
    "Commit `edits` cell values in the matrix editor in JupyterLab; per-edit page timings (ms) and their percentiles."
    sys.path.insert(0, str(Path(__file__).parents[1]/'tests'))
    import browser as B
    try: import playwright.sync_api  # noqa: F401
    except ImportError: return dict(skipped='the playwright package is not installed')
    if not B.chromium_path(): return dict(skipped='Chromium is not installed')
    with B.jupyter_lab({'panel.ipynb': [B.EDITOR_CELL]}) as (url, token, _), B.browser() as b:
        page = b.new_page(viewport=BROWSER_VIEWPORT)
        B.run_notebook(page, url, token, 'panel.ipynb'); B.wait_for_editor(page); page.wait_for_timeout(SETTLE_MS)
        page.evaluate(B.EDIT_TIMER_JS)
        t = [B.timed_edit(page, EDIT_VALUES[i % len(EDIT_VALUES)], i) for i in range(edits)]
    col = lambda k: [e[k] / 1e3 for e in t]          # `pct` takes seconds
    return dict(case=f'browser: commit a matrix cell -> readout + simplex redrawn (JupyterLab, {edits} edits)',
                redrawn_ms=pct(col('frame')), readout_ms=pct(col('readout')), simplex_ms=pct(col('simplex')),
                first_edit_ms=t[0]['frame'], edits=t)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--repeats', type=int, default=60)
    p.add_argument('--outcome-repeats', type=int, default=3)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--edits', type=int, default=40, help='timed browser edits')
    p.add_argument('--only', default='edit,panels,outcome,browser', help='comma-separated parts to run')
    p.add_argument('--out', default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    bench = Bench('widgets'); load0 = bench.load_before
    parts = set(a.only.split(','))
    edit = (bench_edit(a.repeats) if 'edit' in parts else []) + (bench_panels(a.repeats) if 'panels' in parts else [])
    outcome = bench_outcome(a.outcome_repeats) if 'outcome' in parts else []
    web = bench_browser(a.edits) if 'browser' in parts else dict(skipped='not run (--only)')
    meta = dict(torch_threads=a.threads, loadavg_before=load0, loadavg_after=os.getloadavg())
    print(f"load average before/after: {load0[0]:.1f} / {meta['loadavg_after'][0]:.1f} on {os.cpu_count()} cores")
    print(f"{'case':78s} {'CPU p50':>8s} {'CPU p95':>8s} {'wall p50':>9s} {'wall p95':>9s}  (ms)")
    for r in edit:
        print(f"{r['case']:78s} {r['cpu_ms']['p50']:8.1f} {r['cpu_ms']['p95']:8.1f} {r['wall_ms']['p50']:9.1f} {r['wall_ms']['p95']:9.1f}")
    print(f"{'case':78s} {'first p50':>9s} {'total p50':>9s} {'total p95':>9s} {'CPU p50':>8s}  (ms; CPU = process, all threads)")
    for r in outcome:
        print(f"{r['case']:78s} {r['first_point_s']['p50']:9.0f} {r['total_s']['p50']:9.0f} {r['total_s']['p95']:9.0f} {r['process_cpu_s']['p50']:8.0f}")
    if 'skipped' in web: print(f"browser: skipped ({web['skipped']})")
    else:
        r, f = web['redrawn_ms'], web['first_edit_ms']
        print(f"{web['case']:78s} p50 {r['p50']:.1f}  p95 {r['p95']:.1f}  first edit {f:.1f}  (ms; readout p95 "
              f"{web['readout_ms']['p95']:.1f}, simplex p95 {web['simplex_ms']['p95']:.1f})")
    if parts != {'edit', 'panels', 'outcome', 'browser'}: print(f"(partial run: {a.only})")
    figs = {f"{r['case']} cpu p95": fig(r['cpu_ms']['p95'], 'ms') for r in edit}
    figs.update({f"{r['case']} total p50": fig(r['total_s']['p50'], 'ms') for r in outcome})
    if 'skipped' not in web:
        figs.update({'browser edit -> redrawn p50': fig(web['redrawn_ms']['p50'], 'ms'),
                     'browser edit -> redrawn p95': fig(web['redrawn_ms']['p95'], 'ms'),
                     'browser first edit -> redrawn': fig(web['first_edit_ms'], 'ms')})
    bench.write(dict(meta=meta, edit=edit, outcome=outcome, browser=web), figs, a.out)

if __name__ == '__main__': main()
