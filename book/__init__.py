"""The course as a book: the executed notebooks as a static site that needs no kernel and no network (``make book``)."""
