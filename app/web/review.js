"use strict";
// The reviewers' console: decide applications with their scope, and release or keep the answers the
// output check withheld (the session and calls come from console.js).

const REASONS = { verbatim: "repeats a participant's words", canary: "contains the agent's canary",
                  deny_list: "names someone on the agent's deny-list" };
let titles = new Map();  // project id → title, for the withheld answers

async function start() {
  const me = await openSession("review",
    "Your account may not review: the client it is linked to has no review scope. Ask the bank's operator.");
  if (!me) return;
  try { await loadApplications(); await loadWithheld(); } catch (e) { if (e.message) say(e.message, true); }
}

async function loadApplications() {
  const all = await call("GET", "/v1/projects");
  titles = new Map(all.map((p) => [p.id, p.title]));
  const waiting = all.filter((p) => p.status === "submitted");
  $("no-applications").hidden = waiting.length > 0;
  $("applications").replaceChildren(...waiting.map(applicationCard));
}

function applicationCard(project) {
  const card = el("article", undefined, { class: "card", "data-project": project.id });
  const titleId = "project-" + project.id;
  card.append(el("h3", project.title, { id: titleId }));
  const asked = project.requested || {};
  const agents = asked.agents ? asked.agents.length + " named agents" : "any agent";
  card.append(details([
    ["Purpose", project.purpose], ["Potential harms", project.harms], ["Team", project.members.join(", ")],
    ["Asks for", agents + "; " + (asked.query_types || []).map((q) => QUERY_TYPES[q] || q).join(", ")],
    ["Approvals", project.approvals.length + " of " + project.approvals_needed],
  ]));
  const form = el("form", undefined, { "aria-labelledby": titleId });
  const scope = el("fieldset");
  scope.append(el("legend", "Scope of an approval"));
  const types = el("div", undefined, { class: "inline" });
  for (const q of asked.query_types || ["survey"]) {
    const box = el("input", undefined, { type: "checkbox", name: "query_types", value: q });
    box.checked = true;
    const label = el("label");
    label.append(box, QUERY_TYPES[q] || q);
    types.append(label);
  }
  const expiry = new Date(Date.now() + 180 * 86400000).toISOString().slice(0, 10);
  const fields = el("div", undefined, { class: "fields" });
  const field = (label, input) => { const wrap = el("div"); const l = el("label", label); l.append(input); wrap.append(l); return wrap; };
  fields.append(
    field("Agents per job", el("input", undefined, { type: "number", name: "per_job", min: "1", max: "500", value: "50" })),
    field("Answers in all (quota)", el("input", undefined, { type: "number", name: "quota", min: "1", value: "1000" })),
    field("Expires on", el("input", undefined, { type: "date", name: "expires", value: expiry })),
  );
  const agentIds = el("textarea", undefined, { name: "agents", rows: "2",
    placeholder: asked.agents ? "as asked: " + asked.agents.length + " agents" : "as asked: any agent" });
  scope.append(types, fields, field("Only these agents (one id per line; empty: as asked)", agentIds),
    field("Note to the team", el("textarea", undefined, { name: "note", rows: "2" })));
  const own = el("fieldset", undefined, { class: "instruments" });
  own.hidden = true;
  loadInstruments(project, own);
  const approve = el("button", "Approve", { type: "submit", value: "approve" });
  const reject = el("button", "Reject", { type: "submit", value: "reject" });
  form.append(scope, own, approve, reject);
  form.addEventListener("submit", (event) => decide(event, project, form));
  card.append(form);
  return card;
}

// The project's own instruments, every item as it will be asked: a version is approved only if ticked.
async function loadInstruments(project, box) {
  let versions = [];
  try { versions = await call("GET", "/v1/projects/" + project.id + "/instruments"); } catch (e) { return; }
  if (!versions.length) return;
  box.append(el("legend", "The project's own instruments: tick each version you approve, as you read it"));
  for (const v of versions) {
    const tick = el("input", undefined, { type: "checkbox", name: "instruments", value: v.ref });
    const label = el("label");
    label.append(tick, v.ref + " — " + v.definition.title);
    const items = el("ul");
    for (const item of v.definition.items) {
      const options = (item.options || []).map((o) => o.code + " = " + o.label).join("; ");
      const range = item.type === "scale" ? item.low + " (" + item.low_label + ") to " + item.high + " (" + item.high_label + ")"
        : item.type === "numeric" ? item.minimum + " to " + item.maximum : options;
      items.append(el("li", item.key + " (" + item.type + "): " + (item.vignette ? item.vignette + " " : "") + item.question
        + " [" + range + "]"));
    }
    box.append(label, items);
  }
  box.hidden = false;
}

async function decide(event, project, form) {
  event.preventDefault();
  const approve = event.submitter && event.submitter.value === "approve";
  const data = new FormData(form);
  const narrowed = String(data.get("agents") || "").split(/[\s,]+/).filter(Boolean);
  const body = {
    approve, note: String(data.get("note") || ""), agents: narrowed.length ? narrowed : (project.requested || {}).agents || null,
    query_types: data.getAll("query_types"), max_agents_per_job: Number(data.get("per_job")),
    quota: Number(data.get("quota")), expires_at: data.get("expires") ? data.get("expires") + "T23:59:59Z" : null,
    instruments: data.getAll("instruments"),
  };
  if (approve && !body.query_types.length) { say("Choose at least one kind of query to approve.", true); return; }
  try {
    const decided = await call("POST", "/v1/projects/" + project.id + "/decision", body);
    const waiting = decided.approvals_needed - decided.approvals.length;
    say(!approve ? "Rejected “" + project.title + "”."
      : decided.status === "approved" ? "Approved “" + project.title + "”."
      : "Your approval of “" + project.title + "” is recorded; " + waiting + " more reviewer(s) must approve.");
    await loadApplications();
  } catch (e) { if (e.message) say(e.message, true); }
}

async function loadWithheld() {
  const held = await call("GET", "/v1/review/withheld");
  $("no-withheld").hidden = held.length > 0;
  $("withheld").replaceChildren(...held.map(withheldCard));
}

function withheldCard(held) {
  const card = el("article", undefined, { class: "card", "data-withheld": String(held.id) });
  card.append(el("h3", "Withheld answer " + held.id, { id: "held-" + held.id }));
  card.append(el("p", "Why: " + held.reasons.map((r) => REASONS[r] || r).join("; "), { class: "reasons" }));
  card.append(details([["Project", titles.get(held.project_id) || held.project_id], ["Job", held.job_id], ["Held since", new Date(held.created_at).toLocaleString()]]));
  if (held.answer) {
    const marks = held.answer.highlights || {};
    card.append(el("p", "The answer (what tripped the check is marked):"),
      marked(String(held.answer.value), typeof held.answer.value === "string" ? marks.value : [], "div", "answer"));
    if (held.answer.reason) {
      const reason = marked(held.answer.reason, marks.reason, "p");
      reason.prepend("The agent's reason: ");
      card.append(reason);
    }
  } else {
    card.append(el("p", "Its participant withdrew: the answer can no longer be read, and can only be kept."));
  }
  const group = el("div", undefined, { role: "group", "aria-labelledby": "held-" + held.id });
  const release = el("button", "Release to the team", { type: "button" });
  const keep = el("button", "Keep withheld", { type: "button" });
  release.disabled = !held.answer;
  release.addEventListener("click", () => decideHeld(held, "release"));
  keep.addEventListener("click", () => decideHeld(held, "keep"));
  group.append(release, keep);
  card.append(group);
  return card;
}

// ``text`` with the character ranges in ``ranges`` wrapped in <mark> (built as nodes, never as HTML).
function marked(text, ranges, tag, className) {
  const node = el(tag, undefined, className ? { class: className } : {});
  let at = 0;
  for (const [start, end] of ranges || []) {
    node.append(document.createTextNode(text.slice(at, start)), el("mark", text.slice(start, end)));
    at = end;
  }
  node.append(document.createTextNode(text.slice(at)));
  return node;
}

async function decideHeld(held, decision) {
  try {
    await call("POST", "/v1/review/withheld/" + held.id, { decision });
    say(decision === "release" ? "Answer " + held.id + " released to its team." : "Answer " + held.id + " kept withheld.");
    await loadWithheld();
  } catch (e) { if (e.message) say(e.message, true); }
}

start();
