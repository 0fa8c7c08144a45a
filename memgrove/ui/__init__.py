"""The web page at ``/ui/`` of ``memgrove serve``: look at the memory, search and ask it, review
what waits, undo what went wrong.

Server-rendered (Jinja2, autoescaped) with one small script of ours for partial updates; no
asset from anywhere but this package. ``views/`` turns a ``Memory`` into what a page shows
(plain functions), ``routes_*.py`` adapt them to HTTP and hold no logic, ``sessions.py`` and
``auth.py`` are the sign-in (the project's token, then an HttpOnly SameSite=Strict cookie)
and the CSRF check on every change, ``markdown.py`` renders untrusted bodies inert.
"""
