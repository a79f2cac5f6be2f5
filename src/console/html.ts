/** HTML for the console: a tagged template that escapes every interpolated value unless it is
 * already `Html` (built by this tag or `raw`). A template engine would add a dependency and a
 * second syntax for a dozen small pages; this keeps pages plain TypeScript, type-checked, with
 * escaping as the default rather than something a page must remember. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => { out += render(v) + strings[i + 1]!; });
  return new Html(out);
}

/** Markup that is trusted as it is (a constant, or the output of JSON.stringify inside <pre> is NOT: escape that). */
export const raw = (text: string): Html => new Html(text);
