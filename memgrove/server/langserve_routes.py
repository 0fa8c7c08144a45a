"""LangServe routes for the ``query``, ``curate`` and ``agent`` graphs, on an ``APIRouter``.

``/query/invoke``, ``/query/batch``, ``/query/stream``, ``/query/stream_events``,
``/query/input_schema``, ``/query/playground/`` and the same under ``/curate`` and ``/agent``.
Each route serves a ``ProjectGraph``: the graph of the project the request names
(``X-Memgrove-Project`` or ``?project=``; default: its token's), built once per project and
checked like every route (``ServedProjects.choose``). LangServe sees an empty
config schema for LangGraph 1.x graphs and drops ``configurable``, so
``per_req_config_modifier`` puts back the two keys that matter: the project and the
``thread_id`` (from the body's ``config.configurable.thread_id`` or an ``X-Thread-Id``
header; the agent keeps threads in ``.memgrove/threads.db``; a run without one gets a
fresh thread).

On an ``APIRouter`` rather than a ``FastAPI()`` app so the same routes mount beside the
LangGraph API in ``langgraph.json``'s ``http.app``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, AsyncIterator, Iterator

from fastapi import APIRouter, Request
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langserve import add_routes

from .projects import PROJECT_HEADER, Projects
from .served import Served, caller_of

GRAPHS = ("query", "curate", "agent")
PROJECT_KEY = "memgrove_project"


class ProjectGraph(Runnable):
    """One of memgrove's graphs, for the project named in the run's config."""

    def __init__(self, name: str, projects: Projects, template: Any):
        self.name = name
        self.projects = projects
        self.template = template          # the default project's graph: its schemas are every project's

    @property
    def InputType(self) -> Any:  # noqa: N802 - LangChain's name
        return self.template.InputType

    @property
    def OutputType(self) -> Any:  # noqa: N802
        return self.template.OutputType

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        return self.template.get_input_schema(config)

    def get_output_schema(self, config: RunnableConfig | None = None) -> Any:
        return self.template.get_output_schema(config)

    def _served(self, config: RunnableConfig | None) -> tuple[Served | None, RunnableConfig]:
        config = ensure_config(config)
        configurable = dict(config.get("configurable") or {})
        served = configurable.pop(PROJECT_KEY, None)
        if served is not None and not isinstance(served, Served):     # only per_request_config sets it
            raise TypeError(f"{PROJECT_KEY} must be a served project")
        config["configurable"] = configurable
        return served, config

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        served, config = self._served(config)
        with self.projects.lease(served) as mem:
            return self.projects.graph(mem, self.name).invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        served, config = self._served(config)
        async with self.projects.alease(served) as mem:
            graph = await self.projects.agraph(mem, self.name)
            if self.name == "curate":          # queued with the project's other writes
                async with self.projects.writer(mem):
                    return await graph.ainvoke(input, config, **kwargs)
            return await graph.ainvoke(input, config, **kwargs)

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        served, config = self._served(config)
        with self.projects.lease(served) as mem:
            yield from self.projects.graph(mem, self.name).stream(input, config, **kwargs)

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        served, config = self._served(config)
        async with self.projects.alease(served) as mem:
            graph = await self.projects.agraph(mem, self.name)
            if self.name == "curate":
                async with self.projects.writer(mem):
                    async for chunk in graph.astream(input, config, **kwargs):
                        yield chunk
                return
            async for chunk in graph.astream(input, config, **kwargs):
                yield chunk


async def _body_of(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"{}")
    except ValueError:
        return None


async def _thread_of(request: Request) -> str | None:
    header = request.headers.get("x-thread-id")
    if header:
        return header
    body = await _body_of(request)
    configurable = ((body.get("config") or {}).get("configurable") or {}) if isinstance(body, dict) else {}
    thread = configurable.get("thread_id") if isinstance(configurable, dict) else None
    return str(thread) if thread is not None else None


async def check_questions(request: Request) -> None:
    """``QuestionTooLong`` (413) for a ``/query`` run whose question is past the bound, before the
    run starts: the graph refuses it too, but ``/query/stream`` has sent its 200 by then."""
    from memgrove.graphs.query import question_text
    from memgrove.tree.base.question_bound import check_length

    body = await _body_of(request)
    if not isinstance(body, dict):
        return
    inputs = body.get("inputs") if isinstance(body.get("inputs"), list) else [body.get("input")]
    for given in inputs:
        question = question_text(given) if isinstance(given, dict) else None
        if isinstance(question, str):
            check_length(question)


async def per_request_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
    if request.scope.get("path", "").rstrip("/").rsplit("/", 1)[0].endswith("/query"):
        await check_questions(request)
    configurable = dict(config.get("configurable") or {})
    # always set, never taken from the body: the project the request names, checked against its token
    projects: Projects = request.app.state.projects
    named = request.headers.get(PROJECT_HEADER) or request.query_params.get("project")
    configurable[PROJECT_KEY] = await asyncio.to_thread(projects.served.choose, named, caller_of(request.scope))
    # without one, a run of the agent (whose threads persist) is a thread of its own
    configurable["thread_id"] = await _thread_of(request) or f"memgrove-{uuid.uuid4().hex}"
    return {**config, "configurable": configurable}


def langserve_router(projects: Projects) -> APIRouter:
    router = APIRouter()
    default = projects.memory_for(None)
    for name in GRAPHS:
        add_routes(router, ProjectGraph(name, projects, projects.template(default, name)), path=f"/{name}",
                   per_req_config_modifier=per_request_config, enable_feedback_endpoint=False,
                   enable_public_trace_link_endpoint=False)
    return router
