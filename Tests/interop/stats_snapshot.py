"""Reading the broker's stats snapshots (proto-json/stats-snapshot.schema.json).

Standard library only: the interop tests use it, and scripts/docker-smoke counts a service's workers
with it (scripts/smoke/helpers.py) in a snapshot from `quire stats --once --json`.
"""


def service(snapshot, name):
    """The entry of service `name` in a snapshot, or None while the broker has not seen it."""
    for s in snapshot["services"]:
        if s["name"] == name:
            return s
    return None


def workers(entry):
    """Workers of a service entry: the schema's object of counts (idle, busy) summed; a plain number as it is."""
    w = entry.get("workers", 0)
    return w if isinstance(w, int) else sum(v for v in w.values() if isinstance(v, int))
