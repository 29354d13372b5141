import { expect } from 'chai';
import { contentDisposition, safeFileName } from './file-names.js';

describe('safeFileName', () => {
  it('keeps an ordinary name, unicode included', () => {
    expect(safeFileName('report.pdf')).to.equal('report.pdf');
    expect(safeFileName('Prüfbericht – 東京 🚀.csv')).to.equal('Prüfbericht – 東京 🚀.csv');
  });

  it('strips directories of either separator', () => {
    expect(safeFileName('../../etc/passwd')).to.equal('passwd');
    expect(safeFileName('C:\\Users\\me\\card.md')).to.equal('card.md');
    expect(safeFileName('/abs/path/')).to.equal('file');
  });

  it('removes control and direction-override characters, so an extension cannot be disguised', () => {
    expect(safeFileName('in\u0000voice\r\nX-Evil: 1.txt')).to.equal('invoice X-Evil: 1.txt');
    expect(safeFileName('invoice\u202efdp.exe')).to.equal('invoicefdp.exe');
  });

  it('drops leading dots and trailing dots and spaces', () => {
    expect(safeFileName('.bashrc')).to.equal('bashrc');
    expect(safeFileName('name.txt. . ')).to.equal('name.txt');
  });

  it('falls back to "file" when nothing usable is left', () => {
    expect(safeFileName('')).to.equal('file');
    expect(safeFileName('..')).to.equal('file');
    expect(safeFileName('\u0001\u0002')).to.equal('file');
    expect(safeFileName(undefined)).to.equal('file');
  });

  it('caps the name at 255 UTF-8 bytes without splitting a character and keeps the extension', () => {
    const capped = safeFileName(`${'é'.repeat(300)}.parquet`);
    expect(Buffer.byteLength(capped)).to.be.at.most(255);
    expect(capped).to.match(/^é+\.parquet$/);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the exact UTF-8 name in filename*', () => {
    expect(contentDisposition('café menu.pdf')).to.equal(`attachment; filename="cafe menu.pdf"; filename*=UTF-8''caf%C3%A9%20menu.pdf`);
  });

  it('cannot break out of the header or the quoted string', () => {
    const header = contentDisposition('a"b%d\r\nSet-Cookie: x=1(*).txt', 'inline');
    expect(header).to.not.match(/[\r\n]/);
    expect(header).to.equal(`inline; filename="a_b_d Set-Cookie: x=1(*).txt"; filename*=UTF-8''a%22b%25d%20Set-Cookie%3A%20x%3D1%28%2A%29.txt`);
  });

  it('cleans the name first', () => {
    expect(contentDisposition('../secret/東京.txt')).to.equal(`attachment; filename="__.txt"; filename*=UTF-8''%E6%9D%B1%E4%BA%AC.txt`);
  });
});
