// The lineage page's side panel: what is selected in the graph — a FlowFile (links to its
// lineage and its events), an UNKNOWN placeholder (nothing shown), or an event (read from the
// API: its component, time, size and node, a link to its page, and its expansion buttons).

import {api, describe} from "./canvas-api.js";
import {element} from "./dom.js";

function field(label, value) {
  return [element("dt", {}, label), element("dd", {}, value ?? "—")];
}

export class LineagePanel {
  /** ``links``: the page's eventUrl(id), lineageUrl(uuid) and eventsUrl(uuid); ``flowFile``: the
   *  FlowFile the page is about; ``expand(data, direction, button)`` expands an event. */
  constructor(element, {links, flowFile, expand}) {
    this.element = element;
    this.links = links;
    this.flowFile = flowFile;
    this.expand = expand;
  }

  expandButton(data, direction) {
    const uuids = direction === "PARENTS" ? data.parentUuids : data.childUuids;
    if (!uuids?.length) return [];
    const button = element("button", {type: "button", class: "btn btn-sm", "data-expand": direction},
      `${direction === "PARENTS" ? "Expand parents" : "Expand children"} (${uuids.length})`);
    button.addEventListener("click", () => this.expand(data, direction, button));
    return button;
  }

  flowFileView(heading, data) {
    const {lineageUrl, eventsUrl} = this.links;
    heading.textContent = "FlowFile";
    this.element.replaceChildren(heading,
      element("dl", {class: "facts"}, field("UUID", element("span", {class: "mono"}, data.flowFileUuid))),
      element("div", {class: "actions"},
        data.flowFileUuid !== this.flowFile ? element("a", {class: "btn btn-sm", href: lineageUrl(data.flowFileUuid)}, "Its lineage") : [],
        element("a", {class: "btn btn-sm", href: eventsUrl(data.flowFileUuid)}, "Its events")));
  }

  async eventView(heading, data) {
    heading.textContent = `${data.eventType} event`;
    this.element.replaceChildren(heading, element("p", {class: "muted small"}, "Loading…"));
    let event = {};
    let note = [];
    try {
      event = (await api("GET", `provenance-events/${encodeURIComponent(data.id)}`)).provenanceEvent || {};
    } catch (error) {
      note = element("p", {class: "alert alert-error small"}, describe(error).join(" — "));
    }
    if (this.element.firstChild !== heading) return;  // another node was selected meanwhile
    this.element.replaceChildren(heading, note, element("dl", {class: "facts"},
      field("Time", event.eventTime ?? data.timestamp), field("Component", event.componentName),
      field("Component type", event.componentType), field("FlowFile", element("span", {class: "mono"}, data.flowFileUuid)),
      field("Size", event.fileSize), field("Node", data.clusterNodeIdentifier)),
    element("div", {class: "actions"}, element("a", {class: "btn btn-sm btn-primary", href: this.links.eventUrl(data.id)}, "Details"),
      this.expandButton(data, "PARENTS"), this.expandButton(data, "CHILDREN")));
  }

  /** Show the graph node ``data``; its heading (to move the focus to). */
  show(data) {
    const heading = element("h2", {tabindex: "-1"});
    if (data.type === "FLOWFILE") {
      this.flowFileView(heading, data);
    } else if (data.eventType === "UNKNOWN") {
      heading.textContent = "Unknown event";
      this.element.replaceChildren(heading, element("p", {class: "muted"},
        "An event of a component whose provenance you may not view: its details are hidden."));
    } else {
      this.eventView(heading, data);
    }
    this.element.dataset.node = data.id;
    return heading;
  }
}
