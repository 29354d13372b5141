import type { presentDataset } from '../../../features/datasets/present.js';
import type { ExportTarget } from '../../../features/datasets/service.js';
import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, code, csrfField, dataTable, selectField, textField, timeText, type Choice } from './components.js';
import { datasetsLink, sessionLink } from './links.js';

export type DatasetItem = ReturnType<typeof presentDataset>;

/**
 * The formats an export may be written in: a choice of the form, and what it
 * adds to the export. A format the dataset service learns is one more line.
 */
export const DATASET_FORMATS: ReadonlyArray<Choice & { target: Partial<ExportTarget> }> = [
  { value: 'jsonl', label: 'JSON Lines', target: {} },
  { value: 'parquet', label: 'Apache Parquet', target: { format: 'parquet' } },
];

export interface ExportDraft {
  model: string;
  session: string;
  storage_key: string;
  name: string;
  format: string;
}

export interface DatasetsPage {
  csrfToken: string;
  models: Choice[];
  /** The workspace's storage keys, for those who may list them (supervisors); others type one. */
  storageKeys?: string[];
  draft: ExportDraft;
  datasets: DatasetItem[];
  total: number;
  older?: string;
  paged: boolean;
}

const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

export function datasetsBody(page: DatasetsPage): Html {
  return html`<section aria-labelledby="export">
  <h2 id="export">Export a closed session</h2>
  ${exportForm(page)}
</section>
<section aria-labelledby="dataset-list">
  <h2 id="dataset-list">Your datasets</h2>
  <p class="muted">${String(page.total)} ${page.total === 1 ? 'dataset version' : 'dataset versions'}, newest first. Each export is a new version; its files never change.</p>
  ${dataTable({
    caption: 'Datasets',
    headers: ['Dataset', 'From', 'Records', 'Storage', 'Exported', 'Download'],
    rows: page.datasets.map((d) => [
      html`<span class="wrap">${d.name}</span> ${badge(`v${d.version}`)}`,
      source(d),
      html`${String(d.row_count)} <span class="muted">(${sizeText(d.size)})</span>`,
      code(d.storage_key),
      timeText(d.created_at),
      downloads(d),
    ]),
    empty: 'You have not exported any dataset yet.',
  })}
  <p class="actions">
    ${page.paged ? html`<a class="button secondary" href="${datasetsLink()}">Newest datasets</a>` : ''}
    ${page.older ? html`<a class="button secondary" href="${datasetsLink({ after: page.older })}">Older datasets</a>` : ''}
  </p>
</section>`;
}

function exportForm(page: DatasetsPage): Html {
  const { draft } = page;
  const storage = page.storageKeys
    ? selectField({ name: 'storage_key', label: 'Storage', choices: page.storageKeys.map((key) => ({ value: key, label: key })), value: draft.storage_key, hint: 'Where the files are written.' })
    : textField({ name: 'storage_key', label: 'Storage key', value: draft.storage_key, required: true, maxlength: 100, hint: 'A storage configuration of the workspace (a supervisor can tell you which).' });
  return html`<form class="card row-form" method="post" action="${at('/datasets')}">
  ${csrfField(page.csrfToken)}
  ${selectField({ name: 'model', label: 'Model', choices: page.models, value: draft.model })}
  ${textField({ name: 'session', label: 'Session', value: draft.session, required: true, pattern: UUID_PATTERN, hint: 'The id of a closed session of yours (Export on the Sessions page fills it in).' })}
  ${storage}
  ${textField({ name: 'name', label: 'Name', value: draft.name, maxlength: 200, hint: 'Default: session-<id>.' })}
  ${selectField({ name: 'format', label: 'Format', choices: DATASET_FORMATS, value: draft.format })}
  <button type="submit" class="button primary">Export</button>
</form>`;
}

function source(dataset: DatasetItem): Html {
  const selection = dataset.selection;
  if (selection.kind === 'session') {
    const model = { code: selection.model_code, version: selection.model_version };
    return html`<a href="${sessionLink(model, selection.session_id)}" aria-label="Session ${selection.session_id}">${selection.model_code} ${selection.model_version}</a>`;
  }
  return html`<span class="muted">closed sessions${selection.model_code ? ` of ${selection.model_code}` : ''}</span>`;
}

/** The name of a table's format, as the export form offers it. */
const tableLabel = (format: string) => DATASET_FORMATS.find((choice) => choice.value === format)?.label ?? format;

function downloads(dataset: DatasetItem): Html {
  const base = at(`/datasets/${dataset.id}`);
  return html`<div class="actions">
  <a href="${base}/records" download aria-label="Download the records of ${dataset.name} version ${String(dataset.version)}">Records</a>
  ${dataset.table ? html`<a href="${base}/table" download aria-label="Download the table of ${dataset.name} version ${String(dataset.version)}">Table (${tableLabel(dataset.table.format)})</a>` : ''}
  <a href="${base}/manifest" download aria-label="Download the manifest of ${dataset.name} version ${String(dataset.version)}">Manifest</a>
</div>`;
}

/** Bytes for people: B, KiB or MiB, one decimal. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
