"""A headless Chromium driven over the DevTools protocol, for tests of the browser view.

Starts Debian's `chromium` with a private profile and `--remote-debugging-port=0`, reads the
port it chose from the profile's `DevToolsActivePort`, and talks to its one page over the
page's websocket (websocket-client, synchronous: one command at a time, events skipped).
The same page stays open between calls, so a test can observe it change without reloading.
The cluster's serving certificate is signed by its own CA, hence `--ignore-certificate-errors`.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import websocket

__all__ = ["HeadlessChromium", "chromium_binary"]


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class HeadlessChromium:
    def __init__(self, *, width: int = 1400, height: int = 1000) -> None:
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("chromium is not installed")
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-")
        self._proc = subprocess.Popen(
            [binary, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--ignore-certificate-errors",
             "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={self._profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._ids = itertools.count(1)
        self._ws = websocket.create_connection(self._page_socket(), timeout=60, suppress_origin=True)

    def _page_socket(self, timeout: float = 30.0) -> str:
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                port = port_file.read_text().split()[0]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; its result. RuntimeError on a protocol error."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url: str, timeout: float = 30.0) -> None:
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while self.evaluate("document.readyState") != "complete" or self.evaluate("location.href") == "about:blank":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.1)

    def text(self) -> str:
        return str(self.evaluate("document.body.innerText"))

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._profile.cleanup()

    def __enter__(self) -> HeadlessChromium:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
