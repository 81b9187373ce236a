"""Provenance in the control plane: analytics over the events the nodes export (``docs/analytics.md``)."""
