import { InputError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { AliasKey } from './aliases.store.js';

/** An alias name: lowercase letters, digits and '-', starting with a letter, 1 to 40 characters (also a CHECK of migration 0040). */
export const ALIAS_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** The key of an alias in the caller's workspace; a name that is no alias name is a 400 before anything is read. */
export function aliasKeyOf(principal: Principal, code: string, alias: string): AliasKey {
  if (!ALIAS_NAME.test(alias)) throw new InputError(`alias: "${alias}" is not an alias name: lowercase letters, digits and '-', starting with a letter, at most 40 characters.`, [{ field: 'alias', message: 'not an alias name' }]);
  return { workspaceId: principal.workspace!.id, modelCode: code, alias };
}

/** The columns of a history row that name its alias. */
export const moveKeyOf = (key: AliasKey) => ({ workspace_id: key.workspaceId, model_code: key.modelCode, alias: key.alias });
