"""Use cases: what the service does, in terms of the domain, the store and the caches. They own
transactions, executors, deadlines and cache invalidation; they know nothing of gRPC."""
