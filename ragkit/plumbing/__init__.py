"""The plumbing a student may skip: the vector cache, SQLite storage, the ONNX encoder, models and locations.

Nothing here is one of the chapter's ideas; it is what keeps them fast, offline and safe to share.
"""

__all__ = []
