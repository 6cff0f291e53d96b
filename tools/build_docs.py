#!/usr/bin/env python
"""Render the documentation site into `_docs/`.

With Quarto installed this is `nbdev_docs`. Without it (Quarto has no wheel, so pip cannot install it) a Quarto-free
fallback renders the same site:

1. copy `nbs/` to `_docs_exec/` and execute every notebook there with nbclient, saving widget state; cells flagged
   with a `tst_flags` flag (`slow`, `cuda`), `eval: false` or the `nbdev_export()` call are not executed
   (nbdev's `show_doc` cells are inserted first, so they run in the notebook's own kernel);
2. run nbdev's other notebook processors (hide, export removal, show_doc clean-up, links) into `_proc/`;
3. render each processed notebook to HTML with nbconvert, honour the Quarto cell options `echo`, `output`,
   `include` and `code-fold`, draw plotly figures (also those inside widget panels) with the plotly.js of the
   installed plotly package (its cartesian bundle, a third of the size, on pages that draw only its trace types),
   add a sidebar built from the `website.sidebar` section of `_quarto.yml`, and serve every script locally
   (require.js, the Jupyter widget manager, KaTeX and plotly.js's cartesian bundle from npm, pinned below), so the
   site works offline.

Usage: `python tools/build_docs.py [--fallback] [--jobs N] [--only GLOB]`; `--readme` regenerates README.md only.
"""
from __future__ import annotations
import argparse, base64, concurrent.futures as cf, copy, fnmatch, functools, glob, html, json, os, re, shutil, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent)); import kernel_zygote   # kernels with torch & co. preloaded

ROOT = Path(__file__).resolve().parents[1]
NBS, OUT, EXEC, PROC = ROOT/'nbs', ROOT/'_docs', ROOT/'_docs_exec', ROOT/'_proc'
# which notebooks this build executed without error, with the fingerprint of what they ran: `make test` builds the docs
# first, and tests/test_notebooks.py then passes a notebook whose fingerprint is recorded instead of running it again
EXECUTED = EXEC/'executed.json'
FINGERPRINTED = ('hetfl_explore', 'data', 'settings.ini')   # what a notebook's run depends on besides its own text
JS_CACHE = ROOT/'.cache'/'docs-js'
# plotly.js's cartesian bundle is pinned at the plotly.js version the pinned plotly package ships (tests check they agree)
JS_PACKAGES = {'@jupyter-widgets/html-manager': '1.0.15', 'requirejs': '2.3.8', 'katex': '0.16.47', 'plotly.js-cartesian-dist-min': '4.1.1'}
PLOTLY_MIME = 'application/vnd.plotly.v1+json'
PLOTLY_FULL, PLOTLY_CARTESIAN = 'plotly.min.js', 'plotly-cartesian.min.js'   # 4.8 MB and 1.5 MB, in `_docs/assets`
# the trace types of the cartesian bundle (its README): a page drawing only these loads it instead of the full plotly.js
CARTESIAN_TRACES = frozenset({'bar', 'box', 'contour', 'heatmap', 'histogram', 'histogram2d', 'histogram2dcontour', 'image',
                              'pie', 'scatter', 'scatterternary', 'violin'})
RAW_FIGURE = '?'   # the trace type of a figure found only as HTML: unknown, so the full bundle is loaded
SKIP_TAG, HIDE_INPUT, DOCS_ONLY, FOLD, FOLD_OPEN = 'skip-execution', 'hx-hide-input', 'hx-docs-only', 'hx-fold', 'hx-fold-open'
WIDGET_STATE, WIDGET_VIEW = 'application/vnd.jupyter.widget-state+json', 'application/vnd.jupyter.widget-view+json'
# above every saved panel; the site's script removes it from a panel whose widget computes in the browser (an element of
# class `KERNEL_FREE`) and makes every other panel read-only (its inputs disabled)
STATIC_BANNER = ('<div class="hx-static-banner"><strong>Read-only snapshot.</strong> This panel needs a running Python kernel: '
                 'open the notebook in JupyterLab (<code>make lab</code>, or <code>pip install "hetfl_explore[lab]"</code> '
                 'then <code>jupyter lab</code>) to change it.</div>')
KERNEL_FREE = 'hetfl-kernel-free'
SOLUTION_MARK, SOLUTION_TAG, SOLUTION_LABEL = '# SOLUTION', 'hx-solution', 'Solution (try first!)'   # a lab's answer cell (tools/student.py)
BIG_STYLE = 10_000   # characters: an inline <style> this long (the lab template's theme) moves to one shared stylesheet
# what no page may hold: a stderr output block (a warning or log line leaked from a cell), or an absolute path of the
# machine that built it (a traceback or warning location)
STDERR_OUTPUTS = ('data-mime-type="application/vnd.jupyter.stderr"', 'class="cell-output cell-output-stderr"')   # nbconvert, Quarto
PATH_TAIL = r'(?:/[\w.+-]+)*'
ABSOLUTE_PATH = re.compile(r'(?<![\w.:/~-])/(?:home|work|tmp|root|Users|usr|opt|var|srv|mnt|private)/[\w.+-]+(?:/[\w.+-]+)+')
CALLOUT = re.compile(r'^:::\s*\{\.callout-(note|warning|tip|important|caution)[^}]*\}[ \t]*\n(.*?)^:::[ \t]*$', re.M | re.S)   # Quarto's callout block
RAW_FENCE = re.compile(r'(?:^|>):::', re.M)   # a Quarto fenced div left as text on a rendered page
# Plotly FigureWidgets update their front end with delta messages, so the widget state nbclient saves holds the figure
# as first displayed; this last cell re-sends every live figure whole (as plotly does on display) before saving.
SYNC_FIGURES = '''import sys
if 'plotly.graph_objects' in sys.modules:
    import copy, plotly.graph_objects as _go
    from ipywidgets.widgets import widget as _widget   # the registry of live widgets (a gc scan of every object took 5-15 s)
    _ws = [o for o in list(_widget._instances.values()) if isinstance(o, _go.FigureWidget)]
    for _w in _ws:
        _w._widget_layout, _w._widget_data = copy.deepcopy(_w._layout_obj._props), copy.deepcopy(_w._data)
    del _ws'''

def tst_flags() -> set[str]:
    "The notebook test flags from `settings.ini` (cells carrying one are not executed)."
    from configparser import ConfigParser
    cp = ConfigParser(delimiters=['=']); cp.read(ROOT/'settings.ini')
    return set(cp['DEFAULT'].get('tst_flags', '').replace('|', ' ').split())

def directives(source: str) -> dict[str, str]:
    "Leading `#| key: value` (or `#| flag`) lines of a cell, as a dict."
    out = {}
    for line in source.splitlines():
        m = re.match(r'\s*#\|\s*([\w-]+)\s*:?\s*(.*)$', line)
        if not m: break
        out[m.group(1)] = m.group(2).strip()
    return out

def strip_directives(source: str) -> str:
    "The cell source without its leading `#|` lines."
    lines = source.splitlines()
    while lines and re.match(r'\s*#\|', lines[0]): lines.pop(0)
    return '\n'.join(lines)

# ---------------------------------------------------------------- 1. execute
def notebooks(root: Path, only: list[str] | None = None) -> list[Path]:
    "Notebooks under `root` (no checkpoints or hidden folders), optionally filtered by globs."
    nbs = sorted(p for p in root.rglob('*.ipynb') if not any(part.startswith(('.', '_')) for part in p.relative_to(root).parts))
    return [p for p in nbs if not only or any(fnmatch.fnmatch(str(p.relative_to(root)), o) for o in only)]

def add_show_doc_cells(path: Path) -> None:
    "Insert nbdev's `show_doc` cells after exported cells, so they run in the notebook's own kernel."
    from execnb.nbio import read_nb, write_nb, mk_cell
    from nbdev.process import NBProcessor
    from nbdev.processors import populate_language, add_show_docs
    nb = read_nb(path)
    NBProcessor(nb=nb, procs=[populate_language, add_show_docs], rm_directives=False).process()
    if getattr(nb, 'has_docs_', None): nb.cells.insert(0, mk_cell('#| hide\nfrom nbdev.showdoc import show_doc'))
    write_nb(nb, path)

def widget_closure(state: dict, roots) -> set[str]:
    "The model ids reachable from `roots` in a widget state: children, layouts, styles and widgets shown in Output widgets."
    seen, todo = set(), list(roots)
    while todo:
        mid = todo.pop()
        if mid in seen or mid not in state: continue
        seen.add(mid); text = json.dumps(state[mid], default=str)
        todo += re.findall(r'IPY_MODEL_([0-9a-f]+)', text) + re.findall(r'"model_id": "([0-9a-f]+)"', text)
    return seen

def snapshot_client():
    "`NotebookClient` that saves each displayed panel as it stood right after the cell that displayed it."
    from nbclient import NotebookClient
    import nbformat

    class SnapshotClient(NotebookClient):
        """Test cells below a panel change it (they set sliders, run the panel), and the widget state saved at the end
        would show those changes under the code that built the panel. After each cell that displays widgets this
        client re-sends every live plotly figure whole (`SYNC_FIGURES`) and copies the state of the displayed widgets
        and everything they hold; the copies replace the final state when it is saved (a later display of the same
        widget wins, as it shows the later state)."""
        async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            roots = [o['data'][WIDGET_VIEW]['model_id'] for o in cell.get('outputs', []) if WIDGET_VIEW in o.get('data', {})]
            if roots and self.store_widget_state:
                await super().async_execute_cell(nbformat.v4.new_code_cell(SYNC_FIGURES), cell_index, store_history=False)
                self.nb.cells[cell_index] = cell   # nbclient stores the cell it ran at `cell_index`: put the real one back
                self.snapshots = getattr(self, 'snapshots', []) + [{m: copy.deepcopy((self.widget_state[m], self.widget_buffers.get(m)))
                                                                     for m in widget_closure(self.widget_state, roots)}]
            return cell

        def set_widgets_metadata(self):
            for snap in getattr(self, 'snapshots', []):
                for mid, (state, buffers) in snap.items():
                    self.widget_state[mid] = state
                    if buffers is not None: self.widget_buffers[mid] = buffers
            super().set_widgets_metadata()
    return SnapshotClient

def execute(path: Path) -> tuple[str, float, str | None]:
    "Execute one notebook in place with nbclient, storing widget state; returns (name, seconds, error)."
    import nbformat, tempfile
    from jupyter_client.manager import KernelManager
    t0, flags = time.time(), tst_flags()
    add_show_doc_cells(path)
    nb = read_processed(path)
    for cell in nb.cells:
        if cell.cell_type != 'code': continue
        d = directives(cell.source)
        if flags & d.keys() or d.get('eval', '').lower() == 'false' or 'nbdev_export(' in cell.source:
            cell.metadata.setdefault('tags', []).append(SKIP_TAG)
    nb.cells.append(nbformat.v4.new_code_cell(SYNC_FIGURES, metadata={'tags': [DOCS_ONLY]}))
    # kernels talk over IPC sockets in a folder of their own: kernels started side by side over TCP can race for the
    # same ports and hang
    sockets = tempfile.mkdtemp(prefix='hetfl-kernel-')
    manager = kernel_zygote.manager_class() if os.environ.get('HETFL_KERNEL_ZYGOTE') else KernelManager
    km = manager(kernel_name='python3', transport='ipc', ip=os.path.join(sockets, 'kernel'))
    client = snapshot_client()(nb, km=km, timeout=900, store_widget_state=True,
                            skip_cells_with_tag=SKIP_TAG, resources={'metadata': {'path': str(path.parent)}})
    try: client.execute()
    except Exception as e:
        return path.name, time.time() - t0, re.sub(r'\x1b\[[0-9;]*m', '', f"{type(e).__name__}: {e}")[-3000:]
    finally:
        if km.has_kernel: km.shutdown_kernel(now=True)
        shutil.rmtree(sockets, ignore_errors=True)
    for cell in nb.cells:
        if SKIP_TAG in cell.metadata.get('tags', []): cell.metadata['tags'].remove(SKIP_TAG)
    path.write_text(json.dumps(nb, indent=1))
    return path.name, time.time() - t0, None

def tree_fingerprint() -> str:
    "SHA-256 of what every notebook's run depends on besides its own text: the package, the data and the test flags."
    import hashlib
    h = hashlib.sha256(' '.join(sorted(tst_flags())).encode())
    files = [ROOT/f for f in FINGERPRINTED if (ROOT/f).is_file()] + [q for f in FINGERPRINTED for q in sorted((ROOT/f).rglob('*'))
             if q.is_file() and '__pycache__' not in q.parts]
    for q in files: h.update(str(q.relative_to(ROOT)).encode()); h.update(q.read_bytes())
    return h.hexdigest()

def fingerprint(nb: Path, # a notebook under nbs/
                tree: str | None = None, # `tree_fingerprint()`, when already computed
               ) -> str:
    "SHA-256 of a notebook and `tree_fingerprint()`: equal fingerprints run the same cells on the same code and data."
    import hashlib
    return hashlib.sha256(nb.read_bytes() + (tree or tree_fingerprint()).encode()).hexdigest()

def executed_ok(nb: Path) -> bool:
    "Whether the last docs build executed this notebook of nbs/ without error, on exactly the current code, data and flags."
    if not EXECUTED.exists(): return False
    return json.loads(EXECUTED.read_text()).get(str(nb.resolve().relative_to(NBS))) == fingerprint(nb)

def start_zygote():
    "Start a kernel zygote (tools/kernel_zygote.py) and name it in $HETFL_KERNEL_ZYGOTE; None (plain kernels) if it fails."
    import tempfile
    path = os.path.join(tempfile.mkdtemp(prefix='hetfl-zygote-'), 'zygote')
    try: p = kernel_zygote.start(path, env=dict(os.environ))
    except (RuntimeError, OSError) as e:
        print(f'  ({e}; notebooks run in plain kernels)', flush=True); return None
    os.environ['HETFL_KERNEL_ZYGOTE'] = p.socket_path = path
    return p

def stop_zygote(p) -> None:
    "Stop the zygote started by `start_zygote` (None: nothing to stop) and remove its socket."
    os.environ.pop('HETFL_KERNEL_ZYGOTE', None)
    if p is None: return
    p.terminate(); p.wait()
    shutil.rmtree(os.path.dirname(p.socket_path), ignore_errors=True)

def execute_all(only: list[str] | None, jobs: int,
                zygote: bool = True, # start kernels from a zygote with torch & co. imported (tools/kernel_zygote.py)
               ) -> None:
    "Copy `nbs/` to `_docs_exec/` and execute the notebooks there in parallel."
    if EXEC.exists(): shutil.rmtree(EXEC)
    shutil.copytree(NBS, EXEC, symlinks=False, ignore=shutil.ignore_patterns('.ipynb_checkpoints'))
    keep = set(notebooks(EXEC, only))
    for p in notebooks(EXEC):
        if p not in keep: p.unlink()
    failed, threads, tree = [], os.environ.get('OMP_NUM_THREADS'), tree_fingerprint()
    prints = {str(rel): fingerprint(NBS/rel, tree) for rel in (p.relative_to(EXEC) for p in notebooks(EXEC, only))}   # before running
    os.environ['OMP_NUM_THREADS'] = '1'   # kernels run side by side: one thread each
    zygote = start_zygote() if zygote else None
    try:
        with cf.ProcessPoolExecutor(jobs) as ex:
            for name, secs, err in ex.map(execute, notebooks(EXEC, only)):
                print(f"  executed {name:<45} {secs:6.1f} s" + ('  FAILED' if err else ''), flush=True)
                if err: failed.append((name, err))
    finally:
        stop_zygote(zygote)
        if threads is None: os.environ.pop('OMP_NUM_THREADS')
        else: os.environ['OMP_NUM_THREADS'] = threads
    if failed:
        for name, err in failed: print(f"\n--- {name}\n{err}", file=sys.stderr)
        raise SystemExit(f"docs: {len(failed)} notebook(s) failed to execute: {', '.join(n for n, _ in failed)}")
    EXECUTED.write_text(json.dumps(prints, indent=1))

# ---------------------------------------------------------------- 2. nbdev processors
FRONTMATTER_HEAD = re.compile(r'\A\s*#\s[^\n]*\n(?:\s*\n)*(?:>[^\n]*\n?)*')   # `# Title` and the `> description` lines

def process_nb(nb):
    "A notebook (execnb's) through nbdev's doc processors but the two show_doc steps, its introduction kept as prose."
    from nbdev.process import NBProcessor
    from nbdev.processors import FilterDefaults
    split_intro(nb)
    NBProcessor(nb=nb, procs=[p for p in FilterDefaults().procs() if p.__name__ not in ('add_show_docs', 'exec_show_docs')]).process()
    return nb

def split_intro(nb) -> None:
    """Move the prose under a notebook's `# Title` / `> description` into a markdown cell of its own: nbdev's frontmatter
    processor turns the whole first cell into the page's header and would drop that introduction."""
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == 'markdown'), None)
    if first is None or not (m := FRONTMATTER_HEAD.match(nb.cells[first].source)): return
    head, rest = nb.cells[first].source[:m.end()], nb.cells[first].source[m.end():]
    if not rest.strip(): return
    from execnb.nbio import mk_cell
    nb.cells[first].source = head.rstrip('\n')
    nb.cells.insert(first + 1, mk_cell(rest.strip('\n'), cell_type='markdown'))

def process_all() -> None:
    "Run nbdev's doc processors (all but the two show_doc steps, done before execution) into `_proc/`."
    from execnb.nbio import read_nb, write_nb
    from nbdev.doclinks import _build_modidx
    _build_modidx()
    if PROC.exists(): shutil.rmtree(PROC)
    for src in notebooks(EXEC):
        nb = process_nb(read_nb(src))
        dst = PROC/src.relative_to(EXEC); dst.parent.mkdir(parents=True, exist_ok=True)
        write_nb(nb, dst)

# ---------------------------------------------------------------- 3. render
def sidebar_entries() -> list[tuple[str | None, list[Path]]]:
    "The sidebar of `_quarto.yml` as (section title or None, notebook paths relative to `nbs/`)."
    import yaml
    cfg = yaml.safe_load((ROOT/'_quarto.yml').read_text())
    out, seen = [], set()
    def expand(pattern):   # a page listed earlier (the reader's path names a few panels first) keeps its first place
        found = [q for q in sorted(Path(p).relative_to(NBS) for p in glob.glob(str(NBS/pattern))) if q not in seen]
        seen.update(found)
        return found
    for item in cfg['website']['sidebar']['contents']:
        if isinstance(item, str): out.append((None, expand(item)))
        else:
            pats = item['contents'] if isinstance(item['contents'], list) else [item['contents']]
            out.append((item['section'], [p for pat in pats for p in expand(pat)]))
    return out

def page_meta(nb, rel: Path) -> dict:
    "Title, description and output path of a page, from the frontmatter nbdev writes (`# Title` + `> description`)."
    import yaml
    meta = {}
    for cell in nb.cells[:3]:
        if cell.cell_type == 'raw' and cell.source.startswith('---'):
            meta = yaml.safe_load(cell.source.strip().strip('-')) or {}
            break
    out = rel.parent/meta.get('output-file', rel.with_suffix('.html').name)
    return {'title': str(meta.get('title', rel.stem)), 'description': str(meta.get('description', '')), 'path': out}

def plotly_html(fig_json: dict) -> str:
    "An HTML div that draws a plotly figure with the page's (local) plotly.js."
    import plotly.io as pio
    fig = pio.from_json(json.dumps(fig_json), skip_invalid=True)
    # auto_play=False: a figure with frames opens on its first frame instead of playing through them on load
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, config={'responsive': True}, auto_play=False)

def read_processed(path: Path):
    "Read a processed notebook, dropping nbdev-private cell keys and the float `execution` metadata nbformat rejects."
    import nbformat
    raw = json.loads(path.read_text())
    for cell in raw['cells']:
        for k in [k for k in cell if k.endswith('_')]: cell.pop(k)
        cell.get('metadata', {}).pop('execution', None)
    return nbformat.reads(json.dumps(raw), as_version=4)

def clean_cells(nb, link=lambda target: target[:-len('.ipynb')] + '.html'):
    "Apply Quarto cell options, draw plotly outputs as HTML, merge split streams and rewrite links to notebooks with `link`."
    cells = []
    for cell in nb.cells:
        src = cell.source
        if cell.cell_type == 'raw' and src.startswith('---'): continue   # frontmatter: rendered as the header
        if DOCS_ONLY in cell.metadata.get('tags', []): continue
        if cell.cell_type == 'code':
            d = directives(src)
            if d.get('include', '').lower() == 'false': continue
            cell.source = strip_directives(src)
            if d.get('echo', '').lower() == 'false': cell.metadata.setdefault('tags', []).append(HIDE_INPUT)
            fold = d.get('code-fold', '').lower()
            if cell.source.lstrip().startswith(SOLUTION_MARK): cell.metadata.setdefault('tags', []).append(SOLUTION_TAG)
            if fold in ('true', 'show'): cell.metadata.setdefault('tags', []).append(FOLD_OPEN if fold == 'show' else FOLD)
            if d.get('output', '').lower() == 'false': cell.outputs = []
            for out in cell.get('outputs', []):
                data = out.get('data', {})
                if 'text/markdown' in data:   # show_doc's Quarto link attributes mean nothing to nbconvert
                    data['text/markdown'] = re.sub(r'\{target="_blank"[^}]*\}', '', data['text/markdown'])
                if PLOTLY_MIME in data:
                    data['text/html'] = plotly_html(data.pop(PLOTLY_MIME))
                    data.pop('text/plain', None)
            merged = []
            for out in cell.get('outputs', []):
                if merged and out.output_type == 'stream' and merged[-1].output_type == 'stream' and merged[-1].name == out.name:
                    merged[-1].text += out.text
                else: merged.append(out)
            if 'outputs' in cell: cell.outputs = merged
            if not cell.source.strip() and not cell.get('outputs'): continue
            if not cell.source.strip(): cell.metadata.setdefault('tags', []).append(HIDE_INPUT)
        if cell.cell_type == 'markdown':
            src = callouts(src)
            cell.source = re.sub(r'\(([^()\s:]+?\.ipynb)(#[^)]*)?\)', lambda m: f'({link(m.group(1))}{m.group(2) or ""})', src)
        cells.append(cell)
    nb.cells = cells
    return nb

# ---------------------------------------------------------------- citations
BIB = NBS/'references.bib'
CITE_ONE = r'@([\w:.-]+)(?:,\s*([^\];@]*[^\];@\s]))?'   # a key and its locator: '@key' or '@key, Algorithm 1'
CITE_ITEM = r'@[\w:.-]+(?:,\s*[^\];@]*[^\];@\s])?'   # the same, without groups
CITATION = re.compile(rf'\[({CITE_ITEM}(?:\s*;\s*{CITE_ITEM})*)\]')   # pandoc's [@key], [@key, locator], [@a; @b, locator]
RAW_CITATION = re.compile(r'\[@[\w:.-]+')   # a citation left as text on a rendered page
ACCENTS = {"'": '\u0301', '`': '\u0300', '"': '\u0308', '~': '\u0303', '^': '\u0302', 'v': '\u030c', 'c': '\u0327', '=': '\u0304'}
REFERENCES_PAGE = 'references.ipynb'

def latex_text(value: str) -> str:
    "A BibTeX field as plain text: accents such as {\\'e} become é, grouping braces go."
    import unicodedata
    value = re.sub(r"\{?\\([`'\"~^=vc])\s*\{?([A-Za-z])\}?\}?", lambda m: m.group(2) + ACCENTS[m.group(1)], value)
    return unicodedata.normalize('NFC', re.sub(r'\s+', ' ', value.replace('{', '').replace('}', ''))).strip()

def bib_entries(text: str) -> dict[str, dict[str, str]]:
    "The entries of a BibTeX file as {key: {field: plain text}} (nested braces and quoted values read whole)."
    out = {}
    for m in re.finditer(r'@(\w+)\s*\{\s*([^,\s]+)\s*,', text):
        i, depth, fields = m.end(), 1, {}
        body_start = i
        while i < len(text) and depth:                     # the entry ends where its opening brace closes
            depth += {'{': 1, '}': -1}.get(text[i], 0); i += 1
        body = text[body_start:i - 1]
        for f in re.finditer(r'(\w+)\s*=\s*', body):
            j, v = f.end(), ''
            if j < len(body) and body[j] == '{':
                d, k = 0, j
                while k < len(body):
                    d += {'{': 1, '}': -1}.get(body[k], 0); k += 1
                    if not d: break
                v = body[j + 1:k - 1]
            else: v = re.match(r'"?([^",]*)', body[j:]).group(1)
            fields.setdefault(f.group(1).lower(), latex_text(v))
        out[m.group(2)] = fields
    return out

@functools.lru_cache(maxsize=None)
def references() -> dict[str, dict[str, str]]:
    "The entries of `nbs/references.bib`, read once per process."
    return bib_entries(BIB.read_text(encoding='utf-8'))

def cite_label(entry: dict[str, str]) -> str:
    "A citation as the references page gives it: 'Beutel et al., 2020' (one or two family names, else the first and 'et al.')."
    names = [a.split(',')[0].strip() if ',' in a else a.split()[-1] for a in entry.get('author', entry.get('title', '?')).split(' and ')]
    who = names[0] if len(names) == 1 else ' and '.join(names) if len(names) == 2 else f'{names[0]} et al.'
    return f"{who}, {entry.get('year', 'n.d.')}"

def unresolved_citations(md: str) -> list[str]:
    "The keys cited in markdown `md` (as [@key]) that `nbs/references.bib` does not hold."
    return [k for m in CITATION.finditer(md) for k, _ in re.findall(CITE_ONE, m.group(1)) if k not in references()]

def cite(md: str, refs: str) -> str:
    "Markdown with each [@key; ...] as '(Author et al., year)' linking to the key's entry on the references page `refs` (a notebook path)."
    def one(key, where):
        e = references()[key]
        title = html.escape(re.sub(r'[()]', '', e.get('title', '')), quote=True)   # a parenthesis would end the link
        return f'[{cite_label(e)}]({refs}#ref-{key} "{title}")' + (f', {where}' if where else '')
    return CITATION.sub(lambda m: '(' + '; '.join(one(k, w) for k, w in re.findall(CITE_ONE, m.group(1))) + ')', md)

def anchor_references(md: str) -> str:
    "The references page's markdown with each `key` of the bibliography made the target `#ref-key` of the citations."
    return re.sub(r'`([\w:.-]+)`', lambda m: f'<code id="ref-{m.group(1)}">{m.group(1)}</code>' if m.group(1) in references() else m.group(0), md)

def check_citations(nbs: dict[Path, Path]) -> None:
    "Fail the build when a page cites a key that `nbs/references.bib` lacks (it would print as raw text)."
    bad = [f'{rel}: [@{k}]' for rel, src in sorted(nbs.items()) for c in read_processed(src).cells if c.cell_type == 'markdown'
           for k in unresolved_citations(c.source)]
    if bad: raise SystemExit('docs: citations of keys missing from nbs/references.bib (add the entry or fix the key):\n  ' + '\n  '.join(bad))

def cite_cells(nb, rel: Path):
    "Resolve the citations of a page's markdown cells (links relative to the page), and anchor the references page's keys."
    refs = os.path.relpath(REFERENCES_PAGE, rel.parent or '.')
    for c in nb.cells:
        if c.cell_type != 'markdown': continue
        c.source = cite(c.source, refs)
        if rel == Path(REFERENCES_PAGE): c.source = anchor_references(c.source)
    return nb

# the parts whose pages are panels: each opens on its first saved panel, its API reference below it
PANEL_PARTS = ('widgets',)

def shows_widget(cell) -> bool:
    "Whether a code cell's outputs display a widget (a saved panel)."
    return cell.cell_type == 'code' and any(WIDGET_VIEW in o.get('data', {}) for o in cell.get('outputs', []))

def panel_first(nb, rel: Path):
    """A panel page (under `PANEL_PARTS`) with the cell that shows its first panel moved up to follow the introduction
    (the prose before the first code cell): the reader meets the panel before the API reference of the code behind it.
    The notebook itself keeps its order (its code must define the panel before showing it)."""
    if rel.parts[0] not in PANEL_PARTS: return nb
    panel = next((i for i, c in enumerate(nb.cells) if shows_widget(c)), None)
    intro = next((i for i, c in enumerate(nb.cells) if c.cell_type == 'code'), len(nb.cells))
    if panel is None or panel <= intro: return nb
    nb.cells.insert(intro, nb.cells.pop(panel))
    return nb

def inline_code(text: str) -> str:
    "Plain text as HTML with its `backticked` spans as code (page descriptions are one line of markdown)."
    return re.sub(r'`([^`]+)`', r'<code>\1</code>', html.escape(text))

def callouts(md: str) -> str:
    "Quarto callout blocks (`::: {.callout-note}` ... `:::`, an optional heading as title) as HTML boxes around their markdown."
    def box(m):
        kind, inner = m.group(1), m.group(2).strip('\n')
        title, head = kind.capitalize(), re.match(r'#+[ \t]+(.*)\n', inner)
        if head: title, inner = head.group(1).strip(), inner[head.end():]
        return f'\n\n<div class="callout callout-{kind}"><p class="callout-title">{html.escape(title)}</p>\n\n{inner}\n\n</div>\n'
    return CALLOUT.sub(box, md)

def _set_path(obj, path, value):
    "Put a decoded binary buffer back at its place in a widget's state (skipping places that no longer exist)."
    for k in path[:-1]:
        if not isinstance(obj, (dict, list)): return
        obj = obj[k]
    if isinstance(obj, (dict, list)): obj[path[-1]] = value

def _plain(v):
    "Widget-serialised figure data as plain JSON: plotly's binary arrays `{buffer, dtype, shape}` become lists."
    import numpy as np
    if isinstance(v, dict):
        if isinstance(v.get('buffer'), (bytes, bytearray)) and 'dtype' in v:
            return np.frombuffer(v['buffer'], dtype=v['dtype']).reshape(v.get('shape') or -1).tolist()
        return {k: _plain(x) for k, x in v.items()}
    return [_plain(x) for x in v] if isinstance(v, list) else v

def _drop_dangling(state: dict) -> None:
    "Remove references to widgets that were closed before the state was saved (a static page cannot resolve them)."
    def ok(v): return not (isinstance(v, str) and v.startswith('IPY_MODEL_') and v[len('IPY_MODEL_'):] not in state)
    for m in state.values():
        s = m['state']
        for k, v in list(s.items()):
            if isinstance(v, list) and any(isinstance(x, str) and x.startswith('IPY_MODEL_') for x in v): s[k] = [x for x in v if ok(x)]
            elif not ok(v): del s[k]

def is_figure_widget(model: dict) -> bool:
    "Whether a saved widget model is a plotly FigureWidget: an anywidget holding the figure's `_widget_data`."
    return model.get('model_name') == 'AnyModel' and '_widget_data' in model.get('state', {})

def static_figures(nb):
    """Make the saved widget state renderable offline: drop references to closed widgets, and replace plotly
    FigureWidget models (anywidget, which a static page cannot load, each carrying 5 MB of plotly.js) by HTML widgets
    holding the figure, drawn by the page's own plotly.js."""
    state = nb.metadata.get('widgets', {}).get(WIDGET_STATE, {}).get('state', {})
    _drop_dangling(state)
    style = next((m for m in state.values() if m['model_name'] == 'HTMLStyleModel'), None)
    for mid, m in list(state.items()):
        if not is_figure_widget(m): continue
        s = m['state']
        for b in m.get('buffers', []): _set_path(s, b['path'], base64.b64decode(b['data']))
        fig = {'data': _plain(s['_widget_data']), 'layout': _plain(s.get('_widget_layout', {}))}
        new = {'_model_module': '@jupyter-widgets/controls', '_model_module_version': '2.0.0', '_model_name': 'HTMLModel',
               '_view_module': '@jupyter-widgets/controls', '_view_module_version': '2.0.0', '_view_name': 'HTMLView',
               'value': f'<div class="hx-plotly" data-figure="{html.escape(json.dumps(fig))}"></div>'}
        if 'layout' in s: new['layout'] = s['layout']
        if style:
            state[mid + '-style'] = dict(style); new['style'] = f'IPY_MODEL_{mid}-style'
        state[mid] = {'model_module': '@jupyter-widgets/controls', 'model_module_version': '2.0.0', 'model_name': 'HTMLModel', 'state': new}
    return nb

def sidebar_html(current: Path, metas: dict[Path, dict]) -> str:
    "The navigation sidebar, with a search box and links relative to the page `current` (a notebook path relative to `nbs/`)."
    up = '../' * (len(current.parts) - 1)
    parts = ['<nav class="hx-sidebar"><a class="hx-brand" href="%sindex.html">hetfl_explore</a>' % up,
             '<button class="hx-menu" type="button" aria-expanded="false">Menu</button>',
             f'<input class="hx-search" type="search" placeholder="Search" aria-label="Search the docs" data-root="{up}">'
             '<ul class="hx-results"></ul><ul>']
    for section, pages in sidebar_entries():
        if section: parts.append(f'<li class="hx-section">{html.escape(section)}</li>')
        for p in (p for p in pages if p in metas):
            cls = ' class="active"' if p == current else ''
            parts.append(f'<li><a{cls} href="{up}{metas[p]["path"].as_posix()}">{html.escape(metas[p]["title"])}</a></li>')
    parts.append('</ul></nav>')
    return ''.join(parts)

def page_order(metas: dict[Path, dict]) -> list[Path]:
    "Pages in sidebar order (each once), then any page the sidebar does not list."
    order = [p for _, pages in sidebar_entries() for p in pages if p in metas]
    order = list(dict.fromkeys(order))
    return order + sorted(p for p in metas if p not in order)

def pager_html(current: Path, metas: dict[Path, dict]) -> str:
    "Previous / next links to the neighbours of `current` in sidebar order."
    order, up = page_order(metas), '../' * (len(current.parts) - 1)
    if current not in order: return ''
    i = order.index(current)
    def link(j, cls, arrow):
        if not 0 <= j < len(order): return '<span></span>'
        m = metas[order[j]]
        return f'<a class="{cls}" href="{up}{m["path"].as_posix()}">{arrow} {html.escape(m["title"])}</a>'
    return f'<nav class="hx-pager">{link(i - 1, "hx-prev", "←")}{link(i + 1, "hx-next", "→")}</nav>'

def search_entry(nb, meta: dict) -> dict:
    "One page of the search index: title, path, description, headings and the text of its markdown cells."
    text = '\n'.join(c.source for c in nb.cells if c.cell_type == 'markdown')
    heads = re.findall(r'^#{2,3}\s+(.+)$', text, flags=re.M)
    text = re.sub(r'[#*_`>\[\]()|$\\{}]+', ' ', re.sub(r'\(([^()\s]+)\)', ' ', text))
    return dict(title=meta['title'], path=meta['path'].as_posix(), description=meta['description'], headings=heads,
                text=re.sub(r'\s+', ' ', text)[:SEARCH_TEXT_CHARS])

def api_object(module: str, name: str):
    "The object `name` (dotted: 'Class.method') of `module`, or None when the module does not import here (an optional extra)."
    import importlib
    try: obj = importlib.import_module(module)
    except Exception: return None
    for part in name.split('.'): obj = getattr(obj, part, None)
    return obj

def api_text(obj) -> tuple[str, str]:
    "The signature of an exported object and its docstring followed by each parameter's docment ('' where there is none)."
    import inspect
    from fastcore.docments import docments
    class Written(str):   # an annotation kept as text (`from __future__ import annotations`): shown as written, unquoted
        def __repr__(self): return str(self)
    try:
        sig = inspect.signature(obj)
        sig = str(sig.replace(parameters=[p.replace(annotation=Written(p.annotation)) if isinstance(p.annotation, str) else p
                                          for p in sig.parameters.values()],
                              return_annotation=Written(sig.return_annotation) if isinstance(sig.return_annotation, str) else sig.return_annotation))
    except (TypeError, ValueError): sig = ''
    doc = (inspect.getdoc(obj) or '').split('\n')[0]
    try: params = {k: v for k, v in docments(obj).items() if v and k != 'return'}
    except Exception: params = {}
    return sig, ' '.join([doc] + [f'{k}: {v}.' for k, v in params.items()])

def api_entries(pages: set[str]) -> list[dict]:
    """One search entry per exported name of the package (functions, classes, constants, methods added with `@patch`):
    its name, signature and docstring with its parameters' docments, pointing at its definition (`page#name`) on one of
    `pages` (the rendered page paths)."""
    from hetfl_explore._modidx import d
    out = []
    for module, syms in d['syms'].items():
        for full, (url, _) in syms.items():
            name, page = full[len(module) + 1:], url.split('#')[0]
            if page not in pages or any(p.startswith('_') for p in name.split('.')): continue
            sig, text = api_text(obj) if (obj := api_object(module, name)) is not None else ('', '')
            out.append(dict(title=name, path=f'{page}#{name}', description=f'{name}{sig}'[:API_SIGNATURE_CHARS], headings=[],
                            text=text[:API_TEXT_CHARS], kind='api', module=module))
    return out

API_SIGNATURE_CHARS, API_TEXT_CHARS = 300, 600   # characters of an exported name's signature and docs kept in the search index
SEARCH_TEXT_CHARS = 20000   # characters of each page's prose kept in the search index

SITE_CSS = """
body { margin: 0; }
.callout { border-left: 4px solid #0d6efd; background: #f3f7ff; padding: .4rem 1rem; margin: 1rem 0; border-radius: 4px; }
.callout-warning, .callout-caution { border-left-color: #e8a33d; background: #fff8ec; }
.callout-title { font-weight: 600; margin: .2rem 0; }
.hx-sidebar { position: fixed; top: 0; left: 0; bottom: 0; width: 250px; overflow-y: auto; padding: 1rem;
  background: #f7f7f9; border-right: 1px solid #ddd; font-family: system-ui, sans-serif; font-size: 14px; }
.hx-sidebar ul { list-style: none; padding: 0; margin: 0; }
.hx-sidebar li a { display: block; padding: 3px 6px; color: #333; text-decoration: none; border-radius: 4px; }
.hx-sidebar li a.active, .hx-sidebar li a:hover { background: #e3e8f3; color: #0b3d91; }
.hx-section { margin-top: 1rem; font-weight: 600; text-transform: uppercase; font-size: 12px; color: #666; }
.hx-brand { display: block; font-weight: 700; font-size: 18px; margin-bottom: .5rem; color: #0b3d91; text-decoration: none; }
.hx-main { margin-left: 290px; max-width: 1050px; padding: 1rem 2rem 4rem; }
body, .jupyter-widgets, .widget-label, .widget-html-content, .jp-RenderedHTMLCommon table { font-family: %(font)s; }
.hx-search { width: 100%%; box-sizing: border-box; margin: .3rem 0 .5rem; padding: 4px 6px; border: 1px solid #ccc; border-radius: 4px; }
.hx-results li a { font-size: 13px; } .hx-results li small { display: block; color: #777; padding: 0 6px 4px; }
.hx-toc { font: 13px %(font)s; margin: .5rem 0 1rem; padding: .4rem .8rem; border-left: 3px solid #e3e8f3; columns: 2; }
.hx-toc summary { column-span: all; display: list-item; font-weight: 600; cursor: pointer; }
.hx-toc a { display: block; color: #555; text-decoration: none; padding: 1px 0; } .hx-toc a.h3 { padding-left: 12px; }
/* beside the page where a figure-wide column and the contents both fit; above the first section otherwise */
@media (min-width: 1440px) { .hx-toc { position: fixed; top: 1rem; right: 1rem; width: 200px; max-height: 85vh; overflow-y: auto;
  margin: 0; padding: 0; border: 0; columns: 1; } .hx-has-toc .hx-main { margin-right: 220px; } }
.jp-InputArea-editor, .jp-Cell-inputWrapper pre, .jp-OutputArea-output pre { overflow-x: auto; }
/* code and signatures fit the column: a long line wraps at a space (after a parameter's comma), never inside a name;
   a single token wider than the column scrolls */
.hx-main .jp-InputArea-editor pre, .hx-main .jp-RenderedMarkdown pre, .hx-main .jp-RenderedHTMLCommon pre {
  white-space: pre-wrap; word-break: normal; overflow-wrap: normal; }
.hx-results small.hx-sig { font-family: monospace; font-size: 11px; word-break: normal; overflow-wrap: anywhere; }
.hx-results a.hx-api { font-family: monospace; }
.hx-main .katex-display { overflow-x: auto; overflow-y: hidden; }
.hx-menu { display: none; }
/* a phone: the sidebar folds into a menu above the page, the page takes the width, wide panels and tables scroll inside it */
@media (max-width: 800px) {
  .hx-sidebar { position: static; width: auto; max-height: none; border-right: 0; border-bottom: 1px solid #ddd; padding: .5rem 1rem; }
  .hx-brand { display: inline-block; margin-bottom: .3rem; }
  .hx-menu { display: inline-block; float: right; padding: 2px 10px; border: 1px solid #bbb; border-radius: 4px; background: #fff; }
  .hx-sidebar:not(.hx-open) > ul:not(.hx-results) { display: none; }
  .hx-main { margin-left: 0; max-width: none; padding: .5rem .8rem 3rem; }
  .hx-main .jp-Cell, .hx-main .jp-OutputArea-output, .hx-main .jupyter-widgets, .hx-main .plotly-graph-div,
  .hx-main .jp-RenderedHTMLCommon table { max-width: 100%%; min-width: 0; overflow-x: auto; }
  .hx-main .jp-OutputArea-child, .hx-main .jp-Cell-inputWrapper { min-width: 0; max-width: 100%%; }
  .hx-main .jp-RenderedHTMLCommon table { display: block; }
  .hx-main img { max-width: 100%%; height: auto; }
  .hx-toc { columns: 1; }
}
.hx-readonly input, .hx-readonly select, .hx-readonly textarea, .hx-readonly button, .hx-readonly .noUi-target {
  pointer-events: none; cursor: not-allowed; }
.hx-readonly .noUi-target, .hx-readonly input, .hx-readonly select, .hx-readonly button { opacity: .6; }
.hx-readonly .%(free)s input, .hx-readonly .%(free)s select, .hx-readonly .%(free)s button { pointer-events: auto; cursor: auto; opacity: 1; }
.hx-pager { display: flex; justify-content: space-between; margin-top: 3rem; padding-top: 1rem; border-top: 1px solid #ddd; }
.hx-pager a { text-decoration: none; color: #0b3d91; }
.hx-header h1 { margin-bottom: .2rem; } .hx-header .description { font-style: italic; opacity: .75; font-size: 1.2rem; }
.jp-Notebook { padding: 0 !important; } .jp-Cell { padding: 4px 0 !important; }
.jp-InputPrompt, .jp-OutputPrompt { display: none !important; }
.hx-static-banner { margin: 4px 0; padding: 4px 10px; border-left: 4px solid #e0a800; background: #fff8e1; color: #5a4500;
  font: 13px system-ui, sans-serif; }
""" % dict(font=__import__('hetfl_explore.foundation.core', fromlist=['FONT_FAMILY']).FONT_FAMILY, free=KERNEL_FREE)

SITE_JS = """
document.addEventListener("DOMContentLoaded", () => {
  renderMathInElement(document.body, {delimiters: [{left: "$$", right: "$$", display: true},
    {left: "$", right: "$", display: false}], throwOnError: false});
  for (const cls of ["hx-fold", "hx-fold-open"])   // Quarto's code-fold: the cell's code inside <details>
    document.querySelectorAll(`.celltag_${cls} .jp-Cell-inputWrapper`).forEach(w => {
      const d = document.createElement("details"), s = document.createElement("summary");
      s.textContent = w.closest(".celltag_%(solution)s") ? "%(solution_label)s" : "Code"; d.appendChild(s); d.open = cls === "hx-fold-open";
      w.parentNode.insertBefore(d, w); d.appendChild(w); });
  const draw = () => document.querySelectorAll(".hx-plotly:not([data-drawn])").forEach(el => {   // figures in widgets
    el.dataset.drawn = "1"; const f = JSON.parse(el.dataset.figure);
    Plotly.newPlot(el, f.data, f.layout, {responsive: true}); });
  const freeze = () => document.querySelectorAll(".hx-static-banner").forEach(banner => {
    // a saved panel (the output holding the banner) cannot call Python: disable its inputs, unless its widget computes in the browser
    // a widget that computes in the browser (inside an element of class %(free)s) stays live; a panel that is all such
    // widgets loses its banner, a panel that mixes both keeps it for its other controls
    const out = banner.parentElement, live = e => e.closest(".%(free)s");
    const inputs = [...out.querySelectorAll("input, select, textarea, button, [contenteditable=true]")];
    if (out.querySelector(".%(free)s") && inputs.every(live)) { banner.remove(); out.classList.remove("hx-readonly"); return; }
    out.classList.add("hx-readonly");
    inputs.filter(i => !live(i)).forEach(i => { if (i.isContentEditable) i.contentEditable = "false";
                                              else if (!i.disabled) { i.disabled = true; i.tabIndex = -1; } }); });
  new MutationObserver(() => { draw(); freeze(); }).observe(document.body, {childList: true, subtree: true}); draw(); freeze();
  const side = document.querySelector(".hx-sidebar"), active = side && side.querySelector("a.active");   // keep the current page in view
  const menu = side && side.querySelector(".hx-menu");   // on a phone the page list folds behind this button
  menu && menu.addEventListener("click", () => menu.setAttribute("aria-expanded", side.classList.toggle("hx-open")));
  if (active) side.scrollTop = active.offsetTop - side.clientHeight / 3;
  const heads = document.querySelectorAll(".hx-main h2[id], .hx-main h3[id]");   // on-page table of contents
  if (heads.length > 1) {
    // folded where it would sit above the page (a narrow screen): the panel or the first section stays in the first screen
    const toc = document.createElement("details"); toc.className = "hx-toc"; toc.innerHTML = "<summary>On this page</summary>";
    toc.open = window.matchMedia("(min-width: 1440px)").matches;
    heads.forEach(h => { const a = document.createElement("a"), c = h.cloneNode(true); a.href = "#" + h.id; a.className = h.tagName.toLowerCase();
      c.querySelectorAll(".katex-mathml, .anchor-link").forEach(e => e.remove());   // KaTeX keeps MathML beside its HTML: one copy
      a.textContent = c.textContent.replace(/¶$/, "").trim(); toc.appendChild(a); });
    document.querySelector(".hx-header").after(toc); document.body.classList.add("hx-has-toc"); }
  const box = document.querySelector(".hx-search"), res = document.querySelector(".hx-results");   // client-side search
  let index = null;
  const count = (text, t) => Math.min(text.split(t).length - 1, 20);
  box && box.addEventListener("input", async () => {
    const terms = box.value.toLowerCase().split(/\\s+/).filter(t => t.length > 1);
    res.innerHTML = ""; if (!terms.length) return;
    index = index || await (await fetch(box.dataset.root + "search.json")).json();
    // title, description and headings weigh most; then how often the page's prose uses the term; an exported name typed
    // in full ranks its definition first
    const query = terms.join(" ");
    const score = p => { const title = p.title.toLowerCase(), desc = p.description.toLowerCase(), heads = p.headings.join(" ").toLowerCase(),
      text = p.text.toLowerCase(), all = [title, desc, heads, text].join(" ");
      const exact = p.kind === "api" && (title === query || title.endsWith("." + query)) ? 1000 : 0;
      return terms.every(t => all.includes(t)) ? exact + terms.reduce((s, t) => s + 20 * title.includes(t) + 8 * desc.includes(t)
        + 3 * count(heads, t) + count(text, t) / 2, 0) : 0; };
    index.map(p => [score(p), p]).filter(x => x[0] > 0).sort((a, b) => b[0] - a[0]).slice(0, 10).forEach(([_, p]) => {
      const li = document.createElement("li"), a = document.createElement("a"), d = document.createElement("small");
      a.href = box.dataset.root + p.path; a.textContent = p.title; d.textContent = p.description;
      if (p.kind === "api") { a.classList.add("hx-api"); d.classList.add("hx-sig"); }
      li.append(a, d); res.appendChild(li); });
    if (!res.children.length) res.innerHTML = "<li><small>no page matches</small></li>";
  });
  box && box.addEventListener("keydown", e => {   // Enter opens the first result
    const first = res.querySelector("a"); if (e.key === "Enter" && first) location.href = first.href; });
});
""" % dict(solution=SOLUTION_TAG, solution_label=SOLUTION_LABEL, free=KERNEL_FREE)

PLOTLY_USE = re.compile(r'class="[^"]*plotly-graph-div|hx-plotly')   # a drawn figure, or a panel that holds one

def needs_plotly(body: str) -> bool:
    "Whether a rendered page draws a plotly figure (plotly.js, 0.5-1.2 s of a page load on a 2-core machine, is left out otherwise)."
    return bool(PLOTLY_USE.search(body))

def trace_types(nb) -> set[str]:
    "The trace types of the figures a notebook shows: plotly outputs and saved plotly widgets (`RAW_FIGURE` for a figure in raw HTML)."
    types = set()
    for cell in nb.cells:
        for out in cell.get('outputs', []):
            data = out.get('data', {})
            if PLOTLY_MIME in data: types |= {t.get('type', 'scatter') for t in data[PLOTLY_MIME].get('data', [])}
            elif 'Plotly.newPlot' in str(data.get('text/html', '')): types.add(RAW_FIGURE)
    state = nb.metadata.get('widgets', {}).get(WIDGET_STATE, {}).get('state', {})
    return types | {t.get('type', 'scatter') for m in state.values() if is_figure_widget(m) for t in m['state']['_widget_data'] if isinstance(t, dict)}

def plotly_bundle(types: set[str], # from `trace_types`
                 ) -> str:
    "The plotly.js a page loads: the cartesian bundle when it draws every trace type shown (0.5 s instead of 1.2 s to load, measured), else the full one."
    return PLOTLY_CARTESIAN if types <= CARTESIAN_TRACES else PLOTLY_FULL

def render_page(src: Path, rel: Path, metas: dict[Path, dict], exporter) -> None:
    "Render one processed notebook to its page in `_docs/`."
    nb = read_processed(src)
    bundle = plotly_bundle(trace_types(nb))   # before `clean_cells` turns the figures into HTML
    title, desc = metas[rel]['title'], metas[rel]['description']
    def link(target: str) -> str:   # a notebook link, relative to this page, to that notebook's page
        dest = Path(os.path.normpath(rel.parent/target))
        page = metas[dest]['path'] if dest in metas else dest.with_suffix('.html')
        return os.path.relpath(page, rel.parent)
    body, _ = exporter.from_notebook_node(static_figures(clean_cells(cite_cells(panel_first(nb, rel), rel), link)))
    up = '../' * (len(rel.parts) - 1)
    assets = up + 'assets/'
    body = re.sub(r'<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->', '', body, flags=re.S)
    head_js = (f'<script src="{assets}{bundle}"></script>\n' * needs_plotly(body) +
               f'<link rel="stylesheet" href="{assets}katex/katex.min.css">\n'
               f'<script src="{assets}katex/katex.min.js"></script>\n'
               f'<script src="{assets}katex/contrib/auto-render.min.js"></script>\n'
               f'<link rel="icon" href="data:,">\n<link rel="stylesheet" href="{assets}site.css">\n'
               # the widget manager's icon fonts load from this folder (its bundle reads the global), not from each page's folder
               f'<script>window.__jupyter_widgets_assets_path__ = new URL("{assets}html-manager/", location.href).href;</script>\n'
               f'<script src="{assets}site.js"></script>\n')
    body = local_links(share_styles(body, assets), up)
    # plotly.js and KaTeX must load before require.js, or they register as AMD modules instead of globals
    body = body.replace('<script src="%srequire.js"></script>' % assets,
                        head_js + '<script src="%srequire.js"></script><script src="%sanywidget_amd.js"></script>' % (assets, assets), 1)
    body = re.sub(r'<title>.*?</title>', f'<title>{html.escape(title)} – hetfl_explore</title>', body, count=1, flags=re.S)
    header = f'<header class="hx-header"><h1>{html.escape(title)}</h1>' + (f'<p class="description">{inline_code(desc)}</p>' if desc else '') + '</header>'
    body = re.sub(r'(<body[^>]*>)', lambda m: m.group(1) + sidebar_html(rel, metas) + '<main class="hx-main">' + header, body, count=1)
    body = body.replace('</body>', pager_html(rel, metas) + '</main></body>', 1)
    body = body.replace(f'<script type="{WIDGET_VIEW}">', STATIC_BANNER + f'<script type="{WIDGET_VIEW}">')
    dst = OUT/metas[rel]['path']
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(body)

def share_styles(body: str, assets: str) -> str:
    "The page with each long inline stylesheet (the lab template's theme, the same on every page) replaced by a link to one shared copy in `assets/`."
    import hashlib
    def link(m):
        if len(m.group(1)) < BIG_STYLE: return m.group(0)
        name = f'lab-{hashlib.sha256(m.group(1).encode()).hexdigest()[:12]}.css'
        if not (OUT/'assets'/name).exists(): (OUT/'assets'/name).write_text(m.group(1))   # pages rendered side by side write the same text
        return f'<link rel="stylesheet" href="{assets}{name}">'
    return re.sub(r'<style[^>]*>(.*?)</style>', link, body, flags=re.S)

@functools.lru_cache(maxsize=None)
def site_url() -> str:
    "The published site's address from `settings.ini` (`doc_host` + `doc_baseurl`), ending in '/'."
    from configparser import ConfigParser
    cp = ConfigParser(delimiters=['=']); cp.read(ROOT/'settings.ini')
    return cp['DEFAULT']['doc_host'].rstrip('/') + '/' + cp['DEFAULT'].get('doc_baseurl', '').strip('/') + '/'

def local_links(body: str, up: str) -> str:
    "The page with links into the published site (nbdev's API links) made relative, so a local or mirrored site keeps its readers."
    return re.sub(r'href="' + re.escape(site_url()), f'href="{up}', body)

# Files of the widget manager no page fetches: source maps, the non-AMD bundle, `libembed-amd.js` (embed-amd.js defines
# the same module inline) and the icon fonts' legacy formats (browsers take the woff2 the font rules list before them).
UNUSED_WIDGET_FILES = ('*.map', 'embed.js', 'libembed-amd.js', '*.eot', '*.ttf', '*.svg')

# The KaTeX files a page loads (`render_page`): the minified script, its style sheet, auto-render and the woff2 fonts its
# style sheet lists first; the unminified builds, ES modules, other extensions and legacy font formats stay out.
KATEX_USED = ('katex.min.js', 'katex.min.css', 'auto-render.min.js')

def unused_katex_files(folder: str, names: list[str]) -> set[str]:
    "`shutil.copytree`'s ignore rule for KaTeX's dist folder: every file but `KATEX_USED` and the woff2 fonts."
    return {n for n in names if not (Path(folder)/n).is_dir() and n not in KATEX_USED and not n.endswith('.woff2')}

WIDGET_FONT = re.compile(r'([A-Za-z_$][\w$]*)\.p\+"([0-9a-f]{20}\.(?:woff2?|ttf|eot|svg))"')   # an icon font in the widget manager's bundle

def shared_fonts(bundle: str) -> str:
    """The widget manager's bundle with its icon fonts loaded from the folder the page names in
    `window.__jupyter_widgets_assets_path__` (`assets/html-manager/`): the bundle's own base path is the page's folder,
    which made every section of the site hold a copy of the fonts."""
    return WIDGET_FONT.sub(lambda m: f'(window.__jupyter_widgets_assets_path__||{m.group(1)}.p)+"{m.group(2)}"', bundle)

def js_installed() -> bool:
    "Whether `.cache/docs-js` holds the pinned JavaScript packages."
    mods = JS_CACHE/'node_modules'
    return all((mods/name/'package.json').exists() and json.loads((mods/name/'package.json').read_text())['version'] == v
               for name, v in JS_PACKAGES.items())

def start_js_install() -> subprocess.Popen | None:
    "Start npm installing the pinned JavaScript packages into `.cache/docs-js` in the background (None when they are there)."
    if js_installed(): return None
    if not shutil.which('npm'): raise SystemExit("docs: npm is needed to fetch the widget manager, require.js and KaTeX (apt-get install npm)")
    JS_CACHE.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(['npm', 'install', '--prefix', str(JS_CACHE), '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error',
                             *[f'{n}@{v}' for n, v in JS_PACKAGES.items()]])

def install_js(pending: subprocess.Popen | None = None, # an install started by `start_js_install` (None: start one now if needed)
              ) -> Path:
    "Install the pinned JavaScript packages with npm into `.cache/docs-js` (once), or wait for `pending`; returns its node_modules."
    pending = pending or start_js_install()
    if pending is not None and pending.wait() != 0: raise SystemExit(f'docs: npm install failed (exit code {pending.returncode})')
    return JS_CACHE/'node_modules'

def copy_assets(mods: Path) -> None:
    "Copy plotly.js (full and cartesian bundles), require.js, the widget manager and KaTeX into `_docs/assets`."
    import plotly
    a = OUT/'assets'; a.mkdir(parents=True, exist_ok=True)
    (a/'site.css').write_text(SITE_CSS); (a/'site.js').write_text(SITE_JS)
    shutil.copy(Path(plotly.__file__).parent/'package_data'/'plotly.min.js', a/PLOTLY_FULL)
    shutil.copy(mods/'plotly.js-cartesian-dist-min'/PLOTLY_CARTESIAN, a/PLOTLY_CARTESIAN)
    shutil.copy(mods/'requirejs'/'require.js', a/'require.js')
    shutil.copy(ROOT/'hetfl_explore'/'widgets'/'static'/'anywidget_amd.js', a/'anywidget_amd.js')   # saved anywidgets (the kernel-free editor) load through it
    shutil.copytree(mods/'@jupyter-widgets'/'html-manager'/'dist', a/'html-manager', dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*UNUSED_WIDGET_FILES))
    (a/'html-manager'/'embed-amd.js').write_text(shared_fonts((a/'html-manager'/'embed-amd.js').read_text()))
    shutil.copytree(mods/'katex'/'dist', a/'katex', dirs_exist_ok=True, ignore=unused_katex_files)
    for f in NBS.rglob('*'):
        if f.suffix.lower() in {'.png', '.jpg', '.jpeg', '.svg', '.gif', '.css'} and not any(p.startswith('.') for p in f.relative_to(NBS).parts):
            (OUT/f.relative_to(NBS)).parent.mkdir(parents=True, exist_ok=True); shutil.copy(f, OUT/f.relative_to(NBS))

@functools.lru_cache(maxsize=None)
def html_exporter(up: str, # the page's way up to the site root ('', '../', ...): the script URLs are relative to it
                 ):
    "nbconvert's lab-template exporter for pages at one depth, made once per process (compiling its templates took a third of a page's render)."
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    exp = HTMLExporter(template_name='lab', exclude_input_prompt=True, exclude_output_prompt=True,
                       require_js_url=f'{up}assets/require.js', widget_renderer_url=f'{up}assets/html-manager/embed-amd.js',
                       jquery_url='', mathjax_url='')
    exp.register_preprocessor(TagRemovePreprocessor(remove_input_tags={HIDE_INPUT}), enabled=True)
    return exp

def render_one(rel: Path, src: Path, metas: dict[Path, dict]) -> None:
    "Render the processed notebook `src` to the page of `rel` with nbconvert's lab template (in a worker process)."
    render_page(src, rel, metas, html_exporter('../' * (len(rel.parts) - 1)))

def render_all(jobs: int = 2, # pages rendered in parallel
               js: subprocess.Popen | None = None, # the npm install started by `start_js_install`, if any
              ) -> int:
    "Render every processed notebook; returns the number of pages."
    mods = install_js(js)
    if OUT.exists(): shutil.rmtree(OUT)
    copy_assets(mods)
    pages = {p.relative_to(PROC): p for p in PROC.rglob('*.ipynb')}
    metas = {rel: page_meta(read_processed(p), rel) for rel, p in pages.items()}
    check_citations(pages)
    with cf.ProcessPoolExecutor(jobs) as ex:   # pages are independent: render them side by side
        list(ex.map(render_one, *zip(*sorted(pages.items())), [metas] * len(pages)))
    index = [search_entry(read_processed(pages[rel]), metas[rel]) for rel in page_order(metas)]
    (OUT/'search.json').write_text(json.dumps(index + api_entries({m['path'].as_posix() for m in metas.values()})))
    (OUT/'.nojekyll').touch()
    return len(pages)

MAX_PAGE_BYTES = 3_000_000   # the heaviest page a reader should fetch (about 2.4 s at 10 Mbit/s)
MAX_SITE_BYTES = 30_000_000  # the whole site, pages and shared assets (a mirror or an offline copy stays light)

def site_bytes(out: Path = OUT) -> int:
    "Bytes of every file under `out`: what a reader mirroring the whole site downloads."
    return sum(f.stat().st_size for f in out.rglob('*') if f.is_file())

def site_problems(out: Path = OUT) -> list[str]:
    "Every stderr output block, absolute build-machine path, unrendered Quarto fence, extra top-level heading and page over `MAX_PAGE_BYTES` under `out`, and a site over `MAX_SITE_BYTES`."
    problems = []
    for page in sorted(out.rglob('*.html')):
        rel, text = page.relative_to(out), page.read_text(errors='replace')
        if {'assets', '@jupyter-widgets'} & set(rel.parts): continue
        if (n := sum(text.count(m) for m in STDERR_OUTPUTS)): problems.append(f'{rel}: {n} stderr output block(s)')
        found = set(ABSOLUTE_PATH.findall(text)) | set(re.findall(re.escape(str(ROOT)) + PATH_TAIL, text))   # a root outside the pattern too
        problems += [f'{rel}: absolute path {p}' for p in sorted(found)]
        if (n := len(RAW_FENCE.findall(text))): problems.append(f'{rel}: {n} Quarto fence(s) shown as text')
        if (n := text.count('<h1')) > 1: problems.append(f'{rel}: {n} top-level headings (a commented-out markdown cell?)')
        if (raw := RAW_CITATION.findall(text)): problems.append(f'{rel}: {len(raw)} citation(s) shown as text: {raw[:3]}')
        if (size := page.stat().st_size) > MAX_PAGE_BYTES: problems.append(f'{rel}: {size / 1e6:.1f} MB, over the {MAX_PAGE_BYTES / 1e6:.0f} MB a page may weigh')
    if (total := site_bytes(out)) > MAX_SITE_BYTES: problems.append(f'the site: {total / 1e6:.1f} MB, over the {MAX_SITE_BYTES / 1e6:.0f} MB it may weigh')
    return problems

def check_site(out: Path = OUT) -> None:
    "Fail the build when a page shows stderr output, an absolute path of the build machine or markup that did not render, or is too heavy."
    if problems := site_problems(out):
        raise SystemExit('docs: pages leak build output, show unrendered markup or weigh too much (capture warnings at the source; check the markdown; share heavy assets):\n  ' + '\n  '.join(problems))

def build_readme() -> None:
    "Regenerate `README.md` from `nbs/index.ipynb` (executed and processed like a docs page, exported as Markdown)."
    from nbconvert import MarkdownExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    execute_all(['index.ipynb'], 1)
    process_all()
    nb = read_processed(PROC/'index.ipynb')
    meta = page_meta(nb, Path('index.ipynb'))
    exp = MarkdownExporter(exclude_input_prompt=True, exclude_output_prompt=True)
    exp.register_preprocessor(TagRemovePreprocessor(remove_input_tags={HIDE_INPUT}), enabled=True)
    body, _ = exp.from_notebook_node(clean_cells(cite_cells(nb, Path('index.ipynb')), link=lambda target: f'nbs/{target}'))
    body = re.sub(r'\n{3,}', '\n\n', body.replace('<!-- WARNING: THIS FILE WAS AUTOGENERATED! DO NOT EDIT! -->', ''))
    body = re.sub(r'(!\[[^\]]*\]\()(?![a-z]+:|/)([^)\s]+\))', r'\1nbs/\2', body)   # images beside the notebook, seen from the root
    (ROOT/'README.md').write_text(f"# {meta['title']}\n\n<!-- generated from nbs/index.ipynb by `make readme`; edit the notebook -->\n\n"
                                  f"> {meta['description']}\n\n{body.strip()}\n")
    print('readme: README.md written from nbs/index.ipynb')

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fallback', action='store_true', help='use the Quarto-free renderer even where Quarto exists')
    ap.add_argument('--jobs', type=int, default=2, help='notebooks executed, and pages rendered, in parallel')
    ap.add_argument('--only', action='append', help='only notebooks matching this glob (relative to nbs/; repeatable), for a quick preview')
    ap.add_argument('--plain-kernels', action='store_true', help='start every kernel from scratch (no zygote, see tools/kernel_zygote.py)')
    ap.add_argument('--readme', action='store_true', help='only regenerate README.md from nbs/index.ipynb')
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.readme: return build_readme()
    if shutil.which('quarto') and not args.fallback:
        subprocess.run([str(Path(sys.executable).parent/'nbdev_docs')], check=True, cwd=ROOT)
        check_site()
    else:
        print('docs: Quarto not found, using the Quarto-free renderer' if not args.fallback else 'docs: Quarto-free renderer')
        js = start_js_install()   # npm fetches the page scripts while the notebooks run
        execute_all(args.only, args.jobs, zygote=not args.plain_kernels); t1 = time.time()
        process_all(); t2 = time.time()
        n = render_all(args.jobs, js)
        check_site()
        print(f'docs: {n} pages rendered into {OUT.relative_to(ROOT)}/ (execute {t1 - t0:.1f} s, process {t2 - t1:.1f} s, '
              f'render and check {time.time() - t2:.1f} s)')
    print(f'docs: built in {time.time() - t0:.1f} s')

if __name__ == '__main__': main()
