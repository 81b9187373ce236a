// A request resource's progress in a progress panel (progress.js's Panel): how far it is, which
// nodes were asked and which answered, and once finished which did not (a partial result) and why;
// a failure is said there too (as an alert).

import {describe} from "./canvas-api.js";
import {Panel} from "./progress.js";
import {Superseded} from "./requests.js";

function nodeLines(request) {
  const nodes = request.nodes || {asked: [], answered: [], missing: []};
  const answered = new Set(nodes.answered || []);
  const missing = new Map((nodes.missing || []).map((m) => [m.node, m.reason]));
  return (nodes.asked || []).map((node) => answered.has(node) ? [`${node}: answered`, "ok"]
    : missing.has(node) ? [`${node}: did not answer — ${missing.get(node)}`, "failed"]
    : [`${node}: asked…`, "pending"]);
}

/** The nodes a finished request misses, as one sentence ("" when none). */
export function missingNodes(request) {
  const missing = request.nodes?.missing || [];
  return missing.map((m) => `${m.node} (${m.reason})`).join(", ");
}

/** Follows one request in the panel element ``element``; ``noun`` names the work ("Searching"). */
export class RequestProgress {
  constructor(element, noun) {
    this.element = element;
    this.noun = noun;
    this.panel = null;
  }

  /** Show a request's answer (the RequestFollower's progress callback). */
  show(request) {
    this.panel ??= new Panel(this.element);
    const asked = request.nodes?.asked?.length ?? 0;
    const answered = request.nodes?.answered?.length ?? 0;
    const nodes = asked ? ` — ${answered} of ${asked} node(s) answered` : "";
    this.panel.show(`${this.noun}: ${request.percentCompleted ?? 0}%${nodes}`, request.percentCompleted ?? 0, 100,
                    nodeLines(request));
  }

  /** Start over (a new run): an indeterminate bar until the first answer. */
  start() {
    this.panel = new Panel(this.element);
    this.panel.show(`${this.noun}…`, 0, 0);
  }

  /** The run is over: ``state`` "done" or "failed", ``title`` what to say. */
  finish(state, title, request) {
    this.panel ??= new Panel(this.element);
    this.panel.finish(state, title, request ? nodeLines(request) : []);
    this.element.setAttribute("role", state === "failed" ? "alert" : "status");
  }

  /** Run ``body`` with ``follower`` (a RequestFollower), showing its progress: the finished
   *  request (``done`` closes the panel), or the error, said in the panel and thrown again. */
  async follow(follower, body) {
    this.start();
    this.element.setAttribute("role", "status");
    try {
      return await follower.run(body, (request) => this.show(request));
    } catch (error) {
      if (!(error instanceof Superseded)) this.finish("failed", `${this.noun} failed: ${describe(error).join(" — ")}`);
      throw error;
    }
  }

  /** Close the panel on the finished ``request``; ``title`` says what it found. The nodes are
   *  listed one a line only when some did not answer. */
  done(request, title) {
    if (request.partial) return this.finish("failed", `${title} A partial result: some nodes did not answer.`, request);
    const asked = request.nodes?.asked || [];
    this.finish("done", asked.length ? `${title} Every node asked answered (${asked.join(", ")}).` : title);
  }
}
