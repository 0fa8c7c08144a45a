"""memgrove over the Model Context Protocol: ``create_server(memory_for)`` (``server.py``),
run over stdio by ``memgrove mcp`` (``stdio.py``) and over streamable HTTP by ``memgrove serve``."""

from .server import PROJECT_HEADER, create_server

__all__ = ["PROJECT_HEADER", "create_server"]
