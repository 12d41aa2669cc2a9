def test_health_and_token_flow(api):
    assert api.client.get("/v1/health").json() == {"status": "ok"}
    headers = api.token("researcher", "aggregate:read")
    r = api.client.get("/v1/open/instruments", headers=headers)
    assert r.status_code == 200, r.text
    assert {i["key"] for i in r.json()} == {"gss", "ipip50", "games"}
    assert api.client.get("/v1/open/instruments").status_code == 401


def test_public_routes_need_no_token(api):
    assert api.client.get("/v1/audit/public-key").status_code == 200
    assert api.client.get("/openapi.json").status_code == 200
