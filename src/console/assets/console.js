// The console works without this script; it only adds comfort: a preview of the chosen photo, a busy
// state while a photo is analysed, selects that apply themselves, and a sentence instead of a broken image.
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form?.requestSubmit());
  }
  // A photo gone from the store (evicted from memory without Redis, or deleted): say so where it stood.
  for (const img of document.querySelectorAll("figure.photo img[data-missing]")) {
    const missing = () => {
      const note = document.createElement("div");
      note.className = "photo missing";
      note.textContent = img.dataset.missing ?? "";
      img.closest("figure")?.replaceWith(note);
    };
    if (img.complete && img.naturalWidth === 0 && img.currentSrc) missing();
    else img.addEventListener("error", missing, { once: true });
  }
  const form = document.querySelector("form.diagnose");
  if (!form) return;
  const input = form.querySelector('input[type="file"]');
  const preview = form.querySelector("img.preview");
  input?.addEventListener("change", () => {
    const file = input.files?.[0];
    if (!file || !preview) return;
    if (preview.src) URL.revokeObjectURL(preview.src);
    preview.src = URL.createObjectURL(file);
    preview.hidden = false;
  });
  form.addEventListener("submit", () => {
    const button = form.querySelector('button[type="submit"]');
    if (!button) return;
    button.disabled = true;
    button.textContent = form.dataset.working ?? button.textContent;
    form.setAttribute("aria-busy", "true");
  });
});
