"""The matrix editor with no kernel: its saved widget state in a static page loaded as the documentation site loads
widgets (tests/editor_page.py), opened in headless Chromium. Typing a count redraws the readout, the simplex and the
selection shares; every bad value is refused with its own message, the last valid value comes back and the readout
never shows NaN; presets, κ and rows work in the page. Screenshots go to `test-artifacts/`."""
import tempfile
from pathlib import Path
import pytest
from conftest import ROOT
from browser import browser, require_browser, serve
from editor_page import static_editor_page, wait_for_page_editor
from hetfl_explore.widgets.editor import MatrixEditor

VIEWPORT = {'width': 1280, 'height': 900}

@pytest.fixture(scope='module')
def page_url():
    "The static editor page (spawrious_gsc) served on 127.0.0.1; yields its URL."
    require_browser()
    with tempfile.TemporaryDirectory() as d:
        static_editor_page(Path(d), MatrixEditor('spawrious_gsc'))
        with serve(Path(d)) as base: yield f'{base}/editor.html'

@pytest.fixture
def page(page_url):
    "A fresh page on the editor, drawn; fails the test on any page error."
    with browser() as b:
        p = b.new_page(viewport=VIEWPORT); errors = []
        p.on('pageerror', lambda e: errors.append(str(e)))
        p.goto(page_url); wait_for_page_editor(p)
        yield p
        assert not errors, errors

def readout(page): return page.locator('.hx-editor .hx-metrics').inner_text()
def points(page): return page.locator('.hx-editor .hx-simplex circle.hx-point').evaluate_all('cs => cs.map(c => [c.getAttribute("cx"), c.getAttribute("cy"), c.getAttribute("r")])')
def message(page): return page.locator('.hx-editor .hx-message').inner_text()
def commit(page, locator, text): locator.fill(text); locator.press('Enter')

def test_typing_a_count_redraws_readout_simplex_and_shares_without_a_kernel(page):
    root = page.locator('.hx-editor')
    assert 'hetfl-kernel-free' in root.get_attribute('class') and 'make lab' in root.inner_text()
    r0, p0, drawn = readout(page), points(page), root.get_attribute('data-shares-drawn')
    assert 'GSC\t0.163' in r0 and len(p0) == 6 and 'NaN' not in r0
    commit(page, page.locator('.hx-editor .hx-cell input').first, '0')
    page.wait_for_function('(d) => document.querySelector(".hx-editor").dataset.sharesDrawn !== d', arg=drawn)
    assert readout(page) != r0 and points(page)[0] != p0[0] and message(page) == ''
    assert '4620 samples' in readout(page)                     # row 0 holds 2 clients: 2 × 90 samples fewer
    (ROOT/'test-artifacts').mkdir(exist_ok=True)
    root.screenshot(path=str(ROOT/'test-artifacts'/'static-matrix-editor.png'))

BAD = {'-5': 'negative', '2.5': 'not a whole number', 'abc': 'not a number', '': 'empty', '1e9': 'scientific notation',
       '5000000': 'too large'}

def test_every_bad_value_is_refused_with_its_own_message_and_the_last_value_comes_back(page):
    cell, before = page.locator('.hx-editor .hx-cell input').first, readout(page)
    for text, why in BAD.items():
        commit(page, cell, text)
        page.wait_for_function('(w) => document.querySelector(".hx-editor .hx-message").innerText.includes(w)', arg=why)
        assert cell.input_value() == '90' and readout(page) == before and 'NaN' not in readout(page), text
        assert sum(w in message(page) for w in BAD.values()) == 1, message(page)    # the previous message is gone
    commit(page, cell, '80'); page.wait_for_function('() => document.querySelector(".hx-editor .hx-message").innerText === ""')
    assert readout(page) != before

def test_a_row_of_zeros_a_zero_multiplicity_and_the_last_row_are_refused(page):
    cells = page.locator('.hx-editor .hx-row').nth(5).locator('.hx-cell input')
    for i in range(3): commit(page, cells.nth(i), '0')
    before = readout(page); commit(page, cells.nth(3), '0')
    assert 'every count would be 0' in message(page) and cells.nth(3).input_value() == '10' and readout(page) == before
    mult = page.locator('.hx-editor .hx-mult').first; commit(page, mult, '0')
    assert 'below 1' in message(page) and mult.input_value() == '2'
    for _ in range(5): page.locator('.hx-editor .hx-remove').first.click()
    assert page.locator('.hx-editor .hx-row').count() == 1 and 'NaN' not in readout(page)
    page.locator('.hx-editor .hx-remove').first.click()
    assert 'cannot be removed' in message(page) and page.locator('.hx-editor .hx-row').count() == 1

def test_presets_kappa_and_added_rows_work_in_the_page(page):
    page.locator('.hx-editor .hx-preset').select_option('waterbirds_dist')
    page.wait_for_function('() => document.querySelector(".hx-editor .hx-metrics").innerText.includes("30 clients")')
    assert 'GSC\t0.670\t0.67' in readout(page) and page.locator('.hx-editor .hx-row').count() == 7
    drawn = page.locator('.hx-editor').get_attribute('data-shares-drawn')
    commit(page, page.locator('.hx-editor .hx-k'), '3')
    page.wait_for_function('(d) => document.querySelector(".hx-editor").dataset.sharesDrawn !== d', arg=drawn)
    assert '3 of 30 clients' in page.locator('.hx-editor .hx-shares').inner_text()
    commit(page, page.locator('.hx-editor .hx-k'), '2.5'); assert 'κ' in message(page) and page.locator('.hx-editor .hx-k').input_value() == '3'
    page.locator('.hx-editor .hx-add').click()
    assert page.locator('.hx-editor .hx-row').count() == 8 and '31 clients' in readout(page)
