"""Load-balanced connections: partitioners, the cluster topology, partitioned queues and the transfer between nodes (seed 002)."""
