import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import { ShadowDispatch } from './shadows.js';
import type { AppendedInvocation } from './state.js';

describe('shadow dispatch', () => {
  it('drops, counts and logs a copy once the process has its most copies under way, and copies again once they end', async () => {
    let release!: () => void;
    const stalled = new Promise<never[]>((resolve) => (release = () => resolve([])));
    const warned: string[] = [];
    const dispatch = new ShadowDispatch({} as Db, { shadowsOf: () => stalled }, { warn: ((...args: unknown[]) => void warned.push(String(args[1]))) as never }, 2);
    const primary = (id: string) => ({ id, session_id: `session-${id}` }) as AppendedInvocation;

    dispatch.copyAfter(primary('a'), () => undefined);
    dispatch.copyAfter(primary('b'), () => undefined);
    dispatch.copyAfter(primary('c'), () => undefined);
    expect(dispatch.dropped).to.deep.equal({ queue_full: 0, backlog: 1, failed: 0 });
    expect(warned).to.deep.equal(['shadow invocations dropped']);

    release();
    await dispatch.settled();
    dispatch.copyAfter(primary('d'), () => undefined);
    await dispatch.settled();
    expect(dispatch.dropped.backlog, 'no copy is under way any more').to.equal(1);
  });
});
