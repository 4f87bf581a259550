"""CPU time and memory of a running process, read from Linux's /proc."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# Fields of /proc/<pid>/stat counted from the one after the command name: utime and stime
# (man 5 proc numbers them 14 and 15 from the pid).
_UTIME, _STIME = 11, 12
BYTES_PER_KIB = 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used so far, over all its threads."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name is in parentheses and may hold spaces: split after its closing one.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[_UTIME]) + int(fields[_STIME])) / CLOCK_TICKS_PER_S


def tree_pids(pid: int) -> list[int]:
    """The process and its descendants (the workers of `serve --workers` and their supervisor),
    found through each process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # After the parenthesised command name: state, then the parent's pid.
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def tree_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of the process and its running descendants so far."""
    total = 0.0
    for member in tree_pids(pid):
        try:
            total += cpu_seconds(member)
        except OSError:
            continue
    return total


def tree_memory_mib(pid: int) -> dict[str, float]:
    """`memory_mib` summed over the process and its descendants (each peak is its own, so the
    sum of peaks bounds the peak of the sum)."""
    out: dict[str, float] = {}
    for member in tree_pids(pid):
        try:
            for key, value in memory_mib(member).items():
                out[key] = round(out.get(key, 0.0) + value, 1)
        except OSError:
            continue
    return out


def memory_mib(pid: int) -> dict[str, float]:
    """Resident set size now (VmRSS) and at its peak so far (VmHWM), in MiB."""
    wanted = {"VmRSS": "rss_mib", "VmHWM": "peak_rss_mib"}
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in wanted:
            kib = int(value.split()[0])
            out[wanted[key]] = round(kib * BYTES_PER_KIB / 2**20, 1)
    return out


def machine_busy_seconds() -> float:
    """CPU time every core of the machine has spent busy since boot (all processes): with the
    server's and ghz's own time subtracted, what else ran beside a benchmark run."""
    # /proc/stat's first line: "cpu user nice system idle iowait irq softirq steal ...".
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / CLOCK_TICKS_PER_S


def rss_kib(pid: int) -> int:
    """Resident set size now (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def tree_rss_kib(pid: int) -> int:
    """`rss_kib` summed over the process and its running descendants (a server's worker
    processes: the import process, the file-reading process)."""
    total = rss_kib(pid)  # raises once the process itself has exited
    for member in tree_pids(pid)[1:]:
        try:
            total += rss_kib(member)
        except (OSError, RuntimeError):  # exited meanwhile
            continue
    return total


class RssSampler:
    """VmRSS of a process every `interval_s` on a thread of its own, with the monotonic time of
    each sample, so that the peak inside any window of a run can be read afterwards (VmHWM only
    gives the peak since the process started). With `tree`, of the process and its descendants."""

    def __init__(self, pid: int, interval_s: float, *, tree: bool = False) -> None:
        self._pid = pid
        self._read = tree_rss_kib if tree else rss_kib
        self._interval_s = interval_s
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), self._read(self._pid)))
            except (OSError, RuntimeError):  # the process has exited
                return
            self._stop.wait(self._interval_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def peak_kib(self, start: float, end: float) -> int | None:
        inside = [kib for at, kib in self.samples if start <= at <= end]
        return max(inside) if inside else None
