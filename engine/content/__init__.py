"""The content repository: immutable FlowFile content appended into shared resource-claim files."""
