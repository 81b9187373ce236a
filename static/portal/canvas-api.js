// The REST API as the portal's pages use it (the canvas, provenance, queues): the portal's session
// authenticates, writes send the CSRF token, every change names the component's revision and this
// page's client id. The page's element with data-api names the API's root; its data-pending counts
// the requests under way (tests wait for it to be 0).

const app = document.querySelector("[data-api]") ?? document.body;
export const API = app.dataset.api || "/api/v1";
if (app.dataset.pending === undefined) app.dataset.pending = "0";
export const clientId = crypto.randomUUID();

/** An error answer of the API: ``status`` and the body ({message, problems: [{path, message}]}). */
export class ApiError extends Error {
  constructor(status, body) {
    super(body.message || `the server answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** The URL of ``path``: an absolute URL or path as it is, else relative to the API's root. */
export function apiUrl(path) {
  return /^(https?:)?\//.test(path) ? path : `${API}/${path}`;
}

/** Send a request; the parsed answer, or an ApiError. ``data-pending`` counts requests under way.
 *  ``keepalive`` lets the request outlive the page (a DELETE sent as the page is left). */
export async function api(method, path, body, {keepalive = false} = {}) {
  const headers = {Accept: "application/json"};
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  app.dataset.pending = Number(app.dataset.pending) + 1;
  try {
    const response = await fetch(apiUrl(path), {
      method, headers, credentials: "same-origin", keepalive,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = response.status === 204 ? {} : await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response.status, answer);
    return answer;
  } finally {
    app.dataset.pending = Number(app.dataset.pending) - 1;
  }
}

/** Every item of a paged list. */
export async function listAll(path) {
  const items = [];
  for (let url = `${API}/${path}?limit=1000`; url; ) {
    const page = await api("GET", url.replace(/^https?:\/\/[^/]+/, ""));
    items.push(...page.results);
    url = page.next;
  }
  return items;
}

/** The revision a change to ``resource`` is based on. */
export function revision(resource) {
  return {version: resource.revision.version, clientId};
}

/** Change ``resource`` (PUT to its uri with its revision); the updated resource. */
export function update(resource, fields) {
  return api("PUT", resource.uri, {revision: revision(resource), ...fields});
}

/** Delete ``resource`` at its revision. */
export function remove(resource) {
  const query = new URLSearchParams({version: resource.revision.version, clientId});
  return api("DELETE", `${resource.uri}?${query}`);
}

/** An ApiError as one line, then its problems. */
export function describe(error) {
  if (!(error instanceof ApiError)) return [error?.message || String(error)];
  return [error.message, ...(error.body.problems || []).map((p) => `${p.path ? p.path + ": " : ""}${p.message}`)];
}
