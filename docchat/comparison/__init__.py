"""Two versions of a document: sections aligned (align), a word redline of each changed pair
(redline), sections one version splits and the other keeps whole (merges), and questions and
summaries about what changed (ask). Uses context (retrieval, claims) and backends; used by
the CLI (`docchat compare`) and the Compare page. docchat.compare is align.compare."""
