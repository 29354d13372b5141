import { createRequire } from 'node:module';
import { expect } from 'chai';
import { memoizeValidatorRoutePatterns } from './route-patterns.js';

describe('OpenAPI route patterns', () => {
  it("compiles each pattern the validator looks up once, and matches as before", () => {
    memoizeValidatorRoutePatterns();
    memoizeValidatorRoutePatterns(); // idempotent: a second server in the process
    const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
    const { pathToRegexp } = fromValidator('path-to-regexp') as { pathToRegexp: (p: string, o?: object) => { regexp: RegExp; keys: Array<{ name: string }> } };
    const first = pathToRegexp('/api/model/:code/version/:version', { sensitive: false, strict: false });
    const again = pathToRegexp('/api/model/:code/version/:version', { sensitive: false, strict: false });
    expect(again).to.equal(first);
    expect(pathToRegexp('/api/model/:code/version/:version', { sensitive: true, strict: false })).to.not.equal(first);
    expect(pathToRegexp('/api/model/:code/version/:version', { sensitive: false, strict: false, end: false })).to.not.equal(first);
    expect(first.keys.map((k) => k.name)).to.deep.equal(['code', 'version']);
    for (let i = 0; i < 2; i++) expect(first.regexp.exec('/api/model/iris/version/1')?.slice(1)).to.deep.equal(['iris', '1']);
    expect(first.regexp.exec('/api/model/iris')).to.equal(null);
  });
});
