// Server-side HTML templates. Every interpolated value is escaped unless it is
// already Html (built by this module), so user data can never become markup.

const brand: unique symbol = Symbol('html');

export interface Html {
  readonly [brand]: true;
  readonly text: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (char) => ESCAPES[char]!);
}

function trusted(text: string): Html {
  return { [brand]: true, text };
}

export function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && (value as Html)[brand] === true;
}

/** What a template slot accepts: nothing is rendered for null, undefined and false. */
export type Slot = Html | string | number | boolean | null | undefined | readonly Slot[];

function render(value: Slot): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isHtml(value)) return value.text;
  return escapeHtml(String(value));
}

/** The template tag: literal parts are markup, slots are escaped. */
export function html(strings: TemplateStringsArray, ...slots: Slot[]): Html {
  let out = strings[0]!;
  slots.forEach((slot, index) => {
    out += render(slot) + strings[index + 1]!;
  });
  return trusted(out);
}

/** Markup from a constant of this code base (never from a request or the database). */
export function unsafeMarkup(constant: string): Html {
  return trusted(constant);
}

export function toDocument(page: Html): string {
  return `<!doctype html>\n${page.text}`;
}
