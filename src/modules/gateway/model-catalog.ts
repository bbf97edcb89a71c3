import type { OllamaClient } from './ollama/ollama-client.js';
import type { OllamaTagModel } from './ollama/ollama.types.js';
import { typeFromCapabilities, typeFromName, type ModelType } from './model-routing.js';

/** `llama3` and `llama3:latest` are one model to Ollama. */
export function canonicalModelName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? name : `${name}:latest`;
}

interface Cached<T> {
  value: T;
  fetchedAt: number;
  expiresAt: number;
}

/**
 * What the runtime has installed and what each model can do, cached for `cacheSeconds` so a request
 * costs no extra round trip: `/api/tags` for the list, `/api/show` capabilities per model (name rules
 * when the runtime reports none), the admin's per-model override first. An unknown name refreshes the
 * list once before it counts as missing, so a model pulled a moment ago is found.
 */
export class ModelCatalog {
  private installed: Cached<Map<string, OllamaTagModel>> | null = null;
  private loading: Promise<Map<string, OllamaTagModel>> | null = null;
  private readonly types = new Map<string, Cached<ModelType>>();

  constructor(
    private readonly client: () => OllamaClient,
    private readonly overrides: () => Record<string, ModelType>,
    private readonly cacheSeconds: number,
  ) {}

  invalidate(): void {
    this.installed = null;
    this.types.clear();
  }

  async list(): Promise<OllamaTagModel[]> {
    return [...(await this.installedModels()).values()];
  }

  /**
   * How many models the runtime had installed when last asked, without waiting for it (0 before the first
   * answer); a stale count starts a refresh in the background for the next caller.
   */
  knownCount(): number {
    if (!this.installed || this.installed.expiresAt <= Date.now()) void this.installedModels().catch(() => undefined);
    return this.installed?.value.size ?? 0;
  }

  /** The installed model by name (with or without its tag), or undefined. */
  async find(name: string): Promise<OllamaTagModel | undefined> {
    const key = canonicalModelName(name);
    let models = await this.installedModels();
    // At most one refresh a second for names that are not there (a typo must not hammer the runtime).
    if (!models.has(key) && this.installed && this.installed.fetchedAt < Date.now() - 1000) {
      this.installed = null;
      models = await this.installedModels();
    }
    return models.get(key);
  }

  /** The model's type, or undefined when it is not installed. */
  async typeOf(name: string): Promise<ModelType | undefined> {
    const overrides = this.overrides();
    const model = await this.find(name);
    if (!model) return undefined;
    const override = overrides[name] ?? overrides[model.name];
    if (override) return override;
    const cached = this.types.get(model.name);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    let type: ModelType;
    try {
      type = typeFromCapabilities((await this.client().show(model.name)).capabilities) ?? typeFromName(model.name);
    } catch {
      type = typeFromName(model.name);
    }
    const now = Date.now();
    this.types.set(model.name, { value: type, fetchedAt: now, expiresAt: now + this.cacheSeconds * 1000 });
    return type;
  }

  private async installedModels(): Promise<Map<string, OllamaTagModel>> {
    if (this.installed && this.installed.expiresAt > Date.now()) return this.installed.value;
    this.loading ??= this.client()
      .tags()
      .then((models) => {
        const byName = new Map(models.map((model) => [canonicalModelName(model.name), model]));
        const now = Date.now();
        this.installed = { value: byName, fetchedAt: now, expiresAt: now + this.cacheSeconds * 1000 };
        return byName;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }
}
