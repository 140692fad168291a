"""The reference MCP servers: orders, kb and policy, one FastMCP server per module.

Run as `python -m servers.<name>`, a server must not outlive the process that started it
(the hub): if that process is SIGKILLed while the server is still importing, the server would
only notice its closed stdin once its imports finish, seconds later. So, before anything else
is imported, a server asks Linux to kill it when its parent dies (`PR_SET_PDEATHSIG`). This
runs only for `python -m servers.…` (while `-m` locates the module, `sys.argv[0]` is "-m");
importing `servers.approval` from the graph does nothing.
"""

import gc
import sys

if sys.argv[:1] == ["-m"]:
    # A server's imports (the MCP SDK builds hundreds of pydantic models) allocate enough to
    # set off the cyclic collector over and over, on objects that live as long as the process:
    # about 15% of a server's start-up CPU. `serving()` freezes them and turns it back on.
    gc.disable()

if sys.argv[:1] == ["-m"] and sys.platform.startswith("linux"):
    import ctypes
    import signal

    _PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl: the server still exits on stdin EOF
        pass


def serving() -> None:
    """Called by each server right before it serves: what its imports made is frozen out of
    the cyclic collector (it lives as long as the process), which runs again from here on."""
    gc.freeze()
    gc.enable()
