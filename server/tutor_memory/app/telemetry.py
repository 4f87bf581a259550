"""What the use cases report for operators, in one object: metrics (always kept, served with
`--metrics-listen`) and trace spans (only when OTEL_* switches tracing on, `app.tracing`).

Use cases call the few methods below at the points that matter; they never touch Prometheus or
OpenTelemetry themselves. A process with no server (the offline CLI) gets a Telemetry that
nobody reads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from tutor_memory.app.metrics import Metrics
from tutor_memory.app.tracing import TRACER_NAME

# Span name prefix of a block stage ("block.parse", "block.rank", ...).
BLOCK_STAGE_SPAN = "block."


class Telemetry:
    def __init__(
        self, metrics: Metrics | None = None, tracer_provider: TracerProvider | None = None
    ) -> None:
        self.metrics = metrics or Metrics()
        self.tracer_provider = tracer_provider
        self.tracer: trace.Tracer = (
            tracer_provider.get_tracer(TRACER_NAME)
            if tracer_provider is not None
            else trace.NoOpTracer()
        )

    @property
    def tracing(self) -> bool:
        return self.tracer_provider is not None

    def block_built(self, started_ns: int, timings: Sequence[tuple[str, float]]) -> None:
        """A block was built: each stage's time into the histogram, and, when tracing, one span
        per stage under the call's span. The stages ran one after another from `started_ns`
        (time.time_ns() when the build began), so each span starts where the one before
        ended."""
        at = started_ns
        for stage, ms in timings:
            self.metrics.block_stage_seconds.labels(stage).observe(ms / 1000.0)
            if self.tracing:
                end = at + int(ms * 1_000_000)
                span = self.tracer.start_span(BLOCK_STAGE_SPAN + stage, start_time=at)
                span.end(end_time=end)
                at = end

    def block_dropped(self) -> None:
        self.metrics.blocks_dropped.inc()
        trace.get_current_span().set_attribute("tutor_memory.block.dropped", True)

    def ingest_items(self, by_status: dict[str, int]) -> None:
        for status, count in by_status.items():
            if count:
                self.metrics.ingest_items.labels(status).inc(count)

    def nightly_finished(self, started_monotonic: float, *, ok: bool) -> None:
        self.metrics.nightly_runs.labels("ok" if ok else "error").inc()
        if ok:
            self.metrics.nightly_last_duration.set(time.monotonic() - started_monotonic)
            self.metrics.nightly_last_run.set(time.time())

    def close(self) -> None:
        """Stops the metrics endpoint and flushes the spans still queued."""
        self.metrics.stop()
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
