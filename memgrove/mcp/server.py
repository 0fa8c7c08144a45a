"""memgrove's MCP server: the ``memgrove_*`` tools and Anthropic's ``memory`` tool.

``create_server(memory_for)`` builds one FastMCP server for every transport: ``memgrove mcp``
runs it over stdio (``stdio.py``) and ``memgrove serve`` mounts its streamable-HTTP app.
The tools only adapt ``calls.py`` and ``memory_files.py``: they pick the project, run the
blocking work in a worker thread, and turn a ``MemgroveError`` (a mistake the model can fix)
into a tool result with ``isError`` rather than a protocol error.
"""

from __future__ import annotations

import json
from typing import Any, Callable, ContextManager, Literal

from pydantic import ValidationError
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations

from memgrove.tree.base.errors import MemgroveError, error_body

from . import calls
from .arguments import canonical
from .inflight import InFlight
from .memory_files import MemoryFiles

# (the project a tool names or None, the HTTP request carrying the call or None) -> a context
# manager giving that project's memory for the call (the server checks the request's token)
MemoryFor = Callable[[str | None, Any], ContextManager[Any]]
PROJECT_HEADER = "x-memgrove-project"

INSTRUCTIONS = """memgrove is this project's long-term memory: a tree of markdown entries.
Before answering from what the project knows, call memgrove_query (or memgrove_search and
memgrove_read); after learning something worth keeping, write it with memgrove_curate (UPSERT
preferred, every operation with a reason) or with the file-style `memory` tool under /memories.
Every write is journaled: memgrove_history lists it and memgrove_undo reverts it."""

DEFAULT_CALL_TIMEOUT = 120.0   # seconds a call's write may run before it is cancelled (as request_timeout)
_PROJECT_DOC = "Project folder (or name the server knows); omit for the server's default project."


def _read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                           openWorldHint=False)


def _writing(title: str, *, destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(title=title, readOnlyHint=False, destructiveHint=destructive, idempotentHint=False,
                           openWorldHint=False)


class MemgroveMCP(FastMCP):
    """FastMCP that accepts the argument names models commonly guess (``arguments.py``)."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            arguments = canonical(arguments, tool.parameters.get("properties", {}))
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            # pydantic's report is a dozen lines with a URL; the model needs which argument and why
            if isinstance(exc.__cause__, ValidationError):
                return _bad_arguments(name, exc.__cause__)
            raise


def _bad_arguments(tool: str, exc: ValidationError) -> CallToolResult:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
    message = f"invalid arguments for {tool}: {problems}"
    return CallToolResult(content=[TextContent(type="text", text=f"Error: {message}")],
                          structuredContent={"error": {"code": "invalid_arguments", "message": message}},
                          isError=True)


def _request(ctx: Context | None) -> Any:
    """The HTTP request that carried the call (None over stdio, or outside a session)."""
    try:
        return ctx.request_context.request if ctx is not None else None
    except ValueError:          # no request in progress (a call made outside a session)
        return None


def _project(request: Any, project: str | None) -> str | None:
    if project:
        return project
    headers = getattr(request, "headers", None)
    return headers.get(PROJECT_HEADER) if headers is not None else None


def _error(exc: MemgroveError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"Error: {exc}")],
                          structuredContent=error_body(exc), isError=True)


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


def create_server(memory_for: MemoryFor, *, name: str = "memgrove", streamable_http_path: str = "/mcp",
                  inflight: InFlight | None = None, **settings: Any) -> FastMCP:
    """The MCP server over ``memory_for(project, request)``: a context manager giving the ``Memory`` of
    a project (the default for None) for one call; ``request`` is the HTTP request that carried it
    (None over stdio), whose token the server checks against the project.

    A tool names its project by its ``project`` argument or, over HTTP, the ``X-Memgrove-Project``
    header. ``streamable_http_path`` is where ``streamable_http_app()`` answers (``"/"`` when the
    app is mounted under ``/mcp``); the host app must run ``server.session_manager.run()`` in its
    lifespan when it mounts that app. ``inflight`` runs the tools' work (default: ``InFlight(120)``, a
    write cancelled before its commit point after 120 s or when its call is cancelled). Other
    ``settings`` go to ``FastMCP``.
    """
    inflight = inflight or InFlight(DEFAULT_CALL_TIMEOUT)
    settings.setdefault("log_level", "WARNING")   # FastMCP logs every request at INFO
    server = MemgroveMCP(name, instructions=INSTRUCTIONS, streamable_http_path=streamable_http_path, **settings)

    async def run(ctx: Context | None, project: str | None, fn: Callable[[Any], Any],
                  render: Callable[[Any], str] = _json) -> CallToolResult:
        request = _request(ctx)
        chosen = _project(request, project)

        def work() -> Any:
            with memory_for(chosen, request) as mem:
                return fn(mem)

        try:
            data = await inflight.run(work)
        except MemgroveError as exc:
            return _error(exc)
        content: list[ContentBlock] = [TextContent(type="text", text=render(data))]
        structured = data if isinstance(data, dict) else None
        return CallToolResult(content=content, structuredContent=structured, isError=False)

    @server.tool(annotations=_read_only("Ask the memory"), structured_output=False)
    async def memgrove_query(query: str, project: str | None = None, ctx: Context = None) -> CallToolResult:
        """Answer a question from the project's memory: cached answers, then full-text search (BM25), then a
        model only if one is configured. Returns the answer with its sources and the tier that answered."""
        return await run(ctx, project, lambda m: calls.query(m, query), _answer_text)

    @server.tool(annotations=_read_only("Search the memory"), structured_output=False)
    async def memgrove_search(query: str, limit: int = 10, include_archived: bool = False, project: str | None = None,
                              ctx: Context = None) -> CallToolResult:
        """Full-text search (BM25F, no model): entry paths, titles, scores and excerpts, best first. A fact a
        newer entry replaced is labelled "(until <date>; since then: <newer>)"; include_archived searches the
        archived entries too (marked archived)."""
        return await run(ctx, project, lambda m: calls.search(m, query, limit, include_archived))

    @server.tool(annotations=_read_only("Read an entry"), structured_output=False)
    async def memgrove_read(path: str, project: str | None = None, ctx: Context = None) -> CallToolResult:
        """Read one entry in full ('domain/topic/name.md' as search or list gave it), with its links and
        backlinks."""
        return await run(ctx, project, lambda m: calls.read(m, path), _entry_text)

    @server.tool(annotations=_read_only("List a folder"), structured_output=False)
    async def memgrove_list(folder: str = "", project: str | None = None, ctx: Context = None) -> CallToolResult:
        """List a folder of the memory ('' for the top, 'auth' or 'auth/jwt'): its overview, subfolders
        with entry counts, and entries with titles."""
        return await run(ctx, project, lambda m: calls.list_folder(m, folder))

    @server.tool(annotations=_writing("Write to the memory", destructive=True), structured_output=False)
    async def memgrove_curate(operations: list[dict[str, Any]], project: str | None = None,
                              ctx: Context = None) -> CallToolResult:
        """Apply curate operations, all or nothing. Each is {op, path, reason, ...}: op ADD (new entry),
        UPDATE (change one), UPSERT (add or update; preferred), MERGE (fold 'path' into 'merge_into'),
        DELETE (an entry, or a folder and everything in it), SUPERSEDE (close the fact at 'path': the entry
        'by' replaces it, optional 'since' date; send it with the UPSERT of the new fact), ARCHIVE (move out of
        search) or RESTORE (bring an archived entry back); path 'domain/topic[/subtopic]/name.md' in
        snake_case; fields title, summary, content (markdown), tags, keywords, related, sources. An ADD
        onto an existing entry writes nothing and returns that entry's text. Search first; every write
        can be undone (memgrove_undo)."""
        return await run(ctx, project, lambda m: calls.curate(m, operations))

    @server.tool(annotations=_read_only("Show the journal"), structured_output=False)
    async def memgrove_history(limit: int = 20, path: str | None = None, project: str | None = None,
                               ctx: Context = None) -> CallToolResult:
        """The journal of writes, newest first: id, time, operation, path, reason, actor and files touched;
        'path' keeps those touching one entry or folder."""
        return await run(ctx, project, lambda m: calls.history(m, limit, path))

    @server.tool(annotations=_writing("Undo a write", destructive=True), structured_output=False)
    async def memgrove_undo(op_id: str, force: bool = False, project: str | None = None,
                            ctx: Context = None) -> CallToolResult:
        """Undo one journaled operation (id from memgrove_history). Refused, saying why, if its files changed
        since, unless force; the undo is journaled too, so it can itself be undone."""
        return await run(ctx, project, lambda m: calls.undo(m, op_id, force))

    @server.tool(annotations=_writing("Clean the memory", destructive=True), structured_output=False)
    async def memgrove_dream(apply: bool = False, undo: str | None = None, force: bool = False,
                             with_approved: bool = False, project: str | None = None,
                             ctx: Context = None) -> CallToolResult:
        """Find what needs cleaning: exact and near duplicates, superseded facts, missing links, archive
        candidates. By default nothing changes: each candidate comes with its kind, paths, reason,
        confidence and the operations that would carry it out; judge each yourself and apply the ones
        you agree with through memgrove_curate (or leave them). apply=true runs a dream instead (exact
        duplicates and links applied, the rest queued for memgrove_review); undo=<run id> or "last"
        reverts a run (the answer names it: id, start, operations), with_approved=true also what was
        approved from its proposals in review."""
        return await run(ctx, project, lambda m: calls.dream(m, apply, undo, force, with_approved))

    @server.tool(annotations=_writing("Review queued changes", destructive=True), structured_output=False)
    async def memgrove_review(action: Literal["list", "show", "approve", "reject"] = "list", id: str | None = None,
                              all: bool = False, project: str | None = None, ctx: Context = None) -> CallToolResult:
        """The review queue of changes dream or a model proposed: list, show one (id), approve or reject
        one (id) or all (all=true). Approving re-checks that the files are as when proposed (a conflict
        otherwise) and applies it as one journaled batch; a rejected change is not proposed again."""
        return await run(ctx, project, lambda m: calls.review(m, action, id, all))

    @server.tool(annotations=_writing("Memory files", destructive=True), structured_output=False)
    async def memory(command: Literal["view", "create", "str_replace", "insert", "delete", "rename"],
                     path: str | None = None, file_text: str | None = None, old_str: str | None = None,
                     new_str: str | None = None, insert_line: int | None = None, insert_text: str | None = None,
                     old_path: str | None = None, new_path: str | None = None,
                     view_range: list[int] | None = None, project: str | None = None,
                     ctx: Context = None) -> CallToolResult:
        """Anthropic's memory tool over this memory: markdown files under /memories, at
        /memories/<domain>/<topic>[/<subtopic>]/<name>.md (lower-case snake_case names).
        view (a directory lists it two levels deep; a file shows numbered lines, view_range [start, end]),
        create (path, file_text; refuses an existing file), str_replace (old_str must occur exactly once),
        insert (insert_text after line insert_line, 0 = top), delete (a file or directory),
        rename (old_path, new_path). Every write is journaled."""
        given = {"path": path, "file_text": file_text, "old_str": old_str, "new_str": new_str,
                 "insert_line": insert_line, "insert_text": insert_text, "old_path": old_path,
                 "new_path": new_path, "view_range": view_range}
        args = {k: v for k, v in given.items() if v is not None}
        return await run(ctx, project, lambda m: MemoryFiles(m).run(command, args), str)

    return server


def _answer_text(a: dict[str, Any]) -> str:
    how = ", cached" if a.get("cached") else ""
    llm = ", LLM" if a.get("llm") else ""
    tail = f"\n\n[tier {a.get('tier')}{how}{llm} · top score {a.get('top_score', 0):.3f}]"
    if a.get("error"):
        tail += f"\n[LLM error: {a['error']}]"
    return f"{a.get('text', '')}{tail}"


def _entry_text(d: dict[str, Any]) -> str:
    out = d["text"].rstrip("\n")
    if d.get("links"):
        out += "\n\nLinks: " + ", ".join(d["links"])
    if d.get("backlinks"):
        out += "\nBacklinks: " + ", ".join(d["backlinks"])
    return out
