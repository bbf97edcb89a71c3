// Worker manager dashboard: polls the admin API (relative paths, so it works at `/` and behind nginx at
// `/admin/manager/`) and drives its actions. Direct access needs the manager secret, asked once and kept per tab.
import { api, h, notify, render, storedKey } from './_tb/tb.js';

const REFRESH_MS = 3000;
/** Faster while a rolling update runs, so its progress reads as live. */
const REFRESH_ROLLING_MS = 700;
const SECRET_NAME = 'manager-secret';

const $ = (id) => document.getElementById(id);

let secret = storedKey.get(SECRET_NAME);
let timer = null;
let refreshing = null;
let reachable = null;
let lastStatus = null;
/** The scale count follows the live count until the reader edits it. */
let scaleEdited = false;
/** Counts actions started: a poll begun before one is not rendered over the action's own answer. */
let actionsStarted = 0;
/** The rolling update this page started or saw running: its end is announced once. */
let followedUpdate = null;

/**
 * An admin API call with the secret when this tab has one; a 401/403 asks for it (again). X-Requested-With tells
 * the manager the call comes from a script, not a form of another site (it refuses state changes without it).
 */
async function call(path, options = {}) {
  const headers = { 'X-Requested-With': 'XMLHttpRequest', ...(secret ? { 'X-Cluster-Secret': secret } : {}) };
  try {
    return await api(path, { ...options, headers });
  } catch (error) {
    if (error.status === 401 || (error.status === 403 && secret)) {
      askSecret(error.status === 403 ? 'That secret is wrong: the manager answered 403.' : '');
      error.handled = true;
    }
    throw error;
  }
}

function askSecret(message) {
  stopPolling();
  if (secret) storedKey.clear(SECRET_NAME);
  secret = null;
  $('forget-secret').hidden = true;
  setConnection('Secret needed', 'warn');
  $('dashboard').hidden = true;
  $('secret-panel').hidden = false;
  $('secret-error').textContent = message;
  $('secret-input').focus();
}

function setConnection(text, tone) {
  const badge = $('connection');
  if (badge.textContent === text) return;
  badge.textContent = text;
  badge.className = `badge ${tone}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Refresh

/** One refresh at a time: a call during another waits for it, then loads again (an action's result is seen). */
function refresh() {
  const previous = refreshing;
  const current = (async () => {
    if (previous) await previous;
    await load();
  })();
  refreshing = current;
  current.finally(() => {
    if (refreshing === current) refreshing = null;
  });
  return current;
}

async function load() {
  const actionsBefore = actionsStarted;
  try {
    // status first: without a secret only this one call answers 401.
    const status = await call('api/status');
    const [workers, metrics] = await Promise.all([call('api/workers'), call('api/metrics')]);
    if (actionsBefore !== actionsStarted) return schedule(REFRESH_MS);
    lastStatus = status;
    $('secret-panel').hidden = true;
    $('dashboard').hidden = false;
    $('forget-secret').hidden = !secret;
    if (reachable === false) notify('The manager answers again.');
    reachable = true;
    setConnection(status.running ? 'Running' : 'Stopping', status.running ? 'ok' : 'warn');
    renderTotals(workers, metrics);
    renderSystem(status);
    renderActions(status, workers);
    renderRolling(status.rolling_update);
    renderWorkers(workers);
    $('updated').textContent = `Updated ${new Date().toLocaleTimeString()} · refreshes every ${REFRESH_MS / 1000} s`;
    schedule(status.rolling_update?.state === 'running' ? REFRESH_ROLLING_MS : REFRESH_MS);
  } catch (error) {
    if (error.handled) return;
    if (reachable !== false) notify(`The manager does not answer: ${error.message}`, { error: true });
    reachable = false;
    setConnection('Unreachable', 'bad');
    schedule(REFRESH_MS);
  }
}

function schedule(ms) {
  clearTimeout(timer);
  timer = setTimeout(refresh, ms);
}

function stopPolling() {
  clearTimeout(timer);
  timer = null;
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering

const live = (worker) => worker.state !== 'stopped' && worker.state !== 'failed';
const number = (value) => (Number.isFinite(value) ? value.toLocaleString() : '—');
const ms = (value) => (Number.isFinite(value) ? `${Math.round(value)} ms` : '—');

function stat(label, value, detail) {
  return h(
    'div',
    { class: 'panel stat-card' },
    h('div', { class: 'muted' }, label),
    h('div', { class: 'stat' }, value),
    detail ? h('div', { class: 'muted small' }, detail) : null,
  );
}

function renderTotals(workers, metrics) {
  const local = workers.filter((w) => w.node === 'local');
  const liveOf = (type) => local.filter((w) => w.type === type && live(w)).length;
  render(
    $('totals'),
    stat(
      'Live workers',
      number(local.filter(live).length),
      `${liveOf('http')} HTTP · ${liveOf('ws')} WS · ${local.length} entries`,
    ),
    stat('Requests', number(metrics.total_requests)),
    stat('Connections', number(metrics.total_connections), 'HTTP in flight + open WebSockets'),
    stat('Errors', number(metrics.total_errors)),
    stat('Avg latency', ms(metrics.avg_latency_ms)),
  );
}

function fact(title, tone, value, ...details) {
  return h(
    'div',
    { class: 'panel' },
    h('h3', {}, title),
    h('p', { class: `badge ${tone}` }, value),
    details.filter(Boolean).map((detail) => h('p', { class: 'muted small' }, detail)),
  );
}

function renderSystem(status) {
  const nginx = status.nginx;
  const slots = (type) => {
    const ports = status.port_slots[type];
    return ports.length ? `${ports.length} ${type.toUpperCase()} port(s) ${ports[0]}–${ports[ports.length - 1]}` : null;
  };
  render(
    $('system'),
    fact(
      'Manager',
      status.running ? 'ok' : 'warn',
      status.running ? 'Running' : 'Stopping',
      `pid ${status.pid} on ${status.platform}, up since ${new Date(status.started_at).toLocaleString()}`,
      [slots('http'), slots('ws')].filter(Boolean).join(' · '),
    ),
    fact(
      'Broker',
      status.broker.alive ? 'ok' : 'bad',
      status.broker.alive ? 'Alive' : 'Down',
      `driver ${status.broker.driver}`,
    ),
    fact(
      'nginx',
      nginx.configured ? 'ok' : 'warn',
      nginx.configured ? 'Set up' : nginx.installed ? 'Installed, not set up' : 'Not installed',
      nginx.version,
      nginx.site_path ? `site ${nginx.site_path}` : null,
    ),
    fact(
      'Cluster',
      status.cluster.nodes === 0 || status.cluster.healthy_nodes === status.cluster.nodes ? 'ok' : 'warn',
      status.cluster.nodes === 0 ? 'Single node' : `${status.cluster.healthy_nodes}/${status.cluster.nodes} healthy`,
      status.cluster.nodes === 0 ? 'no remote nodes joined' : 'remote nodes polled for their workers',
    ),
  );
}

function renderActions(status, workers) {
  const updating = status.rolling_update?.state === 'running';
  const liveOf = (type) => workers.filter((w) => w.node === 'local' && w.type === type && live(w)).length;
  const freeOf = (type) => status.port_slots[type].length - liveOf(type);
  $('add-http').disabled = updating || freeOf('http') <= 0;
  $('add-ws').disabled = updating || freeOf('ws') <= 0;
  $('rolling-update').disabled = updating;
  $('reload-nginx').disabled = !status.nginx.configured;
  $('reload-nginx').title = status.nginx.configured ? '' : 'nginx is not set up for this manager';
  const type = $('scale-type').value;
  if (!scaleEdited) $('scale-count').value = String(liveOf(type));
  $('scale-hint').textContent =
    `${liveOf(type)} live ${type.toUpperCase()} worker(s); ${status.port_slots[type].length} port(s) pre-allocated.`;
}

/** What the progress region last showed: it is a live region, so it is only rebuilt when something changed. */
let shownUpdate = '';

function renderRolling(update) {
  const box = $('rolling');
  const shown = JSON.stringify(update);
  if (shown === shownUpdate) return;
  shownUpdate = shown;
  if (!update) {
    delete box.dataset.state;
    return render(box);
  }
  const running = update.state === 'running';
  box.dataset.state = update.state;
  render(
    box,
    h(
      'div',
      { class: 'rolling panel' },
      h(
        'h3',
        {},
        running ? 'Rolling update running' : `Last rolling update: ${update.state}`,
        h('span', { class: 'muted' }, ` ${update.id}`),
      ),
      h('progress', { max: Math.max(update.total, 1), value: update.done, 'aria-label': 'Rolling update progress' }),
      h(
        'p',
        { id: 'rolling-summary' },
        `${update.done}/${update.total} HTTP worker(s) handled`,
        running
          ? ` — ${update.step}`
          : update.finished_at
            ? ` — finished ${new Date(update.finished_at).toLocaleTimeString()}`
            : '',
      ),
      update.replaced.length
        ? h(
            'ul',
            { class: 'small' },
            update.replaced.map((pair) => h('li', {}, h('code', {}, pair.old), ' → ', h('code', {}, pair.new))),
          )
        : null,
      update.errors.length
        ? h(
            'ul',
            { class: 'bad' },
            update.errors.map((error) => h('li', {}, error)),
          )
        : null,
    ),
  );
  if (running) followedUpdate ??= update.id;
  if (!running && followedUpdate === update.id) {
    followedUpdate = null;
    notify(`Rolling update ${update.state}: ${update.replaced.length}/${update.total} replaced.`, {
      error: update.state !== 'done',
    });
  }
}

function stateTone(worker) {
  if (worker.state === 'running') return worker.healthy ? 'ok' : 'warn';
  if (worker.state === 'failed') return 'bad';
  return worker.state === 'stopped' ? 'muted' : 'warn';
}

function cell(label, ...children) {
  return h('td', { 'data-label': label }, ...children);
}

function workerRow(worker) {
  const local = worker.node === 'local';
  const id = worker.worker_id;
  const actions = [];
  if (local && live(worker)) {
    actions.push(
      actionButton(`Restart`, `restart:${id}`, id, () =>
        workerAction('api/workers/restart', { worker_id: id }, `${id} restarted`),
      ),
    );
    actions.push(
      actionButton(
        `Stop`,
        `stop:${id}`,
        id,
        () => workerAction('api/workers/stop', { worker_id: id }, `${id} stopped`),
        'danger',
      ),
    );
  } else if (local) {
    actions.push(
      actionButton(`Start`, `start:${id}`, id, () =>
        workerAction('api/workers/start', { type: worker.type, worker_id: id }, `${id} started`),
      ),
    );
  }
  return h(
    'tr',
    { 'data-worker-id': id, 'data-state': worker.state },
    h(
      'th',
      { scope: 'row', 'data-label': 'Worker' },
      h('code', {}, id),
      local ? null : h('div', { class: 'muted small' }, `node ${worker.node}`),
    ),
    cell('Type', worker.type.toUpperCase()),
    cell('Port', String(worker.port)),
    cell('PID', worker.pid ?? '—'),
    cell(
      'State',
      h('span', { class: `badge ${stateTone(worker)}` }, worker.state),
      worker.last_error && !live(worker) ? h('div', { class: 'bad small' }, worker.last_error) : null,
    ),
    cell(
      'Health',
      live(worker)
        ? h('span', { class: worker.healthy ? 'ok' : 'bad' }, worker.healthy ? '✓ healthy' : '✗ unhealthy')
        : '—',
    ),
    cell('Latency', ms(worker.health_latency_ms)),
    cell('Restarts', String(worker.restart_count)),
    cell('Requests', number(worker.metrics?.requests)),
    cell('Actions', h('div', { class: 'row actions' }, actions)),
  );
}

function actionButton(label, focusKey, id, action, tone = 'secondary') {
  const button = h(
    'button',
    { type: 'button', class: tone, 'data-focus': focusKey, 'aria-label': `${label} ${id}` },
    label,
  );
  button.addEventListener('click', () => act(button, action));
  return button;
}

/** Re-rendering keeps keyboard focus on the same row's button (refreshes would otherwise drop it every few seconds). */
function renderWorkers(workers) {
  const focused = document.activeElement?.dataset?.focus;
  const body = render(
    $('workers').tBodies[0],
    workers.length ? workers.map(workerRow) : h('tr', {}, h('td', { colspan: 10 }, 'No workers.')),
  );
  if (focused) body.querySelector(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
}

// ---------------------------------------------------------------------------------------------------------------
// Actions

async function workerAction(path, body, done) {
  await call(path, { method: 'POST', body });
  notify(done);
}

async function addWorker(type) {
  const answer = await call('api/workers/start', { method: 'POST', body: { type } });
  notify(`Started ${answer.workers.map((w) => `${w.worker_id} on port ${w.port}`).join(', ')}.`);
}

async function scale() {
  const body = { type: $('scale-type').value, count: Number($('scale-count').value) };
  const answer = await call('api/scale', { method: 'POST', body });
  const changes = [
    answer.started.length ? `started ${answer.started.join(', ')}` : '',
    answer.stopped.length ? `stopped ${answer.stopped.join(', ')}` : '',
  ].filter(Boolean);
  notify(`Scaled ${body.type.toUpperCase()} to ${body.count}: ${changes.join('; ') || 'nothing to change'}.`);
  scaleEdited = false;
}

async function rollingUpdate() {
  const answer = await call('api/rolling-update', { method: 'POST' });
  followedUpdate = answer.rolling_update.id;
  renderRolling(answer.rolling_update);
}

async function reloadNginx() {
  const answer = await call('api/nginx/reload', { method: 'POST' });
  notify(`nginx: ${answer.message}`, { error: answer.status !== 'ok' });
}

/**
 * Runs an action from a control: disabled meanwhile, a failure shown as a notice with the platform's message, then
 * a refresh. The toolbar's own state (`data-managed`: e.g. "Rolling update" while one runs) comes from that refresh,
 * so it is not re-enabled blindly afterwards (tb.js's withBusy would, for a moment).
 */
async function act(button, action) {
  actionsStarted += 1;
  button.disabled = true;
  try {
    await action();
  } catch (error) {
    if (!error.handled) notify(error?.message ?? String(error), { error: true });
    button.disabled = false;
    return;
  }
  await refresh();
  if (!('managed' in button.dataset)) button.disabled = false;
}

async function connect(event) {
  event.preventDefault();
  const value = $('secret-input').value.trim();
  if (!value) return;
  secret = value;
  storedKey.set(SECRET_NAME, value);
  $('secret-input').value = '';
  $('secret-error').textContent = '';
  await refresh();
  if (!$('dashboard').hidden) $('workers-heading').focus();
}

function start() {
  const onClick = (id, action) => $(id).addEventListener('click', () => act($(id), action));
  onClick('add-http', () => addWorker('http'));
  onClick('add-ws', () => addWorker('ws'));
  onClick('rolling-update', rollingUpdate);
  onClick('reload-nginx', reloadNginx);
  $('scale-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(event.currentTarget.querySelector('button[type="submit"]'), scale);
  });
  $('scale-count').addEventListener('input', () => (scaleEdited = true));
  $('scale-type').addEventListener('change', () => {
    scaleEdited = false;
    if (lastStatus) refresh();
  });
  $('secret-form').addEventListener('submit', connect);
  $('forget-secret').addEventListener('click', () => askSecret(''));
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && secretKnownOrNotNeeded()) refresh();
  });
  refresh();
}

const secretKnownOrNotNeeded = () => $('secret-panel').hidden;

start();
