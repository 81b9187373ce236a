// The lineage page: the API's lineage request for a FlowFile (or the FlowFile of an event), its
// progress, then the graph (lineage-graph.js). Selecting an event shows it in the side panel
// with a link to its page and the expansion of its parents or children (PARENTS / CHILDREN
// requests merged into the graph). The events are also listed under the graph, for the keyboard.

import {api, describe} from "./canvas-api.js";
import {element} from "./dom.js";
import {LineageGraph} from "./lineage-graph.js";
import {RequestProgress} from "./request-progress.js";
import {RequestFollower} from "./requests.js";

const app = document.getElementById("lineage-app");
const panel = document.getElementById("lineage-panel");
const problem = document.getElementById("lineage-problem");
const progress = new RequestProgress(document.getElementById("lineage-progress"), "Computing the lineage");
const follower = new RequestFollower("provenance/lineage", "lineage");
const graph = new LineageGraph(document.getElementById("lineage-graph"));
const {eventId, flowFile} = app.dataset;
const eventUrl = (id) => app.dataset.eventUrl.replace("EVENT", encodeURIComponent(id));
const lineageUrl = (uuid) => app.dataset.flowfileLineageUrl.replace("FLOWFILE", encodeURIComponent(uuid));

function say(text) {
  problem.textContent = text;
  problem.hidden = !text;
  graph.moved();
}

/** Run a lineage request and merge its graph; how many nodes it added. */
async function ask(request, noun) {
  progress.noun = noun;
  const done = await progress.follow(follower, {lineage: {request}}).finally(() => graph.moved());
  const added = graph.merge(done.results || {});
  const truncated = done.results?.truncated ? " The graph was cut at its first 1,000 nodes." : "";
  progress.done(done, `${noun}: ${added} node(s) added.${truncated}`);
  graph.moved();
  listEvents();
  return added;
}

function listEvents() {
  const events = graph.events();
  document.getElementById("lineage-count").textContent = events.length;
  document.querySelector("#lineage-list tbody").replaceChildren(...events.map((node) => {
    const data = node.data();
    return element("tr", {}, element("td", {class: "value-cell"}, data.timestamp ?? ""),
      element("td", {}, data.eventType), element("td", {class: "mono small"}, data.flowFileUuid),
      element("td", {}, data.clusterNodeIdentifier ?? ""),
      element("td", {class: "actions-cell"}, element("button", {type: "button", class: "btn btn-sm",
        "data-select": data.id, "aria-label": `Select the ${data.eventType} event of ${data.timestamp ?? ""}`}, "Select")));
  }));
}

function field(label, value) {
  return [element("dt", {}, label), element("dd", {}, value ?? "—")];
}

function expandButton(data, direction) {
  const uuids = direction === "PARENTS" ? data.parentUuids : data.childUuids;
  if (!uuids?.length) return [];
  const button = element("button", {type: "button", class: "btn btn-sm", "data-expand": direction},
    direction === "PARENTS" ? `Expand parents (${uuids.length})` : `Expand children (${uuids.length})`);
  button.addEventListener("click", () => expand(data, direction, button));
  return button;
}

async function expand(data, direction, button) {
  button.disabled = true;
  say("");
  try {
    const request = {lineageRequestType: direction, eventId: String(data.eventId ?? data.id)};
    if (data.clusterNodeIdentifier) request.clusterNodeId = data.clusterNodeIdentifier;
    const added = await ask(request, direction === "PARENTS" ? "Finding the parents" : "Finding the children");
    if (!added) say(`No ${direction === "PARENTS" ? "parent" : "child"} was added: they are all drawn already.`);
  } catch (error) {
    // said in the progress panel
  } finally {
    button.disabled = false;
  }
}

async function showNode(data) {
  const heading = element("h2", {tabindex: "-1"});
  if (data.type === "FLOWFILE") {
    heading.textContent = "FlowFile";
    panel.replaceChildren(heading, element("dl", {class: "facts"}, field("UUID", element("span", {class: "mono"}, data.flowFileUuid))),
      element("div", {class: "actions"},
        data.flowFileUuid !== flowFile ? element("a", {class: "btn btn-sm", href: lineageUrl(data.flowFileUuid)}, "Its lineage") : [],
        element("a", {class: "btn btn-sm", href: `${app.dataset.provenanceUrl}?flowFileUuid=${encodeURIComponent(data.flowFileUuid)}`}, "Its events")));
  } else if (data.eventType === "UNKNOWN") {
    heading.textContent = "Unknown event";
    panel.replaceChildren(heading, element("p", {class: "muted"},
      "An event of a component whose provenance you may not view: its details are hidden."));
  } else {
    heading.textContent = `${data.eventType} event`;
    panel.replaceChildren(heading, element("p", {class: "muted small"}, "Loading…"));
    let event = {};
    let note = [];
    try {
      event = (await api("GET", `provenance-events/${encodeURIComponent(data.id)}`)).provenanceEvent || {};
    } catch (error) {
      note = element("p", {class: "alert alert-error small"}, describe(error).join(" — "));
    }
    if (panel.firstChild !== heading) return;  // another node was selected meanwhile
    panel.replaceChildren(heading, note, element("dl", {class: "facts"},
      field("Time", event.eventTime ?? data.timestamp), field("Component", event.componentName),
      field("Component type", event.componentType), field("FlowFile", element("span", {class: "mono"}, data.flowFileUuid)),
      field("Size", event.fileSize), field("Node", data.clusterNodeIdentifier)),
    element("div", {class: "actions"}, element("a", {class: "btn btn-sm btn-primary", href: eventUrl(data.id)}, "Details"),
      expandButton(data, "PARENTS"), expandButton(data, "CHILDREN")));
  }
  panel.dataset.node = data.id;
  return heading;
}

graph.onTap((data) => showNode(data));
window.flowsiteLineage = graph;  // for tests and the console, as the canvas's window.flowsiteCanvas
document.getElementById("lineage-list").addEventListener("click", async (event) => {
  const button = event.target.closest("[data-select]");
  if (!button) return;
  graph.select(button.dataset.select);
  (await showNode(graph.node(button.dataset.select).data()))?.focus();
});
const fitButton = document.getElementById("lineage-fit");
fitButton.addEventListener("click", () => graph.fit());
fitButton.disabled = false;  // disabled until this script listens

const first = eventId ? {lineageRequestType: "FLOWFILE", eventId} : {lineageRequestType: "FLOWFILE", uuid: flowFile};
ask(first, "Computing the lineage")
  .then((added) => {
    graph.focus(eventId, flowFile);
    if (!added) say("No event of this FlowFile that you may view: it may have aged off, or it never existed.");
  })
  .catch(() => {})  // said in the progress panel
  .finally(() => { app.dataset.loaded = "true"; });
