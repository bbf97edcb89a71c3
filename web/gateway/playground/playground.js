// /playground/: streaming chat (SSE from /v1/chat/completions, rendered delta by delta) with model choice, system
// prompt and temperature; images for vision/omni models; recorded audio transcribed or sent as input_audio (WAV).
import { api, errorOf, h, notify, render } from '/_tb/tb.js';
import {
  CHAT_TYPES,
  IMAGE_TYPES,
  chatModelOptions,
  field,
  formatMoney,
  listModels,
  microphoneRecorder,
  transcribe,
  withUserKey,
} from '/user/session.js';

const IMAGE_MAX_BYTES = 10 * 1024 * 1024;

function readAsDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** Decodes a recording and writes it as 16-bit mono PCM WAV (what the gateway takes as input_audio). */
async function recordingToWav(blob) {
  const context = new AudioContext();
  try {
    const decoded = await context.decodeAudioData(await blob.arrayBuffer());
    const samples = decoded.getChannelData(0);
    const buffer = new ArrayBuffer(44 + samples.length * 2);
    const view = new DataView(buffer);
    const text = (offset, value) =>
      [...value].forEach((char, index) => view.setUint8(offset + index, char.charCodeAt(0)));
    text(0, 'RIFF');
    view.setUint32(4, 36 + samples.length * 2, true);
    text(8, 'WAVE');
    text(12, 'fmt ');
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true); // PCM
    view.setUint16(22, 1, true); // mono
    view.setUint32(24, decoded.sampleRate, true);
    view.setUint32(28, decoded.sampleRate * 2, true);
    view.setUint16(32, 2, true);
    view.setUint16(34, 16, true);
    text(36, 'data');
    view.setUint32(40, samples.length * 2, true);
    samples.forEach((sample, index) => {
      const clamped = Math.max(-1, Math.min(1, sample));
      view.setInt16(44 + index * 2, clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff, true);
    });
    return new Blob([buffer], { type: 'audio/wav' });
  } finally {
    void context.close();
  }
}

/** Reads an SSE body and calls `onEvent` with each parsed `data:` payload until `[DONE]`. */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      if (data === '[DONE]') return;
      onEvent(JSON.parse(data));
    }
  }
}

async function balanceOf(key) {
  try {
    return (await api('/user/api/me', { key })).balance;
  } catch {
    return null; // the admin key has no balance
  }
}

async function start(app, key) {
  const all = await listModels(key);
  const models = all.filter((model) => CHAT_TYPES.has(model.type));
  const sttModels = all.filter((model) => model.type === 'audio');
  const history = [];
  let attachments = [];
  let running = null;

  const modelSelect = h(
    'select',
    { id: 'model', name: 'model', onchange: () => updateCapabilities() },
    chatModelOptions(models),
  );
  const systemPrompt = h('textarea', {
    id: 'system-prompt',
    name: 'system',
    rows: 3,
    placeholder: 'You are a helpful assistant.',
  });
  const temperatureValue = h('output', { id: 'temperature-value', for: 'temperature' }, '0.7');
  const temperature = h('input', {
    id: 'temperature',
    name: 'temperature',
    type: 'range',
    min: '0',
    max: '2',
    step: '0.1',
    value: '0.7',
    oninput: () => (temperatureValue.value = temperature.value),
  });
  const maxTokens = h('input', {
    id: 'max-tokens',
    name: 'max_tokens',
    type: 'number',
    min: '1',
    placeholder: 'no limit',
  });
  const sttModel = h('input', { id: 'stt-model', name: 'stt_model', value: sttModels[0]?.id ?? 'whisper-1' });
  const audioMode = h(
    'select',
    { id: 'audio-mode', name: 'audio_mode' },
    h('option', { value: 'transcribe' }, 'Transcribe into the message'),
    h('option', { value: 'input_audio' }, 'Send as audio (omni models)'),
  );

  const log = h('div', {
    id: 'log',
    class: 'chat-log',
    role: 'log',
    'aria-live': 'polite',
    'aria-label': 'Conversation',
  });
  const prompt = h('textarea', {
    id: 'prompt',
    name: 'prompt',
    rows: 3,
    placeholder: 'Ask something… (Ctrl+Enter sends)',
  });
  const imageInput = h('input', {
    id: 'image',
    type: 'file',
    accept: 'image/*',
    multiple: true,
    class: 'visually-hidden',
    onchange: () => addImages(),
  });
  const imageButton = h('label', { for: 'image', class: 'button secondary file-button' }, 'Add image');
  const recordButton = h(
    'button',
    { type: 'button', class: 'secondary', id: 'record', 'aria-pressed': 'false', onclick: () => toggleRecording() },
    'Record audio',
  );
  const sendButton = h('button', { type: 'submit', id: 'send' }, 'Send');
  const stopButton = h(
    'button',
    { type: 'button', class: 'danger', id: 'stop', disabled: true, onclick: () => running?.abort() },
    'Stop',
  );
  const attachmentList = h('ul', { id: 'attachments', class: 'attachments', 'aria-label': 'Attachments' });
  const capabilityHint = h('p', { id: 'capability-hint', class: 'muted hint' });
  const recorder = microphoneRecorder();

  function selectedType() {
    return modelSelect.selectedOptions[0]?.dataset.type ?? 'text';
  }

  function updateCapabilities() {
    const type = selectedType();
    const images = IMAGE_TYPES.has(type);
    imageInput.disabled = !images;
    imageButton.classList.toggle('disabled', !images);
    imageButton.setAttribute('aria-disabled', String(!images));
    audioMode.querySelector('[value="input_audio"]').disabled = type !== 'omni';
    if (type !== 'omni' && audioMode.value === 'input_audio') audioMode.value = 'transcribe';
    capabilityHint.textContent =
      type === 'omni'
        ? 'This model reads text, images and audio.'
        : type === 'vision'
          ? 'This model reads text and images; recorded audio is transcribed first.'
          : 'This model reads text; recorded audio is transcribed first.';
  }

  function showAttachments() {
    render(
      attachmentList,
      attachments.map((attachment, index) =>
        h(
          'li',
          {},
          attachment.preview,
          h('span', {}, attachment.label),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'aria-label': `Remove ${attachment.label}`,
              onclick: () => {
                attachments.splice(index, 1);
                showAttachments();
              },
            },
            '×',
          ),
        ),
      ),
    );
  }

  async function addImages() {
    for (const file of imageInput.files) {
      if (file.size > IMAGE_MAX_BYTES) {
        notify(`${file.name} is larger than 10 MB`, { error: true });
        continue;
      }
      const url = await readAsDataUrl(file);
      attachments.push({
        label: file.name,
        part: { type: 'image_url', image_url: { url } },
        preview: h('img', { src: url, alt: file.name, class: 'thumb' }),
      });
    }
    imageInput.value = '';
    showAttachments();
  }

  async function toggleRecording() {
    if (!recorder.recording) {
      try {
        await recorder.start();
      } catch (error) {
        notify(error?.message ?? String(error), { error: true });
        return;
      }
      recordButton.textContent = 'Stop recording';
      recordButton.setAttribute('aria-pressed', 'true');
      return;
    }
    recordButton.disabled = true;
    try {
      const recording = await recorder.stop();
      recordButton.textContent = 'Record audio';
      recordButton.setAttribute('aria-pressed', 'false');
      if (!recording || recording.size === 0) throw new Error('Nothing was recorded');
      if (audioMode.value === 'input_audio') {
        const wav = await recordingToWav(recording);
        const url = await readAsDataUrl(wav);
        attachments.push({
          label: `recording (${Math.round(wav.size / 1024)} KB WAV)`,
          part: { type: 'input_audio', input_audio: { data: url.slice(url.indexOf(',') + 1), format: 'wav' } },
          preview: h('audio', { controls: true, src: url }),
        });
        showAttachments();
      } else {
        const text = await transcribe(key, recording, sttModel.value.trim() || 'whisper-1');
        prompt.value = prompt.value ? `${prompt.value} ${text}` : text;
        prompt.focus();
      }
    } catch (error) {
      notify(error?.message ?? String(error), { error: true });
    } finally {
      recordButton.disabled = false;
    }
  }

  function bubble(role, ...content) {
    const element = h(
      'div',
      { class: `message ${role}` },
      h('div', { class: 'role' }, role === 'user' ? 'You' : 'Assistant'),
      ...content,
    );
    log.append(element);
    element.scrollIntoView({ block: 'end' });
    return element;
  }

  async function send(event) {
    event.preventDefault();
    if (running) return;
    const text = prompt.value.trim();
    if (!text && attachments.length === 0) return;
    const parts = attachments.map((attachment) => attachment.part);
    const content = parts.length ? [...(text ? [{ type: 'text', text }] : []), ...parts] : text;
    bubble(
      'user',
      h('p', { class: 'text' }, text),
      attachments.map((attachment) => attachment.preview),
    );
    history.push({ role: 'user', content });
    prompt.value = '';
    attachments = [];
    showAttachments();

    const output = h('p', { class: 'text', id: `reply-${history.length}` });
    const meta = h('p', { class: 'meta muted' }, 'waiting for the first token…');
    const reply = bubble('assistant', output, meta);
    reply.setAttribute('aria-busy', 'true');
    const system = systemPrompt.value.trim();
    const body = {
      model: modelSelect.value,
      messages: [...(system ? [{ role: 'system', content: system }] : []), ...history],
      stream: true,
      stream_options: { include_usage: true },
      temperature: Number(temperature.value),
      ...(maxTokens.value ? { max_tokens: Number(maxTokens.value) } : {}),
    };
    const controller = new AbortController();
    running = controller;
    sendButton.disabled = true;
    stopButton.disabled = false;
    const balanceBefore = await balanceOf(key);
    const started = performance.now();
    let firstTokenMs = null;
    let usage = null;
    let answeredBy = body.model;
    let failure = null;
    try {
      const response = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) {
        const raw = await response.text();
        let parsed = raw;
        try {
          parsed = JSON.parse(raw);
        } catch {
          // not JSON
        }
        throw errorOf(response.status, parsed);
      }
      await readEvents(response, (chunk) => {
        if (chunk.error) throw new Error(chunk.error.message ?? 'The stream failed');
        if (chunk.model) answeredBy = chunk.model;
        if (chunk.usage) usage = chunk.usage;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          if (firstTokenMs === null) firstTokenMs = performance.now() - started;
          output.append(delta);
        }
      });
    } catch (error) {
      failure = error;
    } finally {
      running = null;
      sendButton.disabled = false;
      stopButton.disabled = true;
      reply.removeAttribute('aria-busy');
    }
    const totalMs = Math.round(performance.now() - started);
    if (output.textContent) history.push({ role: 'assistant', content: output.textContent });
    else history.pop();
    const balanceAfter = balanceBefore === null ? null : await balanceOf(key);
    const cost = balanceBefore !== null && balanceAfter !== null ? Math.max(0, balanceBefore - balanceAfter) : null;
    const facts = [
      answeredBy !== body.model ? `answered by ${answeredBy}` : null,
      usage ? `${usage.prompt_tokens} in / ${usage.completion_tokens} out tokens` : null,
      cost === null ? null : `cost ${formatMoney(cost)}`,
      firstTokenMs === null ? null : `first token ${Math.round(firstTokenMs)} ms`,
      `total ${totalMs} ms`,
    ].filter(Boolean);
    render(meta, facts.join(' · '));
    meta.dataset.promptTokens = usage?.prompt_tokens ?? '';
    meta.dataset.completionTokens = usage?.completion_tokens ?? '';
    if (failure) {
      const stopped = failure.name === 'AbortError';
      reply.append(
        h(
          'p',
          { class: stopped ? 'muted' : 'bad', role: stopped ? null : 'alert' },
          stopped ? 'Stopped.' : failure.message,
        ),
      );
    }
  }

  const clearButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      id: 'clear',
      onclick: () => {
        history.length = 0;
        render(log);
      },
    },
    'New chat',
  );

  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  const form = h(
    'form',
    { id: 'composer', class: 'composer', onsubmit: send },
    h('label', { for: 'prompt' }, 'Message'),
    prompt,
    attachmentList,
    h('div', { class: 'row' }, imageInput, imageButton, recordButton, sendButton, stopButton, clearButton),
  );

  render(
    app,
    h(
      'div',
      { class: 'playground chat-first' },
      h(
        'section',
        { class: 'panel settings', 'aria-labelledby': 'settings-heading' },
        h('h2', { id: 'settings-heading' }, 'Settings'),
        models.length ? field('Model', modelSelect) : h('p', { class: 'bad' }, 'No chat model is installed.'),
        capabilityHint,
        field('System prompt', systemPrompt),
        field(h('span', {}, 'Temperature ', temperatureValue), temperature),
        field('Max tokens', maxTokens),
        field('Recorded audio', audioMode),
        field('Transcription model', sttModel, 'Used when recorded audio is transcribed.'),
      ),
      h('section', { class: 'panel chat', 'aria-label': 'Chat' }, log, form),
    ),
  );
  updateCapabilities();
}

withUserKey(document.getElementById('app'), (key) => start(document.getElementById('app'), key));
