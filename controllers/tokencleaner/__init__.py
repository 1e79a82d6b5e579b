"""The bootstrap token cleaner."""

from controllers.tokencleaner.controller import TokenCleaner

__all__ = ["TokenCleaner"]
