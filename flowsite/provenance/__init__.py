"""Provenance and queues in the control plane (``docs/provenance.md``, ``docs/analytics.md``):
NiFi's request resources — provenance queries, lineage, queue listings and drops — and exports and
Spark analytics, kept in the cluster's Redis (``store``) and run as Celery jobs (``jobs``) that ask
every node; one event, its content, a replay and a queued FlowFile asked of one node (``direct``);
what a user reaches of them (``scope``, ``events``)."""
