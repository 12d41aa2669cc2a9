"""A focus group's result as a readable HTML page: the framing first (simulated, the model, the flags), then
the seats with their report cards, the themes, the stance changes and the transcript. Every value is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

STYLE = (
    "body{font:15px/1.5 system-ui,sans-serif;max-width:58rem;margin:2rem auto;padding:0 1rem}"
    ".frame{border:2px solid #b45309;background:#fffbeb;padding:.75rem 1rem}.flag{color:#b45309}"
    "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}"
    ".mod{color:#555}.quiet{color:#888;font-style:italic}"
)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _seat_rows(seats: list[dict[str, Any]]) -> str:
    rows = []
    for s in seats:
        card = s["report_card"]
        shown = (
            "not validated"
            if card is None
            else (
                f"{_e(card['instrument'])}: normalized accuracy {_e(card['normalized_accuracy'])} "
                f"(baseline {_e(card['baseline'])}: {_e(card['baseline_normalized'])})"
            )
        )
        stance = s["stance"] or {}
        flag = f'<span class="flag">⚑ {_e(s["flag"])}</span>' if s["flag"] else ""
        rows.append(
            f"<tr><td>{_e(s['seat'])}</td><td>{_e(s['status'])}</td><td>{_e(s['utterances'])}</td>"
            f"<td>{_e(stance.get('first'))} → {_e(stance.get('last'))}</td><td>{shown}</td><td>{flag}</td></tr>"
        )
    return "".join(rows)


def _line(t: dict[str, Any]) -> str:
    if t["kind"] == "moderator":
        to = f" → {_e(t['seat'])}" if t["seat"] else ""
        return f'<p class="mod">[{t["number"]}] <b>Moderator</b>{to}: {_e(t["text"])}</p>'
    if t["kind"] == "agent" and t["status"] == "spoken":
        return f"<p>[{t['number']}] <b>{_e(t['speaker'])}</b> (stance {_e(t['stance'])}): {_e(t['text'])}</p>"
    said = {
        "silence": "stays silent (withheld by the output check)",
        "left": "has left the group (withdrew)",
        "agent": "said something no longer readable (withdrew)",
    }[t["kind"]]
    return f'<p class="quiet">[{t["number"]}] {_e(t["speaker"])} {said}</p>'


def render_report(result: dict[str, Any]) -> str:
    """The HTML page of a result from ``results.group_result``."""
    framing = result["framing"]
    embedded = (
        (
            '<p class="flag">It ran on the embedded model, whose answers are near chance: it shows the '
            "plumbing, not what people think.</p>"
        )
        if framing["embedded_model"]
        else ""
    )
    themes = "".join(
        f"<li>{_e(t['theme'])} — {_e(', '.join(t['seats']))}; utterances "
        f"{_e(', '.join(map(str, t['utterances'])))}</li>"
        for t in result["themes"]
    )
    changes = (
        "".join(
            f"<li>{_e(c['seat'])}: {_e(c['from'])} → {_e(c['to'])} at [{_e(c['at'])}]</li>"
            for c in result["stances"]["changes"]
        )
        or "<li>none</li>"
    )
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>Simulated focus group {_e(result['id'])}</title>"
        f"<style>{STYLE}</style><h1>Simulated focus group</h1>"
        f'<div class="frame"><p><b>{_e(framing["statement"])}</b></p><p>Model: {_e(framing["model"])}. '
        f"Status: {_e(result['status'])}.</p>{embedded}</div>"
        f"<h2>Stimulus</h2><p>{_e(result['stimulus']['text'])}</p>"
        "<h2>Seats</h2><table><tr><th>seat</th><th>status</th><th>utterances</th><th>stance</th>"
        f"<th>report card</th><th>flag</th></tr>{_seat_rows(result['seats'])}</table>"
        f"<h2>Themes</h2><ul>{themes or '<li>none</li>'}</ul><h2>Stance changes</h2><ul>{changes}</ul>"
        f"<h2>Transcript</h2>{''.join(_line(t) for t in result['transcript'])}</html>"
    )
