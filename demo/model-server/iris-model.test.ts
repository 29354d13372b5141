import { expect } from 'chai';
import { IRIS_ROWS } from './iris-data.js';
import { IrisClassifier } from './iris-model.js';

describe('IrisClassifier', () => {
  const model = IrisClassifier.fit();

  it('is fitted on the whole data set: 150 flowers, 50 of each species', () => {
    expect(IRIS_ROWS).to.have.length(150);
    expect([0, 1, 2].map((species) => IRIS_ROWS.filter((row) => row[4] === species).length)).to.deep.equal([50, 50, 50]);
  });

  it('classifies at least 95% of the flowers it was fitted on correctly', () => {
    const correct = IRIS_ROWS.filter((row) => model.predict(row.slice(0, 4)).classIndex === row[4]).length;
    expect(correct / IRIS_ROWS.length).to.be.at.least(0.95);
  });

  it('gives probabilities that sum to one, highest for the predicted class', () => {
    const prediction = model.predict([6.3, 2.9, 5.6, 1.8]);
    expect(prediction.label).to.equal('virginica');
    expect(prediction.probabilities.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-9);
    expect(Math.max(...prediction.probabilities)).to.equal(prediction.probabilities[prediction.classIndex]);
  });

  it('explains a score as an intercept plus one contribution per feature', () => {
    const explanation = model.explain([5.1, 3.5, 1.4, 0.2]);
    expect(explanation.label).to.equal('setosa');
    expect(explanation.contributions).to.have.length(4);
    expect(explanation.intercept + explanation.contributions.reduce((a, b) => a + b, 0)).to.be.closeTo(explanation.score, 1e-9);
    // Short petals are what makes a setosa.
    expect(explanation.contributions[2]).to.be.greaterThan(0);
  });

  it('is deterministic: two fits give the same model', () => {
    expect(IrisClassifier.fit().predict([5.9, 3, 5.1, 1.8])).to.deep.equal(model.predict([5.9, 3, 5.1, 1.8]));
  });
});
