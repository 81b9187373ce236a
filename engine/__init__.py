"""Flowsite's dataflow engine: repositories, sessions and (later) the runtime of one node.

The package is framework-free: it never imports Django, Channels or Celery.
"""
