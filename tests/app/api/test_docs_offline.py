"""The documentation pages work offline: every script, style and icon comes from the API itself."""

import re

import pytest

URL = re.compile(r"""(?:src|href|url)\s*[=:(]\s*['"]?([^'")\s>]+)""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_local_assets(api, page):
    response = api.client.get(page)
    assert response.status_code == 200
    assert "http://" not in response.text and "https://" not in response.text and "//cdn" not in response.text
    referenced = [u for u in URL.findall(response.text) if u.startswith("/docs/assets/")]
    assert referenced, "the page names no local asset"
    for asset in referenced:
        fetched = api.client.get(asset)
        assert fetched.status_code == 200, asset
        assert len(fetched.content) > 1000, asset


def test_swagger_ui_renders_openapi_31(api):
    # FastAPI emits OpenAPI 3.1, which Swagger UI renders only from version 5 on.
    assert api.client.get("/openapi.json").json()["openapi"].startswith("3.1")
    bundle = api.client.get("/docs/assets/swagger-ui-bundle.js").text
    assert "isOpenAPI31" in bundle


def test_the_oauth2_redirect_page_is_served(api):
    response = api.client.get("/docs/oauth2-redirect")
    assert response.status_code == 200 and "oauth2" in response.text.lower()
