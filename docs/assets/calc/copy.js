// Copying text to the clipboard, for the page script (./page.js) and the FAQ's copy-link buttons
// (overrides/assets/javascripts/faq.js): the Clipboard API where the
// page may use it (a secure context, permission given), else the legacy way (a selected
// textarea and document.execCommand("copy")). Resolves to whether it worked.

export async function copy(text) {
  let ok = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      ok = true;
    }
  } catch {
    ok = false;
  }
  return ok || legacyCopy(text);
}

function legacyCopy(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  const focused = document.activeElement;
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  if (focused && focused.focus) focused.focus();
  return ok;
}

