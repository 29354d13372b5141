import { expect } from 'chai';
import { formatTime, formatValue, lineChart, splitAtGaps, valueRange } from './line-chart.js';

const options = { id: 'c1', title: 'Open sessions', start: 1_700_000_000, end: 1_700_003_600, step: 60 };

describe('dashboard line chart', () => {
  it('draws one polyline per series inside the plot, with its title and latest value described', () => {
    const short = { ...options, end: options.start + 120 };
    const svg = lineChart([{ label: 'active_sessions', points: [[short.start, 0], [short.start + 60, 2], [short.end, 4]] }], short).text;
    expect(svg).to.contain('<title id="c1-title">Open sessions</title>');
    expect(svg).to.contain('active_sessions: latest value 4.');
    const points = /<polyline class="series series-0" points="([^"]+)"/.exec(svg)![1]!.split(' ').map((p) => p.split(',').map(Number));
    expect(points[0]).to.deep.equal([44, 194]);
    expect(points[1]).to.deep.equal([255, 121.2]);
    expect(points[2]).to.deep.equal([466, 48.4]);
  });

  it('escapes series labels and titles', () => {
    const svg = lineChart([{ label: '<script>x</script>', points: [[options.start, 1]] }], { ...options, title: '"><b>' }).text;
    expect(svg).not.to.contain('<script>');
    expect(svg).not.to.contain('"><b>');
    expect(svg).to.contain('&lt;script&gt;');
  });

  it('says so when there is no data', () => {
    expect(lineChart([{ label: 'x', points: [] }], options).text).to.contain('No data in this time range.');
  });

  it('breaks a line where samples are missing and draws lone points as dots', () => {
    expect(splitAtGaps([[0, 1], [60, 1], [300, 2], [360, 2], [900, 3]], 120)).to.deep.equal([[[0, 1], [60, 1]], [[300, 2], [360, 2]], [[900, 3]]]);
    const svg = lineChart([{ label: 'x', points: [[options.start, 1], [options.start + 1800, 2]] }], options).text;
    expect(svg.match(/<circle/g)).to.have.length(2);
  });

  it('scales from zero to a round number, and copes with flat zero series', () => {
    expect(valueRange([{ label: 'a', points: [[0, 3], [1, 7.2]] }])).to.deep.equal([0, 10]);
    expect(valueRange([{ label: 'a', points: [[0, 0]] }])).to.deep.equal([0, 1]);
    expect(valueRange([{ label: 'a', points: [[0, -2], [1, 40]] }])).to.deep.equal([-2, 50]);
  });

  it('labels a short range with seconds, on fewer ticks', () => {
    const labels = (start: number, end: number) => [...lineChart([{ label: 'a', points: [[start, 1], [end, 2]] }], { ...options, start, end, step: 5 }).text.matchAll(/<text class="axis"[^>]*text-anchor="[a-z]+">([^<]+)<\/text>/g)].map((m) => m[1]).filter((text) => text!.includes(':'));
    expect(labels(1_700_000_000, 1_700_000_300)).to.deep.equal(['22:13:20', '22:15:00', '22:16:40', '22:18:20']);
    expect(labels(1_700_000_000, 1_700_003_600)).to.have.length(6);
  });

  it('formats values compactly and times in UTC', () => {
    expect([formatValue(0), formatValue(12.345), formatValue(1500), formatValue(2_500_000)]).to.deep.equal(['0', '12.3', '1.5k', '2.5M']);
    expect(formatTime(1_700_000_000, 300)).to.equal('22:13:20');
    expect(formatTime(1_700_000_000, 3600)).to.equal('22:13');
    expect(formatTime(1_700_000_000, 7 * 86400)).to.equal('11-14 22:13');
  });
});
