"""A real headless Chromium (Debian's `chromium` package) driven over the DevTools
protocol, for the browser flows: it keeps its cookies across pages as a web view does.

    browser = Browser(tmp_path / "chromium")
    page = browser.open("http://127.0.0.1:8080/projects")
    assert "Projects" in page.html
    browser.close()

`--no-sandbox`: CI runs the tests as root, and Chromium's sandbox refuses to start as root
without it. That is acceptable here because this browser only ever loads pages that the
test itself serves on loopback (the proxy under test and its test upstreams), never
content from elsewhere: the sandbox protects against hostile pages, and there are none.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import websocket  # websocket-client, pinned in requirements.txt

from support import wait_until


@dataclass
class Page:
    url: str
    html: str


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, profile: Path, home: Path | None = None):
        """`home`: the HOME it runs with, where Chromium on Linux reads the NSS database of
        the certificates it trusts (`home/.pki/nssdb`); the caller's HOME when None."""
        binary = chromium_path()
        if binary is None:
            raise AssertionError("chromium is not installed (Scripts/test.sh installs Debian's chromium package)")
        profile.mkdir(parents=True, exist_ok=True)
        self._log = open(profile.parent / f"{profile.name}.log", "wb")
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=None if home is None else {**os.environ, "HOME": str(home)})
        port_file = profile / "DevToolsActivePort"
        if not wait_until(lambda: port_file.exists() and port_file.read_text().strip(), timeout=30):
            self.close()
            raise AssertionError(f"chromium did not open its DevTools port:\n{self.log()}")
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        page = next(t for t in targets if t["type"] == "page")
        # Chromium refuses DevTools connections that carry an Origin it was not told about.
        self._ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self._next_id = 0
        self._events: list[dict] = []
        self.call("Page.enable")

    def call(self, method: str, **params) -> dict:
        """Sends one DevTools command and returns its result; events that arrive meanwhile
        are kept for `_wait_event`."""
        self._next_id += 1
        ident = self._next_id
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise AssertionError(f"{method} failed: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def _wait_event(self, method: str) -> dict:
        while True:
            for index, event in enumerate(self._events):
                if event["method"] == method:
                    return self._events.pop(index)
            message = json.loads(self._ws.recv())
            if "method" in message:
                self._events.append(message)

    def open(self, url: str) -> Page:
        """Navigates the tab to `url` as a person typing it would, follows redirects, and
        returns the page once it has loaded."""
        self._events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise AssertionError(f"navigation to {url} failed: {result['errorText']}")
        self._wait_event("Page.loadEventFired")
        state = self.evaluate("[location.href, document.documentElement.outerHTML]")
        return Page(url=state[0], html=state[1])

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page now in the tab."""
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, path: Path, width: int | None = None) -> Path:
        """Saves a PNG of the whole page now in the tab to `path` and returns it; `width`
        lays the page out that many CSS pixels wide first (a phone's, say)."""
        if width is not None:
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=True)
        try:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            shot = self.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)
        finally:
            if width is not None:
                self.call("Emulation.clearDeviceMetricsOverride")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def cookies(self) -> list[dict]:
        return self.call("Network.getAllCookies")["cookies"]

    def log(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")[-4000:]

    def close(self) -> None:
        if getattr(self, "_ws", None) is not None:
            self._ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()
