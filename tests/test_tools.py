"""The install helpers: apt lines are found and dry-run, a line that adds Debian's npm beside another Node.js fails
naming the conflict, and the environment check names what is supported."""
import shutil, subprocess, sys
import pytest
from conftest import ROOT
sys.path.insert(0, str(ROOT / 'tools'))
import apt_dry_run, verify_env

def test_apt_lines_are_the_commands_only():
    lines = apt_dry_run.apt_lines()
    assert [f for f, _ in lines] == ['tools/browsers.sh'], lines     # comments and quoted messages are not counted
    assert apt_dry_run.packages(lines[0][1], ['chromium']) == ['chromium']
    assert apt_dry_run.packages(' -y -qq chromium npm >/dev/null', []) == ['chromium', 'npm']

def test_browser_plan_never_names_npm_beside_node():
    plan = apt_dry_run.browser_plan()
    if shutil.which('node'): assert 'npm' not in plan and 'nodejs' not in plan
    assert ('chromium' in plan) == (shutil.which('chromium') is None)

def _node_conflicts_with_npm() -> bool:
    if not (shutil.which('apt-get') and shutil.which('dpkg-query')): return False
    r = subprocess.run(['dpkg-query', '-W', '-f=${Conflicts}', 'nodejs'], capture_output=True, text=True)
    return r.returncode == 0 and 'npm' in r.stdout

@pytest.mark.skipif(not _node_conflicts_with_npm(), reason="needs apt and a Node.js package that conflicts with Debian's npm")
def test_a_line_adding_npm_fails_naming_it(capsys):
    assert apt_dry_run.main(['--line', 'apt-get install -y chromium npm >/dev/null']) == 1
    assert 'conflicts npm' in capsys.readouterr().out

@pytest.mark.skipif(not shutil.which('apt-get'), reason='needs apt-get')
def test_project_apt_lines_pass():
    assert apt_dry_run.main([]) == 0

def test_verify_env_names_the_supported_range():
    assert verify_env.python_problem((3, 11)) is None
    msg = verify_env.python_problem((3, 8))
    assert 'Python 3.8 is not supported' in msg and '3.10' in msg
    assert verify_env.torch_problem() is None                        # the tested pair loads together
