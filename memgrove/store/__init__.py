"""The Context Tree as LangGraph's ``BaseStore``: ``ContextTreeStore`` (``tree_store``), which works on a
tree in this process or, given a server's address, on the one ``memgrove serve`` holds (``remote``,
its requests through the remote client's wire). It owns how namespaces, keys and values map to entry
files (``items``), the filters and namespace conditions (``filters``), the checks every operation
passes before it runs or is sent (``checks``) and the errors LangGraph callers see (``errors``). It
may use LangGraph's store types, ``Memory``, the remote client's wire and the tree; the server's
store routes use it, and nothing below ``Memory`` imports it. Importing this package loads
nothing (``memgrove.ContextTreeStore`` names the class).
"""
