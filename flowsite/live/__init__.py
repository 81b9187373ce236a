"""Live updates over WebSocket: a subscriber to a process group receives its design changes and
its components' figures as they change (docs/api.md, "Live updates (WebSocket)")."""
