from __future__ import annotations

from engine.provenance import ProvenanceEventType as T
from engine.provenance import ProvenanceRepository
from tests.engine.provenance.conftest import make_event


def build(repo: ProvenanceRepository) -> None:
    """A receives; A forks into B and C; C is cloned to D; B and X join into J; J is sent.

    Unrelated: X's own history, Y entirely separate.
    """
    repo.register_events(
        [make_event(T.RECEIVE, uuid="A"), make_event(T.RECEIVE, uuid="X"), make_event(T.CREATE, uuid="Y")]
    )
    repo.register_events([make_event(T.FORK, uuid="A", parent_uuids=("A",), child_uuids=("B", "C"))])
    repo.register_events([make_event(T.CLONE, uuid="C", parent_uuids=("C",), child_uuids=("D",))])
    repo.register_events([make_event(T.ROUTE, uuid="B"), make_event(T.ATTRIBUTES_MODIFIED, uuid="Y")])
    repo.register_events([make_event(T.JOIN, uuid="J", parent_uuids=("B", "X"), child_uuids=("J",))])
    repo.register_events([make_event(T.SEND, uuid="J"), make_event(T.DROP, uuid="D")])
    repo.rollover()


def test_lineage_of_a_middle_flowfile(repo: ProvenanceRepository) -> None:
    build(repo)
    graph = repo.lineage("B")
    # Ancestors A; descendants J; siblings (C, D), co-parents (X) and Y are not related.
    assert graph.flowfile_uuids == {"A", "B", "J"}
    assert not graph.truncated
    types = sorted(e.event_type.value for e in graph.events)
    assert types == ["FORK", "JOIN", "RECEIVE", "ROUTE", "SEND"]
    node_ids = {n.id for n in graph.nodes}
    for edge in graph.edges:
        assert edge.source in node_ids and edge.target in node_ids
    by_type = {e.event_type: f"ev:{e.event_id}" for e in graph.events}
    edges = {(e.source, e.target) for e in graph.edges}
    assert ("ff:A", by_type[T.RECEIVE]) in edges
    assert (by_type[T.RECEIVE], by_type[T.FORK]) in edges
    assert (by_type[T.FORK], "ff:B") in edges
    assert ("ff:B", by_type[T.ROUTE]) in edges
    assert (by_type[T.ROUTE], by_type[T.JOIN]) in edges
    assert (by_type[T.JOIN], "ff:J") in edges
    assert ("ff:J", by_type[T.SEND]) in edges


def test_lineage_of_root_finds_every_descendant(repo: ProvenanceRepository) -> None:
    build(repo)
    assert repo.lineage("A").flowfile_uuids == {"A", "B", "C", "D", "J"}
    assert repo.lineage("D").flowfile_uuids == {"A", "C", "D"}
    assert repo.lineage("J").flowfile_uuids == {"A", "B", "J", "X"}
    assert repo.lineage("Y").flowfile_uuids == {"Y"}


def test_lineage_is_capped(repo: ProvenanceRepository) -> None:
    build(repo)
    graph = repo.lineage("A", max_nodes=4)
    assert graph.truncated
    assert len(graph.nodes) <= 4
