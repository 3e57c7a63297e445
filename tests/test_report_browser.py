"""The ``leansvm fit`` report in a real headless browser (Debian's Chromium + ChromeDriver via Selenium).

Skipped only where no browser is installed (``.ci/run`` installs Debian's
``chromium`` and ``chromium-driver``). Checks: the page loads, the browser
console has no errors, and every plot is shown (each image decoded: its
``naturalWidth`` is positive). A control page with a broken image and a
console error proves the checks can fail.
"""

import os
import shutil

import pytest
from sklearn.datasets import make_moons

from leansvm.job.classification import fit_lean_classification as fit_lean
from leansvm.job.report import write_report

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (dev extra)")


def _find(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = os.environ.get("LEANSVM_CHROMIUM") or _find("chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER = os.environ.get("LEANSVM_CHROMEDRIVER") or _find("chromedriver")

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="no Chromium/ChromeDriver installed (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def open_and_check(driver, path):
    """(console errors, images with their decoded widths, plot count the page declares)."""
    driver.get_log("browser")  # drop anything from an earlier page
    driver.get("file://" + os.path.abspath(path))
    images = driver.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight]);")
    declared = driver.execute_script(
        "const m = document.querySelector('meta[name=leansvm-plots]'); return m ? Number(m.content) : -1;")
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    return errors, images, declared


@pytest.fixture(scope="module")
def report_path(tmp_path_factory):
    X, y = make_moons(360, noise=0.25, random_state=0)
    result = fit_lean(X[:260], y[:260], X_test=X[260:], y_test=y[260:], Cs=[1.0, 10.0], gammas=[0.5, 2.0],
                      size_fractions=(0.2,))
    path = tmp_path_factory.mktemp("report") / "report.html"
    names = write_report(result, path)
    assert {"surface", "accuracy-size", "cost", "boundaries"} <= set(names)
    return path, names


def test_report_loads_without_console_errors_and_shows_every_plot(browser, report_path):
    path, names = report_path
    errors, images, declared = open_and_check(browser, path)
    assert errors == []
    assert browser.title.startswith("leansvm fit report")
    assert declared == len(names) == len(images)
    for alt, complete, width, height in images:
        assert complete and width > 0 and height > 0, f"plot {alt!r} not decoded"
    # the plots are laid out on the page (not hidden, non-zero rendered size)
    shown = browser.execute_script(
        "return Array.from(document.images).map(i => i.getBoundingClientRect().width > 0);")
    assert all(shown)


@pytest.mark.parametrize("task", ["regression", "novelty"])
def test_one_output_reports_load_and_show_every_plot(browser, tmp_path, task):
    """The regression and novelty reports (write_report of their results) in the same browser."""
    import numpy as np
    from sklearn.datasets import make_friedman1

    from leansvm.job.novelty import fit_lean_novelty
    from leansvm.job.regression import fit_lean_regression
    from leansvm.job.report import write_report

    if task == "regression":
        X, z = make_friedman1(500, n_features=5, noise=0.3, random_state=0)
        result = fit_lean_regression(X[:400], z[:400], X_test=X[400:], y_test=z[400:], Cs=(1.0, 10.0),
                                     gamma_factors=(0.5, 2.0), size_fractions=(0.2,))
    else:
        X = np.random.default_rng(0).normal(size=(500, 3))
        result = fit_lean_novelty(X[:400], X_test=X[400:], y_test=np.ones(100), size_fractions=(0.2,))
    path = tmp_path / "report.html"
    names = write_report(result, path)
    errors, images, declared = open_and_check(browser, path)
    assert errors == [] and declared == len(names) == len(images) == (5 if task == "regression" else 3)
    for alt, complete, width, height in images:
        assert complete and width > 0 and height > 0, f"plot {alt!r} not decoded"


def test_the_checks_catch_a_broken_page(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"><title>x</title></head><body>'
                    '<img alt="bad" src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom")</script></body></html>')
    errors, images, declared = open_and_check(browser, page)
    assert any("boom" in e["message"] for e in errors)
    assert images[0][2] == 0  # naturalWidth of an undecodable image
    assert declared == -1
