"""The web page at ``/ui/`` of ``memgrove serve``: look at the memory, search and ask it, review
what waits, undo what went wrong.

    sessions.py   signed-in browsers (session id, projects, CSRF token), one-time sign-in codes
    auth.py       the sign-in page, sign-out, the dependency every page takes, the CSRF check
    render.py     Jinja2 (autoescape on), the security headers with a strict CSP
    markdown.py   untrusted markdown to inert HTML (raw HTML off, links checked, in-tree links kept in)
    views/        what each page shows, from a ``Memory``: plain functions, no HTTP
    routes_pages.py    Tree, a folder's children, Entry, Search and ask, Status, the static files
    routes_changes.py  Journal and undo, Review (approve, reject), dream (run, undo)
    failures.py   a failure as a page (or the sign-in page); mount.py adds it all to the app
    templates/, static/  the pages and the one small script and style sheet: nothing from elsewhere

It may use ``Memory`` and the tree (read through the server's ``Projects``: threads, leases,
one writer per project), the server's ``served``, ``errors`` and the guard's rules, with
FastAPI, Jinja2 and markdown-it-py. Every change is the same ``Memory`` call the CLI and the
REST API make, journaled with the actor ``web``. Only the server's app imports it.
"""
