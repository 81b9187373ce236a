"""The provenance analytics API against two real in-process nodes, a real Redis and a real local
Spark, the Celery task run in the test process: a tenant sees only the events of its own
components (those it may view the provenance of) and only its own requests; ad-hoc SQL is for
platform operators and must be one read-only query; a node that does not answer, or whose export
the jobs process cannot read, makes the result partial and is named; damaged provenance is
reported; a deleted request stays deleted."""

from __future__ import annotations

import uuid

import pytest

from engine.cluster.keys import ClusterKeys
from engine.provenance import frames
from flowsite.flows import access
from flowsite.flows.access import QUERY_PROVENANCE, VIEW_FLOW, VIEW_PROVENANCE
from flowsite.provenance import analytics, store
from flowsite.provenance.jobs import analytics as analytics_job
from tests.cluster_nodes import InProcessNode
from tests.flowsite.conftest import token_client
from tests.flowsite.provenance.conftest import ANALYTICS, events_of, operator, wait_done

COUNT_BY_COMPONENT = ("SELECT component_id, count(*) AS events, sum(file_size) AS bytes FROM provenance "
                      "GROUP BY component_id ORDER BY component_id")


def ask(api, **body) -> dict:
    answer = api.post(ANALYTICS, body, format="json")
    assert answer.status_code == 202, answer.json()
    created = answer.json()
    assert answer["Location"] == created["url"] and created["state"] in ("queued", "done")
    return wait_done(api, created["id"])


def problems(answer) -> dict[str, str]:
    """An error answer's problems, by JSON path."""
    return {problem["path"]: problem["message"] for problem in answer.json()["problems"]}


def table(body: dict) -> list[dict]:
    names = [column["name"] for column in body["result"]["columns"]]
    return [dict(zip(names, row)) for row in body["result"]["rows"]]


def test_a_tenant_sees_the_events_of_its_own_components_only(world, api_a, tenant_b):
    a, b = world.ids(world.flow_a), world.ids(world.flow_b)
    world.record("n1", *events_of(a, "a-1", 10), *events_of(b, "b-1", 99))
    world.record("n2", *events_of(a, "a-2", 20), *events_of(b, "b-2", 99))

    done = ask(api_a, question="throughput", params={"hours": 2})
    assert done["state"] == "done", done
    assert (done["partial"], done["nodes"]) == (False, {"asked": ["n1", "n2"], "answered": ["n1", "n2"],
                                                       "missing": []})
    rows = table(done)
    assert {row["component_id"] for row in rows} == {a["gen"], a["log"]}
    assert sorted((row["component_name"], row["flowfiles"], row["bytes"]) for row in rows) == [
        ("gen", 2, 30), ("log", 2, 30)]
    assert "damage" not in done and "node_errors" not in done and "components" not in done

    drops = table(ask(api_a, question="drops"))
    assert [(row["component_id"], row["reason"], row["flowfiles"]) for row in drops] == [
        (a["log"], "Auto-Terminated by success Relationship", 2)]

    api_b = token_client(tenant_b.admin("bea"))
    assert api_b.get(f"{ANALYTICS}/{done['id']}").status_code == 404
    assert api_b.delete(f"{ANALYTICS}/{done['id']}").status_code == 404
    assert {row["component_id"] for row in table(ask(api_b, question="throughput"))} == {b["gen"], b["log"]}


def test_view_provenance_decides_which_components_a_member_sees(world, tenant_a):
    a = world.ids(world.flow_a)
    world.record("n1", *events_of(a, "a-1", 10))
    member = tenant_a.member(global_policies=[QUERY_PROVENANCE])
    access.grant(world.flow_a["log"], VIEW_PROVENANCE, user=member)
    rows = table(ask(token_client(member), question="throughput"))
    assert [row["component_id"] for row in rows] == [a["log"]]

    viewer = token_client(tenant_a.member(global_policies=[VIEW_FLOW], root_policies=[VIEW_PROVENANCE]))
    refused = viewer.post(ANALYTICS, {"question": "throughput"}, format="json")
    assert refused.status_code == 403 and "query_provenance" in refused.json()["message"]


def test_operators_run_sql_over_every_tenant_or_one(world, tenant_b):
    a, b = world.ids(world.flow_a), world.ids(world.flow_b)
    world.record("n1", *events_of(a, "a-1", 10), *events_of(b, "b-1", 5))
    api = token_client(operator())
    assert api.get(f"{ANALYTICS}/questions").json()["may_use_sql"] is True

    done = ask(api, sql=COUNT_BY_COMPONENT)
    assert done["adhoc"] and done["sql"] == COUNT_BY_COMPONENT
    assert {row["component_id"] for row in table(done)} == {a["gen"], a["log"], b["gen"], b["log"]}

    only_b = ask(api, sql=COUNT_BY_COMPONENT, tenant=str(tenant_b.tenant.pk))
    assert {row["component_id"] for row in table(only_b)} == {b["gen"], b["log"]}
    assert only_b["tenants"] == [str(tenant_b.tenant.pk)]

    for sql, why in (("INSERT INTO t SELECT * FROM provenance", "INSERT is refused"),
                     ("SELECT * FROM provenance; SELECT 1", "exactly one query"),
                     (f"SELECT * FROM parquet.`{world.cluster.tmp_path}`", "only the view")):
        refused = api.post(ANALYTICS, {"sql": sql}, format="json")
        assert refused.status_code == 400 and why in problems(refused)["$.sql"], refused.json()

    wrong = ask(api, sql="SELECT no_such_column FROM provenance")
    assert wrong["state"] == "failed" and "no_such_column" in wrong["error"]


def test_only_platform_operators_may_send_sql(world, api_a):
    assert api_a.get(f"{ANALYTICS}/questions").json()["may_use_sql"] is False
    refused = api_a.post(ANALYTICS, {"sql": "SELECT * FROM provenance"}, format="json")
    assert refused.status_code == 403 and "platform operators" in refused.json()["message"]


def test_a_node_that_does_not_answer_or_cannot_be_read_makes_the_result_partial(world, analytics_settings, api_a,
                                                                                tmp_path, redis_server):
    a = world.ids(world.flow_a)
    world.record("n1", *events_of(a, "a-1", 10))
    analytics_settings.FLOWSITE_ANALYTICS_EXPORT_TIMEOUT = 4.0
    keys = ClusterKeys("default")
    InProcessNode("n3", tmp_path / "n3", redis_server.port, keys).register()  # connected, but no process answers
    elsewhere = InProcessNode("n4", tmp_path / "n4", redis_server.port, keys, analytics_dir=tmp_path / "not-shared")
    world.cluster.nodes.append(elsewhere.start(world.cluster.published_flow()))
    elsewhere.register()
    elsewhere.node.storage.provenance.register_events(events_of(a, "a-4", 40))

    done = ask(api_a, question="throughput")
    assert done["state"] == "done" and done["partial"]
    assert done["nodes"]["answered"] == ["n1", "n2"]
    assert done["nodes"]["missing"] == [
        {"node": "n3", "reason": "it did not answer within 4 s"},
        {"node": "n4", "reason": "its export cannot be read by the jobs process"},
    ]
    assert {row["component_id"] for row in table(done)} == {a["gen"], a["log"]}

    seen_by_operator = ask(token_client(operator()), sql=COUNT_BY_COMPONENT)
    n4 = next(entry for entry in seen_by_operator["nodes"]["missing"] if entry["node"] == "n4")
    assert "FLOWSITE_ANALYTICS_DIR must name one directory shared" in n4["detail"]


def test_damaged_provenance_is_reported_in_full_to_operators_and_in_neutral_words_to_tenants(world, api_a):
    a = world.ids(world.flow_a)
    repository = world.nodes["n1"].node.storage.provenance
    world.record("n1", *events_of(a, "a-1", 10))
    repository.rollover()
    shard = repository.shards()[-1]
    _, path, offset, _ = shard.blocks()[0]
    data = bytearray(path.read_bytes())
    data[offset + frames.OVERHEAD + 3] ^= 0x5A
    path.write_bytes(bytes(data))

    seen_by_operator = ask(token_client(operator()), sql=COUNT_BY_COMPONENT)
    (damage,) = seen_by_operator["damage"]
    assert (damage["node"], damage["path"], damage["offset"]) == ("n1", str(path), offset)
    assert "events 1–2 cannot be read" in damage["effect"]
    assert seen_by_operator["warnings"] == ["node n1: 1 damaged place(s) in its stored provenance could not be read; "
                                            "the events there are left out"]
    seen_by_tenant = ask(api_a, question="drops")
    assert "damage" not in seen_by_tenant and seen_by_tenant["warnings"] == seen_by_operator["warnings"]


def test_a_deleted_request_stays_deleted(world, api_a):
    done = ask(api_a, question="slowest", params={"limit": 3})
    assert done["params"] == {"hours": 24, "limit": 3}
    assert api_a.delete(f"{ANALYTICS}/{done['id']}").status_code == 204
    assert api_a.get(f"{ANALYTICS}/{done['id']}").status_code == 404
    analytics_job.run(done["id"])  # a job run again (a redelivered task) finds nothing to do
    assert store.load(done["id"]) is None
    record = {"id": done["id"], "state": "exporting"}
    assert store.update(record, percent=50) is False, "a job never writes a deleted request back"
    assert store.load(done["id"]) is None


# -- what is refused before any job runs ---------------------------------------------------------


@pytest.mark.parametrize("body, where", [
    ({}, "question"),
    ({"question": "nope"}, "question"),
    ({"question": "slowest", "params": {"hours": 0}}, "params"),
    ({"question": "slowest", "params": {"colour": 1}}, "params"),
    ({"question": "drops", "sql": "SELECT * FROM provenance"}, "question"),
    ({"question": "drops", "tenant": "not-a-uuid"}, "tenant"),
])
def test_bad_requests_are_400(analytics_settings, api_a, body, where):
    answer = api_a.post(ANALYTICS, body, format="json")
    assert answer.status_code == 400 and f"$.{where}" in problems(answer), answer.json()


def test_another_tenant_or_an_unknown_request_is_404(analytics_settings, api_a, tenant_b):
    assert api_a.post(ANALYTICS, {"question": "drops", "tenant": str(tenant_b.tenant.pk)},
                      format="json").status_code == 404
    assert api_a.get(f"{ANALYTICS}/{uuid.uuid4().hex}").status_code == 404
    assert api_a.get(f"{ANALYTICS}/not-an-id").status_code == 404


def test_a_read_only_token_may_ask_a_question(analytics_settings, admin_a):
    """Asking only reads (NiFi authorizes a search as a read): a read-only token may, and may
    forget its request."""
    from flowsite.api.models import ApiToken
    from rest_framework.test import APIClient

    _, secret = ApiToken.issue(admin_a, "reader", read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    answer = client.post(ANALYTICS, {"question": "drops"}, format="json")
    assert answer.status_code == 202, answer.json()
    assert client.delete(f"{ANALYTICS}/{answer.json()['id']}").status_code == 204


def test_without_the_cluster_s_redis_it_is_503(db, api_a):
    answer = api_a.post(ANALYTICS, {"question": "drops"}, format="json")
    assert answer.status_code == 503 and "Redis" in answer.json()["message"]


def test_an_operator_s_token_narrowed_to_a_tenant_covers_that_tenant_only(analytics_settings, tenant_a, tenant_b):
    from flowsite.api.models import ApiToken
    from rest_framework.test import APIClient

    user = operator()
    _, secret = ApiToken.issue(user, "narrow", tenant=tenant_a.tenant)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    request = type("Request", (), {"user": user, "auth": ApiToken.objects.get(user=user)})()
    scope = analytics.scope_for(request)
    assert scope.operator and scope.tenants == (str(tenant_a.tenant.pk),)
    assert client.post(ANALYTICS, {"sql": "SELECT 1 FROM provenance", "tenant": str(tenant_b.tenant.pk)},
                       format="json").status_code == 404
