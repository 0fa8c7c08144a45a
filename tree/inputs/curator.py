"""The verbatim curator: deterministic, no LLM.

Turns free text, files and conversations into curate operations (UPSERTs, so
curating the same input twice changes nothing), each entry keeping the exact
words and its provenance. Placement is by source and session:

    conversations/<conversation id>/<session>/<first message id>.md
    files/<file stem>/<section>.md
    notes/<yyyy_mm_dd>/<first words>[_part_<n>].md

Conversations are read in any shape ``conversation_formats`` knows (memgrove's,
OpenAI-style messages, LangChain messages).

Each name is claimed through a ``placement.Placer``: where two different inputs
give one name (notes that open alike, two ``README.md``, ids ``m-1`` and ``m_1``,
names without Latin letters), the later one gets a short digest suffix instead
of replacing the other.
"""

from __future__ import annotations

# the curator in three modules: shared text pieces (paragraphs, chunks, message parts), free text
# and files, conversations; every name read from ``curator`` stays importable from here
from ..text.questions import question_words  # noqa: F401 - read from here by the tests
from .verbatim_conversations import (_session_of, _span, check_conversation, day_of,  # noqa: F401
                                     message_source, ops_from_conversation, when_label)
from .verbatim_files import (_file_op, _too_large, decode_input, read_json_input,  # noqa: F401
                             file_ref, ops_from_document, ops_from_file, ops_from_text, read_input)
from .verbatim_parts import (_FENCE, CHUNK_WORDS, PART_CHARS, PART_WORDS, _at_most, _chunks,  # noqa: F401
                             _first_sentence, _iso, _paragraph_pieces, _SENTENCE_END, _split_chars, _words,
                             message_parts, paragraphs)
