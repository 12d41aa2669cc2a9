"use strict";
// What the participant's pages (the portal and the survey) share: the access code as it is printed,
// kept for the tab only, and calls to the bank with it whose errors read as plain words.

const CODE_KEY = "agentbank.portal.code";  // sessionStorage only: gone when the tab closes
const CODE_LETTERS = "23456789ABCDEFGHJKMNPQRSTWXYZ";

// An access code as printed (seven groups of four, no look-alikes), however it was typed; other codes as typed.
function printedCode(typed) {
  const letters = typed.toUpperCase().replace(/[^0-9A-Z]/g, "");
  if (letters.length !== 28 || [...letters].some((c) => !CODE_LETTERS.includes(c))) return typed;
  return letters.match(/.{4}/g).join("-");
}

// A date as the pages write it: day, month in words and year, in the order of the reader's language.
function longDate(iso) { return new Date(iso).toLocaleDateString(undefined, { day: "numeric", month: "long", year: "numeric" }); }

// A call with the access code; an error carries the HTTP status and the page's own words for it.
async function bankCall(code, method, path, body, plainError, unreachable) {
  const headers = { "Authorization": "Bearer " + code };
  if (body !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(body); }
  let response;
  try { response = await fetch(path, { method, headers, body, cache: "no-store" }); }
  catch (e) { const error = new Error(unreachable); error.status = 0; throw error; }
  if (!response.ok) {
    let message = "";
    try { message = (await response.json()).error.message; } catch (e) { /* not JSON */ }
    const error = new Error(plainError(response.status, message)); error.status = response.status; throw error;
  }
  return response;
}
