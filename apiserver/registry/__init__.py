"""The registry: per-kind strategies over one generic store."""
