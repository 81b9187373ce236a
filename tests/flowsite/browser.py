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
def chromium_pages(count: int) -> Iterator[list[Page]]:
    """``count`` pages of a fresh headless Chromium, each in a context of its own (its own cookies:
    one user each), closed afterwards."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            pages = []
            for _ in range(count):
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.set_default_timeout(15_000)
                # shown with a failing test's output
                page.on("pageerror", lambda error: print(f"page error: {error}"))
                page.on("console", lambda message: message.type == "error" and print(f"console: {message.text}"))
                pages.append(page)
            yield pages
        finally:
            browser.close()


@contextmanager
def chromium_page() -> Iterator[Page]:
    """A page of a fresh headless Chromium, closed afterwards."""
    with chromium_pages(1) as pages:
        yield pages[0]


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


# ---------------------------------------------------------------------------- the canvas

def canvas_settled(page: Page) -> None:
    """Wait until the canvas has drawn its group and no API request of it is under way."""
    app = page.locator("#canvas-app")
    expect(app).to_have_attribute("data-loaded", "true")
    expect(app).to_have_attribute("data-pending", "0")


def canvas_point(page: Page, name: str) -> tuple[float, float]:
    """Where on the page the centre of the canvas node named ``name`` is drawn."""
    return tuple(page.evaluate("""(name) => {
        const {cy} = window.flowsiteCanvas;
        const node = cy.nodes().filter((n) => n.data("resource")?.name === name)[0];
        if (!node) throw new Error(`no node named ${name}`);
        const point = node.renderedPosition(), container = cy.container();
        const box = container.getBoundingClientRect();
        return [box.left + container.clientLeft + point.x, box.top + container.clientTop + point.y];
    }""", name))


def canvas_names(page: Page) -> list[str]:
    """The names of the canvas's nodes, sorted."""
    return page.evaluate("window.flowsiteCanvas.cy.nodes().map((n) => n.data('resource').name).sort()")


def drop_from_palette(page: Page, item: str, x: float, y: float) -> None:
    """Drag the palette's ``item`` onto the canvas at (x, y) from the canvas's top left corner
    (inside its border: where the graph's coordinates start)."""
    graph = page.locator("#canvas-graph")
    border = graph.evaluate("(element) => element.clientLeft")
    page.locator(".palette-item", has_text=item).drag_to(graph, target_position={"x": x + border, "y": y + border})


def drag_on_canvas(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press the mouse at ``start``, move it in steps to ``end`` and release it."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=8)
    page.mouse.up()


def click_node(page: Page, name: str, *, shift: bool = False) -> None:
    """Click the canvas node ``name`` (adding it to the selection with ``shift``)."""
    if shift:
        page.keyboard.down("Shift")
    page.mouse.click(*canvas_point(page, name))
    if shift:
        page.keyboard.up("Shift")


def start_connection(page: Page, source: str, destination: str) -> None:
    """Drag from ``source``'s connect handle onto ``destination``: the relationship picker opens."""
    page.mouse.move(*canvas_point(page, source))
    handle = page.locator("#connect-handle")
    expect(handle).to_be_visible()
    box = handle.bounding_box()
    drag_on_canvas(page, (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2), canvas_point(page, destination))
    expect(page.locator("#relationship-dialog")).to_be_visible()
