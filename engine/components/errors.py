"""Exceptions a component raises to tell the runtime what went wrong."""

from __future__ import annotations

__all__ = ["ProcessException"]


class ProcessException(Exception):
    """An expected failure while processing (the remote end refused, the data is malformed...).

    The runtime logs it as an error bulletin and rolls the session back with its FlowFiles
    penalized, but does not yield the processor as it does for unexpected errors.
    """
