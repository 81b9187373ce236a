// NiFi's request resources as the portal follows them (provenance queries, lineage, queue
// listings, drops, exports): submit, poll until finished (each answer handed to a callback for
// the progress shown), delete. One request at a time per follower: a new run deletes the previous
// request, and leaving the page deletes the current one (NiFi's UI does the same).

import {api, apiUrl, csrfToken} from "./canvas-api.js";

const POLL_MS = 500;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run was replaced by a newer one, or stopped: nothing to show. */
export class Superseded extends Error {}

/** The request finished in the ``failed`` state (its ``failureReason`` is the message). */
export class RequestFailed extends Error {
  constructor(request) {
    super(request.failureReason || "the request failed");
    this.request = request;
  }
}

export class RequestFollower {
  /** ``path``: the collection to POST to; ``key``: the entity's key in answers (``provenance``,
   *  ``lineage``, ``listingRequest``, ``dropRequest``, …). */
  constructor(path, key) {
    this.path = path;
    this.key = key;
    this.current = null;
    addEventListener("pagehide", () => this.forgetOnLeave());
  }

  /** Submit ``body`` and poll until the request finishes; ``progress(request)`` sees every
   *  answer. The finished request, or RequestFailed, Superseded or the API's error. */
  async run(body, progress = () => {}) {
    await this.forget();
    let request = (await api("POST", this.path, body))[this.key];
    this.current = request;
    progress(request);
    while (!request.finished && request.state !== "failed") {
      await sleep(POLL_MS);
      if (this.current?.id !== request.id) throw new Superseded();
      request = (await api("GET", request.uri))[this.key];
      if (this.current?.id !== request.id) throw new Superseded();
      progress(request);
    }
    if (request.state === "failed") throw new RequestFailed(request);
    return request;
  }

  /** Delete the current request (a job still running stops); errors are of no interest. */
  async forget() {
    const request = this.current;
    this.current = null;
    if (request) await api("DELETE", request.uri).catch(() => {});
  }

  forgetOnLeave() {
    const request = this.current;
    this.current = null;
    if (request) {
      fetch(apiUrl(request.uri), {method: "DELETE", keepalive: true, credentials: "same-origin",
                                  headers: {"X-CSRFToken": csrfToken(), Accept: "application/json"}}).catch(() => {});
    }
  }
}
