"""The content half of a process session: read, write, modify.

Reads verify the content's checksum (``read_bytes`` always, a stream once read whole in order).
A read that finds the content missing, cut short or damaged takes the FlowFile out of the
session (see ``engine.session.damaged``) and raises :class:`DamagedContentError`.
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING, BinaryIO, Callable, Sequence

from engine.checksums import crc32
from engine.content.reader import ContentNotFoundError
from engine.flowfile import ContentClaim, FlowFile
from engine.session.damaged import take_out_damaged
from engine.session.guard import guarded

if TYPE_CHECKING:
    from engine.session.session import _Record

__all__ = ["SessionContent"]

_new = tuple.__new__


class SessionContent:
    """Content methods of :class:`~engine.session.ProcessSession` (a mixin: it uses the session's
    records, storage and lock)."""

    @guarded
    def read(self, flowfile: FlowFile) -> BinaryIO:
        """A stream over the FlowFile's content (empty without content); close it when done."""
        flowfile = self._require_current(flowfile)
        if flowfile.content_claim is None:
            return io.BytesIO(b"")
        try:
            reader = self.storage.content.open_reader(flowfile.content_claim)
        except ContentNotFoundError as error:
            raise take_out_damaged(self, flowfile, error) from error
        reader.bind(self._check_alive, functools.partial(self._damaged, flowfile))
        self._counts.bytes_read += flowfile.size
        return reader

    @guarded
    def read_bytes(self, flowfile: FlowFile) -> bytes:
        """The FlowFile's whole content (for small contents only)."""
        flowfile = self._require_current(flowfile)
        claim = flowfile.content_claim
        if claim is None:
            return b""
        try:
            data = self.storage.content.read_bytes(claim)
        except ContentNotFoundError as error:
            raise take_out_damaged(self, flowfile, error) from error
        self._counts.bytes_read += claim.length
        return data

    @guarded
    def write(self, flowfile: FlowFile, callback: Callable[[BinaryIO], None]) -> FlowFile:
        """Replace the content with what ``callback`` writes to the stream it is given."""
        record = self._record_of(flowfile)
        writer = self.storage.content.open_writer()
        writer.guard = self._check_alive
        try:
            callback(writer)
        except BaseException:
            writer.abort()
            raise
        claim = writer.close()
        self._counts.bytes_written += claim.length
        return self._replace_claim(record, claim)

    def write_bytes(self, flowfile: FlowFile, data: bytes) -> FlowFile:
        """Replace the content with ``data``."""
        return self.write(flowfile, lambda out: out.write(data))

    @guarded
    def write_all_bytes(self, contents: Sequence[tuple[FlowFile, bytes]]) -> list[FlowFile]:
        """Replace the content of several FlowFiles at once; returns their new versions in order.

        The contents go one after the other into one resource claim, written in as few system
        calls as their size allows: a source making many small FlowFiles pays one write, not
        one per FlowFile.
        """
        if not contents:
            return []
        records = [self._record_of(flowfile) for flowfile, _ in contents]
        # Several contents each get the checksum of their own bytes, not the whole's.
        writer = self.storage.content.open_writer(checksum=len(contents) == 1)
        try:
            for _, data in contents:
                writer.write(data)
        except BaseException:
            writer.abort()
            raise
        whole = writer.close()
        if len(contents) > 1:
            # close() counted one claimant for the whole; each FlowFile's slice is one.
            self.storage.claims.increment(whole.resource_claim, len(contents) - 1)
        self._counts.bytes_written += whole.length
        updated = []
        offset = whole.offset
        resource = whole.resource_claim
        for record, (_, data) in zip(records, contents):
            size = len(data)
            checksum = crc32(data) if len(contents) > 1 else whole.checksum
            updated.append(self._replace_claim(record, _new(ContentClaim, (resource, offset, size, checksum))))
            offset += size
        return updated

    def modify(self, flowfile: FlowFile, callback: Callable[[BinaryIO, BinaryIO], None]) -> FlowFile:
        """Replace the content with what ``callback(input, output)`` makes of the old content."""
        with self.read(flowfile) as source:
            return self.write(flowfile, lambda out: callback(source, out))

    def _replace_claim(self, record: _Record, claim: ContentClaim) -> FlowFile:
        if record.owned_claim is not None:
            # An intermediate content of this session: nobody else can reference it.
            self.storage.claims.decrement(record.owned_claim.resource_claim)
        record.owned_claim = claim
        current = record.current
        # By position: ``_replace`` costs several times more, and this runs per FlowFile written.
        record.current = _new(FlowFile, (*current[:3], claim, *current[4:]))
        return record.current

    def _damaged(self, flowfile: FlowFile, error: ContentNotFoundError) -> BaseException:
        """What a stream of ``flowfile`` raises when it finds the content damaged."""
        with self._lock:
            if self._terminated:
                return self._terminated_error()
            return take_out_damaged(self, flowfile, error)
