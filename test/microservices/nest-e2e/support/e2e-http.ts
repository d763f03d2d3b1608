import type { INestApplication } from '@nestjs/common';

/**
 * What Nest's specs do with supertest, with Node's fetch (supertest is no dependency here): the
 * app listens on a free loopback port and each call answers its status and body text.
 */
export async function listenOnLoopback(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  return app.getUrl();
}

/** One HTTP call: `{ status, text }`, as supertest's `.expect(status, text)` reads them. */
export async function call(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}
