// The provenance page: the search form as the API's provenance query request, its progress while
// the nodes are asked, then the events a page at a time (newest first, as the API sorts them), a
// warning naming the nodes that did not answer, and the result's export. The URL keeps the
// search, so a deep link (?componentId=…, ?flowFileUuid=…) or a reload runs it again; opening the
// page runs it at once, as NiFi does.

import {element} from "./dom.js";
import {PagedTable} from "./paged-table.js";
import {ProvenanceExport} from "./provenance-export.js";
import {missingNodes, RequestProgress} from "./request-progress.js";
import {RequestFollower, Superseded} from "./requests.js";

const app = document.getElementById("provenance-app");
const form = document.getElementById("search-form");
const results = document.getElementById("search-results");
const progress = new RequestProgress(document.getElementById("search-progress"), "Searching the nodes");
const follower = new RequestFollower("provenance", "provenance");
const linkTo = (template, id) => template.replace("EVENT", encodeURIComponent(id));

function row(event) {
  return element("tr", {"data-event": event.id},
    element("td", {class: "value-cell"}, event.eventTime),
    element("td", {}, element("span", {class: "chip chip-muted"}, event.eventType)),
    element("td", {class: "mono small"}, event.flowFileUuid),
    element("td", {class: "value-cell"}, event.fileSize),
    element("td", {}, event.componentName || event.componentId),
    element("td", {class: "type-cell"}, event.componentType),
    element("td", {}, event.clusterNodeId),
    element("td", {class: "actions-cell"},
      element("a", {class: "btn btn-sm", href: linkTo(app.dataset.eventUrl, event.id),
                    "aria-label": `Details of the ${event.eventType} event ${event.id}`}, "Details"), " ",
      element("a", {class: "btn btn-sm", href: linkTo(app.dataset.lineageUrl, event.id),
                    "aria-label": `Lineage of the ${event.eventType} event ${event.id}`}, "Lineage")));
}

const table = new PagedTable(results, row);
const exporter = new ProvenanceExport(results);

/** The API's provenance request for what the form holds. */
export function criteria() {
  const excluded = (input) => input.closest(".search-field, [data-attribute-row]").querySelector("[name=exclude]").checked;
  const searchTerms = {};
  for (const input of form.querySelectorAll("[data-term]")) {
    if (input.value.trim()) searchTerms[input.dataset.term] = {value: input.value.trim(), inverse: excluded(input)};
  }
  for (const row of form.querySelectorAll("[data-attribute-row]")) {
    const [name, value] = row.querySelectorAll("input[type=text]");
    if (name.value.trim()) searchTerms[name.value.trim()] = {value: value.value, inverse: excluded(name)};
  }
  const field = (name) => form.elements[name].value.trim();
  const request = {searchTerms, maxResults: Number(field("maxResults")) || Number(form.elements.maxResults.placeholder)};
  for (const name of ["startDate", "endDate"]) if (field(name)) request[name] = new Date(field(name)).toISOString();
  for (const name of ["minimumFileSize", "maximumFileSize", "clusterNodeId"]) if (field(name)) request[name] = field(name);
  if (app.dataset.tenant) request.tenant = app.dataset.tenant;  // the portal's tenant only
  return request;
}

/** The form's values as the page's query string (empty fields left out). */
function keepInUrl() {
  const query = new URLSearchParams([...new FormData(form)].filter(([, value]) => String(value).trim() !== ""));
  history.replaceState(null, "", query.size ? `?${query}` : location.pathname);
}

function showResults(request) {
  const {provenanceEvents = [], total, oldestEvent} = request.results || {};
  document.getElementById("results-total").textContent = total ?? provenanceEvents.length;
  document.getElementById("oldest-event").textContent = oldestEvent ? `Oldest event available: ${oldestEvent}` : "";
  const partial = document.getElementById("partial-note");
  partial.hidden = !request.partial;
  partial.textContent = request.partial
    ? `Partial result: ${missingNodes(request) || "some nodes"} did not answer; their events are missing.` : "";
  table.fill(provenanceEvents, "No event matches the search.");
  results.hidden = false;
}

async function search() {
  let request;
  try {
    request = criteria();
  } catch (error) {
    return progress.finish("failed", `The search cannot be asked: ${error.message}`);
  }
  exporter.reset(request);
  try {
    // the events come once the query has finished, as NiFi's UI asks: the polls stay small
    const done = await progress.follow(follower, {provenance: {request: {...request, incrementalResults: false}}});
    progress.done(done, `Found ${(done.results?.provenanceEvents?.length ?? 0).toLocaleString("en")} event(s).`);
    showResults(done);
  } catch (error) {
    if (!(error instanceof Superseded)) results.hidden = true;
  }
}

function addAttributeRow() {
  const rows = form.querySelectorAll("[data-attribute-row]");
  const added = rows[rows.length - 1].cloneNode(true);
  const index = rows.length;
  for (const input of added.querySelectorAll("input")) {
    if (input.type === "checkbox") {
      input.checked = false;
      input.value = `attribute-${index}`;
    } else {
      input.value = "";
      input.id = input.id.replace(/\d+$/, index);
    }
  }
  for (const label of added.querySelectorAll("label[for]")) label.htmlFor = label.htmlFor.replace(/\d+$/, index);
  rows[rows.length - 1].after(added);
  added.querySelector("input").focus();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  keepInUrl();
  search();
});
const addButton = document.getElementById("add-attribute");
addButton.addEventListener("click", addAttributeRow);
addButton.disabled = false;  // disabled until this script listens
search();
