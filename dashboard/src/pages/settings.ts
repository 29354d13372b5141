import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { csrfField } from './components.js';

export const LOGO_ACCEPT = 'image/png,image/jpeg,image/gif,image/webp';

export function settingsBody(options: { csrfToken: string; workspace: string; hasLogo: boolean; maxBytes: number }): Html {
  const kib = Math.floor(options.maxBytes / 1024);
  return html`<section aria-labelledby="logo">
  <h2 id="logo">Logo</h2>
  <div class="card stack">
    ${options.hasLogo
      ? html`<img class="logo-preview" src="${at('/settings/logo')}" alt="Current logo of ${options.workspace}">`
      : html`<p class="muted">This workspace has no logo yet.</p>`}
    <form class="stack" method="post" action="${at('/settings/logo')}" enctype="multipart/form-data">
      ${csrfField(options.csrfToken)}
      <div class="field">
        <label for="field-logo">Image file</label>
        <input id="field-logo" name="logo" type="file" accept="${LOGO_ACCEPT}" required aria-describedby="field-logo-hint">
        <p class="hint" id="field-logo-hint">PNG, JPEG, GIF or WebP, at most ${kib} KiB.</p>
      </div>
      <button type="submit" class="button primary">Upload logo</button>
    </form>
  </div>
</section>`;
}
