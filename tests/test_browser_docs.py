"""Open every page of the rendered docs site (`_docs/`, built by `make docs`) in real Chromium."""
import posixpath, re, urllib.request
from pathlib import Path
import pytest
from conftest import ROOT, browser_required
from browser import browser, serve, require_browser

DOCS = ROOT/'_docs'
ARTIFACTS = ROOT/'test-artifacts'

def pages():
    if not (DOCS/'index.html').exists():
        if browser_required(): pytest.fail('_docs/index.html is missing: run `make docs` first')
        pytest.skip('_docs/ is not built (run `make docs`)')
    return sorted(p.relative_to(DOCS) for p in DOCS.rglob('*.html') if not {'assets', '@jupyter-widgets'} & set(p.parts))

# the declared type of every trace plotly.js did not draw as that type: a bundle lacking a trace module draws an empty
# frame without a console error (its `_fullData` holds a hidden 'scatter' instead)
DRAWN_AS_DECLARED = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(el => el._fullData)
    .flatMap(el => el._fullData.filter(t => t.type !== (el.data[t.index].type || 'scatter')).map(t => el.data[t.index].type))"""

# What a reader meets: a saved panel (the output holding the read-only caption) that still takes input (other than a
# widget that computes in the browser), a code line cut off without a scroll bar or wider than the column (code wraps),
# the current page's sidebar entry out of view, a contents entry that prints a formula twice
READER_CHECKS = """() => {
  const out = [], side = document.querySelector('.hx-sidebar'), active = side && side.querySelector('a.active');
  const live = [...document.querySelectorAll('.hx-static-banner')].map(b => b.parentElement)
    .flatMap(o => [...o.querySelectorAll('input, select, textarea, button')]).filter(i => !i.disabled && !i.closest('.hetfl-kernel-free'));
  if (live.length) out.push(`${live.length} input(s) of saved panels accept input`);
  const cut = [...document.querySelectorAll('.jp-InputArea-editor, .jp-InputArea-editor pre')]
    .filter(e => e.scrollWidth > e.clientWidth + 2 && !['auto', 'scroll'].includes(getComputedStyle(e).overflowX));
  if (cut.length) out.push(`${cut.length} code block(s) cut off without a scroll bar`);
  const wide = [...document.querySelectorAll('.jp-InputArea-editor pre, .jp-RenderedMarkdown .highlight pre')]   // code wraps to the column
    .filter(e => e.scrollWidth > e.clientWidth + 2);
  if (wide.length) out.push(`${wide.length} code block(s) with a line wider than the column: ${wide[0].textContent.split('\\n').sort((a, b) => b.length - a.length)[0].slice(0, 80)}`);
  if (active) { const a = active.getBoundingClientRect(), s = side.getBoundingClientRect();
    if (a.top < s.top || a.bottom > s.bottom) out.push('the sidebar entry of this page is out of view'); }
  const twice = [...document.querySelectorAll('.hx-toc a')].filter(a => {
    const h = document.getElementById(a.getAttribute('href').slice(1)), m = h && h.querySelector('.katex-html');
    return m && a.textContent.split(m.textContent).length > 2; }).map(a => a.textContent);
  if (twice.length) out.push(`contents entries repeat their text: ${twice.slice(0, 2)}`);
  return out; }"""

# Text of a figure that collides with text of another subplot or another bar: a tick label running into the next
# panel's cell counts ("10labrador"), two bar labels run together ("0.000.00"); text within one subplot is not compared. Boxes closer than a pixel count as touching.
FIGURE_TEXT_OVERLAPS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((plot, n) => {
  const boxes = [...plot.querySelectorAll('.cartesianlayer .subplot, .ternarylayer .ternary')].flatMap((sp, s) =>
    [...sp.querySelectorAll('text')].map((t, i) => [t.classList.contains('bartext') ? `${s}.bar${i}` : `${s}`, t.textContent, t.getBoundingClientRect()]))
    .filter(([, text, r]) => text.trim() && r.width > 0);
  const out = [], GAP = 1;   // texts closer than this read as one ('0.000.00')
  boxes.forEach(([k, s, a], i) => boxes.slice(i + 1).forEach(([l, t, b]) => {
    if (k !== l && a.left < b.right + GAP && b.left < a.right + GAP && a.top < b.bottom + GAP && b.top < a.bottom + GAP)
      out.push(`figure ${n + 1}: '${s}' overlaps '${t}'`); }));
  return out; })"""

# Text and markers that hide each other inside one figure: two point labels (text drawn at data points) or two tick labels
# of one axis on top of each other, a marker drawn over a tick label or an axis title (a simplex corner marker hiding the
# axis numbers). Overlaps of at most OVERLAP_PX pixels (glyph boxes touching) do not count.
FIGURE_CLUTTER = r"""(OVERLAP_PX) => [...document.querySelectorAll('.js-plotly-plot')].flatMap((plot, n) => {
  const box = e => e.getBoundingClientRect(), shown = e => { const r = box(e); return r.width > 0 && r.height > 0; };
  const texts = sel => [...plot.querySelectorAll(sel)].filter(t => t.textContent.trim() && shown(t));
  const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > OVERLAP_PX
                      && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > OVERLAP_PX;
  const out = [], pairs = (xs, what) => xs.forEach((a, i) => xs.slice(i + 1).forEach(b => {
    if (hit(box(a), box(b))) out.push(`figure ${n + 1}: ${what} '${a.textContent}' and '${b.textContent}' overlap`); }));
  pairs(texts('.textpoint text'), 'point labels');
  const axes = new Map();   // tick labels grouped by axis: the tick's class (xtick, ytick, atick...) within one axis layer
  const level = t => !/rotate\(\s*-?[1-9]/.test(t.getAttribute('transform') || '');   // a turned label's box is not its glyphs
  texts('g[class$="tick"] > text').filter(level).forEach(t => { const g = t.parentNode, key = [g.getAttribute('class'), g.parentNode.parentNode && g.parentNode.parentNode.getAttribute('class'), g.closest('.subplot, .ternary') && g.closest('.subplot, .ternary').getAttribute('class')].join('|');
    axes.set(key, [...(axes.get(key) || []), t]); });
  axes.forEach(ts => pairs(ts, 'tick labels'));
  const labels = [...texts('g[class$="tick"] > text'), ...texts('[class*="title"] text')];
  [...plot.querySelectorAll('.scatterlayer path.point, .ternarylayer path.point')].filter(shown).forEach(m => {
    const l = labels.find(t => hit(box(m), box(t)));
    if (l) out.push(`figure ${n + 1}: a marker covers the axis label '${l.textContent}'`); });
  return [...new Set(out)]; })"""
OVERLAP_PX = 1
# Figures drawn with nothing in them: no trace, and no shape, annotation or image in the layout (a diagram drawn with
# shapes alone is a figure; a chart saved before its data arrived is an empty frame)
EMPTY_FIGURES = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => Array.isArray(p.data) && !p.data.length
  && !['shapes', 'annotations', 'images'].some(k => ((p.layout || {})[k] || []).length)).length"""
# Pages whose figures the check still flags, each with what hides what; a page is removed once its figure is fixed (the
# check fails when a listed page is clean, so the list only shrinks)
KNOWN_CLUTTER: dict[str, str] = {}   # pages whose figures still hide labels, each with what overlaps what

def check_page(page, base: str, rel: str) -> list[str]:
    "Everything one docs page must get right in Chromium at 1280 px; returns the problems found (empty when clean)."
    errors, problems = [], []
    page.on('console', lambda m: errors.append(m.text) if m.type == 'error' else None)
    page.on('pageerror', lambda e: errors.append(str(e)))
    page.goto(f'{base}/{rel}', wait_until='networkidle')
    try: page.wait_for_function("document.querySelectorAll('nav.hx-sidebar a').length >= 2", timeout=20000)
    except Exception:                                     # keep what the browser saw, for the failure message
        page.screenshot(path=str(ARTIFACTS / f'no-sidebar-{Path(rel).stem}.png'))
        return [f"{rel}: no sidebar after 20 s; the page has {page.locator('nav.hx-sidebar a').count()} sidebar links"]
    if page.locator('.plotly-graph-div').count(): page.wait_for_selector('.plotly-graph-div .main-svg', timeout=15000)
    state = page.locator('script[type="application/vnd.jupyter.widget-state+json"]')
    if state.count() and 'hx-plotly' in state.first.text_content():              # a panel holds a plotly figure
        page.wait_for_function("[...document.querySelectorAll('.hx-plotly')].filter(e => e.offsetParent !== null)"
                               ".every(e => e.querySelector('.main-svg'))", timeout=15000)   # every shown panel figure drew (plotly skips closed tabs)
    undrawn = page.evaluate(DRAWN_AS_DECLARED)
    empty = page.evaluate(EMPTY_FIGURES)
    if empty: problems.append(f'{rel}: {empty} figure(s) drawn without a single trace (an empty frame)')
    if undrawn: problems.append(f'{rel}: {len(undrawn)} trace(s) not drawn as their type (a plotly.js bundle without it?): {undrawn[:3]}')
    views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    if views: page.wait_for_selector('.jupyter-widgets', timeout=15000)
    if views and not page.locator('.hx-static-banner, .hetfl-kernel-free').count(): problems.append(f'{rel}: {views} widget views but no static-snapshot banner')
    if errors: problems.append(f'{rel}: console errors: {errors[:5]}')
    for problem in page.evaluate(READER_CHECKS): problems.append(f'{rel}: {problem}')
    overlaps = page.evaluate(FIGURE_TEXT_OVERLAPS)
    if overlaps: problems.append(f'{rel}: {len(overlaps)} overlapping text(s) in figures: {overlaps[:3]}')
    clutter = page.evaluate(FIGURE_CLUTTER, OVERLAP_PX)
    if clutter and rel not in KNOWN_CLUTTER: problems.append(f'{rel}: {len(clutter)} label(s) or marker(s) hiding others in figures: {clutter[:3]}')
    if not clutter and rel in KNOWN_CLUTTER: problems.append(f'{rel}: its figures no longer hide labels: remove it from KNOWN_CLUTTER')
    math_errors = page.locator('.katex-error')              # KaTeX shows a formula it cannot parse as red source text
    if math_errors.count(): problems.append(f'{rel}: math errors: {[math_errors.nth(i).get_attribute("title") for i in range(min(3, math_errors.count()))]}')
    wide = page.evaluate("""() => [...document.querySelectorAll('.hx-main .plotly-graph-div, .hx-main .jupyter-widgets')]
        .filter(e => e.getBoundingClientRect().right > document.querySelector('.hx-main').getBoundingClientRect().right + 4)
        .map(e => e.className.slice(0, 40) + ' ' + Math.round(e.getBoundingClientRect().width) + 'px')""")
    if wide: problems.append(f'{rel}: {len(wide)} figures or panels overflow the page column: {wide[:3]}')
    return problems

# The pages are checked in SHARDS interleaved parts, so that `pytest -n 2` spreads the browser work over both workers (one
# part of every page took 240 s, alone on one worker at the end of `make test`, while the other worker idled).
SHARDS = 4
SHOT_QUALITY = 80   # JPEG quality of the page screenshots (PNG encoding of the long pages took a third of the check)

@pytest.mark.parametrize('shard', range(SHARDS))
def test_every_page_renders_cleanly_and_fits(shard):
    """One visit per page: no console or math errors, every figure drawn, a banner above static panels, no figure
    wider than its column, previous/next links, a screenshot of every page; then search (in the first part)."""
    require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    problems, listed = [], pages()                                        # every page is checked; all problems are listed
    with serve(DOCS) as base, browser() as b:
        for rel in listed[shard::SHARDS]:
            page = b.new_page(viewport={'width': 1280, 'height': 900})
            problems += check_page(page, base, str(rel))
            if page.locator('nav.hx-pager a').count() < (1 if len(listed) > 1 else 0): problems.append(f'{rel}: no previous/next links')
            page.screenshot(path=str(ARTIFACTS/f"docs-{str(rel).replace('/', '-')[:-5]}.jpg"), full_page=True, type='jpeg', quality=SHOT_QUALITY)
            page.close()
        assert not problems, f'{len(problems)} problem(s):\n' + '\n'.join(problems)
        if shard: return
        page = b.new_page(viewport={'width': 1280, 'height': 900})
        page.goto(f'{base}/{listed[0]}', wait_until='networkidle')
        page.fill('.hx-search', 'FedDiverse')
        page.wait_for_selector('.hx-results li a', timeout=10000)
        assert page.locator('.hx-results li a').count() >= 1
        page.close()

def test_sidebar_links_resolve():
    "Every link of every page's sidebar is served; each distinct target is fetched once (the first page linking to it is named)."
    targets = {}                                          # normalised target -> (page, href) that first links to it
    for rel in pages():
        nav = re.search(r'<nav class="hx-sidebar">(.*?)</nav>', (DOCS/rel).read_text(), re.S)
        assert nav, f'{rel}: no sidebar'
        for href in re.findall(r'href="([^"]+)"', nav.group(1)):
            targets.setdefault(posixpath.normpath((Path(rel).parent/href).as_posix()), (rel, href))
    with serve(DOCS) as base:
        for target, (rel, href) in targets.items():
            with urllib.request.urlopen(f'{base}/{target}') as r: assert r.status == 200, f'{rel}: {href} -> {r.status}'


FIRST_PROSE = re.compile(r'\A\s*#\s[^\n]*\n(?:\s*\n)*(?:>[^\n]*\n?)*\s*(.+?)(?:\n\n|\Z)', re.S)   # the first paragraph under title and description

def intro_words(nb: Path) -> str | None:
    "The first words of the first paragraph under a notebook's title and description (None when it has none), as plain text."
    import json
    cell = next((c for c in json.loads(nb.read_text())['cells'] if c['cell_type'] == 'markdown'), None)
    m = cell and FIRST_PROSE.match(''.join(cell['source']))
    if not m or m.group(1).lstrip().startswith(('|', '<', '!', '```', ':::', '-', '$')): return None
    words = []
    for w in re.sub(r'\]\([^)]*\)|[*`\[\]]', '', m.group(1)).split()[:8]:   # the leading run of plain words
        if not re.fullmatch(r"[A-Za-z_,.'’-]+", w): break
        words.append(w)
    return ' '.join(words) if len(words) >= 3 else None

def test_the_site_weighs_within_its_limit_and_ships_each_asset_once():
    "The whole site stays under its limit; the widget manager ships one bundle and the icon fonts browsers fetch."
    import fnmatch, sys
    sys.path.insert(0, str(ROOT/'tools')); import build_docs as bd
    pages()                                                                   # skips when the site is not built
    assert bd.site_bytes(DOCS) <= bd.MAX_SITE_BYTES, f'{bd.site_bytes(DOCS) / 1e6:.1f} MB'
    shipped = [f.name for f in (DOCS/'assets'/'html-manager').iterdir()]
    assert 'embed-amd.js' in shipped and any(n.endswith('.woff2') for n in shipped)
    assert not [n for n in shipped if any(fnmatch.fnmatch(n, pat) for pat in bd.UNUSED_WIDGET_FILES)]
    assert not [p for p in DOCS.rglob('embed-amd.js') if p.parent != DOCS/'assets'/'html-manager']

def test_every_page_shows_its_introduction():
    "The prose under each notebook's title and description is on its page (the site lost every chapter's first paragraphs)."
    import html as h, sys
    sys.path.insert(0, str(ROOT/'tools')); import build_docs as bd
    pages()                                                                   # skips when the site is not built
    missing, checked = [], 0
    for proc in sorted(bd.PROC.rglob('*.ipynb')):
        rel = proc.relative_to(bd.PROC)
        words, page = intro_words(ROOT/'nbs'/rel), DOCS/bd.page_meta(bd.read_processed(proc), rel)['path']
        if not words or not page.exists(): continue
        checked += 1
        text = re.sub(r'\s+', ' ', h.unescape(re.sub(r'<[^>]+>', ' ', page.read_text())))
        if words.split(',')[0] not in text: missing.append(f'{rel}: "{words}"')
    if not checked: pytest.skip('no built page comes from a notebook whose first cell has prose under its title')
    assert not missing, f'{len(missing)} of {checked} page(s) without their introduction:\n' + '\n'.join(missing)

def test_the_matrix_editor_computes_on_the_docs_site_without_a_kernel():
    "On the editor's chapter page, typing a count redraws the readout and the simplex, and a fractional count is refused."
    rel = next(r for r in pages() if r.name.startswith('editor'))
    with serve(DOCS) as base, browser() as b:
        page, errors = b.new_page(viewport={'width': 1280, 'height': 900}), []
        page.on('pageerror', lambda e: errors.append(str(e)))
        page.goto(f'{base}/{rel}', wait_until='networkidle')
        ed = page.locator('.hx-editor').first; ed.locator('.hx-metrics').wait_for(timeout=20000)
        readout = lambda: ed.locator('.hx-metrics').inner_text()
        points = lambda: ed.locator('.hx-simplex circle.hx-point').evaluate_all('cs => cs.map(c => c.getAttribute("cx") + c.getAttribute("cy"))')
        r0, p0, cell = readout(), points(), ed.locator('.hx-cell input').first
        assert cell.is_enabled() and not ed.locator('xpath=ancestor::*[contains(@class, "hx-readonly")]').count()
        cell.fill('0'); cell.press('Enter')
        page.wait_for_function('(r) => document.querySelector(".hx-editor .hx-metrics").innerText !== r', arg=r0)
        assert points() != p0 and 'NaN' not in readout()
        r1 = readout(); cell.fill('2.5'); cell.press('Enter')
        page.wait_for_function('() => document.querySelector(".hx-editor .hx-message").innerText.includes("not a whole number")')
        assert readout() == r1 and cell.input_value() == '0' and not errors, errors

def test_the_outcome_view_trains_on_the_lab_page_without_a_kernel():
    """On the lab page (widgets/explorers.html) the outcome view shows saved curves on first paint; an edit in the editor
    above it starts a job in the page and the curves change; an edit beyond the shipped image pool is refused beside the
    greyed curves, and the next valid edit trains again."""
    rel = next((r for r in pages() if r.name == 'explorers.html'), None)
    if rel is None: pytest.skip('the lab page (widgets/explorers.html) is not built')
    path = lambda page: page.locator('.hx-outcome .hx-o-line').evaluate_all('ls => ls.map(l => l.getAttribute("d")).join("|")')
    state = lambda page: page.evaluate('document.querySelector(".hx-outcome").dataset.state')
    with serve(DOCS) as base, browser() as b:
        page, errors = b.new_page(viewport={'width': 1280, 'height': 900}), []
        page.on('pageerror', lambda e: errors.append(str(e)))
        page.goto(f'{base}/{rel}', wait_until='networkidle')
        page.wait_for_selector('.hx-outcome .hx-o-line', timeout=30000)           # curves on first paint, before any edit
        assert state(page) == 'saved' and path(page).count('M') >= 4
        p0, cell = path(page), page.locator('.hx-editor .hx-cell input').first
        cell.fill('40'); cell.press('Enter')
        page.wait_for_function('() => document.querySelector(".hx-outcome").dataset.state === "done"', timeout=60000)
        p1 = path(page)
        assert p1 != p0 and 'NaN' not in p1 and page.locator('.hx-outcome .hx-o-point').count() == 2 * 20
        assert 'done in' in page.locator('.hx-outcome .hx-o-status').inner_text()
        cell.fill('5000'); cell.press('Enter')                                      # 15 SC clients x 1000 images of one cell
        page.wait_for_function('() => document.querySelector(".hx-outcome").dataset.state === "refused"', timeout=10000)
        assert 'holds 400 per group' in page.locator('.hx-outcome .hx-o-message').inner_text()
        assert 'hx-stale' in page.locator('.hx-outcome .hx-o-chart').get_attribute('class') and path(page) == p1
        k = page.locator('.hx-editor .hx-k'); cell.fill('40'); cell.press('Enter'); k.fill('30'); k.press('Enter')
        page.wait_for_function('() => document.querySelector(".hx-editor .hx-k").classList.contains("hx-bad")', timeout=10000)
        assert 'too large' in page.locator('.hx-editor .hx-message-near').first.inner_text()   # the editor refuses κ > clients itself
        k.fill('9'); k.press('Enter')                                               # valid again: trains, no longer greyed
        page.wait_for_function('() => document.querySelector(".hx-outcome").dataset.state === "done"', timeout=60000)
        assert 'hx-stale' not in page.locator('.hx-outcome .hx-o-chart').get_attribute('class') and not errors, errors

# The reader's path: from the index, by links alone, the live editor, the selection explorer, the outcomes, the course
# and a lab (each hop: the text of a link on the page it starts from, then the page it must open)
READERS_PATH = [('the live matrix editor', 'widgets/editor.html'), ('Next', 'widgets/explorers.html'), ('Next', 'widgets/outcome.html'),
                ('Next', 'course.html'), ('Next', 'labs/lab_selection.html')]

def follow(page, text: str):
    "Click the first link on `page` whose text contains `text` ('Next': the pager's next link) and wait for the new page."
    link = page.locator('nav.hx-pager a.hx-next') if text == 'Next' else page.locator('.hx-main a', has_text=text).first
    with page.expect_navigation(wait_until='domcontentloaded'): link.click()

def panel_top(page) -> float:
    "How far down the page its first panel starts (px; inf when it shows none)."
    return page.evaluate("""() => { const p = document.querySelector('.hx-main .jupyter-widgets, .hx-main .hx-editor');
        return p ? p.getBoundingClientRect().top + window.scrollY : Infinity; }""")

def test_the_readers_path_leads_from_the_index_to_a_lab_by_links_alone():
    "The index links the live editor in its first screen; Next leads on to the explorer, the outcomes, the course and a lab; panel pages open on their panel."
    listed = {str(p) for p in pages()}
    assert all(dest in listed for _, dest in READERS_PATH), 'the reader\'s path names a page the site lacks'
    with serve(DOCS) as base, browser() as b:
        page = b.new_page(viewport={'width': 1366, 'height': 900})
        page.goto(f'{base}/index.html', wait_until='domcontentloaded')
        first = page.locator('.hx-main a', has_text=READERS_PATH[0][0]).first
        assert first.bounding_box()['y'] < 900, 'the index does not link the live editor in its first screen'
        for text, dest in READERS_PATH:
            follow(page, text)
            assert page.url.endswith('/' + dest), f'{text!r} led to {page.url}, expected {dest}'
            if dest.startswith('widgets/'):
                page.wait_for_selector('.hx-main .jupyter-widgets, .hx-main .hx-editor', timeout=20000)
                top, api = panel_top(page), page.evaluate("() => { const h = document.querySelector('.hx-main h3[id], .hx-main h2[id] + .highlight');"
                                                           " return h ? h.getBoundingClientRect().top + window.scrollY : Infinity; }")
                assert top < 1800 and top < api, f'{dest}: the panel starts {top:.0f} px down, the API reference at {api:.0f} px'
        page.close()

SEARCHED = ('fl_metrics', 'simulate_selection', 'matrices_from_frame')   # a query for each lands on its definition

def test_search_finds_functions_by_name_and_lands_on_their_definition():
    "Typing an exported function's name lists its definition (with its signature) first, and Enter opens the page at it."
    listed = pages()
    with serve(DOCS) as base, browser() as b:
        page = b.new_page(viewport={'width': 1366, 'height': 900})
        for name in SEARCHED:
            page.goto(f'{base}/{listed[0]}', wait_until='domcontentloaded')
            page.fill('.hx-search', name)
            page.wait_for_selector('.hx-results li a', timeout=10000)
            first = page.locator('.hx-results li').first
            assert first.locator('a').inner_text() == name and name + '(' in first.locator('small').inner_text()
            with page.expect_navigation(wait_until='domcontentloaded'): page.press('.hx-search', 'Enter')
            assert page.url.endswith('#' + name), page.url
            assert page.locator(f'[id="{name}"]').count() == 1, f'{page.url}: no definition anchored at #{name}'
        page.close()

PHONE = {'width': 390, 'height': 844}
PHONE_PAGES = ("index.html", "widgets/editor.html", "foundation/hetero.html")   # prose, the live panel, a chapter with figures

def test_three_pages_fit_a_phone_screen():
    "At 390 px the sidebar folds into a menu that opens, and nothing on the index, the editor and a chapter runs past the screen's edge."
    listed = {str(p) for p in pages()}
    ARTIFACTS.mkdir(exist_ok=True)
    with serve(DOCS) as base, browser() as b:
        for rel in (r for r in PHONE_PAGES if r in listed):
            page = b.new_page(viewport=PHONE)
            page.goto(f'{base}/{rel}', wait_until='networkidle')
            page.wait_for_timeout(500)
            assert not page.locator('.hx-sidebar li a').first.is_visible(), f'{rel}: the page list is open on a phone'
            over = page.evaluate("""() => { const w = document.documentElement.clientWidth;
                return [document.documentElement.scrollWidth - w, [...document.querySelectorAll('.hx-main *')]
                  .filter(e => e.getBoundingClientRect().right > w + 1 && !e.closest('[style*="overflow"], .jp-OutputArea-output, .jp-Cell, pre, table, .katex-display'))
                  .slice(0, 3).map(e => e.tagName + '.' + String(e.className).slice(0, 30))]; }""")
            page.screenshot(path=str(ARTIFACTS/f"phone-{rel.replace('/', '-')[:-5]}.png"))
            assert over[0] <= 0 and not over[1], f'{rel}: {over[0]} px of horizontal overflow at 390 px: {over[1]}'
            page.click('.hx-menu')
            assert page.locator('.hx-sidebar li a').first.is_visible(), f'{rel}: the menu does not open the page list'
            page.close()

def test_the_editor_says_where_the_problem_is_and_limits_kappa_to_the_clients():
    "On the 24-row Dirichlet preset a fraction typed in row 20 is refused beside that row (the box marked), in view; κ above the number of clients is refused beside its box; each metric explains itself on hover."
    rel = next(r for r in pages() if r.name.startswith('editor'))
    with serve(DOCS) as base, browser() as b:
        page = b.new_page(viewport={'width': 1366, 'height': 900})
        page.goto(f'{base}/{rel}', wait_until='networkidle')
        ed = page.locator('.hx-editor').first; ed.locator('.hx-metrics').wait_for(timeout=20000)
        notes = ed.locator('.hx-metrics th[title]').evaluate_all('ths => ths.map(t => [t.textContent, t.title])')
        assert [n for n, _ in notes] == ['GCI', 'GAI', 'GSC', 'CCI', 'CAI', 'CSC'] and all(len(t) > 30 for _, t in notes), notes
        assert ed.locator('.hx-metrics td').evaluate_all('tds => tds.every(t => getComputedStyle(t).whiteSpace === "nowrap")')
        ed.locator('.hx-preset').select_option('dirichlet4_1')
        ed.locator('.hx-row').nth(23).wait_for(timeout=10000)
        cell = ed.locator('.hx-row').nth(20).locator('.hx-cell input').first
        before = cell.input_value(); cell.scroll_into_view_if_needed(); cell.fill('2.5'); cell.press('Enter')
        near = ed.locator('.hx-message-near').first
        near.wait_for(timeout=5000)
        assert 'not a whole number' in near.inner_text() and 'hx-bad' in cell.get_attribute('class') and cell.input_value() == before
        box, view = near.bounding_box(), page.viewport_size
        assert 0 <= box['y'] <= view['height'], f'the message is drawn at y = {box["y"]:.0f} px, outside the window'
        row = ed.locator('.hx-row').nth(20).bounding_box()
        assert abs(box['y'] - (row['y'] + row['height'])) < 40, 'the message is not beside the row'
        clients = ed.locator('.hx-row .hx-mult').evaluate_all('ms => ms.reduce((t, m) => t + Number(m.value), 0)')
        k = ed.locator('.hx-k'); k0 = k.input_value()
        k.fill(str(clients + 6)); k.press('Enter')
        assert k.input_value() == k0 and 'hx-bad' in k.get_attribute('class')
        assert f'too large (at most {clients})' in ed.locator('.hx-message-near').first.inner_text()
        page.close()
