import { expect } from 'chai';
import { commonSnapshot, formatSnapshot, parseSnapshot, visibleIn } from './snapshot.js';

describe('event stream positions (pg_snapshot)', () => {
  it('reads back the snapshots PostgreSQL prints', () => {
    for (const text of ['1:1:', '12:15:12,14', '5:5:', '3:9:3,3,8']) expect(formatSnapshot(parseSnapshot(text)).split(':')[0]).to.equal(text.split(':')[0]);
    expect(formatSnapshot(parseSnapshot('12:15:12,14'))).to.equal('12:15:12,14');
  });

  it('refuses, as a 400 naming Last-Event-ID, what PostgreSQL would refuse or never printed', () => {
    const bad = ['', 'x', '1:2', '5:3:', '0:3:', '3:9:2', '3:9:9', '3:9:7,4', "1:2:3'; drop table invocations; --", `1:2:${'9'.repeat(30)}`, `1:${'9'.repeat(20)}:`];
    for (const text of bad) {
      expect(() => parseSnapshot(text), text).to.throw('Last-Event-ID').with.property('status', 400);
    }
  });

  it('sees what pg_visible_in_snapshot sees', () => {
    const snapshot = parseSnapshot('10:20:12,15');
    expect([9n, 10n, 11n, 12n, 15n, 19n, 20n, 25n].map((tx) => visibleIn(tx, snapshot))).to.deep.equal([true, true, true, false, false, true, false, false]);
  });

  it('finds the snapshot that sees only what every one of them sees', () => {
    const snapshots = ['10:20:12,15', '14:30:14,25', '8:40:8,9'].map(parseSnapshot);
    const common = commonSnapshot(snapshots);
    expect(formatSnapshot(common)).to.equal('8:20:8,9,12,14,15');
    for (let tx = 1n; tx < 50n; tx++) {
      expect(visibleIn(tx, common), String(tx)).to.equal(snapshots.every((s) => visibleIn(tx, s)));
    }
  });
});
