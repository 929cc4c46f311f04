"""The deployment files as shipped (docker-compose.yml, deploy/kubernetes/*.yaml) hold together with
the binary: every QUIRE_* variable they set is one Quire reads, every command they run is one it has,
every Service selects pods that exist and names their ports, every Secret they read is defined or
documented, and KEDA scales a Deployment that exists on a metric the exporter publishes.

What these files do on a real engine is scripts/docker-smoke's (compose, its ha profile, Swarm); no
Kubernetes cluster is reachable here, so the manifests are held to the binary and to each other."""

import re
import subprocess

import yaml

from conftest import QUIRE_BIN, REPO_ROOT

KUBE = REPO_ROOT / "deploy" / "kubernetes"


def documented_variables():
    """Every QUIRE_* variable in the configuration table (docs/configuration.md, generated from the code)."""
    text = (REPO_ROOT / "docs" / "configuration.md").read_text()
    return set(re.findall(r"^\| `(QUIRE_[A-Z0-9_]+)`", text, re.M))


def manifests():
    docs = []
    for path in sorted(KUBE.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((path.name, doc))
    return docs


def of_kind(kind):
    return [(name, doc) for name, doc in manifests() if doc["kind"] == kind]


def containers():
    for name, doc in of_kind("Deployment"):
        for container in doc["spec"]["template"]["spec"]["containers"]:
            yield name, doc, container


def quire_help(args):
    """`quire ARGS --help` for the command the args start with (options dropped)."""
    words = []
    for arg in args:
        if arg.startswith("-"):
            break
        words.append(arg)
    return subprocess.run([QUIRE_BIN] + words + ["--help"], capture_output=True, text=True, timeout=20)


def test_every_quire_variable_set_is_one_quire_reads():
    known = documented_variables()
    assert len(known) > 40, "the configuration table was not found"
    # Variables the image and compose read themselves, not quire's settings.
    outside = {"QUIRE_IMAGE", "QUIRE_HEALTH_BROKER"}
    used = set()
    for _, _, container in containers():
        used |= {e["name"] for e in container.get("env", []) if e["name"].startswith("QUIRE_")}
    compose = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    for service in compose["services"].values():
        if not service.get("image", "").startswith("${QUIRE_IMAGE"):
            continue  # PostgreSQL's own image reads its own variables (deploy/postgres/entrypoint)
        env = service.get("environment") or {}
        used |= {k for k in env if k.startswith("QUIRE_")}
    unknown = used - known - outside
    assert not unknown, "set in the deployment files but read by no quire command: %s" % sorted(unknown)
    assert "QUIRE_STORE" in used and "QUIRE_STORE" in known


def test_every_command_the_files_run_is_one_quire_has():
    commands = [c["args"] for _, _, c in containers()]
    compose = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    commands += [s["command"] for s in compose["services"].values() if "command" in s and s.get("image", "").startswith("${QUIRE_IMAGE")]
    assert len(commands) >= 8
    for args in commands:
        result = quire_help(args)
        assert result.returncode == 0, "quire %s: %s" % (" ".join(args), result.stderr)
        for flag in [a for a in args if a.startswith("--")]:
            assert flag in result.stdout, "quire %s has no %s" % (" ".join(args), flag)


def test_services_select_pods_that_exist_and_name_their_ports():
    pods = [(doc["spec"]["template"]["metadata"]["labels"], c) for _, doc, c in containers()]
    services = of_kind("Service")
    assert {doc["metadata"]["name"] for _, doc in services} >= {"quire-broker", "quire-exporter"}
    for _, service in services:
        selector = service["spec"]["selector"]
        matched = [c for labels, c in pods if all(labels.get(k) == v for k, v in selector.items())]
        assert matched, "Service %s selects no pod" % service["metadata"]["name"]
        port_names = {p["name"] for c in matched for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in port_names, "Service %s: no container port %s" % (service["metadata"]["name"], port["targetPort"])
    for _, deployment in of_kind("Deployment"):
        assert deployment["spec"]["selector"]["matchLabels"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_brokers_are_replicated_each_ready_once_it_listens_with_its_exporter_beside_it():
    (_, broker), = [(n, d) for n, d in of_kind("Deployment") if d["metadata"]["name"] == "quire-broker"]
    assert broker["spec"]["replicas"] >= 2
    container, exporter = broker["spec"]["template"]["spec"]["containers"]
    # A broker listens only once its store is open: a TCP probe on its port says it serves.
    assert container["readinessProbe"]["tcpSocket"]["port"] == 5555
    # Each broker publishes its own figures: its exporter subscribes to it alone.
    assert exporter["args"][:3] == ["exporter", "--stats", "tcp://127.0.0.1:5556"]
    env = {e["name"]: e for e in container["env"]}
    assert env["QUIRE_STORE"]["valueFrom"]["secretKeyRef"]["name"] == "quire-store"
    assert "PGPASSWORD" in env, "the password reaches libpq apart from the URI"
    secrets = {d["metadata"]["name"]: d for _, d in of_kind("Secret")}
    assert ":" not in secrets["quire-store"]["stringData"]["uri"].split("@")[0].split("//")[1], "no password in the URI"


def test_every_secret_read_is_defined_or_documented():
    defined = {d["metadata"]["name"] for _, d in of_kind("Secret")}
    deployment_doc = (REPO_ROOT / "docs" / "deployment.md").read_text()
    for _, _, container in containers():
        for e in container.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["name"] in defined or ref["name"] in deployment_doc, "Secret %s is neither defined nor documented" % ref["name"]


def test_keda_scales_the_ocr_workers_on_a_metric_the_exporter_publishes():
    (_, scaled), = of_kind("ScaledObject")
    deployments = {d["metadata"]["name"] for _, d in of_kind("Deployment")}
    assert scaled["spec"]["scaleTargetRef"]["name"] == "quire-ocr" in deployments
    query = scaled["spec"]["triggers"][0]["metadata"]["query"]
    metrics = set(re.findall(r"(quire_[a-z_]+)", query))
    assert metrics == {"quire_queue_depth", "quire_job_queue_depth"}, query
    monitoring = (REPO_ROOT / "docs" / "monitoring.md").read_text()
    renderer = (REPO_ROOT / "Sources" / "QuireStats" / "PrometheusRenderer.swift").read_text()
    for metric in metrics:
        assert "`%s{" % metric in monitoring, "%s is not a metric the exporter documents" % metric
        assert '"%s"' % metric in renderer, "%s is not a metric the exporter renders" % metric
    # Durable jobs wait in the one store every broker counts: taken once, not once per broker.
    assert "max by (service, priority) (quire_job_queue_depth" in query


def test_the_compose_ha_profile_adds_postgresql_and_a_second_broker_on_the_same_settings():
    compose = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert services["postgres"]["profiles"] == ["ha"] and services["broker-b"]["profiles"] == ["ha"]
    assert services["broker-b"]["environment"] == services["broker"]["environment"], "both brokers run with the same settings"
    assert "profiles" not in services["broker"], "the default stack is unchanged"
    assert services["broker"]["environment"]["QUIRE_STORE"] == "${QUIRE_STORE:-}"
    assert (REPO_ROOT / services["postgres"]["build"]["context"] / "Dockerfile").exists()
