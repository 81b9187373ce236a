"""Driving the portal in a real browser: Debian's headless Chromium through Playwright. Chromium
missing is a failure, not a skip: scripts/test installs it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

import pytest
from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PASSWORD = "correct horse battery staple"

T = TypeVar("T")


def chromium_path() -> str:
    """Debian's Chromium; the test fails (it does not skip) without it."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"Chromium is not installed ({CHROMIUM}): install the Debian package "
                    "(apt-get install chromium), or run scripts/test, which installs it", pytrace=False)
    return CHROMIUM


@contextmanager
def chromium_page() -> Iterator[Page]:
    """A page of a fresh headless Chromium, closed afterwards."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


def log_in(page: Page, username: str, tenant_name: str) -> None:
    """Fill in the login form the page shows and land on the tenant's root group."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("h1")).to_have_text(tenant_name)


def off_the_loop(work: Callable[[], T]) -> T:
    """Run ``work`` (database work, say) on a thread of its own: Playwright's page keeps an event
    loop running in the test's thread, where Django refuses synchronous database calls."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()
