import { InputError } from '../../kernel/errors/errors.js';
import type { RegistryConnector } from '../../infra/connectors/types.js';
import { checkIoSchema, type ChainLink, type IoSchema, type ModelPayload } from './payload.js';

/** A payload whose input and output schemas are known, given or read from the registry. */
export type CompletePayload = ModelPayload & { input_schema: IoSchema; output_schema: IoSchema };

/**
 * Fills the schemas a registration leaves out from what the registry that
 * serves the model records (an MLflow signature); a schema neither gives is
 * a 400 naming the field.
 */
export async function withRegistrySchemas(link: ChainLink, registry: RegistryConnector, deploymentKey: string): Promise<CompletePayload> {
  const { payload, field } = link;
  if (payload.input_schema && payload.output_schema) return payload as CompletePayload;
  const found = (await registry.schemasOf?.(payload.model_code, payload.version)) ?? {};
  const pick = (given: IoSchema | undefined, read: IoSchema | undefined, name: 'input_schema' | 'output_schema'): IoSchema => {
    if (given) return given;
    if (!read) {
      const path = `${field}${name}`;
      throw new InputError(`${path} is required: the registry of deployment "${deploymentKey}" records no signature for (${payload.model_code}, ${payload.version}).`, [{ field: path, message: 'is required' }]);
    }
    checkIoSchema(read, `${field}${name}`, name === 'input_schema');
    return read;
  };
  return { ...payload, input_schema: pick(payload.input_schema, found.input, 'input_schema'), output_schema: pick(payload.output_schema, found.output, 'output_schema') };
}
