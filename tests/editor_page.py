"""The matrix editor in a static page, as the documentation site loads saved widgets (require.js, the anywidget loader of
the package, @jupyter-widgets/html-manager's embed-amd.js, the saved widget state; no kernel), and the page-side timer
of an edit: Enter in a cell -> the readout and the simplex changed -> the next animation frame."""
import html, json, shutil, sys
from pathlib import Path
import pytest
from conftest import ROOT, browser_required

STATIC = ROOT/'hetfl_explore'/'widgets'/'static'

def widget_js() -> Path:
    "The docs build's node_modules (require.js, html-manager), installed with npm once; a skip (or failure in CI) without npm."
    sys.path.insert(0, str(ROOT/'tools'))
    import build_docs
    if not build_docs.js_installed() and not shutil.which('npm'):
        if browser_required(): pytest.fail('npm is needed to fetch the widget manager for the static editor page')
        pytest.skip('npm is not installed: the widget manager of the static page cannot be fetched')
    return build_docs.install_js()

PAGE = '''<!doctype html><html><head><meta charset="utf-8"><title>matrix editor</title>
<script src="require.js"></script><script src="anywidget_amd.js"></script><script src="html-manager/embed-amd.js"></script>
<script type="application/vnd.jupyter.widget-state+json">%s</script></head>
<body style="margin:16px"><div class="output"><script type="application/vnd.jupyter.widget-view+json">%s</script></div></body></html>'''

def static_editor_page(folder: Path, editor) -> Path:
    "Write `folder/editor.html`: the saved state of `editor` (a `MatrixEditor`) in a page that loads widgets as the docs site does."
    from ipywidgets.embed import embed_data
    mods = widget_js()
    shutil.copy(mods/'requirejs'/'require.js', folder/'require.js')
    shutil.copytree(mods/'@jupyter-widgets'/'html-manager'/'dist', folder/'html-manager', dirs_exist_ok=True)
    shutil.copy(STATIC/'anywidget_amd.js', folder/'anywidget_amd.js')
    data = embed_data(views=[editor.view], drop_defaults=False)
    esc = lambda d: json.dumps(d).replace('</', '<\\/')   # a saved string must not close the script element
    (folder/'editor.html').write_text(PAGE % (esc(data['manager_state']), esc(data['view_specs'][0])))
    return folder/'editor.html'

def wait_for_page_editor(page, timeout_ms: int = 60000):
    "Wait until the editor's readout, simplex points and selection shares have drawn."
    page.wait_for_selector('.hx-editor .hx-metrics table', timeout=timeout_ms)
    page.wait_for_selector('.hx-editor .hx-simplex circle.hx-point', timeout=timeout_ms)
    page.wait_for_selector('.hx-editor .hx-share', timeout=timeout_ms)

# Timestamps in the page: the Enter keydown in a cell (t0), the first mutation of the readout and of the simplex after
# it, the animation frame after both (the redraw is on screen), and the next redraw of the selection shares. Installing it
# again starts a new series in `window.__hxEdits`.
EDITOR_TIMER_JS = '''() => {
  if (window.__hxEdit) { window.__hxEdits = []; return; }   // installed already: start a new series
  const ed = document.querySelector('.hx-editor'), s = window.__hxEdit = {t0: null, readout: null, simplex: null, shares: null};
  window.__hxEdits = [];
  const done = () => { if (s.readout === null || s.simplex === null || s.t0 === null) return;
    const t0 = s.t0, r = s.readout, x = s.simplex;
    requestAnimationFrame(() => { s.frame = performance.now() - t0; });
    const wait = () => { if (s.shares !== null && s.frame !== undefined) { window.__hxEdits.push({readout: r - t0, simplex: x - t0,
      frame: s.frame, shares: s.shares - t0}); s.t0 = null; s.frame = undefined; } else setTimeout(wait, 1); }; wait(); };
  document.addEventListener('keydown', e => { if (e.key === 'Enter' && e.target.closest('.hx-cell')) {
    s.t0 = performance.now(); s.readout = s.simplex = s.shares = null; } }, true);
  const watch = (el, key, then) => new MutationObserver(() => { if (s.t0 !== null && s[key] === null) { s[key] = performance.now(); then(); } })
    .observe(el, {subtree: true, childList: true, characterData: true, attributes: true});
  watch(ed.querySelector('.hx-metrics'), 'readout', done); watch(ed.querySelector('.hx-simplex'), 'simplex', done);
  watch(ed.querySelector('.hx-share-bars'), 'shares', () => {});
}'''

def timed_page_edit(page, value: int, n_before: int, timeout_ms: int = 30000) -> dict:
    "Commit `value` into the editor's first cell with Enter; the page's timings (ms) of that edit."
    cell = page.locator('.hx-editor .hx-cell input').first
    cell.fill(str(value)); cell.press('Enter')
    page.wait_for_function('(n) => window.__hxEdits.length > n', arg=n_before, timeout=timeout_ms)
    return page.evaluate('(n) => window.__hxEdits[n]', n_before)
