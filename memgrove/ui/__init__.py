"""The web page at /ui/: browse, search, review and undo a memory in a browser."""
