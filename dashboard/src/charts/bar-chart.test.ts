import { expect } from 'chai';
import { barChart, domainOf, largest, MAX_BARS } from './bar-chart.js';

const options = { title: 'probabilities', format: (value: number) => String(value) };
const rects = (svg: string) => [...svg.matchAll(/<rect class="([^"]+)" x="([^"]+)" y="[^"]+" width="([^"]+)"/g)].map(([, cls, x, width]) => ({ cls, x: Number(x), width: Number(width) }));

describe('dashboard bar chart', () => {
  it('draws one bar per value from the zero axis, largest first, with each name and value as text', () => {
    const svg = barChart([{ name: 'versicolor', value: 0.25 }, { name: 'setosa', value: 0.75 }, { name: 'virginica', value: 0 }], options).text;
    expect(svg).to.contain('role="img"').and.contain('<title>probabilities</title>');
    expect(svg).to.contain('aria-label="probabilities: setosa 0.75, versicolor 0.25, virginica 0."');
    expect([...svg.matchAll(/<text class="bar-name"[^>]*>([^<]*)</g)].map((m) => m[1])).to.deep.equal(['setosa', 'versicolor', 'virginica']);
    expect([...svg.matchAll(/<text class="bar-value"[^>]*>([^<]*)</g)].map((m) => m[1])).to.deep.equal(['0.75', '0.25', '0']);
    expect(rects(svg)).to.deep.equal([
      { cls: 'bar', x: 170, width: 240 },
      { cls: 'bar', x: 170, width: 80 },
      { cls: 'bar', x: 170, width: 0 },
    ]);
  });

  it('draws negative values to the left of the zero axis', () => {
    const svg = barChart([{ name: 'petal_width', value: -1 }, { name: 'sepal_length', value: 3 }], { ...options, title: 'contributions' }).text;
    const zero = Number(/<line class="zero-axis" x1="([^"]+)"/.exec(svg)![1]);
    expect(zero).to.equal(230);
    const [positive, negative] = rects(svg);
    expect(positive).to.deep.equal({ cls: 'bar', x: zero, width: 180 });
    expect(negative).to.deep.equal({ cls: 'bar negative', x: 170, width: 60 });
  });

  it('escapes names and titles, and cuts long names in the drawing only', () => {
    const long = 'petal width in centimetres, measured twice';
    const svg = barChart([{ name: '<script>x</script>', value: 1 }, { name: long, value: 0.5 }], { ...options, title: '"><b>' }).text;
    expect(svg).not.to.contain('<script>').and.not.to.contain('"><b>');
    expect(svg).to.contain('&lt;script&gt;x&lt;/script&gt;');
    expect(svg).to.contain('>petal width in cent…</text>').and.contain(`<title>${long}: 0.5</title>`);
  });

  it(`draws the ${MAX_BARS} largest in magnitude and counts the rest`, () => {
    const bars = Array.from({ length: MAX_BARS + 3 }, (_, i) => ({ name: `f${i}`, value: i % 2 ? i : -i }));
    const svg = barChart(bars, options).text;
    expect(rects(svg)).to.have.length(MAX_BARS);
    expect(svg).to.contain('and 3 more, smaller in magnitude').and.contain('f22 -22, f21 21').and.contain(', and 3 more.');
    expect(svg).not.to.contain('>f2<');
  });

  it('keeps ties in their order, leaves out what is not a number, and draws nothing for no values', () => {
    expect(largest([{ name: 'a', value: 1 }, { name: 'b', value: Number.NaN }, { name: 'c', value: -1 }], 5)).to.deep.equal({ shown: [{ name: 'a', value: 1 }, { name: 'c', value: -1 }], hidden: 0 });
    expect(domainOf([{ name: 'a', value: 0 }])).to.deep.equal([0, 1]);
    expect(barChart([], options).text).to.equal('');
  });
});
