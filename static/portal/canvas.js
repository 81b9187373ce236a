// The canvas: a process group drawn as a graph with Cytoscape.js, read and changed through the
// REST API. Live figures and other users' design changes come over the group's WebSocket
// (live.js) into applyStats / applyDesignChange; only while the socket is down are the figures
// polled.

import cytoscape from "../vendor/cytoscape/cytoscape.esm.min.mjs";
import {api, clientId, describe, listAll, remove, revision, update} from "./canvas-api.js";
import {closePanel, openPanel, pickProcessorType, pickRelationships} from "./canvas-forms.js";
import {SIZES, connectionLabel, nodeLabel, sizeOf, STYLE} from "./canvas-style.js";
import {LiveGroup} from "./live.js";

const app = document.getElementById("canvas-app");
const groupId = app.dataset.group;
const canModify = app.dataset.canModify === "true";
const notice = document.getElementById("canvas-notice");
const handle = document.getElementById("connect-handle");
const POLL_SECONDS = 5;

// The API collection of each kind of component in a group.
const COLLECTIONS = {PROCESSOR: "processors", FUNNEL: "funnels", INPUT_PORT: "input-ports",
                     OUTPUT_PORT: "output-ports", PROCESS_GROUP: "process-groups", LABEL: "labels",
                     CONNECTION: "connections"};
// The part of a group's flow (GET process-groups/<id>/flow) holding each kind.
const FLOW_PARTS = {PROCESSOR: "processors", FUNNEL: "funnels", INPUT_PORT: "inputPorts", OUTPUT_PORT: "outputPorts",
                    PROCESS_GROUP: "processGroups", LABEL: "labels", CONNECTION: "connections"};
const SOURCES = new Set(["PROCESSOR", "FUNNEL", "INPUT_PORT", "PROCESS_GROUP"]);
const DESTINATIONS = new Set(["PROCESSOR", "FUNNEL", "OUTPUT_PORT", "PROCESS_GROUP"]);

const cy = cytoscape({
  container: document.getElementById("canvas-graph"), style: STYLE, wheelSensitivity: 0.3,
  boxSelectionEnabled: true, selectionType: "single", minZoom: 0.1, maxZoom: 3, autoungrabify: !canModify,
});
const stats = new Map();
let socketConnected = false;
let loaded = false;

function say(lines, kind = "error") {
  notice.textContent = [].concat(lines).join(" — ");
  notice.dataset.kind = kind;
}

// ---------------------------------------------------------------------------- drawing

function centre(kind, resource) {
  const [w, h] = sizeOf(kind, resource);
  return {x: resource.position.x + w / 2, y: resource.position.y + h / 2};
}

/** The flow definition's position (top left corner) of a node. */
function topLeft(node) {
  const [w, h] = sizeOf(node.data("kind"), node.data("resource"));
  const {x, y} = node.position();
  return {x: Math.round(x - w / 2), y: Math.round(y - h / 2)};
}

function nodeElement(kind, resource) {
  return {group: "nodes", position: centre(kind, resource),
          data: {id: resource.id, kind, resource, label: nodeLabel(kind, resource, stats.get(resource.id))}};
}

/** The node a connection's end is drawn at: the component, or the child group holding the port. */
function endNode(end) {
  if (cy.getElementById(end.id).nonempty()) return end.id;
  return cy.getElementById(end.groupId).nonempty() ? end.groupId : null;
}

function draw(kind, resource) {
  const existing = cy.getElementById(resource.id);
  if (kind === "CONNECTION") {
    const [source, target] = [endNode(resource.source), endNode(resource.destination)];
    if (!source || !target) return;
    if (existing.nonempty() && (existing.data("source") !== source || existing.data("target") !== target)) existing.remove();
    const data = {id: resource.id, kind, resource, source, target, bent: resource.bends.length > 0,
                  label: connectionLabel(resource, stats.get(resource.id))};
    if (cy.getElementById(resource.id).nonempty()) cy.getElementById(resource.id).data(data);
    else cy.add({group: "edges", data});
  } else if (existing.nonempty()) {
    existing.data({resource, label: nodeLabel(kind, resource, stats.get(resource.id))});
    if (!existing.grabbed()) existing.position(centre(kind, resource));
  } else {
    cy.add(nodeElement(kind, resource));
  }
}

/** Show every component, never enlarged past their own size. */
function fitAll() {
  cy.fit(undefined, 40);
  if (cy.zoom() > 1) {
    cy.zoom(1);
    cy.center();
  }
}

/** Read the whole group again and draw it (the selection and the view are kept). */
async function reload() {
  const kinds = Object.keys(COLLECTIONS);
  const flow = await api("GET", `process-groups/${groupId}/flow`);
  const lists = kinds.map((kind) => flow[FLOW_PARTS[kind]]);
  const seen = new Set(lists.flat().map((r) => r.id));
  cy.batch(() => {
    cy.elements().filter((e) => !seen.has(e.id())).remove();
    kinds.forEach((kind, i) => kind !== "CONNECTION" && lists[i].forEach((r) => draw(kind, r)));
    lists[kinds.indexOf("CONNECTION")].forEach((r) => draw("CONNECTION", r));
  });
  handle.hidden = true;  // its node may be gone
  if (!loaded && cy.nodes().nonempty()) fitAll();
  loaded = true;
  app.dataset.loaded = "true";
}

/** Draw a changed resource and refresh the side panel showing it. */
function redraw(kind, resource) {
  draw(kind, resource);
  const element = cy.getElementById(resource.id);
  if (element.selected() && cy.$(":selected").length === 1) showPanel(element);
}

// ---------------------------------------------------------------------------- live figures

/** Show figures: a map of component id → the status API's fields for it (the socket calls this). */
export function applyStats(components) {
  for (const [id, figures] of Object.entries(components)) {
    stats.set(id, {...stats.get(id), ...figures});
    const element = cy.getElementById(id);
    if (element.empty()) continue;
    const {kind, resource} = element.data();
    element.data("label", kind === "CONNECTION" ? connectionLabel(resource, stats.get(id)) : nodeLabel(kind, resource, stats.get(id)));
  }
}

/** Show the nodes' newest bulletin on each component it names (the socket calls this). */
export function applyBulletins(bulletins) {
  const newest = {};
  for (const bulletin of bulletins) {
    if (!newest[bulletin.source_id] || newest[bulletin.source_id].timestamp < bulletin.timestamp) newest[bulletin.source_id] = bulletin;
  }
  applyStats(Object.fromEntries(Object.entries(newest).map(([id, bulletin]) => [id, {bulletin}])));
}

/** Take in a design change made elsewhere: ``{id?, kind?, groupId?}``; reloads what it names
 *  (one component when ``id`` and ``kind`` are given, else the whole group). */
export async function applyDesignChange(event = {}) {
  if (event.groupId && event.groupId !== groupId) return;
  const element = event.id ? cy.getElementById(event.id) : cy.collection();
  if (element.nonempty() && event.kind) {
    try {
      return redraw(event.kind, await api("GET", element.data("resource").uri));
    } catch (error) {
      if (error.status !== 404) throw error;
    }
  }
  await reload();
}

/** The socket client says whether it is connected: while it is, figures are not polled. */
export function setSocketConnected(connected) {
  socketConnected = connected;
}

async function fetchStats() {
  const status = await api("GET", `process-groups/${groupId}/status`);
  const figures = {};
  for (const list of [status.processors, status.connections, status.ports, status.groups]) {
    for (const item of list || []) figures[item.id] = item;
  }
  applyStats(figures);
}

function pollStats() {
  const next = () => setTimeout(pollStats, POLL_SECONDS * 1000);
  if (socketConnected || document.hidden) return next();
  fetchStats().catch(() => {}).finally(next);  // the cluster may be unreachable: the figures wait
}

// ---------------------------------------------------------------------------- changes

async function attempt(action) {
  try {
    await action();
  } catch (error) {
    say(describe(error));
    if (error.status === 409 || error.status === 404) await reload();
  }
}

function modelPoint(clientX, clientY) {
  const container = cy.container(), box = container.getBoundingClientRect();
  const [left, top] = [box.left + container.clientLeft, box.top + container.clientTop];  // inside the border
  const pan = cy.pan(), zoom = cy.zoom();
  return {x: (clientX - left - pan.x) / zoom, y: (clientY - top - pan.y) / zoom};
}

async function add(kind, point) {
  const [w, h] = SIZES[kind];
  const body = {revision: {version: 0, clientId},
                position: {x: Math.round(point.x - w / 2), y: Math.round(point.y - h / 2)}};
  if (kind === "PROCESSOR") {
    body.type = await pickProcessorType();
    if (!body.type) return;
  }
  if (kind === "LABEL") Object.assign(body, {label: "", width: w, height: h});
  await attempt(async () => {
    const created = await api("POST", `process-groups/${groupId}/${COLLECTIONS[kind]}`, body);
    draw(kind, created);
    say(`Added ${created.name || kind.toLowerCase()}.`, "ok");
  });
}

function savePosition(node) {
  const resource = node.data("resource");
  attempt(async () => node.data("resource", await update(resource, {position: topLeft(node)})));
}

/** Add a bend point to a connection where it was double-clicked (kept in order along the line). */
function addBend(edge, point) {
  const resource = edge.data("resource");
  const source = edge.source().position();
  const along = (p) => Math.hypot(p.x - source.x, p.y - source.y);
  const bends = [...resource.bends, {x: Math.round(point.x), y: Math.round(point.y)}].sort((a, b) => along(a) - along(b));
  attempt(async () => redraw("CONNECTION", await update(resource, {bends})));
}

/** The ports of a child group a connection may use: its output ports as a source, its input
 *  ports as a destination. */
async function groupPorts(node, collection) {
  const ports = await listAll(`process-groups/${node.id()}/${collection}`);
  if (!ports.length) throw new Error(`${node.data("resource").name} has no ${collection.replace("-", " ")}`);
  return ports;
}

async function connect(sourceNode, destinationNode) {
  const [source, destination] = [sourceNode.data("resource"), destinationNode.data("resource")];
  if (!DESTINATIONS.has(destinationNode.data("kind"))) {
    return say("Connect to a processor, a funnel, an output port or a process group.");
  }
  const ports = {};
  try {
    if (sourceNode.data("kind") === "PROCESS_GROUP") ports.from = await groupPorts(sourceNode, "output-ports");
    if (destinationNode.data("kind") === "PROCESS_GROUP") ports.to = await groupPorts(destinationNode, "input-ports");
  } catch (error) {
    return say(describe(error));
  }
  await pickRelationships(source, destination, async ({relationships, sourceId, destinationId}) => {
    const body = {revision: {version: 0, clientId}, source: {id: sourceId}, destination: {id: destinationId}};
    if (source.relationships) body.selectedRelationships = relationships;
    await api("POST", `process-groups/${groupId}/connections`, body);
    await reload();  // the ends' validation changes with their connections
    say(`Connected ${source.name} to ${destination.name}.`, "ok");
  }, ports);
}

async function deleteSelection() {
  const selected = cy.$(":selected");
  const doomed = selected.union(selected.nodes().connectedEdges());
  await attempt(async () => {
    for (const element of [...doomed.edges(), ...doomed.nodes()]) {
      await remove(element.data("resource"));
      element.remove();
    }
    closePanel();
    await reload();
    say(`Deleted ${doomed.length} component${doomed.length === 1 ? "" : "s"}.`, "ok");
  });
}

const RUN_CHANGES = {  // action → [the state asked for, the states it applies to]
  start: ["RUNNING", ["STOPPED"]], stop: ["STOPPED", ["RUNNING"]],
  enable: ["STOPPED", ["DISABLED"]], disable: ["DISABLED", ["STOPPED"]],
};

/** The processors (resources) of group ``id`` and of every group inside it. */
async function processorsWithin(id) {
  const [own, groups] = await Promise.all([listAll(`process-groups/${id}/processors`),
                                           listAll(`process-groups/${id}/process-groups`)]);
  return own.concat(...await Promise.all(groups.map((group) => processorsWithin(group.id))));
}

/** What an action on the selection applies to: the processors selected and every processor inside
 *  the groups selected. */
async function selectedProcessors() {
  const selected = cy.$("node:selected");
  const inside = await Promise.all(selected.filter("[kind = 'PROCESS_GROUP']").map((group) => processorsWithin(group.id())));
  return selected.filter("[kind = 'PROCESSOR']").map((node) => node.data("resource")).concat(...inside);
}

function count(processors) {
  return `${processors.length} processor${processors.length === 1 ? "" : "s"}`;
}

/** Start, stop, enable or disable ``processors`` (a promise of resources) where it applies. */
async function changeRunState(action, processors) {
  const [state, from] = RUN_CHANGES[action];
  await attempt(async () => {
    const changing = (await processors).filter((processor) => from.includes(processor.state));
    for (const processor of changing) {
      const answer = await api("PUT", `${processor.uri}/run-status`, {revision: revision(processor), state});
      if (cy.getElementById(answer.id).nonempty()) redraw("PROCESSOR", answer);
    }
    say(`${action[0].toUpperCase()}${action.slice(1)}: ${count(changing)}.`, "ok");
  });
}

async function terminate(processors) {
  await attempt(async () => {
    const stopping = await processors;
    for (const processor of stopping) await api("POST", `${processor.uri}/terminate`);
    say(`Terminated the tasks of ${count(stopping)}.`, "ok");
  });
}

const ACTIONS = {
  start: () => changeRunState("start", selectedProcessors()),
  stop: () => changeRunState("stop", selectedProcessors()),
  enable: () => changeRunState("enable", selectedProcessors()),
  disable: () => changeRunState("disable", selectedProcessors()),
  terminate: () => terminate(selectedProcessors()),
  delete: deleteSelection,
  "start-group": () => changeRunState("start", processorsWithin(groupId)),
  "stop-group": () => changeRunState("stop", processorsWithin(groupId)),
  "enable-group": () => changeRunState("enable", processorsWithin(groupId)),
  "disable-group": () => changeRunState("disable", processorsWithin(groupId)),
  "terminate-group": () => terminate(processorsWithin(groupId)),
  fit: fitAll,
};

// ---------------------------------------------------------------------------- interaction

function showPanel(element) {
  const {kind, resource} = element.data();
  const source = kind === "CONNECTION" ? element.source().data("resource") : undefined;
  openPanel(kind, resource, {
    canModify, source,
    saved: (changed) => { redraw(kind, changed); say(`Saved ${changed.name || kind.toLowerCase()}.`, "ok"); },
    conflict: (error) => { say(describe(error)); reload(); },
  }).catch((error) => say(describe(error)));
}

let selectionTimer;

/** After a selection settles: the panel of the one component selected (kept as it is, with what
 *  is typed in it, when it already shows that one), else none. */
function onSelectionChange() {
  clearTimeout(selectionTimer);
  selectionTimer = setTimeout(() => {
    const selected = cy.$(":selected");
    if (selected.length !== 1) closePanel();
    else if (document.getElementById("side-panel").dataset.component !== selected.id()) showPanel(selected[0]);
  });
}

function placeHandle(node) {
  const box = node.renderedBoundingBox({includeLabels: false});
  handle.style.left = `${box.x2 - 10}px`;
  handle.style.top = `${(box.y1 + box.y2) / 2 - 11}px`;
  handle.dataset.source = node.id();
  handle.hidden = false;
}

/** Drag from the handle of a source to a destination: a rubber band follows the pointer. */
function dragConnection(event) {
  event.preventDefault();
  const source = cy.getElementById(handle.dataset.source);
  const ghost = cy.add({group: "nodes", classes: "ghost", data: {id: "ghost", kind: "GHOST"}, position: modelPoint(event.clientX, event.clientY)});
  cy.add({group: "edges", classes: "ghost", data: {id: "ghost-edge", source: source.id(), target: "ghost"}});
  handle.hidden = true;
  const move = (e) => ghost.position(modelPoint(e.clientX, e.clientY));
  const drop = (e) => {
    document.removeEventListener("mousemove", move);
    document.removeEventListener("mouseup", drop);
    cy.remove(".ghost");
    const point = modelPoint(e.clientX, e.clientY);
    const target = cy.nodes().filter((n) => {
      const box = n.boundingBox({includeLabels: false});
      return point.x >= box.x1 && point.x <= box.x2 && point.y >= box.y1 && point.y <= box.y2;
    }).last();
    if (target.nonempty() && target.id() !== source.id()) connect(source, target);
  };
  document.addEventListener("mousemove", move);
  document.addEventListener("mouseup", drop);
}

function wire() {
  cy.on("select unselect", onSelectionChange);
  cy.on("dragfree", "node", (e) => savePosition(e.target));
  cy.on("dbltap", "node[kind = 'PROCESS_GROUP']", (e) => {
    location.href = app.dataset.canvasUrl.replace(groupId, e.target.id());
  });
  cy.on("pan zoom drag", () => { handle.hidden = true; });
  new ResizeObserver(() => cy.resize()).observe(cy.container());
  if (canModify) {
    cy.on("dbltap", "edge", (e) => addBend(e.target, e.position));
    cy.on("mouseover", "node", (e) => SOURCES.has(e.target.data("kind")) && placeHandle(e.target));
    handle.addEventListener("mousedown", dragConnection);
    const graph = cy.container();
    for (const item of document.querySelectorAll(".palette-item")) {
      item.addEventListener("dragstart", (e) => e.dataTransfer.setData("application/x-flowsite-kind", item.dataset.kind));
    }
    graph.addEventListener("dragover", (e) => e.preventDefault());
    graph.addEventListener("drop", (e) => {
      e.preventDefault();
      const kind = e.dataTransfer.getData("application/x-flowsite-kind");
      if (kind) add(kind, modelPoint(e.clientX, e.clientY));
    });
  }
  for (const button of document.querySelectorAll("[data-action]")) {
    button.addEventListener("click", () => ACTIONS[button.dataset.action]());
  }
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest?.("input, select, textarea, dialog");
    if (canModify && !typing && (e.key === "Delete" || e.key === "Backspace") && cy.$(":selected").nonempty()) {
      deleteSelection();
    }
  });
}

/** The group's socket: figures and other users' design changes pushed; after a drop (the web
 *  process restarted, say) it reconnects and the page reloads the design it may have missed. */
function goLive() {
  let dropped = false;
  app.dataset.live = "connecting";
  return new LiveGroup(groupId, {
    stats: (message) => applyStats(message.components),
    bulletins: (message) => applyBulletins(message.bulletins),
    design: (message) => applyDesignChange({id: message.component, kind: message.kind,
                                            groupId: message.component === groupId ? groupId : message.parent})
      .catch((error) => say(describe(error))),
    cluster: (message) => { app.dataset.cluster = message.reachable ? "reachable" : "unreachable"; },
    state: (state) => {
      app.dataset.live = state;
      setSocketConnected(state === "open");
      if (state === "retrying") dropped = true;
      if (state === "open" && dropped) {
        dropped = false;
        reload().catch((error) => say(describe(error)));
      }
    },
  }).start();
}

wire();
window.flowsiteCanvas = {cy, applyStats, applyBulletins, applyDesignChange, setSocketConnected};
reload().then(() => fetchStats().catch(() => {})).catch((error) => say(describe(error))).finally(() => {
  goLive();
  setTimeout(pollStats, POLL_SECONDS * 1000);
});
