"""The adapters' tests run without a network: any connection attempt fails the test."""

import socket

import pytest


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Refuse every outgoing connection (a framework fetching data would fail loudly)."""

    def refuse(self, address, *args, **kwargs):
        if self.family == socket.AF_UNIX:
            return original(self, address, *args, **kwargs)
        raise OSError(f"network access during an integration test: {address!r}")

    original = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
