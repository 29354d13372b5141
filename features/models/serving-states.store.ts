import type { Runner } from '../../infra/db/database.js';
import type { ServingState } from './present.js';

/** A service's components, each with its state, by component name (`predictor`, `explainer`). */
export type ComponentStates = Partial<Record<string, ServingState>>;

/** Every query of `serving_states`: the private server writes what its watches see, the public server reads it. */
export interface ServingStatesStore {
  /** Inserts or changes the service's row; an equal one is left as it is. */
  put(db: Runner, namespace: string, name: string, components: ComponentStates): Promise<void>;
  /** Removes the namespace's services but those named: what its fresh list no longer holds. */
  keepOnly(db: Runner, namespace: string, names: string[]): Promise<void>;
  get(db: Runner, namespace: string, name: string): Promise<ComponentStates | undefined>;
}

export const servingStatesStore: ServingStatesStore = {
  put: async (db, namespace, name, components) => {
    // An equal row is left alone: every pass of every replica writes every service.
    await db.raw(
      `insert into serving_states (namespace, name, components) values (?, ?, ?::json)
       on conflict (namespace, name) do update set components = excluded.components, updated_at = now()
       where serving_states.components::text is distinct from excluded.components::text`,
      [namespace, name, JSON.stringify(components)],
    );
  },
  keepOnly: async (db, namespace, names) => {
    await db('serving_states').where({ namespace }).whereNotIn('name', names).delete();
  },
  get: async (db, namespace, name) => ((await db('serving_states').where({ namespace, name }).first('components')) as { components: ComponentStates } | undefined)?.components,
};
