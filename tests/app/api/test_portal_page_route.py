"""The participant's portal page: public, self-contained, and keeping the access code out of the URL."""


def test_the_portal_page_is_public_and_self_contained(api):
    page = api.client.get("/portal")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-store"
    assert "http://" not in page.text and "https://" not in page.text and "//cdn" not in page.text
    for route in ("/v1/participant/me", "/v1/participant/audit", "/v1/participant/transcript",
                  "/v1/participant/withdraw", "/v1/audit/checkpoint"):  # fmt: skip
        assert route in page.text
    # The code lives only for the tab: never in localStorage, never in a cookie.
    assert "sessionStorage" in page.text and "localStorage" not in page.text and "document.cookie" not in page.text
