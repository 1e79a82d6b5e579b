"""Generated protobuf modules for the OpenAPI documents (see the .proto files beside them)."""
