"""A project's moderated focus group of its agents: the request (``requests``), the moderator (``moderator``),
what each seat remembers (``memory``), the stored group (``storage``), the run as a worker task (``running``),
its dry run (``costs``) and what the team reads of it (``results``, ``report``)."""
