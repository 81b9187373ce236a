"""Journals and event bytes written by earlier versions are still read (a node upgraded mid-run
loses nothing), and the current record format keeps every field."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import msgpack
import pytest

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance import (
    ProvenanceConfig, ProvenanceEvent, ProvenanceEventType, ProvenanceQuery, ProvenanceRepository, codec,
)
from engine.provenance.journal import MAGIC, encode_frame, read_journal
from tests.engine.provenance.conftest import T0, claim, make_event

T = ProvenanceEventType


def format_1_bytes(event: ProvenanceEvent) -> bytes:
    """The stored bytes of ``event`` as versions before format 2 wrote them: 20 fields, flat claims."""
    def flat(found: ContentClaim | None) -> list | None:
        if found is None:
            return None
        resource = found.resource_claim
        wire = [resource.container, resource.section, resource.identifier, found.offset, found.length]
        return wire if found.checksum is None else [*wire, found.checksum]

    fields = list(event[:20])
    fields[0] = event.event_type.value
    fields[7], fields[8] = list(event.parent_uuids), list(event.child_uuids)
    fields[9], fields[10] = dict(event.previous_attributes), dict(event.updated_attributes)
    fields[11], fields[12] = flat(event.previous_content_claim), flat(event.content_claim)
    return msgpack.packb(fields, use_bin_type=True)


def events_of_every_shape() -> list[ProvenanceEvent]:
    checked = ContentClaim(ResourceClaim("default", 3, "9-1"), 40, 12, 0xDEADBEEF)
    return [
        make_event(T.CREATE, uuid="a", filename="one.txt", time=T0, content_claim=checked),
        make_event(T.FORK, uuid="b", filename="TWO.txt", time=T0 + 1, parent_uuids=("a",), child_uuids=("c", "d"),
                   previous_content_claim=claim("p", 1, 2), content_claim=claim("q", 3, 4),
                   updated_attributes={"gone": None, "tenant": "Acme"}, details="d", transit_uri="http://x/y",
                   source_system_flowfile_id="s", alternate_identifier="alt", source_queue_id="q1", duration=7,
                   relationship="success", entry_date=T0 - 5, lineage_start_date=T0 - 9),
        make_event(T.DROP, uuid="c", time=T0 + 2, previous_attributes=MappingProxyType({"filename": "three.txt"}),
                   child_uuids=frozenset({"e"})),
    ]


def normalised(event: ProvenanceEvent) -> ProvenanceEvent:
    return event._replace(previous_attributes=dict(event.previous_attributes),
                          updated_attributes=dict(event.updated_attributes),
                          parent_uuids=tuple(event.parent_uuids), child_uuids=tuple(event.child_uuids))


def test_every_field_survives_the_record_and_both_event_formats() -> None:
    events = events_of_every_shape()
    min_time, max_time, blobs = codec.decode_record(codec.encode_record(codec.encode_events(events), T0, T0 + 2))
    assert (min_time, max_time) == (T0, T0 + 2)
    for event, blob, old in zip(events, blobs, map(format_1_bytes, events)):
        for stored in (blob, old):
            back = codec.event_from_wire(codec.decode_wire(stored), 17)
            assert back == normalised(event)._replace(event_id=17)
            assert type(back.event_type) is ProvenanceEventType
            assert codec.claim_length(codec.decode_wire(stored)[12]) == event.file_size


def test_an_event_field_msgpack_cannot_store_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot hold object"):
        codec.encode_events([make_event(details=object())])


@pytest.mark.parametrize("indexed", [(), ("tenant",)])
def test_version_3_journal_left_by_the_previous_version_is_rolled_over(tmp_path: Path, indexed) -> None:
    config = ProvenanceConfig(journal_count=2, max_storage_time=10 * 365 * 86400.0, indexed_attributes=indexed)
    events = events_of_every_shape()
    journals = tmp_path / "journals"
    journals.mkdir()
    payload = msgpack.packb([[format_1_bytes(e) for e in events], codec.index_fragments(events, indexed), T0, T0 + 2],
                            use_bin_type=True)
    (journals / "1.journal.0").write_bytes(b"FSPJRN3\n" + encode_frame(1, len(events), payload))
    with ProvenanceRepository(tmp_path, config) as repo:
        assert repo.stats().event_count == 3
        stored = [normalised(e)._replace(event_id=i) for i, e in enumerate(events, 1)]
        assert repo.get_events([1, 2, 3]) == stored
        assert repo.query(ProvenanceQuery(flowfile_uuid="d")).events == [stored[1]]
        assert repo.query(ProvenanceQuery(filename="two.TXT")).events == [stored[1]]
        assert repo.query(ProvenanceQuery(filename="three.txt")).events == [stored[2]]
        if indexed:
            assert repo.query(ProvenanceQuery(attributes={"tenant": "acme"})).events == [stored[1]]
        assert repo.register_events([make_event()])[0].event_id == 4
    assert not list(journals.iterdir())


def test_current_journals_hold_records_without_index_fragments(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=1, max_storage_time=10 * 365 * 86400.0)
    repo = ProvenanceRepository(tmp_path, config).open()
    registered = repo.register_events(events_of_every_shape())
    [journal] = (tmp_path / "journals").iterdir()
    data = journal.read_bytes()
    assert data.startswith(MAGIC) and MAGIC == b"FSPJRN4\n"
    [frame] = read_journal(journal).frames
    assert frame.fragments is None, "index fragments are made again at recovery, not journaled"
    assert [codec.event_from_wire(codec.decode_wire(b), i) for i, b in enumerate(frame.events, 1)] == [
        normalised(e) for e in registered]
    assert repo.get_events([3]) == [normalised(registered[2])], "found before the rollover"
    repo.close()
