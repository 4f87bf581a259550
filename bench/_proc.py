"""CPU time and memory of a running process, read from Linux's /proc."""

from __future__ import annotations

import os
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
