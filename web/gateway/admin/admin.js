// The gateway's admin page: dashboard, models (load, pull, GGUF import, hub), users and keys, signups, config.
// Every call goes to /admin/api with the admin key kept in this tab's session storage (docs/gateway.md).
import { api, errorOf, formatBytes, formatDate, h, notify, render, storedKey, tabs, withBusy } from '/_tb/tb.js';

const KEY_NAME = 'admin';
const TIERS = ['payg', 'sub', 'admin'];
let adminKey = storedKey.get(KEY_NAME);
let refreshTimer = null;

// ---------------------------------------------------------------- calls

/** An admin API call; a refused key signs out (the key was changed in the file, or it was never right). */
async function call(path, options = {}) {
  try {
    return await api(path, { ...options, key: adminKey });
  } catch (error) {
    if (error.status === 401 || error.status === 403) signOut('The admin key was refused. Sign in again.');
    throw error;
  }
}

/** An error answer's body: JSON when it parses, else the text. */
function bodyOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Splits an NDJSON text into records, throwing on an `{error}` record (the stream's way to fail after 200). */
function* ndjsonRecords(text) {
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const record = JSON.parse(line);
    if (record.error) throw new Error(record.error);
    yield record;
  }
}

/** POSTs and reads an NDJSON progress answer (pull, hub download) as it arrives; resolves on `{status:"success"}`. */
async function progressStream(path, body, onRecord) {
  const response = await fetch(path, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${adminKey}`,
      'Content-Type': 'application/json',
      Accept: 'application/x-ndjson',
    },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw errorOf(response.status, bodyOf(await response.text()));
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let last = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += value;
    const end = done ? buffer.length : buffer.lastIndexOf('\n') + 1;
    for (const record of ndjsonRecords(buffer.slice(0, end))) {
      last = record;
      onRecord(record);
    }
    buffer = buffer.slice(end);
    if (done) break;
  }
  if (last?.status !== 'success') throw new Error('The progress stream ended without success');
  return last;
}

/** Uploads a form with XMLHttpRequest (fetch reports no upload progress), then reads its NDJSON answer. */
function uploadWithProgress(path, form, onRecord) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    request.setRequestHeader('Authorization', `Bearer ${adminKey}`);
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onRecord({ status: 'uploading', total: event.total, completed: event.loaded });
    });
    request.addEventListener('error', () => reject(new Error('The upload failed')));
    request.addEventListener('load', () => {
      try {
        if (request.status < 200 || request.status > 299) {
          throw errorOf(request.status, bodyOf(request.responseText));
        }
        let last = null;
        for (const record of ndjsonRecords(request.responseText)) {
          last = record;
          onRecord(record);
        }
        if (last?.status !== 'success') throw new Error('The import ended without success');
        resolve(last);
      } catch (error) {
        reject(error);
      }
    });
    request.send(form);
  });
}

// ---------------------------------------------------------------- small views

/**
 * A progress bar with its status line: `update(record)` reads the runtime's {status, digest, total, completed,
 * percent}. Ollama pulls a model's layers side by side, one record stream per digest, so the bar shows the
 * bytes of every layer seen so far, not the percentage of whichever layer reported last.
 */
function progressView(id, label) {
  const bar = h('progress', { id: `${id}-bar`, max: 100, value: 0, 'aria-label': label });
  const status = h('p', { id: `${id}-status`, class: 'muted', role: 'status', 'aria-live': 'polite' }, 'Starting…');
  const element = h('div', { class: 'progress-line' }, bar, status);
  const layers = new Map();
  return {
    element,
    update(record) {
      let percent = record.percent;
      if (record.digest && record.total) {
        layers.set(record.digest, { total: record.total, completed: record.completed ?? 0 });
        const sum = (key) => [...layers.values()].reduce((total, layer) => total + layer[key], 0);
        percent = Math.floor((sum('completed') / sum('total')) * 100);
      } else if (percent === undefined && record.total) {
        percent = Math.floor(((record.completed ?? 0) / record.total) * 100);
      }
      if (percent !== undefined) bar.value = percent;
      const amount = record.total ? ` (${formatBytes(record.completed ?? 0)} of ${formatBytes(record.total)})` : '';
      status.textContent = `${record.status ?? ''}${amount}`;
    },
    done(message) {
      bar.value = 100;
      status.className = 'ok';
      status.textContent = message;
    },
    fail(message) {
      status.className = 'bad';
      status.textContent = message;
    },
  };
}

/** Shows a progress bar in `container` while `run(update)` runs; the outcome stays on its status line. */
async function withProgress(container, id, label, doneMessage, run) {
  const view = progressView(id, label);
  render(container, view.element);
  try {
    await run(view.update);
    view.done(doneMessage);
  } catch (error) {
    view.fail(error.message);
  }
}

/** A secret shown this once (a new key): selectable, with a copy button and the warning. */
function shownOnce(title, secret) {
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', () =>
    navigator.clipboard?.writeText(secret).then(
      () => (copy.textContent = 'Copied'),
      () => undefined,
    ),
  );
  return h(
    'div',
    { class: 'once', role: 'alert' },
    h('strong', {}, title),
    h('p', {}, 'Copy it now: it is stored only as a hash and will not be shown again.'),
    h('p', { class: 'row' }, h('code', { class: 'new-key' }, secret), copy),
  );
}

function field(id, labelText, input, hint) {
  input.id = id;
  return h('div', {}, h('label', { for: id }, labelText), input, hint && h('p', { class: 'muted' }, hint));
}

function table(caption, headings, rows, attributes = {}) {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      attributes,
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headings.map((heading) =>
            // A heading ending in "?" is a column a phone can do without (hidden on narrow screens).
            heading.endsWith('?')
              ? h('th', { scope: 'col', class: 'hide-narrow' }, heading.slice(0, -1))
              : h('th', { scope: 'col' }, heading),
          ),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

function card(title, value, ...details) {
  return h('div', { class: 'panel' }, h('div', { class: 'muted' }, title), h('div', { class: 'stat' }, value), details);
}

function money(value) {
  return Number(value).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 });
}

/** Runs a form's action on submit, with its submit button busy meanwhile. */
function onSubmit(form, action) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withBusy(form.querySelector('button[type=submit]'), () => action(new FormData(form)));
  });
  return form;
}

// ---------------------------------------------------------------- dashboard

async function loadDashboard(panel) {
  const [system, pending] = await Promise.all([
    call('/admin/api/system'),
    call('/admin/api/signups?status=pending').catch(() => ({ signups: [] })),
  ]);
  const used = system.memory.total_bytes - system.memory.free_bytes;
  const runtime = system.runtime;
  render(
    panel,
    pending.signups.length === 0
      ? null
      : h(
          'p',
          { class: 'once' },
          `${pending.signups.length} signup request(s) wait for a decision. `,
          h('a', { href: '#signups' }, 'Review them'),
        ),
    h(
      'div',
      { class: 'grid', id: 'dashboard-stats' },
      card(
        'Model runtime',
        h('span', { class: runtime.reachable ? 'ok' : 'bad' }, runtime.reachable ? 'Reachable' : 'Not reachable'),
        h(
          'p',
          { class: 'muted' },
          `${runtime.url} · ${runtime.version ? `version ${runtime.version} · ` : ''}${runtime.backend_mode}`,
        ),
      ),
      card(
        'Requests',
        `${system.requests.last_minute} / min`,
        h('p', { class: 'muted' }, `${system.requests.last_hour} in the last hour`),
      ),
      card(
        'Loaded models',
        String(runtime.loaded_models.length),
        h('p', { class: 'muted' }, runtime.loaded_models.join(', ') || 'none'),
      ),
      card(
        'CPU',
        `${system.cpu.cores} cores`,
        h('p', { class: 'muted' }, `load ${system.cpu.load_average.map((load) => load.toFixed(2)).join(' · ')}`),
      ),
      card(
        'Memory',
        `${Math.round((used / system.memory.total_bytes) * 100)} %`,
        h('meter', { min: 0, max: system.memory.total_bytes, value: used, 'aria-label': 'Memory used' }),
        h(
          'p',
          { class: 'muted' },
          `${formatBytes(used)} of ${formatBytes(system.memory.total_bytes)}; gateway ${formatBytes(system.memory.process_rss_bytes)}`,
        ),
      ),
      card(
        'Gateway',
        `pid ${system.gateway.pid}`,
        h('p', { class: 'muted' }, `since ${formatDate(system.gateway.started_at)} · Node ${system.gateway.node}`),
      ),
      system.gpus.map((gpu) =>
        card(
          gpu.name,
          `${gpu.utilization_percent} %`,
          h('p', { class: 'muted' }, `${gpu.memory_used_mb} of ${gpu.memory_total_mb} MB`),
        ),
      ),
    ),
    h('p', { class: 'muted' }, `Updated ${new Date().toLocaleTimeString()}; refreshed every 10 seconds.`),
  );
}

// ---------------------------------------------------------------- models

function modelsPanel(panel) {
  const installed = h('div', { id: 'installed-models' }, h('p', { class: 'muted' }, 'Loading…'));
  const keepAlive = h(
    'select',
    {},
    h('option', { value: '30m' }, '30 minutes'),
    h('option', { value: '2h' }, '2 hours'),
    h('option', { value: '24h' }, '24 hours'),
    h('option', { value: '-1' }, 'until unloaded'),
  );

  const refresh = async () => {
    const { models, running } = await call('/admin/api/models');
    const action = (label, className, run) =>
      h('button', { type: 'button', class: className, onclick: (event) => withBusy(event.currentTarget, run) }, label);
    const rows = models.map((model) =>
      h(
        'tr',
        { 'data-model': model.name },
        h('td', {}, h('code', {}, model.name)),
        h('td', { class: 'hide-narrow' }, model.type),
        h('td', { class: 'hide-narrow' }, formatBytes(model.size)),
        h(
          'td',
          { class: 'model-state' },
          model.loaded ? h('span', { class: 'badge ok' }, 'loaded') : h('span', { class: 'badge muted' }, 'not loaded'),
          model.slot && h('span', { class: 'badge' }, 'slot'),
          model.fallback_for.map((need) => h('span', { class: 'badge' }, `fallback: ${need}`)),
          model.expires_at && h('div', { class: 'muted' }, `until ${formatDate(model.expires_at)}`),
        ),
        h(
          'td',
          { class: 'actions' },
          model.loaded
            ? action('Unload', 'secondary', async () => {
                await call('/admin/api/models/unload', { method: 'POST', body: { model: model.name } });
                notify(`${model.name} unloaded`);
                await refresh();
              })
            : action('Load', '', async () => {
                const value = keepAlive.value === '-1' ? -1 : keepAlive.value;
                await call('/admin/api/models/load', {
                  method: 'POST',
                  body: { model: model.name, keep_alive: value },
                });
                notify(`${model.name} loaded`);
                await refresh();
              }),
          action('Delete', 'danger', async () => {
            if (!confirm(`Delete ${model.name} from the runtime?`)) return;
            await call(`/admin/api/models/${model.name.split('/').map(encodeURIComponent).join('/')}`, {
              method: 'DELETE',
            });
            notify(`${model.name} deleted`);
            await refresh();
          }),
        ),
      ),
    );
    render(
      installed,
      models.length === 0
        ? h('p', { class: 'muted' }, 'No model is installed. Pull one below.')
        : table('Installed models', ['Model', 'Type?', 'Size?', 'State', 'Actions'], rows, { id: 'models-table' }),
      h('p', { class: 'muted' }, `Running now: ${running.join(', ') || 'none'}`),
    );
  };

  const pullProgress = h('div', { id: 'pull-progress' });
  const pullForm = onSubmit(
    h(
      'form',
      { class: 'inline-form', id: 'pull-form' },
      field('pull-name', 'Model to pull', h('input', { name: 'model', required: true, placeholder: 'llama3.2:3b' })),
      h('button', { type: 'submit' }, 'Pull'),
    ),
    async (data) => {
      const model = String(data.get('model')).trim();
      await withProgress(pullProgress, 'pull', `Pulling ${model}`, `Done: ${model} is installed`, (update) =>
        progressStream('/admin/api/models/pull', { model }, update),
      );
      await refresh();
    },
  );

  const importProgress = h('div', { id: 'import-progress' });
  const importForm = onSubmit(
    h(
      'form',
      { class: 'inline-form', id: 'import-form' },
      field('import-file', 'GGUF file', h('input', { name: 'file', type: 'file', accept: '.gguf', required: true })),
      field('import-name', 'Model name', h('input', { name: 'name', required: true, placeholder: 'my-model:q4' })),
      h('button', { type: 'submit' }, 'Import'),
    ),
    async (data) => {
      const form = new FormData();
      // The name first: the server reads fields before it stores the file.
      form.append('name', String(data.get('name')).trim());
      form.append('file', data.get('file'));
      await withProgress(importProgress, 'import', 'Importing the GGUF file', 'Done: the model was created', (update) =>
        uploadWithProgress('/admin/api/models/import-gguf', form, update),
      );
      await refresh();
    },
  );

  render(
    panel,
    h('h2', {}, 'Installed models'),
    h('div', { class: 'row' }, h('label', { for: 'keep-alive' }, 'Keep loaded for'), keepAlive),
    installed,
    h('h2', {}, 'Pull from the runtime’s registry'),
    pullForm,
    pullProgress,
    h('h2', {}, 'Import a GGUF file'),
    importForm,
    importProgress,
    h('h2', {}, 'Model hub'),
    hubSearch(refresh),
  );
  keepAlive.id = 'keep-alive';
  return refresh();
}

function hubSearch(refreshModels) {
  const results = h('div', { id: 'hub-results' });
  const files = h('div', { id: 'hub-files' });
  const showFiles = async (repo) => {
    const answer = await call(`/admin/api/models/hf-files?repo=${encodeURIComponent(repo)}`);
    const rows = answer.files.map((file, index) => {
      const name = h('input', { 'aria-label': `Model name for ${file.path}`, placeholder: 'default name' });
      const progress = h('div', { id: `hub-progress-${index}` });
      const download = h('button', { type: 'button' }, 'Download');
      download.addEventListener('click', () =>
        withBusy(download, async () => {
          const body = { repo, file: file.path, ...(name.value.trim() ? { name: name.value.trim() } : {}) };
          const label = `Downloading ${file.path}`;
          await withProgress(progress, `hub-${index}`, label, 'Done: downloaded, verified and imported', (update) =>
            progressStream('/admin/api/models/download-hf', body, update),
          );
          await refreshModels();
        }),
      );
      return h(
        'tr',
        {},
        h('td', {}, h('code', {}, file.path)),
        h('td', {}, formatBytes(file.size)),
        h('td', {}, name),
        h('td', {}, download, progress),
      );
    });
    render(
      files,
      h('h3', {}, repo),
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No GGUF file in this repository.')
        : table(`GGUF files of ${repo}`, ['File', 'Size', 'Model name', ''], rows),
    );
  };
  const form = onSubmit(
    h(
      'form',
      { class: 'inline-form', id: 'hub-form' },
      field('hub-query', 'Search GGUF repositories', h('input', { name: 'q', type: 'search', required: true })),
      h('button', { type: 'submit' }, 'Search'),
    ),
    async (data) => {
      const { models } = await call(`/admin/api/models/search-hf?q=${encodeURIComponent(String(data.get('q')))}`);
      render(files);
      render(
        results,
        models.length === 0
          ? h('p', { class: 'muted' }, 'Nothing found.')
          : table(
              'Hub repositories',
              ['Repository', 'Downloads', 'Likes', ''],
              models.map((model) =>
                h(
                  'tr',
                  {},
                  h('td', {}, model.id),
                  h('td', {}, model.downloads.toLocaleString()),
                  h('td', {}, model.likes.toLocaleString()),
                  h(
                    'td',
                    {},
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'secondary',
                        onclick: (event) => withBusy(event.currentTarget, () => showFiles(model.id)),
                      },
                      'Files',
                    ),
                  ),
                ),
              ),
            ),
      );
    },
  );
  return h('div', {}, form, results, files);
}

// ---------------------------------------------------------------- users

function tierSelect(value, label) {
  return h(
    'select',
    { 'aria-label': label },
    TIERS.map((tier) => h('option', { value: tier, selected: tier === value }, tier)),
  );
}

function usersPanel(panel) {
  const list = h('div', { id: 'users-list' });
  const detail = h('section', { id: 'user-detail', 'aria-live': 'polite' });

  const refresh = async () => {
    const { users } = await call('/admin/api/users');
    const rows = users.map((user) => {
      const tier = tierSelect(user.tier, `Tier of ${user.email}`);
      tier.addEventListener('change', () =>
        withBusy(tier, async () => {
          await call(`/admin/api/users/${user.id}`, { method: 'PATCH', body: { tier: tier.value } });
          notify(`${user.email} is now ${tier.value}`);
        }),
      );
      const active = h('input', { type: 'checkbox', checked: user.active, 'aria-label': `${user.email} active` });
      active.addEventListener('change', () =>
        withBusy(active, () =>
          call(`/admin/api/users/${user.id}`, { method: 'PATCH', body: { active: active.checked } }),
        ),
      );
      return h(
        'tr',
        { 'data-user': user.email },
        h('td', {}, user.email),
        h('td', {}, tier),
        h('td', { class: 'balance' }, money(user.balance)),
        h('td', {}, active),
        h('td', { class: 'hide-narrow' }, formatDate(user.created_at)),
        h(
          'td',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: (event) => withBusy(event.currentTarget, () => showUser(user.id)),
            },
            'Keys and usage',
          ),
        ),
      );
    });
    render(
      list,
      users.length === 0
        ? h('p', { class: 'muted' }, 'No user yet.')
        : table('Users', ['Email', 'Tier', 'Balance', 'Active', 'Created?', ''], rows, { id: 'users-table' }),
    );
  };

  const showUser = async (id, issued = null) => {
    const [user, usage] = await Promise.all([
      call(`/admin/api/users/${id}`),
      call(`/admin/api/users/${id}/usage?days=30`),
    ]);
    const keyRows = user.keys.map((key) =>
      h(
        'tr',
        { 'data-key': key.key_prefix },
        h('td', {}, key.name),
        h('td', {}, h('code', {}, `${key.key_prefix}…`)),
        h('td', {}, formatDate(key.created_at)),
        h(
          'td',
          {},
          key.revoked_at
            ? h('span', { class: 'badge bad' }, `revoked ${formatDate(key.revoked_at)}`)
            : h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: (event) =>
                    withBusy(event.currentTarget, async () => {
                      await call(`/admin/api/users/${id}/keys/${key.id}`, { method: 'DELETE' });
                      notify(`Key ${key.key_prefix}… revoked`);
                      await showUser(id);
                    }),
                },
                'Revoke',
              ),
        ),
      ),
    );
    const issueForm = onSubmit(
      h(
        'form',
        { class: 'inline-form', id: 'issue-key-form' },
        field(
          'key-name',
          'Key name',
          h('input', { name: 'name', value: 'default', pattern: '[A-Za-z0-9 ._\\-]{1,100}' }),
        ),
        h('button', { type: 'submit' }, 'Issue a key'),
      ),
      async (data) => {
        const key = await call(`/admin/api/users/${id}/keys`, {
          method: 'POST',
          body: { name: String(data.get('name')) },
        });
        await showUser(id, key.key);
      },
    );
    const topUpForm = onSubmit(
      h(
        'form',
        { class: 'inline-form', id: 'topup-form' },
        field(
          'topup-amount',
          'Amount',
          h('input', { name: 'amount', type: 'number', min: '0.000001', step: 'any', required: true }),
        ),
        field('topup-note', 'Note', h('input', { name: 'note', maxlength: '255' })),
        h('button', { type: 'submit' }, 'Top up'),
      ),
      async (data) => {
        const note = String(data.get('note')).trim();
        const body = { amount: Number(data.get('amount')), ...(note ? { note } : {}) };
        const updated = await call(`/admin/api/users/${id}/topup`, { method: 'POST', body });
        notify(`${updated.email}: balance ${money(updated.balance)}`);
        await Promise.all([refresh(), showUser(id)]);
      },
    );
    render(
      detail,
      h('h2', { id: 'user-detail-title' }, user.email),
      h(
        'p',
        {},
        `Tier ${user.tier} · balance `,
        h('strong', { id: 'user-balance' }, money(user.balance)),
        user.active ? '' : ' · inactive',
      ),
      issued && shownOnce('New key', issued),
      h('h3', {}, 'Keys'),
      keyRows.length === 0
        ? h('p', { class: 'muted' }, 'No key yet.')
        : table('Keys', ['Name', 'Key', 'Created', ''], keyRows, { id: 'keys-table' }),
      issueForm,
      h('h3', {}, 'Balance'),
      topUpForm,
      h('h3', {}, 'Usage, last 30 days'),
      h(
        'p',
        { id: 'user-usage' },
        `${usage.requests} request${usage.requests === 1 ? '' : 's'} · ${usage.prompt_tokens} prompt + ` +
          `${usage.completion_tokens} completion tokens · cost ${money(usage.cost)}`,
      ),
      usage.by_model.length === 0
        ? null
        : table(
            'Usage per model',
            ['Model', 'Requests', 'Prompt tokens', 'Completion tokens', 'Cost'],
            usage.by_model.map((row) =>
              h(
                'tr',
                {},
                h('td', {}, row.model),
                h('td', {}, row.requests),
                h('td', {}, row.prompt_tokens),
                h('td', {}, row.completion_tokens),
                h('td', {}, money(row.cost)),
              ),
            ),
            { id: 'usage-table' },
          ),
    );
    detail.querySelector('.once button, #user-detail-title')?.focus?.();
  };

  const createForm = onSubmit(
    h(
      'form',
      { class: 'inline-form', id: 'create-user-form' },
      field('new-email', 'Email', h('input', { name: 'email', type: 'email', required: true })),
      field('new-tier', 'Tier', tierSelect('payg')),
      field(
        'new-balance',
        'Starting balance',
        h('input', { name: 'balance', type: 'number', min: '0', step: 'any', value: '0' }),
      ),
      h('button', { type: 'submit' }, 'Create user'),
    ),
    async (data) => {
      const form = document.getElementById('create-user-form');
      const body = {
        email: String(data.get('email')).trim(),
        tier: form.querySelector('#new-tier').value,
        balance: Number(data.get('balance') || 0),
      };
      const user = await call('/admin/api/users', { method: 'POST', body });
      notify(`${user.email} created`);
      form.reset();
      await refresh();
      await showUser(user.id);
    },
  );

  render(panel, h('h2', {}, 'Create a user'), createForm, h('h2', {}, 'Users'), list, detail);
  return refresh();
}

// ---------------------------------------------------------------- signups

function signupsPanel(panel) {
  const status = h(
    'select',
    { id: 'signup-status' },
    ['pending', 'approved', 'rejected', ''].map((value) => h('option', { value }, value || 'all')),
  );
  const list = h('div', { id: 'signups-list' });
  const approved = h('div', { id: 'approved' });
  const refresh = async () => {
    const { signups } = await call(`/admin/api/signups${status.value ? `?status=${status.value}` : ''}`);
    const rows = signups.map((signup) => {
      const tier = tierSelect('payg', `Tier for ${signup.email}`);
      const decide = (verb, body) =>
        h(
          'button',
          {
            type: 'button',
            class: verb === 'approve' ? '' : 'secondary',
            onclick: (event) =>
              withBusy(event.currentTarget, async () => {
                const answer = await call(`/admin/api/signups/${signup.id}/${verb}`, { method: 'POST', body: body() });
                render(approved, verb === 'approve' ? shownOnce(`Key for ${answer.user.email}`, answer.key) : null);
                notify(`${signup.email}: ${verb === 'approve' ? 'approved' : 'rejected'}`);
                await refresh();
              }),
          },
          verb === 'approve' ? 'Approve' : 'Reject',
        );
      return h(
        'tr',
        { 'data-signup': signup.email },
        h('td', {}, signup.email),
        // The tier the applicant asked for is shown, not preselected: what an approval grants is the admin's choice.
        h('td', {}, [signup.note ?? '', signup.requested_tier ? ` (asks for ${signup.requested_tier})` : '']),
        h('td', {}, signup.status),
        h('td', { class: 'hide-narrow' }, formatDate(signup.created_at)),
        h(
          'td',
          { class: 'actions' },
          signup.status === 'pending' && [
            tier,
            decide('approve', () => ({ tier: tier.value })),
            decide('reject', () => ({})),
          ],
        ),
      );
    });
    render(
      list,
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No request.')
        : table('Signup requests', ['Email', 'Note', 'Status', 'Received?', ''], rows, { id: 'signups-table' }),
    );
  };
  status.addEventListener('change', () => void withBusy(status, refresh));
  render(panel, h('div', { class: 'row' }, h('label', { for: 'signup-status' }, 'Show'), status), approved, list);
  return refresh();
}

// ---------------------------------------------------------------- config

/** The editable keys: a form field each (objects of free keys as JSON). */
const CONFIG_FIELDS = [
  { path: 'ollama_url', label: 'Runtime URL', kind: 'text' },
  { path: 'backend_mode', label: 'Backend mode', kind: 'select', options: ['bare', 'docker'] },
  {
    path: 'hf_token',
    label: 'Model hub token',
    kind: 'text',
    hint: 'Masked; type a new one to change it, empty to remove it.',
  },
  { path: 'rate_limits.payg', label: 'PAYG requests per minute', kind: 'number' },
  { path: 'rate_limits.sub', label: 'Subscriber requests per minute', kind: 'number' },
  { path: 'prices.input_per_1k', label: 'Price per 1,000 prompt tokens', kind: 'number' },
  { path: 'prices.output_per_1k', label: 'Price per 1,000 completion tokens', kind: 'number' },
  { path: 'reserve_tokens', label: 'Tokens held while a call runs', kind: 'number' },
  { path: 'fallback_models.chat', label: 'Fallback for chat', kind: 'model' },
  { path: 'fallback_models.vision', label: 'Fallback for images', kind: 'model' },
  { path: 'fallback_models.audio', label: 'Fallback for audio', kind: 'model' },
  { path: 'fallback_models.embedding', label: 'Fallback for embeddings', kind: 'model' },
  { path: 'model_types', label: 'Model type overrides (JSON)', kind: 'json' },
  { path: 'model_prices', label: 'Prices per model (JSON)', kind: 'json' },
  { path: 'loaded_models', label: 'Model slots (JSON)', kind: 'json' },
];

const fieldId = (path) => `config-${path.replace(/\./g, '-')}`;
const valueAt = (object, path) => path.split('.').reduce((value, part) => value?.[part], object);

/**
 * The field a server problem names: "rate_limits.sub must be …" → rate_limits.sub; "model_types.x must …"
 * → model_types (the longest configured path that starts the problem's path); the unknown-key error names it
 * in `param`. The server lists every problem in one message, "Invalid gateway configuration: a; b".
 */
export function problemsByField(error) {
  const message = error.message.replace(/^Invalid gateway configuration: /, '');
  const problems = message === error.message ? [message] : message.split('; ');
  const byField = new Map();
  for (const problem of problems) {
    let path = error.body?.error?.param && problems.length === 1 ? error.body.error.param : problem.split(' ')[0];
    path = path.replace(/:$/, '');
    while (path && !CONFIG_FIELDS.some((entry) => entry.path === path))
      path = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : '';
    byField.set(path, [...(byField.get(path) ?? []), problem]);
  }
  return byField;
}

function configPanel(panel) {
  const summary = h('div', { id: 'config-summary', role: 'alert' });
  const form = h('form', { id: 'config-form', novalidate: true });
  let inputs = new Map();

  const clearErrors = () => {
    render(summary);
    for (const input of inputs.values()) {
      input.removeAttribute('aria-invalid');
      input.removeAttribute('aria-describedby');
      document.getElementById(`${input.id}-error`)?.remove();
    }
  };

  const showErrors = (byField) => {
    const general = [];
    for (const [path, problems] of byField) {
      const input = inputs.get(path);
      if (!input) {
        general.push(...problems);
        continue;
      }
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', `${input.id}-error`);
      input.after(h('p', { id: `${input.id}-error`, class: 'field-error' }, problems.join('; ')));
    }
    const count = [...byField.values()].flat().length;
    render(
      summary,
      h('p', { class: 'bad' }, `Not saved: ${count} problem(s), shown at the fields.`),
      general.length === 0
        ? null
        : h(
            'ul',
            { class: 'bad' },
            general.map((problem) => h('li', {}, problem)),
          ),
    );
    const first = [...byField.keys()].map((path) => inputs.get(path)).find(Boolean);
    first?.focus();
  };

  /** The PATCH body from the form; a JSON field that does not parse is reported at once, without a request. */
  const readForm = () => {
    const body = {};
    const local = new Map();
    for (const entry of CONFIG_FIELDS) {
      const input = inputs.get(entry.path);
      let value = input.value.trim();
      if (entry.kind === 'number') value = value === '' ? null : Number(value);
      else if (entry.kind === 'model' || entry.path === 'hf_token') value = value === '' ? null : value;
      else if (entry.kind === 'json') {
        try {
          value = value === '' ? {} : JSON.parse(value);
        } catch (error) {
          local.set(entry.path, [`${entry.path} is not valid JSON: ${error.message}`]);
          continue;
        }
      }
      const [top, inner] = entry.path.split('.');
      if (inner) body[top] = { ...body[top], [inner]: value };
      else body[top] = value;
    }
    return { body, local };
  };

  const fill = (config) => {
    inputs = new Map();
    const control = (entry) => {
      const value = valueAt(config, entry.path);
      let input;
      if (entry.kind === 'select')
        input = h(
          'select',
          { name: entry.path },
          entry.options.map((option) => h('option', { value: option, selected: option === value }, option)),
        );
      else if (entry.kind === 'json')
        input = h('textarea', { name: entry.path, spellcheck: 'false' }, JSON.stringify(value ?? {}, null, 2));
      else
        input = h('input', {
          name: entry.path,
          type: entry.kind === 'number' ? 'number' : 'text',
          step: entry.kind === 'number' ? 'any' : undefined,
          value: value ?? '',
          placeholder: entry.kind === 'model' ? 'none' : undefined,
          autocomplete: 'off',
        });
      inputs.set(entry.path, input);
      return field(fieldId(entry.path), entry.label, input, entry.hint);
    };
    const group = (legend, prefix) =>
      h(
        'fieldset',
        {},
        h('legend', {}, legend),
        h('div', { class: 'config-grid' }, CONFIG_FIELDS.filter((entry) => prefix(entry.path)).map(control)),
      );
    render(
      form,
      h('p', { class: 'muted' }, `Admin key: `, h('code', {}, config.admin_key), ' (change it in the file).'),
      group('Runtime', (path) => ['ollama_url', 'backend_mode', 'hf_token'].includes(path)),
      group('Limits and prices', (path) => /^(rate_limits|prices|reserve_tokens)/.test(path)),
      group('Routing', (path) => path.startsWith('fallback_models')),
      group('Per model', (path) => ['model_types', 'model_prices', 'loaded_models'].includes(path)),
      h('p', {}, h('button', { type: 'submit' }, 'Save')),
    );
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withBusy(form.querySelector('button[type=submit]'), async () => {
      clearErrors();
      const { body, local } = readForm();
      if (local.size > 0) return showErrors(local);
      try {
        fill(await call('/admin/api/config', { method: 'PATCH', body }));
        render(summary, h('p', { class: 'ok' }, 'Saved.'));
      } catch (error) {
        if (error.status !== 400) throw error;
        showErrors(problemsByField(error));
      }
    });
  });

  render(panel, summary, form);
  return call('/admin/api/config').then(fill);
}

// ---------------------------------------------------------------- page

const SECTIONS = [
  { id: 'dashboard', label: 'Dashboard', load: loadDashboard },
  { id: 'models', label: 'Models', load: modelsPanel },
  { id: 'users', label: 'Users', load: usersPanel },
  { id: 'signups', label: 'Signups', load: signupsPanel },
  { id: 'config', label: 'Config', load: configPanel },
];

function showApp() {
  document.getElementById('login').hidden = true;
  document.getElementById('logout').hidden = false;
  const containers = new Map(
    SECTIONS.map((section) => [section.id, h('div', {}, h('p', { class: 'muted' }, 'Loading…'))]),
  );
  const load = (id) => {
    clearInterval(refreshTimer);
    const section = SECTIONS.find((candidate) => candidate.id === id);
    const container = containers.get(id);
    Promise.resolve(section.load(container)).catch((error) =>
      render(container, h('p', { class: 'bad' }, `Could not load: ${error.message}`)),
    );
    if (id === 'dashboard') {
      refreshTimer = setInterval(() => {
        if (document.visibilityState === 'visible') loadDashboard(container).catch(() => undefined);
      }, 10_000);
    }
  };
  const initial = SECTIONS.some((section) => `#${section.id}` === location.hash) ? location.hash.slice(1) : 'dashboard';
  const view = tabs(
    SECTIONS.map((section) => ({ id: section.id, label: section.label, content: containers.get(section.id) })),
    {
      label: 'Administration',
      prefix: 'admin-tab',
      selected: initial,
      onSelect: (id) => {
        history.replaceState(null, '', `#${id}`);
        load(id);
      },
    },
  );
  render('#app', view.element);
  window.addEventListener('hashchange', () => {
    const id = location.hash.slice(1);
    if (SECTIONS.some((section) => section.id === id)) view.select(id, true);
  });
}

function showLogin(message = '') {
  clearInterval(refreshTimer);
  render('#app');
  document.getElementById('logout').hidden = true;
  document.getElementById('login').hidden = false;
  document.getElementById('login-error').textContent = message;
  document.getElementById('admin-key').focus();
}

function signOut(message = '') {
  storedKey.clear(KEY_NAME);
  adminKey = null;
  showLogin(message);
}

document.getElementById('login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  void withBusy(form.querySelector('button[type=submit]'), async () => {
    adminKey = form.elements.key.value.trim();
    try {
      await api('/admin/api/system', { key: adminKey });
    } catch (error) {
      adminKey = null;
      document.getElementById('login-error').textContent =
        error.status === 401 || error.status === 403 ? 'This is not the admin key.' : error.message;
      return;
    }
    storedKey.set(KEY_NAME, adminKey);
    form.reset();
    showApp();
  });
});
document.getElementById('logout').addEventListener('click', () => signOut());

if (adminKey) showApp();
else showLogin();
