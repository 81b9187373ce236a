"""Reading part of a content for a person (a provenance event's content, a queued FlowFile's).

At most ``MAX_RANGE`` bytes per read, from the live file or the archive. The errors say what
could not be read and why, in words a user can act on: the content was aged off or deleted
(naming the claim and the files looked for), or it is damaged (naming the file and the offset).
The checksum covers a whole content, so it is verified when the range is the whole content, or
when it ends the content and the content is at most ``VERIFY_LIMIT`` bytes (read whole then:
a download in chunks is checked at its last chunk).
"""

from __future__ import annotations

from engine.content.reader import FILE_MISSING, ContentChecksumError, ContentNotFoundError
from engine.content.repository import ContentRepository
from engine.flowfile import ContentClaim

__all__ = ["MAX_RANGE", "VERIFY_LIMIT", "describe_claim", "read_range"]

MAX_RANGE = 1 << 20
VERIFY_LIMIT = 16 << 20


def describe_claim(claim: ContentClaim) -> str:
    """``claim default/3/1700000000000-5, offset 0, 10 bytes``."""
    return f"claim {claim.resource_claim}, offset {claim.offset}, {claim.length} bytes"


def read_range(repository: ContentRepository, claim: ContentClaim, offset: int, length: int, what: str) -> bytes:
    """Bytes ``[offset, offset + length)`` of the content of ``claim`` (``length`` capped at
    ``MAX_RANGE`` and at the content's end). ``what`` names the content in errors ("the input
    content of provenance event 42").

    Raises ValueError for a range outside the content, ContentNotFoundError when the content is
    no longer available and ContentChecksumError when it is damaged.
    """
    if offset < 0 or length < 0:
        raise ValueError(f"a content range needs an offset and a length of at least 0, not {offset} and {length}")
    if offset > claim.length:
        raise ValueError(f"offset {offset} is past the end of {what} ({claim.length} bytes)")
    count = min(length, MAX_RANGE, claim.length - offset)
    end = offset + count
    try:
        if (offset == 0 and end == claim.length) or (end == claim.length and claim.length <= VERIFY_LIMIT):
            return repository.read_bytes(claim)[offset:end]
        with repository.open_reader(claim) as reader:
            reader.seek(offset)
            data = reader.read(count)
            if len(data) < count:
                raise ContentNotFoundError("short read", claim=claim, path=reader.path,
                                           found=f"the file ends before byte {claim.offset + end}")
            return data
    except ContentChecksumError as error:
        raise ContentChecksumError(
            f"content damaged: {what} ({describe_claim(claim)}) does not read back as written: {error.path} "
            f"at offset {claim.offset}: {error.found}", claim=claim, path=error.path, found=error.found,
        ) from error
    except ContentNotFoundError as error:
        raise _unavailable(repository, claim, what, error) from error


def _unavailable(repository: ContentRepository, claim: ContentClaim, what: str,
                 error: ContentNotFoundError) -> ContentNotFoundError:
    subject = f"content no longer available: {what} ({describe_claim(claim)})"
    if error.found == FILE_MISSING:
        live, archived = repository.path(claim.resource_claim), repository.archive_path(claim.resource_claim)
        message = f"{subject} was aged off or deleted: neither {live} nor {archived} exists"
    elif error.found is not None:
        message = f"{subject} cannot be read whole: {error.path}: {error.found}"
    else:
        message = f"{subject}: {error}"
    return ContentNotFoundError(message, claim=claim, path=error.path, found=error.found)
