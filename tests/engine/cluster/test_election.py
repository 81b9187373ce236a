"""The flow election of seed 000: popular vote, empty flows, maximum wait and candidates."""

from __future__ import annotations

import time

import pytest

from engine.cluster.bundle import EMPTY_FLOW, FlowBundle
from engine.cluster.cluster_flow import UnsignedFlow, publish_flow, read_flow, verify_flow
from engine.cluster.election import ElectionSettings, cast_ballot, count_votes, run_election
from engine.cluster.signing import CommandSigner
from engine.testing.flows import flow, processor

SIGNER = CommandSigner("the test cluster's key")

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
    cast_ballot(client, keys, "n1", A, SIGNER)
    cast_ballot(client, keys, "n2", B, SIGNER)
    assert run_election(client, keys, settings, signer=SIGNER) is None, "two of three voted: the vote goes on"
    cast_ballot(client, keys, "n3", A, SIGNER)
    assert run_election(client, keys, settings, signer=SIGNER) == A.fingerprint
    assert read_flow(client, keys).bundle == A
    assert client.hget(keys.election, "elected").decode() == A.fingerprint
    cast_ballot(client, keys, "n4", B, SIGNER)
    assert run_election(client, keys, settings, signer=SIGNER) == A.fingerprint, "a late ballot changes nothing"


def test_the_vote_ends_after_the_maximum_wait(client, keys):
    settings = ElectionSettings(max_wait=0.3)
    cast_ballot(client, keys, "n1", EMPTY, SIGNER)
    cast_ballot(client, keys, "n2", B, SIGNER)
    assert run_election(client, keys, settings, signer=SIGNER) is None
    time.sleep(0.35)
    assert run_election(client, keys, settings, signer=SIGNER) == B.fingerprint


def test_bundles_round_trip_and_refuse_garbage():
    assert FlowBundle.decode(A.encode()) == A
    with pytest.raises(ValueError, match="not a flow bundle"):
        FlowBundle.decode(b"{}")


def test_a_ballot_not_signed_with_the_cluster_key_is_not_counted_and_the_flow_is_signed(client, keys):
    settings = ElectionSettings(max_wait=300, max_candidates=2)
    cast_ballot(client, keys, "n1", A, SIGNER)
    cast_ballot(client, keys, "intruder", B, CommandSigner("a guessed key"))
    client.hset(keys.ballots, "n9", B.fingerprint)  # no MAC at all
    assert run_election(client, keys, settings, signer=SIGNER) is None, "one ballot counts: the vote goes on"
    cast_ballot(client, keys, "n2", A, SIGNER)
    assert run_election(client, keys, settings, signer=SIGNER) == A.fingerprint
    published = read_flow(client, keys)
    verify_flow(published, keys, SIGNER)
    with pytest.raises(UnsignedFlow, match="not signed with the cluster key"):
        verify_flow(published, keys, CommandSigner("a guessed key"))


def test_a_cluster_flow_changed_or_published_without_the_key_is_refused(client, keys):
    publish_flow(client, keys, A, "acme:v1", "d1", signer=SIGNER)
    client.hset(keys.flow, "bundle", B.encode())
    with pytest.raises(UnsignedFlow, match="does not match its fingerprint"):
        verify_flow(read_flow(client, keys), keys, SIGNER)
    client.hset(keys.flow, mapping={"fingerprint": B.fingerprint})
    with pytest.raises(UnsignedFlow, match="not signed with the cluster key"):
        verify_flow(read_flow(client, keys), keys, SIGNER)
