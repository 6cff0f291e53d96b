"""Start JupyterLab on 127.0.0.1 with a token and isolated config folders, open a notebook with a widget panel,
run it in real Chromium, edit a cell of the heterogeneity matrix, and assert that the displayed metrics change."""
import json, os, secrets, shutil, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path
import pytest
from conftest import ROOT
from browser import browser, free_port, require_browser

PANEL_CELL = '''from hetfl_explore.widgets.explorers import MatrixEditor
panel = MatrixEditor(preset='spawrious_gsc')
panel'''

def write_notebook(folder: Path) -> Path:
    "A one-cell notebook showing the matrix editor panel."
    nb = {'cells': [{'cell_type': 'code', 'execution_count': None, 'id': 'panel', 'metadata': {}, 'outputs': [],
                     'source': PANEL_CELL}],
          'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    path = folder/'panel.ipynb'; path.write_text(json.dumps(nb)); return path

@pytest.fixture
def lab():
    "A JupyterLab server in a temporary root with every Jupyter/IPython folder isolated; yields (url, token, root)."
    require_browser()
    tmp = Path(tempfile.mkdtemp(prefix='hetfl-lab-'))
    env = dict(os.environ, **{k: str(tmp/k.lower()) for k in ('JUPYTER_CONFIG_DIR', 'JUPYTER_DATA_DIR',
               'JUPYTER_RUNTIME_DIR', 'IPYTHONDIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME')}, OMP_NUM_THREADS='1')
    # the server runs from this environment, so its native `python3` kernel is this environment's Python
    root = tmp/'work'; root.mkdir(); write_notebook(root)
    subprocess.run([sys.executable, '-m', 'jupyter', 'labextension', 'disable',
                    '@jupyterlab/apputils-extension:announcements'], env=env, capture_output=True)
    token, port = secrets.token_hex(16), free_port()
    log = open(tmp/'lab.log', 'w')
    proc = subprocess.Popen([sys.executable, '-m', 'jupyter', 'lab', '--no-browser', f'--port={port}', '--ip=127.0.0.1',
                             f'--IdentityProvider.token={token}', f'--ServerApp.root_dir={root}',
                             '--LabApp.expose_app_in_browser=True'] + (['--allow-root'] if os.geteuid() == 0 else []),
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f'http://127.0.0.1:{port}'
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f'{url}/api/status?token={token}', timeout=1); break
            except Exception: time.sleep(0.5)
        else: pytest.fail('JupyterLab did not start within 60 s:\n' + (tmp/'lab.log').read_text()[-3000:])
        yield url, token, root
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()
        log.close(); shutil.rmtree(tmp, ignore_errors=True)

def test_matrix_editor_updates_metrics_in_jupyterlab(lab):
    url, token, root = lab
    with browser() as b:
        page = b.new_page(viewport={'width': 1400, 'height': 1000})
        page.goto(f'{url}/lab/tree/panel.ipynb?token={token}', wait_until='domcontentloaded')
        page.wait_for_function('window.jupyterapp && document.querySelector(".jp-Notebook")', timeout=60000)
        page.wait_for_function('''() => { const w = window.jupyterapp.shell.currentWidget;
            return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel &&
                   w.sessionContext.session.kernel.status === "idle"; }''', timeout=60000)
        page.evaluate('window.jupyterapp.commands.execute("notebook:run-all-cells")')
        metrics = page.locator('.hx-metrics').first
        metrics.wait_for(timeout=60000)
        page.wait_for_selector('.js-plotly-plot path.point', timeout=30000)   # the simplex of client types drew
        before = metrics.inner_text()
        cell = page.locator('.hx-cell input').first
        cell.click(); cell.fill('0'); cell.press('Enter')
        page.wait_for_function('(b) => { const m = document.querySelector(".hx-metrics"); return m && m.innerText !== b; }',
                               arg=before, timeout=30000)
        after = metrics.inner_text()
        (ROOT/'test-artifacts').mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT/'test-artifacts'/'lab-panel.png'))
        assert after != before
