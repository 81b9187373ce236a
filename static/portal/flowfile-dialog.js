// A queued FlowFile's details in a dialog: what it is, its attributes, its content claim, and its
// content in the content viewer with a download; links to its provenance where the user may
// query it.

import {api, describe} from "./canvas-api.js";
import {ContentViewer} from "./content-viewer.js";
import {element} from "./dom.js";
import {dataSize, duration} from "./format.js";

const fact = (label, value, mono = false) =>
  element("div", {}, element("dt", {}, label), element("dd", mono ? {class: "mono"} : {}, value ?? "—"));

export class FlowFileDialog {
  /** ``dialog``: the <dialog>; ``links``: the page's provenanceUrl / lineageUrl (absent: no links). */
  constructor(dialog, connection, links) {
    this.dialog = dialog;
    this.body = dialog.querySelector("#flowfile-body");
    this.title = dialog.querySelector("#flowfile-title");
    this.connection = connection;
    this.links = links;
    dialog.addEventListener("close", () => this.opener?.focus());
  }

  path(flowFile, tail = "") {
    const node = flowFile.clusterNodeId ? `?clusterNodeId=${encodeURIComponent(flowFile.clusterNodeId)}` : "";
    return `flowfile-queues/${this.connection}/flowfiles/${encodeURIComponent(flowFile.uuid)}${tail}${node}`;
  }

  async open(summary, opener) {
    this.opener = opener;
    this.title.textContent = `FlowFile ${summary.uuid}`;
    this.body.replaceChildren(element("p", {class: "muted"}, "Loading…"));
    this.dialog.showModal();
    try {
      const flowFile = (await api("GET", this.path(summary))).flowFile;
      this.show(flowFile);
    } catch (error) {
      this.body.replaceChildren(element("div", {class: "alert alert-error", role: "alert"}, describe(error).join(" — ")));
    }
  }

  show(flowFile) {
    const attributes = Object.entries(flowFile.attributes || {}).sort(([a], [b]) => a.localeCompare(b));
    const viewerSlot = element("div", {class: "viewer-slot"});
    const {provenanceUrl, lineageUrl} = this.links;
    this.body.replaceChildren(
      element("dl", {class: "facts facts-grid"}, fact("UUID", flowFile.uuid, true), fact("Filename", flowFile.filename),
        fact("Size", dataSize(flowFile.size)), fact("Position", flowFile.position),
        fact("Queued for", duration(flowFile.queuedDuration)), fact("Lineage age", duration(flowFile.lineageDuration)),
        fact("Penalized", flowFile.penalized ? `yes, for ${duration(flowFile.penaltyExpiresIn)}` : "no"),
        fact("Node", flowFile.clusterNodeId)),
      provenanceUrl ? element("div", {class: "actions"},
        element("a", {class: "btn btn-sm", href: `${provenanceUrl}?flowFileUuid=${encodeURIComponent(flowFile.uuid)}`}, "Its provenance"),
        element("a", {class: "btn btn-sm", href: lineageUrl.replace("FLOWFILE", encodeURIComponent(flowFile.uuid))}, "Its lineage")) : [],
      element("h3", {}, `Attributes (${attributes.length})`),
      element("div", {class: "table-wrap"}, element("table", {class: "data attributes"},
        element("thead", {}, element("tr", {}, element("th", {scope: "col"}, "Name"), element("th", {scope: "col"}, "Value"))),
        element("tbody", {}, attributes.map(([name, value]) => element("tr", {},
          element("th", {scope: "row", class: "mono"}, name), element("td", {class: "mono attribute-value"}, value)))))),
      element("h3", {}, "Content"),
      flowFile.contentClaimIdentifier ? element("dl", {class: "facts facts-grid"},
        fact("Container", flowFile.contentClaimContainer, true), fact("Section", flowFile.contentClaimSection, true),
        fact("Identifier", flowFile.contentClaimIdentifier, true), fact("Offset", flowFile.contentClaimOffset, true),
        fact("Size", flowFile.contentClaimFileSize)) : element("p", {class: "muted small"}, "This FlowFile has no content."),
      viewerSlot);
    if (flowFile.contentClaimIdentifier) {
      new ContentViewer(viewerSlot, {url: this.path(flowFile, "/content"), mime: flowFile.attributes?.["mime.type"],
                                     label: "FlowFile content"}).load();
    }
  }
}
