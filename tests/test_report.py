"""The run report: one self-contained HTML page, opened in a real browser.

The browser tests drive Debian's ``chromium`` through ``chromedriver`` (both installed by
``.ci/run`` where missing, which also sets ``PLAUSIBLE_BROWSER_REQUIRED`` so that they fail
rather than skip without them); each checks that every section is there, that the item table
holds every item and sorts and filters, that the console has no errors and that the page
fetched nothing, and saves a screenshot of each section under ``test-artifacts/report/``
(or ``$PLAUSIBLE_ARTIFACTS/report/``).
"""

import base64
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import cli
from plausible.report import SECTIONS, STAGES, report_html
from plausible.report.page import CSP

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("PLAUSIBLE_ARTIFACTS",
                                Path(__file__).resolve().parents[1] / "test-artifacts")) / "report"


def crowd(n_items=60, n_annotators=12, per_item=4, classes=("cat", "dog", "fox"), spammers=(),
          accuracy=0.8, seed=0) -> pd.DataFrame:
    """A crowd-kit table: each item labelled by ``per_item`` annotators, right with
    probability ``accuracy``, the ``spammers`` (annotator numbers) answering at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = rng.integers(len(classes))
        for a in rng.choice(n_annotators, per_item, replace=False):
            right = a not in spammers and rng.random() < accuracy
            rows.append((f"item{i}", f"ann{a}", classes[truth if right else
                                                        rng.integers(len(classes))]))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def html_table(page: str, id: str) -> pd.DataFrame:
    """The table ``id`` of a report page, its cells as text."""
    table = re.search(rf'<table id="{id}".*?</table>', page, re.S).group(0)
    head = re.findall(r"<th>(.*?)</th>", table)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]
    return pd.DataFrame(rows, columns=head)


@pytest.fixture(scope="module")
def dawid_skene():
    return pl.aggregate(crowd(), "dawid-skene", draws=300, seed=0)


# ---- the page, without a browser ----------------------------------------------------------


def test_the_page_holds_every_section_every_item_and_fetches_nothing(dawid_skene):
    page = report_html(dawid_skene, draws=50)
    for section in SECTIONS:
        assert f'<section id="{section}">' in page
    assert len(html_table(page, "item-table")) == 60
    assert CSP in page
    assert not re.search(r'(src|href)="(?!data:|#)', page)  # images inline, links in-page


def test_progress_is_told_each_stage_in_order(dawid_skene):
    stages = []
    report_html(dawid_skene, draws=20, progress=stages.append)
    assert stages == list(STAGES)


def test_binary_models_show_sensitivity_and_specificity_and_mace_flags_spammers():
    binary = crowd(classes=("no", "yes"), seed=1)
    page = report_html(pl.aggregate(binary, "dawid-skene", draws=200, seed=0), draws=20)
    assert "sensitivity_q05" in page and "Sensitivity and specificity" in page
    spammy = crowd(n_items=150, n_annotators=10, per_item=5, spammers=(0, 1), accuracy=0.9,
                   seed=2)
    mace = pl.aggregate(spammy, "mace", draws=300, seed=0)
    table = html_table(report_html(mace, draws=20), "annotator-table").set_index("annotator")
    assert table.loc[["ann0", "ann1"], "likely_spammer"].eq("yes").all()
    assert table.drop(["ann0", "ann1"])["likely_spammer"].eq("no").all()


def test_ordered_probit_flags_the_annotators_who_answer_at_random():
    """Grades perceived with a little noise, two of ten annotators answering uniformly: the
    report flags exactly those two."""
    rng = np.random.default_rng(5)
    truth = rng.integers(5, size=150)
    rows = []
    for i in range(150):
        for a in rng.choice(10, 5, replace=False):
            grade = (rng.integers(5) if a < 2 else
                     int(np.clip(np.rint(truth[i] + 0.4 * rng.standard_normal()), 0, 4)))
            rows.append((f"item{i}", f"ann{a}", grade))
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    result = pl.aggregate(frame, "ordered-probit", draws=300, seed=0)
    table = html_table(report_html(result, draws=20), "annotator-table").set_index("annotator")
    assert table.loc[["ann0", "ann1"], "likely_spammer"].eq("yes").all()
    assert table.drop(["ann0", "ann1"])["likely_spammer"].eq("no").all()


def test_the_checks_say_what_the_model_misses():
    """Votes of items that are unanimous or evenly split, which no Dirichlet with one
    concentration reproduces: the check names the missed statistics."""
    counts = np.vstack([np.tile([[10, 0, 0]], (40, 1)), np.tile([[4, 3, 3]], (40, 1))])
    result = pl.aggregate(pl.data.Votes.from_counts(counts), "dirichlet", seed=0)
    checks = report_html(result, draws=100).split('id="checks"')[1]
    assert "The model misses" in checks


def test_a_run_saved_and_reported_from_the_command_line_is_the_report_in_python(
        dawid_skene, tmp_path):
    saved = dawid_skene.save(tmp_path / "run.nc")
    assert cli.main(["report", str(saved), "-o", str(tmp_path / "r.html")]) == 0
    written = (tmp_path / "r.html").read_text()
    assert written == report_html(pl.load(saved))
    assert cli.main(["report", str(saved), "-o", str(tmp_path / "r.pdf")]) == 2


def test_reporting_a_file_that_is_not_a_saved_run_says_so(tmp_path, capsys):
    table = tmp_path / "labels.csv"
    crowd(n_items=5).to_csv(table, index=False)
    assert cli.main(["report", str(table), "-o", str(tmp_path / "r.html")]) == 2
    error = capsys.readouterr().err
    assert "labels.csv is not a saved plausible aggregation" in error and len(
        error.strip().splitlines()) == 1


def test_report_help_describes_the_page(capsys):
    assert cli.main(["report", "--help"]) == 0
    text = capsys.readouterr().out
    assert "Every item" in text and "self-contained" in text
    assert "plausibility_<class>" not in text  # aggregate's columns are aggregate's


# ---- in a real browser --------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        missing = ("Debian's chromium and chromium-driver are not installed (.ci/run installs "
                   "them: apt-get install chromium chromium-driver)")
        if os.environ.get("PLAUSIBLE_BROWSER_REQUIRED"):
            pytest.fail(missing)
        pytest.skip(missing)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking", "--disable-sync",
                 "--disable-component-update", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def open_page(browser, path: Path) -> list[str]:
    """Open ``path``; the console's errors (uncaught exceptions, refused requests)."""
    browser.get_log("browser")  # drop what an earlier page left
    browser.get(path.resolve().as_uri())
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE"]


def screenshots(browser, name: str) -> None:
    """One PNG per section, whole (beyond the window), under :data:`ARTIFACTS`."""
    from selenium.webdriver.common.by import By

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script("document.querySelector('nav').style.position = 'static'")
    for section in browser.find_elements(By.CSS_SELECTOR, "section"):
        x, y, width, height = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return [r.left + scrollX, r.top + scrollY, r.width, r.height];", section)
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": x, "y": y, "width": width, "height": min(height, 8000), "scale": 1}})
        path = ARTIFACTS / f"{name}-{section.get_attribute('id')}.png"
        path.write_bytes(base64.b64decode(shot["data"]))


def check_in_browser(browser, result, path: Path, name: str, column: str = "certainty_top1",
                     **options) -> None:
    """Write ``result``'s report to ``path`` and check it in the browser; the item table is
    sorted by ``column`` (ascending: the item with its smallest value first)."""
    from selenium.webdriver.common.by import By

    result.report(path, **options)
    errors = open_page(browser, path)
    assert errors == []
    for section in SECTIONS:
        assert browser.find_element(By.ID, section).is_displayed()
    assert browser.execute_script(
        "return performance.getEntriesByType('resource').length") == 0  # nothing fetched
    images = browser.find_elements(By.CSS_SELECTOR, "figure img")
    assert images and all(browser.execute_script(
        "return arguments[0].complete && arguments[0].naturalWidth > 0", img) for img in images)
    rows = browser.find_elements(By.CSS_SELECTOR, "#item-table tbody tr")
    assert len(rows) == result.sizes["item"]
    header = next(th for th in browser.find_elements(By.CSS_SELECTOR, "#item-table th")
                  if th.text == column)
    header.click()  # ascending: the least certain item first
    first = browser.find_element(By.CSS_SELECTOR, "#item-table tbody tr").text
    least = result.labels()[column].idxmin()
    assert first.startswith(f"{least} ")
    item = str(result.labels().index[-1])
    box = browser.find_element(By.CSS_SELECTOR, 'input.filter[data-table="item-table"]')
    box.send_keys(item)
    shown = [r for r in browser.find_elements(By.CSS_SELECTOR, "#item-table tbody tr")
             if r.is_displayed()]
    assert 1 <= len(shown) < len(rows) and all(item in r.text for r in shown)
    browser.execute_script("arguments[0].value = '';"
                           "arguments[0].dispatchEvent(new Event('input'))", box)
    assert all(r.is_displayed() for r in rows)
    screenshots(browser, name)


def test_the_harness_sees_console_errors_and_refused_requests(browser, tmp_path):
    """The browser checks can fail: a script error and an external image (refused by the
    page's policy) both reach the console."""
    page = tmp_path / "broken.html"
    page.write_text(f'<html><head><meta http-equiv="Content-Security-Policy" content="{CSP}">'
                    '</head><body><img src="https://example.org/x.png">'
                    "<script>notDefined();</script></body></html>")
    errors = open_page(browser, page)
    assert any("notDefined" in e for e in errors)
    assert any("example.org" in e for e in errors)


def test_report_of_a_label_model_in_the_browser(browser, dawid_skene, tmp_path):
    check_in_browser(browser, dawid_skene, tmp_path / "crowd.html", "crowd-dawid-skene",
                     draws=50)


def test_reports_of_label_sets_and_comparisons_in_the_browser(browser, tmp_path):
    """The multi-label report (sorted by each item's expected Hamming accuracy) and the
    comparisons' (by certainty of the modal rank) open, show every section and item, and
    sort and filter."""
    sets = pl.data.simulate_label_sets(n_items=40, seed=2).data
    check_in_browser(browser, pl.aggregate(sets, draws=150, chains=2, seed=0),
                     tmp_path / "sets.html", "multi-label", column="expected_hamming_accuracy",
                     draws=50)
    rng = np.random.default_rng(1)
    worth = np.linspace(2.0, -2.0, 15)
    rows = []
    for k in range(300):
        i, j = rng.choice(15, 2, replace=False)
        won = rng.random() < 1 / (1 + np.exp(worth[j] - worth[i]))
        rows.append((f"w{k % 5}", f"o{i}", f"o{j}", f"o{i}" if won else f"o{j}"))
    pairs = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    check_in_browser(browser, pl.aggregate(pairs, draws=150, chains=2, seed=0),
                     tmp_path / "pairs.html", "noisy-bradley-terry", draws=50)


@pytest.mark.data
def test_report_of_dawid_skene_on_snow_rte_in_the_browser(browser, data_home, tmp_path):
    rte = pl.data.load_snow2008("rte", data_home).annotations
    result = pl.aggregate(rte, "dawid-skene", draws=200, chains=2, seed=0)  # a page, not a fit
    check_in_browser(browser, result, tmp_path / "rte.html", "rte-dawid-skene", draws=20)


@pytest.mark.data
@pytest.mark.slow
def test_report_of_prirn_on_dermatology_in_the_browser(browser, data_home, tmp_path):
    rankings = pl.data.load_dermatology(data_home).rankings.subset(slice(0, 400))  # a page
    result = pl.aggregate(rankings, "prirn", draws=200, chains=2, seed=0)
    assert "plausibility_candidates" in result.trace["posterior"]  # 419 classes, few named
    check_in_browser(browser, result, tmp_path / "dermatology.html", "dermatology-prirn",
                     draws=20)


@pytest.mark.data
def test_report_of_a_ratings_run_in_the_browser(browser, data_home, tmp_path):
    anger = pl.data.load_snow2008("anger", data_home).annotations
    result = pl.aggregate(anger, "censored-normal-inverse-gamma", threshold=50, seed=0,
                          draws=200, chains=2,
                          scale=(0, 100), resolution=1)
    check_in_browser(browser, result, tmp_path / "anger.html", "anger-ratings")

