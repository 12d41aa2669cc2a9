"""The bank's pages and their scripts: files of ``app.web``, each served with the caching it needs.

Every page holds no data of its own: what it shows comes from the API, under the caller's session or
token, so the pages themselves are public (``deps.PUBLIC``).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

MEDIA = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css"}
# path -> (file, OpenAPI tag, what it is)
PAGES = {
    "/": ("home.html", "front page", "The front page: what the bank is, a way in for each person (participant, "
          "researcher, reviewer, team) and the bank's state in words."),
    "/portal": ("portal.html", "participants", "The participant's page: sign in with the access code, see every "
                "use of one's agent, download one's transcript, withdraw."),
    "/survey": ("survey.html", "participants", "The participant's own survey after the interview, and its retest: "
                "one page at a time, each answer saved as it is given."),
    "/explore": ("explore.html", "open tier", "The open tier's explorer: choose an item and up to two breakdowns, "
                 "see the weighted table as a chart with intervals, download it, copy the query as code."),
    "/review": ("review.html", "review", "The reviewers' console: decide applications with their scope, release "
                "or keep withheld answers."),
    "/projects": ("projects.html", "restricted tier", "The teams' console: projects, withdrawal notices, agents "
                  "with their report cards, jobs from a form followed to the end, results downloaded."),
    "/studies": ("studies.html", "studies", "The coordinators' console: a study's funnel, drop-off by module, "
                 "quality flags, participants by stage (never their words), downloads and invitations."),
}  # fmt: skip
# Scripts and styles: revalidated on each use, never stale after an upgrade.
SCRIPTS = {
    "/home.js": ("home.js", "front page", "The front page: the bank's state from /v1/status, in words."),
    "/participant.js": ("participant.js", "participants", "What the participant's pages share: the access code as "
                        "printed, and calls to the bank with it."),
    "/proofs.js": ("proofs.js", "participants", "Checking the audit log in the browser: the signed tree head and "
                   "each receipt's inclusion proof, with the browser's own SHA-256 and Ed25519."),
    "/explore.js": ("explore.js", "open tier", "The explorer: sign-in, the chart, the downloads, the code."),
    "/console.js": ("console.js", "consoles", "What the consoles share: the session and calls with its CSRF token."),
    "/console.css": ("console.css", "consoles", "What the consoles share: their styles."),
    "/review.js": ("review.js", "review", "The reviewers' console."),
    "/projects.js": ("projects.js", "restricted tier", "The teams' console."),
    "/studies.js": ("studies.js", "studies", "The coordinators' console."),
}  # fmt: skip


def install_pages(app: FastAPI) -> None:
    """Serve every page (never cached: it may change with the bank) and script or style (revalidated)."""
    for path, (name, tag, about) in PAGES.items():
        app.add_api_route(path, _file(name, "no-store"), methods=["GET"], response_class=HTMLResponse,
                          tags=[tag], summary=about.split(":")[0], description=about)  # fmt: skip
    for path, (name, tag, about) in SCRIPTS.items():
        app.add_api_route(path, _file(name, "no-cache"), methods=["GET"], response_class=Response,
                          tags=[tag], summary=about.split(":")[0], description=about)  # fmt: skip


def _file(name: str, cache: str) -> Callable[[], Response]:
    media = MEDIA[name[name.rindex(".") :]]

    def serve() -> Response:
        body = resources.files("app.web").joinpath(name).read_text(encoding="utf-8")
        return Response(body, media_type=media, headers={"Cache-Control": cache})

    return serve
