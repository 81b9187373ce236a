"""A web process is warmed up before it serves: the views, serializers and the engine's registry
are loaded and frozen out of the collector's sight, with rarer full collections."""

from __future__ import annotations

import json

from flowsite.warm import GC_THRESHOLDS
from tests.flowsite.deployment import run_django

SHOW = ("import gc, json, sys; import flowsite.asgi; "
        "print(json.dumps([gc.get_freeze_count(), gc.get_threshold(), 'flowsite.api.views.group_flow' in sys.modules]))")


def test_the_asgi_application_is_loaded_and_frozen_before_it_serves():
    result = run_django(["-c", SHOW], {})
    assert result.returncode == 0, result.stderr
    frozen, thresholds, views_loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert frozen > 100_000 and tuple(thresholds) == GC_THRESHOLDS and views_loaded
