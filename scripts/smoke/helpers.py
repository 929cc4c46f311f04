"""The Python that scripts/docker-smoke's scenarios call: one verb per job, standard library only
(Debian's python3, no virtualenv). What the interop tests do too comes from their modules in
Tests/interop: free ports (ports.py), the gateway's HTTP calls and the exporter's GET (http_calls.py),
a service's entry in a stats snapshot (stats_snapshot.py).

Usage: python3 scripts/smoke/helpers.py VERB [ARGS]
  free-port                     a TCP port free on every address (compose publishes there)
  client-credentials TEXT       'ID SECRET' from what `quire clients add --json` printed; nothing if not found
  jwt-claims TOKEN              'sub=… scope=… exp-iat=…s' of a JWT's payload; fails if it is none
  annotate URL IMAGE            the text the gateway at URL reads in IMAGE (Cloud Vision images:annotate,
                                DOCUMENT_TEXT_DETECTION), retried for 30 s while it comes up; with
                                $QUIRE_SMOKE_BEARER set, sent as `Authorization: Bearer`
  annotate-status URL           the HTTP status of an images:annotate call with no credentials
  stats-workers SERVICE         workers of SERVICE in the stats snapshot on stdin (`quire stats --once --json`)
  log-workers SERVICE           workers of SERVICE the broker's JSON log on stdin registered (ready minus gone)
  get URL                       the body of a GET (the exporter's /metrics); fails on an error status
"""

import base64
import http.client as httpclient
import json
import os
import re
import sys
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "interop"))

import http_calls  # noqa: E402
import stats_snapshot  # noqa: E402
from ports import free_port  # noqa: E402

# The broker's log messages for a worker it no longer counts.
WORKER_GONE = ("worker disconnected", "worker expired", "worker unreachable; dropping it",
               "worker broke the protocol; disconnecting it")


def client_credentials(text):
    """(id, secret) from `quire clients add --json`'s output, or from a plain 'client id …/secret …' text."""
    ident = secret = None
    for match in re.finditer(r"\{.*?\}", text, re.S):
        try:
            obj = json.loads(match.group(0))
        except ValueError:
            continue
        ident = ident or obj.get("client_id") or obj.get("clientID") or obj.get("id")
        secret = secret or obj.get("client_secret") or obj.get("clientSecret") or obj.get("secret")
    if not (ident and secret):
        i = re.search(r"client[ _-]?id\W+(\S+)", text, re.I)
        s = re.search(r"(?:client[ _-]?)?secret\W+(\S+)", text, re.I)
        ident, secret = (i.group(1) if i else None), (s.group(1) if s else None)
    return ident, secret


def jwt_claims(token):
    payload = token.split(".")[1]
    payload += "=" * (-len(payload) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))


def gateway(url):
    """(host, port) of the gateway's base URL."""
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port or 80


def annotate(url, image_path, bearer):
    """The gateway's fullTextAnnotation text of the image (or the start of its response when it has
    none); None and the last answer if it gave none in 30 s."""
    host, port = gateway(url)
    with open(image_path, "rb") as f:
        body = http_calls.annotate_body(f.read(), "DOCUMENT_TEXT_DETECTION")
    headers = {"Authorization": "Bearer " + bearer} if bearer else {}
    last = None
    for _ in range(60):  # the gateway (and its connection to the broker) comes up in its own time
        try:
            status, _, reply = http_calls.request(port, "POST", "/v1/images:annotate", body, headers, timeout=30, host=host)
            if status != 200:
                last = reply
            else:
                response = reply["responses"][0]
                if "error" in response and response["error"].get("code") == 14:  # UNAVAILABLE: no worker yet
                    last = response["error"]
                elif "fullTextAnnotation" in response:
                    return response["fullTextAnnotation"]["text"], None
                else:
                    return json.dumps(response)[:300], None
        except (OSError, httpclient.HTTPException) as e:
            last = str(e)
        time.sleep(0.5)
    return None, last


def annotate_status(url):
    host, port = gateway(url)
    status, _, _ = http_calls.request(port, "POST", "/v1/images:annotate", http_calls.annotate_body(b"hello"),
                                      timeout=30, host=host)
    return status


def stats_workers(snapshot, name):
    """Workers of service `name` in a snapshot: the schema's list of services, or the older shapes (a
    map of services; a list of workers each naming its service)."""
    services = snapshot.get("services", [])
    if isinstance(services, dict):
        services = [dict(v, name=k) for k, v in services.items()]
    entry = stats_snapshot.service({"services": services}, name)
    if entry is not None:
        return stats_snapshot.workers(entry)
    return sum(1 for w in snapshot.get("workers", []) if w.get("service") == name)


def log_workers(lines, name):
    """Workers of service `name` a broker's JSON log lines registered, less those it dropped since."""
    live = set()
    for line in lines:
        start = line.find("{")
        if start < 0:
            continue
        try:
            e = json.loads(line[start:])
        except ValueError:
            continue
        if e.get("msg") == "worker ready" and e.get("service") == name:
            live.add(e.get("peer"))
        elif e.get("msg") in WORKER_GONE:
            live.discard(e.get("peer"))
    return len(live)


def main(argv):
    verb, args = (argv[0], argv[1:]) if argv else ("", [])
    if verb == "free-port":
        print(free_port(""))
    elif verb == "client-credentials":
        ident, secret = client_credentials(args[0])
        if ident and secret:
            print(ident, secret)
    elif verb == "jwt-claims":
        c = jwt_claims(args[0])
        print("sub=%s scope=%s exp-iat=%ss" % (c["sub"], c["scope"], c["exp"] - c["iat"]))
    elif verb == "annotate":
        text, last = annotate(args[0], args[1], os.environ.get("QUIRE_SMOKE_BEARER", ""))
        if text is None:
            print("no answer from the gateway: %s" % (last,), file=sys.stderr)
            return 1
        print(text)
    elif verb == "annotate-status":
        print(annotate_status(args[0]))
    elif verb == "stats-workers":
        print(stats_workers(json.load(sys.stdin), args[0]))
    elif verb == "log-workers":
        print(log_workers(sys.stdin, args[0]))
    elif verb == "get":
        status, _, text = http_calls.get(args[0])
        if status != 200:
            print("GET %s: HTTP %d" % (args[0], status), file=sys.stderr)
            return 1
        print(text)
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
