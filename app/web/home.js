"use strict";
// The front page: the bank's state in words, from the public GET /v1/status (counts only).

const $ = (id) => document.getElementById(id);

function line(text, className) {
  const p = document.createElement("p");
  p.textContent = text;
  if (className) p.className = className;
  return p;
}

async function showState() {
  let body;
  try {
    const response = await fetch("/v1/status", { cache: "no-store" });
    if (!response.ok) throw new Error(String(response.status));
    body = await response.json();
  } catch (e) {
    $("state").replaceChildren(line("The bank's state cannot be read now; reload the page in a moment.", "error"));
    return;
  }
  // The last sentence is the demo's note, shown apart from the state.
  const says = body.demo ? body.says.slice(0, -1) : body.says;
  if ($("state").textContent !== says.join("")) {  // unchanged: nothing new to announce
    $("state").replaceChildren(...says.map((text) => line(text)));
  }
  $("demo").hidden = !body.demo;
  if (body.demo) $("demo-note").textContent = body.demo.note;
}

showState();
// A bank being built changes by the minute: the state follows it while the page is open.
setInterval(showState, 15000);
