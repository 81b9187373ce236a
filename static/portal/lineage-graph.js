// A lineage graph drawn with Cytoscape.js: the lineage request's FlowFile and event nodes and the
// links between them, laid out top to bottom in time order (a node never above one it follows);
// later answers (an event's parents or children expanded) merged into what is drawn.

import cytoscape from "../vendor/cytoscape/cytoscape.esm.min.mjs";

const STYLE = [
  {selector: "node", style: {
    "label": "data(label)", "font-size": 11, "color": "#0f172a", "text-valign": "center", "text-halign": "center",
    "min-zoomed-font-size": 6,
  }},
  {selector: "node[type = 'FLOWFILE']", style: {
    "shape": "ellipse", "width": 20, "height": 20, "background-color": "#cbd5e1", "border-width": 1,
    "border-color": "#64748b", "text-halign": "right", "text-margin-x": 5, "font-size": 10, "color": "#475569",
  }},
  {selector: "node[type = 'EVENT']", style: {
    "shape": "round-rectangle", "height": 26, "width": (node) => 18 + 7 * node.data("label").length,
    "background-color": "#eef2ff", "border-width": 1, "border-color": "#6366f1",
  }},
  {selector: "node[eventType = 'UNKNOWN']", style: {
    "background-color": "#f1f5f9", "border-style": "dashed", "border-color": "#94a3b8", "color": "#64748b",
  }},
  {selector: "node.focus", style: {"border-width": 3, "border-color": "#ea580c"}},
  {selector: "node:selected", style: {"border-width": 3, "border-color": "#2563eb", "overlay-opacity": 0}},
  {selector: "edge", style: {
    "curve-style": "bezier", "width": 1.5, "line-color": "#94a3b8", "target-arrow-shape": "triangle",
    "target-arrow-color": "#94a3b8", "arrow-scale": 0.8,
  }},
];

function nodeData(node) {
  const event = node.type === "EVENT";
  return {...node, label: event ? node.eventType : node.flowFileUuid.slice(0, 8)};
}

export class LineageGraph {
  constructor(container) {
    this.cy = cytoscape({container, style: STYLE, minZoom: 0.2, maxZoom: 2.5, wheelSensitivity: 0.3,
                         boxSelectionEnabled: false, selectionType: "single", autoungrabify: true});
  }

  /** Add the nodes and links of a lineage answer's ``results`` that are not drawn yet, then lay
   *  the graph out again; how many nodes were added. */
  merge(results) {
    const {cy} = this;
    let added = 0;
    cy.batch(() => {
      for (const node of results.nodes || []) {
        if (cy.getElementById(node.id).empty()) {
          cy.add({group: "nodes", data: nodeData(node)});
          added += 1;
        }
      }
      for (const link of results.links || []) {
        const id = `${link.sourceId}→${link.targetId}`;
        if (cy.getElementById(id).empty() && cy.getElementById(link.sourceId).nonempty() &&
            cy.getElementById(link.targetId).nonempty()) {
          cy.add({group: "edges", data: {id, source: link.sourceId, target: link.targetId, flowFileUuid: link.flowFileUuid}});
        }
      }
    });
    if (added) this.layout();
    return added;
  }

  /** Tell the graph its container moved or changed size (e.g. the progress above it grew):
   *  Cytoscape keeps the container's place to find what a click hits. */
  moved() {
    this.cy.resize();
  }

  layout() {
    this.moved();
    // Cytoscape sorts each depth before it drops the holes (null) that moving a node further down
    // (``maximal``) leaves there, so the sort meets them: they go last.
    const byTime = (a, b) => (a === null || b === null) ? (a === null) - (b === null)
      : (a.data("millis") ?? 0) - (b.data("millis") ?? 0) || (a.id() < b.id() ? -1 : 1);
    this.cy.layout({name: "breadthfirst", directed: true, maximal: true, roots: this.cy.nodes().roots(),
                    depthSort: byTime, spacingFactor: 0.75, avoidOverlap: true, animate: false}).run();
    this.fit();
  }

  /** Show the whole graph, never enlarged past its own size. */
  fit() {
    this.cy.fit(undefined, 30);
    if (this.cy.zoom() > 1) {
      this.cy.zoom(1);
      this.cy.center();
    }
  }

  /** Mark the node the page is about (an event id, or a FlowFile's uuid). */
  focus(eventId, flowFileUuid) {
    const node = this.cy.nodes().filter((n) => eventId ? n.id() === eventId || String(n.data("eventId")) === eventId
      : n.data("type") === "FLOWFILE" && n.data("flowFileUuid") === flowFileUuid);
    node.addClass("focus");
  }

  /** The event nodes, oldest first. */
  events() {
    return this.cy.nodes("[type = 'EVENT']").sort((a, b) => (a.data("millis") ?? 0) - (b.data("millis") ?? 0));
  }

  node(id) {
    return this.cy.getElementById(id);
  }

  select(id) {
    this.cy.$(":selected").unselect();
    this.node(id).select();
  }

  /** ``handler(data)`` when a node is tapped. */
  onTap(handler) {
    this.cy.on("tap", "node", (event) => handler(event.target.data()));
  }
}
