import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One file the page loads, with its content type. */
export interface Asset {
  type: string;
  body: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * A policy that lets the page run only its own scripts and styles and talk only to its own
 * API: an injected script or a payload shown on the page can load nothing from elsewhere.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The page and its assets, shipped in the package (`assets/` beside this file, copied to
 * dist by the build) and read once: nothing comes from a CDN.
 */
export class DashboardPage {
  private readonly assets = new Map<string, Asset>();
  private readonly template: string;

  constructor(directory = join(__dirname, 'assets')) {
    this.template = readFileSync(join(directory, 'index.html'), 'utf8');
    for (const file of readdirSync(directory)) {
      const type = TYPES[extname(file)];
      if (type) this.assets.set(file, { type, body: readFileSync(join(directory, file), 'utf8') });
    }
  }

  /** A shipped asset by file name; undefined for any other name (no path is ever joined). */
  asset(file: string): Asset | undefined {
    return this.assets.get(file);
  }

  /** The page, with the URL it is served at (`base`, no trailing slash) and its settings. */
  render(settings: { base: string; csrf: string; refreshMs: number; readOnly: boolean }): string {
    const values: Record<string, string> = {
      base: settings.base,
      csrf: settings.csrf,
      refreshMs: String(settings.refreshMs),
      readOnly: String(settings.readOnly),
    };
    return this.template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => escapeHtml(values[key] ?? ''));
  }
}
