"""Dask settings of the executors' tests: what a test cluster does that no test looks at, done less often.

A Dask worker samples every thread's stack every 10 ms (its profiler), and
its scheduler, nannies and workers check their event loop every 20 ms and
their memory every 100 ms, for dashboards and warnings. Idle, a 2-worker
cluster burned about 13% of a core on it; with these settings, about 1.5%.
Nothing a test checks depends on them: heartbeats, timeouts, retries and
restarts keep Dask's own values.
"""

from __future__ import annotations

QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def quiet_environment() -> dict[str, str]:
    """``QUIET`` as Dask's environment variables, for the Dask (and famiglia) processes a test starts."""
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value) for key, value in QUIET.items()}
