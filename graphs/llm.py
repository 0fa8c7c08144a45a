"""Which chat model the pipeline uses.

A model given from Python wins. Otherwise ``MEMGROVE_MODEL`` names one, served
by ``langchain-openai``'s ``ChatOpenAI`` at ``OPENAI_BASE_URL`` (OpenAI by
default; vLLM, Ollama or a llama.cpp server work the same) with
``OPENAI_API_KEY``. No ``MEMGROVE_MODEL``: no LLM, and tiers 3–4 answer
extractively. Nothing here is imported until a model is needed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PROMPTS = Path(__file__).parent / "prompts"


def model_configured(model: Any = None) -> bool:
    return model is not None or bool(os.environ.get("MEMGROVE_MODEL", "").strip())


def resolve_model(model: Any = None, *, timeout: float = 60.0, retries: int = 2) -> Any:
    """The chat model to use, or None. Raises ``ModelUnavailable`` if configured wrongly."""
    if model is not None:
        return model
    name = os.environ.get("MEMGROVE_MODEL", "").strip()
    if not name:
        return None
    return chat_model(name, timeout=timeout, retries=retries)


def chat_model(name: str | None = None, *, timeout: float = 60.0, retries: int = 2) -> Any:
    """``ChatOpenAI`` for ``name`` (default ``MEMGROVE_MODEL``, else ``gpt-4o-mini``) against
    ``OPENAI_BASE_URL`` when set: a local OpenAI-compatible server (llama.cpp, Ollama, vLLM) needs no
    ``OPENAI_API_KEY``, which the client itself insists on. ``memgrove.chat_model`` is this."""
    name = (name or os.environ.get("MEMGROVE_MODEL", "").strip() or "gpt-4o-mini").strip()
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip() or None
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    if not key and base_url is None:
        raise ModelUnavailable(f"model {name!r} needs OPENAI_API_KEY (or OPENAI_BASE_URL naming a local "
                               "OpenAI-compatible server, which needs no key)")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=name, base_url=base_url, api_key=key or "not-needed", timeout=timeout,
                      max_retries=retries, temperature=0)


class ModelUnavailable(Exception):
    """A model is configured but cannot be constructed."""


def prompt(name: str) -> str:
    """A versioned prompt file from ``graphs/prompts/``."""
    return (PROMPTS / f"{name}.md").read_text(encoding="utf-8")


def describe_error(exc: BaseException) -> str:
    """One line naming an LLM failure (timeout, 401, malformed tool call, ...)."""
    status = getattr(exc, "status_code", None)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    if status:
        return f"{name} (HTTP {status}): {text}"[:300]
    return f"{name}: {text}"[:300] if text else name
