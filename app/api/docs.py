"""The API's documentation pages, served with their scripts and styles from an installed package.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so they are blank offline. The
``fastapi-offline`` package ships the same files (Swagger UI 5, which renders OpenAPI 3.1, and ReDoc);
they are mounted under ``/docs/assets`` and the pages point there.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"
ASSETS_URL = "/docs/assets"
ASSET_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


def assets_dir() -> Path:
    """The folder of the installed package that holds the documentation pages' files."""
    return Path(str(resources.files("fastapi_offline").joinpath("static")))


def install_docs(app: FastAPI) -> None:
    """Add ``/docs`` (Swagger UI), its OAuth2 redirect and ``/redoc``, all served from local files.

    The app must be created with ``docs_url=None`` and ``redoc_url=None``.
    """
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    favicon = f"{ASSETS_URL}/favicon.png"

    @app.get(DOCS_URL, include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} — API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=favicon,
            oauth2_redirect_url=OAUTH2_REDIRECT_URL,
            # Swagger UI would otherwise fetch a validity badge from a public validator.
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get(OAUTH2_REDIRECT_URL, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC_URL, include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} — API",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=favicon,
            with_google_fonts=False,
        )
