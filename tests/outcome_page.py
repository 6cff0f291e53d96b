"""The matrix editor and the kernel-free outcome view in one static page, as the documentation site loads saved widgets
(require.js, the package's anywidget loader, @jupyter-widgets/html-manager, the saved state; no kernel), and the
page-side timers of an edit: Enter in a cell -> the outcome view's first point of the new job -> its last point."""
import json, shutil
from pathlib import Path
from editor_page import widget_js, STATIC

PAGE = '''<!doctype html><html><head><meta charset="utf-8"><title>outcome</title>
<script src="require.js"></script><script src="anywidget_amd.js"></script><script src="html-manager/embed-amd.js"></script>
<script type="application/vnd.jupyter.widget-state+json">%s</script></head>
<body style="margin:16px">%s</body></html>'''

def static_outcome_page(folder: Path, editor, outcome) -> Path:
    "Write `folder/outcome.html`: the saved state of `editor` (a `MatrixEditor`) and `outcome` (a `BrowserOutcomeView`)."
    from ipywidgets.embed import embed_data
    mods = widget_js()
    shutil.copy(mods/'requirejs'/'require.js', folder/'require.js')
    shutil.copytree(mods/'@jupyter-widgets'/'html-manager'/'dist', folder/'html-manager', dirs_exist_ok=True)
    shutil.copy(STATIC/'anywidget_amd.js', folder/'anywidget_amd.js')
    data = embed_data(views=[editor.view, outcome], drop_defaults=False)
    esc = lambda d: json.dumps(d).replace('</', '<\\/')   # a saved string must not close the script element
    views = ''.join(f'<div class="output"><script type="application/vnd.jupyter.widget-view+json">{esc(v)}</script></div>'
                    for v in data['view_specs'])
    (folder/'outcome.html').write_text(PAGE % (esc(data['manager_state']), views))
    return folder/'outcome.html'

def wait_for_outcome(page, timeout_ms: int = 60000):
    "Wait until the editor and the outcome view have drawn (the outcome view's saved curves on first paint)."
    page.wait_for_selector('.hx-editor .hx-metrics table', timeout=timeout_ms)
    page.wait_for_selector('.hx-outcome .hx-o-line', timeout=timeout_ms)

# Timestamps in the page, per edit: the Enter keydown in an editor cell (t0); the outcome view's first point of the new
# job on screen (the animation frame after its `data-points` first turns non-zero); its complete curves (the frame after
# `data-state` turns 'done'); the longest gap between animation frames meanwhile. Each finished edit is pushed to
# `window.__hxOutcome`.
OUTCOME_TIMER_JS = '''() => {
  window.__hxOutcome = [];
  if (window.__hxO) return;   // installed already: a new series
  const root = document.querySelector('.hx-outcome'), s = window.__hxO = {t0: null};
  const tick = () => requestAnimationFrame(now => {
    if (s.t0 === null) return;
    s.gap = Math.max(s.gap, now - s.lastFrame); s.lastFrame = now; tick(); });
  document.addEventListener('keydown', e => { if (e.key === 'Enter' && e.target.closest('.hx-cell')) {
    Object.assign(s, {t0: performance.now(), job: root.dataset.job, first: null, gap: 0, lastFrame: performance.now()}); tick(); } }, true);
  new MutationObserver(() => {
    if (s.t0 === null || root.dataset.job === s.job) return;   // no edit pending, or the old job still
    if (s.first === null && Number(root.dataset.points || 0) > 0) {
      s.first = -1; requestAnimationFrame(() => { s.first = performance.now() - s.t0; }); }
    if (root.dataset.state === 'done') requestAnimationFrame(() => {
      if (s.t0 === null) return;
      window.__hxOutcome.push({first: s.first, done: performance.now() - s.t0, maxFrameGap: s.gap}); s.t0 = null; });
  }).observe(root, {attributes: true, attributeFilter: ['data-points', 'data-state']});
}'''

def timed_outcome_edit(page, value: int, n_before: int, timeout_ms: int = 60000) -> dict:
    "Commit `value` into the editor's first cell with Enter; the page's timings (ms) of the outcome that follows."
    cell = page.locator('.hx-editor .hx-cell input').first
    cell.fill(str(value)); cell.press('Enter')
    page.wait_for_function('(n) => window.__hxOutcome.length > n', arg=n_before, timeout=timeout_ms)
    return page.evaluate('(n) => window.__hxOutcome[n]', n_before)
