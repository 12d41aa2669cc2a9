"""``BankClient``: token handling, the open tier, jobs and their results (see the package's docstring)."""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyreadstat
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import OAuth2Client
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

ENDED = ("done", "partial", "failed")
GROUP_ENDED = ("done", "stopped", "failed")

# The figures of each cell of an open table, in the bank's order (``agentbank.publication.breakdowns.FIGURES``;
# a test of the bank's keeps the two the same): the client needs nothing of the bank's code.
FIGURES = (
    "count",
    "share",
    "share_low",
    "share_high",
    "weighted_share",
    "weighted_low",
    "weighted_high",
    "deff",
    "noise_low",
    "noise_high",
    "sampling_low",
    "sampling_high",
)


class BankClientError(Exception):
    """The bank refused a request: its error code, message and HTTP status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class TableQueuedError(BankClientError):
    """The release in force lacks the table asked for: it is queued, measured at the next cut (on or after
    ``next_cut_after``) and then published to everyone. Ask again after that."""

    def __init__(self, release: int, next_cut_after: str, note: str) -> None:
        super().__init__(202, "table_queued", f"{note} (release {release}; next cut on or after {next_cut_after})")
        self.release, self.next_cut_after = release, next_cut_after


class BankClient:
    """One API client's session with the bank; use it as a context manager, or ``close`` it."""

    def __init__(self, base_url: str, client_id: str, client_secret: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        token_url = f"{self.base_url}/oauth/token"
        self._http = OAuth2Client(
            client_id, client_secret, token_endpoint=token_url, grant_type="client_credentials",
            token_endpoint_auth_method="client_secret_basic", timeout=timeout,  # noqa: S106 - a method name
        )  # fmt: skip
        try:
            self._http.fetch_token(token_url, grant_type="client_credentials")
        except OAuthError as exc:  # a wrong id or secret, or a revoked client
            self._http.close()
            raise BankClientError(
                401, exc.error or "invalid_client", exc.description or "the bank refused the credentials"
            ) from None

    def __enter__(self) -> BankClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # -- the open tier ---------------------------------------------------------------------------

    def instruments(self) -> pd.DataFrame:
        """The instruments the open tier publishes: key, title, version and number of items."""
        return pd.DataFrame(self._get("/v1/open/instruments"))

    def items(self, instrument: str) -> pd.DataFrame:
        """An instrument's items: key, question, kind and options (code and label)."""
        return pd.DataFrame(self._get(f"/v1/open/instruments/{instrument}/items"))

    def distribution(self, instrument: str, item: str, breakdowns: Sequence[str] = ()) -> pd.DataFrame:
        """The current release's table of ``item``: one row per group and answer code, with the code's label,
        the count (with the release's noise), the share and its 95% interval (noise included), the weighted
        share and its interval, and the group's design effect (missing where the group is hidden). The
        release, the item's question, its measured validity, its distance from the GSS's own distribution
        (``fidelity``), the weights' source, the release's protection and the agents with no answer are in
        ``DataFrame.attrs``."""
        path = f"/v1/open/instruments/{instrument}/items/{item}/distribution"
        params = {"breakdowns": ",".join(breakdowns)} if breakdowns else {}
        response = self._request("GET", path, params=params)
        body = _json(response)
        if response.status_code == 202:  # a table the release lacks: queued for the next cut
            raise TableQueuedError(body["release"], body["next_cut_after"], body["note"])
        deff = {tuple(g["group"].values()): g["deff"] for g in body["groups"]}
        rows = []
        for cell in body["cells"]:
            ends = [end for key in ("interval", "weighted_interval", "noise_interval", "sampling_interval")
                    for end in (cell.get(key) or (None, None))]  # fmt: skip
            deff_of = deff[tuple(cell["group"].values())] if cell["count"] is not None else None
            rows.append([*cell["group"].values(), cell["code"], cell["label"], cell["count"], cell["share"], *ends[:2],
                         cell["weighted_share"], *ends[2:4], deff_of, *ends[4:]])  # fmt: skip
        table = pd.DataFrame(rows, columns=[*body["breakdowns"], "code", "label", *FIGURES])
        # The labels as a categorical in the item's order of codes, as a labelled file gives them.
        table["label"] = pd.Categorical(table["label"], categories=list(dict.fromkeys(table["label"])))
        table["count"] = table["count"].astype("Int64")  # a hidden cell is <NA>, not a zero
        for column in FIGURES[1:]:
            table[column] = table[column].astype("Float64")
        table.attrs.update(release=body["release"], question=body["question"], k=body["k"], total=body["total"],
                           validity=body["validity"], weights=body["weights"], missing=body["missing"],
                           protection=body["protection"], fidelity=body.get("fidelity"))  # fmt: skip
        return table

    # -- a team's jobs ---------------------------------------------------------------------------

    def submit(self, project_id: str, request: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        """Submit a job (survey items, open questions or an experiment) once: sending it again with the same
        ``idempotency_key`` returns the same job. A key is made when none is given."""
        key = idempotency_key or f"client-{uuid.uuid4()}"
        return _json(self._request("POST", f"/v1/projects/{project_id}/jobs", json=request,
                                   headers={"Idempotency-Key": key}))  # fmt: skip

    def estimate(self, project_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """What the job would cost, asking no model and queuing nothing: calls, prompt, cached and completion
        tokens, the price where the operator set one, the expected wall time, and what it rests on."""
        return _json(self._request("POST", f"/v1/projects/{project_id}/jobs", params={"dry_run": "true"}, json=request))

    def job(self, job_id: str) -> dict[str, Any]:
        """A job's status and progress (``done`` of ``total`` agents)."""
        return self._get(f"/v1/jobs/{job_id}")

    def wait(self, job_id: str, *, poll_s: float = 2.0, timeout_s: float | None = None,
             progress: bool = True) -> dict[str, Any]:  # fmt: skip
        """Poll until the job has ended (done, partial or failed), with a progress bar unless ``progress`` is
        off; raises ``TimeoutError`` after ``timeout_s``."""
        began = time.monotonic()
        with Progress(TextColumn("job {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      disable=not progress) as bar:  # fmt: skip
            job = self.job(job_id)
            task = bar.add_task(job_id[:8], total=job["total"])
            while job["status"] not in ENDED:
                if timeout_s is not None and time.monotonic() - began > timeout_s:
                    raise TimeoutError(f"job {job_id} has not ended after {timeout_s:.0f} s ({job['done']} done)")
                time.sleep(poll_s)
                job = self.job(job_id)
                bar.update(task, completed=job["done"])
            bar.update(task, completed=job["done"])
        return job

    def results(self, job_id: str) -> pd.DataFrame:
        """A job's answers: one row per agent and answer, with the agent's status and arms (experiments), what
        the answer is to (``key``), the value, a coded answer's label (a categorical, in the order of the
        codes), the reason, cited turns, whether it is withheld, and its provenance; an agent answered by
        nobody is one row without an answer."""
        rows = []
        for result in self._get(f"/v1/jobs/{job_id}/results"):
            base = {"agent_id": result["agent_id"], "status": result["status"],
                    "arms": ",".join(result.get("arms") or []) or None,
                    "validity": result.get("validity", {}).get("status")}  # fmt: skip
            if not result["answers"]:
                rows.append(base)
            for answer in result["answers"]:
                provenance = answer.get("provenance") or {}
                rows.append({**base, "key": answer.get("key"), "value": answer["value"], "label": answer.get("label"),
                             "reason": answer["reason"],
                             "cited_turns": answer["cited_turns"], "withheld": answer["withheld"],
                             "model": provenance.get("model"), "provenance": provenance})  # fmt: skip
        table = pd.DataFrame(rows)
        if "label" in table:
            coded = table.dropna(subset=["label"]).sort_values("value", kind="stable")
            table["label"] = pd.Categorical(table["label"], categories=list(dict.fromkeys(coded["label"])))
        return table

    def results_table(self, job_id: str) -> pd.DataFrame:
        """A job's answers as a labelled table, as Stata and SPSS read it: one row per agent, one column per
        answer (``cappun``, ``question_1``, ``arm_item``), each coded answer a categorical of its options'
        labels in the item's order (a withheld or missing answer is missing). The questions are in
        ``attrs["variable_labels"]``, each column's codes and labels in ``attrs["value_labels"]``."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.sav"
            path.write_bytes(self.download(f"/v1/jobs/{job_id}/results", "sav"))
            table, meta = pyreadstat.read_sav(str(path))
        value_labels = {column: {int(code): label for code, label in sorted(labels.items())}
                        for column, labels in meta.variable_value_labels.items()}  # fmt: skip
        for column, labels in value_labels.items():  # every option a category, in the item's order
            codes = table[column].astype("Int64")
            table[column] = pd.Categorical(codes.map(labels, na_action="ignore"), categories=list(labels.values()))
        table.attrs.update(job=job_id, variable_labels=meta.column_names_to_labels, value_labels=value_labels)
        return table

    def download(self, path: str, format: str, **params: str) -> bytes:
        """A table of the bank as a file's bytes: an open-tier table (``/v1/open/.../distribution``) or a
        job's results (``/v1/jobs/ID/results``) as ``csv``, ``parquet``, ``dta`` or ``sav``."""
        response = self._request("GET", path, params={**params, "format": format})
        if response.status_code >= 400:
            _json(response)  # raises the bank's refusal
        return bytes(response.content)

    # -- a team's focus groups -------------------------------------------------------------------

    def estimate_group(self, project_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """What a focus group would cost, in all and round by round, asking no model and queuing nothing."""
        path = f"/v1/projects/{project_id}/focus-groups"
        return _json(self._request("POST", path, params={"dry_run": "true"}, json=request))

    def start_group(
        self, project_id: str, request: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Start a moderated focus group of the project's agents once (``{"kind": "focus_group", "seats": [...],
        "guide": {...}, "stimulus": {...}}``): the same ``idempotency_key`` again returns the same group."""
        key = idempotency_key or f"client-{uuid.uuid4()}"
        return _json(self._request("POST", f"/v1/projects/{project_id}/focus-groups", json=request,
                                   headers={"Idempotency-Key": key}))  # fmt: skip

    def group(self, group_id: str) -> dict[str, Any]:
        """A focus group's status, seats and every turn so far."""
        return self._get(f"/v1/focus-groups/{group_id}")

    def wait_group(self, group_id: str, *, poll_s: float = 2.0, timeout_s: float | None = None) -> dict[str, Any]:
        """Poll until the group has ended (done, stopped or failed); raises ``TimeoutError`` after ``timeout_s``."""
        began = time.monotonic()
        group = self.group(group_id)
        while group["status"] not in GROUP_ENDED:
            if timeout_s is not None and time.monotonic() - began > timeout_s:
                raise TimeoutError(f"focus group {group_id} has not ended after {timeout_s:.0f} s")
            time.sleep(poll_s)
            group = self.group(group_id)
        return group

    def group_result(self, group_id: str) -> dict[str, Any]:
        """The group's result: its framing (simulated, the model), seats with their report cards and flags,
        themes with the utterances they come from, stance changes, and the transcript."""
        return self._get(f"/v1/focus-groups/{group_id}/result")

    def group_transcript(self, group_id: str) -> pd.DataFrame:
        """The group's transcript, one row per turn: its number, who speaks (the moderator or a seat), what kind
        of turn (moderator, agent, silence for a withheld answer, left), the words and the seat's stance."""
        columns = ["number", "kind", "speaker", "text", "stance", "status"]
        turns = self.group_result(group_id)["transcript"]
        return pd.DataFrame([{c: t.get(c) for c in columns} for t in turns], columns=columns)

    # -- plumbing --------------------------------------------------------------------------------

    def _get(self, path: str) -> Any:
        return _json(self._request("GET", path))

    def _request(self, method: str, path: str, **options: Any) -> Any:
        return self._http.request(method, f"{self.base_url}{path}", **options)


def _json(response: Any) -> Any:
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
            raise BankClientError(response.status_code, error["code"], error["message"])
        except (ValueError, KeyError, TypeError):
            raise BankClientError(response.status_code, "http_error", response.text[:200]) from None
    return response.json()
