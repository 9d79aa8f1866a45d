"""ragkit: the engine behind the companion notebooks to "RAG in production"."""

from ragkit.chunking import STRATEGIES, Chunk, chunk_corpus, chunk_document
from ragkit.corpus import Corpus, Document, FailedDocument, load_corpus
from ragkit.errors import RagkitError

__version__ = "0.1.0"

__all__ = ["STRATEGIES", "Chunk", "Corpus", "Document", "FailedDocument", "RagkitError",
           "chunk_corpus", "chunk_document", "load_corpus"]
