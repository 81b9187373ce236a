"""Tools for testing components: a real node around one processor."""

from engine.testing.runner import ProcessorTestRunner

__all__ = ["ProcessorTestRunner"]
