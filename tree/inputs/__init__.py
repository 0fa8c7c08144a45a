"""What comes into a memory before it is curated: conversation formats and chat exports read
into messages (``conversation_formats``, ``chat_exports``), files and folders given to
``curate`` (``input_folders``), long inputs cut into pieces for an LLM curator (``chunks``), and
the verbatim curator, the deterministic one that needs no model, with its placement rules
(``curator``, ``verbatim_*``, ``placement``) and the way it reads a markdown page as a
document: front matter as metadata (``documents``), sections at every heading
(``markdown_sections``). It produces operations; it writes nothing itself. It may use
``base``, ``text`` and ``entries``.
"""
