"""`tutor-memory serve` with its allocators' statistics written to a file every few seconds, for
the memory benchmark's mixed run: what RSS is made of, and which part of it grows.

Run as `python -m bench._allocator_probe OUT_JSONL SECONDS serve ...` (the rest is `serve`'s own
command line). Each line of OUT_JSONL is one sample: seconds since the process started (before it
serves), VmRSS and RssAnon (MiB), glibc's heap as `mallinfo2` reports it (memory handed out and not
freed, free memory kept inside the heap, memory in mmapped chunks; what numpy, FAISS, SQLite, the
native extension and CPython's large objects take), and CPython's small-object allocator
(`sys._debugmallocstats`: the bytes of live objects and the arenas holding them). glibc only:
elsewhere the glibc fields are absent.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from pathlib import Path

MIB = 2**20
# The lines of sys._debugmallocstats kept, by their label.
PYMALLOC_FIELDS = {
    "# arenas allocated current": "arenas",
    "# bytes in allocated blocks": "object_bytes",
}


# glibc's struct mallinfo2, field by field (size_t each).
MALLINFO2_FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in MALLINFO2_FIELDS.split()]


def _glibc() -> dict[str, float]:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    return {
        "glibc_in_use_mib": round(info.uordblks / MIB, 1),
        "glibc_free_mib": round(info.fordblks / MIB, 1),
        "glibc_mmapped_mib": round(info.hblkhd / MIB, 1),
    }


def _pymalloc() -> dict[str, float]:
    """sys._debugmallocstats writes to the C-level stderr: read it through a pipe on fd 2."""
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(write_end)
        os.close(saved)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    out: dict[str, float] = {}
    for line in b"".join(chunks).decode().splitlines():
        for label, name in PYMALLOC_FIELDS.items():
            if line.startswith(label):
                out[name] = int(line.rsplit("=", 1)[1].replace(",", "").strip())
    if "object_bytes" in out:
        out["python_objects_mib"] = round(out.pop("object_bytes") / MIB, 1)
    if "arenas" in out:
        # CPython 3.10+ arenas are 1 MiB each.
        out["python_arenas_mib"] = out.pop("arenas")
    return out


def _status() -> dict[str, float]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon"):
            out[f"{key.lower()}_mib"] = round(int(value.split()[0]) / 1024, 1)
    return out


def _sample_forever(out: Path, seconds: float) -> None:
    started = time.monotonic()
    while True:
        time.sleep(seconds)
        sample = {"s": round(time.monotonic() - started, 1), **_status(), **_glibc()}
        sample.update(_pymalloc())
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(sample) + "\n")


def main() -> int:
    out, seconds, argv = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    threading.Thread(target=_sample_forever, args=(out, seconds), daemon=True).start()
    from tutor_memory.cli.main import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
