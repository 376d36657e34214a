"""WebSockets from a real headless Chromium (browser.py) through the real binary: a page
served through Latchkey opens `new WebSocket("ws://<Latchkey>/…")`, sends messages and
shows their echoes, and the upstream sees the route's credential; a page from another
origin (the upstream's own port) that opens a WebSocket to Latchkey is refused (403
`cross_site`): the browser only sees the WebSocket fail."""

from __future__ import annotations

from support import TOKEN, config, json_lines, wait_until
from websocket_support import make_ws_server  # noqa: F401 (fixture)

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>WebSocket through Latchkey</title></head>
<body><p id="state">connecting</p><p id="echo"></p><p id="big"></p>
<script>
const state = document.getElementById("state");
const ws = new WebSocket(TARGET, ["chat.v1"]);
const big = "0123456789abcdef".repeat(65536);  // 1 MiB
ws.onopen = () => { state.textContent = "open " + ws.protocol; ws.send("hello from chromium"); };
ws.onmessage = (event) => {
  if (event.data === "hello from chromium") {
    document.getElementById("echo").textContent = "echo: " + event.data;
    ws.send(big);
  } else {
    document.getElementById("big").textContent = event.data === big ? "big echo intact" : "big echo damaged";
    ws.close(1000, "done");
  }
};
ws.onerror = () => { state.textContent = "error"; };
ws.onclose = (event) => { window.closeCode = event.code; };
</script></body></html>
"""


def page(target_js: str) -> tuple[str, bytes]:
    return "text/html; charset=utf-8", PAGE.replace("TARGET", target_js).encode()


def text_of(browser, element: str) -> str:
    return browser.evaluate(f"document.getElementById({element!r}).textContent")


def test_a_page_through_latchkey_opens_a_websocket_through_it(latchkey, make_ws_server, browser):
    server = make_ws_server(subprotocols=["chat.v1"],
                            pages={"/app": page('"ws://" + location.host + "/live/echo"')})
    p = latchkey.serve(config(server.url, logging={"format": "json"}))
    loaded = browser.open(p.base_url + "/app")
    assert "WebSocket through Latchkey" in loaded.html
    assert wait_until(lambda: text_of(browser, "big"), timeout=20), (text_of(browser, "state"), browser.log())
    assert text_of(browser, "state") == "open chat.v1"
    assert text_of(browser, "echo") == "echo: hello from chromium"
    assert text_of(browser, "big") == "big echo intact"
    assert wait_until(lambda: browser.evaluate("window.closeCode"), timeout=10) == 1000

    session = server.wait_session()
    assert session.path == "/live/echo"
    assert session.header("Authorization") == f"Bearer {TOKEN}"
    assert session.header("Origin") == p.base_url
    assert session.messages[0] == "hello from chromium" and len(session.messages[1]) == 1 << 20
    assert session.wait_ended() and session.close_code == 1000
    # The page came through Latchkey too, with the credential.
    [page_request] = [h for h in server.handshakes if h.path == "/app"]
    assert page_request.header("Authorization") == f"Bearer {TOKEN}"
    assert wait_until(lambda: [line for line in json_lines(p.log())
                               if line.get("path") == "/live/echo" and line.get("outcome") == "upgrade_closed"]), p.log_tail()


def test_a_page_from_another_origin_cannot_open_a_websocket_through_latchkey(latchkey, make_ws_server, browser):
    server = make_ws_server()
    p = latchkey.serve(config(server.url, logging={"format": "json"}))
    # The page comes from the upstream's own port: another origin than Latchkey's.
    server.pages["/elsewhere"] = page(f'"ws://{p.host_header}/live/echo"')
    browser.open(f"{server.url}/elsewhere")
    assert wait_until(lambda: text_of(browser, "state") == "error", timeout=20), text_of(browser, "state")
    assert wait_until(lambda: browser.evaluate("window.closeCode"), timeout=10) == 1006
    assert text_of(browser, "echo") == ""
    # The access log line is written by the log's own thread, after the answer: wait for it.
    def refused():
        return [line.get("status") for line in json_lines(p.log()) if line.get("path") == "/live/echo"]
    assert wait_until(lambda: refused() == [403], timeout=10), p.log_tail()
    assert not server.upgrade_handshakes(), "the cross-site handshake reached the upstream"
    assert server.sessions == []
