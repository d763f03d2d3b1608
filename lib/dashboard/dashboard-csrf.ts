import { randomBytes, timingSafeEqual } from 'node:crypto';
import { DashboardRequestError } from './dashboard-errors';

/** The request as Express and Fastify both give it: only its headers are read. */
export interface HeaderBag {
  headers: Record<string, string | string[] | undefined>;
}

const COOKIE = 'ackq_dashboard_csrf';
/** The header the page's script sends the token in: a custom header no cross-site form can set. */
export const CSRF_HEADER = 'x-ackq-csrf';

const header = (request: HeaderBag, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The token of the request's cookie, when it has a well-formed one. */
export function csrfTokenOf(request: HeaderBag): string | undefined {
  for (const part of (header(request, 'cookie') ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === COOKIE && value && /^[A-Za-z0-9_-]{32}$/.test(value)) return value;
  }
  return undefined;
}

export function newCsrfToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The cookie that carries the token: the page's script sends it back as a header (double submit). */
export function csrfCookie(token: string, path: string): string {
  return `${COOKIE}=${token}; Path=${path || '/'}; SameSite=Strict; HttpOnly`;
}

/**
 * Whether an Origin header names this site: a serialized http(s) origin (not `null`, not a URL
 * with a path, not text that does not parse) whose host is the request's Host (or, behind a
 * proxy, its X-Forwarded-Host).
 */
function isOwnOrigin(origin: string, request: HeaderBag): boolean {
  const url = URL.canParse(origin) ? new URL(origin) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return false;
  return [header(request, 'host'), header(request, 'x-forwarded-host')].some(
    (host) => !!host && hostOf(`${url.protocol}//${host}`) === url.host,
  );
}

/** A Host header as URL writes it (lower case, no default port); undefined when it does not parse. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a mutating request that another site could have made: it must carry the cookie's
 * token in its header (a cross-site page can neither read the cookie nor set the header
 * without CORS), and a browser's Origin and Sec-Fetch-Site, when sent, must be this site: an
 * Origin that is `null` or does not parse is refused, never taken for a missing one.
 */
export function assertSameSite(request: HeaderBag): void {
  const refuse = (why: string) => new DashboardRequestError(403, 'CSRF', `cross-site request refused: ${why}`);
  const site = header(request, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') throw refuse(`Sec-Fetch-Site is ${site}`);
  const origin = header(request, 'origin');
  if (origin !== undefined && !isOwnOrigin(origin, request)) throw refuse('Origin is not this site');
  const cookie = csrfTokenOf(request);
  const sent = header(request, CSRF_HEADER) ?? '';
  if (!cookie || sent.length !== cookie.length || !timingSafeEqual(Buffer.from(sent), Buffer.from(cookie))) {
    throw refuse('the token is missing or wrong (reload the page)');
  }
}
