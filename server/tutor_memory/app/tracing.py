"""Optional OpenTelemetry tracing, configured from the standard OTEL_* environment variables.

Off unless the operator asks: unlike the OpenTelemetry default (OTLP), an unset
OTEL_TRACES_EXPORTER means no tracing, so a plain `tutor-memory serve` never tries to reach a
collector. What is honoured:

- OTEL_SDK_DISABLED=true: no tracing, whatever else is set.
- OTEL_TRACES_EXPORTER: a comma-separated list of `otlp` (needs the `otlp` extra:
  `pip install 'tutor-memory[otlp]'`), `console` (spans as JSON on stdout) and `none`.
- Read by the OpenTelemetry SDK itself: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the
  service name defaults to `tutor-memory`), OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG,
  OTEL_BSP_* (the batch span processor), OTEL_EXPORTER_OTLP_* (the OTLP exporter's endpoint,
  headers, protocol, certificates, timeout).

The provider is the server's own, not installed as OpenTelemetry's global one, so several
servers in one process (tests) each keep their spans.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
)

# The service name spans carry when the environment names none.
DEFAULT_SERVICE_NAME = "tutor-memory"
# The instrumentation scope of the server's own spans (block stages).
TRACER_NAME = "tutor_memory"
# Exporter names of OTEL_TRACES_EXPORTER this server knows.
KNOWN_EXPORTERS = ("otlp", "console", "none")
# Where the OTLP exporter comes from (an optional extra: it pulls in more packages).
OTLP_MODULE = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"


class TracingConfigError(ValueError):
    """The OTEL_* variables ask for something this server cannot do; the message says what."""


def tracer_provider_from_env(environ: Mapping[str, str]) -> TracerProvider | None:
    """The provider the environment asks for, or None when tracing is off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    names = [n for n in names if n and n != "none"]
    if not names:
        return None
    exporters = [_exporter(name) for name in names]
    resource = Resource.create({})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    if name == "otlp":
        try:
            module = importlib.import_module(OTLP_MODULE)
        except ImportError as exc:
            raise TracingConfigError(
                "OTEL_TRACES_EXPORTER=otlp needs the OTLP exporter: "
                "pip install 'tutor-memory[otlp]' (opentelemetry-exporter-otlp-proto-grpc)"
            ) from exc
        exporter: SpanExporter = module.OTLPSpanExporter()
        return exporter
    raise TracingConfigError(
        f"OTEL_TRACES_EXPORTER names {name!r}; this server knows {', '.join(KNOWN_EXPORTERS)}"
    )
