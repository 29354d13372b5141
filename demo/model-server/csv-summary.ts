import type { DemoModel, InferenceRequestBody } from './demo-model.js';
import { BadInferenceRequest } from './problems.js';

// A file-in, file-out demo model: it reads a CSV sent as a base64 BYTES
// tensor named "file" and answers a summary CSV (column, non-empty values)
// as a base64 BYTES tensor named "file", plus the row count.

function csvOf(request: InferenceRequestBody): string {
  const inputs = Array.isArray(request.inputs) ? (request.inputs as Array<{ name?: unknown; data?: unknown }>) : [];
  const file = inputs.find((input) => input.name === 'file');
  const data = Array.isArray(file?.data) ? file.data[0] : undefined;
  if (typeof data !== 'string') throw new BadInferenceRequest('expected an input tensor "file" holding the base64 of a CSV file');
  return Buffer.from(data, 'base64').toString('utf8');
}

export const csvSummary: DemoModel = {
  name: 'csv-summary',
  version: '1',
  inputs: [{ name: 'file', datatype: 'BYTES', shape: [1] }],
  outputs: [
    { name: 'file', datatype: 'BYTES', shape: [1] },
    { name: 'rows', datatype: 'INT64', shape: [1] },
  ],
  infer(request) {
    const [header, ...rows] = csvOf(request).split(/\r?\n/).filter((line) => line.trim() !== '');
    if (!header) throw new BadInferenceRequest('the CSV file is empty');
    const columns = header.split(',');
    const filled = columns.map((_, i) => rows.filter((row) => (row.split(',')[i] ?? '').trim() !== '').length);
    const summary = ['column,non_empty', ...columns.map((column, i) => `${column},${filled[i]}`)].join('\n') + '\n';
    return {
      outputs: [
        { name: 'file', datatype: 'BYTES', shape: [1], data: [Buffer.from(summary).toString('base64')], parameters: { content_type: 'base64', filename: 'summary.csv', media_type: 'text/csv' } },
        { name: 'rows', datatype: 'INT64', shape: [1], data: [rows.length] },
      ],
    };
  },
};
