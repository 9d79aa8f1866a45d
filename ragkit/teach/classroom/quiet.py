"""The terminal of ``make lab``: the server's link, every warning and error, and ragkit's own lines; not its chatter.

At start jupyter_server logs two dozen lines (each extension linked and loaded, the language servers it did not find,
in one very long line); then a warning on every notebook it opens ("Notebook ... is not trusted": a notebook without
outputs has nothing to trust) and one about a ping setting (tornado 6.5 reads jupyter_server's milliseconds as
seconds, and lowers a timeout nobody set). ``make lab`` installs ``Quiet`` on the server's console handler
(binder/lab_terminal.json); Binder and a hub keep the server's whole log.
"""

from __future__ import annotations

import logging
import re

__all__ = ["KEPT", "NOISE", "OURS", "Quiet"]

KEPT = re.compile(r"https?://|is running at|Control-C|^Kernel (started|shutdown|restarted)|^Shutting down")
"""The server's informational lines a student needs: the link, how to stop, kernels started and stopped."""
OURS = {"ragkit": True}
"""``extra=`` of every line ragkit logs through the server: kept by its mark, whatever its words."""

NOISE = re.compile(
    r"^Notebook .+ is not trusted$|^The websocket_ping_timeout \(\d+\) cannot be longer than the "
    r"websocket_ping_interval"
)
"""The two warnings that warn of nothing: the rest of the warnings and errors all reach the terminal."""


class Quiet(logging.Filter):
    """Lets through every warning and error but the two of NOISE, and of the information ragkit's own lines and
    what KEPT names."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        if record.levelno >= logging.WARNING:
            return NOISE.search(message) is None
        return getattr(record, "ragkit", False) or KEPT.search(message) is not None
