"""The web layer: the ASGI serving both servers share (bounds, Host and token checks) and
the read-only dashboard's pages and templates."""
