"""FlowFiles in doubt: sent to a node that may have taken them, so they may go to no other node.

A batch whose acknowledgement never came (a timeout, a Redis failure, this node's crash) may have
been committed by its receiver. Sending those FlowFiles anywhere else would deliver them twice, so
from the moment a batch is about to leave until its receiver accepts it, its FlowFiles are *pinned*
to that node: the partitioners never move them (round robin's fail-over and offload included)
and they are sent to it again, where the receiver's transfer marks recognise what it already
holds. A pin is written to ``<data dir>/state/load-balance/in-doubt/<batch>.json`` (atomically,
synced) before the first entry of its batch leaves, so it survives a crash of this node, and
removed once the batch's outcome is known. A node whose FlowFile repository syncs nothing itself
(sync policy ``os``: it survives a crash of its process, not of the machine) writes its pins the
same way without the two syncs, which cost more than the rest of a pin. Pins of a node an
operator removed from the cluster are released (that node will not answer any more); what it may
have taken is then sent elsewhere.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Iterable

from engine import fileops

__all__ = ["PIN_DIRECTORY", "PinError", "TransferPins"]

log = logging.getLogger(__name__)

PIN_DIRECTORY = Path("state") / "load-balance" / "in-doubt"


class PinError(OSError):
    """A pin could not be written: its batch must not leave (the message names the file)."""


class TransferPins:
    """The pins of one node's data directory (see the module docstring)."""

    def __init__(self, data_dir: str | Path, *, durable: bool = True) -> None:
        self.directory = Path(data_dir) / PIN_DIRECTORY
        self.durable = durable
        self._lock = threading.Lock()
        self._batches: dict[str, tuple[str, frozenset[int]]] = {}
        self._nodes: dict[int, str] = {}
        self._counts: dict[int, int] = {}  # FlowFile id -> how many batches pin it (usually 1)
        self._load()

    def node_of(self, flowfile_id: int) -> str | None:
        """The node FlowFile ``flowfile_id`` is pinned to, or None."""
        return self._nodes.get(flowfile_id)

    def __len__(self) -> int:
        return len(self._nodes)

    def pin(self, batch: str, node: str, flowfile_ids: Iterable[int]) -> None:
        """Pin a batch's FlowFiles to ``node`` before the batch leaves; raises PinError when the
        pin cannot be made durable (then nothing is pinned and the batch must stay)."""
        batch = _name(batch)
        ids = frozenset(flowfile_ids)
        path = self._path(batch)
        data = json.dumps({"node": node, "flowfiles": sorted(ids)}).encode()
        try:
            fileops.make_directory(self.directory)
            fileops.write_atomically(path, data, durable=self.durable)
        except OSError as error:
            raise PinError(f"could not record the batch in doubt {path} ({error}); the batch stays here and is "
                           "sent once the disk takes writes again: free space or fix the disk") from error
        with self._lock:
            self._batches[batch] = (node, ids)
            nodes, counts = self._nodes, self._counts
            for flowfile_id in ids:
                nodes[flowfile_id] = node
                counts[flowfile_id] = counts.get(flowfile_id, 0) + 1

    def settle(self, batch: str, *, delivered: bool) -> None:
        """The outcome of ``batch`` is known: its receiver took it (``delivered``: its FlowFiles
        are no longer in doubt, whichever batches pinned them) or refused it (the pins of earlier
        batches of the same FlowFiles stay)."""
        batch = _name(batch)
        with self._lock:
            entry = self._batches.pop(batch, None)
            if entry is None:
                return
            ids = entry[1]
            stale = [batch]
            if any(self._counts[flowfile_id] > 1 for flowfile_id in ids):  # pinned by other batches too
                stale += self._forget(ids) if delivered else []
                self._reindex()
            else:  # the usual case: a cost by the batch's size, not by every pin held
                for flowfile_id in ids:
                    del self._nodes[flowfile_id], self._counts[flowfile_id]
        for name in stale:
            self._remove(self._path(name))

    def release_node(self, node: str) -> int:
        """Release every pin to ``node`` (an operator removed it); returns how many FlowFiles."""
        with self._lock:
            names = [batch for batch, (pinned, _) in self._batches.items() if pinned == node]
            released = {i for batch in names for i in self._batches.pop(batch)[1]}
            self._reindex()
        for name in names:
            self._remove(self._path(name))
        if released:
            log.warning("%d FlowFile(s) sent to node %s, which was removed, were in doubt; they go to other nodes "
                        "(any that node took before it went are delivered twice)", len(released), node)
        return len(released)

    def keep_only(self, live: Iterable[int]) -> None:
        """Forget pins of FlowFiles that no longer exist (they left through other ways)."""
        alive = set(live)
        with self._lock:
            gone = {i for _, ids in self._batches.values() for i in ids} - alive
            stale = self._forget(gone)
            self._reindex()
        for name in stale:
            self._remove(self._path(name))

    def _forget(self, flowfile_ids: Iterable[int]) -> list[str]:
        """Drop ``flowfile_ids`` from every batch; returns the batches left with none (their files
        go; a file still naming some of them is harmless, as FlowFile ids are never reused)."""
        gone = frozenset(flowfile_ids)
        emptied = []
        for name, (node, ids) in list(self._batches.items()):
            if ids & gone:
                left = ids - gone
                if left:
                    self._batches[name] = (node, left)
                else:
                    del self._batches[name]
                    emptied.append(name)
        return emptied

    def _reindex(self) -> None:
        self._nodes = {i: node for node, ids in self._batches.values() for i in ids}
        self._counts = dict.fromkeys(self._nodes, 0)
        for _, ids in self._batches.values():
            for flowfile_id in ids:
                self._counts[flowfile_id] += 1

    def _path(self, batch: str) -> Path:
        return self.directory / f"{batch}.json"

    def _load(self) -> None:
        if not self.directory.is_dir():
            return
        for path in sorted(self.directory.glob("*.json")):
            try:
                document = json.loads(path.read_bytes())
                node, ids = document["node"], frozenset(int(i) for i in document["flowfiles"])
                if not isinstance(node, str) or not node:
                    raise ValueError("no node")
            except (OSError, ValueError, KeyError, TypeError) as error:
                log.error("%s is not a readable pin of a batch in doubt (%s); its FlowFiles, if any, may now go to "
                          "any node and so be delivered twice. Nothing to do unless that matters: then restore "
                          "the file from a backup before the node starts", path, error)
                continue
            self._batches[path.stem] = (node, ids)
        self._reindex()

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            log.warning("could not remove %s (%s); it is forgotten at the next start", path, error)


def _name(batch: str) -> str:
    """A batch key as a file name (``<transfer id>:<attempt>`` holds a colon)."""
    return batch.replace(":", "-")
