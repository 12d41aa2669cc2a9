"use strict";
// The open tier's explorer: sign in with an API client, choose an item and up to two breakdowns, see
// the table as a chart with intervals (weighted or not), download it, and copy the query as code.

const TOKEN_KEY = "agentbank.explore.token";  // sessionStorage only: gone when the tab closes

const $ = (id) => document.getElementById(id);
let items = [];
let released = [];  // the items of the chosen instrument that the release in force holds tables for
let breakdowns = [];
let shown = null;  // the query whose table is on the page
let sessionCsrf = "";  // set when signed in through the institution (a console session's cookie)

function say(text, isError) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

function pct(x) { return (100 * x).toFixed(1) + "%"; }
function interval(pair) { return pair ? pct(pair[0]) + "–" + pct(pair[1]) : ""; }
function titleOf(key) { const b = breakdowns.find((b) => b.key === key); return b ? b.title : key; }

async function signIn(event) {
  event.preventDefault();
  say("Signing in…");
  const id = $("client-id").value.trim(), secret = $("client-secret").value;
  let response;
  try {
    // The credentials go in the form (client_secret_post), not in Basic: a refused Basic login
    // would make the browser ask for a password in a dialog of its own.
    const form = new URLSearchParams({ grant_type: "client_credentials", scope: "aggregate:read",
                                       client_id: id, client_secret: secret });
    response = await fetch("/oauth/token", { method: "POST", cache: "no-store", body: form });
  } catch (e) { say("The bank cannot be reached. Check your connection and try again.", true); return; }
  $("client-secret").value = "";
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    say(body.error === "invalid_scope"
      ? "This client may not read the open tier: it has no aggregate:read scope."
      : "The client id or secret is not recognised.", true);
    return;
  }
  const token = await response.json();
  sessionStorage.setItem(TOKEN_KEY, token.access_token);
  await start();
}

async function signOut(text) {
  if (sessionCsrf) {  // a console session: end it at the bank too
    await fetch("/signout", { method: "POST", headers: { "X-CSRF-Token": sessionCsrf } }).catch(() => {});
    sessionCsrf = "";
  }
  sessionStorage.removeItem(TOKEN_KEY);
  $("explore-step").hidden = true;
  $("signin-step").hidden = false;
  say(text || "Signed out.");
}

// A call with the tab's token; an error reads as plain words (a lapsed token signs out).
async function call(path) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = token ? { "Authorization": "Bearer " + token } : {};  // else the console session's cookie
  let response;
  try { response = await fetch(path, { headers, cache: "no-store" }); }
  catch (e) { throw new Error("The bank cannot be reached. Check your connection and try again."); }
  if (response.status === 401) { signOut("Your session has ended. Sign in again."); throw new Error(""); }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    const error = new Error(response.status === 403 ? "This client may not read the open tier."
      : (body.error && body.error.message) || "The bank could not answer (" + response.status + ").");
    error.code = body.error && body.error.code;
    throw error;
  }
  return response;
}

// The bank's state (public, counts only): how far along it is, and the demo's settings where in force.
let bankState = null;
let waitingForRelease = null;  // the timer that checks for the first release while a table waits for it

async function readState() {
  try {
    const response = await fetch("/v1/status", { cache: "no-store" });
    if (response.ok) bankState = await response.json();
  } catch (e) { /* the table's own call says when the bank cannot be reached */ }
  const state = bankState;
  $("bank-state").textContent = state ? state.says.slice(0, 2).join(" ") : "";
  $("demo-settings").hidden = !(state && state.demo);
  $("demo-settings-note").textContent = state && state.demo ? state.demo.note : "";
  return state;
}

// A table whose every group is hidden, from a bank still building agents: shown again by itself once a
// later release is cut (with more agents, the groups may reach k beside the noise).
function watchNextRelease(q, release) {
  clearTimeout(waitingForRelease);
  waitingForRelease = setTimeout(async () => {
    if (shown !== q) return;  // another table was asked for
    const now = await readState();
    if (now && now.release && now.release.id > release) await showQuery(q);
    else if (now && now.building > 0) watchNextRelease(q, release);
  }, 15000);
}

// Before the first release a table cannot be shown: say how far along the bank is, and show the table
// by itself once the release is cut.
async function waitForRelease(q) {
  const state = await readState();
  const progress = state ? state.says[1] : "The open tier has no release yet.";
  say(progress + " This page shows the table once the first release is cut.");
  clearTimeout(waitingForRelease);
  waitingForRelease = setTimeout(async () => {
    const now = await readState();
    if (now && now.release) { await itemsLoading; await loadItems(); await showQuery(q); }
    else if (shown === q) waitForRelease(q);  // still the table asked for
  }, 15000);
}

async function start() {
  try {
    const [instruments, known] = await Promise.all([
      call("/v1/open/instruments").then((r) => r.json()), call("/v1/open/breakdowns").then((r) => r.json())]);
    breakdowns = known;
    $("instrument").replaceChildren(...instruments.map((i) => new Option(i.title + " (" + i.items + " items)", i.key)));
    const none = () => new Option("(none)", "");
    $("by1").replaceChildren(none(), ...breakdowns.map((b) => new Option(b.title, b.key)));
    $("signin-step").hidden = true;
    $("explore-step").hidden = false;
    say("");
    await Promise.all([loadItems(), readState()]);
  } catch (e) { if (e.message) say(e.message, true); }
}

// The item list of the chosen instrument; a table asked for while it loads waits for it.
let itemsLoading = Promise.resolve();

function loadItems() {
  itemsLoading = (async () => {
    const key = $("instrument").value;
    const [listed, instruments] = await Promise.all([
      call("/v1/open/instruments/" + key + "/items").then((r) => r.json()),
      call("/v1/open/instruments").then((r) => r.json())]);
    const chosen = instruments.find((i) => i.key === key);
    released = chosen ? chosen.released : [];
    // The items the release holds come first: a newcomer's first table is one that exists.
    items = [...listed.filter((i) => released.includes(i.key)), ...listed.filter((i) => !released.includes(i.key))];
    filterItems();
  })();
  return itemsLoading;
}

function filterItems() {
  const words = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = items.filter((i) => words.every((w) => i.key.toLowerCase().includes(w) || i.question.toLowerCase().includes(w)));
  const short = (q) => (q.length > 70 ? q.slice(0, 69) + "…" : q) || "(no wording in the codebook)";
  const mark = (i) => (released.includes(i.key) ? " (in the release)" : "");
  $("item").replaceChildren(...matches.slice(0, 300).map((i) => new Option(i.key + mark(i) + " — " + short(i.question), i.key)));
  if (matches.length) $("item").selectedIndex = 0;
}

function chooseFirst() {
  const first = $("by1").value;
  const none = new Option("(none)", "");
  $("by2").replaceChildren(none, ...breakdowns.filter((b) => b.key !== first).map((b) => new Option(b.title, b.key)));
  $("by2").disabled = !first;
}

function query() {
  const dims = [$("by1").value, $("by2").value].filter(Boolean);
  return { instrument: $("instrument").value, item: $("item").value, dims, weighted: $("weighted").checked };
}

function tableUrl(q, format) {
  const params = new URLSearchParams();
  if (q.dims.length) params.set("breakdowns", q.dims.join(","));
  if (format) params.set("format", format);
  const rest = params.toString();
  return "/v1/open/instruments/" + q.instrument + "/items/" + q.item + "/distribution" + (rest ? "?" + rest : "");
}

async function show(event) {
  event.preventDefault();
  try { await itemsLoading; } catch (e) { /* said where it failed */ }
  const q = query();
  if (!q.item) { say("Choose an item first.", true); return; }
  await showQuery(q);
}

async function showQuery(q) {
  clearTimeout(waitingForRelease);
  say("Loading " + q.item + "…");
  try {
    const response = await call(tableUrl(q));
    if (response.status === 202) {  // a table the release lacks: queued for the next cut, published then
      const queued = await response.json();
      $("result").hidden = true;
      say("This table is not in release " + queued.release + " yet. It is queued: the next release measures it"
        + " (cut at " + new Date(queued.next_cut_after).toLocaleDateString() + " at the earliest) and publishes it"
        + " to everyone. Overall and single breakdowns of the standing set are in every release.");
      return;
    }
    render(q, await response.json());
    say("");
    readState();  // the bank moves on while one reads: its line follows each table
  } catch (e) {
    if (e.code === "no_release") { shown = q; $("result").hidden = true; await waitForRelease(q); }
    else if (e.message) say(e.message, true);
  }
}

function groupName(group) {
  const parts = Object.entries(group).map(([k, v]) => titleOf(k) + ": " + v);
  return parts.length ? parts.join(" · ") : "Everyone";
}

function render(q, body) {
  shown = q;
  $("result").hidden = false;
  $("result-title").textContent = body.instrument + " / " + body.item;
  $("question").textContent = body.question || "(no wording in the codebook)";
  const weights = body.weights;
  const weighting = !weights ? "This release was cut before weights; shares are unweighted."
    : weights.error ? "No weights for this release: " + weights.error.replace(/\.?$/, ".")
    : "Weighted to " + weights.raked_on.map(titleOf).join(" × ") + " margins (" + weights.source.replace(/\.$/, "") + ").";
  const missing = body.missing["no answer"];
  $("about").textContent = "Release " + body.release + "; about " + body.total + " agents answered"
    + (missing ? " (and about " + missing + " members without an answer, a count with noise, left out of every share)" : "")
    + ". Every count carries the release's noise, which protects each person (differential privacy, mu = "
    + body.protection.mu + " per answer); the intervals include it, and a group too small to show beside the"
    + " noise (fewer than " + body.k + " people, or than three times the noise) is hidden. " + weighting
    + (body.protection.demo_settings ? " This release was cut under the demo's settings (a bank of fictional"
      + " people only), which protect almost nothing; a real bank's release is far noisier." : "");
  $("validity").textContent = validityText(body.validity);
  $("fidelity").textContent = fidelityText(body.fidelity);
  const useWeights = q.weighted && weights && !weights.error;
  $("chart-caption").textContent = (useWeights ? "Weighted" : "Unweighted") + " share of each answer, with its 95% interval"
    + (q.dims.length ? ", by " + q.dims.map(titleOf).join(" and ") : "") + ".";
  renderChart(body, useWeights);
  renderTable(body, useWeights);
  renderCode(q);
  if (body.groups.every((g) => g.n === null) && bankState && bankState.building > 0) {
    $("hidden-groups").textContent += " Agents are still being built: this page shows the table again when the"
      + " next release is cut.";
    watchNextRelease(q, body.release);
  }
}

function validityText(v) {
  if (v.status === "not_validated") return "Not validated: the bank has not measured how well its agents answer this item.";
  const what = v.status === "measured" ? "On this item" : "On items of the same topic (" + v.items.join(", ") + ")";
  let text = what + ", " + v.agents + " agents answered as their person did " + pct(v.accuracy)
    + " of the time; people repeat their own answer " + pct(v.retest) + " of the time";
  if (v.normalized_accuracy !== null) text += " (normalized accuracy " + v.normalized_accuracy.toFixed(2) + ")";
  if (v.baseline_accuracy !== null) text += "; the best baseline without a language model (" + v.baseline + ") scores " + pct(v.baseline_accuracy);
  return text + (v.below_baseline ? ". The agents score below that baseline." : ".");
}

function fidelityText(f) {
  if (!f) return "";
  return "Beside the " + f.against.replace(/ \(.*\)$/, "") + " survey's own answers, this release's "
    + (f.weighted ? "weighted " : "") + "distribution lies " + pct(f.tvd) + " away (total variation: the most any answer's share"
    + " is over- or under-stated; 95% interval " + pct(f.tvd_interval[0]) + "–" + pct(f.tvd_interval[1]) + ").";
}

function renderChart(body, useWeights) {
  // A hidden group (too few people beside the release's noise, or none at all: the noise does not tell
  // which) has no bars to draw: it is named once, below the chart, with why; the table lists it too.
  const hidden = body.groups.filter((g) => g.n === null);
  $("hidden-groups").hidden = hidden.length === 0;
  $("hidden-groups").textContent = hidden.length === 0 ? "" : "Not shown (" + hidden[0].hidden + "): "
    + hidden.map((g) => groupName(g.group)).join("; ") + ".";
  const blocks = body.groups.filter((g) => g.n !== null && g.n !== 0).map((g) => {
    const block = document.createElement("div");
    block.className = "group";
    const heading = document.createElement("h3");
    heading.textContent = groupName(g.group) + " · n ≈ " + g.n
      + (useWeights && g.deff !== null ? " · design effect " + g.deff.toFixed(2) : "");
    block.append(heading);
    const key = JSON.stringify(g.group);
    for (const cell of body.cells.filter((c) => JSON.stringify(c.group) === key)) {
      const share = useWeights ? cell.weighted_share : cell.share;
      const ci = useWeights ? cell.weighted_interval : cell.interval;
      const row = document.createElement("div");
      row.className = "bar-row" + (share === null ? " hidden-cell" : "");
      const label = document.createElement("span");
      label.textContent = cell.label;
      const track = document.createElement("span");
      track.className = "track";
      track.setAttribute("aria-hidden", "true");
      if (share !== null) {
        const bar = document.createElement("span");
        bar.className = "bar";
        bar.style.width = (100 * share) + "%";
        track.append(bar);
        if (ci) {
          const whisker = document.createElement("span");
          whisker.className = "ci";
          whisker.style.left = (100 * ci[0]) + "%";
          whisker.style.width = (100 * (ci[1] - ci[0])) + "%";
          track.append(whisker);
        }
      }
      const value = document.createElement("span");
      value.className = "value";
      value.textContent = share === null ? "hidden" : pct(share) + " (" + interval(ci) + ")";
      row.append(label, track, value);
      block.append(row);
    }
    return block;
  });
  $("groups").replaceChildren(...blocks);
}

function renderTable(body, useWeights) {
  const head = [...body.breakdowns.map(titleOf), "Answer", "Code", "Count", "Share", "95% interval"];
  if (useWeights) head.push("Weighted share", "95% interval (weighted)", "Design effect");
  const deff = new Map(body.groups.map((g) => [JSON.stringify(g.group), g.deff]));
  const rows = body.cells.map((c) => {
    const values = [...Object.values(c.group), c.label, c.code, c.count === null ? "hidden" : c.count,
      c.share === null ? "" : pct(c.share), interval(c.interval)];
    if (useWeights) values.push(c.weighted_share === null ? "" : pct(c.weighted_share), interval(c.weighted_interval),
      c.count === null || deff.get(JSON.stringify(c.group)) === null ? "" : deff.get(JSON.stringify(c.group)).toFixed(2));
    return values;
  });
  const tr = (cells, tag) => { const row = document.createElement("tr");
    for (const v of cells) { const cell = document.createElement(tag); cell.textContent = v;
      if (tag === "td" && /^[0-9.%–]+$/.test(String(v))) cell.className = "number"; row.append(cell); }
    return row; };
  const thead = document.createElement("thead"); thead.append(tr(head, "th"));
  const tbody = document.createElement("tbody"); tbody.append(...rows.map((r) => tr(r, "td")));
  $("table").replaceChildren(thead, tbody);
}

function renderCode(q) {
  const origin = location.origin;
  const url = origin + tableUrl(q, "csv");
  $("code-curl").textContent =
    "TOKEN=$(curl -s -u CLIENT_ID:SECRET -d grant_type=client_credentials " + origin + "/oauth/token | jq -r .access_token)\n"
    + "curl -s -H \"Authorization: Bearer $TOKEN\" \"" + url + "\"";
  const dims = q.dims.length ? ", breakdowns=[" + q.dims.map((d) => "\"" + d + "\"").join(", ") + "]" : "";
  $("code-python").textContent = "from agentbank_client import BankClient\n\n"
    + "with BankClient(\"" + origin + "\", CLIENT_ID, SECRET) as bank:\n"
    + "    table = bank.distribution(\"" + q.instrument + "\", \"" + q.item + "\"" + dims + ")\n"
    + "    # columns: share, share_low, share_high, weighted_share, weighted_low, weighted_high, deff";
  const rDims = q.dims.length ? ", breakdowns = c(" + q.dims.map((d) => "\"" + d + "\"").join(", ") + ")" : "";
  $("code-r").textContent = "library(agentbank)  # the R client: clients/r/agentbank of the bank's repository\n"
    + "bank <- bank_connect(\"" + origin + "\", CLIENT_ID, SECRET)\n"
    + "table <- bank_distribution(bank, \"" + q.instrument + "\", \"" + q.item + "\"" + rDims + ")\n"
    + "# code: GSS codes with their labels (haven::labelled); attr(table, \"release\"), attr(table, \"validity\")";
}

async function download(format) {
  if (!shown) return;
  try {
    const blob = await (await call(tableUrl(shown, format))).blob();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = [shown.instrument, shown.item, ...shown.dims].join("-") + "." + format;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  } catch (e) { if (e.message) say(e.message, true); }
}

$("signin").addEventListener("submit", signIn);
$("signout").addEventListener("click", () => signOut());
$("query").addEventListener("submit", show);
$("instrument").addEventListener("change", () => loadItems().catch((e) => say(e.message, true)));
$("search").addEventListener("input", filterItems);
$("by1").addEventListener("change", chooseFirst);
$("download-csv").addEventListener("click", () => download("csv"));
$("download-parquet").addEventListener("click", () => download("parquet"));
$("download-dta").addEventListener("click", () => download("dta"));
$("download-sav").addEventListener("click", () => download("sav"));
// Signed in already: a token of this tab, or a console session (the institution's sign-in).
async function resume() {
  if (sessionStorage.getItem(TOKEN_KEY)) { await start(); return; }
  const response = await fetch("/v1/session", { cache: "no-store" }).catch(() => null);
  if (!response || !response.ok) return;
  const me = await response.json();
  if (!me.csrf_token) return;
  sessionCsrf = me.csrf_token;
  if (!me.scopes.includes("aggregate:read")) { say("Your account may not read the open tier: the client it is linked to has no aggregate:read scope.", true); return; }
  await start();
}

chooseFirst();
readState();
resume();
