"""The FlowFile and the claims that point at its content.

All three types are immutable: a change makes a new value (``_replace``, ``with_attributes``), and the old
one stays valid for whoever still holds it (provenance, a rolled-back session).
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

__all__ = ["ResourceClaim", "ContentClaim", "FlowFile"]


class ResourceClaim(NamedTuple):
    """One physical file of the content repository: ``<container>/<section>/<identifier>``."""

    container: str
    section: int
    identifier: str

    def __str__(self) -> str:
        return f"{self.container}/{self.section}/{self.identifier}"


class ContentClaim(NamedTuple):
    """A slice of a resource claim: the bytes ``[offset, offset + length)`` of that file.

    ``checksum`` is the CRC32 of those bytes, which readers verify; it is None when unknown:
    content written before checksums existed, and slices made by :meth:`slice`.
    """

    resource_claim: ResourceClaim
    offset: int
    length: int
    checksum: int | None = None

    def slice(self, offset: int, length: int) -> ContentClaim:
        """Return the claim of ``length`` bytes starting ``offset`` bytes into this one (no copy).

        A slice carries no checksum unless it is the whole content: the CRC32 of part of the
        bytes cannot be derived from that of the whole without reading them, and a slice exists
        precisely so that they are not read.
        """
        if offset < 0 or length < 0 or offset + length > self.length:
            raise ValueError(
                f"slice [{offset}, {offset + length}) is outside the content's {self.length} bytes"
            )
        if offset == 0 and length == self.length:
            return self
        return ContentClaim(self.resource_claim, self.offset + offset, length)


class FlowFile(NamedTuple):
    """A FlowFile: attributes plus a pointer to immutable content.

    ``id`` is the node-local sequence number used by the FlowFile repository; ``uuid`` is the
    identity provenance and users see. Dates are milliseconds since the epoch.
    ``lineage_start_index`` breaks ties between FlowFiles with the same lineage start date and
    ``queue_date_index`` between those queued in the same millisecond, so orderings are total.
    The attribute mapping must never be mutated: ``with_attributes`` makes a new one.
    """

    id: int
    uuid: str
    attributes: Mapping[str, str]
    content_claim: ContentClaim | None
    entry_date: int
    lineage_start_date: int
    lineage_start_index: int
    last_queue_date: int = 0
    queue_date_index: int = 0
    penalty_expiration: int = 0

    @property
    def size(self) -> int:
        """The content's length in bytes (0 without content)."""
        claim = self.content_claim
        return claim.length if claim is not None else 0

    def with_attributes(
        self, updates: Mapping[str, str] | None = None, removed: frozenset[str] | set[str] = frozenset()
    ) -> FlowFile:
        """Return a new version whose attributes have ``updates`` set and ``removed`` dropped."""
        attributes = dict(self.attributes)
        for key in removed:
            attributes.pop(key, None)
        if updates:
            attributes.update(updates)
        # By position: ``_replace`` costs several times more, and this runs per FlowFile.
        return tuple.__new__(FlowFile, (self[0], self[1], attributes, *self[3:]))
