"""Free TCP ports for the processes the interop tests and scripts/docker-smoke start.

Standard library only: scripts/docker-smoke imports it with Debian's python3, outside the virtualenv.
"""

import socket


def free_port(host="127.0.0.1"):
    """A TCP port nothing listens on at `host` now ("" for every address, as Docker publishes ports).

    Another process may take it before it is bound; callers that can, retry."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((host, 0))
        return s.getsockname()[1]
    finally:
        s.close()
