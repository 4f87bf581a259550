"""Tutor Memory: a gRPC memory server for AI tutors."""
