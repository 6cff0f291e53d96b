"""Helpers for the browser tests: find Chromium, launch it headless for this closed network, serve a folder."""
import contextlib, functools, http.server, os, shutil, socket, threading
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
