"""The repository a class pulls: the course as committed, without the worked solutions and the teacher's answers.

The public repository keeps its solutions for students who learn alone. A class pulls another one,
written by ``python -m ragkit class-repo OUT`` from this clone's last commit: every tracked file a
student's notebooks, ``make lab``, Binder and a hub need, and none that holds an exercise's answer
(``LEFT_OUT``). A link in the copied Markdown that led to a file left out becomes plain text, and the
Makefile's targets that run what is left out say where it is, so nothing in the class's copy points at what it
does not hold. Written again into the class's repository it wrote before, the next version is that repository's
next commit: pushed, it is a fast-forward, which nbgitpuller (and ``git pull``) brings into every student's clone.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from ragkit.errors import InputError

__all__ = [
    "DEVELOPERS",
    "ELSEWHERE",
    "LEFT_OUT",
    "NOTICE",
    "SUBJECT",
    "ClassRepo",
    "left_out",
    "release",
]

LEFT_OUT = (
    "notebooks/solutions/",
    "notebooks/twins/solutions/",
    "notebooks/nl/solutions/",
    "notebooks/twins/nl/solutions/",
    "notebooks/nl/catalogue/solutions/",
    "docs/nl/",
    "docs/teacher-guide.md",
    "docs/grading.md",
    "tests/",
    "benchmarks/",
    "teacher/",
    "harness/",
    ".ci/",
)
"""What a class's copy leaves out: the worked solutions and their twins, the teacher's guide and the grading guide
(the answers to every exercise and "Try this") and the teacher's tools that compute the guide's figures (exercise 2's
answer among them), and the developers' tests, benchmarks and CI, which run the solutions."""
NOTICE = """> **This is the class's copy of the course**, written by `python -m ragkit class-repo` from {source} at
> commit `{commit}`. It holds the notebooks and exercises without their worked solutions, and without the
> teacher's guide; the public repository keeps both for students who learn on their own. Start with `make lab`.
> The tests and benchmarks (`make test`, `make check`, `make bench`) run the worked solutions, so they are in the
> public repository too: where this README speaks of them, of the solutions or of the guides, it means that one.

"""
SUBJECT = "The class's copy of the course at"
"""How each commit class-repo makes begins: a folder whose history has one is a class's repository it wrote."""
DEVELOPERS = ("test", "check", "bench", "binder-early")
"""The Makefile's targets that run the tests and benchmarks left out: in the class's copy they say where those are."""
ELSEWHERE = (
    "\t@echo \"make $@: the class's copy holds no tests or benchmarks (they run the worked solutions); "
    'they are in the public repository"; exit 1\n'
)
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class ClassRepo:
    """What ``release`` made: where, from which commit, how many files it holds and which it left out."""

    folder: Path
    commit: str
    files: int
    left_out: tuple[str, ...]
    unlinked: int
    repository: str
    """The address its links carry (book/book.toml): the class's repository when one was given."""
    head: str
    """The class's repository's commit that holds this version."""
    earlier: str | None = None
    """Its commit before this version was added (None: a new repository)."""
    changed: bool = True
    """Whether this version differs from the earlier one (False: no commit was made)."""

    def __str__(self) -> str:
        if self.earlier is None:
            what = (
                f"wrote the class's repository to {self.folder}: {self.files} files from commit "
                f"{self.commit[:12]}, one commit on branch main"
            )
        elif self.changed:
            what = (
                f"added the course at commit {self.commit[:12]} to the class's repository {self.folder} as its "
                f"next commit ({self.head[:12]}, after {self.earlier[:12]}): {self.files} files"
            )
        else:
            what = (
                f"nothing changed for the class at commit {self.commit[:12]}: {self.folder} already holds it "
                f"({self.head[:12]}); no commit made"
            )
        return (
            f"{what}; left out {len(self.left_out)} files (worked solutions, the teacher's and "
            f"grading guides, tests, benchmarks, CI) and turned {self.unlinked} links to them into plain text.\n"
            f"Its Colab, Binder and hub links lead to {self.repository}"
            + (
                " (the placeholder: give --repository, the class's repository, so they lead to the class's copy)"
                if "github.com/OWNER/" in self.repository
                else ""
            )
            + ".\n"
            f"Push it where your class pulls from: git -C {self.folder} push <the class's repository URL> main"
        )


def _git(*args: str, cwd: Path) -> bytes:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if done.returncode != 0:
        raise InputError(f"git {' '.join(args[:2])} failed in {cwd}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def left_out(path: str) -> bool:
    """Whether a tracked file stays out of the class's copy."""
    return any(path == rule or (rule.endswith("/") and path.startswith(rule)) for rule in LEFT_OUT)


def _unlinked(text: str, here: PurePosixPath) -> tuple[str, int]:
    """Markdown whose links to files left out are plain text; and how many there were."""
    count = 0

    def plain(match: re.Match) -> str:
        nonlocal count
        target = match.group(2).split("#", 1)[0]
        if not target or "://" in target or target.startswith(("#", "mailto:")):
            return match.group(0)
        resolved = os.path.normpath((here.parent / target).as_posix())
        if left_out(resolved) or left_out(resolved + "/"):
            count += 1
            return f"{match.group(1)} (in the public repository)"
        return match.group(0)

    return _LINK.sub(plain, text), count


def _makefile(text: str) -> str:
    """The Makefile of the class's copy: each target that runs what the copy leaves out says so, and stops."""
    lines, kept, skipping = text.splitlines(keepends=True), [], False
    for line in lines:
        if skipping and line.startswith("\t"):
            continue
        skipping = False
        target = line.split(":", 1)[0]
        if ":" in line and not line.startswith(("\t", "#", " ")) and target in DEVELOPERS and "=" not in target:
            kept += [f"{target}:\n", ELSEWHERE]
            skipping = True
            continue
        kept.append(line)
    return "".join(kept)


def _without_credentials(remote: str) -> str:
    """A remote's address as the class may read it: no user name or password (a token) in it."""
    parts = urlsplit(remote)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])) if "@" in parts.netloc else remote


def _earlier(out: Path) -> str | None:
    """The commit of the class's repository at ``out`` that class-repo wrote before, if ``out`` is one; else None."""
    if not (out / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--fixed-strings", f"--grep={SUBJECT}"],
        cwd=out,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return _git("rev-parse", "HEAD", cwd=out).decode().strip()


def _emptied(out: Path) -> None:
    """Remove the files the class's repository tracks (and the folders they leave empty); .git stays."""
    tracked = [out / name for name in _git("ls-files", "-z", cwd=out).decode().split("\0") if name]
    for path in tracked:
        path.unlink(missing_ok=True)
    folders = {p for path in tracked for p in path.parents if out in p.parents}
    for folder in sorted(folders, key=lambda p: -len(p.parts)):  # the deepest first
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def release(root: Path, out: Path, repository: str | None = None, branch: str | None = None) -> ClassRepo:
    """Write the class's repository at ``out`` (new or empty, outside this clone) from ``root``'s last commit.

    When ``out`` is a class's repository written before (a clone of it, with nothing uncommitted), this version becomes
    its next commit, and the address it had is kept unless ``repository`` or ``branch`` say otherwise.
    With ``repository`` (where the class pulls from), the copy's address (book/book.toml) is that repository's, and
    every link that carries it (the notebooks' Colab cell, the README's Binder and Colab links, the hub guide's
    commands) leads the class to its own copy, never to the public one with its solutions.
    """
    from ragkit.teach.classroom import address

    wanted = (
        None
        if repository is None and branch is None
        else address.Address.parse(repository or address.PLACEHOLDER, branch or "main")
    )  # refused before anything is written
    root, out = Path(root).resolve(), Path(out).absolute()
    if not (root / ".git").exists():
        raise InputError(
            f"{root} is not a git clone of the course: run class-repo from the clone (git clone, then make)"
        )
    if out.resolve() == root or root in out.resolve().parents:
        raise InputError(
            f"{out} is inside the clone {root}: name a folder outside it (the copy is a repository of its own)"
        )
    earlier = _earlier(out) if out.is_dir() and not out.is_symlink() else None
    if earlier is None and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(
            f"{out} exists and is not an empty folder: name a new folder for the class's repository, or "
            "the class's repository class-repo wrote before (a clone of it) to add the next version"
        )
    if earlier is not None:
        dirty = _git("status", "--porcelain", "--untracked-files=all", cwd=out).decode()
        if dirty:
            raise InputError(
                f"{out} has changes not committed ({dirty.splitlines()[0].strip()}, ...): commit or "
                "remove them, then run class-repo again (the next version replaces every tracked file)"
            )
    before = address.Address.load(out) if earlier is not None and (out / address.SETTING).is_file() else None
    commit = _git("rev-parse", "HEAD", cwd=root).decode().strip()
    listing = _git("ls-tree", "-r", "-z", "--full-tree", "HEAD", cwd=root).split(b"\0")
    entries = []
    for line in filter(None, listing):
        meta, name = line.split(b"\t", 1)
        mode, kind, blob = meta.decode().split()
        entries.append((mode, kind, blob, name.decode()))
    origin = subprocess.run(["git", "config", "--get", "remote.origin.url"], cwd=root, capture_output=True, text=True)
    remote = _without_credentials(origin.stdout.strip()) if origin.returncode == 0 else str(root)
    if earlier is not None:
        _emptied(out)
    out.mkdir(parents=True, exist_ok=True)
    kept, unlinked = 0, 0
    dropped: list[str] = []
    for mode, kind, blob, path in entries:
        if kind != "blob":  # a submodule: not the course's
            continue
        if left_out(path):
            dropped.append(path)
            continue
        data = _git("cat-file", "blob", blob, cwd=root)
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(data.decode())
        else:
            if path.endswith(".md"):
                text, n = _unlinked(data.decode("utf-8"), PurePosixPath(path))
                if path == "README.md":
                    text = NOTICE.format(source=remote, commit=commit[:12]) + text
                data, unlinked = text.encode("utf-8"), unlinked + n
            elif path == "Makefile":
                data = _makefile(data.decode("utf-8")).encode("utf-8")
            target.write_bytes(data)
            target.chmod(0o755 if mode == "100755" else 0o644)
        kept += 1
    if before is not None or wanted is not None:  # the class's address: as asked, else as it was
        base = before or address.Address.load(out)
        address.write(out, address.Address.parse(repository or base.repository, branch or base.branch))
    if earlier is None:
        _git("init", "--quiet", "--initial-branch=main", str(out), cwd=out)
    _git("add", "--all", cwd=out)
    changed = earlier is None or subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=out).returncode != 0
    if changed:
        _git(
            "-c",
            "user.name=ragkit class-repo",
            "-c",
            "user.email=class-repo@ragkit.invalid",
            "commit",
            "--quiet",
            "-m",
            f"{SUBJECT} {commit[:12]}, without worked solutions or the teacher's guide",
            cwd=out,
        )
    head = _git("rev-parse", "HEAD", cwd=out).decode().strip()
    return ClassRepo(
        out, commit, kept, tuple(dropped), unlinked, address.Address.load(out).repository, head, earlier, changed
    )
