// Long work shown in place, without a reload: deployments (each node's report as it comes),
// imports of a flow definition (the upload's progress, then the new group) and queue drops
// (the API's drop request followed to its end: what each node dropped). A form opts in with data-progress="deploy|import|empty"; its result
// goes to the element its data-progress-panel names. Without JavaScript the forms post as before.

import {describe} from "./canvas-api.js";
import {dataSize} from "./format.js";
import {RequestFollower} from "./requests.js";

const API = "/api/v1";
const DEPLOY_WAIT_SECONDS = 120;

function csrfToken(form) {
  const field = form.querySelector("input[name=csrfmiddlewaretoken]");
  return field ? field.value : "";
}

function messageOf(body, status) {
  if (body && body.message) {
    const problems = (body.problems || []).map((p) => p.message).join("; ");
    return problems ? `${body.message}: ${problems}` : body.message;
  }
  return `the request failed (HTTP ${status})`;
}

/** A progress panel in ``element``: a title, a bar (indeterminate without a total), lines of detail. */
export class Panel {
  constructor(element) {
    this.element = element;
    this.element.hidden = false;
    this.element.replaceChildren();
    this.title = this.add("div", "progress-title");
    this.bar = this.add("progress", "progress-bar");
    this.detail = this.add("ul", "progress-detail");
    this.element.setAttribute("aria-busy", "true");
  }

  add(tag, className) {
    const node = document.createElement(tag);
    node.className = className;
    this.element.append(node);
    return node;
  }

  show(title, done, total, lines = []) {
    this.title.textContent = title;
    if (total > 0) {
      this.bar.max = total;
      this.bar.value = done;
    } else {
      this.bar.removeAttribute("value");
    }
    this.detail.replaceChildren(...lines.map(([text, state]) => {
      const item = document.createElement("li");
      item.textContent = text;
      if (state) item.dataset.state = state;
      return item;
    }));
  }

  finish(state, title, lines = []) {
    this.show(title, 1, 1, lines);
    this.bar.hidden = true;
    this.element.dataset.state = state;
    this.element.setAttribute("aria-busy", "false");
  }
}

async function callApi(form, method, path, body) {
  const response = await fetch(`${API}${path}`, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(form), Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch (error) { data = null; }
  return { ok: response.ok, status: response.status, data };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function deploy(form, panel) {
  const version = form.querySelector("[name=version]").value;
  const request = { tenant: form.dataset.tenant };
  if (version) request.version = Number(version);
  panel.show("Deploying…", 0, 0);
  const answer = await callApi(form, "POST", "/cluster/deployments", request);
  if (!answer.ok) return panel.finish("failed", `Nothing was deployed: ${messageOf(answer.data, answer.status)}`);
  const id = answer.data.deploy_id;
  const told = answer.data.nodes || [];
  if (told.length === 0) {
    return panel.finish("done", `Deployed ${id.slice(0, 8)}: no node is connected; nodes take it when they connect.`);
  }
  for (let waited = 0; waited < DEPLOY_WAIT_SECONDS; waited += 1) {
    const detail = await callApi(form, "GET", `/cluster/deployments/${id}`);
    if (!detail.ok) return panel.finish("failed", `Deployed ${id.slice(0, 8)}, but its reports cannot be read: ${messageOf(detail.data, detail.status)}`);
    const reports = detail.data.reports || [];
    const pending = detail.data.pending || [];
    const lines = reports.map((r) => [`${r.node}: ${r.status} — ${r.message}`, r.ok ? "ok" : "failed"])
      .concat(pending.map((node) => [`${node}: applying…`, "pending"]));
    const total = reports.length + pending.length;
    if (pending.length === 0) {
      const failed = reports.filter((r) => !r.ok).length;
      return panel.finish(failed ? "failed" : "done",
        failed ? `Deployed ${id.slice(0, 8)}: ${failed} of ${total} node(s) did not apply it.`
               : `Deployed ${id.slice(0, 8)}: every node (${total}) applied it.`, lines);
    }
    panel.show(`Deploying ${id.slice(0, 8)}: ${reports.length} of ${total} node(s) reported`, reports.length, total, lines);
    await sleep(1000);
  }
  return panel.finish("failed", `Deployed ${id.slice(0, 8)}: some nodes have not reported after ${DEPLOY_WAIT_SECONDS} s (see the Cluster page).`);
}

function importDefinition(form, panel) {
  const file = form.querySelector("input[type=file]").files[0];
  if (!file) return panel.finish("failed", "Choose a flow definition file (JSON) first.");
  const name = form.querySelector("[name=name]").value.trim();
  const query = name ? `?name=${encodeURIComponent(name)}` : "";
  const request = new XMLHttpRequest();
  request.open("POST", `${API}/process-groups/${form.dataset.group}/process-groups/import${query}`);
  request.setRequestHeader("Content-Type", "application/json");
  request.setRequestHeader("X-CSRFToken", csrfToken(form));
  request.upload.onprogress = (event) => {
    panel.show(`Uploading ${file.name}…`, event.loaded, event.lengthComputable ? event.total : 0);
  };
  request.upload.onload = () => panel.show(`Building the group from ${file.name}…`, 0, 0);
  request.onerror = () => panel.finish("failed", "The upload failed: the server could not be reached.");
  request.onload = () => {
    let body = null;
    try { body = JSON.parse(request.responseText); } catch (error) { body = null; }
    if (request.status === 201) {
      const link = document.createElement("a");
      link.href = `/groups/${body.id}/`;
      link.textContent = `Open ${body.name}`;
      panel.finish("done", `Imported ${file.name} as “${body.name}”.`);
      panel.element.append(link);
    } else {
      const lines = ((body && body.problems) || []).map((p) => [`${p.path}: ${p.message}`, "failed"]);
      panel.finish("failed", `Nothing was imported: ${(body && body.message) || `HTTP ${request.status}`}`, lines);
    }
  };
  panel.show(`Uploading ${file.name}…`, 0, file.size);
  request.send(file);
}

function dropLines(request) {
  const dropped = (request.nodeResults || []).map((n) => [`${n.clusterNodeId}: dropped ${n.droppedCount ?? 0} ` +
    `(${dataSize(n.droppedSize ?? 0)}); ${n.currentCount ?? 0} left`, "ok"]);
  return dropped.concat((request.nodes?.missing || []).map((m) => [`${m.node}: did not answer — ${m.reason}`, "failed"]));
}

async function emptyQueue(form, panel) {
  const follower = new RequestFollower(`flowfile-queues/${form.dataset.connection}/drop-requests`, "dropRequest");
  panel.show("Dropping the queued FlowFiles on every node…", 0, 0);
  let done;
  try {
    done = await follower.run(undefined, (request) => panel.show(
      `Dropping: ${request.percentCompleted}%${request.dropped ? `, ${request.dropped} so far` : ""}`,
      request.percentCompleted, 100, dropLines(request)));
  } catch (error) {
    return panel.finish("failed", `Nothing was dropped: ${describe(error).join(" — ")}`);
  }
  panel.finish(done.partial ? "failed" : "done", `Dropped ${done.droppedCount ?? 0} FlowFile(s).` +
    (done.partial ? " Some nodes did not answer: their FlowFiles are still queued." : ""), dropLines(done));
}

const WORK = { deploy, import: importDefinition, empty: emptyQueue };

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-progress]");
  if (!form || !WORK[form.dataset.progress]) return;
  event.preventDefault();
  const panel = new Panel(document.getElementById(form.dataset.progressPanel));
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  Promise.resolve(WORK[form.dataset.progress](form, panel))
    .catch((error) => panel.finish("failed", `Failed: ${error.message}`))
    .finally(() => { button.disabled = false; });
});
