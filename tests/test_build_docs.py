"""The docs build's own guarantees, on tiny pages and notebooks: no leaked stderr or build paths, and saved panels that
show what the code above them built (not what later test cells changed)."""
import json, sys
from pathlib import Path
import nbformat
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT/'tools'))
import build_docs as bd

PAGE = '<html><body><main>{}</main></body></html>'
STDERR_BLOCK = '<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr"><pre>{}</pre></div>'
# the lab template's own CSS names the stderr mime type: that is not an output block
LAB_CSS = "<style>.jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'] { background: #fdd; }</style>"

def write(root: Path, rel: str, body: str) -> None:
    (root/rel).parent.mkdir(parents=True, exist_ok=True); (root/rel).write_text(PAGE.format(body))

def test_site_check_flags_stderr_and_absolute_paths(tmp_path):
    write(tmp_path, 'clean.html', LAB_CSS + '<p>see https://example.org/tmp/file.txt and <code>data/results/x.json</code></p>')
    write(tmp_path, 'a/warn.html', STDERR_BLOCK.format('/tmp/ipykernel_3174/1899731932.py:2: PerformanceWarning: ...'))
    write(tmp_path, 'b/path.html', f'<pre>{ROOT}/hetfl_explore/fairness/metrics.py</pre>')
    write(tmp_path, 'assets/lib.html', STDERR_BLOCK.format('vendored, not a page'))
    write(tmp_path, 'c/quarto.html', '<div class="cell-output cell-output-stderr"><pre><code>UserWarning: x</code></pre></div>')
    problems = bd.site_problems(tmp_path)
    assert sorted(problems) == ['a/warn.html: 1 stderr output block(s)', 'a/warn.html: absolute path /tmp/ipykernel_3174/1899731932.py',
                                f'b/path.html: absolute path {ROOT}/hetfl_explore/fairness/metrics.py', 'c/quarto.html: 1 stderr output block(s)']
    with pytest.raises(SystemExit, match='stderr output'): bd.check_site(tmp_path)
    for bad in ('a/warn.html', 'b/path.html', 'c/quarto.html'): (tmp_path/bad).unlink()
    bd.check_site(tmp_path)                                             # a clean site passes

def test_callouts_render_as_boxes_and_raw_markup_is_flagged(tmp_path):
    "Quarto callouts become HTML boxes (title from a heading, markdown inside kept); a page still showing ':::' or two <h1> fails the check."
    md = 'Before.\n- item\n::: {.callout-note}\n## Deviation\nThe *rule* differs.\n:::\n\n::: {.callout-warning}\nCareful.\n:::\nAfter.'
    out = bd.callouts(md)
    assert bd.inline_code('the `FederatedData` <container>') == 'the <code>FederatedData</code> &lt;container&gt;'
    assert ':::' not in out and out.count('<div class="callout') == 2 and '<p class="callout-title">Deviation</p>' in out
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    page = markdown2html_mistune(out)
    assert '<em>rule</em>' in page and '<p class="callout-title">Warning</p>' in page and page.rstrip().endswith('<p>After.</p>')
    write(tmp_path, 'ok.html', LAB_CSS + '<h1>T</h1>' + page)
    write(tmp_path, 'fence.html', '<h1>T</h1><p>::: {.callout-note}</p>')
    write(tmp_path, 'heads.html', '<h1>T</h1><h1 id="x"># Title</h1>')
    assert sorted(bd.site_problems(tmp_path)) == ['fence.html: 1 Quarto fence(s) shown as text',
                                                  'heads.html: 2 top-level headings (a commented-out markdown cell?)']

@pytest.mark.parametrize('root', ['/check/work/main', '/srv/ci/hetfl', '/work/main'])
def test_site_check_names_the_whole_path_under_any_root(tmp_path, monkeypatch, root):
    "A checkout outside the usual prefixes (a CI runner's /check/...) is still reported with its full path."
    monkeypatch.setattr(bd, 'ROOT', Path(root))
    write(tmp_path, 'p.html', f'<pre>{root}/hetfl_explore/fairness/metrics.py:3: UserWarning</pre>')
    assert bd.site_problems(tmp_path) == [f'p.html: absolute path {root}/hetfl_explore/fairness/metrics.py']

def saved_panels(cells: list[str], tmp_path: Path) -> dict:
    "Execute `cells` like the docs build does; returns the saved widget state (after checking the cells are intact)."
    path = tmp_path/'nb.ipynb'
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(nb, path)
    name, _, err = bd.execute(path)
    assert err is None, err
    out = json.loads(path.read_text())
    ran = [c for c in out['cells'] if bd.DOCS_ONLY not in c['metadata'].get('tags', [])]
    assert [''.join(c['source']) for c in ran] == cells                  # every cell kept its source (and place)
    assert not [o for c in out['cells'] for o in c.get('outputs', []) if o.get('name') == 'stderr']   # no warnings, also not hidden
    return out['metadata']['widgets'][bd.WIDGET_STATE]['state']

def test_saved_state_is_the_state_when_displayed(tmp_path):
    state = saved_panels(['import ipywidgets as W, plotly.graph_objects as go',
                          "s = W.IntSlider(value=3); f = go.FigureWidget(layout=dict(title='shown')); f.layout.title = 'shown too'\n"
                          "W.VBox([s, f])",
                          "s.value = 7; f.layout.title = 'changed by a later cell'"], tmp_path)
    sliders = [m['state'] for m in state.values() if m['model_name'] == 'IntSliderModel']
    figs = [m['state'] for m in state.values() if '_widget_layout' in m['state']]
    assert [s['value'] for s in sliders] == [3]
    assert figs[0]['_widget_layout']['title']['text'] == 'shown too'    # changes before the display are kept

def controls(state: dict, mid: str) -> list:
    "(model name, value or index, description) of every widget reachable from `mid`, depth first (Output contents skipped)."
    s = state[mid]['state']; refs = [r[len('IPY_MODEL_'):] for r in s.get('children', [])]
    own = [(s['_model_name'], s.get('value', s.get('index')), s.get('description'))] if 'value' in s or 'index' in s else []
    return own + [c for r in refs if r in state for c in controls(state, r)]

def fresh_controls(w) -> list:
    "The same list for a widget built in this process."
    s = w.get_state()
    own = [(s['_model_name'], s.get('value', s.get('index')), s.get('description'))] if 'value' in s or 'index' in s else []
    return own + [c for ch in getattr(w, 'children', ()) for c in fresh_controls(ch)]

# (notebook, the cell that builds and displays the panel, the panel's name in it)
PANELS = [('52_privacy_fairness', 'mia_panel = MIAAnatomy(toy)', 'mia_panel'), ('52_privacy_fairness', "sub = SubmodelExplorer(", 'sub'),
          ('52_privacy_fairness', 'trade = TradeoffExplorer()', 'trade'), ('52_privacy_fairness', 'fair = FairnessExplorer(', 'fair')]

def test_saved_panels_equal_a_fresh_construction_from_their_cell(tmp_path):
    "The docs build saves each panel as its cell built it, although the test cells below change it."
    src = json.loads((ROOT/'nbs'/'widgets'/'52_privacy_fairness.ipynb').read_text())['cells']
    code = [''.join(c['source']) for c in src if c['cell_type'] == 'code' and 'nbdev_export()' not in ''.join(c['source'])]
    code = [bd.strip_directives(c) for c in code]
    last_test = max(i for i, c in enumerate(code) if any(key in c for _, key, _ in PANELS)) + 1
    code = code[:last_test + 1]                                           # the panels and their test cells, no figures after
    state = saved_panels(code, tmp_path)
    ns = {}
    exec('import numpy as np\nfrom hetfl_explore.widgets.privacy_fairness import *\nfrom hetfl_explore.modelhet.mia import AttackResult', ns)
    boxes = [m for m, v in state.items() if v['model_name'] == 'VBoxModel']
    for _, key, name in PANELS:
        cell = next(c for c in code if key in c)
        body, last = cell.rstrip().rsplit('\n', 1); assert last.strip() == name   # the cell ends by displaying the panel
        exec(body, ns)
        want = fresh_controls(ns[name].box)
        assert want and any(controls(state, b) == want for b in boxes), (name, want)

def test_pager_follows_the_sidebar_and_search_entry_holds_the_prose():
    "Next leads along the reader's path: index, the editor, the explorer, the outcomes, the course, then the chapters; the package's own pages last."
    names = ('index.ipynb', 'architecture.ipynb', 'widgets/50a_explorers.ipynb', 'widgets/50b_stepper.ipynb', 'course.ipynb',
             'widgets/51_outcome.ipynb', 'references.ipynb', 'foundation/01_hetero.ipynb', 'widgets/50_editor.ipynb')
    metas = {Path(p): dict(title=Path(p).stem, description='', path=Path(p).with_suffix('.html')) for p in names}
    order = [str(p) for p in bd.page_order(metas)]
    assert order == ['index.ipynb', 'widgets/50_editor.ipynb', 'widgets/50a_explorers.ipynb', 'widgets/51_outcome.ipynb', 'course.ipynb',
                     'foundation/01_hetero.ipynb', 'widgets/50b_stepper.ipynb', 'architecture.ipynb', 'references.ipynb']
    pager = bd.pager_html(Path('widgets/50a_explorers.ipynb'), metas)
    assert 'href="../widgets/50_editor.html">← 50_editor' in pager and 'href="../widgets/51_outcome.html">→ 51_outcome' in pager
    order = bd.page_order(metas)
    assert bd.pager_html(order[-1], metas).endswith('<span></span></nav>')               # the last page has no next
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell('## Why *select*\nFedDiverse picks [a link](x.ipynb) $k$'),
                                         nbformat.v4.new_code_cell('secret_code = 1')])
    e = bd.search_entry(nb, dict(title='T', description='d', path=Path('a/b.html')))
    assert e['headings'] == ['Why *select*'] and 'FedDiverse picks' in e['text'] and 'secret_code' not in e['text'] and e['path'] == 'a/b.html'

def test_executed_record_matches_only_the_exact_notebook_code_and_flags(tmp_path, monkeypatch):
    "tests/test_notebooks.py skips a notebook only when the docs build ran exactly this notebook on exactly this package."
    nbs = tmp_path/'nbs'; (nbs/'part').mkdir(parents=True); nb = nbs/'part'/'a.ipynb'
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('assert 1 + 1 == 2')]), nb)
    monkeypatch.setattr(bd, 'NBS', nbs); monkeypatch.setattr(bd, 'EXECUTED', tmp_path/'executed.json')
    assert not bd.executed_ok(nb)                                       # no docs build yet
    bd.EXECUTED.write_text(json.dumps({'part/a.ipynb': bd.fingerprint(nb)}))
    assert bd.executed_ok(nb)
    nb.write_text(nb.read_text().replace('1 + 1 == 2', '1 + 1 == 3'))
    assert not bd.executed_ok(nb)                                       # the notebook changed
    bd.EXECUTED.write_text(json.dumps({'part/a.ipynb': bd.fingerprint(nb)}))
    monkeypatch.setattr(bd, 'tst_flags', lambda: {'slow'})
    assert not bd.executed_ok(nb)                                       # other flags skip other cells
    assert bd.fingerprint(nb) != bd.fingerprint(nb, 'another package')  # the package is part of it

def test_sidebar_lists_every_notebook_and_both_configs_agree():
    "Every notebook has a place in the sidebar (and so in the pager), and `_quarto.yml` at the root is the copy of `nbs/_quarto.yml`."
    assert (ROOT/'_quarto.yml').read_text() == (ROOT/'nbs'/'_quarto.yml').read_text(), 'copy nbs/_quarto.yml to the root'
    listed = [str(p) for _, ps in bd.sidebar_entries() for p in ps]
    on_disk = {str(p.relative_to(bd.NBS)) for p in bd.notebooks(bd.NBS)}
    assert sorted(on_disk - set(listed)) == [] and sorted(set(listed) - on_disk) == [] and len(listed) == len(set(listed))

def test_plotly_js_is_loaded_only_by_pages_that_draw_a_figure():
    "plotly.js (0.5-1.2 s of a page load) only where a figure or a panel holding one is drawn."
    assert bd.needs_plotly('<div class="jp-OutputArea"><div id="f1" class="plotly-graph-div" style="height:300px"></div>')
    assert bd.needs_plotly('<script type="application/vnd.jupyter.widget-state+json">{"value": "<div class=\\"hx-plotly\\" data-figure=...'
                           '"}</script>')
    assert not bd.needs_plotly('<p>The metrics of Plotly-free pages: no figure here.</p><pre>import plotly</pre>')

def _figure_nb(types, widget_types=(), raw_html=False):
    "A notebook with one plotly output of `types`, a saved plotly widget of `widget_types` and optionally a figure as raw HTML."
    nb = nbformat.v4.new_notebook()
    fig = {'data': [{'type': t} if t else {'x': [1]} for t in types], 'layout': {'template': {'data': {'parcats': [{}], 'sunburst': [{}]}}}}
    outs = [nbformat.v4.new_output('display_data', {bd.PLOTLY_MIME: fig, 'text/plain': 'Figure'})]
    if raw_html: outs.append(nbformat.v4.new_output('display_data', {'text/html': '<div></div><script>Plotly.newPlot("f", [])</script>'}))
    nb.cells = [nbformat.v4.new_code_cell('fig', outputs=outs)]
    nb.metadata['widgets'] = {bd.WIDGET_STATE: {'state': {'m1': {'model_name': 'AnyModel', 'state': {'_widget_data': [{'type': t} for t in widget_types]}}}}}
    return nb

def test_pages_drawing_only_cartesian_traces_load_the_cartesian_bundle():
    "The 1.5 MB cartesian plotly.js where every trace (outputs and panels; an untyped trace is a scatter) is in it; the full one otherwise."
    assert bd.trace_types(_figure_nb(['scatter', None, 'heatmap'], ['bar'])) == {'scatter', 'heatmap', 'bar'}   # the template's types do not count
    assert bd.plotly_bundle(bd.trace_types(_figure_nb(['scatter', 'heatmap'], ['scatterternary']))) == bd.PLOTLY_CARTESIAN
    assert bd.plotly_bundle(bd.trace_types(_figure_nb(['scatter', 'parcats']))) == bd.PLOTLY_FULL
    assert bd.plotly_bundle(bd.trace_types(_figure_nb(['scatter'], ['sunburst']))) == bd.PLOTLY_FULL
    assert bd.trace_types(_figure_nb(['bar'], raw_html=True)) == {'bar', bd.RAW_FIGURE}
    assert bd.plotly_bundle({'bar', bd.RAW_FIGURE}) == bd.PLOTLY_FULL

def test_cartesian_bundle_is_pinned_at_the_plotly_js_of_the_installed_plotly():
    "The npm pin of the cartesian bundle names the plotly.js version that the installed plotly package ships (its file header)."
    import plotly, re
    head = (Path(plotly.__file__).parent/'package_data'/'plotly.min.js').read_text()[:200]
    assert re.search(r'plotly\.js v(\S+)', head).group(1) == bd.JS_PACKAGES['plotly.js-cartesian-dist-min']

def test_first_cell_prose_is_kept_below_the_header(tmp_path):
    "The paragraphs under a notebook's `# Title` / `> description` stay on the page (nbdev's frontmatter step alone drops them)."
    from execnb.nbio import read_nb
    src = '# Title\n\n> One line.\n\nIn a federation every client holds data.\n\n**Why.** Time: about 50 minutes.'
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(src), nbformat.v4.new_code_cell('x = 1')]), tmp_path/'t.ipynb')
    out = bd.process_nb(read_nb(tmp_path/'t.ipynb'))
    prose = '\n'.join(c.source for c in out.cells if c.cell_type == 'markdown')
    assert 'In a federation every client holds data.' in prose and 'Time: about 50 minutes.' in prose
    assert bd.page_meta(out, Path('t.ipynb'))['title'] == 'Title' and '# Title' not in prose   # the header is still the frontmatter

def test_solution_folds_are_labelled_and_api_links_stay_on_the_site():
    "A lab's folded `# SOLUTION` cell is labelled as a solution; links nbdev points at the published site become relative."
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('#| code-fold: true\n# SOLUTION\nanswer_a = 1'),
                                         nbformat.v4.new_code_cell('#| code-fold: true\nx = 1')])
    tags = [c.metadata.get('tags', []) for c in bd.clean_cells(nb).cells]
    assert bd.SOLUTION_TAG in tags[0] and bd.FOLD in tags[0] and bd.SOLUTION_TAG not in tags[1]
    assert bd.SOLUTION_LABEL == 'Solution (try first!)' and bd.SOLUTION_LABEL in bd.SITE_JS
    page = f'<a href="{bd.site_url()}foundation/hetero.html#x">x</a><a href="https://example.org/">y</a>'
    assert bd.local_links(page, '../') == '<a href="../foundation/hetero.html#x">x</a><a href="https://example.org/">y</a>'

def test_long_inline_styles_are_shared_once(tmp_path, monkeypatch):
    "The lab template's theme (the same long stylesheet on every page) is written once under assets/ and linked."
    monkeypatch.setattr(bd, 'OUT', tmp_path); (tmp_path/'assets').mkdir()
    theme = 'p { color: red; }' * bd.BIG_STYLE
    pages = [bd.share_styles(f'<style>{theme}</style><style>.small {{}}</style>', up) for up in ('assets/', '../assets/')]
    assert [len(list((tmp_path/'assets').glob('lab-*.css')))] == [1] and theme not in ''.join(pages)
    assert '<style>.small {}</style>' in pages[0] and pages[1].startswith('<link rel="stylesheet" href="../assets/lab-')

def test_saved_panels_are_read_only_unless_kernel_free():
    "Every saved panel gets the read-only caption (how to get a kernel), and the page script disables its inputs but skips kernel-free widgets."
    assert 'make lab' in bd.STATIC_BANNER and 'kernel' in bd.STATIC_BANNER
    assert bd.KERNEL_FREE == 'hetfl-kernel-free' and f'.{bd.KERNEL_FREE}' in bd.SITE_JS and 'i.disabled = true' in bd.SITE_JS

def test_readme_leads_with_the_lab_picture_and_two_commands():
    "README: a picture of the lab (a committed file), then the two commands, then which install a reader needs, install internals last."
    import re
    text = (ROOT/'README.md').read_text()
    img = re.search(r'!\[[^\]]+\]\((nbs/[^)]+\.(?:png|jpg))\)', text)
    assert img and (ROOT/img.group(1)).is_file()
    assert text.index(img.group(0)) < text.index('make lab') < text.index('make docs') < text.index('## Which install do you need') \
        < text.index('## Install internals') < text.index('apt-get')

def test_figures_with_frames_open_on_their_first_frame():
    "A kernel-free figure with a frame slider is drawn without autoplay: it does not animate on load and stop on its last frame."
    import plotly.graph_objects as go
    fig = go.Figure(go.Bar(y=[1, 2]), frames=[go.Frame(data=[go.Bar(y=[i, i])], name=str(i)) for i in range(3)])
    out = bd.plotly_html(json.loads(fig.to_json()))
    assert 'Plotly.addFrames' in out and 'Plotly.animate' not in out

def test_widget_icon_fonts_load_from_the_shared_assets():
    "The widget manager's icon fonts are fetched from the one folder the page names, not from a copy beside each page."
    src = 'e.exports=n.p+"1551f4f60c37af51121f.woff2"},9:(e,t,o)=>{e.exports=o.p+"eeccf4f66002c6f2ba24.woff"'
    out = bd.shared_fonts(src)
    assert out.count('(window.__jupyter_widgets_assets_path__||') == 2 and '||o.p)+"eeccf4f66002c6f2ba24.woff"' in out

def test_lab_page_opens_on_its_panel():
    "The selection explorer's page (and 'Run all') shows the editor and the explorer before the code that defines them."
    cells = nbformat.read(ROOT/'nbs/widgets/50a_explorers.ipynb', as_version=4).cells
    code = [c.source for c in cells if c.cell_type == 'code']
    first_export = next(i for i, s in enumerate(code) if s.startswith('#| export'))
    assert any(s.startswith('editor = MatrixEditor(') for s in code[:first_export])
    assert any(s.startswith('explorer = SelectionExplorer(') for s in code[:first_export])

def test_site_check_flags_a_page_over_the_weight_limit(tmp_path):
    write(tmp_path, 'light.html', 'x' * 1000)
    write(tmp_path, 'heavy.html', 'x' * (bd.MAX_PAGE_BYTES + 1))
    write(tmp_path, 'assets/bundle.html', 'x' * (bd.MAX_PAGE_BYTES + 1))   # shared assets are not pages
    assert bd.site_problems(tmp_path) == ['heavy.html: 3.0 MB, over the 3 MB a page may weigh']
    with pytest.raises(SystemExit, match='weigh too much'): bd.check_site(tmp_path)

def test_site_check_flags_a_site_over_its_weight_limit(tmp_path, monkeypatch):
    "Pages and shared assets together count against the site's limit; each file alone may be light."
    for i in range(4): (tmp_path/f'assets/part{i}.js').parent.mkdir(exist_ok=True); (tmp_path/f'assets/part{i}.js').write_text('x' * 1000)
    assert bd.site_bytes(tmp_path) == 4000 and bd.site_problems(tmp_path) == []
    monkeypatch.setattr(bd, 'MAX_SITE_BYTES', 3999)
    assert bd.site_problems(tmp_path) == ['the site: 0.0 MB, over the 0 MB it may weigh']

def test_only_the_katex_files_a_page_loads_are_copied(tmp_path):
    "The minified script, its style sheet, auto-render and woff2 fonts; not the unminified builds, modules or legacy fonts."
    import shutil
    src = tmp_path/'dist'
    for rel in ('katex.min.js', 'katex.js', 'katex.mjs', 'katex.min.css', 'katex.css', 'contrib/auto-render.min.js',
                'contrib/auto-render.js', 'contrib/mhchem.min.js', 'fonts/KaTeX_Main-Regular.woff2', 'fonts/KaTeX_Main-Regular.woff',
                'fonts/KaTeX_Main-Regular.ttf'):
        (src/rel).parent.mkdir(parents=True, exist_ok=True); (src/rel).write_text('x')
    shutil.copytree(src, tmp_path/'out', ignore=bd.unused_katex_files)
    kept = sorted(str(p.relative_to(tmp_path/'out')) for p in (tmp_path/'out').rglob('*') if p.is_file())
    assert kept == ['contrib/auto-render.min.js', 'fonts/KaTeX_Main-Regular.woff2', 'katex.min.css', 'katex.min.js']
    page_head = Path(bd.__file__).read_text()
    assert all(f'katex/{"contrib/" if n.startswith("auto") else ""}{n}' in page_head for n in bd.KATEX_USED)

def _md_nb(*sources):
    "A notebook of markdown cells, written where `check_citations` reads processed notebooks."
    nb = nbformat.v4.new_notebook(); nb.cells = [nbformat.v4.new_markdown_cell(s) for s in sources]
    return nb

def test_citations_render_as_author_year_links_and_an_unknown_key_fails_the_build(tmp_path):
    "[@key] becomes '(Beutel et al., 2020)' linking to the key's entry on the references page; a key missing from references.bib stops the build."
    md = bd.cite('Flower [@beutel2020flower] and Ray [@moritz2018ray; @nemeth2025thesis].', '../references.ipynb')
    assert '[Beutel et al., 2020](../references.ipynb#ref-beutel2020flower "Flower: A Friendly' in md and '[@' not in md
    assert '; [Németh, 2025](../references.ipynb#ref-nemeth2025thesis' in md and '([Moritz et al., 2018]' in md
    assert bd.cite_label({'author': 'Hardt, M. and Price, E.', 'year': '2016'}) == 'Hardt and Price, 2016'
    loc = bd.cite('FedAvg [@mcmahan2017fedavg, Algorithm 1].', 'references.ipynb')
    assert loc.startswith('FedAvg ([McMahan et al., 2017](references.ipynb#ref-mcmahan2017fedavg') and loc.endswith('), Algorithm 1).')
    assert bd.unresolved_citations('[@nobody, p. 3] [@cho2022powd]') == ['nobody']
    write(tmp_path, 'raw.html', '<h1>T</h1><p>FedAvg [@mcmahan2017fedavg, Algorithm 1]</p>')
    assert bd.site_problems(tmp_path) == ["raw.html: 1 citation(s) shown as text: ['[@mcmahan2017fedavg']"]
    assert bd.latex_text("N{\\'e}meth and Fan{\\`i} and K{\\\"a}rkk{\\\"a}inen") == 'Németh and Fanì and Kärkkäinen'
    refs = bd.anchor_references('- D. J. Beutel et al. (2020). *Flower*. [`beutel2020flower`]; not a key: `flwr`')
    assert '<code id="ref-beutel2020flower">beutel2020flower</code>' in refs and '`flwr`' in refs
    ok, bad = tmp_path/'ok.ipynb', tmp_path/'bad.ipynb'
    nbformat.write(_md_nb('Flower [@beutel2020flower].'), ok)
    nbformat.write(_md_nb('Fine.', 'Flower [@beutel2020flowr] and [@cho2022powd; @nobody1999].'), bad)
    bd.check_citations({Path('ok.ipynb'): ok})
    with pytest.raises(SystemExit, match=r'bad.ipynb: \[@beutel2020flowr\]\n  bad.ipynb: \[@nobody1999\]'):
        bd.check_citations({Path('ok.ipynb'): ok, Path('bad.ipynb'): bad})

def test_every_citation_in_the_notebooks_resolves():
    "Each [@key] of every notebook is an entry of references.bib (the build would stop on it)."
    import glob
    bad = [f'{p}: {k}' for p in sorted(glob.glob(str(ROOT/'nbs'/'**'/'*.ipynb'), recursive=True))
           for c in nbformat.read(p, as_version=4).cells if c.cell_type == 'markdown' for k in bd.unresolved_citations(c.source)]
    assert bad == []

def test_a_panel_page_opens_on_its_panel_before_its_api_reference():
    "On a page of the panels' part the cell showing the first panel moves up to follow the introduction; other pages keep their order."
    view = nbformat.v4.new_output('display_data', {bd.WIDGET_VIEW: {'model_id': 'abc', 'version_major': 2, 'version_minor': 0}, 'text/plain': 'Panel'})
    def nb():
        n = nbformat.v4.new_notebook()
        n.cells = [nbformat.v4.new_markdown_cell('Intro.'), nbformat.v4.new_code_cell('#| export\ndef f(): pass'),
                   nbformat.v4.new_markdown_cell('### f'), nbformat.v4.new_code_cell('panel', outputs=[view]),
                   nbformat.v4.new_code_cell('second', outputs=[view])]
        return n
    moved = [c.source for c in bd.panel_first(nb(), Path('widgets/50_editor.ipynb')).cells]
    assert moved == ['Intro.', 'panel', '#| export\ndef f(): pass', '### f', 'second']
    assert [c.source for c in bd.panel_first(nb(), Path('foundation/01_hetero.ipynb')).cells][1] == '#| export\ndef f(): pass'

def test_search_indexes_every_exported_name_with_its_signature_and_docments():
    "The search index holds an entry per exported name: its definition's anchor, its signature, its docstring and its parameters' docments."
    entries = {e['title']: e for e in bd.api_entries({'foundation/hetero.html', 'feddiverse/simulation.html', 'feddiverse/own_data.html'})}
    import hetfl_explore.foundation.hetero as H
    assert set(H.__all__) - {n for n in H.__all__ if n.isupper()} <= set(entries)
    e = entries['client_types']
    assert e['path'] == 'foundation/hetero.html#client_types' and e['kind'] == 'api'
    assert e['description'] == "client_types(triplets, tie: str = 'join', atol: float = 1e-09) -> np.ndarray"
    assert e['text'].startswith('Type each client by the argmax') and "tie: 'first' (argmax order CI, AI, SC)" in e['text']
    assert entries['simulate_selection']['path'] == 'feddiverse/simulation.html#simulate_selection'
    assert 'fl_metrics' not in {e['title'] for e in bd.api_entries({'feddiverse/simulation.html'})}   # pages not built: left out

def test_the_readme_own_data_snippet_runs_in_a_fresh_python(tmp_path):
    "README's 'Your own data': at most ten lines, top-level imports only, and it runs, printing the six metrics, the types and both selections."
    import re, subprocess, os
    text = (ROOT/'README.md').read_text()
    code = re.search(r'## Your own data\n.*?```python\n(.*?)```', text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10 and 'from hetfl_explore import' in code and 'hetfl_explore.' not in code
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    run = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    assert all(f"'{m}'" in out for m in ('GCI', 'GAI', 'GSC', 'CCI', 'CAI', 'CSC')) and "'SC' 'SC' 'SC' 'SC' 'CI'" in out
    assert out.count("'SC':") == 2 and 'uniform' in out and 'feddiverse' in out
