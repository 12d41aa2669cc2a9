"use strict";
// The teams' console: each project with the notices the bank left for it (each marked read by a button),
// an invitation to join a team accepted or declined, its agents with their report cards, a job submitted
// from a form and followed to the end, and its results downloaded (the session and calls come from console.js).

const POLL_MS = 2000;
const FINISHED = new Set(["done", "failed", "cancelled"]);

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
      ["May ask", (scope.query_types || []).map((q) => QUERY_TYPES[q] || q).join(", ")],
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
    card.append(el("h3", "Ask the agents"), jobForm(project));
    card.append(el("h3", "Jobs"), region("jobs", "Jobs"));
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
  boxes.replaceChildren(...agents.map((a, n) => {
    const box = el("input", undefined, { type: "checkbox", name: "agents", value: a.id });
    box.checked = n < (project.scope.max_agents_per_job || 1);
    const label = el("label");
    label.append(box, "Agent " + a.id.slice(0, 8));
    return label;
  }));
  await loadJobs(project);
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

start();
