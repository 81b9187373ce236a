// How the canvas looks: each kind's size, the labels with NiFi's figures, the Cytoscape style.

/** Width and height of each kind of node (positions are their top left corners, as in NiFi). */
export const SIZES = {PROCESSOR: [260, 104], PROCESS_GROUP: [260, 104], INPUT_PORT: [150, 44],
                      OUTPUT_PORT: [150, 44], FUNNEL: [44, 44], LABEL: [150, 150], GHOST: [1, 1]};

/** A node's width and height: a label's own, else its kind's. */
export function sizeOf(kind, resource) {
  return kind === "LABEL" && resource ? [resource.width || SIZES.LABEL[0], resource.height || SIZES.LABEL[1]] : SIZES[kind];
}

const UNITS = ["B", "KB", "MB", "GB", "TB"];

export function bytes(value) {
  let size = value, unit = 0;
  while (size >= 1024 && unit < UNITS.length - 1) { size /= 1024; unit += 1; }
  return `${unit ? size.toFixed(1) : size} ${UNITS[unit]}`;
}

function parseSize(text) {
  const match = /^\s*([\d.]+)\s*([KMGT]?B)\s*$/i.exec(text || "");
  return match ? Number(match[1]) * 1024 ** UNITS.indexOf(match[2].toUpperCase()) : 0;
}

function figure(count, size) {
  return count === undefined ? "–" : `${count.toLocaleString()} (${bytes(size || 0)})`;
}

function amount(size) {
  return size === undefined ? "–" : bytes(size);
}

/** A back-pressure fill: the nodes' own (the fullest node's percentage) when they sent it. */
function fill(reported, part, whole) {
  return reported !== undefined ? `${reported}%` : percent(part, whole);
}

function percent(part, whole) {
  return part !== undefined && whole ? `${Math.min(100, Math.round((100 * part) / whole))}%` : "–";
}

/** The newest bulletin of the last five minutes (the nodes keep no older ones), shortened. */
function bulletinLine(bulletin) {
  if (!bulletin || Date.now() / 1000 - bulletin.timestamp > 300) return "";
  const text = bulletin.message.length > 48 ? `${bulletin.message.slice(0, 47)}…` : bulletin.message;
  return `⚑ ${bulletin.level}: ${text}`;
}

/** The lines a node shows: name, kind or type, run state, problems and the 5-minute figures. */
export function nodeLabel(kind, resource, figures = {}) {
  if (kind === "FUNNEL") return "";
  if (kind === "LABEL") return resource.label || "";
  if (kind === "PROCESSOR") {
    const problems = resource.validationErrors.length;
    return [
      resource.name, `${resource.type} · ${figures.run_status || resource.state}`,
      problems ? `⚠ ${problems} problem${problems === 1 ? "" : "s"}` : "✓ valid",
      `In ${figure(figures.flowfiles_in, figures.bytes_in)}  Read ${amount(figures.bytes_read)}  ` +
      `Written ${amount(figures.bytes_written)}`,
      `Out ${figure(figures.flowfiles_out, figures.bytes_out)}  Tasks ${figures.active_threads ?? "–"}`,
      bulletinLine(figures.bulletin),
    ].filter(Boolean).join("\n");
  }
  if (kind === "PROCESS_GROUP") {
    const c = resource.contents;
    return [resource.name, `${c.processors} processors · ${c.processGroups} groups`,
            `Queued ${figure(figures.queued_count, figures.queued_bytes)}`,
            `Running ${figures.running ?? "–"} · Stopped ${figures.stopped ?? "–"} · Invalid ${figures.invalid ?? "–"}`].join("\n");
  }
  return `${kind === "INPUT_PORT" ? "➜ " : ""}${resource.name}${kind === "OUTPUT_PORT" ? " ➜" : ""}`;
}

/** A connection's lines: its relationships, queued figures, back-pressure fill of both
 *  thresholds and what waits for another node. */
export function connectionLabel(resource, figures = {}) {
  const lines = [resource.name || resource.selectedRelationships.join(", ")];
  lines.push(`Queued ${figure(figures.queued_count, figures.queued_bytes)}`);
  lines.push(`Fill ${fill(figures.percent_use_count, figures.queued_count, resource.backPressureObjectThreshold)} · ` +
             `${fill(figures.percent_use_bytes, figures.queued_bytes, parseSize(resource.backPressureDataSizeThreshold))}`);
  if (figures.flowFilesAwaitingTransfer) {
    lines.push(`↔ ${figure(figures.flowFilesAwaitingTransfer, figures.bytesAwaitingTransfer)} awaiting transfer`);
  }
  return lines.filter(Boolean).join("\n");
}

/** A connection's bend points (absolute, as the flow definition keeps them) as Cytoscape's
 *  segment weights (along source → target) and distances (across it). */
function segments(edge) {
  const source = edge.source().position(), target = edge.target().position();
  const dx = target.x - source.x, dy = target.y - source.y;
  const length = Math.hypot(dx, dy) || 1;
  const points = edge.data("resource").bends;
  return {
    weights: points.map((p) => ((p.x - source.x) * dx + (p.y - source.y) * dy) / (length * length)),
    distances: points.map((p) => ((p.y - source.y) * dx - (p.x - source.x) * dy) / length),
  };
}

const STATE_COLOURS = {RUNNING: "#16a34a", STOPPED: "#64748b", DISABLED: "#cbd5e1"};

/** The Cytoscape style sheet. */
export const STYLE = [
  {selector: "node", style: {
    "shape": "round-rectangle", "background-color": "#ffffff", "border-width": 1, "border-color": "#94a3b8",
    "label": "data(label)", "text-wrap": "wrap", "text-valign": "center", "text-halign": "center",
    "font-size": 11, "color": "#0f172a", "text-max-width": 244, "line-height": 1.35,
    "min-zoomed-font-size": 5,  // labels too small to read are not drawn: a large group opens fast
    "width": (n) => sizeOf(n.data("kind"), n.data("resource"))[0],
    "height": (n) => sizeOf(n.data("kind"), n.data("resource"))[1],
  }},
  {selector: "node[kind = 'LABEL']", style: {
    "shape": "rectangle", "border-width": 0, "z-index": 0,
    "background-color": (n) => n.data("resource").style?.["background-color"] || "#fff7d7",
    "font-size": (n) => parseInt(n.data("resource").style?.["font-size"] || "12", 10),
    "text-valign": "top", "text-halign": "center", "text-justification": "left",
    "text-max-width": (n) => sizeOf("LABEL", n.data("resource"))[0] - 12, "text-margin-y": 6,
  }},
  {selector: "node[kind = 'PROCESSOR']", style: {
    "border-width": 2, "border-color": (n) => STATE_COLOURS[n.data("resource").state] || "#64748b",
  }},
  {selector: "node[kind = 'PROCESSOR'][label *= '⚠']", style: {"background-color": "#fef2f2"}},
  {selector: "node[kind = 'PROCESSOR'][label *= '⚑']", style: {"background-color": "#fff7ed"}},
  {selector: "node[kind = 'PROCESS_GROUP']", style: {"background-color": "#eef2ff", "border-width": 2, "border-style": "double"}},
  {selector: "node[kind = 'FUNNEL']", style: {"shape": "ellipse", "background-color": "#e2e8f0"}},
  {selector: "node[kind = 'INPUT_PORT'], node[kind = 'OUTPUT_PORT']", style: {"shape": "round-tag", "background-color": "#f0fdf4"}},
  {selector: "node:selected", style: {"border-width": 3, "border-color": "#2563eb", "overlay-opacity": 0}},
  {selector: "edge", style: {
    "curve-style": "bezier", "width": 2, "line-color": "#94a3b8", "target-arrow-shape": "triangle",
    "target-arrow-color": "#94a3b8", "label": "data(label)", "font-size": 10, "text-wrap": "wrap",
    "min-zoomed-font-size": 5,
    "text-background-color": "#ffffff", "text-background-opacity": 1, "text-background-padding": 3,
    "text-border-width": 1, "text-border-color": "#cbd5e1", "text-border-opacity": 1,
  }},
  {selector: "edge[?bent]", style: {
    "curve-style": "segments", "edge-distances": "node-position",
    "segment-weights": (e) => segments(e).weights, "segment-distances": (e) => segments(e).distances,
  }},
  {selector: "edge:selected", style: {"line-color": "#2563eb", "target-arrow-color": "#2563eb", "width": 3}},
  {selector: ".ghost", style: {"opacity": 0.6, "label": "", "line-style": "dashed", "width": 2, "height": 2,
                               "background-color": "#2563eb", "border-width": 0}},
];
