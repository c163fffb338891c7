import { randomBytes } from 'node:crypto';
import type { CardDetails } from '../store/store.js';

/*
 * The card display page (issue 18): one card's number, expiry and CVV in a small HTML page
 * made to sit in the customer's iframe, so that the number reaches the cardholder's browser
 * from spendgate and never passes through the customer's servers. Everything it needs is in
 * the page itself: an inline style and a short inline script (the copy buttons), each allowed
 * by a nonce of this response alone; no external asset, no 'unsafe-inline'. The embedder picks
 * the look from a short list through query parameters, each checked against that list.
 */

/** Fonts an embedder may name (`font=`), and the CSS font stack each stands for. */
export const DISPLAY_FONTS: Readonly<Record<string, string>> = {
  system: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  'sans-serif': 'sans-serif',
  serif: 'serif',
  monospace: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
  helvetica: 'Helvetica, Arial, sans-serif',
  georgia: 'Georgia, serif',
  courier: "'Courier New', Courier, monospace",
};

/** The style parameters, each a color as `#rrggbb` but `font`; and their defaults. */
export interface DisplayStyle {
  readonly font: string;
  readonly color: string;
  readonly background: string;
  readonly accent: string;
}
const DEFAULT_STYLE: DisplayStyle = {
  font: 'system',
  color: '#1a1a1a',
  background: '#ffffff',
  accent: '#2f5bea',
};
const COLOR_PARAMS = ['color', 'background', 'accent'] as const;
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

/**
 * The style the query asks for, or the reasons it is refused: an unknown parameter, one given
 * twice, a font not on the list, a color not `#rrggbb`. A reason names the parameter, never
 * echoes its value.
 */
export function parseDisplayStyle(
  query: Readonly<Record<string, unknown>>,
): { style: DisplayStyle } | { refusals: string[] } {
  const refusals: string[] = [];
  const style: Record<keyof DisplayStyle, string> = { ...DEFAULT_STYLE };
  for (const [name, value] of Object.entries(query)) {
    if (name === 'token') continue;
    if (!(name in DEFAULT_STYLE)) {
      refusals.push(`Unknown parameter: only token, font, ${COLOR_PARAMS.join(', ')} are read.`);
    } else if (typeof value !== 'string') {
      refusals.push(`The parameter ${name} is given more than once.`);
    } else if (name === 'font') {
      if (Object.hasOwn(DISPLAY_FONTS, value)) style.font = value;
      else refusals.push(`font must be one of: ${Object.keys(DISPLAY_FONTS).join(', ')}.`);
    } else if (HEX_COLOR.test(value)) {
      style[name as (typeof COLOR_PARAMS)[number]] = value.toLowerCase();
    } else {
      refusals.push(`${name} must be a color written #rrggbb (in a URL: %23rrggbb).`);
    }
  }
  return refusals.length === 0 ? { style } : { refusals: [...new Set(refusals)] };
}

/** What a page answer is: the status, its HTML and the headers it must carry. */
export interface PageAnswer {
  readonly status: number;
  readonly html: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The answer's headers: never cached (it holds a card), no referrer (its URL holds the
 * token), and a CSP that allows nothing but this page's own style and script and names who
 * may frame it: the account's origins, or no one.
 */
function pageHeaders(nonce: string, frameAncestors: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      "base-uri 'none'",
      "form-action 'none'",
      `frame-ancestors ${frameAncestors}`,
    ].join('; '),
  };
}

/** The CSP frame-ancestors sources of a list of checked origins: 'none' for an empty one. */
export function frameAncestorsOf(origins: readonly string[]): string {
  return origins.length === 0 ? "'none'" : origins.join(' ');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function styleSheet(style: DisplayStyle): string {
  // Every value is from the allow-list or matched #rrggbb: nothing of the query reaches here
  // unchecked.
  const font = DISPLAY_FONTS[style.font] ?? DISPLAY_FONTS['system'];
  return `
* { box-sizing: border-box; }
body { margin: 0; padding: 12px; font-family: ${font}; color: ${style.color};
  background: ${style.background}; font-size: 15px; }
.card { display: grid; gap: 10px; max-width: 420px; }
.field { display: flex; align-items: center; justify-content: space-between; gap: 8px; }
.label { display: block; font-size: 11px; text-transform: uppercase; letter-spacing: 0.06em;
  opacity: 0.7; }
.value { display: block; font-size: 18px; letter-spacing: 0.08em; font-variant-numeric: tabular-nums; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
button { font: inherit; font-size: 12px; padding: 4px 10px; border: 0; border-radius: 4px;
  background: ${style.accent}; color: ${style.background}; cursor: pointer; }
.message { opacity: 0.8; }`;
}

/** The copy buttons: the value of `data-copy`, to the clipboard, or selected when refused. */
const COPY_SCRIPT = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', () => {
    const done = () => { button.textContent = 'Copied'; };
    const select = () => {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.for));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Press Ctrl+C';
    };
    if (navigator.clipboard) navigator.clipboard.writeText(button.dataset.copy).then(done, select);
    else select();
  });
}`;

function field(id: string, label: string, shown: string, copied: string): string {
  return (
    `<div class="field"><div><span class="label">${escapeHtml(label)}</span>` +
    `<span class="value" id="${id}">${escapeHtml(shown)}</span></div>` +
    `<button type="button" data-for="${id}" data-copy="${escapeHtml(copied)}" ` +
    `aria-label="Copy ${escapeHtml(label.toLowerCase())}">Copy</button></div>`
  );
}

function document(nonce: string, style: DisplayStyle, title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer">' +
    `<title>${escapeHtml(title)}</title><style nonce="${nonce}">${styleSheet(style)}</style>` +
    `</head><body>${body}</body></html>`
  );
}

/** The page of one card: its number in groups of four, expiry MM/YY and CVV, each copyable. */
export function cardPage(
  details: CardDetails,
  style: DisplayStyle,
  origins: readonly string[],
): PageAnswer {
  const nonce = randomBytes(16).toString('base64');
  const grouped = details.number.replace(/(\d{4})(?=\d)/g, '$1 ');
  const expiry = `${String(details.expMonth).padStart(2, '0')}/${String(details.expYear % 100).padStart(2, '0')}`;
  const body =
    '<main class="card" aria-label="Card details">' +
    field('number', 'Card number', grouped, details.number) +
    '<div class="pair">' +
    field('expiry', 'Expiry', expiry, expiry) +
    field('cvv', 'CVV', details.cvv, details.cvv) +
    `</div></main><script nonce="${nonce}">${COPY_SCRIPT}</script>`;
  return {
    status: 200,
    html: document(nonce, style, 'Card details', body),
    headers: pageHeaders(nonce, frameAncestorsOf(origins)),
  };
}

/**
 * A page that shows no card: a fixed message (and the style refusals, which name parameters,
 * never their values). It holds nothing secret and no account is known for it, so any page
 * may frame it, and an embedder's iframe says why it is empty instead of a browser error.
 */
export function messagePage(status: number, message: string, details: string[] = []): PageAnswer {
  const nonce = randomBytes(16).toString('base64');
  const items = details.map((detail) => `<li>${escapeHtml(detail)}</li>`).join('');
  const body =
    `<main class="card"><p class="message" role="alert">${escapeHtml(message)}</p>` +
    (items === '' ? '' : `<ul class="message">${items}</ul>`) +
    '</main>';
  return {
    status,
    html: document(nonce, DEFAULT_STYLE, 'Card details', body),
    headers: pageHeaders(nonce, '*'),
  };
}
