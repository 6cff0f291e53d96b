"""Helpers for the browser tests and the browser benchmark: find Chromium, launch it headless for this closed network,
serve a folder, start JupyterLab on a notebook, and time a matrix-editor edit in the page."""
import contextlib, functools, http.server, json, os, secrets, shutil, socket, subprocess, sys, tempfile, threading, time
import urllib.request
from pathlib import Path
import pytest
from conftest import browser_required

CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                 '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

def chromium_path() -> str | None:
    "The Debian Chromium binary, if installed."
    return os.environ.get('HETFL_CHROMIUM') or shutil.which('chromium') or shutil.which('chromium-browser')

def require_browser():
    "Skip (locally) or fail (in CI) when Chromium or Playwright is missing, saying why."
    why = None
    try: import playwright.sync_api  # noqa: F401
    except ImportError: why = 'the playwright package is not installed'
    if why is None and not chromium_path(): why = 'Chromium is not installed (apt-get install chromium)'
    if why:
        if browser_required(): pytest.fail(f'browser tests are required here but {why}')
        pytest.skip(why)
    return chromium_path()

@contextlib.contextmanager
def browser():
    "A headless Chromium page factory (Playwright, no browser download)."
    from playwright.sync_api import sync_playwright
    exe = require_browser()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try: yield b
        finally: b.close()

def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

@contextlib.contextmanager
def serve(folder: Path):
    "Serve `folder` over HTTP on 127.0.0.1; yields the base URL."
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    handler = functools.partial(Quiet, directory=str(folder))
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', free_port()), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True); t.start()
    try: yield f'http://127.0.0.1:{srv.server_address[1]}'
    finally: srv.shutdown(); srv.server_close()

EDITOR_CELL = '''from hetfl_explore.widgets.editor import MatrixEditor
panel = MatrixEditor(preset='spawrious_gsc')
panel'''

def write_notebook(folder: Path, cells: list, name: str = 'panel.ipynb') -> Path:
    "A notebook of code `cells` (sources) in `folder`."
    nb = {'cells': [{'cell_type': 'code', 'execution_count': None, 'id': f'c{i}', 'metadata': {}, 'outputs': [], 'source': s}
                    for i, s in enumerate(cells)],
          'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    path = folder/name; path.write_text(json.dumps(nb)); return path

def shared_jupyter_folders() -> list:
    "The share/jupyter folders of every environment on `sys.path` (a venv layered on another finds its lab extensions)."
    found = {Path(p).resolve().parents[2]/'share'/'jupyter' for p in sys.path if p.endswith('site-packages')}
    return sorted(str(f) for f in found if f.is_dir())

@contextlib.contextmanager
def jupyter_lab(notebooks: dict):
    """A JupyterLab server on 127.0.0.1 with a token, in a temporary root holding `notebooks` (name -> list of cell
    sources) and with every Jupyter/IPython folder isolated; yields (url, token, root)."""
    tmp = Path(tempfile.mkdtemp(prefix='hetfl-lab-'))
    env = dict(os.environ, **{k: str(tmp/k.lower()) for k in ('JUPYTER_CONFIG_DIR', 'JUPYTER_DATA_DIR',
               'JUPYTER_RUNTIME_DIR', 'IPYTHONDIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME')}, OMP_NUM_THREADS='1',
               JUPYTER_PATH=os.pathsep.join(shared_jupyter_folders() + [os.environ.get('JUPYTER_PATH', '')]))
    # the server runs from this environment, so its native `python3` kernel is this environment's Python
    root = tmp/'work'; root.mkdir()
    for name, cells in notebooks.items(): write_notebook(root, cells, name)
    tracker = tmp/'jupyter_config_dir'/'lab'/'user-settings'/'@jupyterlab'/'notebook-extension'/'tracker.jupyterlab-settings'
    tracker.parent.mkdir(parents=True); tracker.write_text(json.dumps({'windowingMode': 'none'}))   # render every cell
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
        else: raise RuntimeError('JupyterLab did not start within 60 s:\n' + (tmp/'lab.log').read_text()[-3000:])
        yield url, token, root
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()
        log.close(); shutil.rmtree(tmp, ignore_errors=True)

def run_notebook(page, url: str, token: str, name: str, timeout_ms: int = 60000):
    "Open notebook `name` in JupyterLab, wait for its kernel and run all its cells."
    page.goto(f'{url}/lab/tree/{name}?token={token}', wait_until='domcontentloaded')
    page.wait_for_function('window.jupyterapp && document.querySelector(".jp-Notebook")', timeout=timeout_ms)
    page.wait_for_function('''() => { const w = window.jupyterapp.shell.currentWidget;
        return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel &&
               w.sessionContext.session.kernel.status === "idle"; }''', timeout=timeout_ms)
    page.evaluate('window.jupyterapp.commands.execute("notebook:run-all-cells")')
