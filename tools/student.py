#!/usr/bin/env python
"""The student edition of the classroom labs, and a grading helper for teachers.

`build`: copy every lab of `nbs/labs/` into `nbs/labs/student/` without its solutions. A solution cell is a code
cell whose first line after its `#|` directives is the marker `# SOLUTION`; it becomes a cell that sets each
`answer_*` name it assigned to the placeholder `...` (so the check below it reports "not attempted"). A cell marked
`# TEACHER` (the closing `assert_solved`) is dropped. The title says "(student edition)" and a banner explains.
The edition carries a `.notest` file: `tests/test_student.py` builds it afresh and executes it.

`grade`: read the check records (`hetfl_explore.graders.core.MIME` outputs) of students' saved notebooks, optionally
executing them first, and write one CSV row per notebook: the status of every exercise and the counts.

Usage: `python tools/student.py build [--src nbs/labs] [--out nbs/labs/student]`;
`python tools/student.py grade NOTEBOOK... [--csv grades.csv] [--execute] [--timeout S]`.
"""
from __future__ import annotations
import argparse, ast, json, os, re, sys
from pathlib import Path
import nbformat

ROOT = Path(__file__).resolve().parents[1]
SRC, OUT = ROOT/'nbs'/'labs', ROOT/'nbs'/'labs'/'student'
SOLUTION, TEACHER = '# SOLUTION', '# TEACHER'
MIME = 'application/vnd.hetfl-grade+json'   # = hetfl_explore.graders.core.MIME (kept here so `build` needs no import)
BANNER = ("**Student edition.** The solutions are removed: write your answer in each cell marked *your answer*\n"
          "(replace `...`), then run the grader below it. Until you do, every grader reports *not attempted*.")
PLACEHOLDER_NOTE = '# your answer: replace each `...` (keep the names)'

# ---------------------------------------------------------------- build
def body(source: str) -> list[str]:
    "The lines of a cell after its leading `#|` directives."
    lines = source.splitlines()
    while lines and re.match(r'\s*#\|', lines[0]): lines.pop(0)
    return lines

def role(cell) -> str | None:
    "'solution' or 'teacher' for a marked code cell, else None."
    if cell.cell_type != 'code': return None
    first = next((l.strip() for l in body(cell.source) if l.strip()), '')
    return 'solution' if first.startswith(SOLUTION) else 'teacher' if first.startswith(TEACHER) else None

def answer_names(source: str) -> list[str]:
    "The `answer*` names a solution cell assigns at top level, in order."
    tree = ast.parse('\n'.join(body(source)))
    names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)]
    out = [n for n in dict.fromkeys(names) if n.startswith('answer')]
    if not out: raise ValueError(f'a solution cell assigns no answer_* name:\n{source}')
    return out

def relink(md: str, src_dir: Path, out_dir: Path) -> str:
    "Rewrite relative links to notebooks so they still resolve from `out_dir`."
    def fix(m):
        target = m.group(2)
        if re.match(r'[a-z]+:|#|/', target): return m.group(0)
        return f'{m.group(1)}({os.path.relpath(src_dir/target, out_dir)})'
    return re.sub(r'(\]\s*)\(([^)\s]+\.ipynb[^)\s]*)\)', fix, md)

def student_notebook(nb, src_dir: Path = SRC, out_dir: Path = OUT):
    "A copy of lab notebook `nb` without solutions or teacher cells, marked as the student edition."
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    cells = []
    for cell in nb.cells:
        r = role(cell)
        if r == 'teacher': continue
        if r == 'solution':
            cell.source = '\n'.join([PLACEHOLDER_NOTE] + [f'{n} = ...' for n in answer_names(cell.source)])
        elif cell.cell_type == 'markdown':
            cell.source = relink(cell.source, src_dir, out_dir)
        cells.append(cell)
    title = cells[0]
    assert title.cell_type == 'markdown' and title.source.startswith('# '), 'a lab starts with a "# Title" markdown cell'
    first, _, rest = title.source.partition('\n')
    title.source = f'{first} (student edition)\n{rest}'
    banner = nbformat.v4.new_markdown_cell(BANNER); banner['id'] = f"{title.get('id', 'title')[:50]}-student"
    nb.cells = [title, banner] + cells[1:]
    nbformat.validate(nb)
    return nb

def dumps(nb) -> str:
    "A notebook as text, in the format `nbdev_clean` writes (sorted keys, one-space indent, sources as strings)."
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + '\n'

def build(src: Path = SRC, out: Path = OUT, served_from: Path | None = None) -> list[Path]:
    "Write the student edition of every `lab_*.ipynb` of `src` into `out` (with a `.notest` marker); returns the files."
    src, out = Path(src), Path(out)
    served_from = out if served_from is None else Path(served_from)   # links resolve from where the pages are served
    labs = sorted(src.glob('lab_*.ipynb'))
    if not labs: raise SystemExit(f'student: no lab_*.ipynb in {src}')
    out.mkdir(parents=True, exist_ok=True)
    (out/'.notest').write_text('The student edition is executed by tests/test_student.py, not tests/test_notebooks.py.\n')
    written = []
    for p in labs:
        nb = student_notebook(nbformat.read(p, as_version=4), src, served_from)
        (out/p.name).write_text(dumps(nb), encoding='utf-8'); written.append(out/p.name)
    return written

# ---------------------------------------------------------------- grade
def check_records(nb) -> list[dict]:
    "The check feedback records (exercise, status, message, hint) in the outputs of a saved notebook, in order."
    return [o['data'][MIME] for c in nb.cells if c.cell_type == 'code' for o in c.get('outputs', [])
            if o.get('output_type') in ('display_data', 'execute_result') and MIME in o.get('data', {})]

def execute(nb, path: Path, timeout: int = 600):
    "Run a notebook top to bottom (errors in a cell do not stop the run), in its own folder; returns it."
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=timeout, kernel_name='python3', allow_errors=True,
                   resources={'metadata': {'path': str(Path(path).parent)}}).execute()
    return nb

def grade(paths: list, execute_first: bool = False, timeout: int = 600):
    "One row per student notebook: each exercise's last status ('not run' if never checked) and the counts."
    import pandas as pd
    from hetfl_explore.graders import exercises
    rows, cols = [], []
    for p in map(Path, paths):
        nb = nbformat.read(p, as_version=4)
        if execute_first: nb = execute(nb, p, timeout)
        last = {r['exercise']: r['status'] for r in check_records(nb)}
        labs = sorted({e.split('.')[0] for e in last}) or []
        ids = [e for lab in labs for e in exercises(lab)] + [e for e in last if e.split('.')[0] not in labs]
        cols += [e for e in ids if e not in cols]
        row = {'notebook': p.name, **{e: last.get(e, 'not run') for e in ids}}
        row.update(correct=sum(s == 'correct' for s in last.values()), submitted=sum(s == 'submitted' for s in last.values()),
                   attempted=sum(s not in ('not attempted',) for s in last.values()), exercises=len(ids))
        rows.append(row)
    df = pd.DataFrame(rows, columns=['notebook'] + cols + ['correct', 'submitted', 'attempted', 'exercises'])
    return df.fillna('')

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd')
    b = sub.add_parser('build', help='write the solution-free student edition of the labs')
    b.add_argument('--src', default=str(SRC)); b.add_argument('--out', default=str(OUT))
    g = sub.add_parser('grade', help="summarise the checks of students' notebooks into a CSV")
    g.add_argument('notebooks', nargs='+'); g.add_argument('--csv', default='grades.csv')
    g.add_argument('--execute', action='store_true', help='run each notebook first (the records then come from this run)')
    g.add_argument('--timeout', type=int, default=600, help='seconds allowed per cell when executing')
    args = ap.parse_args(argv)
    if args.cmd == 'grade':
        df = grade(args.notebooks, args.execute, args.timeout)
        df.to_csv(args.csv, index=False)
        print(f'student: {len(df)} notebook(s) graded into {args.csv}')
        return df
    files = build(getattr(args, 'src', SRC), getattr(args, 'out', OUT))
    print(f'student: {len(files)} lab(s) written to {Path(files[0]).parent}')
    return files

if __name__ == '__main__': main()
