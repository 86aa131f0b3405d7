"""The accounts app: agent hosts, groups and the first administrator (no models)."""
