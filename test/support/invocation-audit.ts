import type { Db } from '../../infra/db/database.js';
import { unique } from './platform.js';

// Every write to the invocation rows of one model, recorded by a PostgreSQL
// trigger with the process that made it (its connection's application_name),
// so a test can tell which process held each lease and whether any write
// changed a row under a lease its writer did not hold.

export interface AuditedWrite {
  seq: number;
  invocation_id: string;
  /** The application_name of the connection that wrote (`?application_name=` in a process's DATABASE_URL). */
  writer: string;
  /** Null for the insert. */
  old_status: string | null;
  new_status: string;
  old_attempts: number | null;
  new_attempts: number;
  /** Whether the row's lease had run out when this write changed it. */
  lease_ran_out: boolean;
}

/** A stale or otherwise impossible write, with why. */
export type StaleWrite = AuditedWrite & { why: string };

const FINAL = `('COMPLETED', 'ERROR')`;

/** The DATABASE_URL for a process whose writes the audit names `writer`. */
export function databaseUrlOf(url: string, writer: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', writer);
  return named.toString();
}

export class InvocationAudit {
  private constructor(
    private readonly db: Db,
    private readonly table: string,
  ) {}

  /** Installs the audit table and trigger for the invocations of `modelId`. */
  static async install(db: Db, modelId: number): Promise<InvocationAudit> {
    const table = unique('invocation_audit').replace(/-/g, '_');
    await db.raw(`create table ${table} (
      seq bigserial primary key,
      invocation_id uuid not null,
      writer text not null,
      old_status text,
      new_status text not null,
      old_attempts integer,
      new_attempts integer not null,
      lease_ran_out boolean not null)`);
    // The checks look up each write's claim: without it they scan the table once per write, past the statement timeout at thousands of invocations.
    await db.raw(`create index on ${table} (invocation_id, new_attempts)`);
    await db.raw(`create function ${table}() returns trigger language plpgsql as $$
      begin
        if new.model_id = ${Number(modelId)} then
          insert into ${table} (invocation_id, writer, old_status, new_status, old_attempts, new_attempts, lease_ran_out)
          values (new.id, current_setting('application_name'),
                  case when tg_op = 'UPDATE' then old.status end, new.status,
                  case when tg_op = 'UPDATE' then old.attempts end, new.attempts,
                  tg_op = 'UPDATE' and coalesce(old.lease_expires_at < now(), false));
        end if;
        return new;
      end $$`);
    await db.raw(`create trigger ${table} after insert or update on invocations for each row execute function ${table}()`);
    return new InvocationAudit(db, table);
  }

  async drop(): Promise<void> {
    await this.db.raw(`drop trigger if exists ${this.table} on invocations`);
    await this.db.raw(`drop function if exists ${this.table}()`);
    await this.db.raw(`drop table if exists ${this.table}`);
  }

  /** Every write, in the order they happened to each row. */
  async writes(): Promise<AuditedWrite[]> {
    return (await this.db.raw(`select * from ${this.table} order by seq`)).rows as AuditedWrite[];
  }

  /**
   * The writes no correct fencing lets through: a change to a finished
   * invocation; a lease number moved other than by a claim; a claim of a run
   * whose lease had not run out; a write of a run (heartbeat, result,
   * failure, release) by a process other than the one whose claim took the
   * row's current lease, the expiry of a lease that ran out aside.
   */
  async staleWrites(): Promise<StaleWrite[]> {
    const rows = await this.db.raw(`
      with claims as (
        select invocation_id, new_attempts as lease, writer from ${this.table}
         where old_status is not null and new_attempts is distinct from old_attempts
      ), judged as (
        select a.*, case
          when a.old_status in ${FINAL} then 'changed an invocation already finished'
          when a.old_status is not null and a.new_attempts <> a.old_attempts and not (a.new_status = 'IN_PROGRESS' and a.new_attempts = a.old_attempts + 1)
            then 'moved the lease number other than by a claim'
          when a.old_status = 'IN_PROGRESS' and a.new_attempts <> a.old_attempts and not a.lease_ran_out
            then 'claimed a run whose lease had not run out'
          when a.old_status = 'IN_PROGRESS' and a.new_attempts = a.old_attempts and not (a.new_status = 'QUEUED' and a.lease_ran_out)
               and a.writer is distinct from (select c.writer from claims c where c.invocation_id = a.invocation_id and c.lease = a.old_attempts)
            then 'wrote a run under a lease another process held'
        end as why
        from ${this.table} a
      )
      select * from judged where why is not null order by seq`);
    return rows.rows as StaleWrite[];
  }

  /** How many times each invocation moved into a final status. */
  async finals(): Promise<Map<string, AuditedWrite[]>> {
    const byId = new Map<string, AuditedWrite[]>();
    for (const write of await this.writes()) {
      if (!['COMPLETED', 'ERROR'].includes(write.new_status) || ['COMPLETED', 'ERROR'].includes(write.old_status ?? '')) continue;
      byId.set(write.invocation_id, [...(byId.get(write.invocation_id) ?? []), write]);
    }
    return byId;
  }

  /** The leases each invocation was claimed under, in order, with the process that claimed it. */
  async claims(): Promise<Map<string, Array<{ lease: number; writer: string }>>> {
    const byId = new Map<string, Array<{ lease: number; writer: string }>>();
    for (const write of await this.writes()) {
      if (write.old_status === null || write.new_attempts === write.old_attempts) continue;
      byId.set(write.invocation_id, [...(byId.get(write.invocation_id) ?? []), { lease: write.new_attempts, writer: write.writer }]);
    }
    return byId;
  }

  /**
   * The invocations `writer` holds now, or held when it died: claimed by it
   * under a lease it never finished (no COMPLETED, ERROR or release of that
   * lease by it).
   */
  async heldBy(writer: string): Promise<Map<string, number>> {
    const rows = await this.db.raw(
      `select c.invocation_id, c.new_attempts as lease from ${this.table} c
        where c.writer = ? and c.old_status is not null and c.new_attempts is distinct from c.old_attempts
          and not exists (select 1 from ${this.table} f
                           where f.invocation_id = c.invocation_id and f.writer = c.writer and f.old_status = 'IN_PROGRESS'
                             and f.new_status <> 'IN_PROGRESS' and f.old_attempts = c.new_attempts)`,
      [writer],
    );
    return new Map((rows.rows as Array<{ invocation_id: string; lease: number }>).map((row) => [row.invocation_id, row.lease]));
  }
}
