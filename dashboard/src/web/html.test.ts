import { expect } from 'chai';
import { escapeHtml, html, isHtml, toDocument, unsafeMarkup } from './html.js';

describe('dashboard html templates', () => {
  it('escapes the characters that could open markup or leave an attribute', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y' \`z\``)).to.equal('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;');
  });

  it('escapes interpolated strings but keeps nested templates as markup', () => {
    const name = '"><img src=x onerror=alert(1)>';
    const page = html`<p title="${name}">${html`<b>${name}</b>`}</p>`;
    expect(page.text).to.equal('<p title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"><b>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</b></p>');
  });

  it('renders arrays, numbers and booleans, and nothing for null, undefined and false', () => {
    const items = ['<a>', html`<i>b</i>`];
    expect(html`${items}|${3}|${true}|${null}|${undefined}|${false}`.text).to.equal('&lt;a&gt;<i>b</i>|3|true|||');
  });

  it('does not treat a look-alike object as markup', () => {
    const forged = { text: '<script>' } as unknown as string;
    expect(isHtml(forged)).to.equal(false);
    expect(html`${forged}`.text).to.equal('[object Object]');
  });

  it('passes constants through unsafeMarkup and prefixes documents with a doctype', () => {
    expect(toDocument(html`<html>${unsafeMarkup('<br>')}</html>`)).to.equal('<!doctype html>\n<html><br></html>');
  });
});
