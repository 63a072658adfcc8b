// The page's words in the reader's language. The host serves each page in the language of the
// browser's Accept-Language (its <html lang> says which) with that language's catalog embedded
// as JSON (#uq-messages): the same gettext catalog the Python side reads, so a message id is
// written once, in English, as the argument of t or tn, and scripts/messages.py extracts it for
// translators.

const messages = readCatalog();

function readCatalog() {
  const script = typeof document === "undefined" ? null : document.getElementById("uq-messages");
  if (!script) return {};
  try {
    return JSON.parse(script.textContent) ?? {};
  } catch {
    return {};
  }
}

/** The page's language as a BCP 47 tag (`ko`, `zh-Hans`, `ja`, `en`). */
export function language() {
  return (typeof document === "undefined" ? "" : document.documentElement.lang) || "en";
}

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** A message in the page's language, `{name}` filled from `values`; the id itself when the
 * catalog has no text for it (English, or a message newer than the catalog). */
export function t(id, values = {}) {
  const text = messages[id];
  return fill(typeof text === "string" && text ? text : id, values);
}

/** The form of a counted message for `count` (`{count}` is filled, as a number of the page's
 * language): Korean, Chinese and Japanese have one form, English two (one, other). */
export function tn(singular, plural, count, values = {}) {
  const forms = messages[singular];
  const all = { ...values, count: formatNumber(count) };
  if (Array.isArray(forms) && forms.length) {
    const one = new Intl.PluralRules(language()).select(count) === "one";
    return fill(forms.length === 1 || one ? forms[0] : forms[Math.min(1, forms.length - 1)], all);
  }
  return fill(count === 1 ? singular : plural, all);
}

/** A number as the page's language writes it. */
export function formatNumber(value) {
  return new Intl.NumberFormat(language()).format(value);
}
