"""Load-balanced connections: partitions, partitioners and the transfer between nodes."""
