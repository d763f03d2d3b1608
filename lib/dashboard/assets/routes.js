// The page's addresses: #/ the topics, #/topic/<topic> one topic, #/topic/<topic>/message/<id>
// one topic with a message's details open. Names are %-escaped, so an id may hold any character
// (`/` included), and a topic never holds `/`.

export const topicHref = (topic) => `#/topic/${encodeURIComponent(topic)}`;

export const messageHref = (topic, id) => `${topicHref(topic)}/message/${encodeURIComponent(id)}`;

/**
 * What a hash names: `{}` the topics, `{ topic, message? }`, or `{ broken: true }` for a topic
 * address that names nothing (a bad %-escape, a step too many).
 */
export function routeOf(hash) {
  if (!hash.startsWith('#/topic/')) return {};
  const match = /^#\/topic\/([^/]+)(?:\/message\/(.+))?$/.exec(hash);
  if (!match) return { broken: true };
  try {
    const route = { topic: decodeURIComponent(match[1]) };
    if (match[2] !== undefined) route.message = decodeURIComponent(match[2]);
    return route;
  } catch {
    return { broken: true };
  }
}
