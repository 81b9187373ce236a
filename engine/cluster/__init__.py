"""Clustering over Redis, framework-free: the names nodes and the control plane share, the
command bus between them, leases with fencing tokens, membership and flow election.

Redis stands where NiFi uses ZooKeeper and its cluster protocol. It holds only transient
coordination state: a Redis that restarts empty loses no FlowFile, and the nodes rebuild the
rest as they heartbeat again.
"""
