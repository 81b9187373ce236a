"""A first pass through the API: processors, connections, export and import."""

from engine.flow.validation import load_and_check


def test_build_export_import(api_a, tenant_a):
    root = tenant_a.root.pk
    gen = api_a.post(f"/api/v1/process-groups/{root}/processors",
                     {"type": "GenerateFlowFile", "name": "gen", "properties": {"File Size": "1 KB"}}, format="json")
    assert gen.status_code == 201, gen.json()
    put = api_a.post(f"/api/v1/process-groups/{root}/processors", {"type": "PutFile", "name": "put"}, format="json")
    assert put.status_code == 201, put.json()
    assert put.json()["validationStatus"] == "INVALID"
    conn = api_a.post(f"/api/v1/process-groups/{root}/connections",
                      {"source": {"id": gen.json()["id"]}, "destination": {"id": put.json()["id"]},
                       "selectedRelationships": ["success"]}, format="json")
    assert conn.status_code == 201, conn.json()
    exported = api_a.get(f"/api/v1/process-groups/{root}/flow-definition").json()
    load_and_check(exported)
    imported = api_a.post(f"/api/v1/process-groups/{root}/process-groups/import", exported, format="json")
    assert imported.status_code == 201, imported.json()
    again = api_a.get(f"/api/v1/process-groups/{imported.json()['id']}/flow-definition").json()
    assert again["flowContents"]["processors"] == exported["flowContents"]["processors"]
