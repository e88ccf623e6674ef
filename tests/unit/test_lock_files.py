"""The locks (requirements/dev.txt for make and CI, installed by the uv of requirements/uv.txt;
requirements/runtime.txt for the image) cover pyproject.toml.

Every dependency that pyproject.toml names (runtime and the dev extra) is pinned to one exact version that its
range admits, with at least one hash, so `pip install --require-hashes` installs exactly that. A failure here
means pyproject.toml changed without `make lock`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

from testing.locks import lock_entries

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
RUNTIME_DEPS = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
DEV_DEPS = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]]
BUILD_DEPS = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
# The installer and the build backend are pinned too: `pip install --no-deps --no-build-isolation -e .`.
TOOLS = [canonicalize_name("pip"), canonicalize_name("setuptools")]


class Pin:
    def __init__(self, line: str) -> None:
        words = line.split()
        self.hashes = [w.removeprefix("--hash=") for w in words if w.startswith("--hash=")]
        self.requirement = Requirement(" ".join(w for w in words if not w.startswith("--hash=")))
        self.name = canonicalize_name(self.requirement.name)
        specs = list(self.requirement.specifier)
        self.version = specs[0].version if len(specs) == 1 and specs[0].operator == "==" else None


def read_lock(name: str) -> dict[NormalizedName, Pin]:
    """One Pin per requirement of a pip requirements file (continuation lines joined, comments dropped)."""
    text = (ROOT / "requirements" / name).read_text(encoding="utf-8")
    pins: dict[NormalizedName, Pin] = {}
    for entry in lock_entries(text):
        pin = Pin(entry)
        assert pin.name not in pins, f"{name}: {pin.name} appears twice"
        pins[pin.name] = pin
    return pins


DEV_LOCK = read_lock("dev.txt")
RUNTIME_LOCK = read_lock("runtime.txt")


@pytest.mark.parametrize("lock", ["dev.txt", "runtime.txt", "uv.txt"])
def test_every_entry_is_one_exact_version_with_sha256_hashes(lock: str) -> None:
    for pin in read_lock(lock).values():
        assert pin.version is not None, f"{lock}: {pin.requirement} is not pinned with =="
        assert pin.hashes, f"{lock}: {pin.name} has no hash"
        assert all(h.startswith("sha256:") and len(h) == len("sha256:") + 64 for h in pin.hashes), pin.name


def assert_pinned_within_range(lock: dict[NormalizedName, Pin], req: Requirement, where: str) -> None:
    name = canonicalize_name(req.name)
    assert name in lock, f"{req} from pyproject.toml is missing from {where}: run `make lock`"
    pin = lock[name]
    assert pin.version is not None and pin.hashes
    assert req.specifier.contains(pin.version, prereleases=True), (
        f"{where} pins {name}=={pin.version}, outside pyproject.toml's {req}: run `make lock`"
    )
    # Installed everywhere, unless pyproject.toml itself limits it (uvloop: not on Windows).
    assert str(pin.requirement.marker or "") == str(req.marker or ""), (
        f"{where}: {name} is installed only where {pin.requirement.marker}; "
        f"pyproject.toml says {req.marker or 'everywhere'}"
    )


@pytest.mark.parametrize("req", RUNTIME_DEPS + DEV_DEPS, ids=str)
def test_dev_lock_pins_every_runtime_and_dev_dependency(req: Requirement) -> None:
    assert_pinned_within_range(DEV_LOCK, req, "requirements/dev.txt")


@pytest.mark.parametrize("req", RUNTIME_DEPS, ids=str)
def test_runtime_lock_pins_every_runtime_dependency(req: Requirement) -> None:
    assert_pinned_within_range(RUNTIME_LOCK, req, "requirements/runtime.txt")


def test_installer_and_build_backend_are_pinned_and_satisfy_the_build_system() -> None:
    for lock in (DEV_LOCK, RUNTIME_LOCK):
        for tool in TOOLS:
            assert tool in lock and lock[tool].version is not None
        for req in BUILD_DEPS:
            version = lock[canonicalize_name(req.name)].version
            assert version is not None and req.specifier.contains(version)


def test_image_gets_the_versions_the_tests_ran_with() -> None:
    """The runtime lock is the dev lock without the dev-only packages: same versions, same hashes."""
    for name, pin in RUNTIME_LOCK.items():
        assert name in DEV_LOCK, f"requirements/runtime.txt has {name}, requirements/dev.txt does not"
        assert (pin.version, sorted(pin.hashes)) == (DEV_LOCK[name].version, sorted(DEV_LOCK[name].hashes)), name
    dev_only = {canonicalize_name(r.name) for r in DEV_DEPS} - {canonicalize_name(r.name) for r in RUNTIME_DEPS}
    assert not dev_only & RUNTIME_LOCK.keys(), "the image would install test tools"


def test_the_installer_lock_is_the_dev_locks_uv_alone() -> None:
    """pip installs requirements/uv.txt first, then uv the dev lock: the same uv, the same hashes."""
    installer = read_lock("uv.txt")
    assert list(installer) == [canonicalize_name("uv")]
    pin = installer[canonicalize_name("uv")]
    assert (pin.version, sorted(pin.hashes)) == (DEV_LOCK[pin.name].version, sorted(DEV_LOCK[pin.name].hashes))


def test_optional_extras_outside_the_default_install_are_not_locked() -> None:
    for extra in ("deploy", "mic"):
        for req in PYPROJECT["project"]["optional-dependencies"][extra]:
            assert canonicalize_name(Requirement(req).name) not in DEV_LOCK, f"[{extra}] {req} is in the lock"


def test_a_version_outside_the_range_is_reported() -> None:
    pin = Pin("numpy==1.0 --hash=sha256:" + "0" * 64)
    with pytest.raises(AssertionError, match="outside pyproject"):
        assert_pinned_within_range({pin.name: pin}, Requirement("numpy>=1.26"), "a lock")
