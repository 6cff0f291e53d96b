"""The matrix editor with no kernel: its saved widget state in a static page loaded as the documentation site loads
widgets (tests/editor_page.py), opened in headless Chromium. Typing a count redraws the readout, the simplex and the
selection shares; every bad value is refused with its own message, the last valid value comes back and the readout
never shows NaN; presets, κ and rows work in the page. Screenshots go to `test-artifacts/`."""
import tempfile
from pathlib import Path
import pytest
from conftest import ROOT
from browser import browser, require_browser, serve
from editor_page import static_editor_page, wait_for_page_editor
from hetfl_explore.widgets.editor import MatrixEditor

VIEWPORT = {'width': 1280, 'height': 900}

@pytest.fixture(scope='module')
def page_url():
    "The static editor page (spawrious_gsc) served on 127.0.0.1; yields its URL."
    require_browser()
    with tempfile.TemporaryDirectory() as d:
        static_editor_page(Path(d), MatrixEditor('spawrious_gsc'))
        with serve(Path(d)) as base: yield f'{base}/editor.html'

@pytest.fixture
def page(page_url):
    "A fresh page on the editor, drawn; fails the test on any page error."
    with browser() as b:
        p = b.new_page(viewport=VIEWPORT); errors = []
        p.on('pageerror', lambda e: errors.append(str(e)))
        p.goto(page_url); wait_for_page_editor(p)
        yield p
        assert not errors, errors

def readout(page): return page.locator('.hx-editor .hx-metrics').inner_text()
def points(page): return page.locator('.hx-editor .hx-simplex circle.hx-point').evaluate_all('cs => cs.map(c => [c.getAttribute("cx"), c.getAttribute("cy"), c.getAttribute("r")])')
def message(page): return page.locator('.hx-editor .hx-message').inner_text()
def commit(page, locator, text): locator.fill(text); locator.press('Enter')

def test_typing_a_count_redraws_readout_simplex_and_shares_without_a_kernel(page):
    root = page.locator('.hx-editor')
    assert 'hetfl-kernel-free' in root.get_attribute('class') and 'make lab' in root.inner_text()
    r0, p0, drawn = readout(page), points(page), root.get_attribute('data-shares-drawn')
    assert 'GSC\t0.163' in r0 and len(p0) == 6 and 'NaN' not in r0
    commit(page, page.locator('.hx-editor .hx-cell input').first, '0')
    page.wait_for_function('(d) => document.querySelector(".hx-editor").dataset.sharesDrawn !== d', arg=drawn)
    assert readout(page) != r0 and points(page)[0] != p0[0] and message(page) == ''
    assert '4620 samples' in readout(page)                     # row 0 holds 2 clients: 2 × 90 samples fewer
    (ROOT/'test-artifacts').mkdir(exist_ok=True)
    root.screenshot(path=str(ROOT/'test-artifacts'/'static-matrix-editor.png'))

BAD = {'-5': 'negative', '2.5': 'not a whole number', 'abc': 'not a number', '': 'empty', '1e9': 'scientific notation',
       '5000000': 'too large'}

def test_every_bad_value_is_refused_with_its_own_message_and_the_last_value_comes_back(page):
    cell, before = page.locator('.hx-editor .hx-cell input').first, readout(page)
    for text, why in BAD.items():
        commit(page, cell, text)
        page.wait_for_function('(w) => document.querySelector(".hx-editor .hx-message").innerText.includes(w)', arg=why)
        assert cell.input_value() == '90' and readout(page) == before and 'NaN' not in readout(page), text
        assert sum(w in message(page) for w in BAD.values()) == 1, message(page)    # the previous message is gone
    commit(page, cell, '80'); page.wait_for_function('() => document.querySelector(".hx-editor .hx-message").innerText === ""')
    assert readout(page) != before

def test_a_row_of_zeros_a_zero_multiplicity_and_the_last_row_are_refused(page):
    cells = page.locator('.hx-editor .hx-row').nth(5).locator('.hx-cell input')
    for i in range(3): commit(page, cells.nth(i), '0')
    before = readout(page); commit(page, cells.nth(3), '0')
    assert 'every count would be 0' in message(page) and cells.nth(3).input_value() == '10' and readout(page) == before
    mult = page.locator('.hx-editor .hx-mult').first; commit(page, mult, '0')
    assert 'below 1' in message(page) and mult.input_value() == '2'
    for _ in range(5): page.locator('.hx-editor .hx-remove').first.click()
    assert page.locator('.hx-editor .hx-row').count() == 1 and 'NaN' not in readout(page)
    page.locator('.hx-editor .hx-remove').first.click()
    assert 'cannot be removed' in message(page) and page.locator('.hx-editor .hx-row').count() == 1

def test_presets_kappa_and_added_rows_work_in_the_page(page):
    page.locator('.hx-editor .hx-preset').select_option('waterbirds_dist')
    page.wait_for_function('() => document.querySelector(".hx-editor .hx-metrics").innerText.includes("30 clients")')
    assert 'GSC\t0.670\t0.67' in readout(page) and page.locator('.hx-editor .hx-row').count() == 7
    drawn = page.locator('.hx-editor').get_attribute('data-shares-drawn')
    commit(page, page.locator('.hx-editor .hx-k'), '3')
    page.wait_for_function('(d) => document.querySelector(".hx-editor").dataset.sharesDrawn !== d', arg=drawn)
    assert '3 of 30 clients' in page.locator('.hx-editor .hx-shares').inner_text()
    commit(page, page.locator('.hx-editor .hx-k'), '2.5'); assert 'κ' in message(page) and page.locator('.hx-editor .hx-k').input_value() == '3'
    page.locator('.hx-editor .hx-add').click()
    assert page.locator('.hx-editor .hx-row').count() == 8 and '31 clients' in readout(page)
    commit(page, page.locator('.hx-editor .hx-mult').first, '9000'); commit(page, page.locator('.hx-editor .hx-rounds'), '3000')
    page.wait_for_function('() => document.querySelector(".hx-editor .hx-shares").innerText.includes("too much")')
    assert '9030 clients' in readout(page)       # the readout stays live; only the selection shares wait for fewer rounds

def saved_notebook(path: Path, data_dir: Path):
    """`path`: a notebook showing the matrix editor, executed with nbclient so that its widget state is saved (as the docs
    build does), and signed in the Jupyter data folder `data_dir` (JupyterLab renders widgets of trusted notebooks only)."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat.sign import NotebookNotary
    from browser import EDITOR_CELL
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(EDITOR_CELL), nbformat.v4.new_code_cell(PROBE_CELL)])
    nb.metadata['kernelspec'] = {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}
    NotebookClient(nb, timeout=120, store_widget_state=True).execute()
    NotebookNotary(data_dir=str(data_dir)).sign(nb)
    nbformat.write(nb, path)

PROBE_CELL = "print('row 0 holds', panel.matrices[0, 0, 0])"   # what Python sees of the first cell
LAB_TIMEOUT_MS = 90000   # JupyterLab opening a notebook and drawing its saved widgets on a loaded 2-core machine

PROBE_TRIES, PROBE_WAIT_MS = 6, 15000   # reruns of the probe cell, and how long each waits for its output

def python_sees(page, text: str) -> bool:
    """Run the probe cell until its output holds `text`. ipywidgets holds a model's update back while an earlier one is
    unanswered, so a cell run right after an edit may still print the old value: the edit counts once a later run
    shows it."""
    probe = f"() => [...document.querySelectorAll('.jp-OutputArea-output')].some(o => o.innerText.includes({text!r}))"
    for _ in range(PROBE_TRIES):
        page.evaluate('(() => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = 1; '
                      'return window.jupyterapp.commands.execute("notebook:run-cell"); })()')
        try:
            page.wait_for_function(probe, timeout=PROBE_WAIT_MS)
            return True
        except Exception as e:
            if type(e).__name__ != 'TimeoutError': raise
    return False

def test_editor_in_jupyterlab_from_saved_state_with_the_kernel_idle_then_live():
    """Opened, not run: the editor draws from the notebook's saved state and an edit redraws with no cell executed. Then
    run: an edit typed in the page reaches Python (the next cell prints the new count)."""
    from browser import jupyter_lab
    require_browser()
    with jupyter_lab({}) as (url, token, root), browser() as b:
        saved_notebook(root/'saved.ipynb', root.parent/'jupyter_data_dir')
        page = b.new_page(viewport=VIEWPORT); errors = []
        page.on('pageerror', lambda e: errors.append(str(e)))
        page.goto(f'{url}/lab/tree/saved.ipynb?token={token}', wait_until='domcontentloaded')
        wait_for_page_editor(page, LAB_TIMEOUT_MS)
        before, count = readout(page), page.evaluate('window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount')
        commit(page, page.locator('.hx-editor .hx-cell input').first, '0')
        page.wait_for_function('(b) => document.querySelector(".hx-editor .hx-metrics").innerText !== b', arg=before)
        assert '4620 samples' in readout(page) and 'NaN' not in readout(page)
        assert page.evaluate('window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount') == count
        page.locator('.hx-editor').first.screenshot(path=str(ROOT/'test-artifacts'/'lab-saved-matrix-editor.png'))
        page.evaluate('window.jupyterapp.commands.execute("notebook:run-all-cells")')
        page.wait_for_function(f"""() => [...document.querySelectorAll('.jp-OutputArea-output')].some(o => o.innerText.includes('row 0 holds 90'))
            && document.querySelector('.hx-editor .hx-metrics').innerText.includes('4800 samples')""", timeout=LAB_TIMEOUT_MS)
        commit(page, page.locator('.hx-editor .hx-cell input').first, '7')
        page.wait_for_function('() => document.querySelector(".hx-editor .hx-metrics").innerText.includes("4634 samples")')
        assert python_sees(page, 'row 0 holds 7'), 'the edit typed in the page never reached Python'
        assert not errors, errors
