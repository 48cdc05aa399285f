import os
# A hub model id without this hangs ~46 s before failing on a machine with no hub access.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import time
import httpx, pytest

def _wait_until_serving(proc, base: str, hang_guard: float = 900.0) -> dict:
    """/health of a `cragrag serve` started as `proc`, once it answers. It waits as long as the process is alive
    (loading models takes minutes on a loaded machine); `hang_guard` only stops a server that never opens its port."""
    end = time.monotonic() + hang_guard
    while True:
        try: return httpx.get(f"{base}/health", timeout=5).json()
        except httpx.TransportError:
            if proc.poll() is not None: raise AssertionError(f"cragrag serve exited ({proc.returncode}): {proc.stdout.read()}")
            if time.monotonic() > end: raise AssertionError(f"cragrag serve did not open {base} in {hang_guard:.0f} s")
            time.sleep(0.5)

@pytest.fixture
def wait_until_serving():
    "`wait_until_serving(proc, base)`: /health of a `cragrag serve` subprocess once it answers (no start-time assertion)."
    return _wait_until_serving

def stop_leftovers() -> list[str]:
    """Stop what a notebook or test left running in this process, even when it failed before its own clean-up:
    `cragrag serve` threads (with their worker processes) and multiprocessing children. What was stopped, by name."""
    import multiprocessing
    left = []
    try:
        from cragrag.serve.server import stop_servers
        if n := stop_servers(timeout=5): left.append(f"{n} server(s)")
    except ImportError: pass                  # (no [server] extra)
    for child in multiprocessing.active_children():
        child.kill(); child.join(5); left.append(f"process {child.name}")
    return left

def pytest_sessionfinish(session, exitstatus):
    "Nothing a test started outlives the run: a server thread and its worker processes would keep the interpreter's exit waiting on them (minutes, after the summary)."
    stop_leftovers()
