"""The web layer extends uvicorn where no public hook does the job (cofe/monitor/web/_asgi.py,
"Public hooks"): each method it overrides must still be one uvicorn calls. A method uvicorn
renamed would leave the override never called -- the deadline or the connection cap gone
with no error -- so this fails naming it, before the hostile-connection tests time out."""

from __future__ import annotations

import inspect

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from cofe.monitor.web._asgi import AsgiServer, DeadlineProtocol


def _overrides(cls: type) -> list[str]:
    """The public methods ``cls`` defines itself (``trust`` is cofe's own, called by Guard)."""
    return [
        name
        for name, value in vars(cls).items()
        if callable(value) and not name.startswith("_") and name != "trust"
    ]


def test_every_method_the_deadline_protocol_overrides_is_still_uvicorns() -> None:
    overridden = _overrides(DeadlineProtocol)
    assert {"connection_made", "data_received", "on_response_complete"} <= set(overridden)
    gone = [name for name in overridden if not hasattr(H11Protocol, name)]
    assert gone == [], f"uvicorn {uvicorn.__version__}'s H11Protocol no longer has {gone}"
    # the attributes it reads, set by uvicorn's own __init__ and connection_made
    source = inspect.getsource(H11Protocol)
    for attribute in ("self.conn", "self.loop", "self.transport", "self.app_state"):
        assert f"{attribute} =" in source, f"H11Protocol no longer sets {attribute}"


def test_every_method_the_server_overrides_is_still_uvicorns() -> None:
    overridden = [name for name in ("startup", "shutdown") if name in vars(AsgiServer)]
    assert overridden == ["startup", "shutdown"]
    for name in overridden:
        assert inspect.iscoroutinefunction(getattr(uvicorn.Server, name, None)), name
        ours = inspect.signature(getattr(AsgiServer, name))
        theirs = inspect.signature(getattr(uvicorn.Server, name))
        assert list(ours.parameters) == list(theirs.parameters), name
