import { Injectable } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import type { ModelType } from './model-routing.js';
import type { OllamaTagModel } from './ollama/ollama.types.js';

export interface OpenAiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** The gateway's addition: what the model can be asked to do (the seed's model types). */
  type: ModelType;
}

/** `hf.co/org/repo:tag` is owned by `org`, `user/model` by `user`, a library model by `library` (as Ollama's /v1 says). */
export function ownerOf(name: string): string {
  const parts = name.split('/');
  if (parts.length >= 3) return parts[parts.length - 2];
  return parts.length === 2 ? parts[0] : 'library';
}

/** `/v1/models`: the models installed in the runtime (what a client can select), with their types. */
@Injectable()
export class ModelsService {
  constructor(private readonly gateway: GatewaySettingsService) {}

  async list(): Promise<{ object: 'list'; data: OpenAiModel[] }> {
    const models = await this.gateway.catalog.list();
    const data = await Promise.all(models.map((model) => this.describe(model)));
    return { object: 'list', data: data.sort((a, b) => a.id.localeCompare(b.id)) };
  }

  async get(id: string): Promise<OpenAiModel> {
    const model = await this.gateway.catalog.find(id);
    if (!model) {
      throw new PlatformError('NOT_FOUND', `The model '${id}' does not exist`, [
        { field: 'model', message: 'model_not_found' },
      ]);
    }
    return this.describe(model);
  }

  private async describe(model: OllamaTagModel): Promise<OpenAiModel> {
    const created = Math.floor(new Date(model.modified_at).getTime() / 1000);
    return {
      id: model.name,
      object: 'model',
      created: Number.isFinite(created) ? created : 0,
      owned_by: ownerOf(model.name),
      type: (await this.gateway.catalog.typeOf(model.name)) ?? 'text',
    };
  }
}
