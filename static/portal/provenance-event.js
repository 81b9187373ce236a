// An event's page: its input and output content in the content viewer (a content no longer
// available says why at once; an available one loads when asked), and Replay, which posts the
// replay and links the REPLAY event it made, or says why it was refused.

import {api, describe} from "./canvas-api.js";
import {ContentViewer} from "./content-viewer.js";
import {element} from "./dom.js";

const app = document.getElementById("event-app");
const eventUrl = (id) => app.dataset.eventUrl.replace("EVENT", encodeURIComponent(id));

function view(button) {
  const slot = document.getElementById(button.getAttribute("aria-controls"));
  const label = `${button.dataset.viewContent === "input" ? "Input" : "Output"} content`;
  new ContentViewer(slot, {url: button.dataset.url, mime: button.dataset.mime, label}).load();
  button.remove();
}

// The page's buttons are disabled until this script listens to them.
for (const button of document.querySelectorAll("[data-view-content]")) {
  if (button.dataset.available === "false") view(button);
  else button.addEventListener("click", () => view(button));
  button.disabled = false;
}

async function replay(button) {
  const result = document.getElementById("replay-result");
  button.disabled = true;
  result.replaceChildren(element("p", {class: "muted"}, "Replaying…"));
  try {
    const answer = await api("POST", "provenance-events/replays", {eventId: app.dataset.event});
    const event = answer.provenanceEvent || answer;
    result.replaceChildren(element("div", {class: "alert alert-success", id: "replay-done"},
      "Replayed: the new FlowFile ", element("span", {class: "mono"}, event.childUuids?.[0] ?? event.flowFileUuid ?? ""),
      " was queued on the source connection. ",
      element("a", {href: eventUrl(event.id)}, `Open the REPLAY event ${event.id}`)));
  } catch (error) {
    const why = error.status === 409 ? "The node refused the replay" : "The replay failed";
    result.replaceChildren(element("div", {class: "alert alert-error", role: "alert", id: "replay-refused"},
      `${why}: ${describe(error).join(" — ")}`));
  } finally {
    button.disabled = false;
  }
}

const replayButton = document.getElementById("replay-button");
if (replayButton) {
  replayButton.addEventListener("click", () => replay(replayButton));
  replayButton.disabled = false;
}
