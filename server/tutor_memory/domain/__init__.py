"""The domain: pure, synchronous rules over plain data (no I/O, no threads, no transport).

Everything here can be called from any layer above it; nothing here imports those layers.
"""
