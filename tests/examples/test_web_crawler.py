"""The web-crawler example against the example site and a real SMTP server, as the README runs it."""

from __future__ import annotations

import email
import gzip
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from aiosmtpd.controller import Controller

from tests.servers import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES = {"index.html": "Riverside Data Co-op", "about.html": "About us", "pipeline.html": "Our pipeline",
         "stations.html": "Stations", "blog/index.html": "Blog", "blog/flood-week.html": "Flood week"}


class Inbox:
    """An aiosmtpd handler keeping every message."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], str]] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((list(envelope.rcpt_tos), envelope.content.decode("utf-8", "replace")))
        return "250 OK"


def test_crawler_fetches_each_page_once_mails_mentions_logs_broken_links_and_archives(tmp_path):
    site = subprocess.Popen([sys.executable, "examples/serve_site.py", "--port", "0"], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=open(tmp_path / "site.log", "w"), text=True)
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    node = None
    archive, log = tmp_path / "crawl", tmp_path / "node.log"
    try:
        base = site.stdout.readline().split(" at ")[1].strip().rstrip("/")
        parameters = {"seed.url": f"{base}/index.html", "smtp.port": str(smtp.port), "cache.port": str(free_port()),
                      "archive.directory": str(archive), "bundle.age": "2 sec"}
        arguments = [sys.executable, "-m", "engine", "run", "--flow", "examples/web-crawler.json",
                     "--data-dir", str(tmp_path / "node")]
        for name, value in parameters.items():
            arguments += ["--parameter", f"{name}={value}"]
        node = subprocess.Popen(arguments, cwd=REPO_ROOT, stdout=open(log, "w"), stderr=subprocess.STDOUT)

        def archived() -> str:
            return "".join(gzip.decompress(p.read_bytes()).decode() for p in archive.glob("crawl-*.html.gz")) \
                if archive.is_dir() else ""

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = all(f"<title>{title}</title>" in archived() for title in PAGES.values())
            if done and len(inbox.messages) >= 2 and "old-pipeline.html" in log.read_text():
                break
            assert node.poll() is None, log.read_text()[-3000:]
            time.sleep(0.3)
        time.sleep(2)  # let anything still in flight arrive, to catch double fetches
    finally:
        if node is not None:
            node.send_signal(signal.SIGTERM)
            assert node.wait(timeout=60) == 0, log.read_text()[-3000:]
        smtp.stop()
        site.terminate()
        site.wait(timeout=10)
    for title in PAGES.values():
        assert archived().count(f"<title>{title}</title>") == 1, f"{title!r} archived once"
    requests = Counter(re.findall(r'"GET /(\S*) HTTP/1\.1" (\d+)', (tmp_path / "site.log").read_text()))
    assert {path: count for (path, status), count in requests.items() if status == "200"} == \
        {path: 1 for path in PAGES}, "every page is fetched exactly once"
    assert requests[("old-pipeline.html", "404")] == 1
    subjects = sorted(email.message_from_string(body)["Subject"] for _, body in inbox.messages)
    assert subjects == [f"NiFi mentioned at {base}/blog/flood-week.html", f"NiFi mentioned at {base}/pipeline.html"]
    assert all(recipients == ["team@flowsite.example"] for recipients, _ in inbox.messages)
    bodies = [_text(email.message_from_string(body)) for _, body in inbox.messages]
    assert any("routed with a NiFi-style dataflow" in body for body in bodies), bodies
    assert "broken link" in log.read_text() and "404" in log.read_text()


def _text(message) -> str:
    part = next(p for p in message.walk() if p.get_content_maintype() == "text")
    return part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")
