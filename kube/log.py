"""Logging setup shared by every entrypoint: one line per event, context as key=value."""

from __future__ import annotations

import logging
import sys

__all__ = ["setup_logging"]

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = f"{self.formatTime(record, '%H:%M:%S')}.{int(record.msecs):03d} {record.levelname[0]} {record.name}: " \
               f"{record.getMessage()}"
        extras = [f"{k}={v}" for k, v in record.__dict__.items() if k not in _STANDARD]
        line = " ".join([base, *extras])
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(level: str = "INFO", component: str = "") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
