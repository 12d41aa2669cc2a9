"use strict";
// The coordinators' console: a study's funnel, drop-off by module, quality flags, participants by stage,
// the progress download and new invitations (the session and calls come from console.js).

const STAGES = {
  revoked: "revoked", expired: "expired", invited: "invited", started: "started", in_module: "in the interview",
  paused: "paused", finished: "reviewing the transcript", confirmed: "transcript confirmed", survey_done: "survey done",
  agent_built: "agent built", retest_due: "retest due", retest_done: "retest done", card: "report card",
  withdrew: "withdrew",
};
const FLAGS = { long: "long", short_answers: "short answers", audio: "audio" };
let progress = null;

function stageText(p) {
  if (p.stage === "in_module" || (p.stage === "paused" && p.module)) {
    return `${p.stage === "paused" ? "paused in" : "in"} module ${p.module} of ${p.modules}`;
  }
  return STAGES[p.stage] || p.stage;
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : ""; }

async function start() {
  const me = await openSession("studies",
    "Your account may not coordinate studies: the client it is linked to has no studies scope. Ask the bank's operator.");
  if (!me) return;
  for (const [value, label] of Object.entries(STAGES)) $("stage-filter").append(el("option", label, { value }));
  try { await loadStudies(); } catch (e) { if (e.message) say(e.message, true); }
}

async function loadStudies() {
  const studies = await call("GET", "/v1/studies");
  $("no-studies").hidden = studies.length > 0;
  $("study").replaceChildren(...studies.map((s) => el("option", s.name, { value: s.id })));
  if (studies.length) await loadStudy(studies[0].id);
}

async function loadStudy(id) {
  progress = await call("GET", "/v1/studies/" + id);
  const s = progress.study;
  $("study-facts").replaceChildren(...details([
    ["Script", `${s.script_key}, version ${s.script_version}`], ["Target", String(s.target_size)],
    ["Invited", String(progress.invited)], ["Expires", when(s.expires_at)],
    ["Panel", s.panel === "none" ? "none" : s.panel + (s.open_link ? " (open link active)" : "")],
  ]).childNodes);
  $("export").href = "/v1/studies/" + id + "/export";
  renderFunnel();
  renderModules();
  renderFlags();
  renderParticipants();
}

function renderFunnel() {
  const invited = Math.max(progress.invited, 1);
  $("funnel").tBodies[0].replaceChildren(...progress.funnel.map((step) => {
    const row = el("tr");
    const share = Math.round((100 * step.reached) / invited);
    const bar = el("span", undefined, { class: "bar", style: `width: ${Math.round(share * 0.75)}%`, "aria-hidden": "true" });
    const cell = el("td");
    cell.append(bar, " " + share + "%");
    row.append(el("th", STAGES[step.stage], { scope: "row" }), el("td", String(step.reached), { class: "number" }),
      el("td", String(progress.counts[step.stage] || 0), { class: "number" }), cell);
    return row;
  }));
  const gone = progress.counts.withdrew || 0;
  const unused = (progress.counts.revoked || 0) + (progress.counts.expired || 0);
  $("withdrew").textContent = `${gone} withdrew (counted only); ${unused} invitations revoked or expired unused.`;
}

function renderModules() {
  $("modules").tBodies[0].replaceChildren(...progress.modules.map((m) => {
    const row = el("tr");
    row.append(el("th", m.title, { scope: "row" }), el("td", String(m.reached), { class: "number" }),
      el("td", String(m.under_way), { class: "number" }), el("td", String(m.paused), { class: "number" }));
    return row;
  }));
}

function renderFlags() {
  const flagged = progress.participants.filter((p) => p.quality && p.quality.flags.length);
  $("no-flags").hidden = flagged.length > 0;
  $("flags").replaceChildren(...flagged.map((p) => el("li",
    `Invitation ${p.invitation} (${stageText(p)}): ${p.quality.flags.map((f) => FLAGS[f] || f).join(", ")}`)));
}

function renderParticipants() {
  const only = $("stage-filter").value;
  const shown = progress.participants.filter((p) => !only || p.stage === only);
  $("participants").tBodies[0].replaceChildren(...shown.map((p) => {
    const q = p.quality;
    const row = el("tr", undefined, { "data-invitation": String(p.invitation) });
    const flags = el("td");
    for (const f of (q && q.flags) || []) flags.append(el("span", FLAGS[f] || f, { class: "flag" }));
    row.append(
      el("th", String(p.invitation), { scope: "row" }), el("td", stageText(p)), el("td", when(p.since)),
      el("td", q ? `${Math.round(q.duration_s / 60)} (${Math.round(q.budget_s / 60)})` : "", { class: "number" }),
      el("td", q && q.words_per_answer !== null ? String(q.words_per_answer) : "", { class: "number" }),
      el("td", q && q.follow_up_share !== null ? Math.round(100 * q.follow_up_share) + "%" : "", { class: "number" }),
      flags);
    return row;
  }));
}

function download(name, text) {
  const link = el("a", undefined, { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: name });
  document.body.append(link);
  link.click();
  link.remove();
}

function csvCell(value) { return /[",\n]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value; }

$("study").addEventListener("change", async () => {
  try { await loadStudy($("study").value); } catch (e) { if (e.message) say(e.message, true); }
});
$("stage-filter").addEventListener("change", () => { if (progress) renderParticipants(); });
$("invite-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = $("study").value;
  try {
    const issued = await call("POST", "/v1/studies/" + id + "/invitations", { count: Number($("invite-count").value) });
    const lines = ["invitation,code,link", ...issued.map((i) => [i.invitation, i.code, i.link].map(String).map(csvCell).join(","))];
    download("invitations-" + id + ".csv", lines.join("\n") + "\n");
    say(`${issued.length} invitations created; their codes are in the file just downloaded.`);
    await loadStudy(id);
  } catch (e) { if (e.message) say(e.message, true); }
});
$("revoke").addEventListener("click", async () => {
  const id = $("study").value;
  try {
    const done = await call("POST", "/v1/studies/" + id + "/revocations", {});
    say(`${done.revoked} unused invitations revoked.`);
    await loadStudy(id);
  } catch (e) { if (e.message) say(e.message, true); }
});

start();
