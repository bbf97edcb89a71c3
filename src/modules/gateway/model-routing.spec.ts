import { PlatformError } from '../../common/errors.js';
import { canServe, routeModel, typeFromCapabilities, typeFromName, type ModelType } from './model-routing.js';

describe('typeFromCapabilities', () => {
  it.each<[string[] | undefined, ModelType | null]>([
    [['completion', 'tools'], 'text'],
    [['completion', 'vision'], 'vision'],
    [['completion', 'vision', 'audio'], 'omni'],
    [['completion', 'audio'], 'omni'],
    [['embedding'], 'embedding'],
    [['completion', 'embedding'], 'text'],
    [['thinking'], null],
    [[], null],
    [undefined, null],
  ])('reads %j as %s', (capabilities, type) => {
    expect(typeFromCapabilities(capabilities)).toBe(type);
  });
});

describe('typeFromName', () => {
  it.each<[string, ModelType]>([
    ['llama3.2:latest', 'text'],
    ['llava:13b', 'vision'],
    ['qwen2.5-vl:7b', 'vision'],
    ['hf.co/acme/tiny-vision-vl:Q4_K_M', 'vision'],
    ['moondream:latest', 'vision'],
    ['gemma3n:e4b', 'omni'],
    ['nomic-embed-text:latest', 'embedding'],
    ['bge-m3:latest', 'embedding'],
    ['all-minilm:l6', 'embedding'],
    ['whisper-large-v3', 'audio'],
    ['kokoro', 'tts'],
    ['qwen3:0.6b', 'text'],
  ])('reads %s as %s', (name, type) => {
    expect(typeFromName(name)).toBe(type);
  });
});

describe('canServe', () => {
  it('lets omni models take images and audio, and keeps embeddings to embedding models', () => {
    expect(canServe('omni', 'vision')).toBe(true);
    expect(canServe('omni', 'audio')).toBe(true);
    expect(canServe('vision', 'audio')).toBe(false);
    expect(canServe('text', 'embedding')).toBe(false);
    expect(canServe('embedding', 'chat')).toBe(false);
    expect(canServe('tts', 'chat')).toBe(false);
  });
});

describe('routeModel', () => {
  const types: Record<string, ModelType> = { text: 'text', eyes: 'vision', ears: 'omni', vectors: 'embedding' };
  const typeOf = (name: string) => types[name];

  it('keeps the requested model when it can serve the need', () => {
    expect(routeModel({ requested: 'eyes', need: 'vision', typeOf, fallbacks: { vision: 'ears' } })).toEqual({
      model: 'eyes',
      routedFrom: null,
    });
  });

  it('uses the configured fallback and says which model was asked for', () => {
    expect(routeModel({ requested: 'text', need: 'vision', typeOf, fallbacks: { vision: 'eyes' } })).toEqual({
      model: 'eyes',
      routedFrom: 'text',
    });
  });

  it('answers 404 for a model that is not installed, even with a fallback', () => {
    const call = () => routeModel({ requested: 'ghost', need: 'chat', typeOf, fallbacks: { chat: 'text' } });
    expect(call).toThrow(PlatformError);
    expect(call).toThrow("The model 'ghost' does not exist");
    try {
      call();
    } catch (error) {
      expect((error as PlatformError).status).toBe(404);
    }
  });

  it.each([
    [{}, 'no audio fallback model is configured (fallback_models.audio)'],
    [{ audio: 'missing' }, "the configured audio fallback 'missing' is not installed"],
    [{ audio: 'eyes' }, "the configured audio fallback 'eyes' is a vision model"],
  ])('answers 400 naming what is missing (%j)', (fallbacks, reason) => {
    const call = () => routeModel({ requested: 'text', need: 'audio', typeOf, fallbacks });
    expect(call).toThrow(reason);
    expect(call).toThrow("The model 'text' is a text model and cannot take audio input");
  });
});
