"""Drive a headless Chromium over the DevTools protocol, with the standard library only.

`Browser()` starts Chromium with ``--remote-debugging-pipe``: the protocol's
JSON messages go over two pipes (the child's fds 3 and 4, NUL-separated), so
no websocket client is needed.  One page target is attached; `open(url)`
navigates and waits for its load event, `js(expr)` evaluates in the page and
returns the value, `mouse(...)`/`wheel(...)` send real input events,
`screenshot(path)` saves a PNG.  `find_chromium()` is None where no browser is
installed (the tests skip then).

The flags are those a closed network needs: without the background-networking
ones Chromium stalls trying to reach its services.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60.0) -> None:
        exe = find_chromium()
        if exe is None:
            raise BrowserError("no Chromium installed")
        self.timeout = timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="bcfront-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds_3_and_4() -> None:  # in the child: it reads commands on fd 3, writes replies on 4
            a, b = os.dup(to_child_r), os.dup(from_child_w)  # neither is 3 or 4 unless free
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                *FLAGS,
                f"--user-data-dir={self._tmp.name}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # the fds made by dup2 are inheritable; Python's own fds are not
            preexec_fn=fds_3_and_4,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.session = ""
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close", _session=False)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._tmp.cleanup()

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium exited (code {self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, _session: bool = True, **params) -> dict:
        """Send one command and wait for its reply; events that arrive meanwhile are kept."""
        self._id += 1
        msg: dict = {"id": self._id, "method": method, "params": params}
        if _session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def open(self, url: str) -> float:
        """Navigate to `url` and wait for its load event; the seconds that took (wall clock)."""
        self.events.clear()
        t0 = time.perf_counter()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        return time.perf_counter() - t0

    def js(self, expr: str):
        """The value of `expr` evaluated in the page (JSON-able values; promises awaited)."""
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expr!r}: {r['exceptionDetails'].get('exception', r['exceptionDetails'])}")
        return r["result"].get("value")

    def errors(self) -> list[str]:
        """Uncaught exceptions the page threw so far."""
        return [
            str(e["params"]["exceptionDetails"])
            for e in self.events
            if e.get("method") == "Runtime.exceptionThrown"
        ]

    def mouse(self, kind: str, x: float, y: float, buttons: int = 0, **extra) -> None:
        button = "left" if kind == "mousePressed" or kind == "mouseReleased" or buttons else "none"
        self.call(
            "Input.dispatchMouseEvent",
            type=kind,
            x=x,
            y=y,
            button=button,
            buttons=buttons,
            clickCount=1 if kind != "mouseMoved" else 0,
            **extra,
        )

    def drag(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0, 1)
        self.mouse("mouseMoved", (x0 + x1) / 2, (y0 + y1) / 2, 1)
        self.mouse("mouseMoved", x1, y1, 1)
        self.mouse("mouseReleased", x1, y1, 0)

    def wheel(self, x: float, y: float, delta_y: float) -> None:
        self.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=delta_y)

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, 1)
        self.mouse("mouseReleased", x, y, 0)

    def center_of(self, selector: str) -> tuple[float, float]:
        """Scroll the first element matching `selector` into view; its centre in the viewport."""
        r = self.js(
            f"(function(){{var e=document.querySelector({json.dumps(selector)});"
            "e.scrollIntoView({block:'center'});var b=e.getBoundingClientRect();"
            "return [b.left+b.width/2,b.top+b.height/2];})()"
        )
        return r[0], r[1]

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params: dict = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", **params)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path
