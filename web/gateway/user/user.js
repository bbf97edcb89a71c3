// /user/: the key's own account — balance, tier, keys, usage per day (an SVG chart drawn here), rate limit, models.
import { api, formatDate, h, render, withBusy } from '/_tb/tb.js';
import { formatMoney, listModels, withUserKey } from '/user/session.js';

const SVG = 'http://www.w3.org/2000/svg';
const METRICS = {
  tokens: { label: 'Tokens', of: (day) => day.prompt_tokens + day.completion_tokens, format: (value) => String(value) },
  requests: { label: 'Requests', of: (day) => day.requests, format: (value) => String(value) },
  cost: { label: 'Cost', of: (day) => day.cost, format: formatMoney },
};

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return element;
}

/** A round axis maximum at or above `value`: 1, 2, 5 × 10^n. */
function niceMaximum(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value);
}

/** Bars per day with a labelled axis; every bar has a <title> (hover and screen readers). */
export function usageChart(days, metric) {
  const width = 720;
  const height = 240;
  const left = 56;
  const bottom = 28;
  const top = 12;
  const plotWidth = width - left - 8;
  const plotHeight = height - top - bottom;
  const values = days.map(metric.of);
  const maximum = niceMaximum(Math.max(0, ...values));
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.7);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((fraction) => {
    const y = top + plotHeight * (1 - fraction);
    return svg(
      'g',
      { class: 'grid' },
      svg('line', { x1: left, x2: width - 8, y1: y, y2: y }),
      svg('text', { x: left - 6, y: y + 4, 'text-anchor': 'end' }, metric.format(maximum * fraction)),
    );
  });
  const labelEvery = Math.ceil(days.length / 8);
  const bars = days.map((day, index) => {
    const value = values[index];
    const barHeight = (value / maximum) * plotHeight;
    const x = left + index * slot + (slot - barWidth) / 2;
    return svg(
      'g',
      { class: 'bar', 'data-date': day.date, 'data-value': value },
      svg(
        'rect',
        { x, y: top + plotHeight - barHeight, width: barWidth, height: Math.max(value > 0 ? 1 : 0, barHeight) },
        svg(
          'title',
          {},
          `${day.date}: ${metric.format(value)} ${metric.label.toLowerCase()}, ${day.requests} requests`,
        ),
      ),
      (days.length - 1 - index) % labelEvery === 0
        ? svg('text', { x: x + barWidth / 2, y: height - 8, 'text-anchor': 'middle' }, day.date.slice(5))
        : '',
    );
  });
  return svg(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': `${metric.label} per day, ${days[0]?.date ?? ''} to ${days.at(-1)?.date ?? ''} (UTC)`,
    },
    ...grid,
    ...bars,
  );
}

function statCard(label, value, extra) {
  return h('div', { class: 'panel' }, h('div', { class: 'muted' }, label), h('div', { class: 'stat' }, value), extra);
}

/** A scrollable table: the first cell of each row is its header. */
function table(id, caption, columns, rows) {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { id },
      caption,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map(([first, ...rest]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, first),
            rest.map((cell) => h('td', {}, cell)),
          ),
        ),
      ),
    ),
  );
}

async function show(app, key, state) {
  const [me, usage, limit, models] = await Promise.all([
    api('/user/api/me', { key }),
    api(`/user/api/usage?days=${state.days}`, { key }),
    api('/user/api/ratelimit', { key }),
    listModels(key),
  ]);
  const metric = METRICS[state.metric];
  const refresh = h('button', { type: 'button', class: 'secondary', id: 'refresh' }, 'Refresh');
  refresh.addEventListener('click', () => withBusy(refresh, () => show(app, key, state)));
  const daysSelect = h(
    'select',
    {
      id: 'usage-days',
      onchange: (event) => withBusy(null, () => show(app, key, { ...state, days: event.target.value })),
    },
    [7, 30, 90].map((days) =>
      h('option', { value: days, selected: String(days) === String(state.days) }, `${days} days`),
    ),
  );
  const metricSelect = h(
    'select',
    {
      id: 'usage-metric',
      onchange: (event) => withBusy(null, () => show(app, key, { ...state, metric: event.target.value })),
    },
    Object.entries(METRICS).map(([name, entry]) =>
      h('option', { value: name, selected: name === state.metric }, entry.label),
    ),
  );
  const activeKeys = me.keys.filter((entry) => !entry.revoked_at);
  render(
    app,
    h('p', { class: 'row' }, h('span', {}, 'Signed in as ', h('strong', { id: 'email' }, me.email)), refresh),
    h(
      'section',
      { class: 'grid', 'aria-label': 'Account' },
      statCard(
        'Balance',
        h('span', { id: 'balance' }, formatMoney(me.balance)),
        me.tier === 'payg' ? null : h('div', { class: 'muted' }, 'not charged on this tier'),
      ),
      statCard(
        'Tier',
        h('span', { id: 'tier' }, me.tier),
        me.active ? null : h('div', { class: 'bad' }, 'account disabled'),
      ),
      statCard(
        'Requests this minute',
        h(
          'span',
          { id: 'ratelimit' },
          limit.limit === null ? `${limit.used} (no limit)` : `${limit.used} / ${limit.limit}`,
        ),
        h(
          'div',
          { class: 'muted' },
          limit.remaining === null ? 'unlimited' : `${limit.remaining} left in the current minute`,
        ),
      ),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'usage-heading' },
      h('h2', { id: 'usage-heading' }, 'Usage'),
      h(
        'div',
        { class: 'row controls' },
        h('label', { for: 'usage-days' }, 'Period'),
        daysSelect,
        h('label', { for: 'usage-metric' }, 'Show'),
        metricSelect,
      ),
      h(
        'p',
        { id: 'usage-totals' },
        `${usage.requests} requests · ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens · cost ${formatMoney(usage.cost)}`,
      ),
      usageChart(usage.by_day, metric),
      h(
        'details',
        {},
        h('summary', {}, 'Usage as a table'),
        table(
          'usage-table',
          h('caption', { class: 'visually-hidden' }, 'Usage per day (UTC)'),
          ['Day', 'Requests', 'Prompt tokens', 'Completion tokens', 'Cost'],
          [...usage.by_day]
            .reverse()
            .filter((day) => day.requests > 0)
            .map((day) => [day.date, day.requests, day.prompt_tokens, day.completion_tokens, formatMoney(day.cost)]),
        ),
      ),
      usage.by_model.length
        ? table(
            'usage-models',
            h('caption', {}, 'By model'),
            ['Model', 'Requests', 'Tokens', 'Cost'],
            usage.by_model.map((entry) => [
              entry.model,
              entry.requests,
              entry.prompt_tokens + entry.completion_tokens,
              formatMoney(entry.cost),
            ]),
          )
        : h('p', { class: 'muted' }, 'No calls in this period yet.'),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'keys-heading' },
      h('h2', { id: 'keys-heading' }, `Keys (${activeKeys.length} active)`),
      table(
        'keys',
        null,
        ['Name', 'Starts with', 'Created', 'State'],
        me.keys.map((entry) => [
          entry.name,
          h('code', {}, `${entry.key_prefix}…`),
          formatDate(entry.created_at),
          entry.revoked_at
            ? h('span', { class: 'bad' }, `revoked ${formatDate(entry.revoked_at)}`)
            : h('span', { class: 'ok' }, 'active'),
        ]),
      ),
      h('p', { class: 'muted' }, 'An admin issues and revokes keys.'),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'models-heading' },
      h('h2', { id: 'models-heading' }, 'Models'),
      h(
        'ul',
        { id: 'models', class: 'model-list' },
        models.map((model) => h('li', {}, h('code', {}, model.id), ' ', h('span', { class: 'badge' }, model.type))),
      ),
      models.length ? null : h('p', { class: 'muted' }, 'No models are installed.'),
    ),
  );
}

withUserKey(document.getElementById('app'), async (key) => {
  const app = document.getElementById('app');
  try {
    await show(app, key, { days: 30, metric: 'tokens' });
  } catch (error) {
    // The admin key is no user: it has no account page.
    if (error?.status === 400) error.status = 403;
    throw error;
  }
});
