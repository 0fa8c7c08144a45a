"""memgrove.tools — the Context Tree as LangChain tools an agent binds.

    from memgrove.tools import knowledge_tools
    tools = knowledge_tools(memory)        # search_knowledge, read_entry, list_tree
"""

from .knowledge import knowledge_tools

__all__ = ["knowledge_tools"]
