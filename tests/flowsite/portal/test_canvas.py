"""The canvas page: what it loads and who may open it (the browser test drives it)."""

from __future__ import annotations

from django.contrib.staticfiles import finders

from flowsite.flows import access as policies

from tests.flowsite.portal.conftest import logged_in


def test_the_canvas_page_loads_its_module_and_links_back(portal_a, tenant_a):
    page = portal_a.get(f"/groups/{tenant_a.root.pk}/canvas")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'type="module" src="/static/portal/canvas.js"' in html
    assert f'data-group="{tenant_a.root.pk}"' in html and 'data-can-modify="true"' in html
    assert f'href="/groups/{tenant_a.root.pk}/"' in html  # the table view
    assert f'href="/groups/{tenant_a.root.pk}/canvas"' in portal_a.get(f"/groups/{tenant_a.root.pk}/").content.decode()


def test_the_graph_library_is_a_static_file_installed_from_the_lock_file():
    assert finders.find("vendor/cytoscape/cytoscape.esm.min.mjs"), "scripts/test runs npm ci"


def test_another_tenants_canvas_is_not_found(tenant_a, tenant_b):
    stranger = logged_in(tenant_b.admin("bob"))
    assert stranger.get(f"/groups/{tenant_a.root.pk}/canvas").status_code == 404


def test_the_canvas_needs_a_login(client, tenant_a):
    answer = client.get(f"/groups/{tenant_a.root.pk}/canvas")
    assert answer.status_code == 302 and answer.url.startswith("/login/")


def test_a_viewer_gets_no_palette_and_no_buttons_that_change_the_flow(tenant_a):
    viewer = logged_in(tenant_a.member("viewer", root_policies=(policies.VIEW,)))
    html = viewer.get(f"/groups/{tenant_a.root.pk}/canvas").content.decode()
    assert 'data-can-modify="false"' in html and 'data-can-operate="false"' in html
    assert "palette-item" not in html and 'data-action="delete"' not in html and 'data-action="start"' not in html
