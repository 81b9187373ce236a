"""The wire format of load-balanced batches and of their acknowledgements (Redis stream entries).

A batch (up to 1,000 FlowFiles of one connection, for one node) travels on the destination's
stream ``<prefix>lb:<node>`` as entries with the fields ``k`` (kind), ``x`` (``<transfer id>:
<attempt>``, which entries of one batch share), ``n`` (sequence number) and ``d`` (payload):

``H`` header
    msgpack ``[version, transfer id, attempt, connection id, sender node id, compression,
    sent at (ms), sender certificate (DER, empty without PKI), metadata]``; metadata is the
    msgpack array of six columns, one value per FlowFile in each: uuids, attributes, entry
    dates, lineage start dates, penalty expirations, content lengths (-1: no content) —
    columns, so that neither end spends Python work per FlowFile on the framing. It is
    zstd-compressed (level 1) unless the compression is DO_NOT_COMPRESS.
``C`` content chunk ``n`` (1, 2, ...)
    the next bytes of the FlowFiles' contents laid end to end (at most the chunk size before
    compression). Under COMPRESS_ATTRIBUTES_AND_CONTENT each chunk is zstd-compressed (level
    1) on its own, and sent as it was (field ``z`` ``0``) when that does not make it smaller:
    content that is already compressed or encrypted costs almost nothing.
``E`` end
    msgpack ``[chunk count, digest, signature]``: the SHA-256 of every payload before it
    (with its kind, sequence number and codec) and the sender's signature over that digest.
``P`` packed
    a small batch in one entry: msgpack ``[header payload, chunk payload or nil, end payload,
    chunk codec]``, digested as the three entries would be.

zstd level 1 instead of NiFi's gzip level 1: about ten times faster on this kind of data, at
a better ratio, and it gives up on incompressible data in a fraction of a millisecond per MiB.

An acknowledgement on ``<prefix>lback:<sender>`` carries ``x``, ``node`` (the receiver),
``ok`` (``1`` accepted, ``0`` refused), ``why``, ``cert`` and ``sig`` (the receiver's
signature). Everything read from Redis is checked: a malformed, oversized or inconsistent
entry raises :class:`WireError` saying which entry and what is wrong.
"""

from __future__ import annotations

import hashlib
from itertools import chain
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterator, NamedTuple

import msgpack
import zstandard

from engine.balance.trust import Signer

__all__ = [
    "Ack", "BatchDigest", "BatchEncoder", "Compression", "ContentSplitter", "FlowFileMeta", "Header", "Limits",
    "WireError", "decode_ack", "decode_chunk", "decode_end", "decode_entry", "decode_header", "decode_packed",
    "encode_ack", "ack_signed_data",
]

VERSION = 2
HEADER, CHUNK, END, PACKED = b"H", b"C", b"E", b"P"
RAW, ZSTD = 0, 1  # codecs of a content chunk
_BATCH_CONTEXT = b"flowsite load-balanced batch v2\n"
_ACK_CONTEXT = b"flowsite load-balanced ack v1\n"
_MAX_ID = 200


class Compression(str, Enum):
    """What of a batch is compressed (NiFi's ``loadBalanceCompression``)."""

    DO_NOT_COMPRESS = "DO_NOT_COMPRESS"
    COMPRESS_ATTRIBUTES_ONLY = "COMPRESS_ATTRIBUTES_ONLY"
    COMPRESS_ATTRIBUTES_AND_CONTENT = "COMPRESS_ATTRIBUTES_AND_CONTENT"


class WireError(ValueError):
    """An entry that is not a well-formed part of a batch or acknowledgement."""


class Limits(NamedTuple):
    """What a receiver accepts at most (a peer configured differently must stay within them)."""

    max_flowfiles: int = 10_000
    max_metadata_bytes: int = 64 << 20
    max_chunk_bytes: int = 8 << 20


class FlowFileMeta(NamedTuple):
    """What travels of one FlowFile besides its content (``size`` -1: it has no content)."""

    uuid: str
    attributes: dict[str, str]
    entry_date: int
    lineage_start_date: int
    penalty_expiration: int
    size: int


@dataclass
class Header:
    """The first part of a batch: who sends what, for which connection."""

    transfer_id: str
    attempt: str
    connection_id: str
    sender: str
    compression: Compression
    sent_at: int
    certificate: bytes
    flowfiles: list[FlowFileMeta] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``<transfer id>:<attempt>``: what the batch's entries and its acknowledgement carry."""
        return f"{self.transfer_id}:{self.attempt}"

    @property
    def content_bytes(self) -> int:
        """The bytes of content that follow."""
        return sum(meta.size for meta in self.flowfiles if meta.size > 0)


class BatchDigest:
    """The running SHA-256 over a batch's payloads, as both ends compute it."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.chunks = 0

    def header(self, payload: bytes) -> None:
        self._hash.update(b"H" + len(payload).to_bytes(8, "big"))
        self._hash.update(payload)

    def chunk(self, payload: bytes, codec: int = RAW) -> None:
        self.chunks += 1
        self._hash.update(b"C" + self.chunks.to_bytes(8, "big") + len(payload).to_bytes(8, "big") + bytes((codec,)))
        self._hash.update(payload)

    def digest(self) -> bytes:
        return self._hash.digest()

    @staticmethod
    def signed_data(digest: bytes) -> bytes:
        """What the sender signs: the digest, bound to this format."""
        return _BATCH_CONTEXT + digest


class BatchEncoder:
    """Makes the entries of one batch, in order: ``header_entry``, ``chunk_entry`` per chunk,
    ``end_entry`` — or one ``packed_entry`` for a batch whose content fits in one chunk."""

    def __init__(self, header: Header, signer: Signer) -> None:
        self.header = header
        self._signer = signer
        self._digest = BatchDigest()
        self._key = header.key.encode()
        self._compressor = (zstandard.ZstdCompressor(level=1)
                            if header.compression is not Compression.DO_NOT_COMPRESS else None)
        self._compress_content = header.compression is Compression.COMPRESS_ATTRIBUTES_AND_CONTENT

    def _header_payload(self) -> bytes:
        h = self.header
        columns = [list(column) for column in zip(*h.flowfiles)] if h.flowfiles else [[] for _ in range(6)]
        metadata = msgpack.packb(columns)
        if self._compressor is not None:
            metadata = self._compressor.compress(metadata)
        payload = msgpack.packb([VERSION, h.transfer_id, h.attempt, h.connection_id, h.sender, h.compression.value,
                                 h.sent_at, h.certificate, metadata])
        self._digest.header(payload)
        return payload

    def _chunk_payload(self, raw: bytes | bytearray | memoryview) -> tuple[bytes | bytearray | memoryview, int]:
        payload, codec = raw, RAW
        if self._compress_content:
            packed = self._compressor.compress(raw)
            if len(packed) < len(raw):
                payload, codec = packed, ZSTD
        self._digest.chunk(payload, codec)
        return payload, codec

    def _end_payload(self) -> bytes:
        digest = self._digest.digest()
        signature = self._signer.sign(BatchDigest.signed_data(digest))
        return msgpack.packb([self._digest.chunks, digest, signature])

    def _entry(self, kind: bytes, sequence: int, payload: bytes) -> dict[bytes, bytes]:
        return {b"k": kind, b"x": self._key, b"n": str(sequence).encode(), b"d": payload}

    def header_entry(self) -> dict[bytes, bytes]:
        return self._entry(HEADER, 0, self._header_payload())

    def chunk_entry(self, raw: bytes | bytearray | memoryview) -> dict[bytes, bytes]:
        """The entry of the next chunk (``raw`` is sent as it is, not copied, when not compressed)."""
        payload, codec = self._chunk_payload(raw)
        entry = self._entry(CHUNK, self._digest.chunks, payload)
        if codec != RAW:
            entry[b"z"] = str(codec).encode()
        return entry

    def end_entry(self) -> dict[bytes, bytes]:
        return self._entry(END, self._digest.chunks + 1, self._end_payload())

    def packed_entry(self, raw: bytes | bytearray | memoryview | None) -> dict[bytes, bytes]:
        header = self._header_payload()
        chunk, codec = self._chunk_payload(raw) if raw else (None, RAW)
        return self._entry(PACKED, 0, msgpack.packb([header, chunk, self._end_payload(), codec]))


# -- reading -------------------------------------------------------------------------------


class Entry(NamedTuple):
    """One stream entry of a batch, its fields checked."""

    kind: bytes
    key: str
    sequence: int
    payload: bytes
    codec: int = RAW


def decode_entry(fields: dict[bytes, bytes], where: str) -> Entry:
    """The parts of a batch entry; ``where`` (stream and entry id) goes into any error."""
    kind, key, sequence, payload = fields.get(b"k"), fields.get(b"x"), fields.get(b"n"), fields.get(b"d")
    if kind not in (HEADER, CHUNK, END, PACKED) or not isinstance(payload, bytes):
        raise WireError(f"{where}: not a load-balanced batch entry (fields {sorted(fields)[:6]}); it is dropped")
    if not isinstance(key, bytes) or not 0 < len(key) <= _MAX_ID or not isinstance(sequence, bytes) \
            or not sequence.isdigit() or len(sequence) > 12:
        raise WireError(f"{where}: the transfer key or sequence number of the entry is malformed; it is dropped")
    codec = fields.get(b"z", b"0")
    if codec not in (b"0", b"1"):
        raise WireError(f"{where}: unknown content codec {codec!r}; the entry is dropped")
    return Entry(kind, key.decode("ascii", "replace"), int(sequence), payload, int(codec))


def _unpack(payload: bytes, where: str, what: str, max_bytes: int) -> Any:
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True,
                               max_bin_len=max_bytes, max_str_len=max_bytes)
    except Exception as error:
        raise WireError(f"{where}: the {what} cannot be decoded ({type(error).__name__}: {error})") from None


def _inflate(data: bytes, limit: int, where: str, what: str) -> bytes:
    """Decompress the zstd frame ``data``, refusing more than ``limit`` bytes (a decompression
    bomb): the frame must declare its size, which is checked before anything is allocated."""
    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError as error:
        raise WireError(f"{where}: the {what} is not valid zstd data ({error})") from None
    if size < 0:
        raise WireError(f"{where}: the {what} does not declare its decompressed size")
    if size > limit:
        raise WireError(f"{where}: the {what} inflates to {size} bytes, more than the receiver's limit of {limit}")
    try:
        out = zstandard.ZstdDecompressor().decompress(data)
    except zstandard.ZstdError as error:
        raise WireError(f"{where}: the {what} is cut short or damaged ({error})") from None
    if len(out) != size:
        raise WireError(f"{where}: the {what} inflates to {len(out)} bytes, not the {size} it declares")
    return out


def decode_header(payload: bytes, limits: Limits, where: str) -> Header:
    """The header of a batch; raises :class:`WireError` for anything malformed or too large."""
    value = _unpack(payload, where, "batch header", limits.max_metadata_bytes)
    if not isinstance(value, list) or len(value) != 9 or value[0] != VERSION:
        version = value[0] if isinstance(value, list) and value else None
        raise WireError(f"{where}: the batch header is not format version {VERSION} (found {version!r}); "
                        "the sending node runs another version of Flowsite")
    _, transfer_id, attempt, connection_id, sender, compression, sent_at, certificate, metadata = value
    for name, text in (("transfer id", transfer_id), ("attempt", attempt), ("connection id", connection_id),
                       ("sender", sender)):
        if not isinstance(text, str) or not 0 < len(text) <= _MAX_ID:
            raise WireError(f"{where}: the batch header's {name} is malformed")
    try:
        mode = Compression(compression)
    except ValueError:
        raise WireError(f"{where}: unknown compression {compression!r} in the batch header") from None
    if type(sent_at) is not int or not isinstance(certificate, bytes) or not isinstance(metadata, bytes):
        raise WireError(f"{where}: the batch header's time, certificate or metadata is malformed")
    if mode is not Compression.DO_NOT_COMPRESS:
        metadata = _inflate(metadata, limits.max_metadata_bytes, where, "metadata")
    columns = _unpack(metadata, where, "metadata", limits.max_metadata_bytes)
    count = len(columns[0]) if isinstance(columns, list) and columns and isinstance(columns[0], list) else -1
    if not (isinstance(columns, list) and len(columns) == 6 and 0 <= count <= limits.max_flowfiles
            and all(isinstance(column, list) and len(column) == count for column in columns)):
        raise WireError(f"{where}: the metadata is not six columns of at most {limits.max_flowfiles} FlowFiles")
    if count and not _columns_valid(columns):
        raise WireError(f"{where}: the metadata of FlowFile {_first_malformed(columns)} is malformed")
    flowfiles = [_new(FlowFileMeta, row) for row in zip(*columns)]
    return Header(transfer_id, attempt, connection_id, sender, mode, sent_at, certificate, flowfiles)


_new = tuple.__new__
_STR, _INT, _DICT = {str}, {int}, {dict}


def _columns_valid(columns: list[list[Any]]) -> bool:
    """Whether every value of the metadata columns has its type (checked a column at a time)."""
    uuids, attributes, entry_dates, lineage_dates, penalties, sizes = columns
    return (set(map(type, uuids)) <= _STR and 0 < min(map(len, uuids)) and max(map(len, uuids)) <= _MAX_ID
            and set(map(type, attributes)) <= _DICT
            and set(map(type, chain.from_iterable(attributes))) <= _STR
            and set(map(type, chain.from_iterable(map(dict.values, attributes)))) <= _STR
            and all(set(map(type, column)) <= _INT for column in (entry_dates, lineage_dates, penalties, sizes))
            and min(sizes) >= -1)


def _first_malformed(columns: list[list[Any]]) -> int:
    """The index of the first FlowFile whose metadata is malformed (for the error message)."""
    for index, row in enumerate(zip(*columns)):
        if not _columns_valid([[value] for value in row]):
            return index
    return 0


def decode_chunk(payload: bytes, codec: int, header: Header, limits: Limits, where: str) -> bytes:
    """The raw content bytes of a chunk payload sent with ``codec``."""
    if codec == ZSTD:
        if header.compression is not Compression.COMPRESS_ATTRIBUTES_AND_CONTENT:
            raise WireError(f"{where}: a compressed content chunk in a batch whose content is not compressed")
        return _inflate(payload, limits.max_chunk_bytes, where, "content chunk")
    if len(payload) > limits.max_chunk_bytes:
        raise WireError(f"{where}: the content chunk has {len(payload)} bytes, more than the receiver's limit "
                        f"of {limits.max_chunk_bytes}")
    return payload


def decode_end(payload: bytes, where: str) -> tuple[int, bytes, bytes]:
    """(chunk count, digest, signature) of an end payload."""
    value = _unpack(payload, where, "batch end", 1 << 20)
    if not (isinstance(value, list) and len(value) == 3 and type(value[0]) is int and isinstance(value[1], bytes)
            and len(value[1]) == 32 and isinstance(value[2], bytes)):
        raise WireError(f"{where}: the batch end is malformed")
    return value[0], value[1], value[2]


def decode_packed(payload: bytes, limits: Limits, where: str) -> tuple[bytes, bytes | None, bytes, int]:
    """(header payload, chunk payload or None, end payload, chunk codec) of a packed entry."""
    value = _unpack(payload, where, "packed batch", limits.max_metadata_bytes + limits.max_chunk_bytes + (1 << 20))
    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[0], bytes)
            and (value[1] is None or isinstance(value[1], bytes)) and isinstance(value[2], bytes)
            and value[3] in (RAW, ZSTD)):
        raise WireError(f"{where}: the packed batch is malformed")
    return value[0], value[1], value[2], value[3]


class ContentSplitter:
    """Cuts the content stream of a batch back into each FlowFile's bytes."""

    def __init__(self, sizes: list[int]) -> None:
        self._sizes = sizes
        self._index = 0
        self._left = 0
        self._advance()

    def _advance(self) -> None:
        while self._index < len(self._sizes) and self._sizes[self._index] <= 0:
            self._index += 1
        self._left = self._sizes[self._index] if self._index < len(self._sizes) else 0

    def feed(self, data: bytes, where: str) -> Iterator[tuple[int, memoryview]]:
        """(FlowFile index, bytes) for each piece of ``data``, in order."""
        view = memoryview(data)
        while view:
            if self._index >= len(self._sizes):
                raise WireError(f"{where}: the content chunks hold more bytes than the header announced")
            take = min(self._left, len(view))
            index = self._index
            self._left -= take
            if self._left == 0:
                self._index += 1
                self._advance()
            yield index, view[:take]
            view = view[take:]

    @property
    def complete(self) -> bool:
        """True once every announced byte arrived."""
        return self._index >= len(self._sizes)


# -- acknowledgements ----------------------------------------------------------------------


class Ack(NamedTuple):
    """A receiver's answer to one batch."""

    key: str
    node: str
    accepted: bool
    reason: str
    certificate: bytes
    signature: bytes


def ack_signed_data(key: str, node: str, accepted: bool, reason: str) -> bytes:
    """What a receiver signs in an acknowledgement."""
    return _ACK_CONTEXT + msgpack.packb([key, node, accepted, reason])


def encode_ack(key: str, accepted: bool, reason: str, signer: Signer) -> dict[bytes, bytes]:
    """The fields of an acknowledgement of batch ``key`` signed by ``signer``."""
    signature = signer.sign(ack_signed_data(key, signer.node_id, accepted, reason))
    return {b"x": key.encode(), b"node": signer.node_id.encode(), b"ok": b"1" if accepted else b"0",
            b"why": reason.encode(), b"cert": signer.certificate_der, b"sig": signature}


def decode_ack(fields: dict[bytes, bytes], where: str) -> Ack:
    """An acknowledgement read from the ack stream (its signature still to be verified)."""
    try:
        ok = fields[b"ok"]
        if ok not in (b"0", b"1"):
            raise ValueError
        return Ack(fields[b"x"].decode(), fields[b"node"].decode(), ok == b"1", fields[b"why"].decode(),
                   fields[b"cert"], fields[b"sig"])
    except (KeyError, ValueError, UnicodeDecodeError, AttributeError):
        raise WireError(f"{where}: not a load-balanced batch acknowledgement; it is dropped") from None
