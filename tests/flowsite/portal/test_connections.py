"""Adding, editing and deleting connections through the API's ConnectionSerializer."""

import html

import pytest

from flowsite.flows.models import Connection, Port, ProcessGroup
from tests.flowsite.portal.conftest import add_processor

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return html.unescape(response.content.decode())


@pytest.fixture
def pair(tenant_a):
    return (add_processor(tenant_a.root, "GenerateFlowFile", "gen"),
            add_processor(tenant_a.root, "LogAttribute", "log"))


def queue(**changes) -> dict:
    data = {"name": "", "backPressureObjectThreshold": "10000", "backPressureDataSizeThreshold": "1 GB",
            "flowFileExpiration": "0 sec", "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE", "partitioningAttribute": "",
            "loadBalanceCompression": "DO_NOT_COMPRESS"}
    data.update(changes)
    return data


def test_choose_a_source_then_its_relationships(portal_a, tenant_a, pair):
    gen, log = pair
    page = text(portal_a.get(f"/groups/{tenant_a.root.pk}/connections/new"))
    assert f'<option value="{gen.pk}">gen — GenerateFlowFile</option>' in page
    page = text(portal_a.get(f"/groups/{tenant_a.root.pk}/connections/new?source={gen.pk}"))
    assert 'name="selectedRelationships" value="success"' in page
    assert f'<option value="{log.pk}">log — LogAttribute</option>' in page


def test_add_a_connection(portal_a, tenant_a, pair):
    gen, log = pair
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/connections/new", queue(
        source=str(gen.pk), destination=str(log.pk), selectedRelationships=["success"],
        backPressureDataSizeThreshold="2 GB", **{"prioritizer-0": "OldestFlowFileFirstPrioritizer"}))
    assert response.status_code == 302
    connection = Connection.objects.get(parent=tenant_a.root)
    assert (connection.source_id, connection.destination_id) == (gen.pk, log.pk)
    assert connection.selected_relationships == ["success"]
    assert connection.back_pressure_data_size_threshold == "2 GB"
    assert connection.prioritizers == ["OldestFlowFileFirstPrioritizer"]
    page = text(portal_a.get(response["Location"]))
    assert "Connected gen to log." in page and f"/connections/{connection.pk}/" in page


def test_connection_errors_are_the_api_serializer_messages(portal_a, tenant_a, pair):
    gen, log = pair
    url = f"/groups/{tenant_a.root.pk}/connections/new"
    response = portal_a.post(url, queue(source=str(gen.pk), destination=str(log.pk)))
    assert response.status_code == 400
    assert "a connection from a processor must select at least one relationship" in text(response)
    response = portal_a.post(url, queue(source=str(gen.pk), destination=str(log.pk), selectedRelationships=["success"],
                                        loadBalanceStrategy="PARTITION_BY_ATTRIBUTE"))
    assert "partitioning by attribute needs the attribute's name" in text(response)
    response = portal_a.post(url, queue(source=str(gen.pk), selectedRelationships=["success"],
                                        backPressureDataSizeThreshold="huge"))
    page = text(response)
    assert "not a data size: 'huge'" in page and "This field is required." in page
    assert not Connection.objects.exists()


def test_the_load_balancing_choices_carry_nifis_labels(portal_a, tenant_a, pair):
    gen, log = pair
    page = text(portal_a.get(f"/groups/{tenant_a.root.pk}/connections/new?source={gen.pk}"))
    for value, label in [("DO_NOT_LOAD_BALANCE", "Do not load balance"), ("ROUND_ROBIN", "Round robin"),
                         ("SINGLE_NODE", "Single node"), ("PARTITION_BY_ATTRIBUTE", "Partition by attribute"),
                         ("DO_NOT_COMPRESS", "Do not compress"),
                         ("COMPRESS_ATTRIBUTES_ONLY", "Compress attributes only"),
                         ("COMPRESS_ATTRIBUTES_AND_CONTENT", "Compress attributes and content")]:
        assert f'value="{value}"' in page and f">{label}</option>" in page
    assert 'name="partitioningAttribute"' in page and "Partitioning attribute" in page


def test_a_partitioned_connection_shows_its_attribute(portal_a, tenant_a, pair):
    gen, log = pair
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/connections/new", queue(
        source=str(gen.pk), destination=str(log.pk), selectedRelationships=["success"],
        loadBalanceStrategy="PARTITION_BY_ATTRIBUTE", partitioningAttribute="customer",
        loadBalanceCompression="COMPRESS_ATTRIBUTES_ONLY"))
    assert response.status_code == 302
    connection = Connection.objects.get(parent=tenant_a.root)
    assert (connection.load_balance_strategy, connection.partitioning_attribute,
            connection.load_balance_compression) == ("PARTITION_BY_ATTRIBUTE", "customer", "COMPRESS_ATTRIBUTES_ONLY")
    page = text(portal_a.get(f"/connections/{connection.pk}/"))
    assert 'value="customer"' in page
    assert 'value="PARTITION_BY_ATTRIBUTE" selected' in page
    row = text(portal_a.get(f"/groups/{tenant_a.root.pk}/"))
    assert "Partition by attribute <code>customer</code>" in row and "Compress attributes only" in row


def test_sources_outside_the_group_are_not_found(portal_a, tenant_a, tenant_b):
    elsewhere = add_processor(tenant_b.root, "GenerateFlowFile", "theirs")
    response = portal_a.get(f"/groups/{tenant_a.root.pk}/connections/new?source={elsewhere.pk}")
    assert response.status_code == 404


def test_ports_of_child_groups_are_endpoints(portal_a, tenant_a, pair):
    gen, _ = pair
    child = ProcessGroup.objects.create(parent=tenant_a.root, tenant=tenant_a.tenant, name="Child")
    port = Port.objects.create(parent=child, tenant=tenant_a.tenant, kind="INPUT_PORT", name="entry")
    page = text(portal_a.get(f"/groups/{tenant_a.root.pk}/connections/new?source={gen.pk}"))
    assert f'<option value="{port.pk}">entry — input port of group Child</option>' in page
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/connections/new", queue(
        source=str(gen.pk), destination=str(port.pk), selectedRelationships=["success"]))
    assert response.status_code == 302
    assert Connection.objects.get().destination_id == port.pk


def test_edit_and_delete_a_connection(portal_a, tenant_a, pair):
    gen, log = pair
    portal_a.post(f"/groups/{tenant_a.root.pk}/connections/new", queue(
        source=str(gen.pk), destination=str(log.pk), selectedRelationships=["success"]))
    connection = Connection.objects.get()
    page = text(portal_a.get(f"/connections/{connection.pk}/"))
    assert 'name="selectedRelationships" value="success" checked' in page
    response = portal_a.post(f"/connections/{connection.pk}/", queue(
        version=connection.version, destination=str(log.pk), selectedRelationships=["success"],
        backPressureObjectThreshold="5", flowFileExpiration="1 hour"))
    assert response.status_code == 302
    connection.refresh_from_db()
    assert (connection.back_pressure_object_threshold, connection.flowfile_expiration) == (5, "1 hour")
    stale = portal_a.post(f"/connections/{connection.pk}/", queue(
        version=0, destination=str(log.pk), selectedRelationships=["success"]))
    assert stale.status_code == 409 and "Your change was not saved" in text(stale)
    response = portal_a.post(f"/connections/{connection.pk}/delete", {"version": connection.version})
    assert response["Location"] == f"/groups/{tenant_a.root.pk}/"
    assert not Connection.objects.exists()
