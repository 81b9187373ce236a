// Exporting a provenance search's result (CSV or JSON): the export request, its progress in place,
// then a link that downloads the file.

import {apiUrl} from "./canvas-api.js";
import {element} from "./dom.js";
import {RequestProgress} from "./request-progress.js";
import {RequestFollower} from "./requests.js";

export class ProvenanceExport {
  /** The export of the results shown in ``root`` (its [data-export] buttons name the formats). */
  constructor(root) {
    this.area = root.querySelector("#export-area");
    this.progress = new RequestProgress(root.querySelector("#export-progress"), "Exporting");
    this.follower = new RequestFollower("provenance-exports", "provenanceExport");
    this.request = null;
    root.addEventListener("click", (event) => {
      const button = event.target.closest("[data-export]");
      if (button) this.export(button.dataset.export);
    });
  }

  /** A new search: its ``request`` (the provenance query's) is what an export exports. */
  reset(request) {
    this.request = request;
    this.area.hidden = true;
    this.follower.forget();
  }

  async export(format) {
    this.area.hidden = false;
    const {maxResults, ...search} = this.request;  // an export holds as many events as the search shows
    try {
      const done = await this.progress.follow(this.follower, {provenanceExport: {format, maxEvents: maxResults, request: search}});
      this.progress.done(done, `The ${format} export of ${done.eventCount} event(s) is ready.`);
      this.progress.element.append(element("a", {class: "btn btn-sm btn-primary", href: apiUrl(done.contentUri),
                                                 download: ""}, `Download ${format}`));
    } catch (error) {
      // said in the progress panel
    }
  }
}
