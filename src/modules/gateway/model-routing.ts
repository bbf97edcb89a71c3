import { PlatformError } from '../../common/errors.js';

/** The model types: what a model can be asked to do. */
export const MODEL_TYPES = ['text', 'vision', 'omni', 'embedding', 'tts', 'audio'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/** What a request needs from the model that answers it. */
export type ModelNeed = 'chat' | 'vision' | 'audio' | 'embedding';

export const MODEL_NEEDS: readonly ModelNeed[] = ['chat', 'vision', 'audio', 'embedding'];

/** The types that can serve each need: an image needs eyes, audio needs ears (omni, or a speech model). */
const SERVES: Record<ModelNeed, readonly ModelType[]> = {
  chat: ['text', 'vision', 'omni'],
  vision: ['vision', 'omni'],
  audio: ['omni', 'audio'],
  embedding: ['embedding'],
};

const NEED_LABEL: Record<ModelNeed, string> = {
  chat: 'chat',
  vision: 'images',
  audio: 'audio input',
  embedding: 'embeddings',
};

export function canServe(type: ModelType, need: ModelNeed): boolean {
  return SERVES[need].includes(type);
}

/**
 * A model's type from Ollama's `/api/show` capabilities (completion, vision, audio, tools, embedding …);
 * null when the runtime does not report them (older builds), so the name rules decide.
 */
export function typeFromCapabilities(capabilities: readonly string[] | undefined): ModelType | null {
  if (!capabilities || capabilities.length === 0) return null;
  const has = (capability: string) => capabilities.includes(capability);
  if (has('embedding') && !has('completion')) return 'embedding';
  if (has('audio')) return 'omni';
  if (has('vision')) return 'vision';
  if (has('completion')) return 'text';
  if (has('embedding')) return 'embedding';
  return null;
}

/** Name rules for runtimes that do not report capabilities; the first match wins, text otherwise. */
const NAME_RULES: Array<[RegExp, ModelType]> = [
  [/whisper|(^|[-_/:])stt([-_:]|$)|parakeet/i, 'audio'],
  [/(^|[-_/:])tts([-_:]|$)|kokoro|piper|bark|orpheus|xtts/i, 'tts'],
  [/embed|(^|[-_/:])bge|minilm|(^|[-_/:])e5[-_:]|nomic-embed|gte-/i, 'embedding'],
  [/omni|gemma3n|gemma-?4|qwen2(\.5)?-audio/i, 'omni'],
  [
    /llava|vision|(^|[-_/:])vl([-_:]|$)|-vl|moondream|bakllava|minicpm-v|pixtral|gemma3(?!n)|llama3\.2-vision/i,
    'vision',
  ],
];

export function typeFromName(name: string): ModelType {
  for (const [pattern, type] of NAME_RULES) if (pattern.test(name)) return type;
  return 'text';
}

export interface RoutingInput {
  /** The model the client asked for. */
  requested: string;
  need: ModelNeed;
  /** The type of an installed model (override, capabilities or name rules), undefined when it is not installed. */
  typeOf(model: string): ModelType | undefined;
  /** The configured fallback model per need (`fallback_models` of the gateway config). */
  fallbacks: Partial<Record<ModelNeed, string | null>>;
}

export interface RoutingDecision {
  model: string;
  /** Set when a configured fallback answers instead of the requested model (reported to the client). */
  routedFrom: string | null;
}

/**
 * Content routing: the requested model answers when it can; otherwise the fallback configured for the
 * need, if it is installed and can; otherwise a 400 naming what is missing. A model that is not installed
 * is a 404 — never a silent swap to some other model.
 */
export function routeModel({ requested, need, typeOf, fallbacks }: RoutingInput): RoutingDecision {
  const type = typeOf(requested);
  if (type === undefined) {
    throw new PlatformError('NOT_FOUND', `The model '${requested}' does not exist`, [
      { field: 'model', message: 'model_not_found' },
    ]);
  }
  if (canServe(type, need)) return { model: requested, routedFrom: null };
  const fallback = fallbacks[need];
  const fallbackType = fallback ? typeOf(fallback) : undefined;
  if (fallback && fallbackType !== undefined && canServe(fallbackType, need)) {
    return { model: fallback, routedFrom: requested };
  }
  const why = !fallback
    ? `no ${need} fallback model is configured (fallback_models.${need})`
    : fallbackType === undefined
      ? `the configured ${need} fallback '${fallback}' is not installed`
      : `the configured ${need} fallback '${fallback}' is a ${fallbackType} model`;
  throw new PlatformError(
    'BAD_REQUEST',
    `The model '${requested}' is a ${type} model and cannot take ${NEED_LABEL[need]}; ${why}. Use a ${SERVES[need].join(' or ')} model.`,
    [{ field: 'model', message: `needs a ${SERVES[need].join(' or ')} model` }],
  );
}
