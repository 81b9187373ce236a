"""Serves the example website (examples/site) for the web-crawler example.

    python examples/serve_site.py [--port 8000]

Pages link to each other with absolute URLs, as the crawler expects; ``{{BASE}}`` in a page
becomes this server's own address.
"""

from __future__ import annotations

import argparse
import http.server
from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"


class SiteHandler(http.server.BaseHTTPRequestHandler):
    """Answers GET requests with the site's pages, 404 for anything else."""

    base = ""

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].lstrip("/") or "index.html"
        page = (SITE / path).resolve()
        if SITE not in page.parents or not page.is_file():
            self.send_error(404, "no such page")
            return
        body = page.read_text().replace("{{BASE}}", self.base).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer((args.host, args.port), SiteHandler)
    SiteHandler.base = f"http://{args.host}:{server.server_address[1]}"
    print(f"serving {SITE} at {SiteHandler.base}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
