// The canvas's forms: the side panel that configures the selected component, the processor type
// picker and the relationship picker of a new connection. Each shows the API's validation messages.

import {api, describe, update} from "./canvas-api.js";
import {element} from "./dom.js";

const panel = document.getElementById("side-panel");
const typeCache = new Map();

function problemList(id, lines) {
  return element("ul", {class: "problems", id}, lines.map((line) => element("li", {}, line)));
}

/** The catalogue entry of a processor type (fetched once). */
export async function processorType(name) {
  if (!typeCache.has(name)) typeCache.set(name, await api("GET", `processor-types/${encodeURIComponent(name)}`));
  return typeCache.get(name);
}

let rendering = 0;  // the latest panel asked for: an older one still loading is dropped

export function closePanel() {
  rendering += 1;
  panel.hidden = true;
  panel.replaceChildren();
  delete panel.dataset.component;
}

function propertyInput(descriptor, resource) {
  const name = descriptor.name;
  const attributes = {"data-property": name, id: `property-${name}`, placeholder: descriptor.defaultValue ?? ""};
  if (descriptor.allowableValues?.length) {
    const current = resource.properties[name] ?? "";
    return element("select", attributes, element("option", {value: ""}, "(default)"),
      descriptor.allowableValues.map((v) => element("option", {value: v.value, selected: v.value === current}, v.displayName)));
  }
  if (descriptor.sensitive) {
    const set = resource.sensitivePropertiesSet.includes(name);
    return element("input", {...attributes, type: "password", placeholder: set ? "(set: type to replace)" : ""});
  }
  return element("input", {...attributes, type: "text", value: resource.properties[name] ?? ""});
}

/** The properties a processor form changes: changed values, and null for a value emptied. */
function changedProperties(form, resource) {
  const changes = {};
  for (const input of form.querySelectorAll("[data-property]")) {
    const name = input.dataset.property;
    const before = resource.properties[name] ?? "";
    if (input.type === "password" ? input.value !== "" : input.value !== before) changes[name] = input.value === "" ? null : input.value;
  }
  return changes;
}

async function processorFields(resource) {
  const type = await processorType(resource.type);
  return [
    element("div", {class: "panel-meta"}, `${resource.type} · ${resource.state} · `,
      element("span", {class: resource.validationStatus === "VALID" ? "badge badge-valid" : "badge badge-invalid",
                       id: "panel-validation"}, resource.validationStatus)),
    problemList("panel-problems", resource.validationErrors.map((p) => (p.property ? `${p.property}: ` : "") + p.message)),
    element("h3", {}, "Properties"),
    type.properties.map((d) => element("div", {class: "field"},
      element("label", {for: `property-${d.name}`, title: d.description}, d.displayName + (d.required ? " *" : "")),
      propertyInput(d, resource))),
    element("h3", {}, "Automatically terminate"),
    resource.relationships.map((r) => element("label", {class: "check"},
      element("input", {type: "checkbox", "data-terminate": r.name, checked: r.autoTerminate}), ` ${r.name}`)),
  ];
}

/** A label's text, size, font size and colour. */
function labelFields(resource) {
  const field = (name, label, input) => element("div", {class: "field"}, element("label", {for: `panel-${name}`}, label), input);
  return [
    field("text", "Text", element("textarea", {id: "panel-text", name: "text", rows: 4}, resource.label ?? "")),
    field("width", "Width", element("input", {type: "number", id: "panel-width", name: "width", min: 1, value: resource.width})),
    field("height", "Height", element("input", {type: "number", id: "panel-height", name: "height", min: 1, value: resource.height})),
    field("fontSize", "Font size (px)", element("input", {type: "number", id: "panel-fontSize", name: "fontSize", min: 6,
      value: parseInt(resource.style?.["font-size"] || "12", 10)})),
    field("background", "Colour", element("input", {type: "color", id: "panel-background", name: "background",
      value: resource.style?.["background-color"] || "#fff7d7"})),
  ];
}

function connectionFields(resource, source) {
  const names = source?.relationships?.map((r) => r.name) ?? resource.availableRelationships ?? [];
  return [
    element("div", {class: "panel-meta"}, `${resource.source.name || resource.source.type} ➜ ${resource.destination.name || resource.destination.type}`),
    names.length ? element("h3", {}, "Relationships") : [],
    names.map((name) => element("label", {class: "check"}, element("input", {
      type: "checkbox", "data-relationship": name, checked: resource.selectedRelationships.includes(name)}), ` ${name}`)),
    resource.bends.length ? element("label", {class: "check"}, element("input", {type: "checkbox", "data-straighten": ""}),
      ` Remove the ${resource.bends.length} bend point${resource.bends.length === 1 ? "" : "s"}`) : [],
  ];
}

function formChanges(form, kind, resource) {
  const changes = {};
  if (form.elements.name) changes.name = form.elements.name.value;
  if (kind === "PROCESSOR") {
    changes.properties = changedProperties(form, resource);
    changes.autoTerminatedRelationships = [...form.querySelectorAll("[data-terminate]:checked")].map((i) => i.dataset.terminate);
  }
  if (kind === "CONNECTION" && form.querySelector("[data-relationship]")) {
    changes.selectedRelationships = [...form.querySelectorAll("[data-relationship]:checked")].map((i) => i.dataset.relationship);
  }
  if (form.querySelector("[data-straighten]:checked")) changes.bends = [];
  if (kind === "LABEL") {
    const {text, width, height, fontSize, background} = form.elements;
    Object.assign(changes, {label: text.value, width: Number(width.value), height: Number(height.value),
                            style: {"font-size": `${fontSize.value}px`, "background-color": background.value}});
  }
  return changes;
}

/** Links to the pages about a component's data: a processor's provenance, a connection's queue. */
function pageLinks(kind, resource) {
  const {provenanceUrl, queueUrl} = document.getElementById("canvas-app").dataset;
  const link = (href, text) => element("nav", {class: "panel-links", "aria-label": "Data"},
                                       element("a", {class: "btn btn-sm", href}, text));
  if (kind === "PROCESSOR") return link(`${provenanceUrl}?componentId=${resource.id}`, "Provenance");
  if (kind === "CONNECTION") return link(queueUrl.replace(/0{8}(-0{4}){3}-0{12}/, resource.id), "List queue");
  return [];
}

/** Show the side panel of ``resource`` (a ``kind``); ``saved(resource)`` follows a saved change,
 *  ``conflict()`` a 409 (another change came first). ``source`` is a connection's source resource. */
export async function openPanel(kind, resource, {canModify, saved, conflict, source}) {
  const ticket = ++rendering;
  const fields = kind === "PROCESSOR" ? await processorFields(resource)
    : kind === "CONNECTION" ? connectionFields(resource, source) : kind === "LABEL" ? labelFields(resource) : [];
  if (ticket !== rendering) return;
  const form = element("form", {class: "panel-form"},
    kind === "FUNNEL" || kind === "LABEL" ? [] : element("div", {class: "field"}, element("label", {for: "panel-name"}, "Name"),
      element("input", {type: "text", id: "panel-name", name: "name", value: resource.name ?? ""})),
    fields,
    element("ul", {class: "problems", id: "panel-errors"}),
    canModify && kind !== "FUNNEL" ? element("div", {class: "dialog-actions"}, element("button", {class: "btn btn-primary", type: "submit"}, "Save")) : []);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      saved(await update(resource, formChanges(form, kind, resource)));
    } catch (error) {
      if (error.status === 409) return conflict(error);
      form.querySelector("#panel-errors").replaceChildren(...describe(error).map((line) => element("li", {}, line)));
    }
  });
  panel.replaceChildren(element("h2", {}, kind.toLowerCase().replace("_", " ")), form, pageLinks(kind, resource));
  panel.dataset.component = resource.id;
  panel.hidden = false;
}

/** Ask which processor type to add; the chosen type's name, or null. */
export async function pickProcessorType() {
  const dialog = document.getElementById("type-dialog");
  const options = document.getElementById("type-options");
  const filter = document.getElementById("type-filter");
  const types = (await api("GET", "processor-types?limit=1000")).results;
  const show = () => {
    const words = filter.value.toLowerCase();
    options.replaceChildren(...types.filter((t) => `${t.type} ${t.description} ${t.tags.join(" ")}`.toLowerCase().includes(words))
      .map((t) => element("button", {class: "type-option", value: t.type, "data-type": t.type},
        element("strong", {}, t.type), element("span", {}, t.description.split(". ")[0]))));
  };
  filter.value = "";
  filter.oninput = show;
  show();
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue && dialog.returnValue !== "cancel" ? dialog.returnValue : null), {once: true});
  });
}

function portChoice(id, label, ports) {
  return element("div", {class: "field"}, element("label", {for: id}, label),
    element("select", {id}, ports.map((port) => element("option", {value: port.id}, port.name))));
}

/** Ask which relationships a new connection carries (and, for an end that is a child group, which
 *  of its ports: ``ports.from`` its output ports, ``ports.to`` its input ports), then create it;
 *  ``create({relationships, sourceId, destinationId})`` posts it (throwing the API's error, shown
 *  in the dialog). True once created. */
export function pickRelationships(source, destination, create, ports = {}) {
  const dialog = document.getElementById("relationship-dialog");
  const errors = document.getElementById("relationship-errors");
  document.getElementById("relationship-ends").textContent = `${source.name || "source"} ➜ ${destination.name || "destination"}`;
  document.getElementById("port-options").replaceChildren(
    ports.from ? portChoice("from-port", "From output port", ports.from) : [],
    ports.to ? portChoice("to-port", "To input port", ports.to) : []);
  const fieldset = document.getElementById("relationship-options");
  const names = (source.relationships || []).map((r) => r.name);
  fieldset.hidden = names.length === 0;
  fieldset.replaceChildren(element("legend", {}, "Relationships"), ...names.map((name) => element("label", {class: "check"},
    element("input", {type: "checkbox", name: "relationship", value: name, checked: names.length === 1}), ` ${name}`)));
  errors.replaceChildren();
  dialog.showModal();
  return new Promise((resolve) => {
    const form = dialog.querySelector("form");
    const submit = async (event) => {
      event.preventDefault();
      if (event.submitter?.value === "cancel") return finish(false);
      try {
        await create({relationships: [...fieldset.querySelectorAll("input:checked")].map((i) => i.value),
                      sourceId: document.getElementById("from-port")?.value ?? source.id,
                      destinationId: document.getElementById("to-port")?.value ?? destination.id});
        finish(true);
      } catch (error) {
        errors.replaceChildren(...describe(error).map((line) => element("li", {}, line)));
      }
    };
    const cancel = () => finish(false);
    const finish = (created) => {
      form.removeEventListener("submit", submit);
      dialog.removeEventListener("cancel", cancel);
      dialog.close();
      resolve(created);
    };
    form.addEventListener("submit", submit);
    dialog.addEventListener("cancel", cancel);
  });
}
