// A connection's queue page: the API's listing request, its progress, then the queued FlowFiles
// (the first ones of each node by the queue's priority) with the queue's totals; each FlowFile
// opens its details (flowfile-dialog.js).

import {element} from "./dom.js";
import {FlowFileDialog} from "./flowfile-dialog.js";
import {dataSize, duration} from "./format.js";
import {PagedTable} from "./paged-table.js";
import {missingNodes, RequestProgress} from "./request-progress.js";
import {RequestFollower, Superseded} from "./requests.js";

const app = document.getElementById("queue-app");
const connection = app.dataset.connection;
const listing = document.getElementById("queue-listing");
const progress = new RequestProgress(document.getElementById("listing-progress"), "Listing the queue");
const follower = new RequestFollower(`flowfile-queues/${connection}/listing-requests`, "listingRequest");
const dialog = new FlowFileDialog(document.getElementById("flowfile-dialog"), connection, app.dataset);

function row(flowFile) {
  const open = element("button", {type: "button", class: "btn btn-sm",
    "aria-label": `Details of FlowFile ${flowFile.uuid}`}, "Details");
  open.addEventListener("click", () => dialog.open(flowFile, open));
  return element("tr", {"data-flowfile": flowFile.uuid},
    element("td", {}, flowFile.position), element("td", {class: "mono small"}, flowFile.uuid),
    element("td", {}, flowFile.filename), element("td", {class: "value-cell"}, dataSize(flowFile.size)),
    element("td", {class: "value-cell"}, duration(flowFile.queuedDuration)),
    element("td", {class: "value-cell"}, duration(flowFile.lineageDuration)),
    element("td", {}, flowFile.penalized ? element("span", {class: "badge badge-warn"}, "penalized") : "no"),
    element("td", {}, flowFile.clusterNodeId), element("td", {class: "actions-cell"}, open));
}

const table = new PagedTable(listing, row);

function showListing(request) {
  const size = request.queueSize || {objectCount: 0, byteCount: 0};
  const summaries = request.flowFileSummaries || [];
  const swapped = request.swappedCount ? `, ${request.swappedCount.toLocaleString("en")} of them swapped out` : "";
  document.getElementById("queue-totals").textContent =
    `${size.objectCount.toLocaleString("en")} FlowFile(s), ${dataSize(size.byteCount)}, queued on every node${swapped}; ` +
    `${summaries.length.toLocaleString("en")} listed.`;
  const notes = [];
  if (request.partial) notes.push(`Partial listing: ${missingNodes(request) || "some nodes"} did not answer.`);
  if (request.sourceRunning || request.destinationRunning) {
    notes.push(`The ${request.sourceRunning ? "source" : "destination"}${request.sourceRunning && request.destinationRunning
      ? " and destination are" : " is"} running: the queue changes while you read it.`);
  }
  const note = document.getElementById("listing-note");
  note.textContent = notes.join(" ");
  note.hidden = notes.length === 0;
  table.fill(summaries, "The queue is empty.");
  listing.hidden = false;
}

async function list() {
  try {
    const done = await progress.follow(follower, undefined);
    progress.done(done, `Listed ${(done.flowFileSummaries || []).length} FlowFile(s).`);
    showListing(done);
  } catch (error) {
    if (!(error instanceof Superseded)) listing.hidden = true;
  }
}

const listButton = document.getElementById("list-queue");
listButton.addEventListener("click", list);
listButton.disabled = false;  // disabled until this script listens
list();
