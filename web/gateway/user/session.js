// The user key shared by /user/, /playground/ and /live: asked for once per tab (sessionStorage), checked by the
// page's first call, forgotten on a 401 and by "Sign out". Also the pieces the three pages have in common.
import { api, h, render, storedKey } from '/_tb/tb.js';

const KEY_NAME = 'user';

/**
 * Runs `start(key)` with the stored key, or first asks for one. A key the gateway refuses (401/403) is forgotten
 * and asked for again with the reason; any other failure is shown in place of the page.
 */
export function withUserKey(app, start) {
  const sessionSlot = document.getElementById('session');

  const signOut = () => {
    storedKey.clear(KEY_NAME);
    location.reload();
  };

  const begin = async (key) => {
    render(app, h('p', { class: 'muted' }, 'Loading…'));
    try {
      await start(key);
      if (sessionSlot)
        render(sessionSlot, h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'));
    } catch (error) {
      if (error?.status === 401 || error?.status === 403) {
        storedKey.clear(KEY_NAME);
        askForKey(error.message);
      } else {
        render(app, h('p', { class: 'bad', role: 'alert' }, error?.message ?? String(error)));
      }
    }
  };

  const askForKey = (problem) => {
    const input = h('input', {
      id: 'api-key',
      name: 'api-key',
      type: 'password',
      autocomplete: 'off',
      spellcheck: 'false',
      required: true,
      placeholder: 'sk-tb-…',
      'aria-describedby': 'api-key-help',
    });
    const form = h(
      'form',
      {
        class: 'panel key-form',
        onsubmit: (event) => {
          event.preventDefault();
          const key = input.value.trim();
          if (!key) return;
          storedKey.set(KEY_NAME, key);
          void begin(key);
        },
      },
      h('label', { for: 'api-key' }, 'Your API key'),
      input,
      h(
        'p',
        { id: 'api-key-help', class: 'muted' },
        'Kept in this tab only (session storage) and sent to this gateway alone. An admin gives you a key, or ask for an account on the ',
        h('a', { href: '/' }, 'start page'),
        '.',
      ),
      problem ? h('p', { class: 'bad', role: 'alert' }, problem) : null,
      h('button', { type: 'submit' }, 'Continue'),
    );
    render(app, form);
    input.focus();
  };

  const key = storedKey.get(KEY_NAME);
  if (key) void begin(key);
  else askForKey();
}

/** The models a key may use (`GET /v1/models`), sorted by id. */
export async function listModels(key) {
  const { data } = await api('/v1/models', { key });
  return [...data].sort((a, b) => a.id.localeCompare(b.id));
}

export const CHAT_TYPES = new Set(['text', 'vision', 'omni']);

/** `<option>`s for chat models, the first text model chosen (the cheapest to try things with). */
export function chatModelOptions(models) {
  const preferred = models.find((model) => model.type === 'text') ?? models[0];
  return models.map((model) =>
    h(
      'option',
      { value: model.id, 'data-type': model.type, selected: model === preferred },
      `${model.id} (${model.type})`,
    ),
  );
}
export const IMAGE_TYPES = new Set(['vision', 'omni']);

/** 0.0123456 → "0.012346" (balances and costs are kept in micro-units). */
export function formatMoney(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(6).replace(/0{1,4}$/, '') : '—';
}

/** A labelled form field: field('Temperature', h('input', {...}), 'hint'). The control needs an id. */
export function field(label, control, hint) {
  const hintId = hint ? `${control.id}-hint` : undefined;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('p', { id: hintId, class: 'muted hint' }, hint) : null,
  );
}

/** Records from the microphone: `start()`, then `stop()` resolves with the recording (a Blob). */
export function microphoneRecorder() {
  let recorder = null;
  let stream = null;
  const chunks = [];
  return {
    get recording() {
      return recorder !== null;
    },
    async start() {
      if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
        throw new Error('This browser cannot record audio');
      }
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      chunks.length = 0;
      recorder = new MediaRecorder(stream);
      recorder.addEventListener('dataavailable', (event) => {
        if (event.data.size > 0) chunks.push(event.data);
      });
      recorder.start();
    },
    stop() {
      return new Promise((resolve) => {
        if (!recorder) return resolve(null);
        const current = recorder;
        current.addEventListener(
          'stop',
          () => {
            for (const track of stream.getTracks()) track.stop();
            recorder = null;
            resolve(new Blob(chunks, { type: current.mimeType || 'audio/webm' }));
          },
          { once: true },
        );
        current.stop();
      });
    },
  };
}

/** The file name the transcription backend sees, from the recording's media type. */
function recordingName(blob) {
  const type = blob.type.split(';')[0];
  const extension = { 'audio/webm': 'webm', 'audio/ogg': 'ogg', 'audio/mp4': 'm4a', 'audio/wav': 'wav' }[type];
  return `recording.${extension ?? 'webm'}`;
}

/** `POST /v1/audio/transcriptions` with a recording; resolves with the text. */
export async function transcribe(key, blob, model) {
  const form = new FormData();
  form.append('file', blob, recordingName(blob));
  form.append('model', model);
  const answer = await api('/v1/audio/transcriptions', { method: 'POST', body: form, key });
  return typeof answer === 'string' ? answer : (answer?.text ?? '');
}
