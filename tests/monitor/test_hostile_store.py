"""Store locations and permissions (issue 45, old probes t35, t12, t22)."""

from __future__ import annotations

import socket

import pytest

from cofe.cli import main
from cofe.monitor import MonitorStore
from cofe.monitor.store import StoreError


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("password", ["p@ss", "a:b/c@d", "s3cr:et@@/x", "x@127.0.0.1", "p%40ss"])
def test_a_password_holding_at_is_not_taken_for_the_host(password, capsys):
    """t35: the driver read ``p@ss@127.0.0.1`` as the host ``ss@127.0.0.1`` and printed it."""
    url = f"postgresql://cofe:{password}@127.0.0.1:{_refused_port()}/monitor"
    with pytest.raises(StoreError) as raised:
        MonitorStore(url)
    message = str(raised.value)
    assert "resolve host" not in message and "127.0.0.1" in message
    tails = {password, *password.split("@")[1:], *password.split(":")[1:]} - {"127.0.0.1"}
    assert not any(t in message for t in tails if len(t) >= 2), message
    assert main(["monitor", "status", "--store", url]) != 0
    captured = capsys.readouterr()
    assert not any(t in captured.err + captured.out for t in tails if len(t) >= 2)


def test_a_password_holding_at_connects(postgres_url):
    """The server trusts loopback: any password connects once the host is read right."""
    user_at = postgres_url.index("://") + 3
    rest = postgres_url[user_at:]
    user, _, host = rest.partition("@")
    url = f"postgresql://{user.partition(':')[0]}:p@ss/w:rd@{host}"
    with MonitorStore(url, window_seconds=60) as store:
        assert store.engine == "postgresql"
