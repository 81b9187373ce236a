"""The FlowFile repository: FlowFile state made durable through the write-ahead log."""
