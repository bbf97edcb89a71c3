// /live: live voice over the gateway's session API (POST/DELETE /v1/audio/live) and its WebSocket protocol.
// Speech is recognised in the browser (SpeechRecognition) where there is one, else recorded and sent to the
// transcription endpoint; the server answers with text deltas and spoken sentences, played in order.
import { api, h, notify, render } from '/_tb/tb.js';
import {
  CHAT_TYPES,
  chatModelOptions,
  field,
  formatMoney,
  listModels,
  microphoneRecorder,
  transcribe,
  withUserKey,
} from '/user/session.js';

const PING_INTERVAL_MS = 25_000;
const AUDIO_TYPES = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav' };

function base64Bytes(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** Plays spoken sentences one after another; `stop()` silences it and drops what is queued. */
function sentencePlayer(list, onChange) {
  const audio = new Audio();
  const queue = [];
  let current = null;

  const finish = (item, state) => {
    if (current !== item) return;
    item.status.textContent = state;
    URL.revokeObjectURL(item.url);
    current = null;
    next();
  };
  const next = () => {
    if (current || queue.length === 0) return onChange();
    current = queue.shift();
    const item = current;
    item.status.textContent = 'playing';
    audio.src = item.url;
    audio.play().catch(() => finish(item, 'could not be played'));
    onChange();
  };
  audio.addEventListener('ended', () => current && finish(current, 'played'));
  audio.addEventListener('error', () => current && finish(current, 'could not be played'));

  return {
    get busy() {
      return current !== null || queue.length > 0;
    },
    add(text, chunks, format) {
      const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      const status = h('span', { class: 'muted' }, 'queued');
      list.append(
        h(
          'li',
          {},
          h('span', { class: 'sentence' }, text),
          ' ',
          h('span', { class: 'muted' }, `${bytes} B ${format}`),
          ' — ',
          status,
        ),
      );
      list.lastElementChild.scrollIntoView({ block: 'nearest' });
      if (!AUDIO_TYPES[format]) {
        status.textContent = `${format} cannot be played here`;
        return;
      }
      queue.push({ url: URL.createObjectURL(new Blob(chunks, { type: AUDIO_TYPES[format] })), status });
      next();
    },
    stop() {
      for (const item of queue.splice(0)) {
        item.status.textContent = 'skipped';
        URL.revokeObjectURL(item.url);
      }
      if (current) {
        audio.pause();
        finish(current, 'stopped');
      }
    },
  };
}

async function start(app, key) {
  const models = (await listModels(key)).filter((model) => CHAT_TYPES.has(model.type) || model.type === 'tts');
  const chatModels = models.filter((model) => CHAT_TYPES.has(model.type));
  const ttsModel = models.find((model) => model.type === 'tts')?.id ?? 'tts';
  const Recognition = window.SpeechRecognition ?? window.webkitSpeechRecognition;

  const inputs = {
    model: h('select', { id: 'model' }, chatModelOptions(chatModels)),
    system: h(
      'textarea',
      { id: 'system-prompt', rows: 2 },
      'You are a helpful voice assistant. Answer in a few short sentences.',
    ),
    ttl: h('input', { id: 'ttl', type: 'number', min: '5', max: '20', step: '1', value: '15', required: true }),
    voiceModel: h('input', { id: 'voice-model', value: ttsModel }),
    voice: h('input', { id: 'voice', value: 'alloy' }),
    speed: h('input', { id: 'speed', type: 'number', min: '0.25', max: '4', step: '0.05', value: '1' }),
    format: h(
      'select',
      { id: 'format' },
      Object.keys(AUDIO_TYPES).map((format) => h('option', { value: format }, format)),
    ),
    wakeEnabled: h('input', { id: 'wake-enabled', type: 'checkbox' }),
    wakeWords: h('input', { id: 'wake-words', placeholder: 'hey toolbox, computer' }),
    wakeMode: h(
      'select',
      { id: 'wake-mode' },
      h('option', { value: 'pre' }, 'before the question (“hey toolbox, …”)'),
      h('option', { value: 'post' }, 'after it (“…, hey toolbox”)'),
      h('option', { value: 'mid' }, 'anywhere (removed from the text)'),
    ),
    inputMode: h(
      'select',
      { id: 'input-mode' },
      h(
        'option',
        { value: 'recognition', disabled: !Recognition },
        Recognition ? 'Browser speech recognition' : 'Browser speech recognition (not in this browser)',
      ),
      h('option', { value: 'record' }, 'Record, then transcribe on the server'),
    ),
    sttModel: h('input', { id: 'stt-model', value: 'whisper-1' }),
    language: h('input', { id: 'language', value: navigator.language || 'en-US' }),
  };
  inputs.inputMode.value = Recognition ? 'recognition' : 'record';

  const startButton = h('button', { type: 'submit', id: 'start' }, 'Start session');
  const settings = h(
    'form',
    { id: 'settings', class: 'panel', onsubmit: (event) => void open(event) },
    h('h2', {}, 'Settings'),
    h(
      'fieldset',
      { id: 'settings-fields' },
      h('legend', { class: 'visually-hidden' }, 'Session settings'),
      chatModels.length ? field('Model', inputs.model) : h('p', { class: 'bad' }, 'No chat model is installed.'),
      field('System prompt', inputs.system),
      field('Session length (minutes, 5–20)', inputs.ttl),
      h(
        'details',
        {},
        h('summary', {}, 'Voice'),
        field('Speech model', inputs.voiceModel),
        field('Voice', inputs.voice),
        field('Speed', inputs.speed),
        field('Audio format', inputs.format),
      ),
      h(
        'details',
        { open: true },
        h('summary', {}, 'Wake word'),
        h(
          'div',
          { class: 'row check' },
          inputs.wakeEnabled,
          h('label', { for: 'wake-enabled' }, 'Answer only when a wake word is said'),
        ),
        field('Wake words (comma-separated)', inputs.wakeWords),
        field('Where the wake word is said', inputs.wakeMode),
      ),
      h(
        'details',
        {},
        h('summary', {}, 'Speech input'),
        field('Listen with', inputs.inputMode),
        field('Language', inputs.language, 'For browser speech recognition (e.g. en-US, de-DE).'),
        field('Transcription model', inputs.sttModel, 'For recorded speech.'),
      ),
    ),
    h('div', { class: 'row' }, startButton),
  );

  const status = h('p', { id: 'status', role: 'status', 'aria-live': 'polite' }, 'Not connected.');
  const hearing = h('p', { id: 'hearing', class: 'muted hearing', 'aria-live': 'off' });
  const log = h('div', { id: 'live-log', class: 'chat-log', role: 'log', 'aria-label': 'Conversation' });
  const speech = h('ol', { id: 'speech', class: 'speech-list', 'aria-label': 'Spoken sentences' });
  const talkButton = h(
    'button',
    { type: 'button', id: 'talk', 'aria-pressed': 'false', disabled: true },
    'Start listening',
  );
  const interruptButton = h(
    'button',
    { type: 'button', id: 'interrupt', class: 'danger', disabled: true },
    'Interrupt',
  );
  const endButton = h('button', { type: 'button', id: 'end', class: 'secondary', disabled: true }, 'End session');
  const typed = h('input', { id: 'typed', autocomplete: 'off', disabled: true, placeholder: 'Or type here…' });
  const typedForm = h(
    'form',
    {
      class: 'row typed',
      onsubmit: (event) => {
        event.preventDefault();
        const text = typed.value.trim();
        if (!text) return;
        typed.value = '';
        say(text);
      },
    },
    h('label', { for: 'typed', class: 'visually-hidden' }, 'Type instead of speaking'),
    typed,
    h('button', { type: 'submit', class: 'secondary', id: 'typed-send', disabled: true }, 'Send'),
  );
  const player = sentencePlayer(speech, () => updateButtons());

  render(
    app,
    h(
      'div',
      { class: 'playground' },
      settings,
      h(
        'section',
        { class: 'panel chat', 'aria-label': 'Conversation' },
        status,
        h('div', { class: 'row' }, talkButton, interruptButton, endButton),
        hearing,
        log,
        typedForm,
        h('h2', {}, 'Speech'),
        speech,
      ),
    ),
  );

  let session = null; // { token, expiresAt, socket, config, pingTimer }
  let turn = null; // { userLine, output, meta }
  let pending = null; // what was said while a turn ran (sent once it ended)
  let listening = false;
  let recognition = null;
  const recorder = microphoneRecorder();
  let audioChunks = null; // { text, format, chunks } of the sentence being received

  function setStatus(text, { error = false } = {}) {
    status.textContent = text;
    status.classList.toggle('bad', error);
  }

  function updateButtons() {
    const connected = session !== null;
    talkButton.disabled = !connected;
    endButton.disabled = !connected;
    typed.disabled = !connected;
    typedForm.querySelector('button').disabled = !connected;
    interruptButton.disabled = !connected || (turn === null && !player.busy);
    document.getElementById('settings-fields').disabled = connected;
    startButton.disabled = connected;
  }

  function line(role, text) {
    const element = h(
      'div',
      { class: `message ${role}` },
      h('div', { class: 'role' }, role === 'user' ? 'You' : 'Assistant'),
      h('p', { class: 'text' }, text),
    );
    log.append(element);
    element.scrollIntoView({ block: 'nearest' });
    return element;
  }

  function send(message) {
    if (session?.socket.readyState === WebSocket.OPEN) session.socket.send(JSON.stringify(message));
  }

  /** A complete utterance: starts a turn, or (barge-in) interrupts the running one and follows it. */
  function say(text) {
    if (!session || !text.trim()) return;
    hearing.textContent = '';
    if (turn) {
      pending = text;
      interrupt();
      return;
    }
    const userLine = line('user', text);
    turn = { userLine, output: null, meta: null };
    send({ type: 'end_turn', transcript: text });
    setStatus('Thinking…');
    updateButtons();
  }

  function interrupt() {
    player.stop();
    if (turn) send({ type: 'interrupt' });
    updateButtons();
  }

  function flushAudio() {
    if (!audioChunks) return;
    player.add(audioChunks.text, audioChunks.chunks, audioChunks.format);
    audioChunks = null;
  }

  function endTurn() {
    turn = null;
    updateButtons();
    if (pending) {
      const next = pending;
      pending = null;
      say(next);
    }
  }

  function onMessage(message) {
    // A sentence arrives as consecutive `audio` messages with the same text; anything else ends it.
    if (message.type !== 'audio' || audioChunks?.text !== message.text) flushAudio();
    switch (message.type) {
      case 'ready':
        session.config = message.config;
        setStatus(
          `${
            session.config?.wake_word?.enabled
              ? `Connected. Say “${session.config.wake_word.words[0]}” with your question.`
              : 'Connected. Speak, or type below.'
          } The session lasts until ${new Date(session.expiresAt).toLocaleTimeString()}.`,
        );
        updateButtons();
        if (inputs.inputMode.value === 'recognition') startListening();
        return;
      case 'transcript':
        hearing.textContent = message.is_final ? '' : `Hearing: ${message.text}`;
        return;
      case 'text':
        if (!turn) return;
        if (!turn.output) turn.output = line('assistant', '').querySelector('.text');
        turn.output.append(message.text);
        setStatus('Answering…');
        return;
      case 'audio':
        if (!audioChunks) audioChunks = { text: message.text, format: message.format, chunks: [] };
        audioChunks.chunks.push(base64Bytes(message.audio));
        return;
      case 'interrupted':
        setStatus('Interrupted.');
        return;
      case 'turn_complete': {
        const facts = [
          `${message.usage.tokens_in} in / ${message.usage.tokens_out} out tokens`,
          `cost ${formatMoney(message.cost)}`,
          `${message.latency_ms} ms`,
          message.tools_called.length ? `tools: ${message.tools_called.join(', ')}` : null,
          message.interrupted ? 'interrupted' : null,
        ].filter(Boolean);
        const container = turn?.output?.parentElement ?? line('assistant', message.output_transcript);
        container.classList.toggle('interrupted', message.interrupted);
        container.append(h('p', { class: 'meta muted turn-meta' }, facts.join(' · ')));
        if (turn && message.input_transcript !== turn.userLine.querySelector('.text').textContent) {
          turn.userLine.append(h('p', { class: 'meta muted' }, `heard as: ${message.input_transcript}`));
        }
        setStatus('Your turn.');
        endTurn();
        return;
      }
      case 'wake_word_required':
        turn?.userLine.classList.add('ignored');
        turn?.userLine.append(
          h('p', { class: 'meta warn' }, `No wake word: say “${session.config?.wake_word?.words?.[0] ?? ''}” first.`),
        );
        setStatus('Wake word not heard.');
        endTurn();
        return;
      case 'error':
        if (/^Speech failed/.test(message.message)) {
          notify(message.message, { error: true });
          return;
        }
        setStatus(message.message, { error: true });
        if (!/still running/.test(message.message)) endTurn();
        return;
      default:
        return; // pong and types this page does not know
    }
  }

  function startListening() {
    if (listening) return;
    if (inputs.inputMode.value === 'record') {
      void recorder
        .start()
        .then(() => {
          listening = true;
          talkButton.textContent = 'Stop and send';
          talkButton.setAttribute('aria-pressed', 'true');
          setStatus('Recording… press “Stop and send” when done.');
        })
        .catch((error) => setStatus(error?.message ?? String(error), { error: true }));
      return;
    }
    recognition = new Recognition();
    recognition.continuous = true;
    recognition.interimResults = true;
    recognition.lang = inputs.language.value.trim() || 'en-US';
    recognition.onresult = (event) => {
      let interim = '';
      for (let index = event.resultIndex; index < event.results.length; index += 1) {
        const result = event.results[index];
        const text = result[0]?.transcript ?? '';
        if (result.isFinal) {
          send({ type: 'audio', transcript: text, is_final: true });
          say(text);
        } else interim += text;
      }
      if (interim) send({ type: 'audio', transcript: interim, is_final: false });
    };
    recognition.onerror = (event) => {
      if (event.error === 'no-speech' || event.error === 'aborted') return;
      stopListening();
      setStatus(`Speech recognition stopped (${event.error}); use recording or type instead.`, { error: true });
      inputs.inputMode.value = 'record';
    };
    // Browsers end recognition after a silence: listen again while the user wants to.
    recognition.onend = () => {
      if (listening && recognition) recognition.start();
    };
    listening = true;
    recognition.start();
    talkButton.textContent = 'Stop listening';
    talkButton.setAttribute('aria-pressed', 'true');
  }

  function stopListening() {
    if (!listening) return;
    listening = false;
    talkButton.textContent = 'Start listening';
    talkButton.setAttribute('aria-pressed', 'false');
    if (recognition) {
      const current = recognition;
      recognition = null;
      current.stop();
    }
    if (recorder.recording) {
      setStatus('Transcribing…');
      void recorder
        .stop()
        .then((recording) => transcribe(key, recording, inputs.sttModel.value.trim() || 'whisper-1'))
        .then((text) => {
          send({ type: 'audio', transcript: text, is_final: true });
          say(text);
        })
        .catch((error) => setStatus(error?.message ?? String(error), { error: true }));
    }
  }

  function closed(reason) {
    stopListening();
    player.stop();
    clearInterval(session?.pingTimer);
    session = null;
    turn = null;
    pending = null;
    setStatus(reason);
    updateButtons();
  }

  async function open(event) {
    event.preventDefault();
    if (session) return;
    const words = inputs.wakeWords.value
      .split(',')
      .map((word) => word.trim())
      .filter(Boolean);
    if (inputs.wakeEnabled.checked && words.length === 0) {
      setStatus('Enter at least one wake word, or turn the wake word off.', { error: true });
      inputs.wakeWords.focus();
      return;
    }
    startButton.disabled = true;
    setStatus('Connecting…');
    try {
      const created = await api('/v1/audio/live', {
        method: 'POST',
        key,
        body: {
          llm_config: { model: inputs.model.value, system_prompt: inputs.system.value.trim() || undefined },
          voice_config: {
            model: inputs.voiceModel.value.trim() || 'tts',
            voice_id: inputs.voice.value.trim() || 'alloy',
            speed: Number(inputs.speed.value) || 1,
          },
          wake_word_config: { enabled: inputs.wakeEnabled.checked, words, mode: inputs.wakeMode.value },
          audio_config: { output_format: inputs.format.value, allow_interrupt: true },
          session_ttl_minutes: Number(inputs.ttl.value),
        },
      });
      // The page's own origin (right behind a proxy too); the path is the session's.
      const socketUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/audio/live/ws/${encodeURIComponent(created.token)}`;
      const socket = new WebSocket(socketUrl);
      session = {
        token: created.token,
        expiresAt: created.expires_at,
        socket,
        config: null,
        pingTimer: setInterval(() => send({ type: 'ping' }), PING_INTERVAL_MS),
      };
      socket.addEventListener('message', (message) => {
        try {
          onMessage(JSON.parse(message.data));
        } catch (error) {
          notify(`Unreadable message: ${error.message}`, { error: true });
        }
      });
      socket.addEventListener('close', (close) =>
        closed(
          close.code === 4004
            ? 'The session expired. Start a new one.'
            : `Session ended${close.reason ? `: ${close.reason}` : ''}.`,
        ),
      );
      updateButtons();
    } catch (error) {
      startButton.disabled = false;
      setStatus(error?.message ?? String(error), { error: true });
    }
  }

  talkButton.addEventListener('click', () => (listening ? stopListening() : startListening()));
  interruptButton.addEventListener('click', () => interrupt());
  endButton.addEventListener('click', async () => {
    if (!session) return;
    const { token } = session;
    stopListening();
    try {
      await api(`/v1/audio/live/${encodeURIComponent(token)}`, { method: 'DELETE', key });
    } catch (error) {
      session?.socket.close();
      notify(error?.message ?? String(error), { error: true });
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !interruptButton.disabled) interrupt();
  });
  window.addEventListener('pagehide', () => send({ type: 'close' }));
  updateButtons();
}

withUserKey(document.getElementById('app'), (key) => start(document.getElementById('app'), key));
