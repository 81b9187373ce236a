"""Flows at design time: process groups, processors, connections and the rest, their
validation by the engine, export and import as flow definitions, and committed versions."""
