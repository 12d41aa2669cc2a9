"use strict";
// The teams' console: each project with the notices the bank left for it (each marked read by a button),
// an invitation to join a team accepted or declined, its agents with their report cards, a job submitted
// from a form and followed to the end, and its results downloaded; for a project approved for focus groups, a
// group run from a form, followed live turn by turn, and its report opened (the session and calls come from console.js).

const POLL_MS = 2000;
const FINISHED = new Set(["done", "failed", "cancelled"]);

const TYPE_NAMES = { ...QUERY_TYPES, focus_group: "Focus groups" };
const STATUS = { forming: "Waiting for the team to accept", submitted: "Waiting for review", approved: "Approved",
                 rejected: "Rejected" };
let me = null;

async function start() {
  me = await openSession();
  if (!me) return;
  try {
    const projects = await call("GET", "/v1/projects");
    $("no-projects").hidden = projects.length > 0;
    $("projects").replaceChildren(...projects.map(projectCard));
    for (const project of projects) await fillProject(project);
  } catch (e) { if (e.message) say(e.message, true); }
}

// An invitation to a project's team: nobody is a member before accepting.
function invitation(project) {
  const box = el("div", undefined, { class: "invitation", role: "group", "aria-label": "Invitation to " + project.title });
  box.append(el("p", "You are named on this project's team. You become a member only if you accept."));
  for (const [label, accept] of [["Accept", true], ["Decline", false]]) {
    const button = el("button", label + " the invitation", { type: "button" });
    button.addEventListener("click", async () => {
      try {
        await call("POST", "/v1/projects/" + project.id + "/membership", { accept });
        say(accept ? "You joined the team of " + project.title + "." : "You declined the invitation.");
        await start();
      } catch (e) { if (e.message) say(e.message, true); }
    });
    box.append(button);
  }
  return box;
}

// A notice, and until a member marks it read (a POST: reading the page changes nothing), the button that does.
function noticeBox(project, notice) {
  const box = el("div", undefined, { class: "notice", role: "note" });
  box.append(el("strong", "A participant withdrew (" + new Date(notice.created_at).toLocaleDateString() + "). "),
    document.createTextNode(notice.notice + " Agents: " + notice.agent_ids.join(", ") + "."));
  if (notice.first_read_at) {
    box.append(el("p", "Marked read " + new Date(notice.first_read_at).toLocaleString() + "."));
    return box;
  }
  const button = el("button", "Mark as read", { type: "button" });
  button.addEventListener("click", async () => {
    try {
      const marked = await call("POST", "/v1/projects/" + project.id + "/notices/" + notice.id + "/read");
      box.replaceWith(noticeBox(project, marked));
    } catch (e) { if (e.message) say(e.message, true); }
  });
  box.append(button);
  return box;
}

function projectCard(project) {
  const card = el("article", undefined, { class: "card", "data-project": project.id, "aria-labelledby": "title-" + project.id });
  card.append(el("h2", project.title, { id: "title-" + project.id }));
  const scope = project.scope || {};
  const approved = project.status === "approved";
  card.append(details([
    ["Status", STATUS[project.status] || project.status],
    ...(approved ? [
      ["May ask", (scope.query_types || []).map((q) => TYPE_NAMES[q] || q).join(", ")],
      ["Answers used", project.quota_used + " of " + scope.quota],
      ["Agents per job", String(scope.max_agents_per_job)],
      ["Until", scope.expires_at ? new Date(scope.expires_at).toLocaleDateString() : "no end"],
    ] : []),
    ["Team", project.members.join(", ") + (project.invited.length ? " (invited: " + project.invited.join(", ") + ")" : "")],
  ]));
  if (me && project.invited.includes(me.client_id)) {
    card.append(invitation(project));
    return card;
  }
  card.append(el("div", undefined, { class: "notices" }));
  if (approved) {
    // The tables scroll sideways on a narrow screen, and can be reached with the keyboard to do so.
    const region = (name, label) => el("div", undefined, { class: name + " scroll", tabindex: "0", role: "region",
                                                          "aria-label": label + " of " + project.title });
    card.append(el("h3", "Agents"), region("agents", "Agents"));
    const types = scope.query_types || [];
    if (types.some((q) => q !== "focus_group")) {
      card.append(el("h3", "Ask the agents"), jobForm(project));
      card.append(el("h3", "Jobs"), region("jobs", "Jobs"));
    }
    if (types.includes("focus_group")) {
      card.append(el("h3", "Run a focus group", { id: "groups-" + project.id }), groupForm(project),
        el("div", undefined, { class: "focus-groups" }));
    }
  }
  return card;
}

async function fillProject(project) {
  const card = document.querySelector(`article[data-project="${project.id}"]`);
  if (!card.querySelector(".notices")) return;  // an invitation: nothing to show before accepting
  const notices = await call("GET", "/v1/projects/" + project.id + "/notices");
  card.querySelector(".notices").replaceChildren(...notices.map((n) => noticeBox(project, n)));
  if (project.status !== "approved") return;
  const agents = await call("GET", "/v1/projects/" + project.id + "/agents");
  card.querySelector(".agents").replaceChildren(agentTable(agents));
  const boxes = card.querySelector(".agent-choice");
  if (boxes) {
    boxes.replaceChildren(...agents.map((a, n) => {
      const box = el("input", undefined, { type: "checkbox", name: "agents", value: a.id });
      box.checked = n < (project.scope.max_agents_per_job || 1);
      const label = el("label");
      label.append(box, "Agent " + a.id.slice(0, 8));
      return label;
    }));
    await loadJobs(project);
  }
  const seats = card.querySelector(".seat-choice");
  if (seats) {
    // Nobody is seated until the team chooses: each seat is an agent speaking for a real person.
    seats.replaceChildren(...agents.map((a) => {
      const box = el("input", undefined, { type: "checkbox", name: "seats", value: a.id });
      const label = el("label");
      label.append(box, "Agent " + a.id.slice(0, 8));
      return label;
    }));
    resumeGroups(project);
  }
}

function agentTable(agents) {
  const table = el("table");
  const head = el("tr");
  for (const h of ["Agent", "Version", "Report card"]) head.append(el("th", h, { scope: "col" }));
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  for (const agent of agents) {
    const card = agent.report_cards[0];
    const row = el("tr");
    row.append(el("td", agent.id), el("td", String(agent.version)),
      el("td", card && card.normalized_accuracy !== null
        ? "normalized accuracy " + card.normalized_accuracy.toFixed(2) + " on " + card.items + " " + card.instrument + " items"
        : "not validated yet"));
    table.tBodies[0].append(row);
  }
  return table;
}

function jobForm(project) {
  const form = el("form", undefined, { "aria-label": "A new job for " + project.title });
  form.dataset.key = crypto.randomUUID();  // one job per form, even if it is sent twice
  const kinds = (project.scope.query_types || []).filter((q) => q === "survey" || q === "open");
  const kind = el("select", undefined, { name: "kind" });
  kind.append(...kinds.map((q) => new Option(QUERY_TYPES[q], q)));
  // A label named by its own text only (wrapping a select would add its options to the name).
  const field = (label, input) => {
    input.id = input.name + "-" + project.id;
    const wrap = el("div");
    wrap.append(el("label", label, { for: input.id }), input);
    return wrap;
  };
  const instrument = el("input", undefined, { type: "text", name: "instrument", value: "gss" });
  const items = el("input", undefined, { type: "text", name: "items", placeholder: "GSS mnemonics: cappun, gunlaw" });
  const questions = el("textarea", undefined, { name: "questions", rows: "3", placeholder: "One question per line" });
  const chooseAgents = el("fieldset");
  chooseAgents.append(el("legend", "Agents"), el("div", undefined, { class: "inline agent-choice" }));
  const estimate = el("button", "Estimate the cost", { type: "button" });
  const estimated = el("p", undefined, { class: "estimate", role: "status" });
  form.append(field("What to ask", kind), field("Instrument (gss, or your project's own as key@version)", instrument),
    field("Survey items", items), field("Open questions", questions),
    chooseAgents, estimate, el("button", "Submit the job", { type: "submit" }), estimated);
  estimate.addEventListener("click", () => estimateJob(project, form, estimated));
  // What was estimated is no longer what the form asks once the form changes.
  form.addEventListener("input", () => { estimated.textContent = ""; });
  const showFields = () => {
    items.parentElement.hidden = instrument.parentElement.hidden = kind.value !== "survey";
    questions.parentElement.hidden = kind.value !== "open";
  };
  kind.addEventListener("change", showFields);
  showFields();
  form.addEventListener("submit", (event) => submitJob(event, project, form));
  return form;
}

// The job the form asks for, or null (and why) when it names no agent.
function jobBody(form) {
  const data = new FormData(form);
  const agents = data.getAll("agents");
  const body = { kind: data.get("kind"), agents };
  if (body.kind === "survey") {
    body.instrument = String(data.get("instrument") || "").trim() || "gss";
    body.items = String(data.get("items")).split(/[\s,]+/).map((i) => i.trim().toLowerCase()).filter(Boolean);
  } else {
    body.questions = String(data.get("questions")).split("\n").map((q) => q.trim()).filter(Boolean);
  }
  if (!agents.length) { say("Choose at least one agent.", true); return null; }
  return body;
}

// A dry run: what the job would cost, before it is submitted (nothing is asked or queued).
async function estimateJob(project, form, shown) {
  const body = jobBody(form);
  if (!body) return;
  try {
    const e = await fetchJob("POST", "/v1/projects/" + project.id + "/jobs?dry_run=true", body, {});
    const price = e.price === null ? "no price set by the bank's operator"
      : e.price === 0 && !e.currency ? "free" : e.price.toFixed(4) + " " + (e.currency || "");
    const time = e.seconds === null ? "time unknown until the model has answered here"
      : "about " + Math.ceil(e.seconds) + " s at " + e.calls_in_flight + " call(s) at once";
    shown.textContent = "Estimate: " + e.calls + " model call(s) for " + e.answers + " answer(s) (" + e.answers_stored
      + " already stored); " + e.prompt_tokens + " prompt tokens (" + e.cached_tokens + " from the cache), "
      + e.completion_tokens + " completion tokens; price: " + price + "; " + time + ".";
  } catch (e) { if (e.message) say(e.message, true); }
}

async function submitJob(event, project, form) {
  event.preventDefault();
  const body = jobBody(form);
  if (!body) return;
  try {
    const headers = { "Idempotency-Key": form.dataset.key };
    const job = await fetchJob("POST", "/v1/projects/" + project.id + "/jobs", body, headers);
    form.dataset.key = crypto.randomUUID();
    say("Job submitted for " + job.total + " agent(s); it runs in the background.");
    await loadJobs(project);
    follow(project, job.id);
  } catch (e) { if (e.message) say(e.message, true); }
}

// ``call`` with extra headers (the job's idempotency key).
async function fetchJob(method, path, body, extra) {
  const response = await fetch(path, { method, credentials: "same-origin", cache: "no-store",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, ...extra }, body: JSON.stringify(body) });
  if (response.status === 401) { showSignIn("Your session has ended. Sign in again."); throw new Error(""); }
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((answer.error && answer.error.message) || "The bank could not do this (" + response.status + ").");
  return answer;
}

async function loadJobs(project) {
  const jobs = await call("GET", "/v1/projects/" + project.id + "/jobs");
  const table = el("table");
  const head = el("tr");
  for (const h of ["Submitted", "Asked", "Progress", "Download results"]) head.append(el("th", h, { scope: "col" }));
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  for (const job of jobs) {
    const row = el("tr", undefined, { "data-job": job.id });
    const asked = job.request.kind === "survey" ? (job.request.items || []).join(", ")
      : job.request.kind === "open" ? (job.request.questions || []).length + " question(s)" : job.request.kind;
    const progress = el("td", job.done + " of " + job.total + " agents" + (FINISHED.has(job.status) ? " — " + job.status : ""),
      { class: "progress" });
    const downloads = el("td");
    if (job.done > 0) {
      // CSV and JSON made here from the results; Stata and SPSS are the bank's labelled files (one row per
      // agent, each item's codes with their labels). Short names keep the row narrow on a small screen.
      for (const [format, name, save] of [["csv", "CSV", download], ["json", "JSON", download],
                                          ["dta", "Stata", downloadFile], ["sav", "SPSS", downloadFile]]) {
        const button = el("button", name, { type: "button", "aria-label": "Download " + name });
        button.addEventListener("click", () => save(job, format));
        downloads.append(button);
      }
    }
    row.append(el("td", new Date(job.created_at).toLocaleString()), el("td", asked), progress, downloads);
    table.tBodies[0].append(row);
  }
  document.querySelector(`article[data-project="${project.id}"] .jobs`).replaceChildren(jobs.length ? table : el("p", "No job yet."));
}

async function follow(project, jobId) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    let job;
    try { job = await call("GET", "/v1/jobs/" + jobId); } catch (e) { if (e.message) say(e.message, true); return; }
    await loadJobs(project).catch(() => {});
    if (FINISHED.has(job.status)) { say("Job finished: " + job.done + " of " + job.total + " agents answered." + spent(job)); return; }
  }
}

// What the job's answers used, beside the estimate made before it was submitted (if one was).
function spent(job) {
  const u = job.used;
  if (!u) return "";
  const e = job.estimate;
  return " The model made " + u.answers_made + " answer(s): " + u.prompt_tokens + " prompt tokens (" + u.cached_tokens
    + " from the cache), " + u.completion_tokens + " completion tokens"
    + (e ? "; estimated " + e.prompt_tokens + " prompt (" + e.cached_tokens + " from the cache), " + e.completion_tokens
      + " completion." : ".");
}

function csvCell(value) {
  const text = value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
  return /[",\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
}

async function download(job, format) {
  try {
    const results = await call("GET", "/v1/jobs/" + job.id + "/results");
    let text = JSON.stringify(results, null, 2);
    if (format === "csv") {
      const rows = [["agent_id", "status", "key", "value", "label", "reason", "withheld", "model", "validity"]];
      for (const r of results) for (const a of r.answers) {
        rows.push([r.agent_id, r.status, a.key, a.value, a.label, a.reason, a.withheld, (a.provenance || {}).model,
          r.validity.status]);
      }
      text = rows.map((row) => row.map(csvCell).join(",")).join("\n") + "\n";
    }
    const link = el("a", undefined, { download: "job-" + job.id + "." + format });
    link.href = URL.createObjectURL(new Blob([text], { type: format === "csv" ? "text/csv" : "application/json" }));
    document.body.append(link);
    link.click();
    link.remove();
  } catch (e) { if (e.message) say(e.message, true); }
}

async function downloadFile(job, format) {
  let response;
  try {
    response = await fetch("/v1/jobs/" + job.id + "/results?format=" + format, { cache: "no-store", credentials: "same-origin" });
  } catch (e) { say("The bank cannot be reached. Check your connection and try again.", true); return; }
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    say((error.error && error.error.message) || "The bank could not do this (" + response.status + ").", true);
    return;
  }
  const link = el("a", undefined, { download: "job-" + job.id + "." + format });
  link.href = URL.createObjectURL(await response.blob());
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

// --- focus groups ----------------------------------------------------------------------------------------
// A moderated group of 2 to 12 of the project's agents: the team's own guide (topics and questions, probes, a
// turn budget) and stimulus; its cost estimated by a dry run, then followed live until it ends, and its report.

const MIN_SEATS = 2, MAX_SEATS = 12;
const GROUP_ENDED = new Set(["done", "stopped", "failed"]);
const GROUP_STATUS = { queued: "Waiting for a worker to start it", running: "Running", done: "Ended",
                       stopped: "Stopped: the project's approval lapsed", failed: "Failed: the bank could not finish it" };
const STIMULUS_KINDS = [["text", "A text"], ["concept", "A concept"], ["image_description", "The description of an image"]];

// A labelled field, with a hint read with it (``aria-describedby``) when there is one.
function groupField(project, label, input, hint) {
  input.id = "group-" + input.name + "-" + project.id;
  const wrap = el("div", undefined, { class: "field" });
  wrap.append(el("label", label, { for: input.id }), input);
  if (hint) {
    const note = el("p", hint, { class: "note", id: input.id + "-hint" });
    input.setAttribute("aria-describedby", note.id);
    wrap.append(note);
  }
  return wrap;
}

function groupForm(project) {
  const most = Math.min(MAX_SEATS, project.scope.max_agents_per_job || MAX_SEATS);
  const form = el("form", undefined, { class: "group-form", "aria-labelledby": "groups-" + project.id });
  form.dataset.key = crypto.randomUUID();  // one group per form, even if it is sent twice
  const seats = el("fieldset");
  seats.append(el("legend", "Seats: choose " + MIN_SEATS + " to " + most + " agents"),
    el("div", undefined, { class: "inline seat-choice" }));
  const kind = el("select", undefined, { name: "stimulus_kind" });
  kind.append(...STIMULUS_KINDS.map(([value, name]) => new Option(name, value)));
  const stimulus = el("textarea", undefined, { name: "stimulus", rows: "3", required: "", maxlength: "4000" });
  const guide = el("textarea", undefined, { name: "guide", rows: "5", required: "",
                                            placeholder: "First impressions:\nWhat is your first reaction?" });
  const probes = el("textarea", undefined, { name: "probes", rows: "2", placeholder: "Can you say more about that?" });
  const perQuestion = el("input", undefined, { type: "number", name: "probes_per_question", min: "0", max: "5", value: "1",
                                               inputmode: "numeric" });
  const turns = el("input", undefined, { type: "number", name: "max_turns", min: "2", max: "200", value: "12",
                                         required: "", inputmode: "numeric" });
  const guideSet = el("fieldset");
  guideSet.append(el("legend", "The moderator's guide"),
    groupField(project, "Topics and questions, one per line", guide,
      "A line ending in a colon names a topic; the lines under it are its questions (up to 10 topics of 10 "
      + "questions). The moderator asks only these words."),
    groupField(project, "Probes, one per line (optional)", probes,
      "Follow-ups the moderator may ask a seat about something said."),
    groupField(project, "Probes per question", perQuestion),
    groupField(project, "Turn budget (agent turns in all)", turns,
      "Each agent turn uses one answer of the project's quota; turns the group does not take are given back."));
  const estimate = el("button", "Estimate the cost", { type: "button" });
  const shown = el("p", undefined, { class: "group-estimate", role: "status" });
  form.append(seats, groupField(project, "The stimulus is", kind),
    groupField(project, "Stimulus: what the group discusses", stimulus), guideSet,
    estimate, el("button", "Start the group", { type: "submit" }), shown);
  estimate.addEventListener("click", () => estimateGroup(project, form, shown));
  // What was estimated is no longer what the form asks once the form changes.
  form.addEventListener("input", () => { shown.textContent = ""; shown.className = "group-estimate"; });
  form.addEventListener("submit", (event) => startGroup(event, project, form, shown));
  return form;
}

// The guide's lines as topics: a line ending in a colon starts a topic, the others are its questions.
function guideTopics(text) {
  const topics = [];
  for (const line of String(text).split("\n").map((l) => l.trim()).filter(Boolean)) {
    if (line.endsWith(":") && line.length > 1) topics.push({ title: line.slice(0, -1).trim(), questions: [] });
    else {
      if (!topics.length) topics.push({ title: "Discussion", questions: [] });
      topics[topics.length - 1].questions.push(line);
    }
  }
  return topics;
}

// The group the form asks for, or a sentence saying what is missing.
function groupBody(project, form) {
  const data = new FormData(form);
  const seats = data.getAll("seats");
  const most = Math.min(MAX_SEATS, project.scope.max_agents_per_job || MAX_SEATS);
  if (seats.length < MIN_SEATS || seats.length > most) {
    return "Choose " + MIN_SEATS + " to " + most + " agents for the seats (" + seats.length + " chosen).";
  }
  const topics = guideTopics(data.get("guide"));
  const empty = topics.find((t) => !t.questions.length);
  if (!topics.length) return "Write at least one question for the guide.";
  if (empty) return "The topic \u201c" + empty.title + "\u201d has no question under it.";
  const probes = String(data.get("probes")).split("\n").map((p) => p.trim()).filter(Boolean);
  return {
    kind: "focus_group", seats,
    guide: { topics, probes, max_turns: Number(data.get("max_turns")),
             probes_per_question: probes.length ? Number(data.get("probes_per_question")) : 0 },
    stimulus: { kind: data.get("stimulus_kind"), text: String(data.get("stimulus")).trim() },
  };
}

function tell(shown, text, isError) {
  shown.textContent = text;
  shown.className = "group-estimate" + (isError ? " error" : "");
}

function price(e) {
  return e.price === null ? "no price set by the bank's operator"
    : e.price === 0 && !e.currency ? "free" : e.price.toFixed(4) + " " + (e.currency || "");
}

// A dry run: what the group would cost, round by round, before it starts (nothing is asked or queued).
async function estimateGroup(project, form, shown) {
  if (!form.reportValidity()) return;
  const body = groupBody(project, form);
  if (typeof body === "string") { tell(shown, body, true); return; }
  try {
    const e = await fetchJob("POST", "/v1/projects/" + project.id + "/focus-groups?dry_run=true", body, {});
    const rounds = e.rounds || [];
    const turns = rounds.reduce((sum, r) => sum + r.agent_turns, 0);
    const time = e.seconds === null ? "time unknown until the model has answered here"
      : "about " + Math.ceil(e.seconds) + " s";
    tell(shown, "Estimate: " + turns + " agent turn(s) in " + rounds.length + " round(s), " + e.calls
      + " model call(s) (the moderator's and the seats'); " + e.prompt_tokens + " prompt tokens (" + e.cached_tokens
      + " from the cache), " + e.completion_tokens + " completion tokens; price: " + price(e) + "; " + time + ". "
      + rounds.map((r) => "Round " + r.round + ": " + r.agent_turns + " turn(s), " + r.calls + " call(s)").join("; ")
      + ". The turn budget (" + body.guide.max_turns + ") is held from the project's quota while the group runs.");
  } catch (e) { if (e.message) tell(shown, e.message, true); }
}

async function startGroup(event, project, form, shown) {
  event.preventDefault();
  const body = groupBody(project, form);
  if (typeof body === "string") { tell(shown, body, true); return; }
  try {
    const group = await fetchJob("POST", "/v1/projects/" + project.id + "/focus-groups", body,
                                 { "Idempotency-Key": form.dataset.key });
    form.dataset.key = crypto.randomUUID();
    tell(shown, "The focus group is queued with " + group.seats.length + " seats; follow it below.");
    followGroup(project, group, true);
  } catch (e) { if (e.message) tell(shown, e.message, true); }
}

// The project's newest groups, as the bank lists them (how each stands, none of their words), each then read
// and followed here; a reload, or another member's browser, shows the same groups.
const GROUPS_SHOWN = 5;

async function resumeGroups(project) {
  let listed = [];
  try { listed = await call("GET", "/v1/projects/" + project.id + "/focus-groups"); } catch (e) { return; }
  for (const g of listed.slice(0, GROUPS_SHOWN).reverse()) {
    try { followGroup(project, await call("GET", "/v1/focus-groups/" + g.id), false); } catch (e) { /* gone */ }
  }
}

// One turn in words: who speaks (the moderator, or a seat), and what.
function turnText(t) {
  if (t.kind === "moderator") {
    const to = t.seat ? " to " + t.seat : "";
    const about = t.action === "probe" && t.about !== null && t.about >= 0 ? " (following up turn " + t.about + ")" : "";
    return ["Moderator" + to + about, t.text];
  }
  if (t.kind === "left") return [t.speaker, "(left the group: its participant withdrew)"];
  if (t.kind === "silence") return [t.speaker, "(silence: withheld)"];
  if (t.status === "withdrawn") return [t.speaker, "(words removed: its participant withdrew)"];
  return [t.speaker, t.text];
}

function turnItem(t) {
  const [who, said] = turnText(t);
  const quiet = t.kind === "silence" || t.kind === "left" || (t.kind === "agent" && t.status !== "spoken");
  const item = el("li", undefined, { "data-turn": String(t.number), class: "turn-" + t.kind + (quiet ? " quiet" : "") });
  item.value = t.number;
  item.append(el("strong", who + ": "), document.createTextNode(said || ""));
  return item;
}

function followGroup(project, group, focus) {
  const list = document.querySelector(`article[data-project="${project.id}"] .focus-groups`);
  if (!list || list.querySelector(`[data-group="${group.id}"]`)) return;
  const heading = "heading-" + group.id;
  const box = el("section", undefined, { class: "group", "data-group": group.id, "aria-labelledby": heading });
  box.append(el("h4", "Focus group " + group.id.slice(0, 8), { id: heading, tabindex: "-1" }));
  const status = el("p", undefined, { class: "group-status", role: "status" });
  const seats = el("ul", undefined, { class: "seats", "aria-label": "Seats" });
  const transcript = el("ol", undefined, { class: "transcript", "aria-live": "polite", "aria-label": "Transcript" });
  const links = el("p", undefined, { class: "group-links", hidden: "" });
  const path = "/v1/focus-groups/" + group.id + "/result";
  links.append(el("a", "Open the report (new tab)", { class: "button", href: path + "?format=html", target: "_blank",
                                            rel: "noopener" }),
    el("a", "Download the JSON", { class: "button", href: path + "?format=json",
                                   download: "focus-group-" + group.id + ".json" }));
  box.append(status, seats, el("h5", "Transcript"), transcript, links);
  list.prepend(box);
  if (focus) box.querySelector("h4").focus();
  showGroup(box, group);
  if (!GROUP_ENDED.has(group.status)) pollGroup(box, group.id);
}

// The group as read now: its status, its seats, and the turns not shown yet (a turn changed since, e.g. words
// removed when a participant withdrew, is redrawn in its place). Only new turns are announced.
function showGroup(box, group) {
  const agentTurns = group.transcript.filter((t) => t.kind === "agent" || t.kind === "silence").length;
  const ended = GROUP_ENDED.has(group.status);
  box.querySelector(".group-status").textContent = (GROUP_STATUS[group.status] || group.status) + " — "
    + agentTurns + " agent turn(s)" + (ended ? " in all" : " so far") + (group.model ? ", on the model " + group.model : "") + ". Simulated: the "
    + "seats are generative agents, not the people.";
  box.querySelector(".seats").replaceChildren(...group.seats.map((s) => el("li",
    s.seat + ": agent " + s.agent_id.slice(0, 8) + (s.status === "active" ? "" : " (left the group)"))));
  const transcript = box.querySelector(".transcript");
  for (const t of group.transcript) {
    const item = turnItem(t);
    const shown = transcript.querySelector(`li[data-turn="${t.number}"]`);
    if (!shown) transcript.append(item);
    else if (shown.textContent !== item.textContent) shown.replaceWith(item);
  }
  if (ended) box.querySelector(".group-links").hidden = false;
}

async function pollGroup(box, id) {
  for (let failures = 0; box.isConnected && failures < 5;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    let group;
    try { group = await call("GET", "/v1/focus-groups/" + id); failures = 0; }
    catch (e) {
      if (!e.message) return;  // signed out: the sign-in step shows
      failures++;
      box.querySelector(".group-status").textContent = e.message + (failures < 5 ? " Trying again." : " Reload the page to try again.");
      continue;
    }
    showGroup(box, group);
    if (GROUP_ENDED.has(group.status)) return;
  }
}

start();
