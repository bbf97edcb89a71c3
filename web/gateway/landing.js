// The gateway's landing page: status, the public model list, pricing from the configuration, quick-start
// snippets with this gateway's base URL, and the signup form.
import { api, formatDate, h, render, tabs, withBusy } from '/_tb/tb.js';

/** What each model type can do (the seed's model types). */
const CAPABILITIES = {
  text: ['chat', 'tool calling'],
  vision: ['chat', 'images'],
  omni: ['chat', 'images', 'audio'],
  embedding: ['text vectors'],
  tts: ['text to speech'],
  audio: ['speech to text'],
};

const baseUrl = `${location.origin}/v1`;

function duration(seconds) {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return days > 0 ? `${days} d ${hours} h` : hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min`;
}

function stat(label, value, className = '') {
  return h('div', {}, h('div', { class: 'muted' }, label), h('div', { class: `stat ${className}` }, value));
}

async function showStatus() {
  const [health, uptime] = await Promise.allSettled([api('/health'), api('/api/uptime')]);
  const up = health.status === 'fulfilled' && health.value?.status === 'ok';
  const runtime = uptime.status === 'fulfilled' ? uptime.value : null;
  render(
    '#status',
    stat('Gateway', up ? 'Up' : 'Not answering', up ? 'ok' : 'bad'),
    stat(
      'Model runtime',
      runtime === null ? 'Unknown' : runtime.runtime_reachable ? 'Reachable' : 'Not reachable',
      runtime?.runtime_reachable ? 'ok' : 'bad',
    ),
    runtime && stat('Running since', duration(runtime.uptime_seconds)),
    runtime && h('p', { class: 'muted' }, `Started ${formatDate(runtime.started_at)}`),
  );
}

async function showModels() {
  const { models } = await api('/api/models');
  if (models.length === 0) {
    render('#models', h('p', { class: 'muted' }, 'No model is installed yet.'));
    return models;
  }
  render(
    '#models',
    h(
      'table',
      { id: 'model-table' },
      h('caption', { class: 'visually-hidden' }, 'Installed models and what they can do'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Model'),
          h('th', { scope: 'col', class: 'hide-narrow' }, 'Type'),
          h('th', { scope: 'col' }, 'Capabilities'),
        ),
      ),
      h(
        'tbody',
        {},
        models.map((model) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, model.id)),
            h('td', { class: 'hide-narrow' }, model.type),
            h(
              'td',
              {},
              h(
                'span',
                { class: 'capabilities' },
                (CAPABILITIES[model.type] ?? []).map((name) => h('span', { class: 'badge' }, name)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
  return models;
}

function price(value) {
  return `${Number(value).toLocaleString(undefined, { maximumFractionDigits: 6 })}`;
}

async function showPricing() {
  const { prices, model_prices: modelPrices, rate_limits: limits } = await api('/api/pricing');
  const special = Object.entries(modelPrices ?? {});
  render(
    '#pricing',
    h(
      'div',
      { class: 'tier panel', id: 'tier-payg' },
      h('h3', {}, 'Pay as you go'),
      h(
        'p',
        {},
        `${price(prices.input_per_1k)} per 1,000 prompt tokens, ${price(prices.output_per_1k)} per 1,000 completion tokens, from your balance.`,
      ),
      h('p', {}, `${limits.payg} chat requests a minute.`),
      special.length > 0 &&
        h(
          'ul',
          {},
          special.map(([model, own]) =>
            h(
              'li',
              {},
              h('code', {}, model),
              `: ${price(own.input_per_1k)} / ${price(own.output_per_1k)} per 1,000 tokens`,
            ),
          ),
        ),
    ),
    h(
      'div',
      { class: 'tier panel', id: 'tier-sub' },
      h('h3', {}, 'Subscription'),
      h('p', {}, 'No charge per token.'),
      h('p', {}, `${limits.sub} chat requests a minute.`),
    ),
  );
}

function snippets(model) {
  const curl = [
    `curl ${baseUrl}/chat/completions \\`,
    '  -H "Authorization: Bearer $API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello!"}]}'`,
  ].join('\n');
  const python = [
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${baseUrl}", api_key="YOUR_KEY")`,
    'reply = client.chat.completions.create(',
    `    model="${model}",`,
    '    messages=[{"role": "user", "content": "Hello!"}],',
    ')',
    'print(reply.choices[0].message.content)',
  ].join('\n');
  const javascript = [
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.API_KEY });`,
    'const reply = await client.chat.completions.create({',
    `  model: '${model}',`,
    "  messages: [{ role: 'user', content: 'Hello!' }],",
    '});',
    'console.log(reply.choices[0].message.content);',
  ].join('\n');
  const block = (id, code) => {
    const copy = h('button', { type: 'button', class: 'secondary', 'aria-label': `Copy the ${id} example` }, 'Copy');
    copy.addEventListener('click', async () => {
      await navigator.clipboard?.writeText(code).catch(() => undefined);
      copy.textContent = 'Copied';
    });
    return h('div', { class: 'snippet' }, h('pre', { id: `snippet-${id}` }, h('code', {}, code)), copy);
  };
  const { element } = tabs(
    [
      { id: 'curl', label: 'curl', content: block('curl', curl) },
      { id: 'python', label: 'Python', content: block('python', python) },
      { id: 'javascript', label: 'JavaScript', content: block('javascript', javascript) },
    ],
    { label: 'Quick-start language', prefix: 'snippet-tab' },
  );
  render('#snippets', element);
}

function signupForm() {
  const form = document.getElementById('signup-form');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    const email = form.elements.email.value.trim();
    const note = form.elements.note.value.trim();
    await withBusy(button, async () => {
      try {
        const signup = await api('/api/signup', { method: 'POST', body: note ? { email, note } : { email } });
        render(
          '#signup-result',
          h(
            'div',
            { class: 'result-box', id: 'signup-answer' },
            h('strong', { class: 'ok' }, `Request ${signup.status}.`),
            ` We will write to ${signup.email} when an administrator has decided (sent ${formatDate(signup.created_at)}).`,
          ),
        );
        form.reset();
      } catch (error) {
        render('#signup-result', h('div', { class: 'result-box bad', id: 'signup-answer' }, error.message));
      }
    });
  });
}

render('#base-url', baseUrl);
signupForm();
snippets('llama3.2');
showStatus().catch(() => render('#status', h('p', { class: 'bad' }, 'The gateway did not answer.')));
showPricing().catch((error) => render('#pricing', h('p', { class: 'bad' }, error.message)));
showModels()
  .then((models) => {
    const chat = models.find((model) => ['text', 'vision', 'omni'].includes(model.type));
    if (chat) snippets(chat.id);
  })
  .catch((error) => render('#models', h('p', { class: 'bad' }, `The model list is not available: ${error.message}`)));
