"""The reference MCP servers: orders, kb and policy, one FastMCP server per module.

Run as `python -m servers.<name>`, a server must not outlive the process that started it
(the hub): if that process is SIGKILLed while the server is still importing, the server would
only notice its closed stdin once its imports finish, seconds later. So, before anything else
is imported, a server asks Linux to kill it when its parent dies (`PR_SET_PDEATHSIG`). This
runs only for `python -m servers.…` (while `-m` locates the module, `sys.argv[0]` is "-m");
importing `servers.approval` from the graph does nothing.
"""

import sys

if sys.argv[:1] == ["-m"] and sys.platform.startswith("linux"):
    import ctypes
    import signal

    _PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl: the server still exits on stdin EOF
        pass
