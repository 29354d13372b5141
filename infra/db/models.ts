import { Model } from 'objection';

// Objection models mirror the tables one to one (snake_case properties, as
// stored). Stores in features/*/store.ts are the only code that queries them.

export type Role = 'user' | 'supervisor';


export class WorkspaceRow extends Model {
  static override tableName = 'workspaces';
  id!: number;
  name!: string;
  disabled!: boolean;
  created_by_id!: number | null;
  created_at!: Date;
  updated_at!: Date;
  deleted_at!: Date | null;
}






export class WorkspaceLogoRow extends Model {
  static override tableName = 'workspace_logos';
  static override idColumn = 'workspace_id';
  workspace_id!: number;
  content_type!: string;
  data!: Buffer;
  updated_at!: Date;
}
