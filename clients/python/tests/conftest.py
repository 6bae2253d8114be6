"""Fixtures: the shared vectors, and clients for the test servers that
clients/testenv.py starts (TICKETGATE_TEST_REDIS, TICKETGATE_TEST_CLUSTER).
Integration tests fail loudly when those are missing; run them through
clients/python/test.sh, or `pytest -m "not integration"` for unit tests only."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import pytest

CLIENTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CLIENTS))  # testenv (move_slot, Connection)


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: needs the servers of clients/testenv.py")


@pytest.fixture(scope="session")
def vectors() -> list[dict]:
    return json.loads((CLIENTS / "vectors.json").read_text())["vectors"]


def required_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the integration tests through clients/testenv.py")
    return value


@pytest.fixture
def redis_url() -> str:
    return required_env("TICKETGATE_TEST_REDIS")


@pytest.fixture
def cluster_nodes() -> list[tuple[str, int]]:
    nodes = required_env("TICKETGATE_TEST_CLUSTER").split(",")
    return [(h, int(p)) for h, p in (n.rsplit(":", 1) for n in nodes)]


@pytest.fixture
def event() -> str:
    """A fresh event id per test (the servers are shared by the whole run)."""
    return "py-" + uuid.uuid4().hex[:12]
