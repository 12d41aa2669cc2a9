"""A Python client for the bank's HTTP API: the open tier as pandas DataFrames, a team's jobs submitted
once and waited for, their results as a DataFrame (long, or one row per agent with labelled categoricals).

    from agentbank_client import BankClient

    with BankClient("https://bank.example.org", CLIENT_ID, CLIENT_SECRET) as bank:
        table = bank.distribution("gss", "cappun", breakdowns=["sex"])
        job = bank.submit(PROJECT_ID, {"kind": "survey", "instrument": "gss", "items": ["cappun"],
                                       "agents": [AGENT_ID]})
        answers = bank.results(bank.wait(job["id"])["id"])
        labelled = bank.results_table(job["id"])  # one row per agent, each item a categorical of its labels

Tokens come from the bank's OAuth2 token endpoint (client credentials) through Authlib, which fetches a
new one when the old one expires.
"""

from agentbank_client.api import BankClient, BankClientError, TableQueuedError

__all__ = ["BankClient", "BankClientError", "TableQueuedError"]
