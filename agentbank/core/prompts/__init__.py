"""The prompt files every answer and build uses, and the version their hash gives (``files``)."""
