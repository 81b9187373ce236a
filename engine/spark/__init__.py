"""Spark on the node (stand-in of helper "processors" until the runtime branch lands: only the
contract of the issue-13 brief, local mode, Arrow hand-over)."""
