"""Start JupyterLab on 127.0.0.1 with a token and isolated config folders, open a notebook with the matrix editor, run it
in real Chromium at 1280 px with the file browser open, check that nothing of the panel overflows, that its columns and
legend are named, edit a cell of the heterogeneity matrix and assert that the readout and the simplex change, and that a
refused value shows its message without moving the rows. Screenshots go to `test-artifacts/`."""
import pytest
from conftest import ROOT
from browser import (browser, require_browser, jupyter_lab, run_notebook, wait_for_editor, timed_edit, EDIT_TIMER_JS,
                     EDITOR_CELL)

LAB_VIEWPORT = {'width': 1280, 'height': 900}   # a laptop screen (issue 25), with JupyterLab's file browser open
MIN_SIDEBAR_PX = 200                            # the file browser counts as open when its panel is at least this wide

# Elements of the panel whose right edge passes the output area's (or the window's), texts of a figure outside it, and a
# readout wider than its box. Inside a figure only the texts count (plotly's grid paths extend past their clip path).
OVERFLOW_JS = '''(sel) => {
  const panel = document.querySelector(sel), out = panel.closest('.jp-OutputArea-output').getBoundingClientRect();
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

@pytest.fixture
def lab():
    "A JupyterLab server whose root holds `panel.ipynb` (the matrix editor); yields (url, token, root)."
    require_browser()
    with jupyter_lab({'panel.ipynb': [EDITOR_CELL]}) as server: yield server

def test_matrix_editor_in_jupyterlab_at_1280(lab):
    url, token, root = lab
    (ROOT/'test-artifacts').mkdir(exist_ok=True)
    with browser() as b:
        page = b.new_page(viewport=LAB_VIEWPORT)
        run_notebook(page, url, token, 'panel.ipynb'); wait_for_editor(page)
        page.evaluate('window.jupyterapp.shell.activateById("filebrowser")'); page.wait_for_timeout(500)
        assert page.evaluate('document.querySelector("#jp-left-stack").getBoundingClientRect().width') >= MIN_SIDEBAR_PX
        page.locator('.hx-editor').first.scroll_into_view_if_needed()
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-1280.png'))
        page.locator('.hx-editor').first.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-panel.png'))
        assert page.evaluate(OVERFLOW_JS, '.hx-editor') == []
        columns = page.locator('.hx-editor .hx-columns').first.inner_text()
        assert 'beach' in columns and 'snow' in columns and 'clients' in columns
        legend = ' '.join(page.locator('.hx-editor .legendtext').all_text_contents())
        assert all(name in legend for name in ('class imbalance', 'attribute imbalance', 'spurious correlation'))
        assert 'Enter or Tab' in page.locator('.hx-editor .hx-hint').first.inner_text()
        metrics = page.locator('.hx-editor .hx-metrics').first
        before = metrics.inner_text()
        page.evaluate(EDIT_TIMER_JS)
        edit = timed_edit(page, 0, 0)                 # returns once both the readout and the simplex have changed
        assert metrics.inner_text() != before and min(edit.values()) >= 0
        cell = page.locator('.hx-editor .hx-cell input').first
        top = cell.bounding_box()['y']
        cell.fill('-1'); cell.press('Enter')
        page.wait_for_function('() => document.querySelector(".hx-editor .hx-message").innerText.includes("negative")', timeout=30000)
        assert cell.bounding_box()['y'] == top and cell.input_value() == '0'   # message in place, last valid value back
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-matrix-editor-1280-refused.png'))
        assert page.evaluate(OVERFLOW_JS, '.hx-editor') == []
