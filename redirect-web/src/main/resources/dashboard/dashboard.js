// Tally dashboard: a links list and a per-link stats view over the read API (/api/...), where a write key
// also creates and disables links through the links API; a read key sees the same pages without those forms.
// Plain browser JavaScript with no build step; Chart.js (vendor/chart.umd.js) draws the time series.
// The chart's hours and days are those of the chosen time zone (the browser's by default), which the API
// makes from its stored buckets; every other time is shown in UTC and says so.
'use strict';

(() => {
  const KEY_STORAGE = 'tally.apiKey';
  const REFRESH_MS = 5000;
  const SEARCH_DEBOUNCE_MS = 300;
  /** The longest a refused request waits before it asks again, whatever Retry-After says. */
  const RETRY_AFTER_MAX_S = 5;
  /** The shortest search the links API takes: its index reads three-character runs. */
  const MIN_SEARCH = 3;
  const PAGE_SIZE = 50;
  const TOP_LIMIT = 10;
  const BREAKDOWN_LIMIT = 10;
  // The API refuses a range of more buckets than this (StatsRange.MAX_POINTS).
  const MAX_POINTS = 10000;

  const RANGES = [
    { id: '1h', label: '1 h', minutes: 60 },
    { id: '24h', label: '24 h', minutes: 24 * 60 },
    { id: '7d', label: '7 d', minutes: 7 * 24 * 60 },
    { id: '30d', label: '30 d', minutes: 30 * 24 * 60 },
    { id: '90d', label: '90 d', minutes: 90 * 24 * 60 },
  ];
  const INTERVALS = [
    { id: 'auto', label: 'Auto', minutes: null },
    { id: 'minute', label: 'Minute', minutes: 1 },
    { id: 'hour', label: 'Hour', minutes: 60 },
    { id: 'day', label: 'Day', minutes: 24 * 60 },
  ];
  const DIMENSIONS = [
    { id: 'country', label: 'Country' },
    { id: 'referrer', label: 'Referrer' },
    { id: 'browser', label: 'Browser' },
    { id: 'os', label: 'OS' },
    { id: 'device', label: 'Device' },
    { id: 'bot_kind', label: 'Bot kind' },
    // One card for the three campaign tags, one asked for at a time: the tag picked in the card.
    {
      id: 'campaign',
      label: 'Campaign',
      tags: [
        { id: 'utm_source', label: 'Source' },
        { id: 'utm_medium', label: 'Medium' },
        { id: 'utm_campaign', label: 'Campaign' },
      ],
    },
  ];

  /** The API's dimension a card shows: its own, or the campaign tag picked in it. */
  function dimensionOf(dim) {
    return dim.tags ? prefs.campaignTag : dim.id;
  }
  const COLORS = { clicks: '#2563eb', bots: '#d97706', visitors: '#059669' };

  // ---- state ------------------------------------------------------------------------------------

  const ui = {
    auth: document.getElementById('auth'),
    keyForm: document.getElementById('api-key-form'),
    keyInput: document.getElementById('api-key-input'),
    authError: document.getElementById('auth-error'),
    signOut: document.getElementById('sign-out'),
    navLinks: document.getElementById('nav-links'),
    view: document.getElementById('view'),
  };

  // Bumped whenever the shown view changes, so answers to an older view's requests are dropped.
  let viewGeneration = 0;
  let viewAbort = null;
  let refreshTimer = null;
  let chart = null;
  // The zone of the chart's buckets, as the API named it, for its tooltips.
  let chartZone = 'UTC';
  // Each of the chart's buckets as the API marked it: provisional, final or repaired (and when).
  let chartStatus = [];
  const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  // Kept across views so going back to the list finds the same search, range, interval and zone.
  const prefs = { query: '', range: '24h', interval: 'auto', tz: BROWSER_ZONE, campaignTag: 'utm_source' };
  // The link view's current state; null on other views.
  let linkView = null;
  // The API's answer for a link just created, handed to that link's view: it shows the short URL at once,
  // from the answer itself, while the view's own reads are on their way.
  let created = null;
  // The scope the API gave for the key in use: a read key's pages offer no forms to create or disable.
  let keyScope = { key: null, scope: null };

  // ---- small helpers ----------------------------------------------------------------------------

  /** Builds an element: attrs are attributes (dataset via data-*), children are nodes or strings. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'class') el.className = value;
      else if (name === 'text') el.textContent = value;
      else if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
      else el.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const numberFormat = new Intl.NumberFormat('en-US');
  function fmtNumber(n) {
    return n === null || n === undefined ? '–' : numberFormat.format(n);
  }

  function pad(n) {
    return String(n).padStart(2, '0');
  }

  /** Parts of an instant in UTC. */
  function utc(iso) {
    const d = new Date(iso);
    return {
      y: d.getUTCFullYear(), mo: pad(d.getUTCMonth() + 1), d: pad(d.getUTCDate()),
      h: pad(d.getUTCHours()), mi: pad(d.getUTCMinutes()), s: pad(d.getUTCSeconds()),
    };
  }

  function fmtDateTime(iso) {
    if (!iso) return '';
    const p = utc(iso);
    return `${p.y}-${p.mo}-${p.d} ${p.h}:${p.mi}`;
  }

  function fmtDateTimeSeconds(iso) {
    if (!iso) return '';
    const p = utc(iso);
    return `${p.y}-${p.mo}-${p.d} ${p.h}:${p.mi}:${p.s} UTC`;
  }

  const dayFormat = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const DAY_MS = 24 * 3600 * 1000;

  /** A visitors span (an hour, a day or whole days, end exclusive) in words, as the API's UTC buckets are. */
  function fmtSpan(fromIso, toIso) {
    const from = Date.parse(fromIso);
    const to = Date.parse(toIso);
    const year = (t) => new Date(t).getUTCFullYear();
    const day = (t) => dayFormat.format(t) + (year(from) !== year(to - 1) ? `, ${year(t)}` : '');
    if (to - from <= 3600 * 1000) {
      return `UTC hour ${day(from)}, ${utc(fromIso).h}:00–${utc(toIso).h === '00' ? '24' : utc(toIso).h}:00`;
    }
    if (to - from <= DAY_MS) return `UTC day ${day(from)}`;
    return `UTC days ${day(from)} – ${day(to - DAY_MS)}`;
  }

  /** Parts of an instant in a time zone. */
  function zoned(iso, tz) {
    const parts = {};
    new Intl.DateTimeFormat('en-CA', {
      timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(iso)).forEach((part) => { parts[part.type] = part.value; });
    return { y: parts.year, mo: parts.month, d: parts.day, h: parts.hour, mi: parts.minute };
  }

  /** A chart label for a bucket start in tz: dates for day buckets, times (with the date when needed) otherwise. */
  function fmtBucket(iso, interval, spansDays, tz) {
    const p = zoned(iso, tz);
    if (interval === 'day') return `${p.y}-${p.mo}-${p.d}`;
    return spansDays ? `${p.mo}-${p.d} ${p.h}:${p.mi}` : `${p.h}:${p.mi}`;
  }

  // The click events name a country they could not resolve "unknown" (ClickEvent.UNKNOWN_COUNTRY), not "".
  const UNKNOWN_COUNTRY = 'unknown';

  /** Whether a breakdown value stands for no value: no referrer, or a country that was not resolved. */
  function isNoValue(dimension, value) {
    return value === '' || (dimension === 'country' && value === UNKNOWN_COUNTRY);
  }

  function shownValue(dimension, value) {
    if (!isNoValue(dimension, value)) return value;
    if (dimension === 'referrer') return '(direct)';
    return dimension.startsWith('utm_') ? '(not set)' : '(unknown)';
  }

  function debounce(fn, ms) {
    let timer = null;
    return (...args) => {
      clearTimeout(timer);
      timer = setTimeout(() => fn(...args), ms);
    };
  }

  function setState(state) {
    document.body.dataset.state = state;
  }

  function isAbort(err) {
    return err && err.name === 'AbortError';
  }

  /** Resolves after ms, or rejects with an AbortError as soon as signal aborts. */
  function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) {
        reject(new DOMException('aborted', 'AbortError'));
        return;
      }
      const timer = setTimeout(resolve, ms);
      if (signal) {
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new DOMException('aborted', 'AbortError'));
        }, { once: true });
      }
    });
  }

  // ---- API access -------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message, auth) {
      super(message);
      this.name = 'ApiError';
      this.status = status;
      this.auth = Boolean(auth);
    }
  }

  function apiKey() {
    return sessionStorage.getItem(KEY_STORAGE);
  }

  /** The message of an error answer: the API's {"status", "error"} body, else the HTTP status. */
  async function errorMessage(res) {
    const text = await res.text().catch(() => '');
    try {
      const body = JSON.parse(text);
      // A problem details body (RFC 9457): its detail, or the error member older servers sent.
      if (body && typeof body.detail === 'string' && body.detail) return body.detail;
      if (body && typeof body.error === 'string' && body.error) return body.error;
    } catch (ignored) {
      // not JSON: fall through
    }
    return `HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`;
  }

  /**
   * Calls the API with the key. Resolves to the parsed JSON, or to the Response itself when raw is set;
   * a body is sent as JSON. A 401 or 403 forgets the key and shows the key form with the API's message.
   */
  async function api(path, { signal, raw, method = 'GET', body } = {}, retried = false) {
    const key = apiKey();
    const headers = { Accept: raw ? 'text/csv, */*' : 'application/json, application/problem+json' };
    // Without a key the request still goes: the API's 401 says what is missing in its own words, which
    // the key form then shows.
    if (key) headers.Authorization = `Bearer ${key}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: 'no-store',
      });
    } catch (err) {
      if (isAbort(err)) throw err;
      throw new ApiError(0, `cannot reach the API (${err.message})`);
    }
    if (res.status === 401 || res.status === 403) {
      const message = await errorMessage(res);
      // Only the key that was refused is forgotten; another tab's sign-in meanwhile is kept.
      if (apiKey() === key) {
        sessionStorage.removeItem(KEY_STORAGE);
        showAuth(message);
      }
      throw new ApiError(res.status, message, true);
    }
    // A key's stats requests beyond what it may run at once are refused with Retry-After; a reader
    // of the dashboard asks again once, rather than see an error for a busy moment.
    if (res.status === 429 && method === 'GET' && !retried) {
      const seconds = Math.min(Number(res.headers.get('Retry-After')) || 1, RETRY_AFTER_MAX_S);
      await sleep(seconds * 1000, signal);
      return api(path, { signal, raw, method, body }, true);
    }
    if (!res.ok) throw new ApiError(res.status, await errorMessage(res));
    return raw ? res : res.json();
  }

  function query(params) {
    const q = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== '') q.set(name, value);
    }
    const text = q.toString();
    return text ? `?${text}` : '';
  }

  function linkPath(code) {
    return `/api/links/${encodeURIComponent(code)}`;
  }

  /** Fetches a CSV with the key and saves it: a plain link could not send the Authorization header. */
  async function downloadCsv(path, fallbackName, errorBox) {
    try {
      const res = await api(path, { raw: true });
      const blob = await res.blob();
      const disposition = res.headers.get('Content-Disposition') || '';
      const named = /filename="?([^";]+)"?/i.exec(disposition);
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: named ? named[1] : fallbackName, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      showError(errorBox, null);
    } catch (err) {
      if (!isAbort(err) && !err.auth) showError(errorBox, `CSV download failed: ${err.message}`);
    }
  }

  function csvButton(label, onClick, testid) {
    return h('button', { type: 'button', class: 'link-button csv', 'data-testid': testid, onclick: onClick },
      label);
  }

  function showError(box, message) {
    if (!box) return;
    box.textContent = message || '';
    box.hidden = !message;
  }

  // ---- sign-in ----------------------------------------------------------------------------------

  function showAuth(message) {
    leaveView();
    ui.view.replaceChildren();
    ui.signOut.hidden = true;
    ui.navLinks.hidden = true;
    ui.auth.hidden = false;
    ui.authError.textContent = message || '';
    ui.authError.hidden = !message;
    document.body.dataset.view = 'auth';
    setState(message ? 'error' : 'ready');
    ui.keyInput.focus();
  }

  ui.keyForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = ui.keyInput.value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_STORAGE, key);
    ui.keyInput.value = '';
    ui.auth.hidden = true;
    ui.authError.hidden = true;
    route();
  });

  ui.signOut.addEventListener('click', (event) => {
    event.preventDefault();
    sessionStorage.removeItem(KEY_STORAGE);
    showAuth('');
  });

  // ---- routing ----------------------------------------------------------------------------------

  /** Stops whatever the current view has running: its requests, its refresh timer, its chart. */
  function leaveView() {
    viewGeneration += 1;
    if (viewAbort) viewAbort.abort();
    viewAbort = null;
    clearTimeout(refreshTimer);
    refreshTimer = null;
    if (chart) chart.destroy();
    chart = null;
    linkView = null;
  }

  function canWrite() {
    return keyScope.key === apiKey() && keyScope.scope === 'write';
  }

  function route() {
    const key = apiKey();
    if (!key) {
      showAuth('');
      return;
    }
    if (keyScope.key !== key) {
      // Asked once per key. A refused key has already taken the page to the key form; on any other
      // failure the views show without forms, and their own reads say what is wrong.
      api('/api/key').then(
        (answer) => { keyScope = { key, scope: answer.scope }; },
        () => {},
      ).finally(() => {
        if (apiKey() === key) showView();
      });
      return;
    }
    showView();
  }

  function showView() {
    leaveView();
    viewAbort = new AbortController();
    ui.auth.hidden = true;
    ui.signOut.hidden = false;
    ui.navLinks.hidden = false;
    const hash = location.hash.replace(/^#/, '');
    const match = /^\/link\/([^/?]+)/.exec(hash);
    if (match) {
      let code;
      try {
        code = decodeURIComponent(match[1]);
      } catch (ignored) {
        code = match[1];
      }
      showLinkView(code);
    } else {
      showLinksView();
    }
  }

  window.addEventListener('hashchange', route);

  // ---- links view -------------------------------------------------------------------------------

  function showLinksView() {
    const generation = viewGeneration;
    const signal = viewAbort.signal;
    document.body.dataset.view = 'links';
    document.title = 'Links · Tally';

    const search = h('input', {
      id: 'link-search', 'data-testid': 'link-search', type: 'search', placeholder: 'Search code or URL',
      'aria-label': 'Search links by code or URL', value: prefs.query, autocomplete: 'off', spellcheck: 'false',
    });
    const searchHint = h('p', { class: 'muted small', 'data-testid': 'search-hint', hidden: true },
      `Type at least ${MIN_SEARCH} characters to search.`);
    const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'error', hidden: true });
    const body = h('tbody', { id: 'links-body' });
    const empty = h('p', { class: 'muted empty', hidden: true });
    const more = h('button', { id: 'links-more', 'data-testid': 'links-more', type: 'button', hidden: true },
      'More');
    const topList = h('ol', { id: 'top-links', class: 'top-list', 'data-testid': 'top-links' });
    const topNote = h('p', { class: 'muted small', hidden: true });
    const tagList = h('ol', { class: 'top-list', 'data-testid': 'tag-totals' });
    const tagNote = h('p', { class: 'muted small', hidden: true });

    ui.view.replaceChildren(
      h('div', { class: 'links-layout' },
        h('div', { class: 'links-main' },
          canWrite() ? createForm(generation) : null,
          h('section', { class: 'card', 'aria-labelledby': 'links-title' },
            h('div', { class: 'toolbar' },
              h('h1', { id: 'links-title' }, 'Links'),
              search),
            searchHint,
            error,
            h('div', { class: 'table-wrap' },
              h('table', { class: 'links', 'data-testid': 'links-table' },
                h('thead', {},
                  h('tr', {},
                    h('th', { scope: 'col' }, 'Code'),
                    h('th', { scope: 'col' }, 'URL'),
                    h('th', { scope: 'col' }, 'Created (UTC)'),
                    h('th', { scope: 'col', class: 'num' }, 'Clicks'))),
                body)),
            empty,
            h('div', { class: 'more' }, more))),
        h('aside', { class: 'card top', 'aria-labelledby': 'top-title' },
          h('h2', { id: 'top-title' }, 'Top links, last 24 h'),
          topList,
          topNote,
          h('h2', { id: 'tags-title' }, 'Tags, last 24 h'),
          tagList,
          tagNote)));

    let cursor = null;
    let request = 0;

    async function load(reset) {
      const mine = ++request;
      setState('loading');
      more.disabled = true;
      try {
        const typed = prefs.query.trim();
        // The API refuses searches shorter than the search index reads; list every link meanwhile.
        const q = typed.length >= MIN_SEARCH ? typed : '';
        searchHint.hidden = !typed || Boolean(q);
        const page = await api(`/api/links${query({
          limit: PAGE_SIZE, cursor: reset ? null : cursor, q,
        })}`, { signal });
        if (generation !== viewGeneration || mine !== request) return;
        if (reset) body.replaceChildren();
        for (const link of page.links) body.append(linkRow(link));
        cursor = page.next_cursor || null;
        more.hidden = !cursor;
        const none = body.children.length === 0;
        empty.hidden = !none;
        empty.textContent = q ? `No link matches “${q}”.` : 'No links yet.';
        showError(error, null);
        setState('ready');
      } catch (err) {
        if (isAbort(err) || err.auth || generation !== viewGeneration || mine !== request) return;
        showError(error, err.message);
        setState('error');
      } finally {
        more.disabled = false;
      }
    }

    async function loadTop() {
      try {
        const top = await api(`/api/top${query({ from: '24h', to: 'now', limit: TOP_LIMIT })}`, { signal });
        if (generation !== viewGeneration) return;
        topList.replaceChildren(...top.links.map((entry) =>
          h('li', { 'data-testid': 'top-link', 'data-code': entry.code, 'data-clicks': entry.clicks },
            h('a', { href: `#/link/${encodeURIComponent(entry.code)}` }, entry.code),
            h('span', { class: 'num' }, fmtNumber(entry.clicks)))));
        topNote.hidden = top.links.length > 0;
        topNote.textContent = 'No clicks in the last 24 h.';
      } catch (err) {
        if (isAbort(err) || err.auth || generation !== viewGeneration) return;
        // The box is optional: say why it is empty, but keep the page usable.
        topNote.hidden = false;
        topNote.textContent = `Top links unavailable: ${err.message}`;
      }
    }

    async function loadTags() {
      try {
        const totals = await api(`/api/tags${query({ from: '24h', to: 'now', limit: TOP_LIMIT })}`, { signal });
        if (generation !== viewGeneration) return;
        tagList.replaceChildren(...totals.tags.map((entry) =>
          h('li', { 'data-testid': 'tag-total', 'data-tag': entry.tag, 'data-clicks': entry.clicks,
            title: `${entry.links} link${entry.links === 1 ? '' : 's'}, ${fmtNumber(entry.bot_clicks)} bot clicks` },
            h('span', { class: 'tag' }, entry.tag),
            h('span', { class: 'num' }, fmtNumber(entry.clicks)))));
        tagNote.hidden = totals.tags.length > 0;
        tagNote.textContent = 'No link has tags yet.';
      } catch (err) {
        if (isAbort(err) || err.auth || generation !== viewGeneration) return;
        tagNote.hidden = false;
        tagNote.textContent = `Tags unavailable: ${err.message}`;
      }
    }

    search.addEventListener('input', debounce(() => {
      if (generation !== viewGeneration) return;
      prefs.query = search.value;
      cursor = null;
      load(true);
    }, SEARCH_DEBOUNCE_MS));
    more.addEventListener('click', () => load(false));

    load(true);
    loadTop();
    loadTags();
  }

  /**
   * The form that creates a link, then opens its page. The API alone judges the URL and the code, so what
   * it refuses (a taken code, a URL it will not redirect to) is shown in its words, the form kept as typed.
   */
  function createForm(generation) {
    const url = h('input', {
      id: 'new-url', 'data-testid': 'new-url', name: 'url', type: 'text', inputmode: 'url',
      placeholder: 'https://example.com/a/long/path', 'aria-label': 'Target URL', autocomplete: 'off',
      spellcheck: 'false',
    });
    const code = h('input', {
      id: 'new-code', 'data-testid': 'new-code', name: 'code', type: 'text', placeholder: 'Custom code (optional)',
      'aria-label': 'Custom code (optional)', autocomplete: 'off', spellcheck: 'false',
    });
    const submit = h('button', { type: 'submit', 'data-testid': 'new-submit' }, 'Create link');
    const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'create-error', hidden: true });
    const form = h('form', { class: 'card create', 'data-testid': 'create-form', 'aria-labelledby': 'create-title',
      autocomplete: 'off' },
      h('h2', { id: 'create-title' }, 'New link'),
      h('div', { class: 'row' }, url, code, submit),
      h('p', { class: 'muted small hint' },
        'A code is 3 to 64 letters, digits, _ or -; left empty, one is made up.'),
      error);

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      showError(error, null);
      try {
        // Sent as typed but for surrounding blanks, which a pasted URL often carries.
        const link = await api('/api/links', {
          method: 'POST', body: { url: url.value.trim(), code: code.value.trim() || null },
        });
        if (generation !== viewGeneration) return;
        created = link;
        location.hash = `#/link/${encodeURIComponent(link.code)}`;
      } catch (err) {
        // A refused key has already taken the page to the key form, with the API's message.
        if (err.auth || generation !== viewGeneration) return;
        showError(error, err.message);
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  function linkRow(link) {
    const href = `#/link/${encodeURIComponent(link.code)}`;
    const url = /^https?:\/\//i.test(link.url)
      ? h('a', { href: link.url, title: link.url, target: '_blank', rel: 'noopener noreferrer' }, link.url)
      : h('span', { title: link.url }, link.url);
    // The whole row opens the link's page; clicks on its own links (the code, the target URL) do what they say.
    const open = (event) => { if (!event.target.closest('a')) location.hash = href; };
    return h('tr', { 'data-testid': 'link-row', 'data-code': link.code, class: link.disabled_at ? 'disabled' : null,
      onclick: open },
      h('td', { class: 'code' },
        h('a', { href }, link.code),
        link.disabled_at ? disabledBadge(link.disabled_at) : null),
      h('td', { class: 'url' }, url),
      h('td', { class: 'created' },
        h('time', { datetime: link.created_at, title: link.created_at }, fmtDateTime(link.created_at))),
      h('td', { class: 'num', 'data-testid': 'link-clicks' }, fmtNumber(link.clicks)));
  }

  function disabledBadge(at) {
    return h('span', { class: 'badge', 'data-testid': 'disabled-badge', title: `disabled ${fmtDateTimeSeconds(at)}` },
      'disabled');
  }

  // ---- link view --------------------------------------------------------------------------------

  /** Whether the API would accept this range at this interval (it refuses more than MAX_POINTS buckets). */
  function allowed(rangeId, intervalId) {
    const range = RANGES.find((r) => r.id === rangeId);
    const interval = INTERVALS.find((i) => i.id === intervalId);
    if (!interval || interval.minutes === null) return true;
    // +1: the range is widened to whole buckets at both ends.
    return range.minutes / interval.minutes + 1 <= MAX_POINTS;
  }

  function segmented(name, label, options, current, onPick) {
    const group = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': label, 'data-testid': `${name}-select` });
    for (const option of options) {
      const id = `${name}-${option.id}`;
      group.append(
        h('input', {
          type: 'radio', name, id, value: option.id, checked: option.id === current,
          'data-testid': id, onchange: () => onPick(option.id),
        }),
        h('label', { for: id }, option.label));
    }
    return group;
  }

  function syncIntervalOptions(group) {
    for (const input of group.querySelectorAll('input')) {
      const ok = allowed(prefs.range, input.value);
      input.disabled = !ok;
      input.nextElementSibling.title = ok ? '' : 'Too many points for this range: pick a coarser interval';
    }
  }

  function totalCard(label, testid, note) {
    const value = h('div', { class: 'value', 'data-testid': testid, id: testid }, '–');
    const change = h('p', { class: 'change', 'data-testid': `${testid}-change` });
    return {
      el: h('div', { class: 'card total' }, h('div', { class: 'label' }, label), value, change, note || null),
      value,
      change,
    };
  }

  /**
   * A total's change against the period just before, as a share of what it was then: "new" when it
   * was 0 then, as no share of nothing means anything.
   */
  function setChange(el, now, before, rangeLabel) {
    const since = `vs the ${rangeLabel} before`;
    let change;
    let text;
    if (before === 0) {
      change = now === 0 ? '0' : 'new';
      text = now === 0 ? `none, as in the ${rangeLabel} before` : `new: none in the ${rangeLabel} before`;
    } else {
      const percent = Math.round(((now - before) / before) * 100);
      change = String(percent);
      const arrow = percent > 0 ? '▲' : percent < 0 ? '▼' : '=';
      text = `${arrow} ${percent > 0 ? '+' : ''}${percent}% ${since} (${fmtNumber(before)})`;
    }
    el.textContent = text;
    el.dataset.change = change;
    el.dataset.before = String(before);
    el.classList.toggle('up', change === 'new' || Number(change) > 0);
    el.classList.toggle('down', Number(change) < 0);
  }

  function showLinkView(code) {
    const generation = viewGeneration;
    const signal = viewAbort.signal;
    document.body.dataset.view = 'link';
    document.title = `${code} · Tally`;
    if (!allowed(prefs.range, prefs.interval)) prefs.interval = 'auto';

    const justCreated = created && created.code === code ? created : null;
    created = null;

    const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'error', hidden: true });
    // Apart from the stats' error, which each refresh clears.
    const actionError = h('p', { class: 'error', role: 'alert', 'data-testid': 'action-error', hidden: true });
    const header = {
      code: h('h1', { class: 'code', 'data-testid': 'link-code' }, code),
      badge: h('span'),
      disable: h('button', { type: 'button', class: 'danger', 'data-testid': 'disable-link', hidden: true,
        onclick: () => disable() }, 'Disable link'),
      shortUrl: h('a', { 'data-testid': 'link-short-url', target: '_blank', rel: 'noopener noreferrer' }),
      copy: h('button', { type: 'button', class: 'link-button copy', 'data-testid': 'copy-short-url', hidden: true,
        onclick: () => copyShortUrl() }, 'Copy'),
      copyNote: h('span', { class: 'muted small copy-note', role: 'status', 'data-testid': 'copy-note' }),
      url: h('a', { 'data-testid': 'link-url', class: 'target', target: '_blank', rel: 'noopener noreferrer' }),
      created: h('span', { class: 'muted small' }),
      tags: h('span', { 'data-testid': 'link-tags' }),
      expires: h('span', { class: 'muted small', 'data-testid': 'link-expires' }),
      edit: h('button', { type: 'button', class: 'link-button', 'data-testid': 'edit-link', hidden: true,
        onclick: () => { editForm.hidden = !editForm.hidden; } }, 'Edit'),
    };
    const editTarget = h('input', {
      id: 'edit-url', 'data-testid': 'edit-url', type: 'text', inputmode: 'url', 'aria-label': 'New target URL',
      autocomplete: 'off', spellcheck: 'false',
    });
    const editTags = h('input', {
      id: 'edit-tags', 'data-testid': 'edit-tags', type: 'text', placeholder: 'tags, comma-separated',
      'aria-label': 'Tags, comma-separated', autocomplete: 'off', spellcheck: 'false',
    });
    const editForm = h('form', { class: 'edit-link', 'data-testid': 'edit-form', hidden: true },
      h('div', { class: 'row' }, editTarget, editTags,
        h('button', { type: 'submit', 'data-testid': 'edit-submit' }, 'Save')),
      h('p', { class: 'muted small hint' },
        'The next redirect goes to the new target. At most 10 tags of letters, digits, ., _ or -.'));
    editForm.addEventListener('submit', (event) => {
      event.preventDefault();
      change();
    });
    const createdNote = justCreated
      ? h('p', { class: 'notice', role: 'status', 'data-testid': 'created-notice' },
        'Link created. Copy its short URL to share it; its clicks show below as they arrive.')
      : null;
    const intervalGroup = segmented('interval', 'Interval', INTERVALS, prefs.interval, (id) => {
      prefs.interval = id;
      refreshNow(true);
    });
    const rangeGroup = segmented('range', 'Range (last)', RANGES, prefs.range, (id) => {
      prefs.range = id;
      if (!allowed(prefs.range, prefs.interval)) {
        prefs.interval = 'auto';
        intervalGroup.querySelector('input[value="auto"]').checked = true;
      }
      syncIntervalOptions(intervalGroup);
      refreshNow(true);
    });
    syncIntervalOptions(intervalGroup);
    const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    const zoneSelect = h('select', { id: 'tz-select', 'data-testid': 'tz-select', 'aria-label': 'Time zone' },
      ...[...new Set([BROWSER_ZONE, 'UTC', ...zones])].map((zone) =>
        h('option', { value: zone, selected: zone === prefs.tz ? '' : null },
          zone === BROWSER_ZONE ? `${zone} (this browser)` : zone)));
    zoneSelect.addEventListener('change', () => {
      prefs.tz = zoneSelect.value;
      refreshNow(true);
    });

    const visitorsSpan = h('p', { class: 'note', 'data-testid': 'visitors-span' }, 'unique people');
    const visitorsNote = h('p', { class: 'note caveat', 'data-testid': 'visitors-note', hidden: true });
    const totals = {
      clicks: totalCard('Clicks', 'total-clicks', h('p', { class: 'note' }, 'human clicks')),
      bots: totalCard('Bot clicks', 'total-bot-clicks', h('p', { class: 'note' }, 'from crawlers and other bots')),
      visitors: totalCard('Visitors', 'total-visitors', [visitorsSpan, visitorsNote]),
    };
    const canvas = h('canvas', {
      id: 'series-chart', 'data-testid': 'series-chart', role: 'img',
      'aria-label': 'Clicks, bot clicks and visitors over time',
    });
    const chartNote = h('p', { class: 'muted small', hidden: true });
    const approximateNote = h('p', { class: 'note caveat', 'data-testid': 'approximate-note', hidden: true });
    const intervalShown = h('span', { class: 'muted small', 'data-testid': 'interval-shown' });
    const fresh = h('p', { class: 'fresh', id: 'fresh-until', 'data-testid': 'fresh-until' });
    const updated = h('span', { class: 'muted small', 'data-testid': 'updated-at' });

    const breakdowns = {};
    const breakdownCards = DIMENSIONS.map((dim) => {
      const body = h('tbody');
      breakdowns[dim.id] = body;
      const tagSelect = dim.tags
        ? h('select', { 'data-testid': 'campaign-tag', 'aria-label': 'Campaign tag' },
          ...dim.tags.map((tag) => h('option', { value: tag.id, selected: tag.id === prefs.campaignTag ? '' : null },
            tag.label)))
        : null;
      if (tagSelect) {
        tagSelect.addEventListener('change', () => {
          prefs.campaignTag = tagSelect.value;
          refreshNow(true);
        });
      }
      return h('section', { class: 'card breakdown', 'aria-labelledby': `bd-title-${dim.id}` },
        h('div', { class: 'card-head' },
          h('h3', { id: `bd-title-${dim.id}` }, dim.label),
          tagSelect,
          csvButton('CSV', () => downloadCsv(
            `${linkPath(code)}/breakdown${query({
              dimension: dimensionOf(dim), from: prefs.range, to: 'now', format: 'csv',
            })}`,
            `${code}-${dimensionOf(dim)}.csv`, error), `csv-${dim.id}`)),
        h('table', { class: 'breakdown', 'data-testid': `breakdown-${dim.id}`, 'data-dimension': dim.id },
          h('thead', {},
            h('tr', {},
              h('th', { scope: 'col' }, dim.label),
              h('th', { scope: 'col', class: 'num' }, dim.id === 'bot_kind' ? 'Bot clicks' : 'Clicks'))),
          body),
        dim.tags ? h('p', { class: 'muted small' }, 'Clicks that came with a utm_ tag only.') : null);
    });

    // The link's ledger for the same range: what was counted, what the job set aside and why, what reconcile
    // changed, and what redirect-web dropped before Kafka.
    const ledger = {
      body: h('tbody'),
      runs: h('ul', { class: 'ledger-runs', 'data-testid': 'ledger-runs' }),
      span: h('p', { class: 'muted small', 'data-testid': 'ledger-span' }),
    };
    const ledgerCard = h('section', { class: 'card ledger', 'aria-labelledby': 'ledger-title' },
      h('div', { class: 'card-head' }, h('h2', { id: 'ledger-title' }, 'Ledger')),
      h('table', { class: 'breakdown', 'data-testid': 'ledger' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Clicks'), h('th', { scope: 'col', class: 'num' }, 'Count'))),
        ledger.body),
      ledger.runs,
      ledger.span);

    ui.view.replaceChildren(
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, '← All links')),
      h('section', { class: 'card link-head', 'aria-labelledby': 'link-title' },
        createdNote,
        h('div', { class: 'title-row' }, h('div', { class: 'title', id: 'link-title' }, header.code, header.badge),
          header.disable),
        h('dl', { class: 'facts' },
          h('dt', {}, 'Short URL'), h('dd', {}, header.shortUrl, header.copy, header.copyNote),
          h('dt', {}, 'Target'), h('dd', { class: 'url' }, header.url, header.edit),
          h('dt', {}, 'Created'), h('dd', {}, header.created),
          h('dt', {}, 'Tags'), h('dd', {}, header.tags),
          h('dt', {}, 'Expires'), h('dd', {}, header.expires)),
        editForm,
        actionError),
      h('div', { class: 'controls' },
        h('div', { class: 'control' }, h('span', { class: 'label' }, 'Last'), rangeGroup),
        h('div', { class: 'control' }, h('span', { class: 'label' }, 'Interval'), intervalGroup),
        h('div', { class: 'control' }, h('span', { class: 'label' }, 'Zone'), zoneSelect),
        h('div', { class: 'control end' }, updated)),
      error,
      h('div', { class: 'totals' }, totals.clicks.el, totals.bots.el, totals.visitors.el),
      h('section', { class: 'card chart-card', 'aria-labelledby': 'chart-title' },
        h('div', { class: 'card-head' },
          h('h2', { id: 'chart-title' }, 'Clicks over time ', intervalShown),
          csvButton('CSV', () => downloadCsv(
            `${linkPath(code)}/stats${query({
              from: prefs.range, to: 'now', interval: prefs.interval === 'auto' ? null : prefs.interval, format: 'csv',
            })}`,
            `${code}-series.csv`, error), 'csv-series')),
        h('div', { class: 'chart-box' }, canvas),
        chartNote,
        approximateNote,
        fresh),
      h('div', { class: 'breakdowns' }, breakdownCards),
      ledgerCard);

    linkView = { code, refreshNow };
    let request = 0;
    // Counts the header's reads and the disable: an answer older than the last one shown is dropped, so a
    // slow first read cannot bring back the Disable button of a link just disabled.
    let headerRequest = 0;

    function showHeader(link) {
      header.shortUrl.textContent = link.short_url;
      header.shortUrl.href = link.short_url;
      header.copy.hidden = false;
      header.url.textContent = link.url;
      header.url.title = link.url;
      if (/^https?:\/\//i.test(link.url)) header.url.href = link.url;
      header.created.textContent = `${fmtDateTime(link.created_at)} UTC`;
      header.badge.replaceChildren(link.disabled_at ? disabledBadge(link.disabled_at) : '');
      header.disable.hidden = Boolean(link.disabled_at) || !canWrite();
      const tags = link.tags || [];
      header.tags.replaceChildren(...(tags.length
        ? tags.map((tag) => h('span', { class: 'tag', 'data-testid': 'link-tag' }, tag))
        : [h('span', { class: 'muted small' }, 'none')]));
      header.expires.textContent = link.expires_at ? `${fmtDateTime(link.expires_at)} UTC` : 'never';
      header.edit.hidden = !canWrite();
      if (editForm.hidden) {
        editTarget.value = link.url || '';
        editTags.value = tags.join(', ');
      }
    }

    async function change() {
      const mine = ++headerRequest;
      showError(actionError, null);
      const tags = editTags.value.split(',').map((tag) => tag.trim()).filter(Boolean);
      try {
        const link = await api(linkPath(code), { method: 'PATCH', body: { url: editTarget.value.trim(), tags } });
        if (generation !== viewGeneration || mine !== headerRequest) return;
        editForm.hidden = true;
        showHeader(link);
      } catch (err) {
        if (err.auth || generation !== viewGeneration) return;
        showError(actionError, err.message);
      }
    }

    async function loadHeader() {
      const mine = ++headerRequest;
      try {
        const link = await api(linkPath(code), { signal });
        if (generation !== viewGeneration || mine !== headerRequest) return;
        showHeader(link);
      } catch (err) {
        // The stats requests answer the same error; they report it.
      }
    }

    async function copyShortUrl() {
      const text = header.shortUrl.textContent;
      header.copyNote.textContent = '';
      try {
        await navigator.clipboard.writeText(text);
        header.copyNote.textContent = 'Copied';
        header.copyNote.dataset.outcome = 'clipboard';
      } catch (ignored) {
        // No clipboard (a page served over plain http from another host has none) or no permission: select the
        // URL, so that one keystroke copies it.
        const range = document.createRange();
        range.selectNodeContents(header.shortUrl);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        header.copyNote.textContent = 'Selected: press Ctrl+C (⌘C) to copy';
        header.copyNote.dataset.outcome = 'selected';
      }
    }

    async function disable() {
      const question = `Disable ${code}? Its short URL will answer 410 Gone from now on, and the dashboard cannot `
        + 'enable it again.';
      if (!window.confirm(question)) return;
      const mine = ++headerRequest;
      header.disable.disabled = true;
      showError(actionError, null);
      try {
        const link = await api(linkPath(code), { method: 'DELETE' });
        if (generation !== viewGeneration || mine !== headerRequest) return;
        showHeader(link);
      } catch (err) {
        if (err.auth || generation !== viewGeneration) return;
        showError(actionError, err.message);
      } finally {
        header.disable.disabled = false;
      }
    }

    /** Loads the stats and breakdowns; user is true when a control changed, which shows as loading. */
    async function refreshNow(user) {
      const mine = ++request;
      clearTimeout(refreshTimer);
      refreshTimer = null;
      if (user || document.body.dataset.state !== 'ready') setState('loading');
      const range = prefs.range;
      const interval = prefs.interval === 'auto' ? null : prefs.interval;
      try {
        const [stats, audit, ...values] = await Promise.all([
          api(`${linkPath(code)}/stats${query({
            from: range, to: 'now', interval, compare: 'previous', tz: prefs.tz,
          })}`, { signal }),
          api(`${linkPath(code)}/audit${query({ from: range, to: 'now' })}`, { signal }),
          ...DIMENSIONS.map((dim) => api(`${linkPath(code)}/breakdown${query({
            dimension: dimensionOf(dim), from: range, to: 'now', limit: BREAKDOWN_LIMIT, tz: prefs.tz,
          })}`, { signal })),
        ]);
        if (generation !== viewGeneration || mine !== request) return;
        renderStats(stats);
        renderLedger(audit);
        DIMENSIONS.forEach((dim, i) => renderBreakdown(dimensionOf(dim), breakdowns[dim.id], values[i].values));
        updated.textContent = `Updated ${fmtDateTimeSeconds(new Date().toISOString())} · refreshes every 5 s`;
        showError(error, null);
        setState('ready');
      } catch (err) {
        if (isAbort(err) || err.auth || generation !== viewGeneration || mine !== request) return;
        showError(error, err.message);
        setState('error');
        // A link that does not exist will not appear by asking again.
        if (err.status === 404) return;
      }
      scheduleRefresh();
    }

    function renderLedger(audit) {
      const lines = [
        ['Human clicks counted', audit.counted.clicks, 'clicks'],
        ['Bot clicks counted', audit.counted.bot_clicks, 'bot-clicks'],
        ['Copies dropped as duplicates', audit.set_aside.duplicates, 'duplicates'],
        ['Too late to count (dead letters)', audit.set_aside.late, 'late'],
        ['Rows PostgreSQL refused (dead letters)', audit.set_aside.refused_rows, 'refused-rows'],
        ['Dropped before Kafka, all links together', audit.producer_drops.dropped, 'producer-drops'],
      ];
      ledger.body.replaceChildren(...lines.map(([label, value, id]) =>
        h('tr', { 'data-testid': `ledger-${id}`, 'data-value': String(value) },
          h('td', {}, label), h('td', { class: 'num' }, fmtNumber(value)))));
      ledger.runs.replaceChildren(...audit.reconcile_runs.map((run) =>
        h('li', { 'data-testid': 'ledger-run' },
          `Reconcile run ${run.id} (${run.mode}, ${run.status}`,
          run.finished_at ? ` ${fmtDateTime(run.finished_at)} UTC` : '',
          `): ${fmtNumber(run.minutes_differing)} minutes differed, human clicks `,
          `${fmtNumber(run.clicks_before)} → ${fmtNumber(run.clicks_after)}, bot clicks `,
          `${fmtNumber(run.bot_clicks_before)} → ${fmtNumber(run.bot_clicks_after)}`,
          run.repaired ? ', repaired' : ', not written')));
      ledger.span.textContent = `Whole UTC hours ${fmtDateTime(audit.from)} to ${fmtDateTime(audit.to)} UTC`
        + (audit.reconcile_runs.length ? '' : '; no reconcile run found a difference')
        + (audit.final ? '; final.' : '; the last hours may still take late clicks.');
    }

    function scheduleRefresh() {
      clearTimeout(refreshTimer);
      refreshTimer = null;
      if (generation !== viewGeneration || document.visibilityState !== 'visible') return;
      refreshTimer = setTimeout(() => refreshNow(false), REFRESH_MS);
    }

    function renderStats(stats) {
      setTotal(totals.clicks.value, stats.totals.clicks);
      setTotal(totals.bots.value, stats.totals.bot_clicks);
      setTotal(totals.visitors.value, stats.totals.visitors);
      const rangeLabel = RANGES.find((r) => r.id === prefs.range).label;
      const before = stats.previous.totals;
      setChange(totals.clicks.change, stats.totals.clicks, before.clicks, rangeLabel);
      setChange(totals.bots.change, stats.totals.bot_clicks, before.bot_clicks, rangeLabel);
      // Visitors are counted over a span that can be wider than the range (its clock hour or UTC days): when
      // the two periods' spans overlap, they count some of the same visits, and a change means nothing.
      if (before.visitors_to > stats.totals.visitors_from) {
        totals.visitors.change.textContent = 'no change shown: both periods fall in the same visitor span';
        totals.visitors.change.dataset.change = 'overlap';
        totals.visitors.change.classList.remove('up', 'down');
      } else {
        setChange(totals.visitors.change, stats.totals.visitors, before.visitors, rangeLabel);
      }
      showVisitorsSpan(stats);
      // The caption already shows the span, so the note is worth the room only for what the caption
      // cannot say: days added without a sketch, which can count a person twice.
      const caveat = stats.totals.visitors_days_without_sketch > 0 ? stats.visitors_note : '';
      visitorsNote.textContent = caveat;
      visitorsNote.hidden = !caveat;
      // Only the days of a part-hour zone past the minutes' retention are approximate; the API says how.
      approximateNote.hidden = !stats.approximate;
      approximateNote.textContent = stats.approximate ? `Approximate: ${stats.approximate_reason}` : '';
      intervalShown.textContent = `per ${stats.interval}${prefs.interval === 'auto' ? ' (auto)' : ''}, ${stats.tz}`;

      if (stats.fresh_until) {
        fresh.replaceChildren(
          'Counts final up to ',
          h('time', { datetime: stats.fresh_until }, fmtDateTimeSeconds(stats.fresh_until)),
          ', newer minutes are still open and may grow.');
      } else {
        fresh.textContent = 'No minute closed yet: every count shown is still open and may grow.';
      }
      fresh.dataset.freshUntil = stats.fresh_until || '';

      const series = stats.series || [];
      const first = series.length ? Date.parse(series[0].t) : 0;
      const last = series.length ? Date.parse(series[series.length - 1].t) : 0;
      const spansDays = last - first >= 24 * 3600 * 1000
        || (series.length > 0 && zoned(series[0].t, stats.tz).d !== zoned(series[series.length - 1].t, stats.tz).d);
      chartZone = stats.tz;
      chartStatus = series.map((p) => (p.status === 'repaired'
        ? `repaired by reconcile ${fmtDateTimeSeconds(p.repaired_at)}` : p.status));
      const data = {
        labels: series.map((p) => fmtBucket(p.t, stats.interval, spansDays, stats.tz)),
        t: series.map((p) => p.t),
        clicks: series.map((p) => p.clicks),
        bot_clicks: series.map((p) => p.bot_clicks),
        visitors: series.map((p) => (p.visitors === null || p.visitors === undefined ? null : p.visitors)),
        interval: stats.interval,
        tz: stats.tz,
        status: series.map((p) => p.status),
      };
      drawChart(data);
      window.tallyChartData = data;
    }

    /** The caption under the visitors figure: the period it counts, when that is more than the range. */
    function showVisitorsSpan(stats) {
      const { visitors_from: from, visitors_to: to, visitors_exact: exact } = stats.totals;
      const wider = from !== stats.from || to !== stats.to;
      visitorsSpan.textContent = wider ? fmtSpan(from, to) : 'unique people';
      visitorsSpan.dataset.from = from || '';
      visitorsSpan.dataset.to = to || '';
      visitorsSpan.title = exact === null || exact === undefined
        ? 'Estimated from the days\' visitor sketches (relative standard error about 0.5%)'
        : '';
    }

    function drawChart(data) {
      const noVisitors = data.visitors.every((v) => v === null);
      chartNote.hidden = !(noVisitors && data.labels.length);
      chartNote.textContent = data.interval === 'minute'
        ? 'Visitors are not counted per minute: pick hour or day to see them.'
        : `Visitors are counted per UTC hour and UTC day, not per ${data.interval} of ${data.tz}: pick UTC to see them.`;
      if (typeof window.Chart !== 'function') {
        chartNote.hidden = false;
        chartNote.textContent = 'The chart library did not load (vendor/chart.umd.js); the totals and tables are current.';
        return;
      }
      if (!chart) {
        chart = new window.Chart(canvas, chartConfig());
      }
      chart.data.labels = data.labels;
      chart.data.datasets[0].data = data.clicks;
      chart.data.datasets[1].data = data.bot_clicks;
      chart.data.datasets[2].data = data.visitors;
      chart.data.datasets[2].hidden = noVisitors;
      chart.update('none');
    }

    if (justCreated) showHeader(justCreated);
    loadHeader();
    refreshNow(true);
  }

  function setTotal(el, value) {
    el.textContent = fmtNumber(value);
    el.dataset.value = value === null || value === undefined ? '' : String(value);
  }

  function chartConfig() {
    const line = (label, color, extra) => ({
      label, borderColor: color, backgroundColor: `${color}22`, borderWidth: 2,
      pointRadius: 0, pointHoverRadius: 4, tension: 0.2, data: [], ...extra,
    });
    return {
      type: 'line',
      data: {
        labels: [],
        datasets: [
          line('Clicks', COLORS.clicks, { fill: 'origin' }),
          line('Bot clicks', COLORS.bots, {}),
          // Visitors are null per minute: spanGaps draws across the missing points instead of dropping to zero.
          line('Visitors', COLORS.visitors, { borderDash: [5, 4], spanGaps: true }),
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { type: 'category', ticks: { autoSkip: true, maxTicksLimit: 12, maxRotation: 0 }, grid: { display: false } },
          y: { beginAtZero: true, ticks: { precision: 0 } },
        },
        plugins: {
          legend: { position: 'top', align: 'end', labels: { boxWidth: 12, boxHeight: 12 } },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? `${items[0].label} ${chartZone}` : ''),
              // Whether the bucket can still change: provisional, final, or repaired by reconcile (and when).
              footer: (items) => (items.length && chartStatus[items[0].dataIndex]
                ? `count ${chartStatus[items[0].dataIndex]}` : ''),
            },
          },
        },
      },
    };
  }

  function renderBreakdown(dimension, body, values) {
    const max = values.reduce((m, v) => Math.max(m, v.clicks), 0);
    const rows = values.slice(0, BREAKDOWN_LIMIT).map((v) => {
      const shown = shownValue(dimension, v.value);
      const width = max > 0 ? Math.max(1, Math.round((v.clicks / max) * 100)) : 0;
      return h('tr', { 'data-testid': 'breakdown-row', 'data-value': v.value, 'data-clicks': v.clicks },
        h('td', { class: 'value' },
          h('div', { class: isNoValue(dimension, v.value) ? 'name muted' : 'name', title: shown }, shown),
          h('div', { class: 'bar', 'aria-hidden': 'true' }, h('span', { style: `width:${width}%` }))),
        h('td', { class: 'num' }, fmtNumber(v.clicks)));
    });
    if (!rows.length) {
      rows.push(h('tr', { class: 'empty' }, h('td', { colspan: 2, class: 'muted' }, 'No clicks in this range')));
    }
    body.replaceChildren(...rows);
  }

  // ---- refresh while visible --------------------------------------------------------------------

  document.addEventListener('visibilitychange', () => {
    if (!linkView) return;
    if (document.visibilityState === 'visible') {
      linkView.refreshNow(false);
    } else {
      clearTimeout(refreshTimer);
      refreshTimer = null;
    }
  });

  route();
})();
