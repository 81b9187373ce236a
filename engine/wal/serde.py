"""How the write-ahead log sees the records it stores."""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Protocol, Sequence, TypeVar

__all__ = ["UpdateType", "SerDe"]

R = TypeVar("R")


class UpdateType(IntEnum):
    """What a record does to the log's state (NiFi's ``UpdateType``)."""

    CREATE = 1
    UPDATE = 2
    DELETE = 3
    SWAP_OUT = 4
    SWAP_IN = 5
    SWAP_FILE_DELETED = 6
    SWAP_FILE_RENAMED = 7
    #: A FlowFile received from a peer node: a transfer mark (key, received-at ms) kept for a
    #: while so that a batch sent again after a lost acknowledgement is not taken twice.
    TRANSFER_RECEIVED = 8
    #: An outbox entry: work to be done once the transaction is durable (the provenance events
    #: of a commit), kept in the log until the doer settles it, and found again by recovery
    #: when the node died before it was done. It names the runs of lower keys still open
    #: when its key was taken: every other lower key was settled by then.
    OUTBOX = 9


class SerDe(Protocol[R]):
    """Turns records into msgpack-able "wire" values and back, and classifies them.

    ``name`` and ``version`` are written into every journal and snapshot header so that a
    reader knows how the records were encoded.
    """

    name: str
    version: int

    def to_wire(self, record: R) -> Any:
        """A msgpack-serialisable value holding the whole record."""

    def from_wire(self, wire: Any, version: int) -> R:
        """The record written by ``to_wire`` under serde ``version``."""

    def record_id(self, record: R) -> int | None:
        """The identity of the record in the log's state (None for swap-file records)."""

    def update_type(self, record: R) -> UpdateType:
        """What the record does."""

    def swap_location(self, record: R) -> str | None:
        """The swap file a SWAP_* record names (its new name for a rename)."""

    def original_swap_location(self, record: R) -> str | None:
        """The former name of the swap file for SWAP_FILE_RENAMED records."""

    def transfer_mark(self, record: R) -> tuple[str, int]:
        """The (key, received-at ms) a TRANSFER_RECEIVED record names (only asked of those)."""

    def outbox_entry(self, record: R) -> tuple[int, Any, Sequence[int]]:
        """The (key, value, runs of open lower keys) an OUTBOX record holds (only asked of those)."""
