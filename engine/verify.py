"""Consistency checks of a node's storage: every FlowFile's content exists, counts add up."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from engine.content.repository import ContentNotFoundError, ContentRepository
from engine.damage import DAMAGED_QUEUE_ID
from engine.flowfile import FlowFile, ResourceClaim
from engine.repository.flowfile_repository import FlowFileRepository

__all__ = ["Verification", "verify"]


@dataclass
class Verification:
    """The outcome of :func:`verify`: problems make a data directory inconsistent."""

    problems: list[str] = field(default_factory=list)
    references: Counter[ResourceClaim] = field(default_factory=Counter)
    flowfiles: int = 0
    swapped_flowfiles: int = 0
    unreferenced_claims: list[ResourceClaim] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def verify(
    flowfiles: FlowFileRepository,
    content: ContentRepository,
    claim_counts: dict[ResourceClaim, int] | None = None,
    in_flight: Iterable[FlowFile] = (),
) -> Verification:
    """Check the FlowFile repository (and its swap files) against the content repository.

    Every FlowFile, in memory or swapped out, must point at a live resource claim that is long
    enough; each swap file must be undamaged and its summary match its body; and, when
    ``claim_counts`` is given, each claimant count must equal the references recounted from the
    FlowFiles and the swap-file summaries (plus ``in_flight`` ones held by open sessions).
    FlowFiles of the damaged-FlowFile queue are there because their content is known to be
    damaged (and was reported then): their references are counted, their content is not checked.
    """
    result = Verification()
    lengths: dict[ResourceClaim, int | str] = {}

    def check(flowfile: FlowFile, where: str, count: bool = True, damaged: bool = False) -> None:
        claim = flowfile.content_claim
        if claim is None:
            return
        resource = claim.resource_claim
        if count:
            result.references[resource] += 1
        if damaged:
            return
        if resource not in lengths:
            lengths[resource] = _live_length(content, resource)
        length = lengths[resource]
        if isinstance(length, str):
            result.problems.append(f"FlowFile {flowfile.uuid} ({where}) references content {resource}, which is {length}")
        elif length < claim.offset + claim.length:
            result.problems.append(
                f"FlowFile {flowfile.uuid} ({where}) references bytes [{claim.offset}, "
                f"{claim.offset + claim.length}) of {resource}, which holds only {length} bytes"
            )

    for queue_id, flowfile in flowfiles.live_flowfiles():
        result.flowfiles += 1
        check(flowfile, f"queue {queue_id}", damaged=queue_id == DAMAGED_QUEUE_ID)
    for location in sorted(flowfiles.swap_locations):
        try:
            contents = flowfiles.swap.read(location)
        except OSError as error:
            result.problems.append(f"swap file {location}: {error}")
            continue
        for offset, found in contents.damage:
            where = f" at byte offset {offset}" if offset is not None else ""
            result.problems.append(f"swap file {location} is damaged{where}: {found}")
        summary = contents.summary
        if summary is None:
            continue
        # The repository counts a swap file's claimants from its summary.
        result.references.update(summary.claims)
        body = contents.flowfiles
        body_claims = Counter(f.content_claim.resource_claim for f in body if f.content_claim is not None)
        if not contents.damage and (summary.count != len(body) or summary.claims != dict(body_claims)):
            result.problems.append(
                f"swap file {location}: its summary ({summary.count} FlowFiles) does not match its body "
                f"({len(body)} FlowFiles)"
            )
        for flowfile in body:
            result.swapped_flowfiles += 1
            check(flowfile, f"swap file {location}", count=False, damaged=summary.queue_id == DAMAGED_QUEUE_ID)
    for flowfile in in_flight:
        if flowfile.content_claim is not None:
            result.references[flowfile.content_claim.resource_claim] += 1
    if claim_counts is not None:
        for resource in sorted(set(claim_counts) | set(result.references)):
            counted, referenced = claim_counts.get(resource, 0), result.references.get(resource, 0)
            if counted != referenced:
                result.problems.append(
                    f"claimant count of {resource} is {counted} but {referenced} FlowFile(s) reference it"
                )
    result.unreferenced_claims = sorted(set(content.iter_resource_claims()) - set(result.references))
    return result


def _live_length(content: ContentRepository, resource: ResourceClaim) -> int | str:
    """The size of a claim's live file, or why there is none ("missing", "archived", ...)."""
    try:
        return content.path(resource).stat().st_size
    except ContentNotFoundError as error:
        return f"unreadable: {error}"
    except OSError:
        return "archived" if content.archive_path(resource).exists() else "missing"
