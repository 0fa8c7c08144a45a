"""``memgrove serve``: one long-lived process serving memories over HTTP.

    registry.py   .memgrove/server.json and the token file; ``find_server`` for clients
    settings.py   the ``[server]`` settings (port, body limit, timeout, allowed origins)
    guard.py      ASGI middleware: Host/Origin checks, bearer token, body size limit
    projects.py   one Memory per project, one writer at a time per project, blocking calls in threads
    errors.py     exceptions to ``{"error": {"code", "message"}}`` with fitting HTTP statuses
    routes.py     the REST API (adapts ``Memory`` methods)
    langserve_routes.py  LangServe routes for the query, curate and agent graphs
    app.py        the app factory, and ``langgraph_app`` for ``langgraph.json``'s ``http.app``
    run.py        uvicorn, registration, signals

This package imports nothing itself: ``memgrove.server.registry`` must stay cheap for clients.
"""
