/** The console's one inline script, and the hash the Content-Security-Policy admits it by (no
 * `'unsafe-inline'`, no inline event handler). With no multipart parser on the server, a chosen file
 * is read by the browser into a form field: `<input type="file" data-read-into="ID"
 * data-name-into="ID">` fills the textarea ID with the file's text and the hidden field with its
 * name. The text is a constant, so its SHA-256 is known when the API starts. */
import { createHash } from 'node:crypto';
import { raw, type Html } from './html';

const READ_FILE_INTO_FIELD = `
document.querySelectorAll('input[type=file][data-read-into]').forEach((input) => input.addEventListener('change', async () => {
  const file = input.files[0]; if (!file) return;
  document.getElementById(input.dataset.readInto).value = await file.text();
  if (input.dataset.nameInto) document.getElementById(input.dataset.nameInto).value = file.name;
}));
`;

/** After the form whose file inputs it wires. */
export const readFileIntoFieldScript: Html = raw(`<script>${READ_FILE_INTO_FIELD}</script>`);

/** CSP `script-src` sources for every inline script the console renders. */
export const CONSOLE_INLINE_SCRIPT_HASHES: readonly string[] = [READ_FILE_INTO_FIELD]
  .map((text) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`);
