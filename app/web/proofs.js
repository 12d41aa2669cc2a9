"use strict";
// Checking the audit log in the browser, with the browser's own cryptography (WebCrypto): the bank's
// signed tree head (a C2SP checkpoint: origin, size, base64 Merkle root, then signature lines) and an
// inclusion proof for each use the page lists (RFC 6962: leaf = SHA-256(0x00 || entry), node =
// SHA-256(0x01 || left || right)). The entry is the SHA-256 of the use as this page shows it, with its
// receipt hash, in canonical JSON (leaf version 2, as agentbank/audit/entries.py builds it), so a use edited
// after it was logged no longer proves, even with its receipt kept; uses logged before leaves had versions
// (version 1) hash the receipt alone. Nothing here trusts the bank's word that a proof is good: the page recomputes
// the root from what it shows and compares it with the signed one.

const PROOFS = (() => {
  const encoder = new TextEncoder();
  const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const fromHex = (text) => Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
  const equal = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

  async function sha256(...parts) {
    const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
    let at = 0;
    for (const part of parts) { all.set(part, at); at += part.length; }
    return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  }
  const leafHash = (entry) => sha256(Uint8Array.of(0), entry);
  const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right);

  // RFC 9162 section 2.1.3.2: the root an inclusion proof leads to, or null if it cannot be one.
  async function rootFromProof(leaf, index, size, proof) {
    if (index < 0 || index >= size) return null;
    let fn = index, sn = size - 1, r = leaf;
    for (const p of proof) {
      if (sn === 0 || p.length !== 32) return null;
      if (fn % 2 === 1 || fn === sn) {
        r = await nodeHash(p, r);
        while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      } else {
        r = await nodeHash(r, p);
      }
      fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
    }
    return sn === 0 ? r : null;
  }

  // A signed note: its text (ending in a newline) and its signature lines.
  function parseNote(note) {
    const cut = note.lastIndexOf("\n\n");
    if (cut < 0) throw new Error("not a signed note");
    const text = note.slice(0, cut + 1);
    const lines = text.split("\n");
    const signatures = note.slice(cut + 2).split("\n").filter(Boolean).map((line) => {
      const [dash, name, signature] = line.split(" ");
      if (dash !== "\u2014" || !signature) throw new Error("not a signature line");
      return { name, raw: fromBase64(signature) };
    });
    if (lines.length < 4 || !/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error("not a checkpoint");
    return { text, origin: lines[0], size: Number(lines[1]), root: fromBase64(lines[2]), signatures };
  }

  // A verifier key (name+hex key ID+base64(type || public key)), checked against its key ID.
  async function parseKey(vkey) {
    const [name, id, ...rest] = vkey.split("+");
    const material = fromBase64(rest.join("+"));
    const keyId = (await sha256(encoder.encode(name + "\n"), material)).slice(0, 4);
    if (!equal(keyId, fromHex(id))) throw new Error("a key whose ID does not match it");
    const key = await crypto.subtle.importKey("raw", material.slice(1), { name: "Ed25519" }, false, ["verify"]);
    return { name, type: material[0], keyId, key };
  }

  const verify = (key, signature, message) => crypto.subtle.verify({ name: "Ed25519" }, key, signature, message);

  // Whether the note carries a valid signature (type 0x01) by the log's key.
  async function signedBy(head, vkey) {
    const signer = await parseKey(vkey);
    for (const { name, raw } of head.signatures) {
      if (name === signer.name && signer.type === 1 && equal(raw.slice(0, 4), signer.keyId)
          && await verify(signer.key, raw.slice(4), encoder.encode(head.text))) return true;
    }
    return false;
  }

  // Whether the note carries a valid witness cosignature (type 0x04: time, then Ed25519 over
  // "cosignature/v1", the time line and the text) by this witness.
  async function cosignedBy(head, vkey) {
    const witness = await parseKey(vkey);
    for (const { name, raw } of head.signatures) {
      if (name !== witness.name || witness.type !== 4 || raw.length !== 76 || !equal(raw.slice(0, 4), witness.keyId)) continue;
      const time = new DataView(raw.buffer, raw.byteOffset + 4, 8).getBigUint64(0).toString();
      if (await verify(witness.key, raw.slice(12), encoder.encode(`cosignature/v1\ntime ${time}\n${head.text}`))) return true;
    }
    return false;
  }

  // Canonical JSON, the same bytes the bank hashes: keys in code point order (as Python sorts them), no
  // whitespace, strings and numbers as JSON.stringify writes them.
  function byCodePoint(a, b) {
    const x = Array.from(a, (c) => c.codePointAt(0)), y = Array.from(b, (c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort(byCodePoint).map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  // The time as served (ISO 8601 with microseconds and an offset) in microseconds since 1970: a Date keeps
  // only milliseconds, so the fraction is read from the text.
  function micros(at) {
    const m = /^(.+T\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)$/.exec(at || "");
    return m ? Date.parse(m[1] + m[3]) * 1000 + Number((m[2] || "").padEnd(6, "0")) : null;
  }

  // What a version-2 entry digests: what the page shows of a use (when, what, by whom, why, what was
  // asked, what came of it) and its receipt.
  function useEntry(use) {
    return canonical({
      v: 2, hash: use.receipt.hash, at: micros(use.at), action: use.action, tier: use.tier,
      actor_kind: use.actor_kind, project_id: use.project ? use.project.id : null, purpose: use.purpose ?? null,
      asked: use.asked || {}, outcome: use.outcome ?? null,
    });
  }

  // Whether the use, as the page shows it, is entry ``receipt.seq`` of the signed tree, by the served proof
  // (its base64 hashes, and which leaf version it names: naming the wrong one cannot reach the signed root).
  async function useInTree(use, head, proof) {
    const seq = use.receipt.seq;
    const entry = proof.leaf_version === 1 ? fromHex(use.receipt.hash) : await sha256(encoder.encode(useEntry(use)));
    const root = await rootFromProof(await leafHash(entry), seq - 1, head.size, proof.hashes.map(fromBase64));
    return root !== null && equal(root, head.root);
  }

  const available = () => Boolean(globalThis.crypto && crypto.subtle);
  return { parseNote, signedBy, cosignedBy, useEntry, useInTree, available };
})();
