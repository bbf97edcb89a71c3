// The registry browser: search with suggestions, package, publisher and artifact pages over the public API
// (/api/v1). One page with client-side routes; the registry answers /packages/…, /publishers/… and
// /artifacts/… with this page so deep links survive a reload. Everything is built with h(): no innerHTML.
import { api, formatBytes, formatDate, h, notify, render, storedKey } from './_tb/tb.js';

const main = document.getElementById('main');
const PER_PAGE = 20;
const PACKAGE_TYPES = ['mod', 'library', 'artifact', 'theme', 'plugin'];
const TOKEN_NAME = 'registry';
const enc = encodeURIComponent;

/** Where the registry is published: `/`, or the proxy's prefix (`/tb/`) that the server wrote as <base href>. */
const BASE = new URL(document.baseURI).pathname;
/** An address of the registry (`/packages/x`, `/api/v1/…`) as the browser must ask for it. */
const at = (path) => BASE + path.replace(/^\//, '');

const token = () => storedKey.get(TOKEN_NAME) ?? undefined;
const get = (path, options = {}) => api(at(path), { key: token(), ...options });
const query = (values) =>
  new URLSearchParams(Object.entries(values).filter(([, value]) => value !== undefined && value !== '')).toString();

// ---- navigation ----------------------------------------------------------------------------------------------

const link = (href, ...children) => h('a', { href, 'data-link': true }, ...children);
const packageHref = (name) => at(`/packages/${enc(name)}`);
const publisherHref = (name) => at(`/publishers/${enc(name)}`);
const artifactHref = (name) => at(`/artifacts/${enc(name)}`);

function navigate(href) {
  history.pushState(null, '', href);
  void route({ moveFocus: true });
}

document.addEventListener('click', (event) => {
  // <base href> would send "#main" to the home page: the skip link moves the focus itself.
  if (event.target.closest?.('a.skip-link')) {
    event.preventDefault();
    main.focus();
    return;
  }
  const anchor = event.target.closest?.('a[data-link]');
  if (!anchor || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href'));
});
window.addEventListener('popstate', () => void route({ moveFocus: true }));

/**
 * Suggestions already fetched in this tab, by text: typing back over a prefix does not ask again. Emptied when the
 * token changes, since a token may see private names.
 */
const suggested = new Map();

const ROUTES = [
  [/^\/(packages\/?)?$/, (_match, params) => home(params)],
  [/^\/packages\/([^/]+)\/?$/, (match) => packagePage(decodeURIComponent(match[1]))],
  [
    /^\/publishers\/?$/,
    (_match, params) =>
      listingPage(
        {
          path: '/publishers',
          title: 'Publishers',
          field: 'publishers',
          card: publisherCard,
          empty: 'No publishers yet.',
        },
        params,
      ),
  ],
  [/^\/publishers\/([^/]+)\/?$/, (match, params) => publisherPage(decodeURIComponent(match[1]), params)],
  [
    /^\/artifacts\/?$/,
    (_match, params) =>
      listingPage(
        {
          path: '/artifacts',
          title: 'Artifacts',
          intro: 'Desktop apps, command-line tools and other builds, per platform.',
          field: 'artifacts',
          card: artifactCard,
          empty: 'No artifacts yet.',
        },
        params,
      ),
  ],
  [/^\/artifacts\/([^/]+)\/?$/, (match) => artifactPage(decodeURIComponent(match[1]))],
];

let generation = 0;

/** Renders the view of the current address; an answer that arrives after a newer navigation is dropped. */
async function route({ moveFocus = false } = {}) {
  const current = (generation += 1);
  const params = new URLSearchParams(location.search);
  const path = location.pathname.startsWith(BASE) ? `/${location.pathname.slice(BASE.length)}` : location.pathname;
  const found = ROUTES.map(([pattern, view]) => [path.match(pattern), view]).find(([match]) => match);
  main.setAttribute('aria-busy', 'true');
  let view;
  try {
    view = found
      ? await found[1](found[0], params)
      : notFound('Page not found', 'This address is not a page of the registry.');
  } catch (error) {
    view = failure(error);
  }
  if (current !== generation) return;
  main.removeAttribute('aria-busy');
  document.title = `${view.title} — Toolbox registry`;
  render(main, view.nodes);
  if (moveFocus) main.focus();
}

// ---- shared pieces -------------------------------------------------------------------------------------------

function notFound(title, message) {
  return {
    title,
    nodes: [
      h('h1', {}, title),
      h('p', { class: 'panel not-found', role: 'alert' }, message),
      h('p', {}, link(at('/'), 'Back to the package search')),
    ],
  };
}

function failure(error) {
  const refused = error?.status === 401;
  const message = refused
    ? 'The access token was refused (expired or invalid). Forget it or paste a new one under “Access token”.'
    : `The registry answered: ${error?.message ?? error}`;
  return {
    title: 'Error',
    nodes: [h('h1', {}, 'Something went wrong'), h('p', { class: 'panel bad', role: 'alert' }, message)],
  };
}

/** A 404 from the API becomes a not-found page; anything else propagates. */
async function orNotFound(load, title, message) {
  try {
    return await load();
  } catch (error) {
    if (error?.status === 404) return { missing: notFound(title, message) };
    throw error;
  }
}

function verifiedBadge(publisher) {
  if (!publisher) return null;
  const verified = publisher.verified ?? publisher.verification_status === 'verified';
  return verified
    ? h('span', { class: 'badge ok', title: 'An administrator verified this publisher' }, '✓ Verified publisher')
    : h('span', { class: 'badge muted' }, 'Unverified publisher');
}

function visibilityBadge(visibility) {
  return visibility && visibility !== 'public' ? h('span', { class: 'badge warn' }, visibility) : null;
}

const count = (value) => (Number.isFinite(value) ? value.toLocaleString() : '—');

/** Only http(s) addresses become links: a stored `javascript:` URL must never be clickable. */
function externalLink(url, label = url) {
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return null;
  return h('a', { href: url, rel: 'nofollow noopener noreferrer' }, label);
}

function facts(entries) {
  const shown = entries.filter(([, value]) => value !== null && value !== undefined && value !== '');
  return h(
    'dl',
    { class: 'facts' },
    shown.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

/** « Previous · Page 2 of 5 · Next » for a listing at `base` (an href) with its other parameters kept. */
function pager(base, params, page, total, perPage = PER_PAGE) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1) return null;
  const href = (target) => {
    const next = new URLSearchParams(params);
    next.set('page', String(target));
    return `${base}?${next}`;
  };
  return h(
    'nav',
    { class: 'pager row', 'aria-label': 'Pages' },
    page > 1 ? link(href(page - 1), '« Previous') : null,
    h('span', { 'aria-current': 'page' }, `Page ${page} of ${pages}`),
    page < pages ? link(href(page + 1), 'Next »') : null,
  );
}

const pageOf = (params) => Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);

/** A package in a list; `withPublisher: false` on the publisher's own page. */
function packageCard(pkg, { withPublisher = true } = {}) {
  return h(
    'li',
    { class: 'panel card' },
    h('h3', {}, link(packageHref(pkg.name), pkg.display_name || pkg.name)),
    h(
      'p',
      { class: 'row muted' },
      h('code', {}, pkg.name),
      pkg.latest_version ? h('span', {}, `v${pkg.latest_version}`) : h('span', {}, 'no release yet'),
      h('span', {}, pkg.package_type),
      visibilityBadge(pkg.visibility),
    ),
    pkg.description ? h('p', { class: 'description' }, pkg.description) : null,
    h(
      'p',
      { class: 'row muted' },
      withPublisher && pkg.publisher
        ? [
            link(publisherHref(pkg.publisher.name), pkg.publisher.display_name || pkg.publisher.name),
            pkg.publisher.verified ? h('span', { class: 'badge ok' }, '✓ Verified') : null,
          ]
        : null,
      h('span', {}, `${count(pkg.total_downloads)} downloads`),
    ),
  );
}

// ---- search and suggestions ----------------------------------------------------------------------------------

/** A combobox: suggestions from /search/suggest while typing, arrows to move, Enter to open, Escape to close. */
function searchBox(initial, initialType) {
  const input = h('input', {
    id: 'q',
    name: 'q',
    type: 'search',
    value: initial,
    role: 'combobox',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': 'suggestions',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'Package name or words',
  });
  const list = h('ul', { id: 'suggestions', role: 'listbox', 'aria-label': 'Suggestions', class: 'suggestions' });
  list.hidden = true;
  let names = [];
  let active = -1;
  let timer;
  let controller;

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const choose = (name) => {
    close();
    navigate(packageHref(name));
  };
  const highlight = (index) => {
    active = index;
    for (const [position, option] of [...list.children].entries())
      option.setAttribute('aria-selected', String(position === index));
    const option = list.children[index];
    if (option) {
      input.setAttribute('aria-activedescendant', option.id);
      option.scrollIntoView({ block: 'nearest' });
    }
  };
  const show = (found) => {
    names = found;
    active = -1;
    render(
      list,
      found.map((name, index) =>
        h(
          'li',
          {
            id: `suggestion-${index}`,
            role: 'option',
            'aria-selected': 'false',
            // mousedown, not click: the input keeps its focus, so blur does not close the list first.
            onmousedown: (event) => {
              event.preventDefault();
              choose(name);
            },
          },
          name,
        ),
      ),
    );
    if (found.length === 0) return close();
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const text = input.value.trim();
    if (!text) return close();
    if (suggested.has(text)) return show(suggested.get(text));
    // A pause in typing, not every key: anonymous visitors share the registry's hourly request quota.
    timer = setTimeout(async () => {
      controller?.abort();
      controller = new AbortController();
      try {
        const found = await get(`/api/v1/search/suggest?${query({ q: text, limit: 8 })}`, {
          signal: controller.signal,
        });
        suggested.set(text, Array.isArray(found) ? found : []);
        if (input.value.trim() === text) show(suggested.get(text));
      } catch (error) {
        if (error?.name !== 'AbortError') close();
      }
    }, 200);
  });
  input.addEventListener('keydown', (event) => {
    const open = !list.hidden && names.length > 0;
    if (event.key === 'ArrowDown' && names.length > 0) {
      event.preventDefault();
      if (!open) show(names);
      highlight((active + 1) % names.length);
    } else if (event.key === 'ArrowUp' && open) {
      event.preventDefault();
      highlight((active - 1 + names.length) % names.length);
    } else if (event.key === 'Enter' && open && active >= 0) {
      event.preventDefault();
      choose(names[active]);
    } else if (event.key === 'Escape' && open) {
      event.preventDefault();
      close();
    }
  });
  input.addEventListener('blur', close);
  const typeSelect = h(
    'select',
    { id: 'package-type', name: 'package_type', class: 'type-select' },
    h('option', { value: '' }, 'All types'),
    PACKAGE_TYPES.map((type) => h('option', { value: type, selected: type === initialType }, type)),
  );

  return h(
    'form',
    {
      role: 'search',
      class: 'search panel',
      onsubmit: (event) => {
        event.preventDefault();
        close();
        const search = query({ q: input.value.trim(), package_type: typeSelect.value });
        navigate(search ? at(`/?${search}`) : at('/'));
      },
    },
    h('label', { for: 'q' }, 'Search packages'),
    h(
      'div',
      { class: 'row nowrap' },
      h('div', { class: 'combo' }, input, list),
      h('label', { for: 'package-type', class: 'visually-hidden' }, 'Package type'),
      typeSelect,
      h('button', { type: 'submit' }, 'Search'),
    ),
    h('p', { class: 'muted hint', id: 'q-hint' }, 'Suggestions appear as you type: ↑ ↓ to choose, Enter to open.'),
  );
}

async function home(params) {
  const text = params.get('q') ?? '';
  const type = PACKAGE_TYPES.includes(params.get('package_type')) ? params.get('package_type') : '';
  const page = pageOf(params);
  const found = await get(`/api/v1/search?${query({ q: text, package_type: type, page, per_page: PER_PAGE })}`);
  const results = found.results ?? found.packages ?? [];
  const summary =
    (text
      ? `${count(found.total)} ${found.total === 1 ? 'result' : 'results'} for “${text}”`
      : `${count(found.total)} packages, most downloaded first`) + (type ? ` (type: ${type})` : '');
  return {
    title: text ? `Search: ${text}` : 'Packages',
    nodes: [
      h('h1', {}, 'Packages'),
      searchBox(text, type),
      h('h2', { id: 'results-heading', role: 'status' }, summary),
      results.length
        ? h(
            'ul',
            { class: 'cards', 'aria-labelledby': 'results-heading' },
            results.map((pkg) => packageCard(pkg)),
          )
        : h('p', { class: 'muted' }, text ? 'No package matches. Try fewer or shorter words.' : 'No packages yet.'),
      pager(at('/'), params, page, found.total ?? 0),
    ],
  };
}

// ---- package page ----------------------------------------------------------------------------------------------

/** `lib>=1.2.0` → a link to lib and its constraint. */
function dependencyItem(requirement) {
  const match = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$/.exec(String(requirement));
  if (!match) return h('li', {}, h('code', {}, String(requirement)));
  return h(
    'li',
    {},
    link(packageHref(match[1]), match[1]),
    match[2] ? [' ', h('code', {}, match[2])] : ' (any version)',
  );
}

/** `code`, **bold** and [text](https://…) inside a line of the readme; the rest stays plain text. */
function inline(text) {
  return text.split(/(`[^`]+`|\*\*[^*]+\*\*|\[[^\]]+\]\([^)\s]+\))/).map((part) => {
    if (/^`[^`]+`$/.test(part)) return h('code', {}, part.slice(1, -1));
    if (/^\*\*[^*]+\*\*$/.test(part)) return h('strong', {}, part.slice(2, -2));
    const anchor = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(part);
    if (anchor) return externalLink(anchor[2], anchor[1]) ?? anchor[1];
    return part;
  });
}

/**
 * A safe subset of Markdown: headings, fenced code, lists, paragraphs and the inline forms above. Raw HTML in a
 * readme is shown as the text it is.
 */
function readme(markdown) {
  const blocks = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) blocks.push(h('p', {}, inline(paragraph.join(' '))));
    paragraph = [];
    if (list) blocks.push(list);
    list = null;
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    if (/^\s*```/.test(line)) {
      flush();
      const code = [];
      for (index += 1; index < lines.length && !/^\s*```/.test(lines[index]); index += 1) code.push(lines[index]);
      blocks.push(h('pre', {}, h('code', {}, code.join('\n'))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)\.)\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      blocks.push(h(`h${Math.min(6, heading[1].length + 2)}`, {}, inline(heading[2])));
    } else if (item) {
      if (paragraph.length) flush();
      const tag = item[1] ? 'ol' : 'ul';
      if (list && list.tagName.toLowerCase() !== tag) flush();
      list ??= h(tag, {});
      list.append(h('li', {}, inline(item[2])));
    } else if (line.trim() === '') flush();
    else {
      if (list) flush();
      paragraph.push(line.trim());
    }
  }
  flush();
  return blocks;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (plain http on a LAN): select the text so the reader can copy it by hand.
    const target = document.getElementById('install-command');
    getSelection()?.selectAllChildren(target);
    notify('Press Ctrl+C (or ⌘C) to copy the selected command.');
    return;
  }
  notify('Copied to the clipboard.');
}

async function downloadVersion(name, version, button) {
  button.disabled = true;
  try {
    const ticket = await get(`/api/v1/packages/${enc(name)}/versions/${enc(version)}/download`);
    location.assign(ticket.url);
  } catch (error) {
    notify(error?.message ?? String(error), { error: true });
  } finally {
    button.disabled = false;
  }
}

function versionsTable(pkg) {
  const versions = pkg.versions ?? [];
  if (versions.length === 0) return h('p', { class: 'muted' }, 'No version has been published yet.');
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'versions' },
      h('caption', { class: 'visually-hidden' }, `Versions of ${pkg.name}`),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Version', 'Published', 'Downloads', 'Size', 'Dependencies', ''].map((name) =>
            h('th', { scope: 'col' }, name),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        versions.map((version) =>
          h(
            'tr',
            { class: version.yanked ? 'yanked' : '' },
            h(
              'th',
              { scope: 'row' },
              h('code', {}, version.version),
              version.version === pkg.latest_version ? [' ', h('span', { class: 'badge ok' }, 'latest')] : null,
              version.yanked
                ? [
                    ' ',
                    h('span', { class: 'badge bad', title: version.yank_reason || 'yanked' }, 'yanked'),
                    version.yank_reason ? h('div', { class: 'muted small' }, `Reason: ${version.yank_reason}`) : null,
                  ]
                : null,
            ),
            h('td', {}, formatDate(version.published_at)),
            h('td', {}, count(version.downloads)),
            h('td', {}, formatBytes(version.size)),
            h('td', {}, String(version.dependencies?.length ?? 0)),
            h(
              'td',
              {},
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Download ${pkg.name} ${version.version}`,
                  onclick: (event) => void downloadVersion(pkg.name, version.version, event.currentTarget),
                },
                'Download',
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

async function packagePage(name) {
  const pkg = await orNotFound(
    () => get(`/api/v1/packages/${enc(name)}`),
    'Package not found',
    `No package named “${name}” was found.${token() ? '' : ' If it is private, use an access token that may see it.'}`,
  );
  if (pkg.missing) return pkg.missing;
  const versions = pkg.versions ?? [];
  const current = versions.find((version) => version.version === pkg.latest_version) ?? versions[0];
  const command = `tb mods install ${pkg.name}`;
  const dependencies = current?.dependencies ?? [];
  return {
    title: pkg.display_name || pkg.name,
    nodes: [
      h('h1', {}, pkg.display_name || pkg.name, ' ', visibilityBadge(pkg.visibility)),
      h(
        'p',
        { class: 'row muted' },
        h('code', {}, pkg.name),
        pkg.latest_version ? h('span', {}, `latest v${pkg.latest_version}`) : null,
        h('span', {}, pkg.package_type),
        pkg.publisher
          ? ['by ', link(publisherHref(pkg.publisher.name), pkg.publisher.display_name || pkg.publisher.name)]
          : null,
        verifiedBadge(pkg.publisher),
      ),
      h(
        'div',
        { class: 'split' },
        h(
          'div',
          {},
          pkg.description ? h('p', { class: 'lead description' }, pkg.description) : null,
          h(
            'section',
            { 'aria-labelledby': 'install-heading', class: 'panel' },
            h('h2', { id: 'install-heading' }, 'Install'),
            h(
              'div',
              { class: 'row nowrap' },
              h('pre', { class: 'command' }, h('code', { id: 'install-command' }, command)),
              h('button', { type: 'button', class: 'secondary', onclick: () => void copyText(command) }, 'Copy'),
            ),
          ),
          h(
            'section',
            { 'aria-labelledby': 'versions-heading' },
            h('h2', { id: 'versions-heading' }, `Versions (${versions.length})`),
            versionsTable(pkg),
          ),
          h(
            'section',
            { 'aria-labelledby': 'dependencies-heading' },
            h('h2', { id: 'dependencies-heading' }, current ? `Dependencies of v${current.version}` : 'Dependencies'),
            dependencies.length
              ? h('ul', { class: 'dependencies' }, dependencies.map(dependencyItem))
              : h('p', { class: 'muted' }, 'No dependencies.'),
          ),
          pkg.readme
            ? h(
                'section',
                { 'aria-labelledby': 'readme-heading', class: 'panel readme' },
                h('h2', { id: 'readme-heading' }, 'Readme'),
                readme(pkg.readme),
              )
            : null,
        ),
        h(
          'aside',
          { class: 'panel', 'aria-label': 'Package facts' },
          facts([
            ['Downloads', count(pkg.total_downloads)],
            ['Latest version', pkg.latest_version],
            ['Licence', pkg.license],
            ['Homepage', externalLink(pkg.homepage)],
            ['Repository', externalLink(pkg.repository)],
            ['Keywords', pkg.keywords?.length ? pkg.keywords.join(', ') : null],
            ['Created', formatDate(pkg.created_at)],
            ['Updated', formatDate(pkg.updated_at)],
          ]),
        ),
      ),
    ],
  };
}

// ---- publishers --------------------------------------------------------------------------------------------------

function publisherCard(publisher) {
  return h(
    'li',
    { class: 'panel card' },
    h('h2', { class: 'card-title' }, link(publisherHref(publisher.name), publisher.display_name || publisher.name)),
    h(
      'p',
      { class: 'row muted' },
      h('code', {}, publisher.name),
      verifiedBadge(publisher),
      h('span', {}, `${count(publisher.package_count)} packages`),
      h('span', {}, `${count(publisher.total_downloads)} downloads`),
    ),
  );
}

/** A paged list of cards at `path` (the page and the API share it): /publishers, /artifacts. */
async function listingPage({ path, title, intro, field, card, empty }, params) {
  const page = pageOf(params);
  const listed = await get(`/api/v1${path}?${query({ page, per_page: PER_PAGE })}`);
  const items = listed[field] ?? [];
  return {
    title,
    nodes: [
      h('h1', {}, title),
      intro ? h('p', { class: 'muted' }, intro) : null,
      items.length ? h('ul', { class: 'cards' }, items.map(card)) : h('p', { class: 'muted' }, empty),
      pager(at(path), params, page, listed.total ?? 0),
    ],
  };
}

async function publisherPage(name, params) {
  const publisher = await orNotFound(
    () => get(`/api/v1/publishers/${enc(name)}`),
    'Publisher not found',
    `No publisher named “${name}” was found.`,
  );
  if (publisher.missing) return publisher.missing;
  const page = pageOf(params);
  const [packages, artifacts] = await Promise.all([
    get(`/api/v1/packages?${query({ publisher: publisher.name, page, per_page: PER_PAGE })}`),
    get(`/api/v1/artifacts?${query({ publisher: publisher.name, per_page: 100 })}`),
  ]);
  return {
    title: publisher.display_name || publisher.name,
    nodes: [
      h('h1', {}, publisher.display_name || publisher.name),
      h('p', { class: 'row muted' }, h('code', {}, publisher.name), verifiedBadge(publisher)),
      h(
        'div',
        { class: 'split' },
        h(
          'div',
          {},
          h(
            'section',
            { 'aria-labelledby': 'packages-heading' },
            h('h2', { id: 'packages-heading' }, `Packages (${count(packages.total)})`),
            packages.packages?.length
              ? h(
                  'ul',
                  { class: 'cards' },
                  packages.packages.map((pkg) => packageCard(pkg, { withPublisher: false })),
                )
              : h('p', { class: 'muted' }, 'No packages you may see.'),
            pager(publisherHref(publisher.name), params, page, packages.total ?? 0),
          ),
          artifacts.artifacts?.length
            ? h(
                'section',
                { 'aria-labelledby': 'artifacts-heading' },
                h('h2', { id: 'artifacts-heading' }, `Artifacts (${count(artifacts.total)})`),
                h('ul', { class: 'cards' }, artifacts.artifacts.map(artifactCard)),
              )
            : null,
        ),
        h(
          'aside',
          { class: 'panel', 'aria-label': 'Publisher facts' },
          facts([
            ['Status', publisher.verification_status],
            ['Packages', count(publisher.package_count)],
            ['Downloads', count(publisher.total_downloads)],
            ['Homepage', externalLink(publisher.homepage)],
            ['Since', formatDate(publisher.created_at)],
          ]),
        ),
      ),
    ],
  };
}

// ---- artifacts ---------------------------------------------------------------------------------------------------

function artifactCard(artifact) {
  return h(
    'li',
    { class: 'panel card' },
    h('h3', {}, link(artifactHref(artifact.name), artifact.name)),
    h(
      'p',
      { class: 'row muted' },
      h('span', {}, artifact.artifact_type),
      artifact.latest_version ? h('span', {}, `v${artifact.latest_version}`) : h('span', {}, 'no build yet'),
      h('span', {}, `${count(artifact.total_downloads)} downloads`),
    ),
    artifact.description ? h('p', { class: 'description' }, artifact.description) : null,
  );
}

/** The visitor's platform in the registry's vocabulary, to put its build first. */
function visitorPlatform() {
  const agent = navigator.userAgent;
  if (/Android/i.test(agent)) return 'android';
  if (/iPhone|iPad|iPod/i.test(agent)) return 'ios';
  if (/Windows/i.test(agent)) return 'windows';
  if (/Mac OS X|Macintosh/i.test(agent)) return 'macos';
  if (/Linux|X11/i.test(agent)) return 'linux';
  return null;
}

function buildsTable(caption, builds, downloadCell) {
  const mine = visitorPlatform();
  const ordered = [...builds].sort((a, b) => Number(b.platform === mine) - Number(a.platform === mine));
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'builds' },
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Platform', 'Architecture', 'File', 'Size', 'SHA-256', ''].map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        ordered.map((build) =>
          h(
            'tr',
            { 'data-platform': build.platform, 'data-architecture': build.architecture },
            h(
              'th',
              { scope: 'row' },
              build.platform,
              build.platform === mine ? [' ', h('span', { class: 'badge ok' }, 'your platform')] : null,
            ),
            h('td', {}, build.architecture),
            h(
              'td',
              {},
              h('code', {}, build.filename),
              build.installer_type ? h('span', { class: 'muted' }, ` (${build.installer_type})`) : null,
            ),
            h('td', {}, formatBytes(build.size_bytes)),
            h('td', {}, h('code', { class: 'checksum' }, build.checksum_sha256)),
            h('td', {}, downloadCell(build)),
          ),
        ),
      ),
    ),
  );
}

async function artifactPage(name) {
  const artifact = await orNotFound(
    () => get(`/api/v1/artifacts/${enc(name)}`),
    'Artifact not found',
    `No artifact named “${name}” was found.`,
  );
  if (artifact.missing) return artifact.missing;
  const versions = artifact.versions ?? [];
  const latest = versions.find((version) => version.version === artifact.latest_version) ?? versions[0];
  // Signed, time-limited links for the latest builds; older versions link the direct download route.
  const tickets = latest
    ? await Promise.all(
        latest.builds.map((build) =>
          get(
            `/api/v1/artifacts/${enc(artifact.name)}/versions/${enc(latest.version)}/download?${query({ platform: build.platform, architecture: build.architecture })}`,
          ).catch(() => null),
        ),
      )
    : [];
  const ticketOf = new Map(latest ? latest.builds.map((build, index) => [build, tickets[index]]) : []);
  const older = versions.filter((version) => version !== latest);
  const directHref = (version, build) =>
    at(`/api/v1/artifacts/${enc(artifact.name)}/${enc(version.version)}`) +
    `?${query({ platform: build.platform, architecture: build.architecture })}`;
  const downloadLink = (href, build, version) =>
    h(
      'a',
      {
        class: 'button',
        href,
        download: build.filename,
        'aria-label': `Download ${build.filename} ${version.version} for ${build.platform} ${build.architecture}`,
      },
      'Download',
    );
  return {
    title: artifact.name,
    nodes: [
      h('h1', {}, artifact.name),
      h(
        'p',
        { class: 'row muted' },
        h('span', {}, artifact.artifact_type),
        artifact.publisher
          ? [
              'by ',
              link(publisherHref(artifact.publisher.name), artifact.publisher.display_name || artifact.publisher.name),
            ]
          : null,
        verifiedBadge(artifact.publisher),
      ),
      artifact.description ? h('p', { class: 'lead description' }, artifact.description) : null,
      latest
        ? h(
            'section',
            { 'aria-labelledby': 'latest-heading' },
            h('h2', { id: 'latest-heading' }, `Downloads for v${latest.version}`),
            h(
              'p',
              { class: 'muted' },
              `Released ${formatDate(latest.released_at)}`,
              latest.min_os_version ? ` · needs OS ${latest.min_os_version} or later` : '',
            ),
            latest.changelog ? h('p', { class: 'changelog' }, latest.changelog) : null,
            buildsTable(`Builds of ${artifact.name} ${latest.version}`, latest.builds, (build) => {
              const ticket = ticketOf.get(build);
              return downloadLink(ticket?.url ?? directHref(latest, build), build, latest);
            }),
          )
        : h('p', { class: 'muted' }, 'No build has been uploaded yet.'),
      older.length
        ? h(
            'details',
            { class: 'older' },
            h('summary', {}, `Older versions (${older.length})`),
            older.map((version) => [
              h(
                'h3',
                {},
                `v${version.version}`,
                h('span', { class: 'muted' }, ` · ${formatDate(version.released_at)}`),
              ),
              buildsTable(`Builds of ${artifact.name} ${version.version}`, version.builds, (build) =>
                downloadLink(directHref(version, build), build, version),
              ),
            ]),
          )
        : null,
      h(
        'aside',
        { class: 'panel', 'aria-label': 'Artifact facts' },
        facts([
          ['Downloads', count(artifact.total_downloads)],
          ['Homepage', externalLink(artifact.homepage)],
          ['Repository', externalLink(artifact.repository)],
          ['Updated', formatDate(artifact.updated_at)],
        ]),
      ),
    ],
  };
}

// ---- access token --------------------------------------------------------------------------------------------------

function showTokenState() {
  const summary = document.querySelector('details.token summary');
  summary.textContent = token() ? 'Access token (in use)' : 'Access token';
}

document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('token-input');
  const value = input.value.trim();
  if (!value) return;
  storedKey.set(TOKEN_NAME, value);
  suggested.clear();
  input.value = '';
  document.querySelector('details.token').open = false;
  showTokenState();
  notify('The token is used for this tab until you close it.');
  void route();
});
document.getElementById('token-clear').addEventListener('click', () => {
  storedKey.clear(TOKEN_NAME);
  suggested.clear();
  document.querySelector('details.token').open = false;
  showTokenState();
  notify('Token forgotten.');
  void route();
});

showTokenState();
void route();
