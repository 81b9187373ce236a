"""Exports run on a thread of their own for requesters that poll, as a node's command handler does.

A node answers its commands one at a time on one thread, so an export that takes a minute must
not run there. ``ExportService.request(token)`` answers at once with the state of the export that
serves ``token`` — the requester (an analytics job) asks again with the same token until the
state is ``done`` or ``failed``. A token met for the first time waits for the next export: an
export already running may have rolled the journals over before the requester's events, so only
one that starts after the request counts. All tokens waiting when an export starts share it.
The states of the last ``keep`` tokens are remembered.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any, Callable

from engine.provenance.export import ExportReport

__all__ = ["ExportService"]

log = logging.getLogger(__name__)

_MAX_TOKEN = 128


class ExportService:
    """Runs ``export(progress)`` (returning an ``ExportReport``) for the tokens that ask, one export
    at a time, on a background thread (see the module docstring)."""

    def __init__(self, export: Callable[[Callable[[float], None]], ExportReport], *, keep: int = 64,
                 name: str = "provenance-export") -> None:
        self._export = export
        self._keep = keep
        self._name = name
        self._lock = threading.Lock()
        self._states: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._waiting: list[str] = []
        self._thread: threading.Thread | None = None

    def request(self, token: str) -> dict[str, Any]:
        """The state of the export serving ``token``, starting one when none runs:
        ``{"state": "waiting"|"running"|"done"|"failed", "percent", "report"?, "error"?}``."""
        if not isinstance(token, str) or not token or len(token) > _MAX_TOKEN:
            raise ValueError(f"an export request needs a 'token' of 1 to {_MAX_TOKEN} characters")
        with self._lock:
            state = self._states.get(token)
            if state is None:
                state = self._remember(token, {"state": "waiting", "percent": 0})
                self._waiting.append(token)
            if self._thread is None and self._waiting:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            return dict(state)

    def _remember(self, token: str, state: dict[str, Any]) -> dict[str, Any]:
        self._states[token] = state
        self._states.move_to_end(token)
        while len(self._states) > self._keep:
            oldest = next(iter(self._states))
            if self._states[oldest]["state"] in ("waiting", "running"):
                break
            self._states.popitem(last=False)
        return state

    def _run(self) -> None:
        while True:
            with self._lock:
                tokens, self._waiting = self._waiting, []
                if not tokens:
                    self._thread = None
                    return
                for token in tokens:
                    self._states[token].update(state="running", percent=0)

            def progress(fraction: float, serving: list[str] = tokens) -> None:
                with self._lock:
                    for token in serving:
                        self._states[token]["percent"] = int(fraction * 100)

            try:
                outcome = {"state": "done", "percent": 100, "report": self._export(progress).as_dict()}
            except Exception as error:  # noqa: BLE001 - the requesters get the reason
                log.exception("provenance export failed")
                outcome = {"state": "failed", "percent": 100, "error": str(error) or type(error).__name__}
            with self._lock:
                for token in tokens:
                    self._states[token] = outcome
