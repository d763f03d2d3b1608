// The dashboard's JSON API, at <page>/api: reads are GETs; actions are POSTs that carry the
// CSRF token the page was served with.

const data = document.body.dataset;
export const settings = {
  base: data.base,
  csrf: data.csrf,
  refreshMs: Number(data.refreshMs) || 2000,
  readOnly: data.readOnly === 'true',
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, query, body) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') search.set(key, value);
  const url = `${settings.base}/api${path}${search.size ? `?${search}` : ''}`;
  const headers = { accept: 'application/json' };
  if (method === 'POST') Object.assign(headers, { 'content-type': 'application/json', 'x-ackq-csrf': settings.csrf });
  const response = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const detail = parsed && typeof parsed === 'object' ? parsed : {};
    throw new ApiError(
      response.status,
      detail.code ?? 'HTTP',
      detail.message ?? `${response.status} ${response.statusText}`,
    );
  }
  return parsed;
}

// Names go in the query, never in the path: a URL drops a path step named `.` or `..`, even
// percent-encoded, and both are valid topic names (and ids).
export const api = {
  topics: (search, offset, limit) => call('GET', '/topics', { search, offset, limit }),
  topic: (topic) => call('GET', '/topic', { topic }),
  messages: (topic, state, offset, limit, tag) => call('GET', '/messages', { topic, state, offset, limit, tag }),
  count: (topic, state, tag) => call('GET', '/count', { topic, state, tag }),
  message: (topic, id) => call('GET', '/message', { topic, id }),
  flow: (topic, id, limit) => call('GET', '/flow', { topic, id, limit }),
  history: (topic, range) => call('GET', '/history', { topic, ...range }),
  scaling: (topic) => call('GET', '/scaling', { topic }),
  groupUsage: (topic) => call('GET', '/group-usage', { topic }),
  outbox: () => call('GET', '/outbox'),
  sweepOutbox: (action, rowIds) => call('POST', `/outbox/${action}`, {}, rowIds ? { ids: rowIds } : { all: true }),
  sweepDead: (topic, action, ids) => call('POST', `/dead/${action}`, { topic }, ids ? { ids } : { all: true }),
  cancel: (topic, id) => call('POST', '/cancel', { topic, id }),
  setPaused: (topic, paused) => call('POST', paused ? '/pause' : '/resume', { topic }),
  runSchedule: (topic, schedule) => call('POST', '/run', { topic, schedule }),
  removeSchedule: (topic, schedule) => call('POST', '/unschedule', { topic, schedule }),
  // A bulk action's filter: { action, state, tag, from, to, errorContains, maxPerSecond }.
  bulkCount: (topic, bulk) => call('GET', '/bulk/count', { topic, ...bulk }),
  bulk: (topic, bulk) => call('POST', '/bulk', { topic }, bulk),
  bulkStatus: (id) => call('GET', '/bulk/status', { id }),
  abortBulk: (id) => call('POST', '/bulk/abort', { id }),
};
