// remstore viewer: expand a cut message in place through REM LOOKUP, and copy
// its key. Text is set with textContent, never as HTML.
"use strict";
// Times: the page says UTC; the reader's own zone is shown, the stored
// value and the zone stay on hover.
for (const t of document.querySelectorAll("time[datetime]")) {
  const d = new Date(t.getAttribute("datetime"));
  if (isNaN(d)) continue;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  t.textContent = d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  t.title = t.getAttribute("datetime") + " (shown in " + zone + ")";
}

// Copy as JSON: a message (data-json), a call or a session (data-src, fetched).
document.addEventListener("click", async (ev) => {
  const b = ev.target.closest("button.copyjson");
  if (!b) return;
  try {
    let text = b.dataset.json;
    if (b.dataset.src) {
      const r = await fetch(b.dataset.src, { credentials: "same-origin" });
      if (!r.ok) throw new Error(r.statusText);
      text = await r.text();
    }
    await navigator.clipboard.writeText(text);
    b.textContent = "Copied";
  } catch (e) {
    b.textContent = "Copy failed: " + e.message;
  }
});

document.addEventListener("click", async (ev) => {
  const b = ev.target.closest("button[data-key]");
  if (!b) return;
  const key = b.dataset.key;
  if (b.classList.contains("copy")) {
    try { await navigator.clipboard.writeText(key); b.textContent = "Copied"; } catch (e) { b.textContent = "Select the key to copy"; }
    return;
  }
  const li = b.closest("li");
  b.disabled = true;
  try {
    const r = await fetch("/ui/lookup?key=" + encodeURIComponent(key), { credentials: "same-origin" });
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || r.statusText);
    const body = li.querySelector(".cutbody");
    const pre = document.createElement("pre");
    pre.className = "body full";
    // The server's rendering (inertParts): text, and bidirectional
    // controls as visible code points, exactly as the page draws them.
    for (const p of j.parts) {
      if (p.c) {
        const s = document.createElement("span");
        s.className = "ctl";
        s.title = "bidirectional control";
        s.textContent = p.c;
        pre.appendChild(s);
      } else {
        pre.appendChild(document.createTextNode(p.t || ""));
      }
    }
    body.replaceWith(pre);
    b.textContent = "Expanded";
  } catch (e) {
    b.textContent = "Lookup failed: " + e.message;
    b.disabled = false;
  }
});
