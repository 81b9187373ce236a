"""Tenants, the users and groups that belong to them, and tenant-wide access policies."""
