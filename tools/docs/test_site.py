"""The built documentation site in a real browser: headless Chromium driven by Selenium.

The site (``mkdocs build``, by default ``build/site``; ``ICML26_SITE_DIR`` overrides) is served
over HTTP on localhost from a thread. The landing page, one API page and the claims page must
render with no severe console message, and the search box must find a function by name. A
screenshot of the landing page is saved to ``build/docs-artefacts/landing.png`` (printed).

Needs a Chromium or Chrome binary and its chromedriver on ``PATH`` (Debian: ``chromium``,
``chromium-driver``; GitHub's Ubuntu runners ship Chrome and ``$CHROMEWEBDRIVER``): without
them every test here skips with the reason, or fails where ``ICML26_REQUIRE_BROWSER=1``
(``.ci/run`` and the CI docs job set it). Nothing is installed or downloaded (Selenium
Manager is bypassed by naming the driver).
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

# ICML26_REQUIRE_BROWSER=1 (set by .ci/run and the CI docs job, where a browser is installed)
# turns every skip below into a failure, so CI cannot pass without having opened the site.
REQUIRE_BROWSER = os.environ.get("ICML26_REQUIRE_BROWSER", "") not in ("", "0")


def _skip(reason: str) -> NoReturn:
    if REQUIRE_BROWSER:
        pytest.fail(f"ICML26_REQUIRE_BROWSER is set: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from selenium import webdriver
except ImportError:
    _skip("selenium is not installed")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("ICML26_SITE_DIR", ROOT / "build" / "site"))
ARTEFACTS = ROOT / "build" / "docs-artefacts"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# An API page and a function on it (search must find it by name).
API_PAGE = "papers/ro-hnn/api/"
FUNCTION = "fit_reduction"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def _driver_binary() -> str | None:
    found = shutil.which("chromedriver")
    if found is None and os.environ.get("CHROMEWEBDRIVER"):
        found = shutil.which("chromedriver", path=os.environ["CHROMEWEBDRIVER"])
    return found


def _browser_binary() -> str | None:
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The built site served on an ephemeral localhost port."""
    if not (SITE / "index.html").is_file():
        _skip(f"no built site at {SITE}: run `uv run nox -s docs` (or `mkdocs build`)")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """Headless Chromium (or Chrome), with the browser console log readable."""
    binary, driver = _browser_binary(), _driver_binary()
    if binary is None or driver is None:
        _skip(
            "no headless browser: needs chromium (or google-chrome) and chromedriver on PATH "
            f"(found browser={binary}, driver={driver}); on Debian `apt install chromium "
            "chromium-driver`. This test installs nothing."
        )
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    chrome.set_page_load_timeout(60)
    try:
        yield chrome
    finally:
        chrome.quit()


def _open(browser: webdriver.Chrome, url: str) -> list[dict]:
    """Load ``url`` and return the severe console messages it logged."""
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get(url)
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
    )
    WebDriverWait(browser, 30).until(
        expected_conditions.presence_of_element_located((By.TAG_NAME, "h1"))
    )
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_landing_page(base_url: str, browser: webdriver.Chrome) -> None:
    errors = _open(browser, base_url)
    assert errors == [], errors
    assert browser.find_element(By.TAG_NAME, "h1").text == "icml26"
    # One row per paper, each linking to the package's page.
    rows = browser.find_elements(By.CSS_SELECTOR, "article table tbody tr")
    papers = sorted(
        p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()
    )
    assert len(rows) == len(papers)
    links = [
        a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "article table a")
    ]
    for slug in papers:
        assert any(f"/papers/{slug}/" in (href or "") for href in links), slug
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "landing.png"
    assert browser.save_screenshot(str(shot))
    print(f"screenshot of the landing page: {shot}")


def test_api_page(base_url: str, browser: webdriver.Chrome) -> None:
    errors = _open(browser, base_url + API_PAGE)
    assert errors == [], errors
    # mkdocstrings rendered the function with its docstring's sections.
    heading = browser.find_element(By.ID, f"icml26.ro_hnn.data.{FUNCTION}")
    assert FUNCTION in heading.text
    body = browser.find_element(By.TAG_NAME, "article").text
    assert "Parameters:" in body
    assert "Returns:" in body


def test_claims_page(base_url: str, browser: webdriver.Chrome) -> None:
    errors = _open(browser, base_url + "claims/")
    assert errors == [], errors
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Claims")
    # The page `icml26 docs RUN_DIR` generates: a summary table (one row per paper) and at
    # least one claims table with a decided row; a placeholder page fails here.
    tables = {}
    for table in browser.find_elements(By.CSS_SELECTOR, "article table"):
        header = tuple(th.text.strip() for th in table.find_elements(By.CSS_SELECTOR, "thead th"))
        rows = [
            [td.text.strip() for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]
        tables.setdefault(header[:4], []).extend(rows)
    summary = tables.get(("paper", "held", "failed", "undecided"), [])
    claims = tables.get(("claim", "paper's figure", "ours", "outcome"), [])
    placeholder = (
        "docs/claims.md is not a generated claims page (no summary table with a paper row, or "
        "no claims table with a claim row): write it with `icml26 docs RUN_DIR --out "
        f"docs/claims.md --run-name NAME` from a reproduce run; tables found: {list(tables)}"
    )
    assert summary, placeholder
    assert claims, placeholder
    outcomes = {row[3].split(" ")[0].split(":")[0] for row in claims}
    assert outcomes <= {"held", "failed", "undecided"}, outcomes


def test_search_finds_a_function(base_url: str, browser: webdriver.Chrome) -> None:
    _open(browser, base_url)
    box = WebDriverWait(browser, 30).until(
        expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input"))
    )
    box.click()
    box.send_keys(FUNCTION)
    results = WebDriverWait(browser, 30).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, ".md-search-result__item a") or False
    )
    hrefs = [r.get_attribute("href") or "" for r in results]
    assert any(API_PAGE in h for h in hrefs), hrefs
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_console_check_sees_an_error(base_url: str, browser: webdriver.Chrome) -> None:
    """The console capture above can fail: a missing page logs a severe 404."""
    errors = _open(browser, base_url + "no-such-page/")
    assert any("404" in e["message"] for e in errors), errors
