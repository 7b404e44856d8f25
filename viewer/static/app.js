// remstore viewer: expand a cut message in place through REM LOOKUP, and copy
// its key. Text is set with textContent, never as HTML.
"use strict";
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
