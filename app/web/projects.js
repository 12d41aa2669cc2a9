"use strict";
// The teams' console: each project with the notices the bank left for it, its agents with their report
// cards, a job submitted from a form and followed to the end, and its results downloaded (the session
// and calls come from console.js).

const POLL_MS = 2000;
const FINISHED = new Set(["done", "failed", "cancelled"]);

async function start() {
  if (!(await openSession())) return;
  try {
    const projects = await call("GET", "/v1/projects");
    $("no-projects").hidden = projects.length > 0;
    $("projects").replaceChildren(...projects.map(projectCard));
    for (const project of projects) await fillProject(project);
  } catch (e) { if (e.message) say(e.message, true); }
}

function projectCard(project) {
  const card = el("article", undefined, { class: "card", "data-project": project.id, "aria-labelledby": "title-" + project.id });
  card.append(el("h2", project.title, { id: "title-" + project.id }));
  const scope = project.scope || {};
  const approved = project.status === "approved";
  card.append(details([
    ["Status", approved ? "Approved" : project.status === "submitted" ? "Waiting for review" : "Rejected"],
    ...(approved ? [
      ["May ask", (scope.query_types || []).map((q) => QUERY_TYPES[q] || q).join(", ")],
      ["Answers used", project.quota_used + " of " + scope.quota],
      ["Agents per job", String(scope.max_agents_per_job)],
      ["Until", scope.expires_at ? new Date(scope.expires_at).toLocaleDateString() : "no end"],
    ] : []),
    ["Team", project.members.join(", ")],
  ]));
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
  const notices = await call("GET", "/v1/projects/" + project.id + "/notices");
  card.querySelector(".notices").replaceChildren(...notices.map((n) => {
    const box = el("div", undefined, { class: "notice", role: "note" });
    box.append(el("strong", "A participant withdrew (" + new Date(n.created_at).toLocaleDateString() + "). "),
      document.createTextNode(n.notice + " Agents: " + n.agent_ids.join(", ") + "."));
    return box;
  }));
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
  const items = el("input", undefined, { type: "text", name: "items", placeholder: "GSS mnemonics: cappun, gunlaw" });
  const questions = el("textarea", undefined, { name: "questions", rows: "3", placeholder: "One question per line" });
  const chooseAgents = el("fieldset");
  chooseAgents.append(el("legend", "Agents"), el("div", undefined, { class: "inline agent-choice" }));
  form.append(field("What to ask", kind), field("Survey items (GSS)", items), field("Open questions", questions),
    chooseAgents, el("button", "Submit the job", { type: "submit" }));
  const showFields = () => {
    items.parentElement.hidden = kind.value !== "survey";
    questions.parentElement.hidden = kind.value !== "open";
  };
  kind.addEventListener("change", showFields);
  showFields();
  form.addEventListener("submit", (event) => submitJob(event, project, form));
  return form;
}

async function submitJob(event, project, form) {
  event.preventDefault();
  const data = new FormData(form);
  const agents = data.getAll("agents");
  const body = { kind: data.get("kind"), agents };
  if (body.kind === "survey") {
    body.instrument = "gss";
    body.items = String(data.get("items")).split(/[\s,]+/).map((i) => i.trim().toLowerCase()).filter(Boolean);
  } else {
    body.questions = String(data.get("questions")).split("\n").map((q) => q.trim()).filter(Boolean);
  }
  if (!agents.length) { say("Choose at least one agent.", true); return; }
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
  for (const h of ["Submitted", "Asked", "Progress", "Results"]) head.append(el("th", h, { scope: "col" }));
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
      for (const format of ["csv", "json"]) {
        const button = el("button", "Download " + format.toUpperCase(), { type: "button" });
        button.addEventListener("click", () => download(job, format));
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
    if (FINISHED.has(job.status)) { say("Job finished: " + job.done + " of " + job.total + " agents answered."); return; }
  }
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
      const rows = [["agent_id", "status", "key", "value", "reason", "withheld", "model", "validity"]];
      for (const r of results) for (const a of r.answers) {
        rows.push([r.agent_id, r.status, a.key, a.value, a.reason, a.withheld, (a.provenance || {}).model, r.validity.status]);
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

start();
