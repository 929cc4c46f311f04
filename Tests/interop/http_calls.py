"""HTTP calls to the gateway and the exporter: one request on a fresh connection, a Cloud Vision
images:annotate body, a plain GET that returns error statuses instead of raising.

Standard library only: the interop tests use these, and scripts/docker-smoke runs them with Debian's
python3 (scripts/smoke/helpers.py) against the ports compose publishes.
"""

import base64
import http.client as httpclient
import json
import urllib.error
import urllib.request


def request(port, method, path, body=None, headers=None, timeout=60, host="127.0.0.1"):
    """One request on a fresh connection: (status, lower-cased headers, parsed JSON or raw bytes).
    A dict or list body is sent as JSON (with its Content-Type), a str as UTF-8, bytes as they are."""
    conn = httpclient.HTTPConnection(host, port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict({"Content-Type": "application/json"}, **(headers or {}))
        elif isinstance(body, str):
            body = body.encode()
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        try:
            data = json.loads(data)
        except ValueError:
            pass
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


def annotate_body(image, feature="TEXT_DETECTION"):
    """Cloud Vision's images:annotate body asking `feature` of one image (its bytes)."""
    return {"requests": [{"image": {"content": base64.b64encode(image).decode()}, "features": [{"type": feature}]}]}


def get(url, method="GET", timeout=5):
    """(status, headers, text) of one plain request to `url`; an error status is returned, not raised."""
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")
