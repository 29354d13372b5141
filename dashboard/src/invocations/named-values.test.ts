import { expect } from 'chai';
import { MAX_CHARTED_ROWS, namedRowsOf, namedValuesOf } from './named-values.js';

describe('dashboard named values of a result', () => {
  const probabilities = { name: 'probabilities', datatype: 'FP64', shape: [1, 3], data: [0.9, 0.07, 0.03], parameters: { classes: 'setosa, versicolor,virginica' } };

  it('names the columns of a tensor after its classes, one list per row of the batch', () => {
    expect(namedRowsOf(probabilities)).to.deep.equal({
      parameter: 'classes',
      rows: [[{ name: 'setosa', value: 0.9 }, { name: 'versicolor', value: 0.07 }, { name: 'virginica', value: 0.03 }]],
    });
    const contributions = { name: 'contributions', datatype: 'FP64', shape: [2, 2], data: [-1.5, 0.5, 2, -3], parameters: { feature_names: ['petal_length', 'petal_width'] } };
    expect(namedRowsOf(contributions)!.rows.map((row) => row.map((bar) => bar.value))).to.deep.equal([[-1.5, 0.5], [2, -3]]);
    expect(namedRowsOf({ ...probabilities, shape: [3] })!.rows).to.have.length(1);
  });

  it('leaves alone tensors whose names do not fit, whose data are not numbers, or whose batch is long', () => {
    expect(namedRowsOf({ ...probabilities, parameters: undefined })).to.equal(undefined);
    expect(namedRowsOf({ ...probabilities, parameters: { classes: 'setosa,versicolor' } })).to.equal(undefined);
    expect(namedRowsOf({ ...probabilities, data: [0.9, 'x', 0.03] })).to.equal(undefined);
    expect(namedRowsOf({ ...probabilities, data: [0.9, 0.07] })).to.equal(undefined);
    expect(namedRowsOf({ ...probabilities, shape: [1, 1, 3] })).to.equal(undefined);
    const long = MAX_CHARTED_ROWS + 1;
    expect(namedRowsOf({ ...probabilities, shape: [long, 3], data: Array.from({ length: long * 3 }, () => 0.5) })).to.equal(undefined);
  });

  it('reads an object of numbers as named values when its field names them or they are probabilities', () => {
    expect(namedValuesOf({ petal_width: -0.4, petal_length: 1.2 }, 'contributions')).to.deep.equal([{ name: 'petal_width', value: -0.4 }, { name: 'petal_length', value: 1.2 }]);
    expect(namedValuesOf({ setosa: 0.2, versicolor: 0.795, virginica: 0.001 })).to.have.length(3);
    expect(namedValuesOf({ a: 1, b: 2 }, 'feature_importances')).to.have.length(2);
  });

  it('keeps other objects as fields: a label and a count, a single number, text among the numbers', () => {
    expect(namedValuesOf({ class_id: 2, count: 5 })).to.equal(undefined);
    expect(namedValuesOf({ sepal_length: 5.1, sepal_width: 3.5 }, 'inputs')).to.equal(undefined);
    expect(namedValuesOf({ setosa: 1 }, 'probabilities')).to.equal(undefined);
    expect(namedValuesOf({ setosa: 0.5, label: 'setosa' }, 'probabilities')).to.equal(undefined);
  });
});
