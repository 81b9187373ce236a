"""The standard controller services and the service APIs processors reference."""
