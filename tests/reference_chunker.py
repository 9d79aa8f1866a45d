"""A line-by-line Python port of the chapter's reference chunker: the oracle for ours."""

import re


def reference_chunks(doc: str, doc_title: str, target: int = 512) -> list[dict]:
    """The reference rule exactly as the chapter states it, warts included."""
    out = []
    heads = [(m.start(), m.group(1).strip()) for m in re.finditer(r"^## (.+)$", doc, re.M)]
    if heads:
        spans = [
            (at, title, heads[i + 1][0] if i + 1 < len(heads) else len(doc)) for i, (at, title) in enumerate(heads)
        ]
    else:
        spans = [(0, "", len(doc))]
    for at, title, end in spans:
        header = f"{doc_title} > {title}" if title else doc_title
        skip_m = re.match(r"## .+\n", doc[at:end])
        skip = len(skip_m.group(0)) if skip_m else 0
        body = doc[at + skip : end]
        origin = at + skip

        def emit(f, t):
            raw = body[f:t]
            lead = len(raw) - len(raw.lstrip())
            content = raw.strip()
            if content:
                out.append(
                    {
                        "text": f"[{header}]\n{content}",
                        "content": content,
                        "section": title,
                        "start": origin + f + lead,
                        "end": origin + f + lead + len(content),
                    }
                )

        open_ = None
        for m in re.finditer(r"[^\n]([^\n]|\n(?!\n))*", body):
            pf, pt = m.start(), m.end()
            if pt - pf > target:
                if open_:
                    emit(*open_)
                    open_ = None
                cur = None
                for sm in re.finditer(r"[^.!?]*[.!?]*\s*", body[pf:pt]):
                    if not sm.group(0):
                        continue
                    sf, st = pf + sm.start(), pf + sm.end()
                    if cur and st - cur[0] > target:
                        emit(*cur)
                        cur = None
                    cur = (cur[0], st) if cur else (sf, st)
                if cur:
                    emit(*cur)
                continue
            if open_ and pt - open_[0] > target:
                emit(*open_)
                open_ = None
            open_ = (open_[0], pt) if open_ else (pf, pt)
        if open_:
            emit(*open_)
    return out
