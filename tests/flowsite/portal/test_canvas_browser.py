"""The canvas in a real browser (``tests.flowsite.browser``): a flow built, configured, moved,
run and trimmed with the mouse, checked through the REST API."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.flowsite.browser import (canvas_names, canvas_point, canvas_settled, chromium_page, click_node,
                                    drag_on_canvas, drop_from_palette, log_in, start_connection)
from tests.flowsite.conftest import FILE_CAPABILITIES, TenantWorld
from tests.processes import wait_until

#: Half the width and height of a processor's node: positions are top left corners, drops centres.
HALF_PROCESSOR = (130, 52)


def _add_processor(page, type_name: str, x: int, y: int) -> None:
    drop_from_palette(page, "Processor", x, y)
    page.locator(".type-option[data-type=%s]" % type_name).click()
    expect(page.locator("#canvas-notice")).to_have_text(f"Added {type_name}.")
    canvas_settled(page)


def _listing(page, group, collection: str) -> list[dict]:
    """The group's ``collection``, read from the REST API with the page's session."""
    answer = page.request.get(f"{page.url.split('/groups/')[0]}/api/v1/process-groups/{group.pk}/{collection}")
    assert answer.ok, answer.text()
    return answer.json()["results"]


def _put(page, uri: str, body: dict) -> None:
    """Change a component through the REST API with the page's session, as another client would."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    answer = page.request.put(f"{page.url.split('/groups/')[0]}{uri}", data=body,
                              headers={"X-CSRFToken": token, "Referer": page.url})
    assert answer.ok, answer.text()


def _processors(page, group) -> dict[str, dict]:
    return {item["name"]: item for item in _listing(page, group, "processors")}


@pytest.mark.browser
def test_build_run_and_trim_a_flow_on_the_canvas(live_server, transactional_db):
    world = TenantWorld("Acme", FILE_CAPABILITIES)
    world.admin("alice")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Canvas").click()
        canvas_settled(page)

        _add_processor(page, "GenerateFlowFile", 160, 120)
        _add_processor(page, "UpdateAttribute", 480, 120)
        _add_processor(page, "LogAttribute", 480, 330)
        assert canvas_names(page) == ["GenerateFlowFile", "LogAttribute", "UpdateAttribute"]

        start_connection(page, "GenerateFlowFile", "UpdateAttribute")
        expect(page.locator("#relationship-options input[value=success]")).to_be_checked()  # the only one
        page.get_by_role("button", name="Add connection").click()
        expect(page.locator("#canvas-notice")).to_have_text("Connected GenerateFlowFile to UpdateAttribute.")

        start_connection(page, "UpdateAttribute", "LogAttribute")
        page.locator("#relationship-options input[value=success]").uncheck()
        page.get_by_role("button", name="Add connection").click()  # nothing chosen: the API refuses
        expect(page.locator("#relationship-errors")).to_contain_text("relationship")
        page.locator("#relationship-options input[value=success]").check()
        page.get_by_role("button", name="Add connection").click()
        expect(page.locator("#relationship-dialog")).to_be_hidden()
        canvas_settled(page)

        # a double click on a connection bends it there; bends saved elsewhere are drawn where they are
        x, y = canvas_point(page, "UpdateAttribute")
        page.mouse.dblclick(x, y + 75)  # a quarter of the way down to LogAttribute
        canvas_settled(page)
        # the double click's save may start only after the canvas looked settled
        (bent,) = wait_until(lambda: [c for c in _listing(page, world.root, "connections") if c["bends"]], 10,
                             "the bend saved")
        assert bent["destination"]["name"] == "LogAttribute"
        assert bent["bends"] == [pytest.approx({"x": 480, "y": 195}, abs=1.5)]
        _put(page, bent["uri"], {"revision": bent["revision"], "bends": [{"x": 600, "y": 230}]})
        page.evaluate("(id) => window.flowsiteCanvas.applyDesignChange({id, kind: 'CONNECTION'})", bent["id"])
        drawn = page.wait_for_function("""(id) => {  // Cytoscape lays the line out on its next frame
            const points = window.flowsiteCanvas.cy.getElementById(id).segmentPoints();
            return points?.length === 1 && Math.abs(points[0].x - 600) < 1 && points;
        }""", arg=bent["id"]).json_value()
        assert drawn == [pytest.approx({"x": 600, "y": 230}, abs=0.5)]

        click_node(page, "GenerateFlowFile")
        panel = page.locator("#side-panel")
        panel.locator("[data-property='File Size']").fill("lots")
        panel.get_by_role("button", name="Save").click()
        expect(panel.locator("#panel-problems")).to_contain_text("File Size")
        expect(panel.locator("#panel-validation")).to_have_text("INVALID")
        panel.locator("[data-property='File Size']").fill("10 B")
        panel.get_by_role("button", name="Save").click()
        expect(panel.locator("#panel-validation")).to_have_text("VALID")

        processors = _processors(page, world.root)
        dropped = {"GenerateFlowFile": (160, 120), "UpdateAttribute": (480, 120), "LogAttribute": (480, 330)}
        assert sorted(processors) == sorted(dropped)
        for name, (x, y) in dropped.items():  # within a pixel: the browser rounds the pointer
            assert processors[name]["position"] == pytest.approx({"x": x - HALF_PROCESSOR[0], "y": y - HALF_PROCESSOR[1]},
                                                                 abs=1.5)
        assert processors["GenerateFlowFile"]["properties"]["File Size"] == "10 B"
        connections = {(c["source"]["name"], c["destination"]["name"], tuple(c["selectedRelationships"]))
                       for c in _listing(page, world.root, "connections")}
        assert connections == {("GenerateFlowFile", "UpdateAttribute", ("success",)),
                               ("UpdateAttribute", "LogAttribute", ("success",))}

        # move: the new position is saved
        x, y = canvas_point(page, "GenerateFlowFile")
        drag_on_canvas(page, (x, y), (x + 100, y + 60))
        canvas_settled(page)
        moved = _processors(page, world.root)["GenerateFlowFile"]["position"]
        before = processors["GenerateFlowFile"]["position"]
        assert moved == pytest.approx({"x": before["x"] + 100, "y": before["y"] + 60}, abs=1.5)

        # start and stop the selection
        click_node(page, "GenerateFlowFile")
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.locator("#canvas-notice")).to_have_text("Start: 1 processor.")
        assert _processors(page, world.root)["GenerateFlowFile"]["state"] == "RUNNING"
        page.get_by_role("button", name="Stop", exact=True).click()
        expect(page.locator("#canvas-notice")).to_have_text("Stop: 1 processor.")
        assert _processors(page, world.root)["GenerateFlowFile"]["state"] == "STOPPED"
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.locator("#canvas-notice")).to_have_text("Start: 1 processor.")
        page.get_by_role("button", name="Stop all").click()  # the whole group
        expect(page.locator("#canvas-notice")).to_have_text("Stop: 1 processor.")
        assert _processors(page, world.root)["GenerateFlowFile"]["state"] == "STOPPED"
        page.get_by_role("button", name="Disable all").click()
        expect(page.locator("#canvas-notice")).to_have_text("Disable: 3 processors.")
        assert {p["state"] for p in _processors(page, world.root).values()} == {"DISABLED"}
        page.get_by_role("button", name="Enable all").click()
        expect(page.locator("#canvas-notice")).to_have_text("Enable: 3 processors.")
        assert {p["state"] for p in _processors(page, world.root).values()} == {"STOPPED"}

        # delete a processor: its connection goes with it
        click_node(page, "LogAttribute")
        page.get_by_role("button", name="Delete").click()
        expect(page.locator("#canvas-notice")).to_have_text("Deleted 2 components.")
        assert canvas_names(page) == ["GenerateFlowFile", "UpdateAttribute"]
        assert sorted(_processors(page, world.root)) == ["GenerateFlowFile", "UpdateAttribute"]
        assert len(_listing(page, world.root, "connections")) == 1


        # figures pushed by the live socket show on the nodes
        generate = _processors(page, world.root)["GenerateFlowFile"]["id"]
        page.evaluate("(id) => window.flowsiteCanvas.applyStats({[id]: {flowfiles_out: 5, bytes_out: 2048, "
                      "active_threads: 1}})", generate)
        label = page.evaluate("(id) => window.flowsiteCanvas.cy.getElementById(id).data('label')", generate)
        assert "Out 5 (2.0 KB)  Tasks 1" in label

        # shift adds to the selection
        click_node(page, "GenerateFlowFile")
        click_node(page, "UpdateAttribute", shift=True)
        assert page.evaluate("window.flowsiteCanvas.cy.$(':selected').length") == 2
        expect(page.locator("#side-panel")).to_be_hidden()

        # a child group: entered by a double click, left by the breadcrumb
        drop_from_palette(page, "Process group", 160, 330)
        expect(page.locator("#canvas-notice")).to_have_text("Added Process Group.")
        canvas_settled(page)
        (child,) = _listing(page, world.root, "process-groups")
        page.mouse.dblclick(*canvas_point(page, "Process Group"))
        expect(page).to_have_url(f"{live_server.url}/groups/{child['id']}/canvas")
        expect(page.locator("h1")).to_have_text("Process Group")
        canvas_settled(page)
        drop_from_palette(page, "Input port", 160, 120)
        expect(page.locator("#canvas-notice")).to_have_text("Added input.")
        page.locator("#canvas-breadcrumb").get_by_role("link", name="Acme").click()
        expect(page).to_have_url(f"{live_server.url}/groups/{world.root.pk}/canvas")
        canvas_settled(page)
        assert canvas_names(page) == ["GenerateFlowFile", "Process Group", "UpdateAttribute"]

        # a connection into a child group goes to one of its input ports
        start_connection(page, "UpdateAttribute", "Process Group")
        expect(page.locator("#to-port option")).to_have_text(["input"])
        page.get_by_role("button", name="Add connection").click()
        expect(page.locator("#canvas-notice")).to_have_text("Connected UpdateAttribute to Process Group.")
        canvas_settled(page)
        (into,) = [c for c in _listing(page, world.root, "connections") if c["destination"]["type"] == "INPUT_PORT"]
        assert (into["source"]["name"], into["destination"]["groupId"]) == ("UpdateAttribute", child["id"])
        assert page.evaluate("(id) => window.flowsiteCanvas.cy.getElementById(id).target().id()", into["id"]) \
            == child["id"]

        # a label: dropped from the palette, its text, size and colour set in the side panel
        drop_from_palette(page, "Label", 760, 430)
        expect(page.locator("#canvas-notice")).to_have_text("Added label.")
        canvas_settled(page)
        (note,) = _listing(page, world.root, "labels")
        page.mouse.click(*page.evaluate("""(id) => {
            const {cy} = window.flowsiteCanvas;
            const point = cy.getElementById(id).renderedPosition(), box = cy.container().getBoundingClientRect();
            return [box.left + cy.container().clientLeft + point.x, box.top + cy.container().clientTop + point.y];
        }""", note["id"]))
        page.locator("#panel-text").fill("Ingest from the partners' drop box")
        page.locator("#panel-width").fill("320")
        page.locator("#side-panel").get_by_role("button", name="Save").click()
        canvas_settled(page)
        (note,) = _listing(page, world.root, "labels")
        assert (note["label"], note["width"], note["height"]) == ("Ingest from the partners' drop box", 320, 150)
        assert page.evaluate("(id) => window.flowsiteCanvas.cy.getElementById(id).width()", note["id"]) == 320
