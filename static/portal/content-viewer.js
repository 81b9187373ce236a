// A FlowFile's content in the page (a provenance event's input or output, a queued FlowFile): the
// first MiB asked for with an HTTP Range request, shown as text, hex or formatted JSON / XML
// (the one that suits it first), saying when it is cut, with a link that downloads the whole.
// Content that is gone is said with the API's reason.

import {apiUrl} from "./canvas-api.js";
import {element} from "./dom.js";
import {asText, dataSize, hexDump, prettyJson, prettyXml, suitedView} from "./format.js";

export const FIRST_CHUNK = 1024 * 1024;
const VIEWS = {text: "Text", hex: "Hex", json: "JSON", xml: "XML"};

async function firstChunk(url) {
  const response = await fetch(url, {credentials: "same-origin", headers: {Range: `bytes=0-${FIRST_CHUNK - 1}`}});
  if (response.status === 416) return {bytes: new Uint8Array(0), size: 0};
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    const error = new Error(body.message || `the server answered ${response.status}`);
    error.status = response.status;
    throw error;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const range = (response.headers.get("Content-Range") || "").match(/\/(\d+)$/);
  return {bytes, size: range ? Number(range[1]) : bytes.length};
}

export class ContentViewer {
  /** A viewer in ``container`` of the content at ``url`` (an API path); ``mime``: its mime.type
   *  attribute, ``label``: what it is ("Input content"). */
  constructor(container, {url, mime = "", label = "Content"}) {
    this.url = apiUrl(url);
    this.mime = mime;
    this.label = label;
    this.bar = element("div", {class: "viewer-bar", role: "toolbar", "aria-label": `${label}: view as`});
    this.status = element("p", {class: "viewer-status", role: "status"});
    this.output = element("pre", {class: "viewer-output", tabindex: "0", "aria-label": label});
    this.root = element("div", {class: "content-viewer", "data-state": "loading"}, this.bar, this.status, this.output);
    container.replaceChildren(this.root);
  }

  async load() {
    this.status.textContent = `Loading the first ${dataSize(FIRST_CHUNK)}…`;
    try {
      const {bytes, size} = await firstChunk(this.url);
      this.bytes = bytes;
      this.text = asText(bytes);
      this.cut = bytes.length < size;
      this.status.textContent = size === 0 ? "The content is empty (0 bytes)."
        : this.cut ? `Showing the first ${dataSize(bytes.length)} of ${dataSize(size)}: download it for the rest.`
        : `${dataSize(size)}.`;
      const suited = suitedView(this.mime, this.text);
      const views = this.text === null ? ["hex"] : [...new Set([suited, "text", "hex"])];
      this.bar.replaceChildren(...views.map((view) => element("button", {
        type: "button", class: "btn btn-sm", "data-view": view, "aria-pressed": "false"}, VIEWS[view])),
        element("a", {class: "btn btn-sm", href: this.url, download: ""}, "Download"));
      this.bar.addEventListener("click", (event) => {
        const button = event.target.closest("[data-view]");
        if (button) this.show(button.dataset.view);
      });
      this.show(suited);
      this.root.dataset.state = "ready";
    } catch (error) {
      this.root.dataset.state = error.status === 404 ? "unavailable" : "failed";
      this.status.textContent = error.status === 404 && !/no longer available/i.test(error.message)
        ? `Content no longer available: ${error.message}` : error.message;
      this.output.hidden = true;
    }
  }

  /** Show the content as ``view`` (a formatted view that fails, e.g. on a cut document, falls
   *  back to the text and says why). */
  show(view) {
    let shown = view;
    let text;
    try {
      text = view === "hex" ? hexDump(this.bytes) : view === "json" ? prettyJson(this.text)
        : view === "xml" ? prettyXml(this.text) : this.text;
    } catch (error) {
      shown = "text";
      text = `(${VIEWS[view]} cannot be formatted${this.cut ? ": only its first part is shown" : `: ${error.message}`})\n\n${this.text}`;
    }
    this.output.textContent = text;
    this.root.dataset.view = shown;
    for (const button of this.bar.querySelectorAll("[data-view]")) {
      button.setAttribute("aria-pressed", String(button.dataset.view === view));
    }
  }
}
