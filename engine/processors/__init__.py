"""The standard processors (each module holds one; the registry finds them)."""
