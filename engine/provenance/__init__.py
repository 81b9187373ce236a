"""The provenance repository: every event in every FlowFile's life, kept, indexed and queryable."""
