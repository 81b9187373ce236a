// The lineage page: the API's lineage request for a FlowFile (or the FlowFile of an event), its
// progress, then the graph (lineage-graph.js). Selecting a node shows it in the side panel
// (lineage-panel.js), from which an event's parents or children are expanded (PARENTS / CHILDREN
// requests merged into the graph). The events are also listed under the graph, for the keyboard.

import {element} from "./dom.js";
import {LineageGraph} from "./lineage-graph.js";
import {LineagePanel} from "./lineage-panel.js";
import {RequestProgress} from "./request-progress.js";
import {RequestFollower} from "./requests.js";

const app = document.getElementById("lineage-app");
const problem = document.getElementById("lineage-problem");
const progress = new RequestProgress(document.getElementById("lineage-progress"), "Computing the lineage");
const follower = new RequestFollower("provenance/lineage", "lineage");
const graph = new LineageGraph(document.getElementById("lineage-graph"));
const {eventId, flowFile} = app.dataset;

function say(text) {
  problem.textContent = text;
  problem.hidden = !text;
  graph.moved();
}

/** Run a lineage request and merge its graph; how many nodes it added. */
async function ask(request, noun) {
  progress.noun = noun;
  if (app.dataset.tenant) request.tenant = app.dataset.tenant;  // the portal's tenant only
  const done = await progress.follow(follower, {lineage: {request}}).finally(() => graph.moved());
  try {
    const added = graph.merge(done.results || {});
    const truncated = done.results?.truncated ? " The graph was cut: it holds as many nodes as the platform draws." : "";
    progress.done(done, `${noun}: ${added} node(s) added.${truncated}`);
    graph.moved();
    listEvents();
    return added;
  } catch (error) {  // not the request's failure (follow says those): drawing it failed
    console.error(error);
    progress.finish("failed", `${noun}: drawing the graph failed: ${error.message}`);
    throw error;
  }
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

const panel = new LineagePanel(document.getElementById("lineage-panel"), {flowFile, expand, links: {
  eventUrl: (id) => app.dataset.eventUrl.replace("EVENT", encodeURIComponent(id)),
  lineageUrl: (uuid) => app.dataset.flowfileLineageUrl.replace("FLOWFILE", encodeURIComponent(uuid)),
  eventsUrl: (uuid) => `${app.dataset.provenanceUrl}?flowFileUuid=${encodeURIComponent(uuid)}`,
}});

graph.onTap((data) => panel.show(data));
window.flowsiteLineage = graph;  // for tests and the console, as the canvas's window.flowsiteCanvas
document.getElementById("lineage-list").addEventListener("click", (event) => {
  const button = event.target.closest("[data-select]");
  if (!button) return;
  graph.select(button.dataset.select);
  panel.show(graph.node(button.dataset.select).data()).focus();
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
