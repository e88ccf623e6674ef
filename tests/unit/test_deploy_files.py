"""The deployment files in ``deploy/`` agree with the server and with each other: they parse, every probe asks
``/healthz`` on the port the server listens on, the grace periods cover the drain, the Service and the
autoscaler point at the Deployment, and every ``AGENT_*`` setting they name exists and takes its value."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.config import Settings

ROOT = Path(__file__).parents[2]
K8S = ROOT / "deploy" / "kubernetes"
COMPOSE = ROOT / "deploy" / "compose.yaml"
SETTING = re.compile(r"\bAGENT_[A-Z0-9_]+\b")
REDIS = "voice-agent-redis"


def documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            assert isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind"), path
            found.append(doc)
    return found


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    """The document of ``kind`` named ``name``; without a name, the agent's own (not the Redis of redis.yaml)."""
    (doc,) = [
        d
        for d in documents()
        if d["kind"] == kind and (d["metadata"]["name"] == name if name else d["metadata"]["name"] != REDIS)
    ]
    return doc


def container() -> dict[str, Any]:
    (agent,) = one("Deployment")["spec"]["template"]["spec"]["containers"]
    assert isinstance(agent, dict)
    return agent


def env(agent: dict[str, Any]) -> dict[str, Any]:
    """The container's ``env`` by name: a plain value, or the ``valueFrom`` mapping."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in agent.get("env", [])}


def deployed_settings(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> Settings:
    for name in [n for n in os.environ if n.startswith("AGENT_")]:
        monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return Settings()


def k8s_settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    values = {k: str(v) for k, v in one("ConfigMap")["data"].items()}
    for name, value in env(container()).items():
        values[name] = value if isinstance(value, str) else "x" * 48  # a secret: any valid one
    return deployed_settings(monkeypatch, values)


def seconds(duration: str) -> float:
    match = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", duration)
    assert match and duration, duration
    return int(match[1] or 0) * 60 + int(match[2] or 0)


def test_every_file_parses_and_kustomize_lists_them_all() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    kinds = sorted(d["kind"] for d in documents())
    assert kinds == [
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Service",
        "Service",
        "ServiceAccount",
        "StatefulSet",
    ]
    assert [i["name"] for i in kustomization["images"]] == [container()["image"]]
    assert isinstance(yaml.safe_load(COMPOSE.read_text()), dict)


def test_every_setting_named_exists() -> None:
    """Every ``AGENT_*`` name in deploy/, comments included, is a setting (a typo would be ignored silently)."""
    named = set()
    for path in [COMPOSE, *K8S.glob("*.yaml")]:
        named |= set(SETTING.findall(path.read_text()))
    assert named
    for name in sorted(named):
        section, nested, field = name.removeprefix("AGENT_").lower().partition("__")
        if not nested:
            assert section in Settings.model_fields, name
            continue
        model: Any = Settings.model_fields[section].annotation if section in Settings.model_fields else None
        assert model is not None and field in model.model_fields, f"{name} is not a setting"


def test_probes_ask_healthz_on_the_port_the_server_listens_on(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = container()
    (port,) = agent["ports"]
    settings = k8s_settings(monkeypatch)
    assert port["containerPort"] == settings.server.port and settings.server.host == "0.0.0.0"
    for probe in ("startupProbe", "readinessProbe"):
        check = agent[probe]["httpGet"]
        assert check["path"] == "/healthz" and check["port"] in (port["name"], port["containerPort"]), probe
    # Liveness accepts a 503 (full, draining) from /healthz: an httpGet probe would restart a busy pod.
    live = agent["livenessProbe"]
    assert "httpGet" not in live
    assert f"http://127.0.0.1:{port['containerPort']}/healthz" in " ".join(live["exec"]["command"])
    assert "exc.code != 503" in live["exec"]["command"][-1]


def test_the_grace_period_covers_prestop_and_the_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    pod = one("Deployment")["spec"]["template"]["spec"]
    command = container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    pre_stop = float(command[1])
    drain = k8s_settings(monkeypatch).server.drain_s
    assert "AGENT_SERVER__DRAIN_S" in env(container())  # set beside the grace period, not left to the default
    assert drain > 0 and pod["terminationGracePeriodSeconds"] >= pre_stop + drain


def test_the_secret_comes_from_a_secret_and_the_pod_runs_unprivileged() -> None:
    agent = container()
    values = env(agent)
    assert values["AGENT_AUTH__SECRET"]["secretKeyRef"]["name"] == "voice-agent-secrets"
    assert "AGENT_AUTH__SECRET" not in one("ConfigMap")["data"]
    pod = one("Deployment")["spec"]["template"]["spec"]
    uid = re.search(r"useradd .*--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert uid and pod["securityContext"]["runAsUser"] == int(uid[1])  # the image's own user
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False
    context = agent["securityContext"]
    assert context["allowPrivilegeEscalation"] is False and context["capabilities"]["drop"] == ["ALL"]
    assert context["readOnlyRootFilesystem"] is True
    home = re.search(r"useradd .*--create-home .*\b(\w+) \\", (ROOT / "Dockerfile").read_text())
    assert home  # onnxruntime writes under ~/.cache: writable scratch there and in /tmp
    assert {"/tmp", f"/home/{home[1]}/.cache"} <= {m["mountPath"] for m in agent["volumeMounts"]}


def test_resources_and_threads_are_sized_for_two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    resources = container()["resources"]
    assert resources["requests"]["cpu"] == "2" and "memory" in resources["limits"]
    settings = k8s_settings(monkeypatch)
    assert settings.asr.cpu_threads <= 2 and settings.tts.cpu_threads <= 2


def test_replicas_share_the_s3_voice_store_and_speak_through_sagemaker(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = k8s_settings(monkeypatch)
    assert settings.voices.backend == "s3" and settings.voices.s3_bucket
    assert settings.tts.backend == "sagemaker" and settings.tts.endpoint_name
    assert settings.auth.secret is not None


def test_the_service_and_the_autoscaler_point_at_the_deployment() -> None:
    deployment = one("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = one("Service")["spec"]
    assert service["selector"].items() <= labels.items()
    (port,) = service["ports"]
    assert port["targetPort"] in [p["name"] for p in container()["ports"]]
    assert service["sessionAffinity"] == "ClientIP" and service["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"]
    hpa = one("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", "voice-agent")
    assert deployment["metadata"]["name"] == "voice-agent"
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    pdb = one("PodDisruptionBudget")["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()


def test_compose_keeps_its_security_and_covers_the_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    agent = compose["services"]["agent"]
    assert (COMPOSE.parent / agent["build"]["context"] / "Dockerfile").resolve() == ROOT / "Dockerfile"
    assert agent["ports"] == ["127.0.0.1:8765:8765"]  # the host's loopback only
    assert agent["cap_drop"] == ["ALL"] and "no-new-privileges:true" in agent["security_opt"]
    environment = agent["environment"]
    assert environment["AGENT_AUTH__SECRET"].startswith("${AGENT_AUTH__SECRET:?")  # refuses to start without it
    values = {k: v for k, v in environment.items() if "${" not in v}
    drain = deployed_settings(monkeypatch, values).server.drain_s
    assert seconds(agent["stop_grace_period"]) >= drain > 0


def test_the_replicas_count_their_limits_in_one_redis_that_keeps_only_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    url = k8s_settings(monkeypatch).limits.redis_url
    assert url is not None and url.get_secret_value() == f"redis://{REDIS}:6379/0"
    service, statefulset = one("Service", REDIS)["spec"], one("StatefulSet", REDIS)["spec"]
    pod = statefulset["template"]
    assert service["selector"].items() <= pod["metadata"]["labels"].items()
    assert not service["selector"].items() <= one("Deployment")["spec"]["template"]["metadata"]["labels"].items()
    assert statefulset["replicas"] == 1 and statefulset["serviceName"] == REDIS
    (redis,) = pod["spec"]["containers"]
    assert [p["containerPort"] for p in redis["ports"]] == [6379]
    args = redis["args"]
    assert args[args.index("--save") + 1] == "" and args[args.index("--appendonly") + 1] == "no"  # nothing on disk
    assert pod["spec"]["securityContext"]["runAsNonRoot"] and not redis["securityContext"]["allowPrivilegeEscalation"]
    compose = yaml.safe_load(COMPOSE.read_text())["services"]
    assert compose["agent"]["environment"]["AGENT_LIMITS__REDIS_URL"] == "redis://redis:6379/0"
    command = compose["redis"]["command"]
    assert command[command.index("--save") + 1] == "" and "ports" not in compose["redis"]  # not published
