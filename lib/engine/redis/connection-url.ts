import { InvalidConnectionUrlError } from '../../errors';

/** `scheme:` and what follows, for a string that starts like a URL (`http://`, `redis:/`, `localhost:abc`). */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{0,30}):(.*)$/s;
/** What follows `host:` in the host:port form (`redis:6379`, a Docker service named redis, is one). */
const PORT_AFTER_HOST = /^(\d+([/?].*)?)?$/s;

/**
 * A connection string checked before any socket opens, and spelled as ioredis reads it.
 * Accepted: `redis://` and `rediss://` URLs (any case: the scheme is lowered, so `REDISS://`
 * gets TLS), `unix:///path` and `unix:/path` (given to ioredis as the path), a socket path
 * (`/path`), a port alone, `//host:port` and `[user:password@]host[:port][/db]`. Anything else
 * is refused with InvalidConnectionUrlError, which names the scheme and never the URL (it may
 * hold a password): ioredis would take `http://host:6379` or `redis:/host` for a socket path
 * and wait the whole connect timeout.
 */
export function checkedConnectionUrl(url: string, option = 'connection'): string {
  if (/^\d+$/.test(url) || (url.startsWith('/') && !url.startsWith('//'))) return url;
  if (url.startsWith('//')) return parsable(url, `redis:${url}`, option);
  const match = SCHEME.exec(url);
  if (!match) return parsable(url, `redis://${url}`, option);
  const [, written, rest] = match;
  const scheme = written.toLowerCase();
  if (rest.startsWith('//')) {
    if (scheme === 'redis' || scheme === 'rediss') return parsable(`${scheme}:${rest}`, `${scheme}:${rest}`, option);
    if (scheme === 'unix') return socketPath(rest.slice(2), option);
    throw new InvalidConnectionUrlError(option, `${scheme}:`, false);
  }
  if (PORT_AFTER_HOST.test(rest) || (!rest.startsWith('/') && rest.includes('@'))) {
    return parsable(url, `redis://${url}`, option);
  }
  if (scheme === 'unix') return socketPath(rest, option);
  const known = scheme === 'redis' || scheme === 'rediss';
  throw new InvalidConnectionUrlError(option, `${scheme}:`, known);
}

/** `url` when it parses as ioredis will parse it (as `asParsed`); ioredis' own error would quote it. */
function parsable(url: string, asParsed: string, option: string): string {
  if (!URL.canParse(asParsed)) throw new InvalidConnectionUrlError(option, undefined, true);
  return url;
}

/** The socket path of a `unix:` URL (`/path`, with its query), as ioredis takes it. */
function socketPath(path: string, option: string): string {
  if (!/^\/[^/]/.test(path)) throw new InvalidConnectionUrlError(option, 'unix:', true);
  return path;
}
