"""Dataset loaders: each reads its dataset's files into conversations in memgrove's format
(``{"id", "messages": [{"id", "speaker", "text", "time", "session"}]}``), questions with gold evidence ids,
and the flat BM25 baselines over its turns and sessions."""
