"""The flow election of seed 000: popular vote, empty flows, maximum wait and candidates."""

from __future__ import annotations

import time

import pytest

from engine.cluster.bundle import EMPTY_FLOW, FlowBundle
from engine.cluster.cluster_flow import read_flow
from engine.cluster.election import ElectionSettings, cast_ballot, count_votes, run_election
from engine.testing.flows import flow, processor

A = FlowBundle(flow(processors=[processor("a", "GenerateFlowFile", {})]))
B = FlowBundle(flow(processors=[processor("b", "LogAttribute", {})]))
EMPTY = FlowBundle(EMPTY_FLOW)


@pytest.mark.parametrize(("offered", "elected"), [
    ({"n1": A, "n2": A, "n3": B}, A),
    ({"n1": EMPTY, "n2": EMPTY, "n3": B}, B),
    ({"n1": EMPTY, "n2": EMPTY}, EMPTY),
    ({"n1": B, "n2": A, "n3": B, "n4": A, "n5": A}, A),
])
def test_popular_vote_and_an_empty_flow_wins_only_when_all_are_empty(offered, elected):
    ballots = {node: bundle.fingerprint for node, bundle in offered.items()}
    empty = {bundle.fingerprint for bundle in offered.values() if bundle.is_empty}
    assert count_votes(ballots, empty) == elected.fingerprint


def test_a_tie_is_decided_the_same_way_wherever_it_is_counted():
    one = count_votes({"n1": A.fingerprint, "n2": B.fingerprint}, set())
    other = count_votes({"n2": B.fingerprint, "n1": A.fingerprint}, set())
    assert one == other and one in (A.fingerprint, B.fingerprint)


def test_run_states_do_not_split_the_vote():
    running = FlowBundle(flow(processors=[processor("a", "GenerateFlowFile", {}, state="ENABLED")]))
    assert running.fingerprint == FlowBundle(flow(processors=[processor("a", "GenerateFlowFile", {})])).fingerprint


def test_the_vote_ends_once_the_maximum_number_of_candidates_voted(client, keys):
    settings = ElectionSettings(max_wait=300, max_candidates=3)
    cast_ballot(client, keys, "n1", A)
    cast_ballot(client, keys, "n2", B)
    assert run_election(client, keys, settings) is None, "two of three voted: the vote goes on"
    cast_ballot(client, keys, "n3", A)
    assert run_election(client, keys, settings) == A.fingerprint
    assert read_flow(client, keys).bundle == A
    assert client.hget(keys.election, "elected").decode() == A.fingerprint
    cast_ballot(client, keys, "n4", B)
    assert run_election(client, keys, settings) == A.fingerprint, "a late ballot changes nothing"


def test_the_vote_ends_after_the_maximum_wait(client, keys):
    settings = ElectionSettings(max_wait=0.3)
    cast_ballot(client, keys, "n1", EMPTY)
    cast_ballot(client, keys, "n2", B)
    assert run_election(client, keys, settings) is None
    time.sleep(0.35)
    assert run_election(client, keys, settings) == B.fingerprint


def test_bundles_round_trip_and_refuse_garbage():
    assert FlowBundle.decode(A.encode()) == A
    with pytest.raises(ValueError, match="not a flow bundle"):
        FlowBundle.decode(b"{}")
