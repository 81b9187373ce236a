// Building the DOM from scripts: element("a", {href, class}, "text", child, [more children]).

/** A new ``tag`` element with ``attributes`` (``dataset``: data-* values; true: present, false,
 *  null or undefined: absent) and ``children`` (nodes, strings, nested lists). */
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.flat(Infinity));
  return node;
}
