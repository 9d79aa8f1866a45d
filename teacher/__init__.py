"""The teacher's tools: what computes the answers the teacher's guide quotes, kept out of the class's repository.

``python -m teacher.guide`` checks (``--write``: writes) the guide's computed figures. ``ragkit`` never imports this
package, and ``python -m ragkit class-repo`` leaves it out (``class_repo.LEFT_OUT``), as it leaves out the solutions.
"""

__all__ = []
