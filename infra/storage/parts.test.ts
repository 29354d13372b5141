import { expect } from 'chai';
import { inParts, partSizeFor } from './parts.js';

const MIB = 1024 * 1024;

async function* chunks(sizes: number[]): AsyncGenerator<Buffer> {
  for (const size of sizes) yield Buffer.alloc(size, 1);
}

async function partSizes(sizes: number[], partSize: number): Promise<number[]> {
  const result: number[] = [];
  for await (const part of inParts(chunks(sizes), partSize)) result.push(part.length);
  return result;
}

describe('multipart parts', () => {
  it('uses 8 MiB parts unless the limit needs bigger ones to fit 10,000 parts', () => {
    expect(partSizeFor(0)).to.equal(8 * MIB);
    expect(partSizeFor(80_000 * MIB)).to.equal(8 * MIB);
    expect(partSizeFor(80_001 * MIB)).to.equal(9 * MIB);
  });

  it('regroups chunks into parts of at least the part size, only the last smaller', async () => {
    expect(await partSizes([4, 4, 4, 4, 3], 8)).to.deep.equal([8, 8, 3]);
    expect(await partSizes([5, 5, 5], 8)).to.deep.equal([10, 5]);
    expect(await partSizes([], 8)).to.deep.equal([]);
  });
});
