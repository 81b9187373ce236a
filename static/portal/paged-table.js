// A table shown a page at a time (provenance results, a queue listing): the page's rows, a
// "Showing 51–100 of 1,234" line and Previous / Next buttons. A column header with
// data-sort-key="<field>" sorts the items by that field (again: the other way round).

import {element} from "./dom.js";

export const PAGE_SIZE = 50;

export class PagedTable {
  /** ``root`` holds a table (its tbody filled here), a [data-pager] element and a [data-showing]
   *  element; ``rowOf(item)`` makes an item's <tr>. */
  constructor(root, rowOf, pageSize = PAGE_SIZE) {
    this.body = root.querySelector("tbody");
    this.showing = root.querySelector("[data-showing]");
    this.pager = root.querySelector("[data-pager]");
    this.rowOf = rowOf;
    this.pageSize = pageSize;
    this.items = [];
    this.page = 0;
    this.previous = element("button", {type: "button", class: "btn btn-sm", "data-page": "previous"}, "Previous");
    this.next = element("button", {type: "button", class: "btn btn-sm", "data-page": "next"}, "Next");
    this.position = element("span", {class: "muted small"});
    this.previous.addEventListener("click", () => this.show(this.page - 1));
    this.next.addEventListener("click", () => this.show(this.page + 1));
    this.pager.replaceChildren(this.previous, this.position, this.next);
    for (const header of root.querySelectorAll("th[data-sort-key]")) {
      const button = element("button", {type: "button", class: "sort-button"}, ...header.childNodes);
      button.addEventListener("click", () => this.sortBy(header));
      header.replaceChildren(button);
    }
  }

  /** Sort by ``header``'s field: ascending first, descending when it already sorts ascending. */
  sortBy(header) {
    const key = header.dataset.sortKey;
    const direction = header.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    for (const other of header.closest("tr").querySelectorAll("th")) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    const value = (item) => item[key] ?? "";
    this.items = [...this.items].sort((a, b) => direction * (typeof value(a) === "number" && typeof value(b) === "number"
      ? value(a) - value(b) : String(value(a)).localeCompare(String(value(b)), "en", {numeric: true})));
    this.show(0);
  }

  get pages() {
    return Math.max(1, Math.ceil(this.items.length / this.pageSize));
  }

  /** Show ``items`` from their first page; ``empty`` is said when there are none. */
  fill(items, empty) {
    this.items = items;
    for (const header of this.body.closest("table").querySelectorAll("th[aria-sort]")) header.removeAttribute("aria-sort");
    this.empty = empty;
    this.show(0);
  }

  show(page) {
    this.page = Math.min(Math.max(page, 0), this.pages - 1);
    const first = this.page * this.pageSize;
    const shown = this.items.slice(first, first + this.pageSize);
    const columns = this.body.closest("table").querySelectorAll("thead th").length;
    this.body.replaceChildren(...(shown.length ? shown.map(this.rowOf)
      : [element("tr", {}, element("td", {colspan: columns, class: "empty"}, this.empty))]));
    const count = this.items.length.toLocaleString("en");
    this.showing.textContent = shown.length ? `Showing ${first + 1}–${first + shown.length} of ${count}` : "";
    this.position.textContent = `Page ${this.page + 1} of ${this.pages}`;
    this.previous.disabled = this.page === 0;
    this.next.disabled = this.page >= this.pages - 1;
    this.pager.hidden = this.pages < 2;
  }
}
