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

const topicPath = (topic) => `/topics/${encodeURIComponent(topic)}`;

export const api = {
  topics: (search, offset, limit) => call('GET', '/topics', { search, offset, limit }),
  topic: (topic) => call('GET', topicPath(topic)),
  messages: (topic, state, offset, limit) => call('GET', `${topicPath(topic)}/messages`, { state, offset, limit }),
  message: (topic, id) => call('GET', `${topicPath(topic)}/messages/${encodeURIComponent(id)}`),
  sweepDead: (topic, action, ids) =>
    call('POST', `${topicPath(topic)}/dead/${action}`, undefined, ids ? { ids } : { all: true }),
  cancel: (topic, id) => call('POST', `${topicPath(topic)}/messages/${encodeURIComponent(id)}/cancel`),
  setPaused: (topic, paused) => call('POST', `${topicPath(topic)}/${paused ? 'pause' : 'resume'}`),
  runSchedule: (topic, name) => call('POST', `${topicPath(topic)}/schedules/${encodeURIComponent(name)}/run`),
};
