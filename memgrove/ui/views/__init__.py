"""What each page shows, from a ``Memory``: plain functions returning plain data for the
templates (no HTTP in them). Paged: a page shows at most ``PAGE`` rows and says how to get more."""

PAGE = 100
