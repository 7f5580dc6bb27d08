"""The suite's screenshot helper shoots the page a click led to, not the half-parsed start of it.

A link's click returns once the next page has begun to arrive. On a busy machine the helper
once ran before the parser had made ``<head>``, and a test failed that had nothing wrong with
its page. Here a small server sends the start of a page, then holds the rest back a while."""

from __future__ import annotations

import http.server
import socketserver
import struct
import threading

HELD_BACK_SECONDS = 0.5


class _SlowPageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        if self.path != "/slow":
            self.wfile.write(b'<!doctype html><html><body><a id="go" href="/slow">go</a></body></html>')
            return
        # Past the 1 KiB a browser reads before it decides the encoding: the page commits now.
        self.wfile.write(b"<!doctype html>" + b" " * 2048)
        self.wfile.flush()
        threading.Event().wait(HELD_BACK_SECONDS)
        self.wfile.write(b"<html><head><title>slow</title></head><body><p>arrived</p></body></html>")

    def log_message(self, *args) -> None:
        pass


def test_a_screenshot_right_after_a_click_waits_for_the_next_page(page, screenshot):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SlowPageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        page.click("#go")
        path = screenshot("screenshot-helper-after-a-click")
    finally:
        server.shutdown()
        server.server_close()
    assert page.locator("p").inner_text() == "arrived"
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the PNG's IHDR chunk
    assert width >= 1100 and height >= 900
