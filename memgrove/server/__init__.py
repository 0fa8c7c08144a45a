"""``memgrove serve``: one long-lived process serving memories over HTTP.

    registry.py   .memgrove/server.json and the token file; ``find_server`` for clients
    settings.py   the ``[server]`` settings (port, body limit, timeouts, connection limit, projects)
    served.py     the projects a server serves, each with its own token; which one a request reaches
    guard.py      ASGI middleware: Host/Origin checks, bearer token, body size limit and deadline
    connections.py  uvicorn's HTTP protocol with a deadline for headers and a connection limit
    projects.py   one Memory per served project (the least recently used closed beyond a bound),
                  one writer at a time per project, blocking calls in threads
    owner.py      the owner's route adding a project to a running server
    errors.py     exceptions to ``{"error": {"code", "message"}}`` with fitting HTTP statuses
    routes.py     the REST API (adapts ``Memory`` methods)
    langserve_routes.py  LangServe routes for the query, curate and agent graphs
    app.py        the app factory, and ``langgraph_app`` for ``langgraph.json``'s ``http.app``
    run.py        uvicorn, registration, signals

It may use ``Memory``, the graphs it serves, MCP, the store adapter, the remote client's wire
(a replica forwards its writes to its primary) and the tree, with FastAPI, uvicorn and LangServe;
the CLI starts it, and below it only clients import ``registry`` (to find a running server). This
package imports nothing itself: ``memgrove.server.registry`` must stay cheap for clients.
"""
