// The live socket of a process group (/ws/process-groups/<id>, docs/api.md "Live updates"):
// it hands each message to the page's handlers and reconnects with back-off when it drops
// (1 s, doubling up to 30 s, with jitter), so the page never polls while the socket is up.
// A close with 4404 (the group is gone or not the user's) or 4401 (not logged in) is final.

const FINAL_CLOSES = new Set([4401, 4404]);
const FIRST_DELAY_MS = 1000;
const LONGEST_DELAY_MS = 30000;

export class LiveGroup {
  // handlers: {hello, stats, design, cluster, state}; state(name) is told "connecting", "open",
  // "retrying" (with the delay in ms) or "closed" (with the close code).
  constructor(groupId, handlers) {
    this.groupId = groupId;
    this.handlers = handlers;
    this.delay = FIRST_DELAY_MS;
    this.socket = null;
    this.stopped = false;
    this.timer = null;
  }

  get open() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  start() {
    this.stopped = false;
    this.connect();
    return this;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.socket) this.socket.close(1000);
  }

  connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${window.location.host}/ws/process-groups/${this.groupId}`);
    this.socket = socket;
    this.tell("state", "connecting");
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "hello") {
        this.delay = FIRST_DELAY_MS;
        this.tell("state", "open");
      }
      this.tell(message.type, message);
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped || FINAL_CLOSES.has(event.code)) {
        this.tell("state", "closed", event.code);
        return;
      }
      const wait = Math.round(this.delay * (0.75 + Math.random() / 2));
      this.delay = Math.min(this.delay * 2, LONGEST_DELAY_MS);
      this.tell("state", "retrying", wait);
      this.timer = setTimeout(() => this.connect(), wait);
    });
  }

  tell(name, ...values) {
    const handler = this.handlers[name];
    if (handler) handler(...values);
  }
}
