import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import type { ModelType } from './model-routing.js';
import type { OllamaPullProgress, OllamaTagModel } from './ollama/ollama.types.js';

const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;

export function checkModelName(name: unknown): string {
  if (typeof name !== 'string' || !MODEL_NAME.test(name.trim())) {
    throw new PlatformError(
      'BAD_REQUEST',
      "'model' must be a model name such as llama3.2:3b or hf.co/org/repo:Q4_K_M",
      [{ field: 'model', message: 'invalid model name' }],
    );
  }
  return name.trim();
}

export interface AdminModelView {
  name: string;
  type: ModelType;
  size: number;
  modified_at: string;
  details: Record<string, unknown>;
  loaded: boolean;
  expires_at: string | null;
  /** Kept loaded by the gateway (a slot): loaded again whenever the gateway starts. */
  slot: boolean;
  /** Needs this model answers as the configured fallback. */
  fallback_for: string[];
}

/** A pull record with a percentage when the runtime gives sizes. */
export type PullProgress = OllamaPullProgress & { percent?: number };

export interface OpenAiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** The gateway's addition: what the model can be asked to do (the model types the routing knows). */
  type: ModelType;
}

/** `hf.co/org/repo:tag` is owned by `org`, `user/model` by `user`, a library model by `library` (as Ollama's /v1 says). */
export function ownerOf(name: string): string {
  const parts = name.split('/');
  if (parts.length >= 3) return parts[parts.length - 2];
  return parts.length === 2 ? parts[0] : 'library';
}

/**
 * `/v1/models`: the models installed in the runtime (what a client can select), with their types; and
 * the admin's model management, including the gateway's slots (models kept loaded, loaded again at start).
 */
@Injectable()
export class ModelsService implements OnApplicationBootstrap {
  private readonly logger = new Logger('GatewayModels');

  constructor(private readonly gateway: GatewaySettingsService) {}

  /** Loads the slot models again in the background; a model that fails is reported, not fatal. */
  onApplicationBootstrap(): void {
    for (const [model, slot] of Object.entries(this.gateway.settings.loaded_models)) {
      this.load(model, slot.keep_alive, { remember: false }).catch((error: unknown) =>
        this.logger.warn(`could not load slot model ${model}: ${(error as Error).message}`),
      );
    }
  }

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

  /** The admin's view: every installed model with its type and load state, and what is running. */
  async adminList(): Promise<{ models: AdminModelView[]; running: string[] }> {
    this.gateway.catalog.invalidate();
    const [installed, running] = await Promise.all([this.gateway.catalog.list(), this.gateway.client.running()]);
    const loaded = new Map(running.map((model) => [model.name, model]));
    const fallbacks = Object.entries(this.gateway.settings.fallback_models);
    const models = await Promise.all(
      installed.map(async (model): Promise<AdminModelView> => ({
        name: model.name,
        type: (await this.gateway.catalog.typeOf(model.name)) ?? 'text',
        size: model.size,
        modified_at: model.modified_at,
        details: { ...(model.details ?? {}) },
        loaded: loaded.has(model.name),
        expires_at: loaded.get(model.name)?.expires_at ?? null,
        slot: model.name in this.gateway.settings.loaded_models,
        fallback_for: fallbacks
          .filter(([, name]) => name && (name === model.name || `${name}:latest` === model.name))
          .map(([need]) => need),
      })),
    );
    return { models: models.sort((a, b) => a.name.localeCompare(b.name)), running: running.map((model) => model.name) };
  }

  /**
   * Loads a model and keeps it in memory for `keepAlive` (Ollama syntax: "10m", -1 = until unloaded),
   * and remembers it as a slot so the gateway loads it again when it starts.
   */
  async load(
    name: unknown,
    keepAlive: string | number = '30m',
    options: { remember: boolean } = { remember: true },
  ): Promise<{ model: string; loaded: true }> {
    const model = await this.installed(name);
    await this.gateway.client.keepAlive(
      model.name,
      keepAlive,
      (await this.gateway.catalog.typeOf(model.name)) === 'embedding',
    );
    if (options.remember) {
      const slots = { ...this.gateway.settings.loaded_models, [model.name]: { keep_alive: keepAlive } };
      await this.gateway.update({ loaded_models: slots }, false);
    }
    return { model: model.name, loaded: true };
  }

  /** Unloads a model and frees its slot. */
  async unload(name: unknown): Promise<{ model: string; loaded: false }> {
    const model = await this.installed(name);
    await this.gateway.client.keepAlive(model.name, 0, (await this.gateway.catalog.typeOf(model.name)) === 'embedding');
    if (model.name in this.gateway.settings.loaded_models) {
      const slots = Object.fromEntries(
        Object.entries(this.gateway.settings.loaded_models).filter(([slot]) => slot !== model.name),
      );
      await this.gateway.update({ loaded_models: slots }, false);
    }
    return { model: model.name, loaded: false };
  }

  async delete(name: unknown): Promise<{ model: string; deleted: true }> {
    const model = await this.installed(name);
    await this.gateway.client.delete(model.name);
    this.gateway.catalog.invalidate();
    if (model.name in this.gateway.settings.loaded_models) {
      const slots = { ...this.gateway.settings.loaded_models };
      delete slots[model.name];
      await this.gateway.update({ loaded_models: slots }, false);
    }
    return { model: model.name, deleted: true };
  }

  /** Pulls a model from the runtime's registry, yielding its progress; the catalog is refreshed at the end. */
  async *pull(name: unknown, signal?: AbortSignal): AsyncGenerator<PullProgress> {
    const model = checkModelName(name);
    try {
      for await (const record of this.gateway.client.pull(model, signal)) {
        if (record.error) throw new PlatformError('BAD_REQUEST', `Pulling ${model} failed: ${record.error}`);
        const percent =
          record.total && record.completed !== undefined
            ? Math.floor((record.completed / record.total) * 100)
            : undefined;
        yield percent === undefined ? record : { ...record, percent };
      }
    } finally {
      this.gateway.catalog.invalidate();
    }
  }

  private async installed(name: unknown): Promise<OllamaTagModel> {
    const model = await this.gateway.catalog.find(checkModelName(name));
    if (!model)
      throw new PlatformError('NOT_FOUND', `The model '${String(name)}' is not installed`, [
        { field: 'model', message: 'model_not_found' },
      ]);
    return model;
  }
}
