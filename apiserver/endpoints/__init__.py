"""HTTP endpoints: discovery, resource handlers, path parsing."""
