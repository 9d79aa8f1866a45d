"""The tools that deploy and author the course: the student's workspace (a server extension), the Dutch edition,
the pace of a class. Nothing in ragkit imports this room but the command line.
"""

__all__ = []
