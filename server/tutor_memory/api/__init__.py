"""The face of the service: the gRPC servicer (each handler converts, awaits one use case,
converts back), conversion between proto and domain, status mapping and authentication."""
