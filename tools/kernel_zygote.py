#!/usr/bin/env python
"""Notebook kernels that start with the heavy libraries already imported, for the docs build.

Importing torch, NumPy, SciPy, pandas and scikit-learn took about 2 of the 3.3 CPU seconds each notebook's kernel
spent before its first cell, 75 times per docs build. A zygote process imports them once and forks one fresh process
per kernel (the way Android starts apps and PyTorch's DataLoader starts workers):

    zygote:    python tools/kernel_zygote.py serve SOCKET      imports PRELOAD, then forks a kernel per request
    launcher:  python tools/kernel_zygote.py launch SOCKET -- -m ipykernel_launcher -f CONNECTION_FILE

`ZygoteKernelManager` gives jupyter_client the launcher's command instead of `python -m ipykernel_launcher`. The
launcher, a small process that imports nothing heavy, asks the zygote for a kernel with its own working directory,
environment and arguments, forwards the signals it gets (interrupt, terminate) to that kernel and exits when the kernel
does; a kernel exits when its launcher is gone (jupyter_client kills the launcher). Each kernel is a new process:
modules not in PRELOAD, the notebook's own state and every random generator start as in a fresh interpreter (nothing
in PRELOAD draws a random number on import; the global generators of Python, NumPy and torch, seeded at random in a new
process, are seeded afresh). Unlike fresh interpreters, the kernels share the zygote's string-hash seed, as under a fixed
`PYTHONHASHSEED`. Only libraries that do not look at the IPython environment when imported
are preloaded (plotly picks its renderer on import, so it is not).
"""
from __future__ import annotations
import json, os, signal, socket, sys, threading, time

# what (almost) every kernel imports; jsonschema comes with plotly's renderers (through nbformat) on a figure's first
# show, and builds its IRI grammar (rfc3987_syntax) on import: 1.2 s of every notebook that shows a figure
PRELOAD = ('numpy', 'torch', 'torch.nn.functional', 'torch.func', 'scipy.optimize', 'scipy.stats', 'scipy.sparse',
           'pandas', 'sklearn.metrics', 'sklearn.linear_model', 'ipykernel.kernelapp', 'nbformat', 'jsonschema')
POLL_S = 0.05   # how often a launcher checks its kernel is alive, and a kernel its launcher
# pandas imports pyarrow where it is installed (the `flower` extra brings it), and pyarrow's jemalloc starts a background
# thread unless told not to: the zygote must stay single-threaded to fork.
NO_BACKGROUND_THREADS = {'JE_ARROW_MALLOC_CONF': 'background_thread:false'}
READY = b'ready\n'   # the zygote's first line on stdout, once PRELOAD is imported and the socket listens

def alive(pid: int) -> bool:
    "Whether process `pid` exists and has not exited (a zombie, exited but not yet reaped, counts as gone)."
    try:
        with open(f'/proc/{pid}/stat') as f: return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, ProcessLookupError, IndexError): return False

def recv_line(conn: socket.socket) -> bytes:
    "Bytes from `conn` up to a newline (or its end)."
    buf = b''
    while not buf.endswith(b'\n'):
        chunk = conn.recv(65536)
        if not chunk: break
        buf += chunk
    return buf

# ---------------------------------------------------------------- the zygote
def become_kernel(request: dict) -> None:
    "In the forked child: take the launcher's directory, environment and arguments and run the kernel; never returns."
    code = 0
    try:
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE): signal.signal(sig, signal.SIG_DFL)
        os.chdir(request['cwd'])
        os.environ.clear(); os.environ.update(request['env'])
        os.environ.pop('JPY_PARENT_PID', None)   # ipykernel would watch for a parent change; the launcher is watched below
        argv = request['argv']
        if argv[:1] != ['-m'] or len(argv) < 2: raise SystemExit(f'kernel_zygote: expected "-m MODULE ...", got {argv}')
        sys.argv, sys.path[0] = [argv[1], *argv[2:]], request['cwd']   # as `python -m MODULE` sees them
        import random; random.seed()   # the generators seeded from the OS on import: fresh, not the zygote's state
        if 'numpy' in sys.modules: sys.modules['numpy'].random.seed()
        if 'torch' in sys.modules: sys.modules['torch'].seed()   # torch, too, seeds itself at random in a new process
        launcher = request['launcher_pid']
        def watch():   # a kernel whose launcher was killed has no one left to stop it
            while alive(launcher): time.sleep(POLL_S)
            os._exit(1)
        threading.Thread(target=watch, daemon=True).start()
        import runpy
        runpy.run_module(argv[1], run_name='__main__', alter_sys=True)
    except SystemExit as e: code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback; traceback.print_exc(); code = 1
    finally:
        import atexit
        atexit._run_exitfuncs()   # what a normal interpreter exit runs
        for f in (sys.stdout, sys.stderr):
            try: f.flush()
            except Exception: pass
        os._exit(code)

def serve(path: str) -> None:
    "Import PRELOAD, listen on the Unix socket `path` and fork a kernel for each request (a JSON line)."
    import importlib
    os.environ.update(NO_BACKGROUND_THREADS)
    for m in PRELOAD: importlib.import_module(m)
    if len(os.listdir('/proc/self/task')) > 1:   # forking a process with threads (an OpenMP or BLAS pool) is unsafe
        sys.exit('kernel_zygote: the preloaded libraries started threads (is OMP_NUM_THREADS 1?); not forking kernels')
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind(path); srv.listen(16)
    signal.signal(signal.SIGCHLD, reap)   # kernels are this process's children: collect each one's exit status
    sys.stdout.buffer.write(READY); sys.stdout.flush()
    while True:
        conn, _ = srv.accept()
        with conn:
            request = json.loads(recv_line(conn))
            pid = os.fork()
            if pid == 0:
                srv.close(); conn.close()
                os.setsid()   # its own session, like a kernel jupyter_client starts
                become_kernel(request)
            conn.sendall(f'{pid}\n'.encode())

def reap(_sig=None, _frame=None) -> None:
    "Collect the exit status of every kernel that has exited (so none stays a zombie)."
    try:
        while os.waitpid(-1, os.WNOHANG)[0]: pass
    except ChildProcessError: pass

# ---------------------------------------------------------------- the launcher
def launch(path: str, argv: list[str]) -> int:
    "Ask the zygote at `path` for a kernel running `argv`; forward signals to it; return once it has exited."
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(json.dumps(dict(argv=argv, cwd=os.getcwd(), env=dict(os.environ), launcher_pid=os.getpid())).encode() + b'\n')
        pid = int(recv_line(conn))
    def forward(sig, _frame):
        try: os.kill(pid, sig)
        except ProcessLookupError: pass
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    while alive(pid): time.sleep(POLL_S)
    return 0

# ---------------------------------------------------------------- for jupyter_client
def start(path: str, env: dict | None = None, timeout: float = 120.0):
    "Start a zygote listening on `path` (a new Unix socket); returns its `Popen` once it is ready."
    import subprocess
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), 'serve', path], stdout=subprocess.PIPE, env=env)
    line = p.stdout.readline()   # blocks until PRELOAD is imported, or the zygote died
    if line != READY:
        p.kill(); p.wait()
        raise RuntimeError(f'kernel_zygote: the zygote did not start (exit code {p.returncode})')
    return p

def manager_class():
    "A `jupyter_client` `KernelManager` whose kernels come from the zygote named by $HETFL_KERNEL_ZYGOTE."
    from jupyter_client.manager import KernelManager

    class ZygoteKernelManager(KernelManager):
        "Kernels forked from the zygote: the kernel spec's `python -m ipykernel_launcher ...`, behind this file's launcher."
        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            return [sys.executable, os.path.abspath(__file__), 'launch', os.environ['HETFL_KERNEL_ZYGOTE'], '--', *cmd[1:]]
    return ZygoteKernelManager

if __name__ == '__main__':
    if sys.argv[1:2] == ['serve']: serve(sys.argv[2])
    elif sys.argv[1:2] == ['launch'] and sys.argv[3:4] == ['--']: sys.exit(launch(sys.argv[2], sys.argv[4:]))
    else: sys.exit(__doc__)
