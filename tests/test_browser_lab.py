"""Start JupyterLab on 127.0.0.1 with a token and isolated config folders, open a notebook with the matrix editor, run it
in real Chromium at 1280 px with the file browser open, check that nothing of the panel overflows, that its columns and
legend are named, edit a cell of the heterogeneity matrix and assert that the readout and the simplex change, and that a
refused value shows its message without moving the rows. Screenshots go to `test-artifacts/`."""
import json
import pytest
from conftest import ROOT
from browser import browser, require_browser, jupyter_lab, run_notebook, EDITOR_CELL
from editor_page import wait_for_page_editor, timed_page_edit, EDITOR_TIMER_JS

LAB_VIEWPORT = {'width': 1280, 'height': 900}   # a laptop screen, with JupyterLab's file browser open
MIN_SIDEBAR_PX = 200                            # the file browser counts as open when its panel is at least this wide

# Elements of a panel whose right edge passes its output area's (or the window's), texts of a figure outside it, and a
# readout wider than its box. Inside a figure only the texts count (plotly's grid paths extend past their clip path).
OVERFLOW_JS = '''(panel) => {
  const out = (panel.closest('.jp-OutputArea-output') || panel).getBoundingClientRect();
  const limit = Math.min(out.right, window.innerWidth) + 1, bad = [];
  const past = (e, right, what) => { const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && r.right > right) bad.push(`${e.tagName}.${e.getAttribute('class') || ''} ${e.textContent.slice(0, 30)} right=${r.right.toFixed(0)} > ${what} ${right.toFixed(0)}`); };
  for (const e of [panel, ...panel.querySelectorAll('*')]) {
    const svg = e.ownerSVGElement;
    if (!svg) past(e, limit, 'output');
    else if (e.tagName === 'text') past(e, svg.closest('.js-plotly-plot').getBoundingClientRect().right + 1, 'figure');
  }
  for (const e of panel.querySelectorAll('.hx-metrics'))
    if (e.scrollWidth > e.clientWidth + 1) bad.push(`readout scrollWidth ${e.scrollWidth} > ${e.clientWidth}`);
  return bad.slice(0, 10);
}'''

# Every panel of the widget chapters, built as its notebook builds it (one cell each; the last line displays it).
PANEL_CELLS = [
    "import numpy as np\nfrom hetfl_explore.widgets.editor import MatrixEditor\nfrom hetfl_explore.widgets.explorers import SelectionExplorer, TaxonomyExplorer\n"
    "from hetfl_explore.widgets.stepper import FedDiverseStepper\n"
    "explorer = SelectionExplorer(MatrixEditor(preset='spawrious_gsc'), selectors=('uniform', 'feddiverse[sign-invariant]', 'fedrk'), k=9, rounds=100)\nexplorer",
    "FedDiverseStepper('waterbirds_dist', k=9)",
    "TaxonomyExplorer(explorer)",
    "from hetfl_explore.widgets.outcome import OutcomePanel\nOutcomePanel(MatrixEditor('cmnist_gsc'), selectors=('uniform', 'feddiverse[sign-invariant]'))",
    "from hetfl_explore.widgets.privacy_fairness import MIAAnatomy, SubmodelExplorer, TradeoffExplorer, FairnessExplorer, AttackResult\n"
    "r = np.random.default_rng(0)\ntoy = AttackResult(scores=np.r_[-r.lognormal(-2, 1, 300), -r.lognormal(-1, 1, 300)], "
    "labels=np.r_[np.ones(300), np.zeros(300)].astype(int), preds=np.zeros(600, int), attack='toy')\ntoy.info['loss'] = -toy.scores\nMIAAnatomy(toy)",
    "SubmodelExplorer('GFR', n_small=4)", "TradeoffExplorer()", "FairnessExplorer(strength=0.8, mix=0.75, reliance=0.5)",
    "from hetfl_explore.widgets.crowd import PrometheePanel, RacePanel, ShapleyPanel\nPrometheePanel()",
    "RacePanel(devices=20, rounds=3, racers=('Random', 'FedPROM'))", "ShapleyPanel()",
    "from hetfl_explore.widgets.trust import AggregationPlayground, TrustWalkthrough\nAggregationPlayground()", "TrustWalkthrough()",
    "from hetfl_explore.widgets.clustering import ProfileLab, EccentricityPanel, GPFLPlayer, FedCOTradeoff, WhoContributes\nProfileLab()",
    "EccentricityPanel()", "GPFLPlayer(rounds=8)", "FedCOTradeoff(rounds=6)", "WhoContributes(rounds=3)"]

@pytest.fixture
def lab():
    "A JupyterLab server whose root holds `panel.ipynb` (the matrix editor) and `panels.ipynb` (every panel); yields (url, token, root)."
    require_browser()
    with jupyter_lab({'panel.ipynb': [EDITOR_CELL], 'panels.ipynb': PANEL_CELLS}) as server: yield server

def test_matrix_editor_in_jupyterlab_at_1280(lab):
    url, token, root = lab
    (ROOT/'test-artifacts').mkdir(exist_ok=True)
    with browser() as b:
        page = b.new_page(viewport=LAB_VIEWPORT)
        run_notebook(page, url, token, 'panel.ipynb'); wait_for_page_editor(page)
        page.evaluate('window.jupyterapp.shell.activateById("filebrowser")'); page.wait_for_timeout(500)
        assert page.evaluate('document.querySelector("#jp-left-stack").getBoundingClientRect().width') >= MIN_SIDEBAR_PX
        page.locator('.hx-editor').first.scroll_into_view_if_needed()
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-1280.png'))
        page.locator('.hx-editor').first.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-panel.png'))
        assert page.locator('.hx-editor').first.evaluate(OVERFLOW_JS) == []
        columns = page.locator('.hx-editor .hx-columns').first.inner_text()
        assert 'beach' in columns and 'snow' in columns and 'clients' in columns
        legend = page.locator('.hx-editor .hx-legend').first.inner_text()
        assert all(name in legend for name in ('class imbalance', 'attribute imbalance', 'spurious correlation'))
        assert 'Enter or Tab' in page.locator('.hx-editor .hx-hint').first.inner_text()
        metrics = page.locator('.hx-editor .hx-metrics').first
        before = metrics.inner_text()
        page.evaluate(EDITOR_TIMER_JS)
        edit = timed_page_edit(page, 0, 0)            # returns once the readout, the simplex and the shares have changed
        assert metrics.inner_text() != before and min(edit.values()) >= 0
        cell = page.locator('.hx-editor .hx-cell input').first
        top = cell.bounding_box()['y']
        cell.fill('-1'); cell.press('Enter')
        page.wait_for_function('() => document.querySelector(".hx-editor .hx-message").innerText.includes("negative")', timeout=30000)
        assert cell.bounding_box()['y'] == top and cell.input_value() == '0'   # message in place, last valid value back
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-1280-refused.png'))
        assert page.locator('.hx-editor').first.evaluate(OVERFLOW_JS) == []

PANEL_RUN_MS = 300_000   # every panel cell has run (under a loaded 2-core machine)

def test_every_panel_fits_1280_in_jupyterlab(lab):
    "Each panel of the widget chapters, run in JupyterLab at 1280 px with the file browser open: a screenshot, no overflow."
    url, token, root = lab
    (ROOT/'test-artifacts').mkdir(exist_ok=True)
    with browser() as b:
        page = b.new_page(viewport=LAB_VIEWPORT)
        run_notebook(page, url, token, 'panels.ipynb')
        page.wait_for_function('''(n) => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
            .filter(e => /\\[\\d+\\]/.test(e.innerText)).length >= n''', arg=len(PANEL_CELLS), timeout=PANEL_RUN_MS)
        errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], .jp-OutputArea-output .ansi-red-fg')
        assert errors.count() == 0, errors.first.inner_text()[:2000]
        page.evaluate('window.jupyterapp.shell.activateById("filebrowser")'); page.wait_for_timeout(500)
        outputs = page.locator('.jp-OutputArea-output:has(.jupyter-widgets)')
        assert outputs.count() == len(PANEL_CELLS)
        problems = {}
        for i, cell in enumerate(PANEL_CELLS):
            out, name = outputs.nth(i), cell.splitlines()[-1].split('(')[0]
            out.scroll_into_view_if_needed(); page.wait_for_timeout(300)
            out.screenshot(path=str(ROOT/'test-artifacts'/f'lab-panel-{i:02d}-{name}.png'))
            if bad := out.evaluate(OVERFLOW_JS): problems[name] = bad
        (ROOT/'test-artifacts'/'lab-panel-overflow.json').write_text(json.dumps(problems, indent=1, ensure_ascii=False))
        assert problems == {}, json.dumps(problems, indent=1, ensure_ascii=False)

SAVED_FIGURES = 6       # figures of a lab page, saved with the notebook
REOPEN_MS = 240_000     # JupyterLab restoring the saved figures on a loaded 2-core machine (a full test run beside it)
COUNT_FIGURES = '() => document.querySelectorAll(".js-plotly-plot").length'
FIGURES_CELL = f"""import numpy as np, plotly.graph_objects as go
from hetfl_explore.foundation.figure_widget import SharedFigureWidget
from IPython.display import display
for i in range({SAVED_FIGURES}): display(SharedFigureWidget([go.Bar(y=np.arange(3.0) + i)], layout=dict(height=220, title=f'figure {{i}}')))"""

POLL_MS = 500           # how often the reopening test looks at the page
MISSING_MODEL = 'widget model not found'   # what JupyterLab's widget manager logs for an output whose model it lacks

def raise_reopen(page, errors):
    "Fail the reopening test, saying how many saved figures were drawn and which page errors were seen."
    pytest.fail(f'{page.evaluate(COUNT_FIGURES)} of {SAVED_FIGURES} saved figures drawn after {REOPEN_MS} ms; '
                f'page errors: {errors}')

def reopen_drawn(page, errors, since=0) -> bool:
    "Poll until every saved figure is drawn (True) or, after `errors[since]`, the widget manager misses every model."
    for _ in range(REOPEN_MS // POLL_MS):
        if page.evaluate(COUNT_FIGURES) >= SAVED_FIGURES: return True
        lost = sum(MISSING_MODEL in e for e in errors[since:])
        if lost >= SAVED_FIGURES: return False   # every output lost its model
        page.wait_for_timeout(POLL_MS)
    raise_reopen(page, errors)

def test_a_saved_notebook_of_figures_reopens_with_every_figure_and_no_widget_error():
    """Figures run and saved with their widget state (as JupyterLab saves a lab), then opened: every figure draws from
    the saved state and anywidget reports no model that failed to initialise (each figure once evaluated plotly's 5 MB
    module in turn, and the later ones outlived anywidget's two-second limit)."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat.sign import NotebookNotary
    require_browser()
    with jupyter_lab({}) as (url, token, root), browser() as b:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FIGURES_CELL)])
        nb.metadata['kernelspec'] = {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}
        NotebookClient(nb, timeout=300, store_widget_state=True).execute()
        NotebookNotary(data_dir=str(root.parent/'jupyter_data_dir')).sign(nb)
        nbformat.write(nb, root/'saved-figures.ipynb')
        page, errors = b.new_page(viewport=LAB_VIEWPORT), []
        page.on('pageerror', lambda e: errors.append(str(e)))
        page.on('console', lambda m: errors.append(m.text) if m.type == 'error' else None)
        page.goto(f'{url}/lab/tree/saved-figures.ipynb?token={token}', wait_until='domcontentloaded')
        if not reopen_drawn(page, errors):
            # JupyterLab's own race, not the figures': on a loaded machine the kernel can connect after the saved widget
            # state was read, and every output then misses its model; opened again (the kernel running), the page must
            # draw every figure
            seen = len(errors)
            page.reload(wait_until='domcontentloaded')
            if not reopen_drawn(page, errors, seen): raise_reopen(page, errors)
        page.wait_for_timeout(3000)   # past anywidget's two-second limit for the last figure
        (ROOT/'test-artifacts').mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-saved-figures-reopened.png'))
        assert not [e for e in errors if 'anywidget' in e or 'Failed to initialize' in e], errors

OUTCOME_CELLS = ["from dataclasses import replace\nfrom hetfl_explore.widgets.editor import MatrixEditor\n"
                 "from hetfl_explore.widgets.outcome import OutcomePanel, TEACHING_PRESET\neditor = MatrixEditor('cmnist_gsc')\n"
                 "outcome = OutcomePanel(editor, config=replace(TEACHING_PRESET, rounds=8, seeds=2))\noutcome.beside_editor()"]
SMALL_SCREEN = {'width': 1366, 'height': 768}   # a small laptop screen: the editor and the curves must fit on it together
OUTCOME_MS = 240_000     # a follow-up run drawn, on a loaded 2-core machine
# The outcome panel's status line and the y values of its first mean curve (trace 1: the first selector's average accuracy).
OUTCOME_STATE_JS = '''() => { const s = document.querySelector('.hx-status'); if (!s) return null;
  const plot = s.closest('.jp-OutputArea-output').querySelector('.js-plotly-plot');
  const y = plot && plot.data && plot.data[1] ? Array.from(plot.data[1].y || []) : [];
  return {status: s.innerText, y: y.map(v => Number(v).toFixed(6)).join(',')}; }'''

def test_outcome_curves_follow_an_edit_in_jupyterlab_without_pressing_run():
    "An edit of the editor retrains the outcome panel below it: its curves change and complete, nobody presses run."
    require_browser()
    with jupyter_lab({'outcome.ipynb': OUTCOME_CELLS}) as (url, token, root), browser() as b:
        page = b.new_page(viewport=SMALL_SCREEN)
        run_notebook(page, url, token, 'outcome.ipynb'); wait_for_page_editor(page)
        done = '''(before) => { const s = (%s)(); return s && s.status.includes('done') && s.y.split(',').length === 8 && s.y !== before; }''' % OUTCOME_STATE_JS
        page.wait_for_function(done, arg='', timeout=OUTCOME_MS)
        assert page.locator('.hx-editor .hx-note').first.evaluate('e => getComputedStyle(e).display') == 'none'   # a kernel answered
        before = page.evaluate(OUTCOME_STATE_JS)
        cell = page.locator('.hx-editor .hx-cell input').first
        cell.fill(str(int(cell.input_value()) + 40)); cell.press('Enter')
        page.wait_for_function(done, arg=before['y'], timeout=OUTCOME_MS)
        after = page.evaluate(OUTCOME_STATE_JS)
        assert after['y'] != before['y'] and 'done' in after['status']
        page.evaluate('window.jupyterapp.shell.collapseLeft()'); page.wait_for_timeout(500)
        page.locator('.hx-editor').first.evaluate('e => e.scrollIntoView({block: "start"})'); page.wait_for_timeout(500)
        (ROOT/'test-artifacts').mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-outcome-follows-edit-1366x768.png'))
        boxes = [page.locator(sel).first.bounding_box() for sel in ('.hx-editor .hx-cell input', '.hx-editor .hx-simplex',
                                                                     '.hx-status', '.hx-status >> xpath=ancestor::div[contains(@class,"jp-OutputArea-output")]//*[contains(@class,"main-svg")]')]
        assert all(0 <= bx['x'] and bx['x'] + bx['width'] <= SMALL_SCREEN['width'] + 1 and 0 <= bx['y']
                   and bx['y'] + bx['height'] <= SMALL_SCREEN['height'] + 1 for bx in boxes), boxes   # editor and curves on one screen
