"""The package reads like a book: short code cells, public citations only, and documented signatures.

Each test lists every offender, so a failure says exactly where to look.
"""
import ast, importlib, inspect, io, json, pkgutil, re, tokenize
from pathlib import Path
import pytest
from fastcore.docments import docments
import hetfl_explore
from conftest import ROOT

MAX_CELL_LINES = 40    # the longest code cell allowed (the style guide aims at about 30)
MAX_DEFINITION_LINES = 50   # a cell holding one definition alone (a class, function or table) that @patch cannot split
PRIVATE_CITATION = re.compile(r'spec §|FLAG §|\bl\. ?[0-9]|\bll\. ?[0-9]|\bspec/|shared/(spec|seeds)')
NBS = sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts)

def cells(kind=None):
    "Every `(notebook, index, source)` of the notebooks, optionally only cells of one kind."
    for nb in NBS:
        for i, c in enumerate(json.loads(nb.read_text(encoding='utf-8'))['cells']):
            if kind is None or c['cell_type'] == kind: yield nb.relative_to(ROOT / 'nbs'), i, ''.join(c['source'])

def one_definition(src:str) -> bool:
    "True when a cell holds a single top-level statement: one class, function or assignment (directives aside)."
    try: body = ast.parse('\n'.join('' if l.lstrip().startswith(('%', '!')) else l for l in src.split('\n'))).body
    except SyntaxError: return False
    return len(body) == 1 and isinstance(body[0], (ast.ClassDef, ast.FunctionDef, ast.Assign, ast.AnnAssign))

def too_long(src:str) -> bool:
    "More lines than `MAX_CELL_LINES`, or than `MAX_DEFINITION_LINES` for a cell holding one definition."
    return len(src.splitlines()) > (MAX_DEFINITION_LINES if one_definition(src) else MAX_CELL_LINES)

def test_code_cells_are_short():
    long = [f'{nb} cell {i}: {len(s.splitlines())} lines' for nb, i, s in cells('code') if too_long(s)]
    assert not long, f'{len(long)} code cells exceed {MAX_CELL_LINES} lines:\n' + '\n'.join(long)

def test_citations_are_public():
    bad = [
        f'{nb} cell {i}: ...{s[max(0, m.start() - 40):m.end() + 40]!r}...'
        for nb, i, s in cells()
        for m in PRIVATE_CITATION.finditer(s)
    ]
    assert not bad, f'{len(bad)} private citations (cite the public source instead):\n' + '\n'.join(bad)

SCRIPT_COMMENT = re.compile(r'^# #|^#$|^# ', re.M)   # a markdown line left commented out as in a percent-format script

def test_markdown_is_not_commented_out():
    "Markdown written as `# ` comments (a script converted without its prefixes) renders every paragraph as a heading; only a notebook's title is `# `."
    md, first = list(cells('markdown')), {}
    for nb, i, _ in md: first.setdefault(nb, i)                    # the title cell of each notebook
    bad = [f'{nb} cell {i}: {s[:60]!r}' for nb, i, s in md if i != first[nb] and SCRIPT_COMMENT.search(s)]
    assert not bad, f'{len(bad)} markdown cells read as commented-out script lines:\n' + '\n'.join(bad)

def public_modules():
    "Every module of the package except the generated index."
    for m in pkgutil.walk_packages(hetfl_explore.__path__, 'hetfl_explore.'):
        if not m.name.endswith('_modidx'): yield importlib.import_module(m.name)

def exported(mod):
    "The functions and classes a module exports (its `__all__`) that it defines itself."
    for name in getattr(mod, '__all__', []):
        obj = getattr(mod, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, '__module__', '') == mod.__name__:
            yield name, obj

def undocumented_params(f) -> list[str]:
    "Parameters of `f` (self, *args, **kwargs excluded) without a docments comment."
    try:d = docments(f, full=True)
    except (TypeError, ValueError, OSError): return []
    skip = {'self', 'cls', 'return'}
    sig = inspect.signature(f).parameters
    return [
        p
        for p, v in d.items()
        if p not in skip
        and p in sig
        and sig[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and not v['docment']
    ]

def test_every_exported_callable_has_docments():
    bad = []
    for mod in public_modules():
        for name, obj in exported(mod):
            f = obj.__init__ if inspect.isclass(obj) and '__init__' in vars(obj) else obj
            if inspect.isclass(obj) and '__init__' not in vars(obj):
                continue  # dataclasses: fields are documented in the class
            if (miss := undocumented_params(f)): bad.append(f'{mod.__name__}.{name}: {", ".join(miss)}')
    assert not bad, f'{len(bad)} exported callables with undocumented parameters:\n' + '\n'.join(bad)

def test_every_public_method_has_a_docstring():
    bad = []
    for mod in public_modules():
        for name, cls in exported(mod):
            if not inspect.isclass(cls): continue
            for m, f in vars(cls).items():
                if m.startswith('_') or not (inspect.isfunction(f) or isinstance(f, property)): continue
                fn = f.fget if isinstance(f, property) else f
                if not (fn.__doc__ or '').strip(): bad.append(f'{mod.__name__}.{name}.{m}')
    assert not bad, f'{len(bad)} public methods without a docstring:\n' + '\n'.join(bad)

# Words about how the work was organised (tracker numbers, the machine loans of a work period) name no behaviour.
ORGANISATION_WORDS = re.compile(
    r'\bissues? ?#?\d+|\bleas(e|es|ed|ing)\b|\brecord version\b|\bbefore the changes\b', re.I
)
WORDING_DIRS = ('nbs', 'hetfl_explore', 'tests', 'benchmarks', 'tools')
WORDING_SUFFIXES = {'.ipynb', '.py', '.md', '.sh', '.yml'}

def organisation_words(root:Path=ROOT) -> list[str]:
    "Every `path:line: text` under `WORDING_DIRS` of `root` that names the organisation of the work instead of a behaviour."
    bad = []
    for d in WORDING_DIRS:
        for f in sorted((root / d).rglob('*')):
            if f.suffix not in WORDING_SUFFIXES or {'.ipynb_checkpoints', '__pycache__'} & set(f.parts): continue
            for n, line in enumerate(f.read_text(encoding='utf-8').splitlines(), 1):
                if m := ORGANISATION_WORDS.search(line):
                    bad.append(f'{f.relative_to(root)}:{n}: ...{line[max(0, m.start() - 40):m.end() + 40].strip()}...')
    return bad

def test_no_words_about_how_the_work_was_organised():
    "Name the behaviour, not the tracker number or the work period (history lives in git)."
    bad = organisation_words()
    assert not bad, f'{len(bad)} lines name the organisation of the work, not a behaviour:\n' + '\n'.join(bad)

def test_a_planted_tracker_number_fails(tmp_path):
    for d in WORDING_DIRS: (tmp_path / d).mkdir()
    (tmp_path / 'tests' / 'test_x.py').write_text('"Fine: a session key and a release."\n')
    assert organisation_words(tmp_path) == []
    (tmp_path / 'benchmarks' / 'x.py').write_text('"""A benchmark (' + 'Issue' + ' 7)."""\n')
    (tmp_path / 'nbs' / 'x.md').write_text('on the H200 ' + 'lea' + 'se\n')
    assert sorted(b.split(':')[0] for b in organisation_words(tmp_path)) == ['benchmarks/x.py', 'nbs/x.md']

MAX_PROSE_CHARS = 120   # the widest markdown line of a notebook, as wide as its code
LONE_LINK = re.compile(r'^\s*(?:[-*] |\d+\. )?(?:<?https?://\S+>?|!?\[[^\]]*\]\([^)\s]+\))\s*$')   # a URL or link alone

def long_prose_lines(nbs=NBS, root:Path=ROOT / 'nbs') -> list[str]:
    """Every markdown line longer than `MAX_PROSE_CHARS`, except table rows, a lone URL or link, display-math lines
    (`$$` blocks) and a notebook's one-line summary (the `> ` line of its title cell, which nbdev reads as one line)."""
    bad = []
    for nb in nbs:
        for i, c in enumerate(json.loads(nb.read_text(encoding='utf-8'))['cells']):
            if c['cell_type'] != 'markdown': continue
            in_math = False
            for line in ''.join(c['source']).splitlines():
                math = in_math or line.lstrip().startswith('$$')
                if line.count('$$') % 2: in_math = not in_math
                summary = i == 0 and line.startswith('> ')
                if len(line) > MAX_PROSE_CHARS and not (
                    math or summary or line.lstrip().startswith('|') or LONE_LINK.match(line)
                ):
                    bad.append(f'{nb.relative_to(root)} cell {i}: {len(line)} chars: {line[:60]!r}...')
    return bad

def test_prose_lines_fit_the_page():
    "Markdown is wrapped like the code: a line of prose in a notebook is at most `MAX_PROSE_CHARS` characters."
    bad = long_prose_lines()
    assert not bad, f'{len(bad)} markdown lines are longer than {MAX_PROSE_CHARS} characters:\n' + '\n'.join(bad)

def test_a_planted_long_line_fails(tmp_path):
    md = lambda *lines: dict(cell_type='markdown', metadata={}, source='\n'.join(lines))
    ok = [
        '# Title',
        '> ' + 's' * 150,
        '| ' + 't' * 150 + ' |',
        'https://example.org/' + 'u' * 130,
        '$$',
        'x' * 150,
        '$$',
    ]
    nb = tmp_path / 'x.ipynb'
    nb.write_text(json.dumps(dict(cells=[md(*ok), md('short', 'w ' * 70)])))
    assert [b.split(':')[0] for b in long_prose_lines([nb], tmp_path)] == ['x.ipynb cell 1']

MAX_CODE_CHARS = 120   # the widest code line, in the package and in the notebooks' code cells
GENERATED_ALL = re.compile(r'^__all__ = \[.*?\]$', re.M | re.S)   # nbdev's `__all__` list (it wraps it at 120 + 10)

def _generated_lines(text:str) -> set[int]:
    "Line numbers (1-based) that nbdev writes itself: the module docstring (the chapter's summary) and `__all__`."
    out = {1} if text.startswith('"""') else set()
    for m in GENERATED_ALL.finditer(text):
        first = text.count('\n', 0, m.start()) + 1
        out |= set(range(first, first + m.group().count('\n') + 1))
    return out

def long_code_lines(root:Path=ROOT) -> list[str]:
    "Every package line and notebook code line longer than `MAX_CODE_CHARS`, except the lines nbdev generates."
    bad = []
    for py in sorted((root / 'hetfl_explore').rglob('*.py')):
        if py.name == '_modidx.py': continue                      # nbdev's generated index
        text = py.read_text(encoding='utf-8')
        skip = _generated_lines(text)
        bad += [f'{py.relative_to(root)}:{n}: {len(l)} chars' for n, l in enumerate(text.splitlines(), 1)
                if len(l) > MAX_CODE_CHARS and n not in skip]
    for nb in sorted(p for p in (root / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts):
        for i, c in enumerate(json.loads(nb.read_text(encoding='utf-8'))['cells']):
            if c['cell_type'] != 'code': continue
            bad += [f'{nb.relative_to(root)} cell {i}: {len(l)} chars: {l[:50]!r}'
                    for l in ''.join(c['source']).splitlines() if len(l) > MAX_CODE_CHARS]
    return bad

def test_code_lines_fit_the_page():
    "A code line a reader can hold: at most `MAX_CODE_CHARS` characters in the package and in every notebook."
    bad = long_code_lines()
    assert not bad, f'{len(bad)} code lines are longer than {MAX_CODE_CHARS} characters:\n' + '\n'.join(bad[:200])

def joined_statements(root:Path=ROOT) -> list[str]:
    "Every `;` that joins two statements in the package's code (found by the tokenizer: not in strings or comments)."
    bad = []
    for py in sorted((root / 'hetfl_explore').rglob('*.py')):
        toks = tokenize.generate_tokens(io.StringIO(py.read_text(encoding='utf-8')).readline)
        bad += [f'{py.relative_to(root)}:{t.start[0]}' for t in toks if t.type == tokenize.OP and t.string == ';']
    return bad

def test_library_code_has_one_statement_per_line():
    "No `;` joins statements in the package: each statement on its own line."
    bad = joined_statements()
    assert not bad, f'{len(bad)} statements joined by ";":\n' + '\n'.join(bad[:200])

def test_the_style_scans_find_what_they_look_for(tmp_path):
    "Planted offenders are found; a long string inside a comment or a `;` in a string is not an offender."
    pkg, nbs = tmp_path / 'hetfl_explore', tmp_path / 'nbs'
    pkg.mkdir()
    nbs.mkdir()
    long_all = '__all__ = [' + ', '.join(f"'name{i}'" for i in range(12)) + ',\n           ' + "'x' * 10" * 14 + ']'
    (pkg / 'm.py').write_text('"""' + 'd' * 130 + '"""\n' + long_all + '\nx = "a;b"  # c;d\ny = 1; z = 2\n')
    (pkg / 'n.py').write_text('w = ' + '1 + ' * 40 + '1\n')
    cell = dict(cell_type='code', source=['ok = 1\n', 'v = ' + '2 * ' * 40 + '2'], metadata={}, outputs=[])
    (nbs / 'a.ipynb').write_text(json.dumps(dict(cells=[cell])))
    assert [b.split(':')[0] for b in long_code_lines(tmp_path)] == ['hetfl_explore/n.py', 'nbs/a.ipynb cell 0']
    assert joined_statements(tmp_path) == ['hetfl_explore/m.py:5']

def test_only_a_lone_definition_may_run_past_the_cell_limit():
    "A 45-line function alone is allowed; the same lines after another statement, or a 51-line one, are not."
    fn = 'def f():\n' + '    x = 1\n' * 44
    assert not too_long(fn) and too_long('y = 2\n' + fn) and too_long('def f():\n' + '    x = 1\n' * 50)
    assert too_long('if True:\n' + '    x = 1\n' * 44)                  # a block of statements is not a definition
