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
4. Browser: the matrix editor computes and draws in the page. In headless Chromium (Playwright, 1280 × 900 px) it runs
   (a) from its saved widget state in a static page loaded as the docs site loads widgets (no kernel) and (b) in
   JupyterLab with the kernel running; `--edits` values are committed into its first cell with Enter, alternating so
   that every edit changes the metrics and row 0's point. The page timestamps the Enter keydown, the first change of the
   readout and of the simplex (MutationObserver), the animation frame after both, and the next redraw of the selection
   shares (`tests/editor_page.py`). Series: spawrious_gsc quiet, the same with `LOAD_PROCS` processes spinning on the
   cores, and spawrious_gci_100 (100 clients, κ = 12, 300 rounds of 3 selectors) for the shares. Targets: edit ->
   readout + simplex redrawn p95 <= 16 ms (one frame) quiet, <= 33 ms loaded; shares redrawn p95 <= 50 ms. Skipped with
   a message when Chromium or Playwright is missing.
5. Static page outcome: the matrix editor and the kernel-free outcome view (browser trainer in a Web Worker) from their
   saved state in a static page (no kernel), cmnist_gsc. Per edit of the first cell (Enter): the first point of the new
   job on screen, and the complete curves (2 selectors × 5 seeds × 20 rounds); the editor's own redraw (readout +
   simplex, next frame) of those edits (no job running at Enter) and, with a job running, of a further edit. Quiet and with `LOAD_PROCS` busy processes. Targets:
   first point p95 <= 100 ms, complete curves p95 <= 2 s, editor redraw while training p95 <= 16 ms. `--only
   static_outcome` runs this part alone and merges it into the existing record under `static_outcome` (the other parts
   stay as they were).
6. Live outcomes (`--only outcome_live`, merged into the record under `outcome_live`, other keys kept): a child Python
   started with no thread settings (OMP_NUM_THREADS and OMP_WAIT_POLICY removed, as plain `jupyter lab` starts a
   kernel) holds a `MatrixEditor` and an `OutcomePanel` following it (2 selectors × 5 seeds × 20 rounds, the teaching
   preset); each timed edit commits a new count into a cell (never trained before, so nothing comes from the cache) and
   stamps the kernel-side time to the first drawn curve point and to the complete curves. Quiet and with
   `LOAD_PROCS` busy processes. Targets: first point p95 <= 100 ms, complete curves p95 <= 1 s. Also the thread
   check: the same training (`run_outcome_seeds`) in children with no thread settings (the package bounds torch's
   threads itself), with `make lab`'s settings, and with the bounding switched off (torch's default pool), each with
   `LOAD_PROCS` busy processes; target: no settings within 2x of `make lab`'s.
`--only edit,panels,outcome,browser,static_outcome` runs a subset; `--only outcome_live` runs part 6 alone.
"""
import argparse, contextlib, json, os, subprocess, sys, tempfile, time
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

LIVE_CHILD = r"""
import json, sys, time, contextlib
mode, edits = sys.argv[1], int(sys.argv[2])
import numpy as np
from hetfl_explore.widgets import outcome as O
from hetfl_explore.widgets.editor import MatrixEditor
from hetfl_explore.foundation.data import federation
if mode == 'panel':
    ed = MatrixEditor('cmnist_gsc'); p = O.OutcomePanel(ed); p.wait(); stamps = {}
    p.on_round(lambda t, rows: stamps.setdefault('first', time.perf_counter()) if t >= 0 else None)
    out = []
    for i in range(edits):
        stamps.clear(); base = int(ed.types[0][1][0, 0]); time.sleep(2 * O.DEBOUNCE_S)
        w0 = time.perf_counter(); ed.set_cell(0, 0, 0, base + 1 + i % 2 * 2); p.wait()
        assert 'done' in p.status, p.status
        out.append(dict(first=stamps['first'] - w0, total=time.perf_counter() - w0))
else:
    if mode == 'unbounded': O.torch_threads = lambda: contextlib.nullcontext()
    N, out = federation('cmnist_gsc').matrices.copy(), []
    for i in range(edits + 1):
        N[0, 0, 0] += 4; w0 = time.perf_counter(); O.run_outcome_seeds(N); out.append(dict(total=time.perf_counter() - w0))
    out = out[1:]
print('RESULT ' + json.dumps(out))
"""

def _live_child(mode, edits, env):
    "Run LIVE_CHILD in a fresh Python with `env`; its per-edit timings."
    r = subprocess.run([sys.executable, '-c', LIVE_CHILD, mode, str(edits)], env=env, capture_output=True, text=True, check=True)
    return json.loads(next(line for line in r.stdout.splitlines() if line.startswith('RESULT '))[7:])

def _env(threads):
    "This process's environment without thread settings (`threads=None`, plain `jupyter lab`) or with `make lab`'s."
    env = {k: v for k, v in os.environ.items() if k not in ('OMP_NUM_THREADS', 'OMP_WAIT_POLICY')}
    return env if threads is None else dict(env, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY='PASSIVE')

def bench_outcome_live(edits):
    "Edit -> first point and -> complete curves of a following OutcomePanel, and the thread check (see item 5 above)."
    rows, load = [], {}
    for busy in (0, LOAD_PROCS):
        with busy_cores(busy):
            t = _live_child('panel', edits, _env(None)); load[f'panel, {busy} busy'] = os.getloadavg()
        rows.append(dict(case=f'edit -> outcome curves (2 selectors x 5 seeds x 20 rounds), no thread settings, {busy} busy processes',
                         first_point_ms=pct([e['first'] for e in t]), complete_ms=pct([e['total'] for e in t])))
    threads = {}
    with busy_cores(LOAD_PROCS):
        for name, mode, env in (('no thread settings', 'runs', _env(None)), ("make lab's settings", 'runs', _env(1)),
                                ('no thread settings, bounding off', 'unbounded', _env(None))):
            threads[name] = pct([e["total"] for e in _live_child(mode, max(2, edits // 4), env)])
        load['thread check'] = os.getloadavg()
    ratio = threads['no thread settings']['p50'] / threads["make lab's settings"]['p50']
    return dict(series=rows, threads=threads, ratio_no_settings_to_make_lab=ratio, load=load)

def merge_outcome_live(live, path=None):
    "Write the live-outcome figures into the widgets record under `outcome_live`, keeping every other key."
    path = Path(path) if path else Path(__file__).parent/'results'/'widgets.json'
    rec = json.loads(path.read_text()) if path.exists() else {}
    rec['outcome_live'] = dict(live, command=' '.join(['.venv/bin/python'] + sys.argv), cpu_count=os.cpu_count(),
                               date_utc=time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime()))
    figs = {f"outcome live {r['case']} {k} p95": fig(r[k]['p95'], 'ms') for r in live['series'] for k in ('first_point_ms', 'complete_ms')}
    figs['outcome live thread check: no settings / make lab, 2 busy processes'] = fig(live['ratio_no_settings_to_make_lab'], 'x')
    rec.setdefault('figures', {}).update(figs)
    path.write_text(json.dumps(rec, indent=1, default=float) + '\n')
    for r in live['series']:
        print(f"{r['case']:100s} first p50 {r['first_point_ms']['p50']:6.0f} p95 {r['first_point_ms']['p95']:6.0f}  "
              f"complete p50 {r['complete_ms']['p50']:6.0f} p95 {r['complete_ms']['p95']:6.0f} (ms)")
    for k, v in live['threads'].items(): print(f"training with {LOAD_PROCS} busy processes, {k:40s} p50 {v['p50']:7.0f} ms")
    print(f"no thread settings / make lab's: {live['ratio_no_settings_to_make_lab']:.2f}x; load averages {live['load']}")
    print('merged outcome_live into', path)

EDIT_VALUES = (60, 120)   # counts committed in turn into the editor's first cell (spawrious_gsc holds 90 there)
GCI100_VALUES = (60, 50)  # the same for spawrious_gci_100 (68 there)
BROWSER_VIEWPORT = {'width': 1280, 'height': 900}
SETTLE_MS = 1000          # after the panel has drawn, before the first timed edit
LOAD_PROCS = 2            # busy processes that keep both cores occupied during the loaded series
SHARES_K = 12             # κ of the 100-client selection shares (the paper's κ for spawrious_gci_100)

@contextlib.contextmanager
def busy_cores(n):
    "`n` processes spinning on the CPU (another job using the cores) for the duration of the block."
    procs = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(n)]
    try: yield
    finally:
        for p in procs: p.kill(); p.wait()

def _series(page, edits, values, case):
    "`edits` timed edits of the first cell (page timings, ms): Enter -> readout + simplex redrawn (next frame), -> shares redrawn."
    import editor_page as E
    page.evaluate(E.EDITOR_TIMER_JS)
    t = [E.timed_page_edit(page, values[i % len(values)], i) for i in range(edits)]
    col = lambda k: [e[k] / 1e3 for e in t]          # `pct` takes seconds
    return dict(case=case, redrawn_ms=pct(col('frame')), readout_ms=pct(col('readout')), simplex_ms=pct(col('simplex')),
                shares_ms=pct(col('shares')), first_edit_ms=t[0]['frame'], edits=t)

def _page_series(page, edits, where):
    "Quiet, then with both cores busy, on spawrious_gsc (24 clients, κ = 9, 300 rounds); then the 100-client shares."
    rows = [_series(page, edits, EDIT_VALUES, f'{where}: edit -> readout + simplex redrawn (24 clients), quiet')]
    with busy_cores(LOAD_PROCS):
        page.wait_for_timeout(SETTLE_MS)
        rows.append(_series(page, edits, EDIT_VALUES, f'{where}: edit -> readout + simplex redrawn (24 clients), {LOAD_PROCS} busy processes'))
    page.locator('.hx-editor .hx-preset').select_option('spawrious_gci_100')
    page.wait_for_function('() => document.querySelector(".hx-editor .hx-metrics").innerText.includes("100 clients")')
    k = page.locator('.hx-editor .hx-k'); k.fill(str(SHARES_K)); k.press('Enter'); page.wait_for_timeout(SETTLE_MS)
    rows.append(_series(page, edits, GCI100_VALUES, f'{where}: edit -> selection shares redrawn (100 clients, κ = {SHARES_K}, 300 rounds, 3 selectors), quiet'))
    return rows

def bench_browser(edits):
    """The matrix editor in headless Chromium: its saved state in a static page loaded as the docs site loads widgets (no
    kernel), and run in JupyterLab (live kernel); `edits` timed edits per series."""
    sys.path.insert(0, str(Path(__file__).parents[1]/'tests'))
    import browser as B, editor_page as E
    from hetfl_explore.widgets.editor import MatrixEditor
    try: import playwright.sync_api  # noqa: F401
    except ImportError: return dict(skipped='the playwright package is not installed')
    if not B.chromium_path(): return dict(skipped='Chromium is not installed')
    rows = []
    with tempfile.TemporaryDirectory() as d, B.browser() as b:
        E.static_editor_page(Path(d), MatrixEditor('spawrious_gsc'))
        with B.serve(Path(d)) as base:
            page = b.new_page(viewport=BROWSER_VIEWPORT); page.goto(f'{base}/editor.html')
            E.wait_for_page_editor(page); page.wait_for_timeout(SETTLE_MS)
            rows += _page_series(page, edits, 'static page (saved state, no kernel)')
        with B.jupyter_lab({'panel.ipynb': [B.EDITOR_CELL]}) as (url, token, _):
            page = b.new_page(viewport=BROWSER_VIEWPORT)
            B.run_notebook(page, url, token, 'panel.ipynb'); E.wait_for_page_editor(page); page.wait_for_timeout(SETTLE_MS)
            rows += _page_series(page, edits, 'JupyterLab (kernel running)')
    return dict(series=rows)

OUTCOME_VALUES, OUTCOME_START = (70, 80), 65   # counts committed in turn into the outcome page's first cell (90 there)

def _outcome_series(page, edits, case):
    "Edits with the outcome view following: Enter -> first point, -> complete curves; then the editor's redraw mid-job."
    import editor_page as E, outcome_page as O
    page.evaluate(O.OUTCOME_TIMER_JS)
    O.timed_outcome_edit(page, OUTCOME_START, 0)              # untimed: every timed edit then changes the federation
    page.evaluate(O.OUTCOME_TIMER_JS); page.evaluate(E.EDITOR_TIMER_JS)
    t = [O.timed_outcome_edit(page, OUTCOME_VALUES[i % 2], i) for i in range(edits)]
    idle = [e['frame'] / 1e3 for e in page.evaluate('() => window.__hxEdits')]   # the same edits: no job ran at Enter
    page.evaluate(E.EDITOR_TIMER_JS)
    redraw, cell = [], page.locator('.hx-editor .hx-cell input').first
    for i in range(edits):
        job = page.evaluate('() => Number(document.querySelector(".hx-outcome").dataset.job || 0)')
        cell.fill(str(OUTCOME_VALUES[i % 2] + 5)); cell.press('Enter')    # a job starts
        page.wait_for_function('(j) => { const r = document.querySelector(".hx-outcome").dataset;'
                               ' return Number(r.job) > j && Number(r.points) > 0; }', arg=job, timeout=60000)
        redraw.append(E.timed_page_edit(page, OUTCOME_VALUES[i % 2], i)['frame'] / 1e3)   # edited while it trains
        page.wait_for_function('() => document.querySelector(".hx-outcome").dataset.state === "done"', timeout=60000)
    col = lambda k: [e[k] / 1e3 for e in t]
    return dict(case=case, first_point_ms=pct(col('first')), complete_ms=pct(col('done')),
                editor_redraw_while_training_ms=pct(redraw), editor_redraw_idle_ms=pct(idle),
                max_frame_gap_ms=pct(col('maxFrameGap')), edits=t)

def bench_static_outcome(edits):
    "The kernel-free outcome view in headless Chromium: its saved state beside the editor's in a static page, no kernel."
    sys.path.insert(0, str(Path(__file__).parents[1]/'tests'))
    import browser as B, outcome_page as O
    from hetfl_explore.widgets.editor import MatrixEditor
    from hetfl_explore.widgets.browser_trainer import browser_outcome
    try: import playwright.sync_api  # noqa: F401
    except ImportError: return dict(skipped='the playwright package is not installed')
    if not B.chromium_path(): return dict(skipped='Chromium is not installed')
    ed = MatrixEditor('cmnist_gsc')
    rows = []
    with tempfile.TemporaryDirectory() as d, B.browser() as b:
        O.static_outcome_page(Path(d), ed, browser_outcome(ed))
        with B.serve(Path(d)) as base:
            page = b.new_page(viewport=BROWSER_VIEWPORT); page.goto(f'{base}/outcome.html')
            O.wait_for_outcome(page); page.wait_for_timeout(SETTLE_MS)
            rows.append(_outcome_series(page, edits, 'static page outcome (cmnist_gsc), quiet'))
            with busy_cores(LOAD_PROCS):
                page.wait_for_timeout(SETTLE_MS)
                rows.append(_outcome_series(page, edits, f'static page outcome (cmnist_gsc), {LOAD_PROCS} busy processes'))
    return dict(series=rows, loadavg=os.getloadavg())

def static_outcome_figures(web):
    "The headline figures of the static-page outcome series."
    figs = {}
    for r in web.get('series', []):
        for key in ('first_point_ms', 'complete_ms', 'editor_redraw_while_training_ms', 'editor_redraw_idle_ms'):
            figs.update({f"browser {r['case']} {key[:-3]} {q}": fig(r[key][q], 'ms') for q in ('p50', 'p95')})
    return figs

def merge_static_outcome(web, load0):
    "Write the static-page outcome part into the existing widgets record, leaving its other parts as they are."
    import json
    from record import RESULTS
    path = RESULTS/'widgets.json'
    rec = json.loads(path.read_text()) if path.exists() else {'figures': {}}
    rec['static_outcome'] = dict(web, command=' '.join(['.venv/bin/python'] + sys.argv), loadavg_before=load0,
                                 loadavg_after=os.getloadavg())
    rec['figures'] = {k: v for k, v in rec.get('figures', {}).items() if not k.startswith('browser static page outcome')}
    rec['figures'].update(static_outcome_figures(web))
    path.write_text(json.dumps(rec, indent=1, default=float) + '\n')
    print('merged the static-page outcome series into', path)

def print_static_outcome(web):
    "The static-page outcome table."
    if 'skipped' in web: print(f"static page outcome: skipped ({web['skipped']})"); return
    for r in web['series']:
        print(f"{r['case']:60s} first point p50 {r['first_point_ms']['p50']:6.1f} p95 {r['first_point_ms']['p95']:6.1f}  "
              f"complete p50 {r['complete_ms']['p50']:7.1f} p95 {r['complete_ms']['p95']:7.1f}  editor redraw while training "
              f"p50 {r['editor_redraw_while_training_ms']['p50']:5.1f} p95 {r['editor_redraw_while_training_ms']['p95']:5.1f}, "
              f"idle p50 {r['editor_redraw_idle_ms']['p50']:5.1f} p95 {r['editor_redraw_idle_ms']['p95']:5.1f}  (ms)")

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--repeats', type=int, default=60)
    p.add_argument('--outcome-repeats', type=int, default=3)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--edits', type=int, default=40, help='timed browser edits')
    p.add_argument('--only', default='edit,panels,outcome,browser,static_outcome', help='comma-separated parts to run')
    p.add_argument('--outcome-edits', type=int, default=20, help='timed edits per static-page outcome series')
    p.add_argument('--out', default=None)
    p.add_argument('--live-edits', type=int, default=20, help='timed edits of the live outcome panel')
    a = p.parse_args()
    if a.only == 'outcome_live': return merge_outcome_live(bench_outcome_live(a.live_edits), a.out)
    torch.set_num_threads(a.threads)
    bench = Bench('widgets'); load0 = bench.load_before
    parts = set(a.only.split(','))
    if parts == {'static_outcome'}:
        web = bench_static_outcome(a.outcome_edits); print_static_outcome(web)
        print(f"load average before/after: {load0[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        if 'skipped' not in web: merge_static_outcome(web, load0)
        return
    edit = (bench_edit(a.repeats) if 'edit' in parts else []) + (bench_panels(a.repeats) if 'panels' in parts else [])
    outcome = bench_outcome(a.outcome_repeats) if 'outcome' in parts else []
    web = bench_browser(a.edits) if 'browser' in parts else dict(skipped='not run (--only)')
    static_outcome = bench_static_outcome(a.outcome_edits) if 'static_outcome' in parts else dict(skipped='not run (--only)')
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
        for r in web['series']:
            print(f"{r['case']:110s} redrawn p50 {r['redrawn_ms']['p50']:6.1f} p95 {r['redrawn_ms']['p95']:6.1f}  "
                  f"shares p50 {r['shares_ms']['p50']:6.1f} p95 {r['shares_ms']['p95']:6.1f}  (ms)")
    print_static_outcome(static_outcome)
    if parts != {'edit', 'panels', 'outcome', 'browser', 'static_outcome'}: print(f"(partial run: {a.only})")
    figs = {f"{r['case']} cpu p95": fig(r['cpu_ms']['p95'], 'ms') for r in edit}
    figs.update({f"{r['case']} total p50": fig(r['total_s']['p50'], 'ms') for r in outcome})
    if 'skipped' not in web:
        for r in web['series']:
            key = 'shares' if 'selection shares' in r['case'] else 'redrawn'
            figs.update({f"browser {r['case']} {key} {q}": fig(r[f'{key}_ms'][q], 'ms') for q in ('p50', 'p95')})
    figs.update(static_outcome_figures(static_outcome))
    bench.write(dict(meta=meta, edit=edit, outcome=outcome, browser=web, static_outcome=static_outcome), figs, a.out)

if __name__ == '__main__': main()
