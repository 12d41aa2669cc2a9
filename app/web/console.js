"use strict";
// What the consoles share: the person's session (an HTTP-only cookie the page never reads), calls to the
// bank that carry the session's CSRF token when they change something, and errors in plain words.

const $ = (id) => document.getElementById(id);
const QUERY_TYPES = { survey: "Survey items", open: "Open questions", experiment: "Experiments" };
let csrf = "";

function say(text, isError) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

function showSignIn(text) {
  $("console-step").hidden = true;
  $("signin-step").hidden = false;
  say(text || "");
}

async function call(method, path, body) {
  const headers = {};
  if (method !== "GET") headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(body); }
  let response;
  try { response = await fetch(path, { method, headers, body, cache: "no-store", credentials: "same-origin" }); }
  catch (e) { throw new Error("The bank cannot be reached. Check your connection and try again."); }
  if (response.status === 401) { showSignIn(csrf ? "Your session has ended. Sign in again." : ""); throw new Error(""); }
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    throw new Error((error.error && error.error.message) || "The bank could not do this (" + response.status + ").");
  }
  return response.json();
}

function el(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, v);
  return node;
}

function details(pairs) {
  const list = el("dl");
  for (const [term, value] of pairs) list.append(el("dt", term), el("dd", value));
  return list;
}

// The signed-in person, or null (the sign-in step is shown); ``scope`` missing is said with ``refusal``.
async function openSession(scope, refusal) {
  let me;
  try { me = await call("GET", "/v1/session"); } catch (e) { if (e.message) say(e.message, true); return null; }
  if (!me.csrf_token) { showSignIn(); return null; }  // an API token is not a console session
  csrf = me.csrf_token;
  $("email").textContent = me.email;
  $("signin-step").hidden = true;
  $("console-step").hidden = false;
  if (scope && !me.scopes.includes(scope)) { say(refusal, true); return null; }
  return me;
}

$("signout").addEventListener("click", async () => {
  try { await call("POST", "/signout"); } catch (e) { /* signed out either way */ }
  csrf = "";
  showSignIn("Signed out.");
});
