import { expect } from 'chai';
import crypto from 'node:crypto';
import type { Db } from '../../infra/db/database.js';
import type { Cursor } from '../../infra/db/keyset.js';
import { sharedDatabase } from '../../test/support/database.js';
import { usersStore } from './users.store.js';
import { workspacesStore } from './workspaces.store.js';

describe('workspaces store: the workspaces of a member, by keyset pages', () => {
  let db: Db;
  const unique = (prefix: string) => `${prefix}-${crypto.randomBytes(5).toString('hex')}`;

  async function memberOf(count: number) {
    const user = await usersStore.insert(db, { email: `${unique('member')}@x.test`, password_hash: null });
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const workspace = await workspacesStore.insert(db, unique('ws'), false, null);
      await usersStore.upsertMembership(db, user.id, workspace.id, 'user');
      ids.push(workspace.id);
    }
    return { userId: user.id, ids };
  }

  async function walk(userId: number, limit: number) {
    const seen: number[] = [];
    const totals: number[] = [];
    let after: Cursor | undefined;
    do {
      const page = await workspacesStore.page(db, { limit, offset: 0, ...(after && { after }) }, userId);
      expect(page.rows.length).to.be.at.most(limit);
      seen.push(...page.rows.map((row) => row.id));
      totals.push(page.total);
      after = page.next;
    } while (after);
    return { seen, totals };
  }

  before(async () => {
    db = await sharedDatabase();
  });

  it('walks more workspaces than a page holds, newest first, without a duplicate or a gap', async () => {
    const member = await memberOf(7);
    const { seen, totals } = await walk(member.userId, 3);
    expect(seen).to.deep.equal([...member.ids].reverse());
    expect(totals).to.deep.equal([7, 7, 7]);
  });

  it('never shows another user\'s workspaces, nor a deleted one', async () => {
    const [member, other] = [await memberOf(4), await memberOf(3)];
    const shared = await workspacesStore.insert(db, unique('shared'), false, null);
    await usersStore.upsertMembership(db, member.userId, shared.id, 'supervisor');
    await usersStore.upsertMembership(db, other.userId, shared.id, 'user');
    await workspacesStore.markDeleted(db, member.ids[1]!);
    const { seen } = await walk(member.userId, 2);
    expect(seen).to.deep.equal([shared.id, member.ids[3]!, member.ids[2]!, member.ids[0]!]);
    expect(seen).to.not.include.members(other.ids);
  });
});
