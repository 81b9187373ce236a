"""The browsable API (what a browser gets, asking for ``text/html``)."""

from __future__ import annotations

from rest_framework import renderers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's browsable API, without the filter form on views that have nothing to filter: list
    views built on a list of their own (no queryset, or no filter backends) would otherwise fail
    in DRF's ``get_filter_form`` and answer 500."""

    def get_filter_form(self, data, view, request):
        from rest_framework.generics import GenericAPIView  # generics imports the renderers in turn

        no_queryset = (getattr(view, "queryset", None) is None
                       and getattr(type(view), "get_queryset", None) in (None, GenericAPIView.get_queryset))
        if no_queryset or not getattr(view, "filter_backends", None):
            return None
        return super().get_filter_form(data, view, request)
